"""What ``pip install .`` installs: every package folder of the library, and nothing else."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# installed package -> its folder in the repository (pyproject.toml maps the last two)
ROOTS = {"bayesldp": "bayesldp", "bayesldp.models": "models", "bayesldp.experiments": "experiments"}


def package_folders() -> set[str]:
    """Every package (a folder with an ``__init__.py``) under the installed roots."""
    out = set()
    for package, folder in ROOTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            out.add(".".join((package, *rel)))
    return out


def test_every_package_folder_is_installed():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed == package_folders()


def test_the_mapped_folders_are_the_ones_pyproject_names():
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    assert mapping == {k: v for k, v in ROOTS.items() if k != "bayesldp"}


def test_benchmarks_research_and_examples_are_not_installed():
    listed = PYPROJECT["tool"]["setuptools"]["packages"]
    assert not [p for p in listed if p.split(".")[0] in {"benchmarks", "research", "examples"}]
