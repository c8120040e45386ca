"""The normalisation methods of Wang et al.: Norm, Norm-Mul, Norm-Sub, Norm-Cut, Norm-Hyb, CLS.

Each method is a row function (vectorised over the rows of a
:class:`~bayesldp.methods._rows.MeasurementRows`) and the public function that runs it
on one measurement. Norm-Sub and CLS solve the same problem, the Euclidean projection
onto the probability simplex (:func:`bayesldp.methods._simplex.project_rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods._baseline import threshold
from bayesldp.methods._rows import MeasurementRows, estimate_of
from bayesldp.methods._simplex import project_rows

__all__ = [
    "cls",
    "norm",
    "norm_cut",
    "norm_cut_rows",
    "norm_hyb",
    "norm_hyb_rows",
    "norm_mul",
    "norm_mul_rows",
    "norm_rows",
    "norm_sub",
    "rounding_tolerance",
    "simplex_rows",
]


def rounding_tolerance(size: int) -> float:
    """Return a bound on the rounding error of a sum of ``size`` numbers of magnitude <= 1.

    ``size * 4 * machine epsilon``: comparisons of such sums with 1 (``norm-cut``) use
    it so that vectors summing to 1 in exact arithmetic count as summing to 1.

    Parameters
    ----------
    size : int
        Number of terms summed (values below 1 count as 1).
    """
    return 4.0 * float(np.finfo(np.float64).eps) * max(1, size)


def norm_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Norm's rows: :math:`\delta = (1 - \sum \tilde f)/d` added to every estimate.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    f = rows.estimates
    delta = (1.0 - f.sum(axis=1)) / f.shape[1]
    return f + delta[:, None], {"delta": delta}


def norm_mul_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Norm-Mul's rows: negatives clipped, then scaled by :math:`\gamma` to sum 1.

    A row with no positive estimate has nothing to scale: it is the uniform
    distribution, with ``gamma`` None and a ``warning``.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    pos = np.maximum(rows.estimates, 0.0)
    total = pos.sum(axis=1)
    empty = total <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pos / total[:, None]
        gamma = np.where(empty, None, 1.0 / total)
    out[empty] = 1.0 / out.shape[1]
    message = "no positive estimate to scale; returning the uniform distribution"
    return out, {"gamma": gamma, "warning": np.where(empty, message, "")}


def simplex_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Norm-Sub's and CLS's rows: the projection :math:`\max(\tilde f + \delta, 0)` summing to 1.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    f, theta = project_rows(rows.estimates, 1.0)
    return f, {"delta": -theta}


def norm_cut_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Norm-Cut's rows: the largest estimates whose sum stays within 1, the rest 0.

    Rows whose positive estimates sum to at most 1 are only clipped (``theta`` 0);
    otherwise :math:`\theta` is the smallest positive value with
    :math:`\sum_{\tilde f_v \ge \theta} \tilde f_v \le 1` (``inf`` when even the largest
    estimate exceeds 1).

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    f = rows.estimates
    count, d = f.shape
    pos = np.maximum(f, 0.0)
    # "A sum <= 1" allows for the rounding of summing d floats: estimates whose exact
    # values sum to 1 (GRR's always do) must not lose an item to an excess of 1e-16.
    limit = 1.0 + rounding_tolerance(d)
    s = -np.sort(-pos, axis=1)  # positives largest first, then zeros
    csum = np.cumsum(s, axis=1)
    # Prefix lengths at a boundary between distinct values: items tied at the cut are
    # kept or dropped together.
    boundary = np.concatenate([s[:, :-1] > s[:, 1:], np.ones((count, 1), dtype=bool)], axis=1)
    valid = boundary & (csum <= limit) & (s > 0)
    has = valid.any(axis=1)
    k = d - 1 - np.argmax(valid[:, ::-1], axis=1)
    theta = np.where(has, s[np.arange(count), k], np.inf)
    only_clip = pos.sum(axis=1) <= limit
    out = np.where(only_clip[:, None], pos, np.where(f >= theta[:, None], f, 0.0))
    return out, {"theta": np.where(only_clip, 0.0, theta)}


def norm_hyb_rows(
    rows: MeasurementRows, *, alpha: float = 2.0
) -> tuple[np.ndarray, dict[str, Any]]:
    """Norm-Hyb's rows: estimates above ``T`` kept, the rest projected to the remaining total.

    ``T`` is Base-Cut's threshold (:func:`~bayesldp.methods._baseline.threshold`). If
    the kept estimates sum to more than 1, only the largest ``k`` are kept, ``k`` the
    first count whose running sum (largest first) reaches 1. A row whose every item is
    kept has nothing to absorb the difference: the whole row is projected instead
    (``fallback`` ``"norm-sub"``).

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    alpha : float, default 2.0
        Expected number of false positives of the threshold.
    """
    f = rows.estimates
    d = f.shape[1]
    t = threshold(rows.measurement, alpha)
    kept = f > t
    over = np.where(kept, f, 0.0).sum(axis=1) > 1.0
    if over.any():
        sub = f[over]
        order = np.argsort(-sub, axis=1, kind="stable")
        csum = np.cumsum(np.take_along_axis(sub, order, axis=1), axis=1)
        # The first k whose running sum reaches 1 (the running sum is not monotone once
        # it passes the negative estimates, so this is not a count of sums below 1).
        reach = csum >= 1.0
        k = np.where(reach.any(axis=1), np.argmax(reach, axis=1), d)
        top = np.zeros_like(sub, dtype=bool)
        np.put_along_axis(top, order, np.arange(d)[None, :] < k[:, None], axis=1)
        kept[over] = top
    rest = ~kept
    fallback = ~rest.any(axis=1)
    kept_sum = np.where(kept, f, 0.0).sum(axis=1)
    out = np.empty_like(f)
    theta = np.empty(f.shape[0])
    normal = ~fallback
    if normal.any():
        projected, theta[normal] = project_rows(
            f[normal], np.maximum(1.0 - kept_sum[normal], 0.0), active=rest[normal]
        )
        out[normal] = np.where(kept[normal], f[normal], projected)
    if fallback.any():
        out[fallback], theta[fallback] = project_rows(f[fallback], 1.0)
    fallback_names = np.full(f.shape[0], None, dtype=object)
    fallback_names[fallback] = "norm-sub"
    info = {
        "threshold": t,
        "alpha": alpha,
        "kept": kept.sum(axis=1),
        "delta": -theta,
        "fallback": fallback_names,
    }
    return out, info


def norm(m: Measurement) -> Estimate:
    r"""Norm: add :math:`\delta = (1 - \sum \tilde f)/d` to every estimate.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["delta"]`` is the shift added (estimates may stay negative).
    """
    return estimate_of(norm_rows, m, "norm")


def norm_mul(m: Measurement) -> Estimate:
    r"""Norm-Mul: clip negatives, then scale by :math:`\gamma` so the sum is 1.

    With no positive estimate there is nothing to scale; the uniform distribution
    is returned with a :class:`RuntimeWarning`.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["gamma"]`` is the scale factor (None when the uniform is returned).
    """
    return estimate_of(norm_mul_rows, m, "norm-mul")


def norm_sub(m: Measurement) -> Estimate:
    r"""Norm-Sub: :math:`f'_v = \max(\tilde f_v + \delta, 0)` with a sum of 1.

    Equal to the Euclidean projection onto the probability simplex (CLS).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["delta"]`` is the shift :math:`\delta`.
    """
    return estimate_of(simplex_rows, m, "norm-sub")


def cls(m: Measurement) -> Estimate:
    r"""CLS: :math:`\arg\min \|f - \tilde f\|_2^2` s.t. :math:`f \ge 0, \sum f = 1`.

    Solved in closed form by sorting; the same problem as Norm-Sub (the long paper,
    Section 4), solved by the same code.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["delta"]`` is the shift, as Norm-Sub's.
    """
    return estimate_of(simplex_rows, m, "cls")


def norm_cut(m: Measurement) -> Estimate:
    r"""Norm-Cut: keep the largest estimates whose sum stays within 1, zero the rest.

    The long paper's definition: when :math:`\sum_v \max(\tilde f_v, 0) \le 1`, only
    negatives are set to 0 (the sum may stay below 1). Otherwise :math:`\theta` is the
    smallest positive value with :math:`\sum_{\tilde f_v \ge \theta} \tilde f_v \le 1`; items
    below :math:`\theta` are set to 0 and the rest kept unchanged, without rescaling.
    Items tied at the boundary are kept or dropped together, so the sum can be
    below 1; if even the single largest estimate exceeds 1, every item is set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["theta"]`` is the cut (0 when only negatives were zeroed, ``inf`` when
        every item was).
    """
    return estimate_of(norm_cut_rows, m, "norm-cut")


def norm_hyb(m: Measurement, *, alpha: float = 2.0) -> Estimate:
    """Norm-Hyb: keep estimates above ``T`` unchanged, Norm-Sub the rest to total 1.

    ``T`` is Base-Cut's threshold. If the kept estimates sum to more than 1, only the
    largest ``k`` are kept, ``k`` the first count whose running sum reaches 1. When every
    item is kept and their sum is not 1, no item is left to absorb the difference and
    Norm-Sub is applied to the whole vector (recorded in ``info["fallback"]``).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    alpha : float, default 2.0
        Expected number of false positives of the threshold (Base-Cut's), positive.

    Returns
    -------
    Estimate
        ``info`` records the ``threshold``, ``alpha``, the number ``kept``, the shift
        ``delta`` of the projected items and ``fallback`` (``"norm-sub"`` or None).
    """
    return estimate_of(norm_hyb_rows, m, "norm-hyb", alpha=alpha)
