"""Helpers shared by the dataset builders: optional imports, checks, sampling."""

from __future__ import annotations

import math
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np


def require(module: str, extra: str = "data") -> Any:
    """Import an optional dependency, or raise an ImportError naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"the {module!r} package is needed for this dataset; "
            f"install it with: pip install 'bayesldp[{extra}]'"
        ) from err


def package_version(package: str) -> str:
    """Return the installed version of ``package`` (for a dataset's ``source``)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # pragma: no cover - imported but no metadata
        return "unknown version"


def check_fraction(value: Any, name: str) -> float:
    """Return ``value`` as a float in (0, 1]; ValueError naming ``name`` otherwise."""
    try:
        frac = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}") from None
    if not (math.isfinite(frac) and 0 < frac <= 1):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return frac


def rng_text(rng: Any) -> str:
    """Describe ``rng`` for a dataset's ``source``: its seed, or that a Generator was given."""
    return f"seed {int(rng)}" if isinstance(rng, int | np.integer) else "a given Generator"


def existing_file(path: str | Path) -> Path:
    """Return ``path`` as a Path if it is a non-empty file; ValueError saying why not."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"path {str(p)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"path {str(p)!r} is not a file")
    if p.stat().st_size == 0:
        raise ValueError(f"path {str(p)!r} is empty")
    return p


def sample_without_replacement(
    counts: np.ndarray, fraction: float, gen: np.random.Generator
) -> np.ndarray:
    """Draw counts of ``round(fraction * total)`` units without replacement."""
    if fraction == 1.0:
        return counts.copy()
    total = int(counts.sum())
    size = round(fraction * total)
    if size < 1:
        raise ValueError(f"sample_fraction={fraction} keeps no one out of {total:,}")
    if total < 10**9:
        return gen.multivariate_hypergeometric(counts, size, method="marginals")
    # numpy's exact sampler is limited to totals below 1e9: fall back to Bernoulli.
    warnings.warn(
        f"total {total:,} >= 1e9: sampling each unit independently (binomial) instead of "
        "an exact sample without replacement",
        stacklevel=3,
    )
    return gen.binomial(counts, fraction)
