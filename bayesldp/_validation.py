"""Input checks shared by the public API.

Every check raises :class:`ValueError` naming the offending argument, so that bad
input is never clipped or coerced silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np


def _is_number(value) -> bool:
    """Python or NumPy real scalar, not a bool."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _holds_bool(value: list | tuple) -> bool:
    """Whether a nested list/tuple holds a bool, or a boolean array, anywhere.

    Each sequence is scanned once for the types it holds (a C-level pass); nested
    sequences are scanned in turn and arrays are judged by their dtype.
    """
    stack = [value]
    while stack:
        seq = stack.pop()
        types = set(map(type, seq))
        if bool in types or np.bool_ in types:
            return True
        if any(issubclass(t, list | tuple | np.ndarray) for t in types):
            for item in seq:
                if isinstance(item, list | tuple):
                    stack.append(item)
                elif isinstance(item, np.ndarray) and item.dtype == bool:
                    return True
    return False


def as_array(value, name: str) -> np.ndarray:
    """``numpy.asarray(value)``, or a ValueError naming ``name`` if it is not array-like.

    Ragged nestings (``[1, [2, 3]]``) and objects NumPy cannot read as an array are
    refused here, not deep inside NumPy.
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{name} must be an array of numbers: {err}") from None
    if arr.dtype == object:
        raise ValueError(f"{name} must be an array of numbers, got {value!r:.80}")
    if arr.dtype != bool and isinstance(value, list | tuple) and arr.size:
        # NumPy reads [False, 0.5] as [0.0, 0.5]: a bool among numbers is refused, as
        # bools are everywhere else (an all-bool sequence keeps dtype bool for masks).
        if _holds_bool(value):
            raise ValueError(f"{name} must hold numbers, not bools, got {value!r:.80}")
    return arr


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise ValueError naming ``name``.

    Python and NumPy integers are accepted; bools, floats (even ``2.0``), strings and
    everything else are refused, as are values outside ``[minimum, maximum]``.
    """
    if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    out = int(value)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return out


def check_float(
    value,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
    strict_maximum: bool = False,
    finite: bool = True,
) -> float:
    """Return ``value`` as a float, or raise ValueError naming ``name``.

    Python and NumPy real numbers are accepted; bools, strings and everything else are
    refused, as are NaN, infinities (unless ``finite=False``) and values outside the
    bounds (open at a bound whose ``strict_*`` flag is set).
    """
    if not _is_number(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    out = float(value)
    if math.isnan(out) or (finite and math.isinf(out)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and (out < minimum or (strict_minimum and out == minimum)):
        op = ">" if strict_minimum else ">="
        raise ValueError(f"{name} must be {op} {minimum}, got {value!r}")
    if maximum is not None and (out > maximum or (strict_maximum and out == maximum)):
        op = "<" if strict_maximum else "<="
        raise ValueError(f"{name} must be {op} {maximum}, got {value!r}")
    return out


def check_bool(value, name: str) -> bool:
    """Return ``value`` if it is a bool (Python or NumPy), or raise ValueError."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """Return a Generator from ``rng``: a Generator, a non-negative int seed, or None.

    ``None`` draws fresh entropy from the operating system (not reproducible); pass a
    seed or a Generator for results that repeat.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool | np.bool_) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(
        f"{name} must be a numpy.random.Generator, a SeedSequence, a non-negative integer "
        f"seed or None, got {rng!r}"
    )


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float, or raise if it is not a finite number > 0."""
    return check_float(epsilon, "epsilon", minimum=0.0, strict_minimum=True)


def check_domain_size(domain_size: int) -> int:
    """Return ``domain_size`` as an int >= 1, or raise."""
    return check_int(domain_size, "domain_size", minimum=1)


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
    arr = as_array(counts, name)
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
    """Return a finite, non-empty 1-D float64 array of real numbers (no bools), or raise."""
    arr = as_array(estimates, name)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it holds NaN or inf")
    return arr


def check_frequencies(frequencies, name: str = "frequencies") -> np.ndarray:
    """Return frequencies (any shape) as a float64 array, each finite and in ``[0, 1]``.

    Real numbers only (no bools, strings or objects); NaN, infinities and values
    outside ``[0, 1]`` are refused, naming ``name``.
    """
    arr = as_array(frequencies, name)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it holds NaN or inf")
    if arr.size and (arr.min() < 0 or arr.max() > 1):
        raise ValueError(f"{name} must lie in [0, 1]; got range [{arr.min():g}, {arr.max():g}]")
    return arr


def check_values(values, domain_size: int, name: str = "values") -> np.ndarray:
    """Return user values as an int64 array of indices in ``[0, domain_size)``."""
    arr = as_array(values, name)
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
    arr = as_array(indices, name)
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
    return check_int(k, name, minimum=1, maximum=domain_size)


def check_probability(x: float, name: str, *, open_interval: bool = True) -> float:
    """Return ``x`` if it is a probability: in (0, 1) by default, [0, 1] if not open."""
    return check_float(
        x,
        name,
        minimum=0.0,
        maximum=1.0,
        strict_minimum=open_interval,
        strict_maximum=open_interval,
    )


def check_choice(value: str, choices: Sequence[str], name: str) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(map(str, choices))}")
    return value


def check_keywords(value, name: str, reserved: Sequence[str] = ()) -> dict:
    """Return ``value`` as a dict of keyword arguments (None gives an empty dict).

    ``value`` must be a mapping whose keys are strings that are valid Python
    identifiers, none of them in ``reserved`` (the arguments the caller sets itself).
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict of keyword arguments or None, got {value!r:.80}")
    out = dict(value)
    for key in out:
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f"{name} keys must be argument names, got {key!r}")
    taken = sorted(set(out) & set(reserved))
    if taken:
        raise ValueError(
            f"{name} cannot set {', '.join(taken)}: pass them as arguments of their own"
        )
    return out


def require(value, name: str, why: str = "") -> None:
    """Raise a ValueError naming ``name`` when a required argument is missing (``None``).

    For keyword arguments that must be given but default to ``None`` so that a missing
    one is reported as bad input (a ValueError naming it), not as Python's TypeError.

    Parameters
    ----------
    value : object
        The argument's value.
    name : str
        The argument's name.
    why : str, optional
        Why it is needed, appended to the message.

    Raises
    ------
    ValueError
        ``value`` is None.
    """
    if value is None:
        raise ValueError(f"{name} is required" + (f": {why}" if why else ""))
