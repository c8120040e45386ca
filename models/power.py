"""Bayesian Calibrate: the power-law prior with a posterior on its exponent (PyMC).

Calibrate (Jia and Gong 2019) plugs a point estimate of the exponent into the
posterior mean. Here the exponent gets a prior and is sampled with NUTS; each item's
count is marginalised exactly over all counts ``1..n`` (see
``bayesldp.models._chebyshev``), and the frequency estimate is the posterior mean
averaged over the posterior of the exponent.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

import bayesldp.methods._calibrate as calibrate
from bayesldp._validation import check_bool, check_int, check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.models import _chebyshev as chebyshev
from bayesldp.models._counts import CountGrid
from bayesldp.models._item_draws import ItemPosteriorDraws, ItemPosteriorTable, PointTables
from bayesldp.models._settings import SamplerSettings, resolve_settings
from bayesldp.models.diagnostics import convergence_info, warn_at_bounds
from bayesldp.models.fitting import sample_parameters

__all__ = ["bayes_power", "bayes_power_zi"]

logger = logging.getLogger(__name__)

#: NUTS's target acceptance for the exponent (PyMC's default).
TARGET_ACCEPT = 0.8


def build_model(m: Measurement, lik: chebyshev.ChebyshevLikelihood, zero_inflated: bool):
    r"""Build the PyMC model of the exponent (and zero weight) given the count estimates.

    .. math::

        s &\sim \mathrm{Uniform}(s_{lo}, s_{hi}), \qquad
        \pi \sim \mathrm{Beta}(1, 1) \text{ (zero-inflated only)} \\
        P(x_v = k \mid s, \pi) &= \pi [k = 0]
            + (1 - \pi) \frac{k^{-s}}{\sum_{j=1}^{n} j^{-s}} [1 \le k \le n] \\
        n\tilde f_v \mid x_v &\sim \mathcal N(x_v, (n\sigma)^2)

    with each :math:`x_v` summed out exactly (:math:`\pi = 0` without zero inflation).
    With zero inflation and many items (more than ``NODE_RATIO`` per node of
    :class:`bayesldp.models._chebyshev.ChebyshevLikelihood`), the sum over items is a
    weighted sum over the nodes, so the graph NUTS evaluates does not grow with ``d``.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    lik : bayesldp.models._chebyshev.ChebyshevLikelihood
        The items' marginal likelihoods in ``s``, interpolated over the prior's bounds.
    zero_inflated : bool
        Add the point mass :math:`\pi` at count 0.

    Returns
    -------
    pymc.Model
    """
    import pymc as pm
    import pytensor.tensor as pt

    d = m.domain_size
    y, sigma_c = lik.y, lik.sigma_c
    k = lik.coef.shape[1]
    coords = {"item": np.arange(d), "chebyshev": np.arange(k)}
    with pm.Model(coords=coords) as model:
        # Everything that depends on the measurement enters as data (shared variables), not
        # as constants: constants are folded into the compiled C code, so every new
        # measurement would compile anew; with data the compiled code is reused.
        log_h = pm.Data("log_norm_coef", lik.log_h)
        const = pm.Data("log_gauss_const", d * lik.log_gauss_const())
        s = pm.Uniform("s", lik.lo, lik.hi)
        t = lik.to_unit(s)
        log_norm = chebyshev.chebval_tensor(t, log_h, k)
        if zero_inflated and lik.node_coef is not None:
            # Many items: the sum over items of a smooth function of the estimate is a
            # weighted sum over a few hundred nodes (interpolated, thousandths of a nat off).
            assert lik.nodes is not None  # node_coef is set with the nodes
            model.add_coord("node", np.arange(lik.nodes.size))
            pi = pm.Beta("pi", 1.0, 1.0)
            coef = pm.Data("node_coef", lik.node_coef, dims=("node", "chebyshev"))
            weight = pm.Data("node_weight", lik.node_weights, dims="node")
            log_nonzero = pt.log1p(-pi) + chebyshev.chebval_tensor(t, coef, k) - log_norm
            zero = pm.Data("log_gauss_at_zero", -(lik.nodes**2) / (2 * sigma_c**2), dims="node")
            log_zero = pt.log(pi) + zero
            pm.Potential("loglik", (weight * pt.logaddexp(log_zero, log_nonzero)).sum() + const)
        elif zero_inflated:
            pi = pm.Beta("pi", 1.0, 1.0)
            coef = pm.Data("coef", lik.coef, dims=("item", "chebyshev"))
            log_nonzero = pt.log1p(-pi) + chebyshev.chebval_tensor(t, coef, k) - log_norm
            zero = pm.Data("log_gauss_at_zero", -(y**2) / (2 * sigma_c**2), dims="item")
            log_zero = pt.log(pi) + zero
            pm.Potential("loglik", pt.logaddexp(log_zero, log_nonzero).sum() + const)
        else:
            total = pm.Data("coef_total", lik.coef.sum(axis=0))
            pm.Potential("loglik", chebyshev.chebval_tensor(t, total, k) - d * log_norm + const)
    return model


@dataclass
class ExponentPosterior:
    """Posterior draws of the exponent (and zero weight) with diagnostics."""

    s: np.ndarray
    pi: np.ndarray
    idata: object
    lik: chebyshev.ChebyshevLikelihood
    info: dict


def sample_exponent(
    m: Measurement,
    *,
    zero_inflated: bool,
    s_bounds: tuple[float, float],
    settings: SamplerSettings,
    rng: np.random.Generator,
    degree: int = 24,
) -> ExponentPosterior:
    """Sample the posterior of ``s`` (and ``pi``) with NUTS; warn on poor convergence.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    zero_inflated : bool
        Also sample the zero weight ``pi`` (:func:`build_model`).
    s_bounds : (float, float)
        Support of the uniform prior on ``s``.
    settings : SamplerSettings
        How to sample (:func:`bayesldp.models.fitting.sample_parameters`).
    rng : numpy.random.Generator
        Randomness of the whole fit; the sampler's seed is drawn from it.
    degree : int, default 24
        Chebyshev points of the likelihood's interpolant in ``s``.

    Returns
    -------
    ExponentPosterior
        Draws of ``s`` and ``pi`` with the inference data and diagnostics.
    """
    lo, hi = (float(b) for b in s_bounds)
    seed = int(rng.integers(2**31 - 1))
    start = time.perf_counter()
    lik = chebyshev.build(m, lo, hi, degree)
    built = time.perf_counter()
    model = build_model(m, lik, zero_inflated)
    idata = sample_parameters(model, settings, seed, target_accept=TARGET_ACCEPT)
    sampled = time.perf_counter()
    names = ["s", "pi"] if zero_inflated else ["s"]
    info = convergence_info(idata, names, stacklevel=4)
    info.update(
        {
            "chebyshev_max_error": lik.max_error,
            "s_bounds": (lo, hi),
            "settings": settings,
            "seconds_likelihood": built - start,
            "seconds_sampling": sampled - built,
        }
    )
    s_draws = idata.posterior["s"].values.ravel()
    warn_at_bounds(s_draws, (lo, hi), "s_bounds", stacklevel=4)
    pi_draws = idata.posterior["pi"].values.ravel() if zero_inflated else np.zeros_like(s_draws)
    info["s_mean"], info["s_sd"] = float(s_draws.mean()), float(s_draws.std())
    if zero_inflated:
        info["pi_mean"], info["pi_sd"] = float(pi_draws.mean()), float(pi_draws.std())
    return ExponentPosterior(s_draws, pi_draws, idata, lik, info)


def representative_draws(post: ExponentPosterior, points: int) -> np.ndarray:
    """Return indices of ``points`` draws evenly spread over the sorted draws of ``s``.

    Parameters
    ----------
    post : ExponentPosterior
        The posterior draws.
    points : int
        Number of draws picked, at least 1 (at the quantiles ``(i + 0.5) / points``).
    """
    order = np.argsort(post.s, kind="stable")
    picks = ((np.arange(points) + 0.5) * order.size / points).astype(int)
    return order[picks]


def item_moments(
    lik: chebyshev.ChebyshevLikelihood,
    s: float,
    pi: float,
    shift: float = 0.0,
    grid: calibrate.PosteriorGrid | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per item: probability of a non-zero count, and mean and variance of that count.

    ``shift`` tilts the prior by :math:`e^{\lambda x}` with :math:`\lambda =`
    ``shift`` :math:`/\sigma_c^2`, which moves each Gaussian likelihood by ``shift``.

    Parameters
    ----------
    lik : bayesldp.models._chebyshev.ChebyshevLikelihood
        Gives the count estimates ``y``, their noise ``sigma_c`` and ``n``.
    s : float
        The power-law exponent.
    pi : float
        Prior weight of count 0 (0 without zero inflation).
    shift : float, default 0.0
        Shift of every estimate, in counts (the tilt above).
    grid : bayesldp.methods._calibrate.PosteriorGrid, optional
        Interpolated posterior moments covering ``y + shift``; built when omitted.

    Returns
    -------
    w1, mean, var : numpy.ndarray
        Per item, shape ``(d,)``.
    """
    y, sigma_c = lik.y, lik.sigma_c
    z = y + shift
    if grid is None:
        grid = calibrate.PosteriorGrid(s, sigma_c, lik.n, float(z.min()), float(z.max()))
    mean, var = grid.mean(z), grid.variance(z)
    if pi <= 0:
        return np.ones_like(y), mean, var
    lam = shift / sigma_c**2
    log_nonzero = (
        math.log1p(-pi) - math.log(calibrate.power_sum(s, lik.n)) + grid.log_evidence(z)
        + lam * y + 0.5 * lam**2 * sigma_c**2
    )  # fmt: skip
    log_zero = math.log(pi) - y**2 / (2 * sigma_c**2)
    w1 = 1.0 / (1.0 + np.exp(np.clip(log_zero - log_nonzero, -700, 700)))
    return w1, mean, var


