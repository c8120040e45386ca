"""Write the API reference from the public modules' ``__all__`` lists, at build time.

A *public module* is a module of ``bayesldp`` or ``bayesldp.models`` none of whose
dotted parts starts with ``_`` and that defines ``__all__`` (``bayesldp.experiments``,
the studies, is not an API and is left out). Each gets one page, ``api/NAME.rst``,
holding its docstring and a table of exactly the names of its ``__all__``.

Every object is documented in full once, in its *home*: the public module that
defines it, or else (an object defined in a private module, e.g.
``bayesldp.audit._empirical.AuditResult``) the deepest public package exporting it
(``bayesldp.audit``). Elsewhere (a re-export such as ``bayesldp.GRR``) the table links
to the home. Nothing here names a module or an object: the pages follow whatever the
``__all__`` lists say, so the reference cannot drift from the code.

Used by ``docs/conf.py`` (``setup`` writes the pages when the build starts) and by
``tests/test_docs.py`` (``write_pages`` without Sphinx).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import logging
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

logger = logging.getLogger(__name__)

#: The packages whose public modules the reference documents.
ROOTS = ("bayesldp", "bayesldp.models")
#: Packages left out with everything below them.
EXCLUDED = ("bayesldp.experiments",)
#: The folder, relative to the documentation source, that the pages are written to.
API_DIR = "api"
#: Longest value shown beside a documented data name.
MAX_VALUE_CHARS = 70


def is_private(name: str) -> bool:
    """Return True when a part of the dotted ``name`` starts with an underscore."""
    return any(part.startswith("_") for part in name.split("."))


def _excluded(name: str) -> bool:
    return any(name == ex or name.startswith(ex + ".") for ex in EXCLUDED)


def iter_module_names(roots: tuple[str, ...] = ROOTS) -> list[str]:
    """Return every non-private, non-excluded module below ``roots``, sorted.

    Packages are imported to find their submodules; private packages are not
    entered.

    Parameters
    ----------
    roots : tuple of str
        Package names to start from.
    """
    found: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in found or is_private(name) or _excluded(name):
            continue
        found.add(name)
        module = importlib.import_module(name)
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            stack.append(f"{name}.{info.name}")
    return sorted(found)


def public_modules(roots: tuple[str, ...] = ROOTS) -> dict[str, list[str]]:
    """Return ``{module name: its __all__}`` for every public module.

    Parameters
    ----------
    roots : tuple of str
        Package names to start from.
    """
    out = {}
    for name in iter_module_names(roots):
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None)
        if names is None:
            logger.info("apiref: %s has no __all__ and is not documented", name)
            continue
        out[name] = list(names)
    return out


@functools.cache
def _value(modname: str, name: str) -> Any:
    """Return the object ``modname.name``, fetched once.

    A name computed on access (one served by a module ``__getattr__``) is then the same
    object everywhere.
    """
    return getattr(importlib.import_module(modname), name)


def kind_of(obj: Any) -> str:
    """Return the autodoc kind of ``obj``: exception, class, function, module or data.

    Parameters
    ----------
    obj : object
        A public object.
    """
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    if inspect.ismodule(obj):
        return "module"
    return "data"


@dataclass(frozen=True)
class Entry:
    """One name of one module's ``__all__``.

    Attributes
    ----------
    module : str
        The public module listing the name.
    name : str
        The name.
    kind : str
        What :func:`kind_of` says.
    home : str
        The public module documenting the object in full.
    """

    module: str
    name: str
    kind: str
    home: str

    @property
    def target(self) -> str:
        """The dotted name of the full documentation (a module's own name for a module)."""
        return f"{self.home}.{self.name}" if self.kind != "module" else self.home


def _identity(name: str, obj: Any) -> tuple:
    """Return what makes two exports the same: identity for definitions, else name too."""
    if kind_of(obj) in ("class", "exception", "function", "module"):
        return ("object", id(obj))
    return ("data", name, id(obj))


def _home(obj: Any, kind: str, candidates: list[str]) -> str:
    """Pick the public module that documents ``obj`` among those exporting it."""
    if kind == "module":
        return obj.__name__
    defined = getattr(obj, "__module__", None) if kind != "data" else None
    if defined in candidates:
        return defined

    def closeness(module: str) -> tuple[int, int]:
        shared = 0
        if defined:
            for a, b in zip(module.split("."), defined.split("."), strict=False):
                if a != b:
                    break
                shared += 1
        return (shared, len(module.split(".")))

    return max(sorted(candidates), key=closeness)


def entries(modules: dict[str, list[str]]) -> dict[str, list[Entry]]:
    """Return, per public module, one :class:`Entry` per name of its ``__all__``.

    Parameters
    ----------
    modules : dict
        What :func:`public_modules` returns.
    """
    exporters: dict[tuple, list[str]] = {}
    for modname, names in modules.items():
        for name in names:
            exporters.setdefault(_identity(name, _value(modname, name)), []).append(modname)
    out: dict[str, list[Entry]] = {}
    for modname, names in modules.items():
        rows = []
        for name in names:
            obj = _value(modname, name)
            kind = kind_of(obj)
            if kind == "module" and obj.__name__ not in modules:
                # a module exported by name but with no page of its own: documented here
                kind = "data"
            home = _home(obj, kind, exporters[_identity(name, obj)])
            rows.append(Entry(modname, name, kind, home))
        out[modname] = rows
    return out


@functools.cache
def _source_attr_docs(module: ModuleType) -> dict[str, str]:
    """Return ``{name: doc}`` of the module-level assignments documented in the source.

    A doc is the block of ``#:`` comment lines right above the assignment, or a string
    literal right below it (the two forms autodoc reads).
    """
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):  # no source: nothing documented
        return {}
    lines = source.splitlines()
    tree = ast.parse(source)
    docs: dict[str, str] = {}
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        else:
            continue
        comments = []
        row = node.lineno - 2
        while row >= 0 and lines[row].lstrip().startswith("#:"):
            comments.insert(0, lines[row].lstrip()[2:].strip())
            row -= 1
        text = "\n".join(comments)
        nxt = body[i + 1] if i + 1 < len(body) else None
        if (
            not text
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            text = inspect.cleandoc(nxt.value.value)
        for target in targets:
            if text:
                docs[target] = text
    return docs


def attribute_doc(name: str, obj: Any, modname: str) -> str:
    """Return the documentation of a data name, found where it is defined.

    Searched (see :func:`_source_attr_docs`) in the module and in every loaded module of
    the same top-level package whose value of the name is ``obj`` itself; a name served
    by the module's ``__getattr__`` takes that function's docstring.

    Parameters
    ----------
    name : str
        The data name.
    obj : object
        Its value.
    modname : str
        The public module listing it.
    """
    root = modname.split(".")[0]
    loaded = sorted(m for m in list(sys.modules) if m == root or m.startswith(root + "."))
    candidates = [modname, *loaded]
    for candidate in candidates:
        module = sys.modules.get(candidate)
        if module is None or module.__dict__.get(name, _MISSING) is not obj:
            continue
        doc = _source_attr_docs(module).get(name)
        if doc:
            return doc
    module = importlib.import_module(modname)
    if name not in module.__dict__ and hasattr(module, "__getattr__"):
        return inspect.getdoc(module.__getattr__) or ""
    return ""


_MISSING = object()


def summary(entry: Entry) -> str:
    """Return the first sentence-like line of a name's documentation, for the table.

    Parameters
    ----------
    entry : Entry
        The name.
    """
    obj = _value(entry.module, entry.name)
    if entry.kind == "data":
        doc = attribute_doc(entry.name, obj, entry.module)
    else:
        doc = inspect.getdoc(obj) or ""
    first = doc.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines())


