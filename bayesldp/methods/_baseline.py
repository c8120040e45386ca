"""The baselines of Wang et al.: Base, Base-Pos, Post-Pos and Base-Cut.

Each method is a row function (vectorised over the rows of a
:class:`~bayesldp.methods._rows.MeasurementRows`) and the public function that runs it
on one measurement.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp._validation import check_float
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods._rows import MeasurementRows, estimate_of

__all__ = [
    "base",
    "base_cut",
    "base_cut_rows",
    "base_pos",
    "base_pos_rows",
    "base_rows",
    "post_pos",
    "threshold",
]


def threshold(m: Measurement, alpha: float) -> float:
    r"""Return the significance threshold :math:`T = \Phi^{-1}(1 - \alpha/d)\,\sigma` (Eq. 9).

    When :math:`\alpha/d \ge 1/2` the quantile is not positive and ``T`` is clamped to
    0, so that cutting below ``T`` still yields non-negative estimates.

    Parameters
    ----------
    m : Measurement
        Raw oracle output; gives ``d`` and the noise ``sigma``.
    alpha : float
        Expected number of false positives over the ``d`` items, positive.
    """
    from scipy.special import ndtri  # the normal quantile; scipy.special loads on first use

    alpha = check_float(alpha, "alpha", minimum=0.0, strict_minimum=True)
    level = 1 - alpha / m.domain_size
    if level <= 0.5:
        return 0.0
    return float(ndtri(level) * m.sigma)


def base_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    """Base's rows: the raw estimates, unchanged (also Post-Pos's rows, its query basis).

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    return rows.estimates.copy(), {}


def base_pos_rows(rows: MeasurementRows) -> tuple[np.ndarray, dict[str, Any]]:
    """Base-Pos's rows: negative estimates set to 0.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    """
    return np.maximum(rows.estimates, 0.0), {}


def base_cut_rows(
    rows: MeasurementRows, *, alpha: float = 2.0
) -> tuple[np.ndarray, dict[str, Any]]:
    """Base-Cut's rows: estimates below the threshold (:func:`threshold`) set to 0.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    alpha : float, default 2.0
        Expected number of false positives of the threshold.
    """
    t = threshold(rows.measurement, alpha)
    f = rows.estimates
    return np.where(f >= t, f, 0.0), {"threshold": t, "alpha": alpha}


def base(m: Measurement) -> Estimate:
    """Return the unbiased oracle estimates, unchanged (Base).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        A copy of ``m.estimates``.
    """
    return estimate_of(base_rows, m, "base")


def base_pos(m: Measurement) -> Estimate:
    """Base-Pos: negative estimates set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
    """
    return estimate_of(base_pos_rows, m, "base-pos")


def post_pos(m: Measurement) -> Estimate:
    """Post-Pos: each *query result* that is negative is set to 0.

    Single-item answers equal Base-Pos; a subset query sums the raw estimates and
    clips the sum (see :meth:`Estimate.subset`). Its rows are :func:`base_rows`, the
    raw estimates its queries clip.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        Frequencies as Base-Pos; the raw estimates kept as its ``query_basis``.
    """
    raw = base_rows(MeasurementRows.of(m))[0][0]
    return Estimate(
        frequencies=np.maximum(raw, 0.0), method="post-pos", measurement=m, query_basis=raw
    )


def base_cut(m: Measurement, *, alpha: float = 2.0) -> Estimate:
    r"""Base-Cut: estimates below :math:`T = \Phi^{-1}(1-\alpha/d)\sigma` set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    alpha : float, default 2.0
        Expected number of false positives; the long paper uses 2, RAPPOR and
        Calibrate's "OUE-Zero" use 0.05.

    Returns
    -------
    Estimate
        ``info`` records the ``threshold`` and ``alpha``.
    """
    return estimate_of(base_cut_rows, m, "base-cut", alpha=alpha)
