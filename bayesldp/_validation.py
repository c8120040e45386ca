"""Input checks shared by the public API.

Every check raises :class:`ValueError` naming the offending argument, so that bad
input is never clipped or coerced silently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float, or raise if it is not finite and > 0."""
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}") from None
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return eps


def check_domain_size(domain_size: int) -> int:
    """Return ``domain_size`` as an int >= 1, or raise."""
    if isinstance(domain_size, bool) or not isinstance(domain_size, int | np.integer):
        raise ValueError(f"domain_size must be a positive integer, got {domain_size!r}")
    if domain_size < 1:
        raise ValueError(f"domain_size must be a positive integer, got {domain_size!r}")
    return int(domain_size)


def check_counts(counts, name: str = "counts", length: int | None = None) -> np.ndarray:
    """Return non-negative integer counts as an int64 array, or raise.

    Parameters
    ----------
    counts : array_like
        One-dimensional counts.
    name : str
        Argument name used in error messages.
    length : int, optional
        Required length (the domain size).
    """
    arr = np.asarray(counts)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite; it holds NaN or inf")
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integers; it holds non-integer values")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; it holds {int((arr < 0).sum())} negatives")
    if length is not None and arr.size != length:
        raise ValueError(f"{name} has length {arr.size}, but the domain size is {length}")
    return arr.astype(np.int64)


def check_estimates(estimates, name: str = "estimates") -> np.ndarray:
    """Return a finite 1-D float64 array, or raise."""
    arr = np.asarray(estimates, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it holds NaN or inf")
    return arr


def check_values(values, domain_size: int, name: str = "values") -> np.ndarray:
    """Return user values as an int64 array of indices in ``[0, domain_size)``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer item indices, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= domain_size):
        raise ValueError(
            f"{name} must lie in [0, {domain_size}); got range [{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.int64)


def check_indices(indices, domain_size: int, name: str = "indices") -> np.ndarray:
    """Return subset indices (ints or a boolean mask) as unique int64 indices."""
    arr = np.asarray(indices)
    if arr.dtype == bool:
        if arr.shape != (domain_size,):
            raise ValueError(
                f"{name} as a boolean mask must have shape ({domain_size},), got {arr.shape}"
            )
        return np.flatnonzero(arr)
    arr = np.atleast_1d(arr)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer item indices, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= domain_size):
        raise ValueError(
            f"{name} out of range: must lie in [0, {domain_size}), "
            f"got range [{arr.min()}, {arr.max()}]"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat an item")
    return arr.astype(np.int64)


def check_k(k: int, domain_size: int, name: str = "k") -> int:
    """Return ``k`` if it is an integer in ``[1, domain_size]``."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {k!r}")
    if not 1 <= k <= domain_size:
        raise ValueError(f"{name} must lie in [1, {domain_size}], got {k}")
    return int(k)


def check_probability(x: float, name: str, *, open_interval: bool = True) -> float:
    """Return ``x`` if it is a probability (in (0, 1) by default)."""
    try:
        val = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {x!r}") from None
    ok = 0 < val < 1 if open_interval else 0 <= val <= 1
    if not math.isfinite(val) or not ok:
        raise ValueError(f"{name} must lie in (0, 1), got {x!r}")
    return val


def check_choice(value: str, choices: Sequence[str], name: str) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(map(str, choices))}")
    return value