def _repr(obj: Any) -> str:
    """``repr`` with the items of a set sorted, so that a page is the same every build."""
    if isinstance(obj, set | frozenset):
        try:
            items = ", ".join(repr(x) for x in sorted(obj))
        except TypeError:  # items without an order
            return repr(obj)
        return f"{type(obj).__name__}({{{items}}})" if obj else f"{type(obj).__name__}()"
    return repr(obj)


def _title(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def _indent(text: str, spaces: int = 3) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in text.splitlines())


def _public_bases(cls: type, homes: dict[int, str]) -> list[str]:
    """Documented bayesldp bases of ``cls`` (private ones replaced by theirs), and others."""
    out: list[str] = []
    for base in cls.__bases__:
        if base is object:
            continue
        if id(base) in homes:
            out.append(homes[id(base)])
        elif _is_ours(base):
            out.extend(_public_bases(base, homes))
        else:
            out.append(f"{base.__module__}.{base.__qualname__}")
    return list(dict.fromkeys(out))


def _is_ours(cls: type) -> bool:
    return getattr(cls, "__module__", "").split(".")[0] == ROOTS[0].split(".")[0]


def _private_ancestors(cls: type, homes: dict[int, str]) -> list[type]:
    """Ancestors of ``cls`` from this package that have no documentation of their own."""
    return [c for c in cls.__mro__[1:] if _is_ours(c) and id(c) not in homes]


