r"""Bayes-Dirichlet: a symmetric Dirichlet prior with a hyperprior on its concentration.

The model is the user's-own-model example of the README with a tuned parametrization:

.. math::

    \log a \sim \mathcal N(\mu_0, s_0^2), \qquad
    f \sim \mathrm{Dirichlet}(a, \dots, a), \qquad
    c \mid f \sim \text{the oracle's likelihood (:func:`ldp_likelihood`)}.

On frequency data with a heavy tail the posterior concentration is small (a few
hundredths), and most items lie below the noise: their posterior is
the prior's :math:`f_v^{a-1}` cut off where the likelihood starts to matter, a left tail
of length :math:`1/a` in :math:`\log f_v` against a peak as narrow as the item's relative
noise. PyMC's own simplex transform of ``pm.Dirichlet`` centres every coordinate on the
mean of all the :math:`\log f_v`, which ties the well-measured items to the tail of every
other item; NUTS then hits its maximum tree depth, diverges and does not mix.
:func:`dirichlet_simplex` writes the same Dirichlet law in
additive log-ratio coordinates against the best-measured item, each coordinate scaled
to its item's noise (or, at large concentrations, the prior's width) above a kink and
to the prior's tail (by the concentration) below it, so that both parts have unit
scale.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from bayesldp._validation import check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models._concentration import (
    check_normal_prior,
    concentration_start,
    dirichlet_draws,
    log_concentration,
)
from bayesldp.models._settings import SamplerSettings, resolve_settings
from bayesldp.models.fitting import fit, ready_made_settings
from bayesldp.models.likelihood import follow_measurement, ldp_likelihood, resolve_kind

__all__ = ["bayes_dirichlet", "dirichlet_simplex"]

#: Least sharpness of the kink between an item's noise scale and the prior's tail (per
#: unit of the sampled coordinate): sharp enough that the two parts of a coordinate do
#: not blur into each other, soft enough that NUTS's step is not set by the kink.
KINK_SHARPNESS = 1.5
#: The tail's slope :math:`1/\alpha` reaches an item's peak through the kink's softplus,
#: :math:`\alpha^{-1}\sigma(k\kappa)` at :math:`u = 0`; each item's sharpness is raised
#: (:func:`kink_sharpness`) until that is at most this fraction of the peak's own slope
#: ``width``, so a small concentration does not squeeze the peaks of items measured a
#: few noise standard deviations above zero.
PEAK_LEAK = 0.1
#: Items that start in the tail (estimated below :data:`START_Z` sds) are sharpened by
#: the same rule up to this: sharper kinks there make the first warm-up iterations, far
#: from the bulk, take many more leapfrog steps.
TAIL_SHARPNESS_MAX = 3.0
#: ... and every item up to this: an unbounded sharpness (up to ~6 for items measured at
#: 100 sds) shrinks NUTS's tuned step and can make it diverge.
SHARPNESS_MAX = 4.0
#: The kink sits this many noise standard deviations below the item's peak ...
KINK_SDS = 2.0
#: ... but not below this fraction of one standard deviation.
KINK_FLOOR = 0.25
#: Items whose raw estimate is below this many standard deviations start in the tail.
START_Z = 2.0
#: :func:`dirichlet_log_density` takes the log-ratios' deviation from the prior's mode
#: through ``expm1`` up to this (far beyond, ``exp`` would overflow).
MAX_DEVIATION = 30.0
#: Kink of the ignored reference slot. Its terms are multiplied by zero, so any finite
#: value gives the same log-density and gradient; a far one (e.g. -1000) overflows
#: ``exp`` inside the branches of JAX's softplus, whose gradient is then NaN (0 * inf).
REFERENCE_KINK = 0.0


def parametrization_hints(m: Measurement) -> dict[str, np.ndarray]:
    r"""Return the per-item scales, kinks and starting points used by :func:`dirichlet_simplex`.

    They only choose coordinates that NUTS samples well; the law of ``f`` does not
    depend on them.

    Parameters
    ----------
    m : Measurement
        The measurement the model will be fitted to.

    Returns
    -------
    dict
        Arrays of length ``d``: ``reference`` (1.0 at the largest raw estimate, whose
        log-ratio is 0), ``centre`` (the log-ratio of the item's peak, its raw estimate
        or one standard deviation, whichever is larger), ``width`` (the peak's relative
        noise, at most 1), ``kink`` (where the prior's tail takes over, in sampled
        units below the peak), ``start`` (0 at the peak; items estimated below
        ``START_Z`` standard deviations start just inside the tail), ``sharpness``
        (the kink's, :func:`kink_sharpness`), ``guess`` (the moment estimate
        :math:`\log \hat a` of the concentration, :func:`concentration_start`, the same
        for every item) and ``following`` (:math:`\lambda_v = \hat a w_v^2 /
        (1 + \hat a w_v^2)`, the prior's share of the item's precision at the guess).
    """
    check_measurement(m)
    f = m.estimates
    sd = np.maximum(np.sqrt(m.variance()), 0.25 / m.n)
    ref = int(np.argmax(f))
    top = max(float(f[ref]), float(sd[ref]))
    peak = np.maximum(f, sd)
    width = np.minimum(1.0, sd / peak)
    centre = np.log(peak / top)
    kink_at = np.log(np.maximum(peak - KINK_SDS * sd, KINK_FLOOR * sd) / top)
    kink = (kink_at - centre) / width
    in_tail = f < START_Z * sd
    start = np.where(in_tail, kink - 1.0, 0.0)
    guess = concentration_start(m)
    sharpness = kink_sharpness(guess, width, kink, in_tail)
    reference = np.zeros(f.size)
    reference[ref] = 1.0
    centre[ref], kink[ref], start[ref] = 0.0, REFERENCE_KINK, 0.0  # its width is its own
    sharpness[ref] = KINK_SHARPNESS
    prior_share = np.exp(guess) * width**2  # the prior's precision over the noise's
    return {
        "reference": reference,
        "centre": centre,
        "width": width,
        "kink": kink,
        "start": start,
        "sharpness": sharpness,
        "guess": np.full(f.size, guess),
        "following": prior_share / (1.0 + prior_share),
    }


def kink_sharpness(log_concentration, width, kink, in_tail) -> np.ndarray:
    r"""Return each item's kink sharpness :math:`k_v` in :func:`dirichlet_simplex`.

    The least :math:`k \ge` :data:`KINK_SHARPNESS` with
    :math:`a^{-1} e^{-k |\kappa_v|} \le` :data:`PEAK_LEAK` :math:`\, w_v`, which
    bounds the tail's slope at the item's peak (:math:`\sigma(x) < e^{x}`), at most
    :data:`SHARPNESS_MAX` (:data:`TAIL_SHARPNESS_MAX` for the items that start in the
    tail, :math:`c_v` below):

    .. math::

        k_v = \min\left(c_v, \max\left(k_0,
        \frac{\log(1 / (a w_v)) - \log \mathrm{PEAK\_LEAK}}{|\kappa_v|}\right)\right).

    :math:`a` is a fixed guess of the concentration (in the models, the moment estimate
    :func:`concentration_start`), not the sampled one: the sharpness is then data, so
    the map from the sampled coordinates to ``f`` and its Jacobian are as before and a
    gradient costs no more than with one sharpness (a function of the sampled
    concentration would enter every gradient). Where the posterior
    concentration is near the guess, the bound holds up to that ratio.

    Parameters
    ----------
    log_concentration : float
        :math:`\log a`.
    width, kink : numpy.ndarray
        The items' ``width`` :math:`w_v` and ``kink`` :math:`\kappa_v < 0`
        (:func:`parametrization_hints`).
    in_tail : numpy.ndarray of bool
        The items that start in the tail.

    Returns
    -------
    numpy.ndarray
        One sharpness per item.
    """
    need = (-log_concentration - np.log(width) - np.log(PEAK_LEAK)) / np.abs(kink)
    sharp = np.clip(need, KINK_SHARPNESS, SHARPNESS_MAX)
    return np.where(in_tail, np.minimum(sharp, TAIL_SHARPNESS_MAX), sharp)


def dirichlet_simplex(name: str, alpha, measurement: Measurement, *, dims=None):
    r"""Add ``f ~ Dirichlet(alpha)`` in coordinates NUTS samples well at small ``alpha``.

    With reference item ``r`` (the largest raw estimate) and
    :math:`y_v = \log(f_v / f_r)` for the other items, the Dirichlet law of ``f`` is
    :math:`p(y) \propto \prod_{v=1}^{d} f_v^{\alpha_v}` (the Jacobian of the additive
    log-ratio map is :math:`\prod_v f_v`). Each :math:`y_v` is sampled through

    .. math::

        y_v = \bar c_v + \sigma_v u_v - \frac{1}{k_v \alpha_v}
        \log\left(1 + e^{-k_v (u_v - \kappa_v)}\right),
        \qquad u = s + (I + \gamma\, b b^\top)\, t,

    with :math:`c_v` the log-ratio of the item's raw estimate (at least one noise
    standard deviation), :math:`w_v` its relative noise (at most 1), :math:`\kappa_v` a
    kink where the likelihood has flattened out and :math:`s_v` a starting offset
    (:func:`parametrization_hints`), :math:`k_v` the kink's sharpness
    (:func:`kink_sharpness`: sharp enough that the tail's slope does not reach the peak).
    The peak is partially centred between the data and the prior's mode
    :math:`m_v = \log(\alpha_v / \alpha_r)`, each weighted by its precision:
    :math:`\sigma_v = (w_v^{-2} + \tilde\alpha_v)^{-1/2}` and
    :math:`\bar c_v = \sigma_v^2 (c_v / w_v^2 + \tilde\alpha_v m_v)`. Above the kink
    :math:`y_v \approx \bar c_v + \sigma_v u_v`, so the item's peak has unit scale in
    :math:`u_v` whether the noise (small concentrations) or the prior (large ones,
    where :math:`\sigma_v \approx \alpha_v^{-1/2}`) sets it: no funnel between the
    concentration and the log-ratios. The prior's precision
    :math:`\tilde\alpha_v = \hat a^{1 - \lambda_v} \alpha_v^{\lambda_v}` follows the
    sampled concentration only as far as the prior outweighs the noise at a guess
    :math:`\hat a` (:func:`concentration_start`):
    :math:`\lambda_v = \hat a w_v^2 / (1 + \hat a w_v^2)`. Where the noise sets the
    peaks (small concentrations, typically many items) the coordinates then barely move
    with the concentration; were they to follow it fully, tens of thousands of items
    each moving a little would pin the concentration and it would not mix. Below the
    kink the slope is
    :math:`\approx 1/\alpha_v`, so the prior's tail :math:`e^{\alpha_v y_v}` has unit
    scale too, whatever :math:`\alpha_v` is (no scale of :math:`1/\alpha` to cross).
    Every :math:`y_v` shares the reference's own uncertainty, :math:`\sigma_r`; in
    units of each item's slope at its start,
    :math:`b_v = \sigma_r / (\sigma_v + \tilde\alpha_v^{-1}\sigma(-k_v(s_v - \kappa_v)))`
    (:math:`b_r = 0`), that is a covariance :math:`b b^\top` on top of the identity
    (:math:`|b|^2 \approx d` where the items are equally noisy, at large
    concentrations), which the rank-one map with
    :math:`\gamma = 1 / (1 + \sqrt{1 + |b|^2})` takes out, so that :math:`t` has no
    direction much wider than the others. The Jacobian
    :math:`\sqrt{1 + |b|^2} \prod_{v \ne r} (\sigma_v + \alpha_v^{-1}\sigma(-k_v(u_v -
    \kappa_v)))` enters the log-density (:func:`dirichlet_log_density`, exact at large
    concentrations too), so the law of ``f`` is exactly Dirichlet(``alpha``). The free
    vector :math:`t` has length ``d``: the reference item's slot is not used and has a
    standard normal law, so no index arrays enter the graph.

    Parameters
    ----------
    name : str
        Name of the frequency vector (a ``Deterministic``); the free coordinates are
        ``{name}_t`` and the hints ``pm.Data`` named ``{name}_reference``,
        ``{name}_centre``, ``{name}_width``, ``{name}_kink``, ``{name}_start``,
        ``{name}_sharpness``, ``{name}_guess`` and ``{name}_following``;
        :func:`bayesldp.models.fit` moves them to the measurement it fits
        (:func:`set_hints`, registered with
        :func:`~bayesldp.models.likelihood.follow_measurement`).
    alpha : TensorVariable or float
        Concentrations: a scalar (symmetric Dirichlet) or a vector of length ``d``,
        positive.
    measurement : Measurement
        Chooses the coordinates (:func:`parametrization_hints`).
    dims : str, optional
        Named dimension of ``f``.

    Returns
    -------
    TensorVariable
        ``f``, on the simplex.
    """
    import pymc as pm
    import pytensor.tensor as pt

    d = check_measurement(measurement, "measurement").domain_size
    hints = {
        key: pm.Data(f"{name}_{key}", value)
        for key, value in parametrization_hints(measurement).items()
    }
    alpha = pt.as_tensor_variable(alpha)
    k = hints["sharpness"]
    free = 1.0 - hints["reference"]
    t = pm.Flat(f"{name}_t", shape=d)
    inv_a = 1.0 / alpha
    # partially centred: between the data's log-ratio and the prior's mode, weighted by
    # their precisions (the noise's 1 / w^2, the prior's about alpha). The prior's
    # precision follows the sampled alpha only as far as the prior outweighs the noise
    # at the guess: alpha_c = guess^(1 - lambda) alpha^lambda
    prior_mode = pt.log(alpha / pt.sum(hints["reference"] * alpha)) if alpha.ndim else 0.0
    lam = hints["following"]
    alpha_c = pt.exp(hints["guess"] + lam * (pt.log(alpha) - hints["guess"]))
    precision = 1.0 / hints["width"] ** 2 + alpha_c
    scale = 1.0 / pt.sqrt(precision)
    centre = (hints["centre"] / hints["width"] ** 2 + alpha_c * prior_mode) / precision
    # the reference item's own uncertainty, shared by every log-ratio: a rank-one
    # covariance b b^T of the scaled coordinates, taken out by u = s + (I + c b b^T) t
    start_slope = scale + pt.sigmoid(-k * (hints["start"] - hints["kink"])) / alpha_c
    b = free * pt.sum(hints["reference"] * scale) / start_slope
    b_norm2 = pt.sum(b * b)
    shared = pt.sum(b * t) / (1.0 + pt.sqrt(1.0 + b_norm2))
    u = hints["start"] + t + shared * b
    z = k * (u - hints["kink"])
    y = free * (centre + scale * u - inv_a * pt.softplus(-z) / k)
    log_jac = pt.sum(free * pt.log(scale + inv_a * pt.sigmoid(-z))) + 0.5 * pt.log1p(b_norm2)
    log_f = y - pt.logsumexp(y)
    f = pm.Deterministic(name, pt.exp(log_f), dims=dims)
    follow_measurement(
        pm.modelcontext(None), f"{name}_hints", lambda model, m: set_hints(model, name, m)
    )
    log_prior = dirichlet_log_density(y, alpha, d)
    unused = -0.5 * pt.sum(hints["reference"] * t**2) - 0.5 * np.log(2 * np.pi)
    pm.Potential(f"{name}_prior", log_prior + log_jac + unused)
    return f


def dirichlet_log_density(y, alpha, d: int):
    r"""Return :math:`\sum_v \alpha_v \log f_v + \log\Gamma(A) - \sum_v \log\Gamma(\alpha_v)`.

    The Dirichlet log-density of :math:`f = \mathrm{softmax}(y)` plus the additive
    log-ratio map's log-Jacobian :math:`\sum_v \log f_v`
    (:math:`A = \sum_v \alpha_v`), written so that it keeps its precision at large
    concentrations. Written as it reads, it is a sum of terms of size
    :math:`A \log d` whose sum is of order ``d``: in double precision its error is
    about :math:`10^{-16} A \log d` (at :math:`\log a = 33`, :math:`d = 256`, a few
    hundred, growing with ``a``), so a chain far out in ``a`` meets spurious gradients
    and log-densities that can trap it. With :math:`p = \alpha / A` the prior's mode,
    :math:`g_v = y_v - \log \alpha_v` and :math:`e = g - \sum_v p_v g_v` (so
    :math:`\sum_v p_v e_v = 0`), Stirling's formula with its remainder
    :math:`R` (``stirling_remainder``, private) makes the cancellation exact:

    .. math::

        -A \log\Bigl(1 + \sum_v p_v \bigl(e^{e_v} - 1 - e_v\bigr)\Bigr)
        + \tfrac12 \sum_v \log \alpha_v - \tfrac12 \log A
        - \tfrac{d - 1}{2} \log 2\pi + R(A) - \sum_v R(\alpha_v),

    every term of which is small where the result is (the first is
    :math:`\approx -\tfrac{A}{2} \sum_v p_v e_v^2`, with :math:`e^{x} - 1 - x` from
    ``exp_excess``, private). Where some :math:`e_v` exceeds
    :data:`MAX_DEVIATION` (far from the prior's mode, where the first term is large and
    carries its own scale) the logarithm is taken as
    :math:`\operatorname{logsumexp}(y) - \sum_v p_v g_v - \log A` instead, which
    cannot overflow (the other branch sees the deviations clipped to it, so it stays
    finite and so does its gradient).

    Parameters
    ----------
    y : TensorVariable
        Log-ratios, length ``d`` (any common offset: the result does not depend on it).
    alpha : TensorVariable
        Concentrations: a scalar (symmetric) or a vector of length ``d``, positive.
    d : int
        Number of items.

    Returns
    -------
    TensorVariable
        The scalar log-density.
    """
    import pytensor.tensor as pt

    from bayesldp.models._special import exp_excess, stirling_remainder

    if alpha.ndim == 0:  # p = 1/d: the sums are means, and log alpha cancels from e
        total = d * alpha
        e = y - pt.mean(y)
        near = pt.minimum(e, MAX_DEVIATION)
        excess = pt.mean(exp_excess(near))
        far = pt.logsumexp(y) - pt.mean(y) - np.log(d)
        normaliser = 0.5 * (d - 1) * pt.log(alpha / (2 * np.pi)) - 0.5 * np.log(d)
        normaliser = normaliser + stirling_remainder(total) - d * stirling_remainder(alpha)
    else:
        total = pt.sum(alpha)
        p = alpha / total
        largest = pt.max(alpha)
        g = y - pt.log(alpha / largest)  # log alpha's common part cancels from e exactly
        mean_g = pt.sum(p * g)
        e = g - mean_g
        near = pt.minimum(e, MAX_DEVIATION)
        excess = pt.sum(p * exp_excess(near))
        far = pt.logsumexp(y) - mean_g - pt.log(total / largest)
        normaliser = (
            0.5 * pt.sum(pt.log(alpha))
            - 0.5 * pt.log(total)
            - 0.5 * (d - 1) * np.log(2 * np.pi)
            + stirling_remainder(total)
            - pt.sum(stirling_remainder(alpha))
        )
    log_mean = pt.switch(pt.max(e) <= MAX_DEVIATION, pt.log1p(excess), far)
    return normaliser - total * log_mean


def set_hints(model, name: str, measurement: Measurement) -> None:
    """Move the coordinates of :func:`dirichlet_simplex` ``name`` to another measurement.

    :func:`bayesldp.models.fit` calls it (through
    :func:`~bayesldp.models.likelihood.move_followers`); call it yourself before sampling
    the model some other way.

    Parameters
    ----------
    model : pymc.Model
        A model holding ``dirichlet_simplex(name, ...)``.
    name : str
        The frequency vector's name, as given to :func:`dirichlet_simplex`.
    measurement : Measurement
        The measurement the model will be fitted to next; its
        :func:`parametrization_hints` replace the model's ``pm.Data`` hints.
    """
    import pymc as pm

    hints = parametrization_hints(measurement)
    pm.set_data({f"{name}_{key}": value for key, value in hints.items()}, model=model)


def build_dirichlet_model(
    m: Measurement, *, concentration_prior: tuple[float, float] = (0.0, 2.0), kind: str = "auto"
):
    r"""Build the PyMC model of :func:`bayes_dirichlet` for measurements like ``m``.

    Parameters
    ----------
    m : Measurement
        A measurement of the domain size and oracle the model is built for (its counts
        are ``pm.Data``: :func:`bayesldp.models.set_measurement` swaps others in).
    concentration_prior : (float, float), default (0, 2)
        Mean and standard deviation of the normal prior on :math:`\log a`.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood (:func:`ldp_likelihood`).

    Returns
    -------
    pymc.Model
        Variables ``log_a_offset`` (free: :func:`log_concentration`), ``log_a``, ``a``
        and ``f`` (deterministic, dims ``item``) and the likelihood ``counts``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    mu, sd = check_normal_prior(concentration_prior, "concentration_prior")
    kind = resolve_kind(m, kind)
    d = m.domain_size
    with pm.Model(coords={"item": np.arange(d)}) as model:
        log_a = log_concentration("log_a", (mu, sd), m)
        a = pm.Deterministic("a", pt.exp(log_a))
        f = dirichlet_simplex("f", a, m, dims="item")
        ldp_likelihood("counts", f, m, kind=kind)
    return model


#: Built models by (d, kind, prior): later measurements are swapped in as data, so the
#: samplers' compiled functions are reused.
_MODELS: dict[tuple, object] = {}
MAX_CACHED_MODELS = 4


def cached_model(key: tuple, build):
    """Return the model cached under ``key``, built by ``build()`` on first use (a small LRU).

    At most :data:`MAX_CACHED_MODELS` models are kept; the least recently used goes first.

    Parameters
    ----------
    key : tuple
        Hashable description of everything the model's structure depends on.
    build : callable
        Called without arguments to build the model when ``key`` is not cached.
    """
    if key in _MODELS:
        _MODELS[key] = _MODELS.pop(key)
        return _MODELS[key]
    while len(_MODELS) >= MAX_CACHED_MODELS:
        _MODELS.pop(next(iter(_MODELS)))
    _MODELS[key] = build()
    return _MODELS[key]


@dataclass(frozen=True)
class DirichletPrior:
    """The bayes-dirichlet prior of ``f``, as data: ``prior(size, rng)`` draws from it.

    Attributes
    ----------
    concentration_prior : (float, float)
        Mean and standard deviation of the normal prior on the log concentration.
    d : int
        Number of items.
    """

    concentration_prior: tuple[float, float]
    d: int

    def __call__(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``size`` draws of ``f``, shape ``(size, d)``.

        Parameters
        ----------
        size : int
            Number of draws.
        rng : numpy.random.Generator
            Source of randomness.
        """
        mu, sd = self.concentration_prior
        a = np.exp(rng.normal(mu, sd, size))
        return dirichlet_draws(np.repeat(a[:, None], self.d, axis=1), rng)


def prior_sampler(concentration_prior: tuple[float, float], d: int) -> DirichletPrior:
    """Draws of ``f`` from the bayes-dirichlet prior: ``sample(size, rng)``, shape ``(size, d)``."""
    mu, sd = concentration_prior
    return DirichletPrior((float(mu), float(sd)), int(d))


def bayes_dirichlet(
    m: Measurement,
    *,
    settings: SamplerSettings | None = None,
    rng=None,
    concentration_prior: tuple[float, float] = (0.0, 2.0),
    kind: str = "auto",
    **options,
) -> Estimate:
    r"""Posterior mean under a symmetric Dirichlet prior with a hyperprior on its concentration.

    .. math::

        \log a \sim \mathcal N(\mu_0, s_0^2), \quad
        f \sim \mathrm{Dirichlet}(a \mathbf 1_d), \quad
        c \mid f \sim \begin{cases}
            \mathrm{Multinomial}(n, q + (p-q) f) & \text{GRR} \\
            \prod_v \mathrm{Binomial}(n, q + (p-q) f_v) & \text{otherwise}
        \end{cases}

    sampled with NUTS (:func:`bayesldp.models.fit`) in the coordinates of
    :func:`dirichlet_simplex`.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    settings : SamplerSettings, optional
        How to sample (see :func:`bayesldp.models.fit`).
    rng : numpy.random.Generator, int or None
        Seeds the sampler (same seed, same result).
    concentration_prior : (float, float), default (0, 2)
        Mean and standard deviation of the normal prior on :math:`\log a`.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood (:func:`ldp_likelihood`).
    **options
        Fields of :class:`~bayesldp.models.SamplerSettings` replacing those of
        ``settings`` (``draws``, ``tune``, ``chains``, ``sampler``, ...).

    Returns
    -------
    Estimate
        Method ``"bayes-dirichlet"``: non-negative frequencies summing to 1, posterior
        draws on the simplex, diagnostics as :func:`bayesldp.models.fit`, plus
        ``info["a_mean"]``, ``info["a_sd"]`` and ``info["prior_sampler"]``.

    Raises
    ------
    ValueError
        Bad input, named.
    """
    check_measurement(m)
    prior = check_normal_prior(concentration_prior, "concentration_prior")
    kind = resolve_kind(m, kind)
    settings = ready_made_settings(resolve_settings(settings, options))
    rng = check_rng(rng, "rng")
    start = time.perf_counter()
    model = cached_model(
        ("dirichlet", m.domain_size, kind, prior),
        lambda: build_dirichlet_model(m, concentration_prior=prior, kind=kind),
    )
    est = fit(model, m, settings=settings, rng=rng, method="bayes-dirichlet")
    a = est.inference_data.posterior["a"].values.ravel()
    info = {
        **est.info,
        "a_mean": float(a.mean()),
        "a_sd": float(a.std()),
        "concentration_prior": prior,
        "kind": kind,
        "prior_sampler": prior_sampler(prior, m.domain_size),
        "seconds_total": time.perf_counter() - start,
    }
    return dataclasses.replace(est, info=info)
