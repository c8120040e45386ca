"""Exact (Clopper-Pearson) binomial bounds and the audit's bound on a log-ratio."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from bayesldp._validation import check_choice, check_float, check_int


def clopper_pearson(
    successes: Any, trials: int, confidence: float = 0.95, *, alternative: str = "two-sided"
) -> tuple[Any, Any]:
    """Exact (Clopper-Pearson) confidence bounds for a binomial proportion.

    Parameters
    ----------
    successes : int or array_like of int
        Observed successes ``k`` (``0 <= k <= trials``).
    trials : int
        Number of trials ``n`` (>= 1).
    confidence : float
        Confidence level in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        As in :func:`scipy.stats.binomtest`: ``"greater"`` gives a one-sided lower
        bound (upper bound 1), ``"less"`` a one-sided upper bound (lower bound 0).

    Returns
    -------
    (lower, upper) : tuple of float or numpy.ndarray
        ``lower = Beta(a; k, n - k + 1)`` quantile and ``upper = Beta(1 - a; k + 1, n - k)``
        quantile with ``a = (1 - confidence) / 2`` (two-sided) or ``1 - confidence``
        (one-sided); ``lower = 0`` when ``k = 0`` and ``upper = 1`` when ``k = n``.
    """
    n = check_int(trials, "trials", minimum=1)
    conf = check_float(
        confidence, "confidence", minimum=0, maximum=1, strict_minimum=True, strict_maximum=True
    )
    check_choice(alternative, ("two-sided", "greater", "less"), "alternative")
    k = np.asarray(successes)
    if k.dtype == bool or not np.issubdtype(k.dtype, np.integer):
        raise ValueError(f"successes must be integers, got dtype {k.dtype}")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"successes must lie in [0, trials={n}]")
    tail = (1 - conf) / 2 if alternative == "two-sided" else 1 - conf
    kf = k.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(tail, np.maximum(kf, 1), n - kf + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - tail, kf + 1, np.maximum(n - kf, 1)), 1.0)
    if alternative == "greater":
        upper = np.ones_like(lower)
    elif alternative == "less":
        lower = np.zeros_like(upper)
    if k.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def log_ratio_lower(x_a: Any, x_b: Any, n_a: int, n_b: int, confidence: float) -> np.ndarray:
    """Lower bound on log(P_a / P_b) from x_a of n_a and x_b of n_b (union of two CP bounds).

    With probability at least ``confidence``, both the one-sided lower bound on
    ``P_a`` and the one-sided upper bound on ``P_b`` (each at ``(1 + confidence) / 2``)
    hold, and then so does their log-ratio bound.
    """
    half = (1 + confidence) / 2
    ua, ia = np.unique(np.asarray(x_a, dtype=np.int64), return_inverse=True)
    ub, ib = np.unique(np.asarray(x_b, dtype=np.int64), return_inverse=True)
    lower, _ = clopper_pearson(ua, n_a, half, alternative="greater")
    _, upper = clopper_pearson(ub, n_b, half, alternative="less")
    with np.errstate(divide="ignore"):
        out = np.log(lower)[ia] - np.log(upper)[ib]
    return out.reshape(np.shape(x_a))
