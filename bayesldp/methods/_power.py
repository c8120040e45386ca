r"""Power and PowerNS (Calibrate, Jia and Gong 2019): posterior means under a power-law prior.

.. math::

    P(x) \propto x^{-s},\; x = 1..n; \qquad
    n\tilde f_v \mid x \sim \mathcal N(x, (n\sigma)^2); \qquad
    f'_v = \mathbb E[x \mid n \tilde f_v] / n .

The posterior mean is computed by :mod:`bayesldp.methods._calibrate`. Rows with
different exponents (a fitted ``s`` per bootstrap replicate) share a few exact grids
in ``s`` and are interpolated between them (:func:`power_rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp._validation import check_choice, check_float
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods._calibrate import (
    S_LIMIT,
    S_MAX,
    PosteriorGrid,
    fit_exponent_mean,
    fit_exponent_mle,
    lagrange_basis,
    posterior_mean,
)
from bayesldp.methods._rows import MeasurementRows, estimate_of
from bayesldp.methods._simplex import project_rows

__all__ = ["POWER_S_TOL", "power", "power_ns", "power_ns_rows", "power_rows"]

#: Largest error (log units) accepted when interpolating the posterior mean in ``s``.
POWER_S_TOL = 1e-5


def _lobatto_nodes(lo: float, hi: float, k: int) -> np.ndarray:
    """Chebyshev-Lobatto nodes on ``[lo, hi]``: those of ``k`` are among those of ``2k - 1``."""
    j = np.arange(k)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(j * np.pi / (k - 1))


def _interpolated_means(
    y_all: np.ndarray, exponents: np.ndarray, sigma_c: float, n: int, max_nodes: int = 9
) -> np.ndarray:
    r"""Posterior mean count of every entry, each row with its own exponent.

    The log posterior mean :math:`\log g(y; s)` is analytic in ``s``. It is computed
    exactly (:class:`~bayesldp.methods._calibrate.PosteriorGrid`, one per node) at
    Chebyshev-Lobatto nodes spanning the rows' exponents and interpolated in ``s``; the
    nodes are doubled (3, 5, 9; 1 when all exponents are equal) until two successive
    interpolants agree to :data:`POWER_S_TOL` in log units at every entry, and the finer
    one is returned. If ``max_nodes`` do not reach it (exponents far apart, e.g. one at
    the search bound), the rows are split (at a gap wider than a quarter of the range,
    else in halves) and each group is treated the same way.
    """
    out = np.empty_like(y_all)

    def solve(rows: np.ndarray) -> None:
        y, ex = y_all[rows], exponents[rows]
        lo, hi = float(y.min()), float(y.max())
        s_lo, s_hi = float(ex.min()), float(ex.max())

        def log_mean(s: float) -> np.ndarray:
            return PosteriorGrid(s, sigma_c, n, lo, hi).log_ratio(y)

        if s_hi - s_lo <= 1e-12 * max(1.0, s_hi):
            out[rows] = np.exp(log_mean(s_lo))
            return
        exact: dict[float, np.ndarray] = {}
        previous, k = None, 3
        while k <= max_nodes:
            nodes = _lobatto_nodes(s_lo, s_hi, k)
            weights = lagrange_basis(nodes[None, :], ex)
            current = np.zeros_like(y)
            for j, s in enumerate(nodes):
                key = round(float(s), 14)
                if key not in exact:
                    exact[key] = log_mean(float(s))
                current += weights[:, j : j + 1] * exact[key]
            if previous is not None and np.max(np.abs(current - previous)) <= POWER_S_TOL:
                out[rows] = np.exp(current)
                return
            previous, k = current, 2 * k - 1
        order = np.argsort(ex, kind="stable")
        gaps = np.diff(ex[order])
        # Split off a cluster at a wide gap (an exponent at the search bound), otherwise
        # in halves.
        cut = int(np.argmax(gaps)) + 1 if gaps.max() > (s_hi - s_lo) / 4 else rows.size // 2
        solve(rows[order[:cut]])
        solve(rows[order[cut:]])

    solve(np.arange(y_all.shape[0]))
    return out


def power_rows(
    rows: MeasurementRows, *, s: float | None = None, fit: str = "mean", s_max: float = S_MAX
) -> tuple[np.ndarray, dict[str, Any]]:
    """Power's rows: Calibrate's posterior mean of every row, each with its own exponent.

    The exponent is given or fitted per row. One row, and rows whose exponents are
    fitted by maximum likelihood (a fit that costs far more than the evaluation), are
    evaluated exactly at their own exponent
    (:func:`~bayesldp.methods._calibrate.posterior_mean`); several rows otherwise share
    exact grids at a few exponents and are interpolated between them in ``s``, to
    :data:`POWER_S_TOL` in log units.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements; their noise must be positive (``p - q < 1``).
    s, fit, s_max
        As in :func:`power`.

    Raises
    ------
    ValueError
        A noiseless oracle, or a bad option.
    """
    fit = check_choice(fit, ("mean", "mle"), "fit")
    s_max = check_float(s_max, "s_max", minimum=0.0, maximum=S_LIMIT, strict_minimum=True)
    m = rows.measurement
    n = m.n
    sigma_c = m.sigma * n
    if not sigma_c > 0:
        raise ValueError(
            "power needs a noisy oracle: this measurement has no noise (sigma = 0, e.g. "
            "p = 1 and q = 0), so its estimates are exact counts and the posterior mean "
            "under Calibrate's prior is not defined for items at 0"
        )
    y = rows.estimates * n
    notes = np.full(rows.size, "", dtype=object)
    if s is not None:
        how = "given"
        exponents = np.full(rows.size, check_float(s, "s", minimum=0.0, maximum=S_LIMIT))
    elif fit == "mean":
        how = fit
        exponents = np.empty(rows.size)
        for i, y_mean in enumerate(y.mean(axis=1)):
            exponents[i], notes[i] = fit_exponent_mean(float(y_mean), n, s_max=s_max)
    else:
        how = fit
        exponents = np.array([fit_exponent_mle(row, sigma_c, n, s_max=s_max) for row in y])
    if rows.size == 1 or (fit == "mle" and s is None):
        means = np.stack(
            [posterior_mean(row, float(e), sigma_c, n) for row, e in zip(y, exponents, strict=True)]
        )
    else:
        means = _interpolated_means(y, exponents, sigma_c, n)
    return means / n, {"s": exponents, "fit": how, "warning": notes}


def power_ns_rows(
    rows: MeasurementRows, *, s: float | None = None, fit: str = "mean", s_max: float = S_MAX
) -> tuple[np.ndarray, dict[str, Any]]:
    """PowerNS's rows: Norm-Sub (the projection onto the simplex) of Power's rows.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    s, fit, s_max
        As in :func:`power`.
    """
    f, info = power_rows(rows, s=s, fit=fit, s_max=s_max)
    projected, theta = project_rows(f, 1.0)
    return projected, {**info, "delta": -theta}


def power(
    m: Measurement, *, s: float | None = None, fit: str = "mean", s_max: float = S_MAX
) -> Estimate:
    r"""Power (Calibrate): posterior mean under a power-law prior on counts.

    .. math::

        P(x) \propto x^{-s},\; x = 1..n; \qquad
        n\tilde f_v \mid x \sim \mathcal N(x, (n\sigma)^2); \qquad
        f'_v = \mathbb E[x \mid n \tilde f_v] / n .

    Parameters
    ----------
    m : Measurement
        The oracle output; its noise must be positive (``p - q < 1``).
    s : float, optional
        The exponent, in ``[0, S_LIMIT]`` (beyond it the prior is a point mass at count
        1 to double precision); fitted when omitted.
    fit : {"mean", "mle"}
        How to fit ``s``: match the prior's mean count to the observed mean
        (Calibrate's mean-variance method, as the authors' code does), or maximise the
        marginal likelihood (Calibrate's Eq. 16).
    s_max : float
        Upper end of the exponent's search interval, in ``(0, S_LIMIT]``.

    Returns
    -------
    Estimate
        ``info["s"]`` is the exponent used, ``info["fit"]`` how it was chosen. A fitted
        exponent clipped to its search interval comes with a RuntimeWarning.
    """
    return estimate_of(power_rows, m, "power", s=s, fit=fit, s_max=s_max)


def power_ns(
    m: Measurement, *, s: float | None = None, fit: str = "mean", s_max: float = S_MAX
) -> Estimate:
    """PowerNS (NDSS version): Norm-Sub applied to the output of Power.

    Parameters
    ----------
    m : Measurement
        The oracle output; its noise must be positive (``p - q < 1``).
    s : float, optional
        The exponent of the power-law prior; fitted when omitted (see :func:`power`).
    fit : {"mean", "mle"}, default "mean"
        How to fit ``s``, as in :func:`power`.
    s_max : float, default ``S_MAX``
        Upper end of the exponent's search interval, in ``(0, S_LIMIT]``.

    Returns
    -------
    Estimate
        ``info`` records ``s``, ``fit`` and the Norm-Sub shift ``delta``.
    """
    return estimate_of(power_ns_rows, m, "power-ns", s=s, fit=fit, s_max=s_max)
