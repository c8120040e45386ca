r"""Condition draws of the counts on their known total, keeping them non-negative.

Independent Gaussian counts :math:`x_v` with variances :math:`V_v`, conditioned on
:math:`\sum_v x_v = n`, have the mean :math:`x_v - (V_v / \sum_u V_u)(\sum_u x_u - n)`:
each item takes a share of the excess in proportion to its variance, so an item whose
posterior is a point does not move. Counts cannot be negative, so the excess is shared
the way Norm-Sub shares it, with weights:

.. math::

    x'_v = \max(x_v - V_v \delta, 0), \qquad \delta \text{ such that }
    \textstyle\sum_v x'_v = n ,

the variance-weighted Euclidean projection onto the scaled simplex. When no item is
pushed below zero this is the Gaussian conditioning formula itself. Dividing a
clipped draw by its sum instead would rescale every item, the largest by the most.

Used by every posterior that draws counts item by item and must hand back a vector
that adds up to the number of users (``eb-npmle``'s draws and its fallback when no
tilt of the prior reaches the total; ``bayes-consistent``'s tilted draws).
"""

from __future__ import annotations

import numpy as np

__all__ = ["condition_on_total"]


def condition_on_total(x: np.ndarray, var: np.ndarray, total: float) -> np.ndarray:
    r"""Move draws of the counts onto ``sum = total``, in proportion to their variances.

    Each row is moved independently: :math:`x'_v = \max(x_v - V_v \delta, 0)` with
    :math:`\delta` (one per row) such that the row adds up to ``total``, found by
    Michelot's active-set iteration: compute :math:`\delta` from the items still
    sharing the excess, drop those it pushes below zero (they are set to 0), repeat.
    Items with zero variance keep their value.

    Fallbacks, each keeping the row non-negative and on the total: when the items with
    zero variance alone reach ``total`` (nothing is left to share out), or no item has
    a positive variance (or their variances sum to too little to divide by), the row is
    clipped at zero and scaled to ``total``; a row with
    no positive count left to scale is shared equally (the data leave nothing to share
    the total by).

    Parameters
    ----------
    x : numpy.ndarray
        Drawn counts, shape ``(d,)`` or ``(rows, d)``.
    var : numpy.ndarray
        The items' variances (the weights), non-negative, broadcastable to ``x``
        (one per item, or one per item of each row).
    total : float
        The total each row is moved onto (the number of users).

    Returns
    -------
    numpy.ndarray
        Non-negative counts, each row summing to ``total`` (to rounding), the shape of
        ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    rows = np.atleast_2d(x)
    var = np.broadcast_to(np.asarray(var, dtype=np.float64), x.shape).reshape(rows.shape)
    fixed = var <= 0
    free = ~fixed
    target = total - np.where(fixed, rows, 0.0).sum(axis=1)
    ok = (target > 0) & free.any(axis=1)
    out = np.empty_like(rows)
    active = np.flatnonzero(ok)  # rows still sharing their excess
    while active.size:
        fa = free[active]
        excess = np.where(fa, rows[active], 0.0).sum(axis=1) - target[active]
        with np.errstate(over="ignore"):
            delta = excess / np.where(fa, var[active], 0.0).sum(axis=1)
        finite = np.isfinite(delta)  # a total variance too small to divide by: scaled
        ok[active[~finite]] = False
        active, fa, delta = active[finite], fa[finite], delta[finite]
        xa, va = rows[active], var[active]
        y = xa - va * delta[:, None]
        drop = fa & (y < 0)
        done = ~drop.any(axis=1)
        kept = np.where(fixed[active], xa, 0.0)
        out[active[done]] = np.where(fa, y, kept)[done]
        fa &= ~drop
        free[active] = fa
        left = fa.any(axis=1)
        ok[active[~done & ~left]] = False  # every item was dropped: scaled below
        active = active[~done & left]
    scaled = np.flatnonzero(~ok)
    if scaled.size:
        clipped = np.maximum(rows[scaled], 0.0)
        sums = clipped.sum(axis=1, keepdims=True)
        empty = sums[:, 0] <= 0
        clipped[empty] = 1.0
        sums[empty] = rows.shape[1]
        out[scaled] = clipped * (total / sums)
    return out.reshape(x.shape)
