"""Sphinx configuration of bayesldp's documentation.

Build (from the repository root; static HTML that opens from the file system)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference (``docs/api/``) is written at build time from the public modules'
``__all__`` lists by ``docs/_ext/apiref.py``; the gallery (``docs/auto_examples/``)
is written by sphinx-gallery, which runs every script of ``examples/``. Links to
NumPy, SciPy, pandas, PyMC, ArviZ and cvxpy resolve through the inventories in
``docs/_inventories/``, so the build needs no network.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import bayesldp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# figures are drawn off screen; the examples take the backend from the environment
os.environ.setdefault("MPLBACKEND", "Agg")

project = "bayesldp"
author = "bayesldp contributors"
copyright = "bayesldp contributors, MIT License"
release = bayesldp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "apiref",
    "registries",
]

exclude_patterns = ["_build", "_inventories", "_ext", "auto_examples/*.ipynb", "**.zip"]
templates_path: list[str] = []

# -- autodoc and numpydoc ----------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections give the types
autodoc_default_options: dict[str, bool] = {}
autosummary_generate = False  # the API pages come from docs/_ext/apiref.py
numpydoc_show_class_members = False  # autoclass :members: lists them
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- intersphinx: offline inventories ------------------------------------------------------
_INVENTORIES = {
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "pandas": "https://pandas.pydata.org/docs/",
    "pymc": "https://www.pymc.io/projects/docs/en/stable/",
    "arviz": "https://python.arviz.org/en/stable/",
    "cvxpy": "https://www.cvxpy.org/",
}
intersphinx_mapping = {
    name: (url, str(Path("_inventories") / f"{name}.inv")) for name, url in _INVENTORIES.items()
}

# -- the gallery -------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # run every example
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "write_computation_times": True,
    "show_memory": False,
    "min_reported_time": 1,
}

# -- math without a network: MathJax from the sphinx-mathjax-offline package ------------
# MathJax's SVG output draws the glyphs itself (no web fonts), so the formulas render in
# a page opened from the file system on a machine without internet.
mathjax_path = "mathjax/tex-svg.js"
_MATHJAX_SKIP = ("tex-chtml*", "tex-mml-*", "mml-*", "tex-svg-full*", "node-main.js", "chtml*")


def _copy_mathjax(app, exc):
    """Copy MathJax (its SVG build and the components it loads) into ``_static``."""
    if exc is not None or app.builder.format != "html":
        return
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("install the docs extra: pip install -e '.[docs]'")
    source = Path(spec.submodule_search_locations[0]) / "static" / "mathjax"
    target = Path(app.outdir) / "_static" / "mathjax"
    ignore = shutil.ignore_patterns(*_MATHJAX_SKIP)
    shutil.copytree(source, target, ignore=ignore, dirs_exist_ok=True)


# -- links: every reference must resolve (nitpicky, so a broken link fails the -W build),
# except those of the library's docstrings on the API pages (see docs/_ext/apiref.py).
nitpicky = True


def setup(app):
    """Copy MathJax into the built site when the build has finished."""
    app.connect("build-finished", _copy_mathjax)


# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bayesldp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 5,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": []}
html_static_path: list[str] = []
html_copy_source = False
html_show_sourcelink = False
