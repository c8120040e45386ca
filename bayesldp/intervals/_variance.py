r"""Exact variance of a subset sum of the raw estimates, and the normal interval built on it.

The raw estimate of a set's frequency, :math:`\sum_{v \in S} \tilde f_v`, is unbiased;
its variance, covariances between items included, is computed exactly from the
oracle's design (:func:`subset_count_variances`). The normal interval is that estimate
plus or minus a normal quantile times its standard deviation at plug-in frequencies:
the default interval of every non-Bayesian method.
"""

from __future__ import annotations

import math

import numpy as np

from bayesldp._validation import check_estimates, check_indices, check_probability
from bayesldp.intervals._interval import Interval
from bayesldp.measurement import Measurement
from bayesldp.oracles import FrequencyOracle, oracle_class

__all__ = [
    "as_masks",
    "normal_bounds",
    "normal_interval",
    "normal_quantile",
    "subset_count_variance",
    "subset_count_variances",
    "subset_variance",
]


def as_masks(sets, d: int, name: str = "sets") -> np.ndarray:
    """Return a ``(Q, d)`` boolean array from a 2-D mask array or one set (indices or a mask).

    Parameters
    ----------
    sets : array_like
        A ``(Q, d)`` boolean array, or one set (indices or a length-``d`` mask).
    d : int
        The domain size.
    name : str, default "sets"
        The argument's name, for error messages.
    """
    arr = np.asarray(sets)
    if arr.dtype == bool and arr.ndim == 2:
        if arr.shape[1] != d:
            raise ValueError(f"{name} as masks must have shape (Q, {d}), got {arr.shape}")
        return arr
    mask = np.zeros((1, d), dtype=bool)
    mask[0, check_indices(sets, d, name)] = True
    return mask


def subset_count_variances(m: Measurement, sets, frequencies=None) -> np.ndarray:
    r"""Exact variance of the summed support counts :math:`C_S = \sum_{v \in S} c_v`.

    Each user contributes :math:`N_i`, the number of items of ``S`` their report
    supports; users are independent given their values, so
    :math:`\operatorname{Var} C_S = \sum_u x_u \operatorname{Var}(N \mid u)` with
    :math:`x_u = n f_u` users holding ``u``. With :math:`a = |S|` and
    :math:`x_S = \sum_{u \in S} x_u`:

    .. math::

        \text{OUE, SUE, OLH:}\quad & a\,n\,q(1-q) + x_S\,(p-q)(1-p-q)
            \quad\text{(supports independent across items)}\\
        \text{GRR:}\quad & x_S\,\pi_1(1-\pi_1) + (n - x_S)\,\pi_0(1-\pi_0),
            \quad \pi_1 = p + (a-1)q,\ \pi_0 = a q\\
        \text{SS:}\quad & x_S V_1 + (n - x_S) V_0\\
        \text{HR:}\quad & \tfrac14 \sum_u x_u \left(a + \beta M_u - \beta^2
            [u \in S]\right),\quad \beta = 2p - 1.

    The oracle class computes them (:meth:`bayesldp.FrequencyOracle.count_sum_variances`,
    asked through :func:`bayesldp.oracles.oracle_class`; the private overrides of
    :class:`~bayesldp.SS` and :class:`~bayesldp.HR` explain :math:`V_0, V_1` and
    :math:`M_u`). OLH's independence holds for an ideal hash; the universal family
    :class:`~bayesldp.OLH` draws from correlates items whose offsets from the user's
    value are in small integer ratios, which averages out over random sets but not over
    structured ones. An oracle that does not override the formula (a registered one of
    your own, or a Measurement's ``"custom"``) is treated as having independent
    supports.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    sets : array_like
        One set (indices or a length-``d`` mask) or a ``(Q, d)`` boolean array of sets.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance. By default a plug-in:
        :math:`x_S = n\,\mathrm{clip}(\sum_S \tilde f, 0, 1)` and, for HR's
        cross terms, :math:`x_u = n\,\mathrm{clip}(\tilde f_u, 0, 1)`.

    Returns
    -------
    numpy.ndarray
        One variance per set.
    """
    d = m.domain_size
    masks = as_masks(sets, d)
    weights = masks.astype(np.float64)
    if frequencies is None:
        f = np.clip(m.estimates, 0.0, 1.0)
        f_set = np.clip(weights @ m.estimates, 0.0, 1.0)
    else:
        f = check_estimates(frequencies, "frequencies")
        if f.shape != (d,):
            raise ValueError(f"frequencies must have shape ({d},), got {f.shape}")
        f_set = weights @ f
    x_set = m.n * f_set
    return oracle_class(m.oracle, FrequencyOracle).count_sum_variances(m, masks, f, x_set)


