r"""A consistent Bayesian frequency oracle: a shifted power-law prior conditioned on the total.

The counts of ``d`` items sum to ``n``. Conditioning a prior on the counts on that
total puts the posterior on the (scaled) simplex, so its mean is non-negative and sums
to 1 without a Norm-Sub step.

The prior is a shifted power law (a discrete Lomax law) on ``0..n``,
:math:`P(x) \propto (1 + x/c)^{-s}`: a power law in its tail, like Calibrate's, but
with a scale ``c`` below which it is flat. Calibrate's :math:`x^{-s}` on ``1..n`` puts
most of its mass on counts of a few users; with Zipf data the smallest counts are
tens of users, and the pure power law's unconditioned posterior means sum to less
than 1 (``bayes-power``). The scale lets the prior's low end move to where the data
are, and the known total is what tells the model where that is: the posterior of
``(s, c)`` includes the probability that the counts add up to ``n``.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from bayesldp._validation import check_bool, check_float, check_int, check_rng
from bayesldp.estimate import Estimate, Uncertainty
from bayesldp.measurement import Measurement
from bayesldp.models._counts import TILT_SPAN, log_prior_mass
from bayesldp.models._item_draws import ItemPosteriorDraws, ItemPosteriorTable, PointTables
from bayesldp.models._settings import SamplerSettings, resolve_settings
from bayesldp.models.consistent._exact_total import (
    ExactTotal,
    ExactTotalDraws,
    Problem,
    saddle_point,
)
from bayesldp.models.consistent._scale_model import (
    EXACT_EXPONENT_POINTS,
    EXPONENT_POINTS,
    ScalePosterior,
    sample_scale,
)

__all__ = ["bayes_consistent"]

logger = logging.getLogger(__name__)


def tilt(problem: Problem, s: float, c: float, span: float | None = None):
    """Condition one prior on the total by exponential tilting (the saddle point).

    Returns ``(shift, mean, var)``: the shift of every count estimate whose posterior
    means sum to ``n`` (the saddle point, ``_exact_total.saddle_point``), and the
    items' posterior means and variances there.

    Parameters
    ----------
    problem : bayesldp.models.consistent._exact_total.Problem
        The count estimates, noise and total.
    s, c : float
        The prior's exponent and scale.
    span : float, optional
        Search the shift within ``+-span`` counts; by default ``TILT_SPAN`` noise
        standard deviations.

    Raises
    ------
    RuntimeError
        No shift within the span makes the posterior means sum to ``n``.
    """
    span = TILT_SPAN * problem.sigma_c if span is None else float(span)
    mom = problem.moments(s, c, pad=span)
    y, n = problem.y, problem.n
    sad = saddle_point(problem, mom, span=span)
    shift = sad.shift
    if abs(shift) >= span:
        raise RuntimeError(
            f"no tilt within +-{span / problem.sigma_c:.0f} sigma makes the expected counts "
            "sum to n; the shifted power-law prior does not fit these data"
        )

    # polish on the items themselves (the saddle point sums over nodes): Newton steps,
    # d(sum of means)/d(shift) being the sum of variances over sigma_c^2
    mean, var = mom.mean(y + shift), mom.variance(y + shift)
    for _ in range(8):
        excess = float(mean.sum()) - n
        if abs(excess) <= 1e-10 * n:
            break
        step = -excess * problem.sigma_c**2 / float(var.sum())
        shift = float(np.clip(shift + step, -span, span))
        mean, var = mom.mean(y + shift), mom.variance(y + shift)
    return shift, mean, var


def _picks(post: ScalePosterior, points: int) -> np.ndarray:
    """Return indices of ``points`` draws evenly spread over the sorted draws of ``s``."""
    order = np.argsort(post.s, kind="stable")
    return order[((np.arange(points) + 0.5) * order.size / points).astype(int)]


def bayes_consistent(
    m: Measurement,
    *,
    settings: SamplerSettings | None = None,
    rng=None,
    s_bounds: tuple[float, float] = (0.5, 8.0),
    c_bounds: tuple[float, float] | None = None,
    exponent_points: int | None = None,
    n_draws: int = 1000,
    tilt_span: float = 12.0,
    exact: bool | None = None,
    **options,
) -> Estimate:
    r"""Posterior mean of frequencies under a shifted power-law prior conditioned on the total.

    .. math::

        s \sim \mathrm{Uniform}(s_{lo}, s_{hi}), \quad
        \log c \sim \mathrm{Uniform}(\log c_{lo}, \log c_{hi}), \quad
        P(x_v = k \mid s, c) \propto (1 + k/c)^{-s}, \ k = 0..n, \\
        n\tilde f_v \mid x_v \sim \mathcal N(x_v, (n\sigma)^2), \qquad
        \text{conditioned on } \textstyle\sum_v x_v = n,
        \qquad f'_v = \mathbb E[x_v \mid \tilde f, \textstyle\sum x = n] / n .

    Every count is summed out and only ``(s, log c)`` is sampled (NUTS), which is what
    makes the model fast at large ``d``; the composable layer
    (:func:`bayesldp.models.ldp_likelihood` with :func:`bayesldp.models.fit`) instead
    takes any PyMC prior over the frequency vector with the oracle's exact
    binomial/multinomial likelihood and samples the frequencies themselves, while this
    model approximates that likelihood by a Gaussian on each count estimate.

    The parameters' posterior is :math:`p(s, c \mid \tilde f, \sum x = n) \propto
    p(s, c) \prod_v p(\tilde f_v \mid s, c)\, P(\sum_v x_v = n \mid \tilde f, s,
    c)`: the event :math:`\sum x = n` is conditioned on together with the estimates.
    The last factor is exact on small problems (``d (n + 1) <=``
    :data:`bayesldp.models._counts.EXACT_WORK`: convolution of the item posteriors over
    every count) and otherwise the saddle-point approximation (relative error
    :math:`O(1/d)`; 0.015 nats off the exact value even at ``d = 5``, ``n = 100``).
    The sampling region is grown and re-whitened until it holds the posterior
    (``prepare``), so diffuse or skewed posteriors of small domains are sampled
    whole. Given ``(s, c)``, the counts are conditioned on the total exactly on small
    problems (``_exact_total.ExactTotal``: the items' posterior means given the total,
    and exact draws item after item); on larger ones by exponential
    tilting (the Gibbs-conditioning / saddle-point approximation, exact as ``d`` grows):
    the prior is multiplied by :math:`e^{\lambda x}` with :math:`\lambda` chosen so the
    item posterior means sum to ``n``, which for a Gaussian likelihood is a shift of
    every observation by :math:`\lambda (n\sigma)^2`; draws come from each item's
    tilted posterior itself (``bayesldp.models._item_draws.ItemPosteriorTable``) and are
    moved onto the total by :func:`bayesldp._total.condition_on_total`.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    settings : SamplerSettings, optional
        How to sample ``(s, log c)``: by default NumPyro's NUTS, chains vectorised,
        target acceptance :data:`TARGET_ACCEPT` (the log target falls steeply
        off its ridge).
    rng : numpy.random.Generator, int or None
        Seeds the sampler and the posterior draws (same seed, same result).
    s_bounds : (float, float)
        Support of the exponent's uniform prior. With a large scale ``c`` the shifted
        power law is steep, so the posterior of ``s`` can reach 4 or more.
    c_bounds : (float, float), optional
        Support of the scale (in counts); its logarithm has a uniform prior. By default
        ``(0.01, n)`` (:func:`default_c_bounds`).
    exponent_points : int, optional
        Posterior draws of ``(s, c)`` at which the item posteriors given the total are
        computed (evenly spread over the sorted draws of ``s``). By default 8, or up to
        64 on problems small enough for exact conditioning (fewer as ``d n`` grows).
    n_draws : int
        Posterior draws of the frequencies behind :meth:`Estimate.interval`, generated
        on demand (``Estimate.uncertainty``).
    tilt_span : float
        Search the tilt's shift within this many noise standard deviations (at most
        :data:`bayesldp.models._counts.TILT_SPAN`).
    exact : bool, optional
        Force (``True``) or forbid (``False``) the exact computations of small problems.
    **options
        Fields of :class:`~bayesldp.models.SamplerSettings` replacing those of
        ``settings`` (``draws``, ``tune``, ``chains``, ``target_accept``, ...).

    Returns
    -------
    Estimate
        Non-negative frequencies summing to 1, ``uncertainty`` (draws on the simplex,
        generated chunk by chunk), the InferenceData, diagnostics (r_hat, ESS,
        divergences) and the tilts in ``info``.
    """
    if exponent_points is not None:
        check_int(exponent_points, "exponent_points", minimum=1)
    check_int(n_draws, "n_draws", minimum=1)
    tilt_span = check_float(tilt_span, "tilt_span", minimum=0.0, strict_minimum=True)
    if exact is not None:
        exact = check_bool(exact, "exact")
    settings = resolve_settings(settings, options)
    rng = check_rng(rng, "rng")
    post = sample_scale(
        m, s_bounds=s_bounds, c_bounds=c_bounds, settings=settings, rng=rng, exact=exact
    )
    start = time.perf_counter()
    problem = post.problem
    if exponent_points is None:
        exponent_points = EXPONENT_POINTS
        if problem.exact:  # each point holds two (d, n + 1) tables: ~32 MB at most
            work = problem.d * (problem.n + 1)
            affordable = min(2_000_000 // work, EXACT_EXPONENT_POINTS)
            exponent_points = max(affordable, EXPONENT_POINTS)
    picks = _picks(post, min(exponent_points, post.s.size))
    draw_seed = int(rng.integers(2**63 - 1))
    info = dict(post.info)
    uncertainty: Uncertainty
    if problem.exact:
        points = [
            ExactTotal(problem.y, problem.sigma_c, problem.n, float(post.s[i]),
                         math.exp(post.log_c[i]))
            for i in picks
        ]  # fmt: skip
        means = [p.means() / problem.n for p in points]
        uncertainty = ExactTotalDraws(tuple(points), problem.n, draw_seed, n_draws)
        info["tilt_shift_sigma"] = [p.lam * problem.sigma_c for p in points]
    else:
        span = min(float(tilt_span), TILT_SPAN) * problem.sigma_c
        means, tables, shifts = [], [], []
        for i in picks:
            s_i, c_i = float(post.s[i]), math.exp(post.log_c[i])
            shift, mean, _ = tilt(problem, s_i, c_i, span)
            shifts.append(shift)
            means.append(mean / mean.sum())
            lm = log_prior_mass(problem.grid, s_i, c_i)
            table = ItemPosteriorTable(problem.grid, lm, problem.sigma_c, problem.y + shift)
            tables.append(PointTables(table, shift))
        uncertainty = ItemPosteriorDraws(
            problem.y, problem.n, tuple(tables), draw_seed, n_draws, total=True
        )
        info["tilt_shift_sigma"] = [sh / problem.sigma_c for sh in shifts]
    info["exponent_points"] = len(picks)
    # Monte Carlo standard error of the frequencies from the spread over the points
    info["frequencies_mcse"] = np.std(means, axis=0) / math.sqrt(len(means))
    info["seconds_posterior_means"] = time.perf_counter() - start
    f = np.mean(means, axis=0)
    f /= f.sum()
    logger.debug("bayes-consistent: tilts %s sigma", info["tilt_shift_sigma"])
    return Estimate(
        frequencies=f,
        method="bayes-consistent",
        measurement=m,
        info=info,
        inference_data=post.idata,
        uncertainty=uncertainty,
    )
