"""A consistent Bayesian frequency oracle: the power-law prior conditioned on the total.

The counts of ``d`` items sum to ``n``. Conditioning the zero-inflated power-law prior
of :func:`bayesldp.models.power.bayes_power_zi` on that total puts the posterior on the
(scaled) simplex, so its mean is non-negative and sums to 1 without a Norm-Sub step.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
from scipy import optimize

from bayesldp import power as P
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.models.power import item_moments, representative_draws, sample_counts, sample_exponent

logger = logging.getLogger(__name__)


def _tilt(lik, s: float, pi: float, grid: P.PosteriorGrid, span: float):
    """Find the shift whose tilted item means sum to ``n``; return (shift, w1, mean, var)."""
    n = lik.n

    def excess(shift: float) -> float:
        w1, mean, _ = item_moments(lik, s, pi, shift, grid)
        return float((w1 * mean).sum() - n)

    lo, hi = -span, span
    if excess(lo) > 0 or excess(hi) < 0:
        raise RuntimeError(
            f"no tilt within +-{span / lik.sigma_c:.0f} sigma makes the expected counts sum "
            "to n; the power-law prior does not fit these data"
        )
    shift = optimize.brentq(excess, lo, hi, xtol=1e-9 * lik.sigma_c)
    w1, mean, var = item_moments(lik, s, pi, shift, grid)
    return shift, w1, mean, var


def bayes_consistent(
    m: Measurement,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    s_bounds: tuple[float, float] = (0.5, 3.5),
    zero_inflated: bool = True,
    random_seed=None,
    progressbar: bool = False,
    exponent_points: int = 8,
    n_draws: int = 1000,
    tilt_span: float = 12.0,
) -> Estimate:
    """Posterior mean of frequencies under a power-law prior conditioned on the total.

    .. math::

        s \\sim \\mathrm{Uniform}(s_{lo}, s_{hi}), \\quad \\pi \\sim \\mathrm{Beta}(1, 1),
        \\quad x_v \\overset{iid}{\\sim} \\pi\\,\\delta_0 + (1 - \\pi)\\,
        \\mathrm{Power}(s)\\ \\text{on } 1..n, \\\\
        n\\tilde f_v \\mid x_v \\sim \\mathcal N(x_v, (n\\sigma)^2), \\qquad
        \\text{conditioned on } \\textstyle\\sum_v x_v = n,
        \\qquad f'_v = \\mathbb E[x_v \\mid \\tilde f, \\textstyle\\sum x = n] / n .

    ``s`` and ``pi`` are sampled with NUTS (as in ``bayes-power-zi``). Conditioning on the
    total is done by exponential tilting (the saddle-point / Gibbs-conditioning
    approximation, accurate for large ``d``): the prior is multiplied by
    :math:`e^{\\lambda x}` with :math:`\\lambda` chosen so the item posterior means sum
    to ``n``. For a Gaussian likelihood that tilt is a shift of every observation by
    :math:`\\lambda (n\\sigma)^2`, so each item keeps Calibrate's exact posterior, evaluated
    at a shifted point. Every posterior draw is normalised onto the simplex.

    Parameters
    ----------
    draws, tune, chains, s_bounds, random_seed, progressbar, exponent_points, n_draws
        As in :func:`bayesldp.models.power.bayes_power`.
    zero_inflated : bool, default True
        Include the point mass at zero (``False``: Calibrate's prior on ``1..n``).
    tilt_span : float
        Search the tilt's shift within this many standard deviations.

    Returns
    -------
    Estimate
        Non-negative frequencies summing to 1, posterior draws on the simplex (for
        :meth:`Estimate.interval`), the InferenceData, diagnostics and the tilts in
        ``info``.
    """
    post, rng = sample_exponent(
        m, zero_inflated=zero_inflated, s_bounds=s_bounds, draws=draws, tune=tune,
        chains=chains, random_seed=random_seed, progressbar=progressbar,
    )  # fmt: skip
    start = time.perf_counter()
    lik = post.lik
    span = tilt_span * lik.sigma_c
    per_point = -(-n_draws // exponent_points)
    means, samples, shifts = [], [], []
    for i in representative_draws(post, exponent_points):
        s, pi = float(post.s[i]), float(post.pi[i])
        grid = P.PosteriorGrid(s, lik.sigma_c, lik.n, float(lik.y.min()) - span,
                               float(lik.y.max()) + span)  # fmt: skip
        shift, w1, mean, var = _tilt(lik, s, pi, grid, span)
        shifts.append(shift)
        expected = w1 * mean
        means.append(expected / expected.sum())
        x = sample_counts(w1, mean, var, per_point, rng)
        totals = x.sum(axis=1, keepdims=True)
        if np.any(totals <= 0):
            warnings.warn("a posterior draw had no users; it was dropped", RuntimeWarning,
                          stacklevel=2)  # fmt: skip
            keep = totals[:, 0] > 0
            x, totals = x[keep], totals[keep]
        samples.append(x / totals)
    info = dict(post.info)
    info["tilt_shift_sigma"] = [sh / lik.sigma_c for sh in shifts]
    info["seconds_posterior_means"] = time.perf_counter() - start
    f = np.mean(means, axis=0)
    f /= f.sum()
    logger.debug("bayes-consistent: tilts %s sigma", info["tilt_shift_sigma"])
    return Estimate(
        frequencies=f,
        method="bayes-consistent",
        measurement=m,
        info=info,
        draws=np.concatenate(samples)[:n_draws],
        inference_data=post.idata,
    )


__all__ = ["bayes_consistent"]
