"""Shared machinery of every source of draws: row streams, the row cache, range checks.

An :class:`bayesldp.estimate.Uncertainty` generates rows of draws on demand. These
helpers make every implementation behave alike: row ``i`` has its own random stream
(:func:`row_generator`), the rows asked for are checked one way
(:func:`check_draw_range`), and generated rows are kept after the first query when they
fit in :data:`ROW_CACHE_MAX_BYTES` (:func:`cached_rows`). :func:`draw_set_sums` reads
draws :data:`DRAW_CHUNK` rows at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayesldp._validation import check_int

__all__ = [
    "DRAW_CHUNK",
    "ROW_CACHE_MAX_BYTES",
    "cached_rows",
    "check_draw_range",
    "draw_set_sums",
    "row_generator",
]

#: Rows of draws read at a time when summing over sets (bounds memory at large d).
DRAW_CHUNK = 64

#: Largest ``(n_draws, d)`` float64 array of generated draws kept after the first query
#: (:func:`cached_rows`); larger ones regenerate the rows asked for at every query.
#: 512 MiB holds e.g. 1000 draws of 60,000 items. Set it to 0 to turn every cache off.
ROW_CACHE_MAX_BYTES = 512 * 2**20


def check_draw_range(start, stop, n_draws: int) -> tuple[int, int]:
    """Return ``(start, stop)`` as ints if ``0 <= start <= stop <= n_draws``, else raise.

    The one check of the rows asked of an :class:`~bayesldp.estimate.Uncertainty`
    (``sample(start, stop)``); the ValueError names ``start`` or ``stop``, and bools,
    floats and other non-integers are refused (:func:`bayesldp._validation.check_int`).

    Parameters
    ----------
    start, stop : int
        First draw and one past the last.
    n_draws : int
        Number of draws available.

    Returns
    -------
    tuple of int
        ``(start, stop)``.
    """
    start = check_int(start, "start", minimum=0, maximum=n_draws)
    stop = check_int(stop, "stop", minimum=start, maximum=n_draws)
    return start, stop


def row_generator(seed: int, *key: int) -> np.random.Generator:
    """Return the random stream of one row of draws: ``SeedSequence(seed, spawn_key=key)``.

    Row ``i`` of a set of draws uses ``row_generator(seed, i)``, so it is the same
    whatever chunk asks for it; a longer ``key`` separates several families of streams
    under one seed (e.g. ``(0, b)`` for bootstrap replicate ``b`` and ``(1, i)`` for
    row ``i``). The generator is PCG64, as ``numpy.random.default_rng`` makes.

    Parameters
    ----------
    seed : int
        Seed of the whole set of draws.
    *key : int
        The row's spawn key, e.g. its number.
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def cached_rows(
    cache: dict,
    generate: Callable[[int, int], np.ndarray],
    start,
    stop,
    n_draws: int,
    d: int,
) -> np.ndarray:
    """Rows ``start .. stop - 1`` of ``n_draws`` generated rows, kept after the first query.

    The one implementation of ``Uncertainty.sample`` for draws generated on demand.
    When the whole ``(n_draws, d)`` float64 array takes at most
    :data:`ROW_CACHE_MAX_BYTES`, the first query generates every row once
    (``generate(0, n_draws)``) and keeps it in ``cache["rows"]``, so later queries (an
    interval per subset) only read it; otherwise each query generates the rows it asks
    for. ``generate`` must give row ``i`` the same values whatever range it is asked in,
    so the two paths return the same numbers.

    Parameters
    ----------
    cache : dict
        Where the rows are kept (key ``"rows"``): the caller's cache, e.g. a frozen
        dataclass's ``field(default_factory=dict, init=False, compare=False, repr=False)``.
    generate : callable
        ``generate(start, stop)`` returns rows ``start .. stop - 1`` as a new float64
        array of shape ``(stop - start, d)``.
    start, stop : int
        First draw and one past the last, ``0 <= start <= stop <= n_draws``
        (:func:`check_draw_range`).
    n_draws : int
        Number of rows available.
    d : int
        Length of a row (the domain size).

    Returns
    -------
    numpy.ndarray
        Read-only, shape ``(stop - start, d)``: a view of the cached rows, or the newly
        generated rows (made read-only too, so callers see one behaviour).
    """
    start, stop = check_draw_range(start, stop, n_draws)
    if n_draws * d * np.dtype(np.float64).itemsize > ROW_CACHE_MAX_BYTES:
        rows = generate(start, stop)
        rows.setflags(write=False)
        return rows
    if "rows" not in cache:
        rows = generate(0, n_draws)
        rows.setflags(write=False)
        cache["rows"] = rows
    return cache["rows"][start:stop]


def draw_set_sums(uncertainty: Any, masks: np.ndarray) -> np.ndarray:
    """Return the sum over each set of every draw, shape ``(Q, n_draws)``, chunk by chunk.

    Parameters
    ----------
    uncertainty : bayesldp.estimate.Uncertainty
        The draws (posterior draws or bootstrap replicates).
    masks : numpy.ndarray of bool
        The ``Q`` sets, shape ``(Q, d)``.
    """
    weights = np.asarray(masks, dtype=np.float64)
    out = np.empty((weights.shape[0], uncertainty.n_draws))
    for start in range(0, uncertainty.n_draws, DRAW_CHUNK):
        stop = min(start + DRAW_CHUNK, uncertainty.n_draws)
        out[:, start:stop] = weights @ np.asarray(uncertainty.sample(start, stop)).T
    return out