def power_log_mass(grid: CountGrid, s: float, pi: float) -> np.ndarray:
    r"""Log prior mass of each count cell: :math:`\pi` at 0, the rest :math:`\propto k^{-s}`.

    Parameters
    ----------
    grid : bayesldp.models.CountGrid
        Count cells covering ``0..n``.
    s : float
        The power-law exponent.
    pi : float
        Weight of count 0; with ``pi <= 0`` the cell at 0 has no mass.
    """
    lm = np.full(grid.x.size, -np.inf)
    pos = grid.x >= 1
    lm[pos] = -s * np.log(grid.x[pos]) + grid.log_width[pos]
    lm[pos] -= np.logaddexp.reduce(lm[pos])
    if pi > 0:
        lm[pos] += math.log1p(-pi)
        lm[grid.x == 0] = math.log(pi)
    return lm


def _posterior_mean_estimate(
    m: Measurement, post: ExponentPosterior, name: str, points: int, n_draws: int, rng
) -> Estimate:
    start = time.perf_counter()
    picks = representative_draws(post, points)
    means, tables = [], []
    y, sigma_c = post.lik.y, post.lik.sigma_c
    grid = CountGrid.build(m.n, sigma_c)
    for i in picks:
        w1, mean, _ = item_moments(post.lik, float(post.s[i]), float(post.pi[i]))
        means.append(w1 * mean)
        lm = power_log_mass(grid, float(post.s[i]), float(post.pi[i]))
        tables.append(PointTables(ItemPosteriorTable(grid, lm, sigma_c, y)))
    draw_seed = int(rng.integers(2**63 - 1))
    info = dict(post.info)
    info["seconds_posterior_means"] = time.perf_counter() - start
    return Estimate(
        frequencies=np.mean(means, axis=0) / m.n,
        method=name,
        measurement=m,
        info=info,
        inference_data=post.idata,
        uncertainty=ItemPosteriorDraws(y, m.n, tuple(tables), draw_seed, n_draws),
    )


