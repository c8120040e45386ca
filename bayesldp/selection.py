r"""Heavy hitters with error control, and the probability of being among the top k.

Frequentist methods test each item on the raw unbiased estimates (the post-processing
does not enter): the one-sided test of :math:`H_v: f_v \le t` rejects for large
:math:`\tilde f_v`, with the normal approximation and the item's variance at the
boundary, and Holm's step-down procedure keeps the family-wise error rate (the
probability of declaring any item with :math:`f_v \le t` heavy) at most ``alpha``.
RAPPOR's decoder does the same with Bonferroni; Holm rejects at least as much.
Estimates with posterior draws declare the items whose posterior probability of
exceeding ``t`` is above ``1 - alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayesldp._draws import DRAW_CHUNK
from bayesldp._validation import check_estimates, check_float, check_k
from bayesldp.estimate import Estimate, Uncertainty
from bayesldp.intervals import ParametricBootstrap
from bayesldp.measurement import Measurement

__all__ = ["HeavyHitters", "holm", "item_p_values", "top_k_probability"]


def holm(p_values, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Holm's step-down procedure.

    Sort the p-values increasingly, :math:`p_{(1)} \le \dots \le p_{(m)}`; reject
    :math:`H_{(1)}, \dots, H_{(j)}` where ``j`` is the last index before the first
    :math:`p_{(i)} > \alpha / (m - i + 1)`. Tied p-values are rejected together or not
    at all.

    Parameters
    ----------
    p_values : array_like
        One p-value per hypothesis, in ``[0, 1]``.
    alpha : float
        Family-wise error rate, in (0, 1).

    Returns
    -------
    rejected : numpy.ndarray of bool
        Which hypotheses are rejected.
    adjusted : numpy.ndarray
        Holm-adjusted p-values :math:`\max_{j \le i} \min(1, (m - j + 1) p_{(j)})`;
        ``rejected`` is ``adjusted <= alpha``.
    """
    p = check_estimates(p_values, "p_values")
    if p.min() < 0 or p.max() > 1:
        raise ValueError("p_values must lie in [0, 1]")
    alpha = check_float(alpha, "alpha", minimum=0.0, maximum=1.0, strict_minimum=True,
                        strict_maximum=True)  # fmt: skip
    m = p.size
    order = np.argsort(p, kind="stable")
    factors = m - np.arange(m)
    adjusted_sorted = np.maximum.accumulate(np.minimum(1.0, factors * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted <= alpha, adjusted


def item_p_values(m: Measurement, threshold: float) -> tuple[np.ndarray, float]:
    r"""One-sided p-values of :math:`H_v: f_v \le t` from the raw estimates.

    :math:`p_v = 1 - \Phi((\tilde f_v - t) / \sigma_t)` with :math:`\sigma_t^2` the
    estimate's variance at :math:`f_v = t` (the same for every item of a pure oracle),
    or at :math:`f_v = 0` when that is larger (oracles with :math:`p + q > 1`, e.g. HR,
    whose variance falls with ``f``): the largest variance under the null, so the test
    keeps its level for every :math:`f_v \le t`.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    threshold : float
        The frequency :math:`t` of the null hypotheses.

    Returns
    -------
    p_values : numpy.ndarray
    sd : float
        :math:`\sigma_t`.
    """
    from scipy.special import ndtr  # the normal distribution function

    var = np.max(m.variance(np.array([0.0, threshold])))
    sd = math.sqrt(float(var))
    return ndtr(-(m.estimates - threshold) / sd), sd


@dataclass(frozen=True)
class HeavyHitters:
    """Items declared heavy (frequency above ``threshold``) and the evidence.

    Attributes
    ----------
    indices : numpy.ndarray
        Declared items, strongest evidence first (smallest p-value or largest
        probability; ties by index).
    threshold : float
    alpha : float
    rule : str
        ``"holm"`` (family-wise error rate at most ``alpha``) or ``"posterior"``
        (posterior probability of exceeding the threshold above ``1 - alpha``).
    p_values : numpy.ndarray or None
        Per item (length ``d``): one-sided p-values (``holm``).
    adjusted_p_values : numpy.ndarray or None
        Holm-adjusted p-values; an item is declared iff its value is ``<= alpha``.
    probabilities : numpy.ndarray or None
        Per item: posterior probability that :math:`f_v > t` (``posterior``).
    """

    indices: np.ndarray
    threshold: float
    alpha: float
    rule: str
    p_values: np.ndarray | None = None
    adjusted_p_values: np.ndarray | None = None
    probabilities: np.ndarray | None = None

    def __len__(self) -> int:
        """Return the number of declared items."""
        return int(self.indices.size)


def _exceed_probability(uncertainty: Uncertainty, threshold: float) -> np.ndarray:
    hits = None
    for start in range(0, uncertainty.n_draws, DRAW_CHUNK):
        stop = min(start + DRAW_CHUNK, uncertainty.n_draws)
        chunk = (uncertainty.sample(start, stop) > threshold).sum(axis=0)
        hits = chunk if hits is None else hits + chunk
    assert hits is not None, "an Uncertainty has at least one draw"
    return hits / uncertainty.n_draws


def estimate_heavy_hitters(estimate: Estimate, threshold, alpha=0.05) -> HeavyHitters:
    """Implement :meth:`bayesldp.Estimate.heavy_hitters` (see there).

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about. With posterior draws the items whose posterior
        probability of exceeding ``threshold`` is above ``1 - alpha``; otherwise Holm's
        procedure on the raw estimates' one-sided p-values.
    threshold : float
        In (0, 1].
    alpha : float, default 0.05
        In (0, 1).

    Returns
    -------
    HeavyHitters
        The chosen items, strongest first (ties by index).
    """
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0, strict_minimum=True)
    alpha = check_float(alpha, "alpha", minimum=0.0, maximum=1.0, strict_minimum=True,
                        strict_maximum=True)  # fmt: skip
    unc = estimate.uncertainty
    if unc is not None and not isinstance(unc, ParametricBootstrap):
        prob = _exceed_probability(unc, threshold)
        chosen = np.flatnonzero(prob > 1 - alpha)
        chosen = chosen[np.lexsort((chosen, -prob[chosen]))]
        return HeavyHitters(chosen, threshold, alpha, "posterior", probabilities=prob)
    p, _ = item_p_values(estimate.measurement, threshold)
    rejected, adjusted = holm(p, alpha)
    chosen = np.flatnonzero(rejected)
    chosen = chosen[np.lexsort((chosen, p[chosen]))]
    return HeavyHitters(chosen, threshold, alpha, "holm", p_values=p, adjusted_p_values=adjusted)


def top_k_probability(uncertainty: Uncertainty, k: int, clip: bool = False) -> np.ndarray:
    """For each item, the share of draws in which it is among the ``k`` largest.

    Ties within a draw are broken by index, so every draw has exactly ``k`` items in
    its top ``k`` and the result sums to ``k``. ``clip`` sets negative draws to 0
    first (``post-pos``, whose answers are clipped).

    Parameters
    ----------
    uncertainty : Uncertainty
        The draws, read chunk by chunk.
    k : int
        In ``[1, d]``.
    clip : bool, default False
        Set negative draws to 0 before ranking.

    Returns
    -------
    numpy.ndarray
        Length ``d``, values in [0, 1].
    """
    hits = None
    d = None
    for start in range(0, uncertainty.n_draws, DRAW_CHUNK):
        stop = min(start + DRAW_CHUNK, uncertainty.n_draws)
        draws = np.asarray(uncertainty.sample(start, stop), dtype=np.float64)
        if clip:
            draws = np.maximum(draws, 0.0)
        if d is None:
            d = draws.shape[1]
            k = check_k(k, d)
            hits = np.zeros(d)
        assert hits is not None
        top = np.argsort(-draws, axis=1, kind="stable")[:, :k]
        hits += np.bincount(top.ravel(), minlength=d)
    assert hits is not None, "an Uncertainty has at least one draw"
    return hits / uncertainty.n_draws


def estimate_top_k_probability(estimate: Estimate, k: int) -> np.ndarray:
    """Implement :meth:`bayesldp.Estimate.top_k_probability` (see there).

    From the estimate's own draws when it has them, else from its parametric bootstrap
    (:meth:`Estimate.bootstrap` with its defaults, cached on the estimate).

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about; ``post-pos`` draws are clipped at 0 first.
    k : int
        In ``[1, d]``.

    Returns
    -------
    numpy.ndarray
        Per-item probability of being among the ``k`` largest; sums to ``k``.
    """
    k = check_k(k, estimate.domain_size)
    unc = estimate.uncertainty
    if unc is None or isinstance(unc, ParametricBootstrap):
        unc = estimate.bootstrap()
    return top_k_probability(unc, k, clip=estimate.query_basis is not None)
