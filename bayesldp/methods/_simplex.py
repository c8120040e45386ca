r"""Euclidean projection onto the probability simplex, row by row (sort-based).

The Norm-Sub / CLS step: :math:`\max(x - \theta, 0)` with :math:`\theta` chosen so
the result sums to the required total (Held et al. 1974; Duchi et al. 2008), ``O(d log
d)`` per row.
"""

from __future__ import annotations

import numpy as np

from bayesldp._validation import check_estimates, check_float

__all__ = ["project_rows", "project_simplex"]

#: Stands in for the entries left out of a row's projection: sorted last, never active.
_EXCLUDED = -1e250


def project_rows(
    values: np.ndarray, totals: np.ndarray | float = 1.0, active: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Euclidean projection of each row onto ``{f >= 0, sum f = total}``.

    Parameters
    ----------
    values : numpy.ndarray
        Rows to project, shape ``(B, d)``, finite.
    totals : float or numpy.ndarray
        Required sum of each row, ``>= 0`` (one for all rows, or one per row).
    active : numpy.ndarray of bool, optional
        Entries taking part in each row's projection, shape ``(B, d)``; the others are
        returned as 0. Every row must have at least one active entry.

    Returns
    -------
    projected : numpy.ndarray
        :math:`\max(x - \theta, 0)` on the active entries, 0 elsewhere.
    theta : numpy.ndarray
        Each row's :math:`\theta` (the Norm-Sub shift is :math:`-\theta`); for a total of
        0, the largest active entry.
    """
    x = np.asarray(values, dtype=np.float64)
    rows, d = x.shape
    totals = np.broadcast_to(np.asarray(totals, dtype=np.float64), (rows,))
    work = x if active is None else np.where(active, x, _EXCLUDED)
    u = -np.sort(-work, axis=1)
    css = np.cumsum(u, axis=1) - totals[:, None]
    ks = np.arange(1, d + 1)
    positive = u - css / ks > 0
    # Last index where the condition holds (it holds on a prefix of the sorted row).
    rho = d - 1 - np.argmax(positive[:, ::-1], axis=1)
    theta = css[np.arange(rows), rho] / (rho + 1)
    empty = totals == 0
    theta = np.where(empty, u[:, 0], theta)
    out = np.maximum(x - theta[:, None], 0.0)
    if active is not None:
        out = np.where(active, out, 0.0)
    out[empty] = 0.0
    return out, theta


def project_simplex(values, total: float = 1.0) -> np.ndarray:
    r"""Euclidean projection of one vector onto :math:`\{f \ge 0, \sum f = \text{total}\}`.

    Parameters
    ----------
    values : array_like of float
        The vector to project: finite, non-empty, 1-D (else a ValueError naming it).
    total : float, default 1.0
        The sum of the result, positive (else a ValueError naming it).

    Returns
    -------
    numpy.ndarray of float64
        The projection.
    """
    x = check_estimates(values, "values")
    total = check_float(total, "total", minimum=0.0, strict_minimum=True)
    return project_rows(x[None, :], total)[0][0]