def class_homes(all_entries: dict[str, list[Entry]]) -> dict[int, str]:
    """Return ``{id(class): its documented dotted name}`` for every public class.

    Parameters
    ----------
    all_entries : dict
        What :func:`entries` returns.
    """
    homes = {}
    for rows in all_entries.values():
        for e in rows:
            if e.kind in ("class", "exception") and e.home == e.module:
                obj = _value(e.module, e.name)
                homes[id(obj)] = e.target
    return homes


def render(modname: str, rows: list[Entry], homes: dict[int, str]) -> str:
    """Return the reST page of one public module.

    Parameters
    ----------
    modname : str
        The module.
    rows : list of Entry
        Its names, in ``__all__`` order.
    homes : dict
        What :func:`class_homes` returns.
    """
    module = importlib.import_module(modname)
    parts = [
        ".. This page is written by docs/_ext/apiref.py from the module's __all__; do not edit.\n",
        _title(modname, "="),
        f".. py:module:: {modname}\n",
    ]
    doc = inspect.getdoc(module) or ""
    if doc:
        parts.append(doc.strip() + "\n")
    parts.append(_title("Public names", "-"))
    parts.append(f"``{modname}.__all__`` lists {len(rows)} name{'s' * (len(rows) != 1)}.\n")
    if rows:
        table = [".. list-table::", "   :widths: 30 70", ""]
        for e in rows:
            role = {"class": "class", "exception": "exc", "function": "func"}.get(e.kind, "obj")
            if e.kind == "module":
                role = "mod"
            link = f":py:{role}:`{e.name} <{e.target}>`"
            text = summary(e) or "(no description)"
            if e.home != e.module:
                text += f" (see :py:mod:`{e.home}`)"
            table.append(f"   * - {link}")
            table.append(f"     - {text}")
        parts.append("\n".join(table) + "\n")
    own = [e for e in rows if e.home == e.module and e.kind != "module"]
    if own:
        parts.append(_title("Reference", "-"))
    for e in own:
        full = f"{modname}.{e.name}"
        obj = _value(modname, e.name)
        if e.kind in ("class", "exception"):
            lines = [f".. auto{e.kind}:: {full}", "   :members:"]
            hidden = _private_ancestors(obj, homes)
            if hidden:
                # members defined in private bases are shown here; those of documented
                # (and of non-bayesldp) ancestors are documented there
                shown = [c.__name__ for c in obj.__mro__[1:] if c not in hidden]
                lines.append(f"   :inherited-members: {', '.join(dict.fromkeys(shown))}")
            if _public_bases(obj, homes):
                lines.append("   :show-inheritance:")
            parts.append("\n".join(lines) + "\n")
        elif e.kind == "function":
            parts.append(f".. autofunction:: {full}\n")
        else:
            # the bare name: the page's py:module gives the module
            lines = [f".. py:data:: {e.name}"]
            text = _repr(obj)
            if len(text) <= MAX_VALUE_CHARS and "\n" not in text:
                lines.append(f"   :value: {text}")
            else:
                lines.append(f"   :type: {type(obj).__name__}")
            body = attribute_doc(e.name, obj, modname)
            if body:
                lines += ["", _indent(body)]
            parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def render_index(modules: dict[str, list[str]]) -> str:
    """Return the reST of the reference's index page.

    Parameters
    ----------
    modules : dict
        What :func:`public_modules` returns.
    """
    parts = [
        ".. This page is written by docs/_ext/apiref.py; do not edit.\n",
        _title("API reference", "="),
        "One page per public module: its documentation and exactly the names of its "
        "``__all__``. Each object is documented in full in one place (the public module "
        "defining it, or the package exporting it); the other modules' tables link "
        "there. Modules and names starting with ``_`` are private and not listed.\n",
    ]
    for root in ROOTS:
        mine = [
            m
            for m in modules
            if (m == root or m.startswith(root + "."))
            and not any(m.startswith(r + ".") or m == r for r in ROOTS if len(r) > len(root))
        ]
        parts.append(_title(f"``{root}``", "-"))
        toctree = [".. toctree::", "   :maxdepth: 1", "", *(f"   {m}" for m in mine)]
        parts.append("\n".join(toctree) + "\n")
    return "\n".join(parts)


