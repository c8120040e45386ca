"""The structure ARCHITECTURE.md promises: no import cycle, no private name across modules.

Both are read from the source with :mod:`ast` (nothing is imported), over the library
(``bayesldp/``, ``models/``, ``experiments/``), the benchmarks and the tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Where each installed package's source lives (pyproject.toml maps the last two).
PACKAGES = {"bayesldp": ROOT / "bayesldp", "bayesldp.models": ROOT / "models"}
if (ROOT / "experiments" / "__init__.py").exists():
    PACKAGES["bayesldp.experiments"] = ROOT / "experiments"
SCANNED = ("bayesldp", "models", "experiments", "benchmarks", "tests")


def _module_files() -> dict[str, Path]:
    """Installed module name -> source file, for every module of the packages."""
    out = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if not all((folder / Path(*rel[:i]) / "__init__.py").exists() for i in range(len(rel))):
                continue  # not inside a package (e.g. a folder of scripts)
            parts = rel[:-1] if rel[-1] == "__init__" else rel
            out[".".join((package, *parts))] = path
    return out


MODULES = _module_files()


def _scanned_files() -> list[Path]:
    return sorted(p for d in SCANNED for p in (ROOT / d).rglob("*.py") if ".venv" not in p.parts)


def _imports(path: Path, module: str | None):
    """(target module, imported name or None, line) for every import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.module, alias.name, node.lineno


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_private_name_is_imported_from_another_module():
    # private modules of bayesldp.models may be imported (their names stay private)
    allowed = {"bayesldp._validation", *(m for m in MODULES if m.startswith("bayesldp.models."))}
    offences = []
    for path in _scanned_files():
        for target, name, line in _imports(path, None):
            if not target.startswith("bayesldp") and not target.startswith("tests"):
                continue
            parts = target.split(".")
            if any(_private(p) for p in parts) and target not in allowed:
                offences.append(f"{path.relative_to(ROOT)}:{line} imports module {target}")
            if name and _private(name) and f"{target}.{name}" not in allowed:
                offences.append(f"{path.relative_to(ROOT)}:{line} imports {name} from {target}")
    assert not offences, "\n".join(offences)


def test_no_private_attribute_of_an_imported_module_is_used():
    """``module._name`` where ``module`` is one of ours, imported under any alias."""
    offences = []
    for path in _scanned_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("bayesldp"):
                        aliases[a.asname or a.name.split(".")[0]] = a.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    if full in MODULES:
                        aliases[a.asname or a.name] = full
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                offences.append(
                    f"{path.relative_to(ROOT)}:{node.lineno} uses {node.value.id}.{node.attr}"
                )
    assert not offences, "\n".join(offences)


def _graph() -> dict[str, set[str]]:
    """Map each module to the modules it imports (anywhere in the file, lazy imports included)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target, name, _ in _imports(path, module):
            if name and f"{target}.{name}" in MODULES:
                graph[module].add(f"{target}.{name}")
            elif target in MODULES:
                graph[module].add(target)
        graph[module].discard(module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    # a package's __init__ re-exports its modules: edges into it are the public API
    graph = _graph()
    for package in PACKAGES:
        for module in graph:
            if module != package:
                graph[module].discard(package)
    assert _cycles(graph) == []


def test_the_cycle_detector_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_docstring(module):
    tree = ast.parse(MODULES[module].read_text())
    assert ast.get_docstring(tree), f"{module} has no module docstring"
