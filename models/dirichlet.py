r"""Bayes-Dirichlet: a symmetric Dirichlet prior with a hyperprior on its concentration.

The model is the user's-own-model example of the README with a tuned parametrization:

.. math::

    \log a \sim \mathcal N(\mu_0, s_0^2), \qquad
    f \sim \mathrm{Dirichlet}(a, \dots, a), \qquad
    c \mid f \sim \text{the oracle's likelihood (:func:`ldp_likelihood`)}.

On frequency data with a heavy tail the posterior concentration is small (about 0.02 to
0.05 on the papers' Zipf data), and most items lie below the noise: their posterior is
the prior's :math:`f_v^{a-1}` cut off where the likelihood starts to matter, a left tail
of length :math:`1/a` in :math:`\log f_v` against a peak as narrow as the item's relative
noise. PyMC's own simplex transform of ``pm.Dirichlet`` centres every coordinate on the
mean of all the :math:`\log f_v`, which ties the well-measured items to the tail of every
other item; NUTS then hits its maximum tree depth, diverges and does not mix (measured:
r_hat 2 at d = 1024). :func:`dirichlet_simplex` writes the same Dirichlet law in
additive log-ratio coordinates against the best-measured item, each coordinate scaled
to its item's noise above a kink and to the prior's tail (by the concentration) below
it, so that both parts have unit scale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from bayesldp._validation import check_float, check_int, check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models.fitting import READY_MADE_SAMPLERS, fit, resolve_sampler
from bayesldp.models.likelihood import follow_measurement, ldp_likelihood, resolve_kind

__all__ = [
    "bayes_dirichlet",
    "build_dirichlet_model",
    "cached_model",
    "check_normal_prior",
    "concentration_start",
    "dirichlet_draws",
    "dirichlet_simplex",
    "kink_sharpness",
    "log_concentration",
    "parametrization_hints",
    "set_concentration_start",
    "set_hints",
]

#: Least sharpness of the kink between an item's noise scale and the prior's tail (per
#: unit of the sampled coordinate). In a one-seed prototype run on the papers' Zipf
#: setting (not a repo script) 1.5 and 2 mixed best of 1, 1.5, 2, 3 and 4 as one sharpness
#: for every item (smallest bulk ESS over the items 189 and 235 of 2000 draws, against 48
#: to 197); 2 diverged in 1.2% of the transitions of the tiny hierarchical exact-posterior
#: test.
KINK_SHARPNESS = 1.5
#: The tail's slope :math:`1/\alpha` reaches an item's peak through the kink's softplus,
#: :math:`\alpha^{-1}\sigma(k\kappa)` at :math:`u = 0`; each item's sharpness is raised
#: (:func:`kink_sharpness`) until that is at most this fraction of the peak's own slope
#: ``width``. With one sharpness of 1.5, at a = 0.0046 (Zipf, d = 4096) it was 13 times
#: the width of an item estimated at 4 sds, so that item's peak was 13 times narrower
#: than the coordinates intend, and the items at 3-4.5 sds mixed worst (r_hat 1.11, bulk
#: ESS 13 of 2000 draws; ``paper/bayes.md``).
PEAK_LEAK = 0.1
#: Items that start in the tail (estimated below :data:`START_Z` sds) are sharpened by
#: the same rule up to this. In prototype runs at d = 4096, this took NUTS's tuned step
#: from 0.09 to 0.14 and its tree depth from 6 to 5. Without a cap (up to ~5.5 on Zipf),
#: the first 300 warm-up iterations took 146,000 leapfrog steps, against 35,000 at 1.5.
TAIL_SHARPNESS_MAX = 3.0
#: ... and every item up to this. Uncapped (up to ~6 for the items measured at 100 sds),
#: bayes-dirichlet diverged once in 2000 draws on the papers' Zipf setting (seed 0;
#: seeds 1-3: none); capped at 4, none on seeds 0-3, with a larger tuned step (0.174-0.179
#: against 0.162-0.166) and a better worst-item ESS (348-453 against 285-367).
SHARPNESS_MAX = 4.0
#: The kink sits this many noise standard deviations below the item's peak ...
KINK_SDS = 2.0
#: ... but not below this fraction of one standard deviation.
KINK_FLOOR = 0.25
#: Items whose raw estimate is below this many standard deviations start in the tail.
START_Z = 2.0
#: Kink of the ignored reference slot. Its terms are multiplied by zero, so any finite
#: value gives the same log-density and gradient; a far one (it was -1000) overflows
#: ``exp`` inside the branches of JAX's softplus, whose gradient is then NaN (0 * inf),
#: and NumPyro diverged on every transition.
_REFERENCE_KINK = 0.0
#: Range of the starting log-concentration (:func:`concentration_start`).
LOG_START_RANGE = (-10.0, 5.0)


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
        ``START_Z`` standard deviations start just inside the tail) and ``sharpness``
        (the kink's, :func:`kink_sharpness` at the moment estimate of the concentration,
        :func:`concentration_start`).
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
    sharpness = kink_sharpness(concentration_start(m), width, kink, in_tail)
    reference = np.zeros(f.size)
    reference[ref] = 1.0
    centre[ref], width[ref], kink[ref], start[ref] = 0.0, 1.0, _REFERENCE_KINK, 0.0
    sharpness[ref] = KINK_SHARPNESS
    return {
        "reference": reference,
        "centre": centre,
        "width": width,
        "kink": kink,
        "start": start,
        "sharpness": sharpness,
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
    gradient costs no more than with one sharpness. (Making it a function of the sampled
    concentration costs 2.4x per gradient at d = 42,178.) Where the posterior
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

        y_v = c_v + w_v u_v - \frac{1}{k_v \alpha_v}
        \log\left(1 + e^{-k_v (u_v - \kappa_v)}\right),
        \qquad u_v = t_v + s_v,

    with :math:`c_v` the log-ratio of the item's raw estimate (at least one noise
    standard deviation), :math:`w_v` its relative noise (at most 1), :math:`\kappa_v` a
    kink where the likelihood has flattened out and :math:`s_v` a starting offset
    (:func:`parametrization_hints`), :math:`k_v` the kink's sharpness
    (:func:`kink_sharpness`: sharp enough that the tail's slope does not reach the peak).
    Above the kink :math:`y_v \approx c_v + w_v u_v`, so the likelihood's peak has unit
    scale in :math:`u_v`; below it the slope is :math:`\approx 1/\alpha_v`, so the
    prior's tail :math:`e^{\alpha_v y_v}` has unit scale too, whatever :math:`\alpha_v`
    is (no funnel with the concentration, no scale of :math:`1/\alpha` to cross). The
    Jacobian :math:`\prod_{v \ne r} (w_v + \alpha_v^{-1}\sigma(-k_v(u_v - \kappa_v)))`
    enters the
    log-density, so the law of ``f`` is exactly Dirichlet(``alpha``). The free vector
    :math:`t` has length ``d``: the reference item's slot is not used and has a standard
    normal law, so no index arrays enter the graph.

    Parameters
    ----------
    name : str
        Name of the frequency vector (a ``Deterministic``); the free coordinates are
        ``{name}_t`` and the hints ``pm.Data`` named ``{name}_reference``,
        ``{name}_centre``, ``{name}_width``, ``{name}_kink``, ``{name}_start`` and
        ``{name}_sharpness``;
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

    from bayesldp.models.special import gammaln

    d = check_measurement(measurement, "measurement").domain_size
    hints = {
        key: pm.Data(f"{name}_{key}", value)
        for key, value in parametrization_hints(measurement).items()
    }
    alpha = pt.as_tensor_variable(alpha)
    k = hints["sharpness"]
    free = 1.0 - hints["reference"]
    t = pm.Flat(f"{name}_t", shape=d)
    u = t + hints["start"]
    inv_a = 1.0 / alpha
    z = k * (u - hints["kink"])
    y = free * (hints["centre"] + hints["width"] * u - inv_a * pt.softplus(-z) / k)
    log_jac = pt.sum(free * pt.log(hints["width"] + inv_a * pt.sigmoid(-z)))
    log_f = y - pt.logsumexp(y)
    f = pm.Deterministic(name, pt.exp(log_f), dims=dims)
    follow_measurement(
        pm.modelcontext(None), f"{name}_hints", lambda model, m: set_hints(model, name, m)
    )
    if alpha.ndim == 0:
        log_prior = alpha * pt.sum(log_f) + gammaln(d * alpha) - d * gammaln(alpha)
    else:
        log_prior = pt.sum(alpha * log_f) + gammaln(pt.sum(alpha)) - pt.sum(gammaln(alpha))
    unused = -0.5 * pt.sum(hints["reference"] * t**2) - 0.5 * np.log(2 * np.pi)
    pm.Potential(f"{name}_prior", log_prior + log_jac + unused)
    return f


def concentration_start(m: Measurement) -> float:
    r"""Return a moment estimate of :math:`\log a`, where the samplers start the concentration.

    Under :math:`f \sim \mathrm{Dirichlet}(a \mathbf 1_d)`,
    :math:`E \sum_v f_v^2 = (1 + a) / (1 + d a)`; the sum is estimated without bias by
    :math:`\sum_v (\hat f_v^2 - \widehat{\mathrm{Var}}\,\hat f_v)` (at least
    :math:`\max_v \hat f_v^2`) and the equation solved for :math:`a`, clipped to
    :data:`LOG_START_RANGE` in :math:`\log a`. It only chooses where the chains start:
    on word-frequency data (d = 42,178) the posterior of :math:`\log a` has, besides its
    mode near :math:`a = 0.004`, a local mode near :math:`a = 1` of negligible mass
    that traps a chain started there (measured: r_hat 2.15), and PyMC's default start is
    the prior's mean, :math:`a = 1`.

    Parameters
    ----------
    m : Measurement
        Its raw estimates and their plug-in variances give the moment estimate.

    Returns
    -------
    float
        The starting value of :math:`\log a`, within :data:`LOG_START_RANGE`.
    """
    check_measurement(m)
    f, d = m.estimates, m.domain_size
    low, high = LOG_START_RANGE
    if d < 2:
        return 0.0
    square_sum = max(float(np.sum(f * f - m.variance())), float(f.max()) ** 2)
    excess = square_sum * d - 1.0
    if excess <= 0:
        return high
    a = (1.0 - square_sum) / excess
    return low if a <= 0 else float(np.clip(np.log(a), low, high))


def log_concentration(name: str, concentration_prior: tuple[float, float], measurement):
    r"""Add :math:`\log a \sim \mathcal N(\mu_0, s_0^2)`, sampled from a data-driven start.

    The free variable is ``{name}_offset`` :math:`= \log a - s` with ``s`` =
    :func:`concentration_start` (``pm.Data`` ``{name}_start``; the law of
    :math:`\log a` does not depend on it) and initial value 0, so every chain starts
    near the measurement's moment estimate instead of the prior's mean.

    Parameters
    ----------
    name : str
        Name of the log-concentration (a ``Deterministic``).
    concentration_prior : (float, float)
        Mean and standard deviation of its normal prior.
    measurement : Measurement
        Chooses the start (:func:`set_concentration_start` moves it to another).

    Returns
    -------
    TensorVariable
        :math:`\log a`, a scalar.
    """
    import pymc as pm

    mu, sd = check_normal_prior(concentration_prior, "concentration_prior")
    start = pm.Data(f"{name}_start", concentration_start(measurement))
    offset = pm.Normal(f"{name}_offset", mu - start, sd, initval=0.0)
    log_a = pm.Deterministic(name, start + offset)
    follow_measurement(
        pm.modelcontext(None),
        f"{name}_start",
        lambda model, m: set_concentration_start(model, name, m),
    )
    return log_a


def set_concentration_start(model, name: str, measurement: Measurement) -> None:
    """Move the start of :func:`log_concentration` ``name`` to another measurement.

    Run by :func:`bayesldp.models.fit` like :func:`set_hints`; only a model sampled
    without ``fit`` needs it called by hand.

    Parameters
    ----------
    model : pymc.Model
        A model holding ``log_concentration(name, ...)``.
    name : str
        The log-concentration's name.
    measurement : Measurement
        Its :func:`concentration_start` becomes the new start.
    """
    import pymc as pm

    pm.set_data({f"{name}_start": concentration_start(measurement)}, model=model)


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


def check_normal_prior(value, name: str) -> tuple[float, float]:
    """Return ``(mean, sd)`` of a normal prior, or raise ValueError naming ``name``.

    Parameters
    ----------
    value : (float, float)
        The prior's mean (finite) and standard deviation (positive).
    name : str
        The argument's name, for the error message.
    """
    try:
        mu, sd = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (mean, sd), got {value!r}") from None
    return check_float(mu, name), check_float(sd, name, minimum=0.0, strict_minimum=True)


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


def dirichlet_draws(alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Dirichlet draw per row of ``alpha``, exact even when the concentrations are tiny.

    ``log Gamma(a) = log Gamma(a + 1) + log(U) / a`` (U uniform) keeps the log-gammas
    finite where ``Gamma(a)`` itself underflows to zero.

    Parameters
    ----------
    alpha : numpy.ndarray
        Positive concentrations, shape ``(..., d)``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Same shape as ``alpha``, each row on the simplex.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    log_g = np.log(rng.standard_gamma(alpha + 1)) + np.log(rng.random(alpha.shape)) / alpha
    log_g -= log_g.max(axis=-1, keepdims=True)
    w = np.exp(log_g)
    return w / w.sum(axis=-1, keepdims=True)


def bayes_dirichlet(
    m: Measurement,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    sampler: str = "auto",
    rng=None,
    concentration_prior: tuple[float, float] = (0.0, 2.0),
    kind: str = "auto",
    warmup_tree_depth: int | None = None,
) -> Estimate:
    r"""Posterior mean under a symmetric Dirichlet prior with a hyperprior on its concentration.

    .. math::

        \log a \sim \mathcal N(\mu_0, s_0^2), \quad
        f \sim \mathrm{Dirichlet}(a \mathbf 1_d), \quad
        c \mid f \sim \begin{cases}
            \mathrm{Multinomial}(n, q + (p-q) f) & \text{GRR} \\
            \prod_v \mathrm{Binomial}(n, q + (p-q) f_v) & \text{otherwise}
        \end{cases}

    sampled with HMC (by default jittered static HMC, ``sampler``) in the coordinates of
    :func:`dirichlet_simplex`.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    draws, tune, chains : int
        Sampler settings, per chain.
    sampler : {"auto", "numpyro-hmc", "numpyro", "nutpie", "pymc"}
        See :func:`bayesldp.models.fit`; ``"auto"`` takes the first installed of
        :data:`~bayesldp.models.fitting.READY_MADE_SAMPLERS` (jittered static HMC first,
        checked on this model: ``paper/bayes.md``).
    rng : numpy.random.Generator, int or None
        Seeds the sampler (same seed, same result).
    concentration_prior : (float, float), default (0, 2)
        Mean and standard deviation of the normal prior on :math:`\log a`.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood (:func:`ldp_likelihood`).
    warmup_tree_depth : int, optional
        With ``sampler="numpyro"``: NumPyro's largest NUTS tree depth during warm-up (the
        draws keep NumPyro's 10); faster at large d, at a cost in the hardest items'
        mixing: see :func:`bayesldp.models.fit`. Default: NumPyro's 10 throughout.

    Returns
    -------
    Estimate
        Method ``"bayes-dirichlet"``: non-negative frequencies summing to 1, posterior
        draws on the simplex, diagnostics as :func:`bayesldp.models.fit`, plus
        ``info["a_mean"]``, ``info["a_sd"]`` and ``info["prior_sampler"]``.
    """
    check_measurement(m)
    prior = check_normal_prior(concentration_prior, "concentration_prior")
    kind = resolve_kind(m, kind)
    rng = check_rng(rng, "rng")
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_int(value, name, minimum=0 if name == "tune" else 1)
    if warmup_tree_depth is not None:
        check_int(warmup_tree_depth, "warmup_tree_depth", minimum=1)
    start = time.perf_counter()
    model = cached_model(
        ("dirichlet", m.domain_size, kind, prior),
        lambda: build_dirichlet_model(m, concentration_prior=prior, kind=kind),
    )
    est = fit(
        model, m, var_name="f", draws=draws, tune=tune, chains=chains,
        sampler=resolve_sampler(sampler, READY_MADE_SAMPLERS),
        random_seed=rng, method="bayes-dirichlet", warmup_tree_depth=warmup_tree_depth,
    )  # fmt: skip
    a = est.inference_data.posterior["a"].values.ravel()
    info = {
        "a_mean": float(a.mean()),
        "a_sd": float(a.std()),
        "concentration_prior": prior,
        "kind": kind,
        "prior_sampler": prior_sampler(prior, m.domain_size),
        "seconds_total": time.perf_counter() - start,
    }
    return replace(est, info={**est.info, **info})
