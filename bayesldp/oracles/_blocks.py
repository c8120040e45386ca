"""Block iteration: every loop over users touches a bounded number of user-item cells.

Privatizing, counting, simulating, decoding and writing reports all walk the users in
blocks of at most :data:`CHUNK_CELLS` user-item cells, so memory beyond the reports
themselves does not grow with the number of users.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Bound on the user-item cells handled at once (rows * cells per row) by every
#: block-wise loop: privatizing, counting, simulating, decoding and writing reports.
CHUNK_CELLS = 1 << 21


def rows_per_block(cells_per_row: int) -> int:
    """Rows handled at once so that a block touches at most :data:`CHUNK_CELLS` cells.

    Parameters
    ----------
    cells_per_row : int
        User-item cells in one row (values below 1 count as 1).

    Returns
    -------
    int
        ``CHUNK_CELLS // cells_per_row``, at least 1.
    """
    return max(1, CHUNK_CELLS // max(1, int(cells_per_row)))


def blocks(total: int, rows: int) -> Iterator[slice]:
    """Consecutive slices of at most ``rows`` rows covering ``0 .. total-1``.

    Parameters
    ----------
    total : int
        Number of rows.
    rows : int
        Rows per slice (at least 1).

    Yields
    ------
    slice
        ``slice(start, min(start + rows, total))`` for ``start = 0, rows, 2 rows, ...``.
    """
    for start in range(0, total, rows):
        yield slice(start, min(start + rows, total))


def units_in_range(counts: np.ndarray, ends: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Item of each unit ``start .. stop-1`` when item ``i`` has ``counts[i]`` units in turn.

    The result is ``np.repeat(arange(d), counts)[start:stop]`` without building the whole
    repetition.

    Parameters
    ----------
    counts : numpy.ndarray of int
        Units of each item.
    ends : numpy.ndarray of int
        ``cumsum(counts)``.
    start, stop : int
        The range of units, ``0 <= start < stop <= ends[-1]``.

    Returns
    -------
    numpy.ndarray of int
        The item of each unit in the range.
    """
    first = int(np.searchsorted(ends, start, side="right"))
    last = int(np.searchsorted(ends, stop - 1, side="right"))
    upper = np.minimum(ends[first : last + 1], stop)
    lower = np.maximum(ends[first : last + 1] - counts[first : last + 1], start)
    return np.repeat(np.arange(first, last + 1), upper - lower)


def bincount(reports: np.ndarray, length: int) -> np.ndarray:
    """Occurrences of each value ``0 .. length-1`` among unsigned integer reports, as int64.

    Parameters
    ----------
    reports : numpy.ndarray
        Unsigned integers below ``length``, any shape.
    length : int
        Number of bins.

    Returns
    -------
    numpy.ndarray of int64
        Count of each value.
    """
    if reports.dtype == np.uint64:
        reports = reports.astype(np.intp)
    return np.bincount(reports.reshape(-1), minlength=length).astype(np.int64, copy=False)
