"""The structure ARCHITECTURE.md promises, read from the source with :mod:`ast`.

- Layers: a module imports (at module level) only modules of its own layer or below;
  an import that points up is allowed only inside a function and only where
  :data:`LAZY_UPWARD` names it (an inherent loop, e.g. an Estimate's queries re-run
  methods, which make Estimates).
- No import cycle, lazy imports included except the allowed ones.
- Private names (``_foo``) do not cross modules; private *modules* (``_name.py``) hold
  shared internals and may be imported anywhere in the repository.
- No file of the library calls a private name of another package.
- The public surface stays small: the names in ``__all__`` lists are counted.
- No library module is longer than :data:`MAX_LINES`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Where each installed package's source lives (pyproject.toml maps the last two).
PACKAGES = {
    "bayesldp": ROOT / "bayesldp",
    "bayesldp.models": ROOT / "models",
    "bayesldp.experiments": ROOT / "experiments",
}
SCANNED = ("bayesldp", "models", "experiments", "benchmarks", "research", "tests")
LIBRARY = ("bayesldp", "models")

#: Layers, lowest first: a module belongs to the longest prefix listed.
LAYERS: dict[str, int] = {
    "bayesldp._validation": 0,
    "bayesldp._io": 0,
    "bayesldp._threads": 0,
    "bayesldp.errors": 0,
    "bayesldp.measurement": 1,
    "bayesldp.oracles": 1,
    "bayesldp.datasets": 1,
    "bayesldp._draws": 2,
    "bayesldp._query": 1,
    "bayesldp._total": 2,
    "bayesldp.estimate": 2,
    "bayesldp.methods": 3,
    "bayesldp.empirical_bayes": 3,
    "bayesldp.convex": 3,
    "bayesldp.metrics": 3,
    "bayesldp.intervals": 4,
    "bayesldp.selection": 4,
    "bayesldp.models": 5,
    "bayesldp.runner": 6,
    "bayesldp.plotting": 6,
    "bayesldp.audit": 6,
    "bayesldp.aggregate": 6,
    "bayesldp.choose": 6,
    "bayesldp.planning": 6,
    "bayesldp._plan_simulation": 6,
    "bayesldp.cli": 7,
    "bayesldp.experiments": 7,
}
#: The package roots re-export the public API; they sit above everything they import.
ROOT_LAYER = 8

#: Function-level imports allowed to point up a layer: (importer, imported, why).
LAZY_UPWARD = {
    ("bayesldp.estimate", "bayesldp.intervals"): "Estimate.interval / bootstrap",
    ("bayesldp.estimate", "bayesldp.selection"): "Estimate.heavy_hitters / top_k_probability",
}

#: Longest library module, in lines.
MAX_LINES = 650
#: Most names exported by bayesldp.__all__ and the __all__ of every public module.
MAX_EXPORTS = 180


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
    return sorted(
        p
        for d in SCANNED
        if (ROOT / d).exists()
        for p in (ROOT / d).rglob("*.py")
        if ".venv" not in p.parts and "_build" not in p.parts
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(path: Path):
    """(target module, imported name or None, line, lazy) for every absolute import."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top = {id(node) for node in tree.body}
    # imports under `if TYPE_CHECKING:` or try/except at module level count as top level
    for node in tree.body:
        if isinstance(node, ast.If | ast.Try):
            top |= {id(n) for n in ast.walk(node)}
    for node in ast.walk(tree):
        lazy = id(node) not in top
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno, lazy
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.module, alias.name, node.lineno, lazy


def layer(module: str) -> int:
    """Return the layer of an installed module (the longest matching prefix of LAYERS)."""
    if module in PACKAGES:
        return ROOT_LAYER
    best = ""
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    if not best:
        raise AssertionError(f"{module} has no layer: add it to LAYERS in this test")
    return LAYERS[best]


def _edges(include_lazy: bool) -> list[tuple[str, str, int, bool]]:
    """Return (importer, imported module, line, lazy) between modules of the packages."""
    out = []
    for module, path in MODULES.items():
        for target, name, line, lazy in _imports(path):
            if lazy and not include_lazy:
                continue
            if name and f"{target}.{name}" in MODULES:
                dest = f"{target}.{name}"
            elif target in MODULES:
                dest = target
            else:
                continue
            if dest != module:
                out.append((module, dest, line, lazy))
    return out


