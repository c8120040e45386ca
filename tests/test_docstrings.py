"""Every public function and method documents each of its parameters (numpydoc).

The rule, checked on the source (AST) of every module under ``bayesldp/`` and ``models/``:

* public means a function or class named in the ``__all__`` of a public module,
  checked where it is defined (often a private module the public one re-exports), and
  every method of such a class whose name does not start with ``_`` (so ``__init__``
  and other dunders are left to the class docstring, as numpydoc does);
* each parameter must be named in the docstring's ``Parameters`` or ``Other
  Parameters`` section, alone or in a group (``tol, max_iter : int``); ``self`` and
  ``cls`` are not; ``*args`` and ``**kwargs`` are named as such, with or without
  their stars (``**options``);
* a function without parameters needs no section.

``tests/data/undocumented_parameters.txt`` lists the functions (mostly with a one-line
docstring) that do not follow the rule yet. It may only shrink: a function that is not
listed must follow the rule, and a listed one that now follows it must be removed.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bayesldp", "models")
SECTIONS = ("Parameters", "Other Parameters")
KNOWN = ROOT / "tests" / "data" / "undocumented_parameters.txt"
_RULE = re.compile(r"^\s*-{3,}\s*$")


def documented_names(docstring: str) -> set[str]:
    """Return the names listed in the ``Parameters`` and ``Other Parameters`` sections."""
    lines = docstring.expandtabs().splitlines()
    names: set[str] = set()
    i = 0
    while i < len(lines) - 1:
        title, rule = lines[i].strip(), lines[i + 1]
        if not (title and _RULE.match(rule)):
            i += 1
            continue
        i += 2
        if title not in SECTIONS:
            continue
        indent = len(rule) - len(rule.lstrip())
        while i < len(lines) and not (
            i + 1 < len(lines) and lines[i].strip() and _RULE.match(lines[i + 1])
        ):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) == indent:
                head = line.strip().split(" : ")[0]
                names.update(name.strip() for name in head.split(","))
            i += 1
    return names


def required_names(func: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    """Return the parameters a docstring must name (``*args`` and ``**kwargs`` starred)."""
    args = func.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)
    if method and not static:
        names = names[1:]  # self or cls
    if args.vararg:
        names.append("*" + args.vararg.arg)
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return names


def _all_names(tree: ast.Module) -> set[str]:
    """Return the names of a module's ``__all__`` (empty if it has none)."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert node.value is not None
                return set(ast.literal_eval(node.value))
    return set()


def _module_trees() -> dict[Path, ast.Module]:
    """Every module of the packages, subpackages and private modules included."""
    return {
        path: ast.parse(path.read_text(), str(path))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def public_functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """Yield (``"path qualname"``, node, is a method) for each public function and method.

    A name is public when a public module lists it in ``__all__``; it is checked in the
    module that defines it, which may be a private module the public one re-exports.
    """
    trees = _module_trees()
    exported: set[str] = set()
    for path, tree in trees.items():
        if not any(part.startswith("_") and part != "__init__.py" for part in path.parts):
            exported |= _all_names(tree)
    for path, tree in trees.items():
        rel = path.relative_to(ROOT).as_posix()
        for node in tree.body:
            if getattr(node, "name", None) not in exported:
                continue
            where = f"{rel} {node.name}"  # type: ignore[attr-defined]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield where, node, False
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        not item.name.startswith("_")
                    ):
                        yield f"{where}.{item.name}", item, True


def undocumented() -> dict[str, list[str]]:
    """Return the public functions that do not name every parameter, with those missing."""
    out = {}
    for where, func, method in public_functions():
        have = documented_names(ast.get_docstring(func) or "")
        missing = [n for n in required_names(func, method) if not {n, n.lstrip("*")} & have]
        if missing:
            out[where] = missing
    return out


def known() -> set[str]:
    lines = KNOWN.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_every_public_function_documents_its_parameters():
    found = undocumented()
    new = {k: v for k, v in found.items() if k not in known()}
    assert not new, "document these parameters (numpydoc 'Parameters' section):\n" + "\n".join(
        f"{k}: {', '.join(v)}" for k, v in sorted(new.items())
    )
    fixed = sorted(known() - set(found))
    assert not fixed, f"now documented: remove them from {KNOWN.name}:\n" + "\n".join(fixed)


def test_the_checker_reads_numpydoc_sections():
    """Groups, stars and the end of the section; a Returns entry is not a parameter."""
    doc = """Summary.

    Parameters
    ----------
    a, b : int
        Text ``c : float`` in a description.
    **options
        Passed on.

    Other Parameters
    ----------------
    c : float

    Returns
    -------
    d : float
    """
    assert documented_names(inspect.cleandoc(doc)) == {"a", "b", "**options", "c"}
    tree = ast.parse("class A:\n    def g(self, x, /, y, *rest, z, **kw): pass")
    method = tree.body[0].body[0]  # type: ignore[attr-defined]
    assert required_names(method, method=True) == ["x", "y", "z", "*rest", "**kw"]