def bayes_power(
    m: Measurement,
    *,
    settings: SamplerSettings | None = None,
    rng=None,
    s_bounds: tuple[float, float] = (0.5, 3.5),
    exponent_points: int = 8,
    n_draws: int = 1000,
    zero_inflated: bool = False,
    **options,
) -> Estimate:
    r"""Bayesian Calibrate: posterior mean under a power-law prior with unknown exponent.

    .. math::

        s \sim \mathrm{Uniform}(s_{lo}, s_{hi}), \quad
        P(x_v = k \mid s) \propto k^{-s}\ (k = 1..n), \quad
        n\tilde f_v \mid x_v \sim \mathcal N(x_v, (n\sigma)^2),

    :math:`f'_v = \mathbb E[x_v \mid \tilde f] / n`, averaging over the posterior of
    ``s`` (sampled with NUTS; counts summed out exactly). With ``zero_inflated`` the
    prior also has a point mass :math:`\pi \sim \mathrm{Beta}(1, 1)` at count 0
    (``bayes-power-zi``): Calibrate's prior gives every item at least one user, while
    many items of a large domain can have none.

    Every item's count is summed out analytically under a Gaussian likelihood of its
    estimate and only the prior's hyper-parameters are sampled, which is what makes the
    model fast at large ``d``; the composable layer (:func:`bayesldp.models.ldp_likelihood`
    with :func:`bayesldp.models.fit`) instead takes any PyMC prior over the frequency
    vector with the oracle's exact binomial/multinomial likelihood.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    settings : SamplerSettings, optional
        How to sample ``s`` (by default NumPyro's NUTS, chains vectorised).
    rng : numpy.random.Generator, int or None
        Same seed, same result.
    s_bounds : (float, float)
        Support of the uniform prior on ``s``.
    exponent_points : int
        Posterior draws of ``s`` (spread over its quantiles) at which item posteriors
        are evaluated and averaged.
    n_draws : int
        Posterior draws of the frequency vector behind :meth:`Estimate.interval`,
        generated on demand (``Estimate.uncertainty``): item counts drawn from each
        item's posterior given each of the ``exponent_points`` values of ``s``
        (``bayesldp.models._item_draws.ItemPosteriorTable``).
    zero_inflated : bool, default False
        Add the point mass at zero (the ``bayes-power-zi`` method).
    **options
        Fields of :class:`~bayesldp.models.SamplerSettings` replacing those of
        ``settings`` (``draws``, ``tune``, ``chains``, ...).

    Returns
    -------
    Estimate
        ``info`` holds r_hat, ESS, divergences, the posterior of ``s`` and timings;
        ``inference_data`` the ArviZ InferenceData. Poor convergence raises a
        :class:`RuntimeWarning`.
    """
    for label, value in (("exponent_points", exponent_points), ("n_draws", n_draws)):
        check_int(value, label, minimum=1)
    zero_inflated = check_bool(zero_inflated, "zero_inflated")
    settings = resolve_settings(settings, options)
    rng = check_rng(rng, "rng")
    post = sample_exponent(
        m, zero_inflated=zero_inflated, s_bounds=s_bounds, settings=settings, rng=rng
    )
    name = "bayes-power-zi" if zero_inflated else "bayes-power"
    return _posterior_mean_estimate(m, post, name, exponent_points, n_draws, rng)