def subset_count_variance(m: Measurement, indices, frequencies=None) -> float:
    """Exact variance of the summed support counts of one set (:func:`subset_count_variances`).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int or bool mask
        Items in the set.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance; by default the plug-in of
        :func:`subset_count_variances`.
    """
    idx = check_indices(indices, m.domain_size)
    mask = np.zeros(m.domain_size, dtype=bool)
    mask[idx] = True
    return float(subset_count_variances(m, mask[None, :], frequencies)[0])


def subset_variance(m: Measurement, indices, frequencies=None) -> float:
    r"""Exact variance of the raw estimate of a set's frequency.

    That is :math:`\sum_{v \in S} \tilde f_v`, whose variance is
    :math:`\operatorname{Var} C_S / (n (p-q))^2` (see :func:`subset_count_variances`).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int or bool mask
        The items of the set.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance (a plug-in by default, as in
        :func:`subset_count_variances`).

    Returns
    -------
    float
        The variance.
    """
    return subset_count_variance(m, indices, frequencies) / (m.n * (m.p - m.q)) ** 2


def normal_quantile(prob: float) -> float:
    """Return ``z`` with ``P(|Z| <= z) = prob`` for a standard normal ``Z``.

    Parameters
    ----------
    prob : float
        Nominal coverage, in (0, 1).
    """
    from scipy.special import ndtri

    return float(ndtri((1 + prob) / 2))


def normal_bounds(
    m: Measurement, masks: np.ndarray, prob: float, clip_at_zero: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the normal intervals of many sets: ``(lo, hi, center)``, not clipped to [0, 1].

    Parameters
    ----------
    m : Measurement
        The oracle output.
    masks : numpy.ndarray of bool
        The ``Q`` sets, shape ``(Q, d)``.
    prob : float
        Nominal coverage, in (0, 1) (not checked).
    clip_at_zero : bool, default False
        Clip both ends at 0 (the ``post-pos`` query rule).
    """
    center = masks.astype(np.float64) @ m.estimates
    var = subset_count_variances(m, masks) / (m.n * (m.p - m.q)) ** 2
    half = normal_quantile(prob) * np.sqrt(np.maximum(var, 0.0))
    lo, hi = center - half, center + half
    if clip_at_zero:
        lo, hi = np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    return lo, hi, center


def normal_interval(
    m: Measurement, indices, prob: float = 0.9, *, clip_at_zero: bool = False
) -> Interval:
    r"""Return the normal interval of a set's frequency from the raw estimates (plug-in variance).

    :math:`\sum_S \tilde f \pm z_{(1+prob)/2} \sqrt{\operatorname{Var}}`,
    intersected with ``[0, 1]``; ``clip_at_zero`` clips both ends at 0 first (the
    ``post-pos`` query rule, a monotone map, so coverage is unchanged).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int or bool mask
        Items in the set.
    prob : float, default 0.9
        Nominal coverage, in (0, 1).
    clip_at_zero : bool, default False
        Clip both ends at 0 before intersecting with ``[0, 1]``.

    Returns
    -------
    Interval
        Of kind ``"normal"``, centred on the raw set estimate.
    """
    prob = check_probability(prob, "prob")
    idx = check_indices(indices, m.domain_size)
    center = float(m.estimates[idx].sum())
    half = normal_quantile(prob) * math.sqrt(max(subset_variance(m, idx), 0.0))
    lo, hi = center - half, center + half
    if clip_at_zero:
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    return Interval(min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0), "normal", prob, center)
