"""Write the intersphinx inventories of the projects the documentation links to.

The documentation is built on machines without internet access, where intersphinx
cannot download ``objects.inv`` from NumPy's, SciPy's, pandas', PyMC's, ArviZ's and
cvxpy's sites. This script writes a small inventory for each, listing the objects
these pages refer to, with their addresses on the projects' own sites, so that links
to them resolve offline. Add an entry when the documentation starts referring to a
new external object, then run ``python docs/_inventories/make_inventories.py``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: project -> (base address, {object: (role, page relative to the base)})
PROJECTS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "numpy": (
        "https://numpy.org/doc/stable/",
        {
            "numpy.ndarray": ("py:class", "reference/generated/numpy.ndarray.html"),
            "numpy.random.Generator": ("py:class", "reference/random/generator.html"),
            "numpy.random.SeedSequence": (
                "py:class",
                "reference/random/bit_generators/generated/numpy.random.SeedSequence.html",
            ),
            "numpy.random.default_rng": ("py:function", "reference/random/generator.html"),
            "numpy.packbits": ("py:function", "reference/generated/numpy.packbits.html"),
            "numpy.dtype": ("py:class", "reference/generated/numpy.dtype.html"),
        },
    ),
    "scipy": (
        "https://docs.scipy.org/doc/scipy/",
        {
            "scipy.stats.norm": ("py:data", "reference/generated/scipy.stats.norm.html"),
            "scipy.optimize.minimize": (
                "py:function",
                "reference/generated/scipy.optimize.minimize.html",
            ),
        },
    ),
    "pandas": (
        "https://pandas.pydata.org/docs/",
        {"pandas.DataFrame": ("py:class", "reference/api/pandas.DataFrame.html")},
    ),
    "pymc": (
        "https://www.pymc.io/projects/docs/en/stable/",
        {
            "pymc.Model": ("py:class", "api/generated/pymc.Model.html"),
            "pymc.sample": ("py:function", "api/generated/pymc.sample.html"),
            "pymc.Dirichlet": ("py:class", "api/distributions/generated/pymc.Dirichlet.html"),
        },
    ),
    "arviz": (
        "https://python.arviz.org/en/stable/",
        {
            "arviz.InferenceData": ("py:class", "api/generated/arviz.InferenceData.html"),
            "arviz.rhat": ("py:function", "api/generated/arviz.rhat.html"),
            "arviz.ess": ("py:function", "api/generated/arviz.ess.html"),
            "arviz.loo": ("py:function", "api/generated/arviz.loo.html"),
        },
    ),
    "cvxpy": (
        "https://www.cvxpy.org/",
        {"cvxpy.Problem": ("py:class", "api_reference/cvxpy.problems.html")},
    ),
}


def inventory(project: str, objects: dict[str, tuple[str, str]]) -> bytes:
    """Return the bytes of a version-2 Sphinx inventory of ``objects``."""
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        "# Version: stable\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    lines = "".join(
        f"{name} {role} 1 {page}#{name} -\n" for name, (role, page) in sorted(objects.items())
    )
    return header.encode() + zlib.compress(lines.encode())


def main() -> None:
    """Write ``<project>.inv`` beside this script for every project."""
    for project, (_, objects) in PROJECTS.items():
        (HERE / f"{project}.inv").write_bytes(inventory(project, objects))


if __name__ == "__main__":
    main()