def test_every_module_has_a_layer():
    for module in MODULES:
        layer(module)


def test_imports_point_down():
    offences = []
    for src, dest, line, lazy in _edges(include_lazy=True):
        if src in PACKAGES or (dest in PACKAGES and layer(src) >= LAYERS["bayesldp.models"]):
            continue  # a package root re-exports; the layers above it may import it
        if layer(dest) <= layer(src):
            continue
        key = (".".join(src.split(".")[:2]), ".".join(dest.split(".")[:2]))
        if lazy and key in LAZY_UPWARD:
            continue
        kind = "lazy import" if lazy else "import"
        offences.append(f"{MODULES[src].relative_to(ROOT)}:{line} {kind} of {dest} points up")
    assert not offences, "\n".join(offences)


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
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for src, dest, _, lazy in _edges(include_lazy=True):
        key = (".".join(src.split(".")[:2]), ".".join(dest.split(".")[:2]))
        if dest in PACKAGES or (lazy and key in LAZY_UPWARD):
            continue  # a package root's re-exports; the allowed lazy loops
        graph[src].add(dest)
    assert _cycles(graph) == []


def test_the_cycle_detector_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_private_name_crosses_a_module():
    offences = []
    for path in _scanned_files():
        for target, name, line, _ in _imports(path):
            if target.startswith(("bayesldp", "tests")) and name and _private(name):
                if f"{target}.{name}" in MODULES:
                    continue  # importing a private module is allowed
                offences.append(f"{path.relative_to(ROOT)}:{line} imports {name} from {target}")
    assert not offences, "\n".join(offences)


def test_no_private_attribute_of_our_modules_is_used():
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
                    if f"{node.module}.{a.name}" in MODULES:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
                and f"{aliases[node.value.id]}.{node.attr}" not in MODULES
            ):
                offences.append(
                    f"{path.relative_to(ROOT)}:{node.lineno} uses {node.value.id}.{node.attr}"
                )
    assert not offences, "\n".join(offences)


def _foreign(module: str) -> bool:
    return not module.startswith(("bayesldp", "tests", "benchmarks", "experiments"))


def test_no_private_api_of_another_package():
    """No ``from pkg._mod import``, ``from pkg import _name`` or ``alias._name`` of others."""
    offences = []
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            aliases = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if _foreign(a.name):
                            if any(_private(p) for p in a.name.split(".")):
                                offences.append(f"{path}:{node.lineno} imports {a.name}")
                            aliases.add(a.asname or a.name.split(".")[0])
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    if not _foreign(node.module):
                        continue
                    if any(_private(p) for p in node.module.split(".")):
                        offences.append(f"{path}:{node.lineno} imports from {node.module}")
                    for a in node.names:
                        if _private(a.name):
                            offences.append(f"{path}:{node.lineno} imports {a.name}")
                        aliases.add(a.asname or a.name)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and _private(node.attr)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                ):
                    offences.append(f"{path}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not offences, "\n".join(offences)


def exported_names() -> dict[str, int]:
    """Public module -> number of names in its ``__all__`` (bayesldp and bayesldp.models)."""
    out = {}
    for module, path in MODULES.items():
        if module.startswith("bayesldp.experiments") or any(
            _private(part) for part in module.split(".")
        ):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                out[module] = len(ast.literal_eval(node.value))
    return out


def test_the_public_surface_is_small():
    counts = exported_names()
    total = sum(counts.values())
    table = "\n".join(f"{n:4d} {m}" for m, n in sorted(counts.items(), key=lambda kv: kv[1]))
    assert total <= MAX_EXPORTS, f"{total} exported names:\n{table}"


def test_no_library_module_is_too_long():
    long = {
        str(path.relative_to(ROOT)): n
        for module, path in MODULES.items()
        if not module.startswith("bayesldp.experiments")
        and (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_docstring(module):
    tree = ast.parse(MODULES[module].read_text())
    assert ast.get_docstring(tree), f"{module} has no module docstring"


def test_importing_the_library_loads_no_study_or_benchmark():
    code = (
        "import sys, bayesldp, bayesldp.models\n"
        "bad = [m for m in sys.modules if m.startswith(('bayesldp.experiments', 'benchmarks',"
        " 'research'))]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
