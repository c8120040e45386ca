"""The PyMC model of ``bayes-consistent``'s ``(s, log c)`` and its sampling.

:func:`build_scale_model` writes the interpolated log target as a PyMC model in
whitened coordinates; :func:`sample_scale` samples it and checks the draws.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from bayesldp.measurement import Measurement
from bayesldp.models._settings import SamplerSettings
from bayesldp.models.consistent._exact_total import Problem
from bayesldp.models.consistent._region import (
    DEGREES,
    MAX_ERROR,
    ScaleModelSpec,
    prepare,
    prior_extent,
)
from bayesldp.models.consistent._target import chebval2d_tensor
from bayesldp.models.diagnostics import convergence_info, warn_at_bounds
from bayesldp.models.fitting import sample_parameters

logger = logging.getLogger(__name__)

#: NUTS's target acceptance for (s, log c). The log target falls steeply off its ridge
#: (hundreds of nats within a few whitened sds); at PyMC's default 0.8 a rare trajectory
#: diverges there, and a smaller step avoids it at little cost.
TARGET_ACCEPT = 0.9
#: Posterior draws of (s, c) at which item posteriors are computed, by default.
EXPONENT_POINTS = 8
EXACT_EXPONENT_POINTS = 64


@dataclass
class ScalePosterior:
    """NUTS draws of the exponent ``s`` and log-scale ``log_c`` with diagnostics."""

    s: np.ndarray
    log_c: np.ndarray
    idata: object
    problem: Problem
    info: dict


def build_scale_model(spec: ScaleModelSpec):
    r"""Build the PyMC model of the prior's exponent and scale given the estimates and total.

    .. math::

        (s, \log c) &= \hat\theta + L z, \qquad
        z \sim \mathrm{Uniform}(R), \quad
        R = Z \cap \{z : s \in [s_{lo}, s_{hi}],\ \log c \in [u_{lo}, u_{hi}]\},
        \\
        \log p(\tilde f, \textstyle\sum x = n \mid s, c) &= G(s, c)
        \quad \text{(see :func:`bayesldp.models.consistent._exact_total.log_target`)}

    where :math:`\hat\theta` is the whitening centre, :math:`L L^T` the whitening
    covariance (``L`` lower triangular) and ``Z`` the rectangle found to hold the
    posterior (:func:`find_region`): a flat prior on ``(s, log c)`` within the bounds,
    sampled in whitened coordinates. The region is written as ``z0`` uniform on its
    extent and ``z1`` uniform on the interval that ``z0`` leaves, each through PyMC's
    interval transform, with a potential that cancels the conditional uniform's varying
    density. NUTS therefore never meets a wall of zero density: with ``-inf`` outside
    the bounds instead, posteriors near a bound of ``s`` gave hundreds of divergent
    transitions.

    Parameters
    ----------
    spec : ScaleModelSpec
        Region, whitening and interpolant, as :func:`prepare` returns them; everything
        that depends on the measurement enters the model as data.

    Returns
    -------
    pymc.Model
    """
    import pymc as pm
    import pytensor.tensor as pt

    problem, fit = spec.problem, spec.fit
    # The coefficients are padded to the largest degree, so every measurement compiles to
    # the same code whatever degree its interpolant needed.
    k = max(max(DEGREES), fit.coef.shape[0])
    coef_padded = np.zeros((k, k))
    coef_padded[: fit.coef.shape[0], : fit.coef.shape[1]] = fit.coef
    coords = {
        "item": np.arange(problem.y.size),
        "whitened": ["z_s", "z_c"],
        "theta": ["s", "log_c"],
        "theta_": ["s", "log_c"],
        "end": ["lo", "hi"],
        "cheb_s": np.arange(k),
        "cheb_c": np.arange(k),
    }
    with pm.Model(coords=coords) as model:
        pm.Data("count_estimate", problem.y, dims="item")
        # Everything that depends on the measurement enters as data (shared variables), not
        # as constants: constants are folded into the compiled C code, so every new
        # measurement would compile anew; with data the compiled code is reused.
        z0_ends = pm.Data("z_s_range", np.array(spec.z0_range()), dims="end")
        z1_box = pm.Data("z_c_box", np.array(spec.box[1]), dims="end")
        z0_box = pm.Data("z_s_box", np.array(spec.box[0]), dims="end")
        u_ends = pm.Data("log_c_bounds", np.array(spec.u_bounds), dims="end")
        data = replace(
            spec,
            mode=pm.Data("mode", spec.mode, dims="theta"),
            chol=pm.Data("chol", spec.chol, dims=("theta", "theta_")),
            u_bounds=(u_ends[0], u_ends[1]),
            box=(spec.box[0], (z1_box[0], z1_box[1])),
        )
        coef = pm.Data("chebyshev_coef", coef_padded, dims=("cheb_s", "cheb_c"))
        lo0, hi0 = z0_ends[0], z0_ends[1]
        z0 = pm.Uniform("z_s", lo0, hi0)
        lo1, hi1 = data.z1_range(z0, xp=pt)
        z1 = pm.Uniform("z_c", lo1, hi1)
        # flat on the region: undo Uniform's -log(width) terms
        pm.Potential("flat_prior", pt.log(hi1 - lo1) + pt.log(hi0 - lo0))
        pm.Deterministic("z", pt.stack([z0, z1]), dims="whitened")
        s_t, u_t = data.to_theta(z0, z1)
        pm.Deterministic("s", s_t)
        log_c = pm.Deterministic("log_c", u_t)
        pm.Deterministic("c", pm.math.exp(log_c))
        a = (2 * z0 - (z0_box[0] + z0_box[1])) / (z0_box[1] - z0_box[0])
        b = (2 * z1 - (z1_box[0] + z1_box[1])) / (z1_box[1] - z1_box[0])
        pm.Potential("loglik", chebval2d_tensor(a, b, coef))
    return model


def initial_point(spec: ScaleModelSpec) -> dict[str, float]:
    """Return the region's point nearest the whitening centre, kept off the edges."""
    lo0, hi0 = spec.z0_range()
    margin = 0.01 * (hi0 - lo0)
    z0 = float(np.clip(0.0, lo0 + margin, hi0 - margin))
    lo1, hi1 = spec.z1_range(z0)
    margin = 0.01 * (hi1 - lo1)
    return {"z_s": z0, "z_c": float(np.clip(0.0, lo1 + margin, hi1 - margin))}