def bayes_power_zi(m: Measurement, **options) -> Estimate:
    """Zero-inflated Bayesian Calibrate: :func:`bayes_power` with ``zero_inflated=True``.

    Like :func:`bayes_power` it sums each count out under a Gaussian likelihood and
    samples only ``(s, pi)`` (fast at large ``d``), where the composable layer
    (:func:`bayesldp.models.ldp_likelihood` with :func:`bayesldp.models.fit`) puts any PyMC
    prior on the frequencies with the oracle's exact binomial/multinomial likelihood.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    **options
        Keyword arguments of :func:`bayes_power` other than ``zero_inflated``.
    """
    return bayes_power(m, zero_inflated=True, **options)


def prior_predictive(
    m: Measurement,
    *,
    s_bounds: tuple[float, float] = (0.5, 3.5),
    samples: int = 100,
    rng: np.random.Generator,
) -> np.ndarray:
    r"""Draw count estimates :math:`n\tilde f` from the prior predictive of ``bayes-power``.

    Each sample draws ``s`` from its prior, ``d`` counts from the power law on ``1..n``
    and Gaussian noise with the oracle's standard deviation. Returns shape
    ``(samples, d)``, comparable with ``m.estimates * m.n``.

    Parameters
    ----------
    m : Measurement
        Gives ``n``, ``d`` and the noise.
    s_bounds : (float, float), default (0.5, 3.5)
        Support of the uniform prior on ``s``.
    samples : int, default 100
        Number of samples.
    rng : numpy.random.Generator
        Source of randomness.
    """
    lo, hi = s_bounds
    n, d, sigma_c = m.n, m.domain_size, m.sigma * m.n
    out = np.empty((samples, d))
    log_x = np.log(np.arange(1, n + 1, dtype=np.float64))
    for i in range(samples):
        s = rng.uniform(lo, hi)
        cdf = np.cumsum(np.exp(-s * log_x))
        counts = np.searchsorted(cdf, rng.random(d) * cdf[-1]) + 1
        out[i] = counts + rng.normal(0.0, sigma_c, d)
    return out
