"""Accuracy metrics used by the papers: full-domain, set-value, top-k and heavy hitters.

Every metric takes the true frequencies first and an :class:`~bayesldp.Estimate` (or
a plain frequency vector) second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesldp._query import random_set_masks, top_items
from bayesldp._validation import check_estimates, check_float, check_int, check_k, check_rng
from bayesldp.estimate import Estimate

__all__ = [
    "heavy_hitters",
    "mae",
    "mse",
    "random_subsets",
    "set_value_mse",
    "topk_mse",
]


def _pair(true, estimate) -> tuple[np.ndarray, np.ndarray]:
    f = check_estimates(true, "true")
    est = (
        estimate.frequencies
        if isinstance(estimate, Estimate)
        else check_estimates(estimate, "estimate")
    )
    if est.shape != f.shape:
        raise ValueError(f"estimate has shape {est.shape}, true frequencies {f.shape}")
    return f, est


#: Largest n_queries x domain_size drawn at once by random_subsets (a (n_queries, d)
#: array of keys: 8 GiB at this size); more is a ValueError naming n_queries.
MAX_QUERY_CELLS = 1 << 30


def mse(true, estimate) -> float:
    r"""Full-domain mean squared error :math:`\frac1d \sum_v (f'_v - f_v)^2`.

    Parameters
    ----------
    true : array_like of float
        True frequencies, length ``d``.
    estimate : Estimate or array_like of float
        The estimate (its ``frequencies``) or a plain vector of length ``d``.

    Raises
    ------
    ValueError
        The error exceeds the largest float.
    """
    f, est = _pair(true, estimate)
    diff = est - f
    with np.errstate(over="ignore"):
        value = float(np.mean(diff**2))
    if np.isfinite(value) or not np.isfinite(diff).all():
        return value
    # huge (finite) errors overflow in the square: scale them first
    scale = float(np.abs(diff).max())
    with np.errstate(over="ignore"):
        value = float(np.mean((diff / scale) ** 2) * scale * scale)
    if not np.isfinite(value):
        raise ValueError(
            f"estimate: the mean squared error exceeds the largest float (an error of {scale:.3g})"
        )
    return value


def mae(true, estimate) -> float:
    r"""Full-domain mean absolute error :math:`\frac1d \sum_v |f'_v - f_v|`.

    Parameters
    ----------
    true : array_like of float
        True frequencies, length ``d``.
    estimate : Estimate or array_like of float
        The estimate (its ``frequencies``) or a plain vector of length ``d``.
    """
    f, est = _pair(true, estimate)
    return float(np.mean(np.abs(est - f)))


def random_subsets(
    domain_size: int, percent: float, n_queries: int, rng: np.random.Generator | int | None
) -> np.ndarray:
    """Draw ``n_queries`` random item sets, each ``percent`` % of the domain.

    Parameters
    ----------
    domain_size : int
        Number of items.
    percent : float
        Size of each set, in (0, 100] percent of the domain (at least one item).
    n_queries : int
        Number of sets.
    rng : numpy.random.Generator or int
        Randomness (a Generator or a seed).

    Returns
    -------
    numpy.ndarray
        Boolean masks of shape ``(n_queries, domain_size)``.
    """
    domain_size = check_int(domain_size, "domain_size", minimum=1)
    percent = check_float(percent, "percent", minimum=0.0, maximum=100.0, strict_minimum=True)
    n_queries = check_int(
        n_queries, "n_queries", minimum=1, maximum=max(1, MAX_QUERY_CELLS // domain_size)
    )
    rng = check_rng(rng)
    size = max(1, round(domain_size * percent / 100))
    return random_set_masks((n_queries,), domain_size, size, rng)


def set_value_mse(
    true,
    estimate: Estimate,
    percent: float,
    rng: np.random.Generator | int | None,
    n_queries: int = 10,
) -> float:
    """Set-value MSE: squared error of subset sums over random sets of ``percent`` %.

    Subset answers come from :meth:`Estimate.subset`, so Post-Pos applies its
    query-time rule.

    Parameters
    ----------
    true : array_like of float
        True frequencies, length ``d``.
    estimate : Estimate
        The estimate (a plain vector is refused: query rules depend on the method).
    percent : float
        Size of each set, in (0, 100] percent of the domain (:func:`random_subsets`).
    rng : numpy.random.Generator or int
        Randomness for the sets (a Generator or a seed).
    n_queries : int, default 10
        Number of random sets averaged over.
    """
    if not isinstance(estimate, Estimate):
        raise ValueError("set_value_mse needs an Estimate (query rules depend on the method)")
    f, _ = _pair(true, estimate)
    masks = random_subsets(f.size, percent, n_queries, rng)
    errors = [(estimate.subset(mask) - f[mask].sum()) ** 2 for mask in masks]
    return float(np.mean(errors))


def topk_mse(true, estimate, k: int) -> float:
    """MSE over the ``k`` items with the largest *true* frequencies (ties by index).

    Parameters
    ----------
    true : array_like of float
        True frequencies, length ``d``.
    estimate : Estimate or array_like of float
        The estimate (its ``frequencies``) or a plain vector of length ``d``.
    k : int
        Number of items, in ``[1, d]``.
    """
    f, est = _pair(true, estimate)
    k = check_k(k, f.size)
    top = top_items(f, k)[0]
    return float(np.mean((est[top] - f[top]) ** 2))


@dataclass(frozen=True)
class HeavyHitterScore:
    """Precision, recall and F-score of heavy-hitter identification."""

    precision: float
    recall: float
    f_score: float
    n_true: int
    n_predicted: int


def heavy_hitters(true, estimate, threshold: float) -> HeavyHitterScore:
    """Score the items estimated at or above ``threshold`` against the true ones.

    Precision is 1 when nothing is predicted, recall is 1 when nothing is truly heavy
    (the conventions that keep the curves continuous); F is their harmonic mean.

    Parameters
    ----------
    true : array_like of float
        True frequencies, length ``d``.
    estimate : Estimate or array_like of float
        The estimate (its ``frequencies``) or a plain vector of length ``d``.
    threshold : float
        In (0, 1]; an item is heavy when its frequency is at least ``threshold``.

    Returns
    -------
    HeavyHitterScore
        Precision, recall, F and the numbers of true and predicted heavy hitters.
    """
    f, est = _pair(true, estimate)
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0, strict_minimum=True)
    truth, pred = f >= threshold, est >= threshold
    tp = int((truth & pred).sum())
    precision = tp / pred.sum() if pred.any() else 1.0
    recall = tp / truth.sum() if truth.any() else 1.0
    f_score = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return HeavyHitterScore(
        float(precision), float(recall), float(f_score), int(truth.sum()), int(pred.sum())
    )