def sample_scale(
    m: Measurement,
    *,
    s_bounds: tuple[float, float],
    c_bounds: tuple[float, float] | None,
    settings: SamplerSettings,
    rng: np.random.Generator,
    degrees: tuple[int, ...] = DEGREES,
    exact: bool | None = None,
) -> ScalePosterior:
    """Sample ``(s, log c)`` with NUTS; warn on poor convergence.

    The log target is evaluated exactly at the Chebyshev points of a region that holds
    the posterior (:func:`prepare`), in whitened coordinates, and interpolated there;
    NUTS samples those coordinates inside the region (a warning says when draws come
    near a side of it that the prior's bounds do not cut).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    s_bounds : (float, float)
        Support of the exponent's uniform prior.
    c_bounds : (float, float) or None
        Support of the scale; None for :func:`default_c_bounds`.
    settings : SamplerSettings
        How to sample; its ``target_accept`` defaults to :data:`TARGET_ACCEPT`.
    rng : numpy.random.Generator
        Randomness of the whole fit; the sampler's seed is drawn from it.
    degrees : tuple of int, default ``DEGREES``
        Chebyshev degrees tried in turn (:func:`prepare`).
    exact : bool, optional
        Force or forbid the exact computations of small problems (:func:`prepare`).

    Returns
    -------
    ScalePosterior
        The draws of ``s`` and ``log c`` with the inference data and diagnostics.
    """
    seed = int(rng.integers(2**31 - 1))
    target_accept = TARGET_ACCEPT if settings.target_accept is None else settings.target_accept
    start = time.perf_counter()
    spec = prepare(m, s_bounds, c_bounds, degrees, exact)
    problem, fit, mode, cov = spec.problem, spec.fit, spec.mode, spec.cov
    (s_lo, s_hi), (u_lo, u_hi) = spec.s_bounds, spec.u_bounds
    c_lo, c_hi = math.exp(u_lo), math.exp(u_hi)
    built = time.perf_counter()
    idata = sample_parameters(
        build_scale_model(spec), settings, seed, target_accept=TARGET_ACCEPT,
        initvals=initial_point(spec),
    )  # fmt: skip
    sampled = time.perf_counter()
    info = convergence_info(idata, ["s", "log_c"], stacklevel=4)
    s_draws = idata.posterior["s"].values.ravel()
    u_draws = idata.posterior["log_c"].values.ravel()
    z_draws = idata.posterior["z"].values.reshape(-1, 2)
    extent = prior_extent(spec.mode, spec.chol, spec.s_bounds, spec.u_bounds)
    near = np.zeros(z_draws.shape[0], dtype=bool)
    for axis in (0, 1):
        lo, hi = spec.box[axis]
        width = hi - lo
        if lo > extent[axis, 0]:
            near |= z_draws[:, axis] < lo + 0.05 * width
        if hi < extent[axis, 1]:
            near |= z_draws[:, axis] > hi - 0.05 * width
    if near.mean() > 0.01:
        warnings.warn(
            f"{near.mean():.1%} of the draws are near the edge of the sampling region; it "
            "may not hold the whole posterior",
            RuntimeWarning,
            stacklevel=3,
        )
    warn_at_bounds(s_draws, (s_lo, s_hi), "s_bounds", stacklevel=4)
    warn_at_bounds(u_draws, (u_lo, u_hi), "c_bounds (log scale)", stacklevel=4)
    info.update(
        {
            "mode": {"s": float(mode[0]), "c": float(math.exp(mode[1]))},
            "whitening_cov": cov.tolist(),
            "sampling_box": [list(b) for b in spec.box],
            "exact_total": problem.exact,
            "chebyshev_max_error": fit.max_error,
            "chebyshev_degree": fit.coef.shape[0],
            "s_bounds": (s_lo, s_hi),
            "c_bounds": (c_lo, c_hi),
            "target_accept": target_accept,
            "settings": settings,
            "s_mean": float(s_draws.mean()),
            "s_sd": float(s_draws.std()),
            "log_c_mean": float(u_draws.mean()),
            "log_c_sd": float(u_draws.std()),
            "c_median": float(np.exp(np.median(u_draws))),
            "seconds_likelihood": built - start,
            "seconds_sampling": sampled - built,
        }
    )
    if fit.max_error > MAX_ERROR:
        warnings.warn(
            f"the log target's interpolation error is {fit.max_error:.3g} nats",
            RuntimeWarning,
            stacklevel=3,
        )
    return ScalePosterior(s_draws, u_draws, idata, problem, info)
