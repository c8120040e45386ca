r"""The concentration of the Dirichlet models: its normal prior, where chains start, exact draws.

Shared by :func:`bayesldp.models.bayes_dirichlet` and :func:`bayesldp.models.bayes_hier`
(and usable in a model of your own): :func:`log_concentration` adds
:math:`\log a \sim \mathcal N(\mu_0, s_0^2)` sampled from a data-driven start,
:func:`concentration_start` is that start, :func:`dirichlet_draws` draws from a
Dirichlet law exactly even at tiny concentrations (the models' prior samplers).
"""

from __future__ import annotations

import numpy as np

from bayesldp._validation import check_float
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models.likelihood import follow_measurement

#: Range of the starting log-concentration (:func:`concentration_start`).
LOG_START_RANGE = (-10.0, 5.0)


def concentration_start(m: Measurement) -> float:
    r"""Return a moment estimate of :math:`\log a`, where the samplers start the concentration.

    Under :math:`f \sim \mathrm{Dirichlet}(a \mathbf 1_d)`,
    :math:`E \sum_v f_v^2 = (1 + a) / (1 + d a)`; the sum is estimated without bias by
    :math:`\sum_v (\hat f_v^2 - \widehat{\mathrm{Var}}\,\hat f_v)` (at least
    :math:`\max_v \hat f_v^2`) and the equation solved for :math:`a`, clipped to
    :data:`LOG_START_RANGE` in :math:`\log a`. It only chooses where the chains start:
    on heavy-tailed data with many items the posterior of :math:`\log a` can have,
    besides its main mode at a small concentration, a local mode near :math:`a = 1` of
    negligible mass that traps a chain started there, and PyMC's default start is the
    prior's mean, :math:`a = 1`.

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