def write_pages(outdir: str | Path, roots: tuple[str, ...] = ROOTS) -> dict[str, Path]:
    """Write ``index.rst`` and one page per public module into ``outdir``.

    Files whose content is unchanged are not rewritten (so Sphinx rebuilds only what
    changed); pages of modules that are no longer public are removed.

    Parameters
    ----------
    outdir : str or path
        The folder of the pages.
    roots : tuple of str
        Package names to start from.

    Returns
    -------
    dict
        ``{module name: page path}``.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    modules = public_modules(roots)
    all_entries = entries(modules)
    homes = class_homes(all_entries)
    pages = {"index": render_index(modules)}
    pages.update({m: render(m, rows, homes) for m, rows in all_entries.items()})
    written = {}
    for name, text in pages.items():
        path = out / f"{name}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written[name] = path
    for stale in set(out.glob("*.rst")) - set(written.values()):
        stale.unlink()
    written.pop("index")
    return written


#: ``{id(class): documented name}`` of the current build (see :func:`class_homes`).
_HOMES: dict[int, str] = {}
#: ``{re-exported dotted name: documented dotted name}`` of the current build.
_ALIASES: dict[str, str] = {}
#: Every documented dotted name the reference's tables link to.
_TARGETS: set[str] = set()


def aliases(all_entries: dict[str, list[Entry]]) -> dict[str, str]:
    """Return ``{module.name: documented target}`` for every re-exported name.

    So that ``:class:`bayesldp.SS``` links to the class documented in its home module.

    Parameters
    ----------
    all_entries : dict
        What :func:`entries` returns.
    """
    return {
        f"{e.module}.{e.name}": e.target
        for rows in all_entries.values()
        for e in rows
        if e.home != e.module
    }


def _resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a Python reference to a re-exported name (or its members) at its home."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        canonical = _ALIASES.get(".".join(parts[:i]))
        if canonical is not None:
            new = ".".join([canonical, *parts[i:]])
            domain = env.get_domain("py")
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, node["reftype"], new, node, contnode
            )
    return None


def _process_bases(app: Any, name: str, obj: Any, options: Any, bases: list) -> None:
    """Show documented bayesldp bases by their public names; drop private ones."""
    bases[:] = [f":py:class:`{b}`" for b in _public_bases(obj, _HOMES)]


def _quiet_docstrings(app: Any, domain: Any, node: Any) -> bool | None:
    """Keep the docstrings' unresolved references silent on the API pages.

    The library's docstrings refer to names loosely (``:class:`Measurement```); on the
    ``api/`` pages such references stay plain text. The tables' own links, to the
    documented targets, are not silenced: one that does not resolve fails the build.
    """
    if not node.get("refdoc", "").startswith(API_DIR + "/"):
        return None
    return None if node.get("reftarget") in _TARGETS else True


def _builder_inited(app: Any) -> None:
    write_pages(Path(app.srcdir) / API_DIR)
    all_entries = entries(public_modules())  # the modules are imported by now: quick
    _HOMES.clear()
    _HOMES.update(class_homes(all_entries))
    _ALIASES.clear()
    _ALIASES.update(aliases(all_entries))
    _TARGETS.clear()
    _TARGETS.update(e.target for rows in all_entries.values() for e in rows)


def setup(app: Any) -> dict[str, Any]:
    """Register the page writer and the reference handlers with Sphinx.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    """
    app.connect("builder-inited", _builder_inited)
    app.connect("autodoc-process-bases", _process_bases)
    app.connect("missing-reference", _resolve_alias)
    app.connect("warn-missing-reference", _quiet_docstrings)
    return {"version": "1", "parallel_read_safe": True}
