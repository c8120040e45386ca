"""The gallery: every script of ``examples/`` runs as a subprocess with tiny arguments.

In the style of NumPyro's ``test/test_examples.py``: ``EXAMPLES`` holds the command
line of each example with arguments that make it finish in seconds (the defaults are
what the documentation build runs). The other tests check what every example must be:
a sphinx-gallery story (a titled docstring), ``main(args)`` with ``parse_args()`` and
the ``__main__`` line, a figure, and only public names of bayesldp.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES_DIR = ROOT / "examples"

#: One entry per example: the file and its tiny arguments.
EXAMPLES = [
    "aggregate_parquet.py --d 64 --n 5000 --batch 2000",
    "audit_oracles.py --domain-size 3 --samples 2000",
    "choose_a_method.py --d 64 --n 20000 --reps 3 --k 3",
    "convex_kkt.py --d 16 --n 5000",
    "custom_prior.py --d 8 --n 5000 --draws 100 --tune 100",
    "empirical_bayes.py --d 64 --n 20000 --reps 1",
    "first_estimate.py --d 64 --n 20000 --reps 5",
    "heavy_hitters.py --d 64 --n 20000 --threshold 0.02 --reps 3",
    "likelihood_methods.py --d 16 --n 5000 --reps 1",
    "papers_figures.py --d 32 --n 5000 --epsilon 1 --reps 1 --queries 2",
    "plan_a_collection.py --d 32 --target 1e-3 --reps 3",
    "real_dataset.py --sample-fraction 0.001 --states 5",
    "your_own_method.py --n 5000 --reps 2",
]


def _scripts() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.py"))


def test_every_example_has_tiny_arguments():
    listed = sorted(e.split()[0] for e in EXAMPLES)
    assert listed == [p.name for p in _scripts()]


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs(example, tmp_path):
    filename, *args = example.split()
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES_DIR / filename), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: p.name)
def test_example_is_a_gallery_script(path):
    tree = _tree(path)
    doc = ast.get_docstring(tree, clean=True) or ""
    title, underline = [*doc.splitlines(), "", ""][:2]
    assert title and underline == "=" * len(title), "the docstring opens with a reST title"
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert [a.arg for a in functions["main"].args.args] == ["args"]
    assert "parse_args" in functions
    source = path.read_text()
    assert 'if __name__ == "__main__":\n    main(parse_args())\n' in source
    assert "# %%" in source, "cells separated by '# %%'"
    assert "plt.subplots(" in source or "plt.figure(" in source, "draws a figure"


def _public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


def _exported(module: str, name: str) -> bool:
    mod = importlib.import_module(module)
    if name in getattr(mod, "__all__", ()):
        return True
    sub = f"{module}.{name}"
    return _public(sub) and importlib.util.find_spec(sub) is not None


def _bayesldp_uses(tree: ast.Module) -> list[tuple[str, str]]:
    """Return (module, name) of each bayesldp name an example imports or reaches."""
    uses = []
    aliases: dict[str, str] = {}  # local name -> bayesldp module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "bayesldp":
                    parts = alias.name.split(".")
                    for i in range(1, len(parts)):
                        uses.append((".".join(parts[:i]), parts[i]))
                    if alias.asname:  # import bayesldp.audit as audit
                        aliases[alias.asname] = alias.name
                    else:  # import bayesldp.audit binds bayesldp
                        aliases[parts[0]] = parts[0]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bayesldp"):
            for alias in node.names:
                uses.append((node.module, alias.name))
                full = f"{node.module}.{alias.name}"
                if importlib.util.find_spec(node.module) and _is_module(full):
                    aliases[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            inner = node
            while isinstance(inner, ast.Attribute):
                chain.insert(0, inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in aliases:
                module = aliases[inner.id]
                for attr in chain:
                    uses.append((module, attr))
                    if not _is_module(f"{module}.{attr}"):
                        break
                    module = f"{module}.{attr}"
    return uses


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("path", _scripts(), ids=lambda p: p.name)
def test_example_uses_only_public_names(path):
    uses = _bayesldp_uses(_tree(path))
    assert uses, "an example shows bayesldp"
    bad = sorted({f"{m}.{n}" for m, n in uses if not (_public(m) and _exported(m, n))})
    assert not bad, f"names outside the public API (__all__): {bad}"
