"""A consistent Bayesian frequency oracle: a shifted power-law prior conditioned on the total.

The counts of ``d`` items sum to ``n``. Conditioning a prior on the counts on that
total puts the posterior on the (scaled) simplex, so its mean is non-negative and sums
to 1 without a Norm-Sub step.

The prior is a shifted power law (a discrete Lomax law) on ``0..n``,
:math:`P(x) \\propto (1 + x/c)^{-s}`: a power law in its tail, like Calibrate's, but
with a scale ``c`` below which it is flat. Calibrate's :math:`x^{-s}` on ``1..n`` puts
most of its mass on counts of a few users; with Zipf data the smallest counts are
tens of users, and the pure power law's unconditioned posterior means sum to about
0.9 (``bayes-power``). The scale lets the prior's low end move to where the data
are, and the known total is what tells the model where that is: the posterior of
``(s, c)`` includes the probability that the counts add up to ``n``.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize

from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.models import lomax as S
from bayesldp.models.sampling import (
    check_sampler_args,
    convergence_info,
    sample_counts,
    seeds,
    warn_at_bounds,
)

logger = logging.getLogger(__name__)

#: Half-width of the sampling box around the mode, in Laplace standard deviations.
BOX_SD = 6.0
#: Chebyshev degrees tried in turn until the interpolation error is below MAX_ERROR nats.
DEGREES = (16, 24, 32)
MAX_ERROR = 0.01


@dataclass
class ScalePosterior:
    """NUTS draws of the exponent ``s`` and log-scale ``log_c`` with diagnostics."""

    s: np.ndarray
    log_c: np.ndarray
    idata: object
    problem: S.Problem
    info: dict


def _check_bounds(bounds, name: str, positive: bool) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi), got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or (positive and lo <= 0):
        kind = "0 < lo < hi" if positive else "lo < hi"
        raise ValueError(f"{name} must satisfy {kind}, got {bounds!r}")
    return lo, hi


def find_mode(problem: S.Problem, s_bounds, u_bounds) -> tuple[np.ndarray, np.ndarray]:
    """Mode of the parameters' log target and its Laplace covariance.

    The target is :func:`bayesldp.models.lomax.log_target` under the flat prior on
    ``(s, log c)`` within the bounds. The covariance is the inverse of the negative
    Hessian (central differences); a mode on a bound gets that bound's full width.
    """

    def neg(theta):
        return -S.log_target(problem, float(theta[0]), float(theta[1]))

    starts = [
        (s, u) for s in np.linspace(*s_bounds, 5)[1:-1] for u in np.linspace(*u_bounds, 5)[1:-1]
    ]
    start = min(starts, key=neg)
    res = optimize.minimize(
        neg, np.asarray(start), method="L-BFGS-B", bounds=[s_bounds, u_bounds],
        options={"eps": 1e-5},
    )  # fmt: skip
    mode = res.x
    h = np.array([1e-3, 1e-2])
    hess = np.empty((2, 2))
    f0 = neg(mode)
    lows, highs = np.array([s_bounds[0], u_bounds[0]]), np.array([s_bounds[1], u_bounds[1]])
    mode = np.clip(mode, lows + 2 * h, highs - 2 * h)
    for i in range(2):
        for j in range(2):
            ei, ej = np.eye(2)[i] * h[i], np.eye(2)[j] * h[j]
            if i == j:
                hess[i, i] = (neg(mode + ei) - 2 * f0 + neg(mode - ei)) / h[i] ** 2
            else:
                hess[i, j] = (
                    neg(mode + ei + ej) - neg(mode + ei - ej)
                    - neg(mode - ei + ej) + neg(mode - ei - ej)
                ) / (4 * h[i] * h[j])  # fmt: skip
    hess = (hess + hess.T) / 2
    try:
        cov = np.linalg.inv(hess)
        if np.any(np.linalg.eigvalsh(cov) <= 0):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        cov = np.diag((highs - lows) ** 2)
    return mode, cov


@dataclass(frozen=True)
class ScaleModelSpec:
    """Everything the PyMC model of ``(s, log c)`` is built from.

    ``(s, log c) = mode + chol @ z`` with ``z`` in ``[-BOX_SD, BOX_SD]^2`` (whitened by
    the Laplace covariance), and ``fit`` interpolates the log target in ``z``.
    """

    problem: S.Problem
    mode: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    fit: S.Chebyshev2D
    s_bounds: tuple[float, float]
    u_bounds: tuple[float, float]

    def to_theta(self, z0, z1):
        """Map whitened coordinates to ``(s, log c)`` (works on numbers and tensors)."""
        return (
            self.mode[0] + self.chol[0, 0] * z0,
            self.mode[1] + self.chol[1, 0] * z0 + self.chol[1, 1] * z1,
        )

    def z0_range(self) -> tuple[float, float]:
        """The values of ``z0`` for which some ``z1`` gives a point of the region.

        The region is the sampling box intersected with the prior's bounds on
        ``(s, log c)``: a convex polygon, whose extent in ``z0`` two linear programs
        find.
        """
        (s_lo, s_hi), (u_lo, u_hi) = self.s_bounds, self.u_bounds
        (m0, m1), L = self.mode, self.chol
        # rows: s <= s_hi, -s <= -s_lo, u <= u_hi, -u <= -u_lo, as A @ z <= b
        A = np.array([[L[0, 0], 0.0], [-L[0, 0], 0.0], [L[1, 0], L[1, 1]], [-L[1, 0], -L[1, 1]]])
        b = np.array([s_hi - m0, m0 - s_lo, u_hi - m1, m1 - u_lo])
        box = [(-BOX_SD, BOX_SD)] * 2
        ends = []
        for sign in (1.0, -1.0):
            res = optimize.linprog([sign, 0.0], A_ub=A, b_ub=b, bounds=box, method="highs")
            if res.status != 0:
                raise RuntimeError(f"no point of the sampling box is inside the bounds: {res}")
            ends.append(float(res.x[0]))
        return ends[0], ends[1]

    def z1_range(self, z0, xp=np):
        """The interval of ``z1`` inside the region, given ``z0`` (numbers or tensors)."""
        (u_lo, u_hi), (m1, L) = self.u_bounds, (self.mode[1], self.chol)
        lo = (u_lo - m1 - L[1, 0] * z0) / L[1, 1]
        hi = (u_hi - m1 - L[1, 0] * z0) / L[1, 1]
        return xp.maximum(lo, -BOX_SD), xp.minimum(hi, BOX_SD)


def prepare(
    m: Measurement,
    s_bounds: tuple[float, float] = (0.5, 8.0),
    c_bounds: tuple[float, float] = (0.01, 1e4),
    degrees: tuple[int, ...] = DEGREES,
) -> ScaleModelSpec:
    """Find the mode, whiten, and interpolate the log target (see :func:`sample_scale`).

    The interpolant's degree is the first of ``degrees`` whose error at off-node
    check points is below ``MAX_ERROR`` (the last one otherwise; the caller warns).
    """
    s_lo, s_hi = _check_bounds(s_bounds, "s_bounds", positive=True)
    c_lo, c_hi = _check_bounds(c_bounds, "c_bounds", positive=True)
    u_bounds = (math.log(c_lo), math.log(c_hi))
    problem = S.Problem.from_counts(m.estimates * m.n, m.sigma * m.n, m.n)
    mode, cov = find_mode(problem, (s_lo, s_hi), u_bounds)
    chol = np.linalg.cholesky(cov)

    def target(z0, z1):
        s = mode[0] + chol[0, 0] * z0
        u = mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
        return S.log_target(problem, s, u)

    box = (-BOX_SD, BOX_SD)
    for deg in degrees:
        fit = S.chebyshev_fit(target, box, box, degree=deg)
        if fit.max_error < MAX_ERROR:
            break
    return ScaleModelSpec(problem, mode, cov, chol, fit, (s_lo, s_hi), u_bounds)


def build_scale_model(spec: ScaleModelSpec):
    r"""The PyMC model of the prior's exponent and scale given the estimates and total.

    .. math::

        (s, \log c) &= \hat\theta + L z, \qquad
        z \sim \mathrm{Uniform}(R), \quad
        R = [-B, B]^2 \cap \{z : s \in [s_{lo}, s_{hi}],\ \log c \in [u_{lo}, u_{hi}]\},
        \\
        \log p(\tilde f, \textstyle\sum x = n \mid s, c) &= G(s, c)
        \quad \text{(see :func:`bayesldp.models.lomax.log_target`)}

    where :math:`\hat\theta` is the mode and :math:`L L^T` the Laplace covariance (``L``
    lower triangular): a flat prior on ``(s, log c)`` within the bounds, sampled in
    whitened coordinates. The region is written as ``z0`` uniform on its extent and
    ``z1`` uniform on the interval that ``z0`` leaves, each through PyMC's interval
    transform, with a potential that cancels the conditional uniform's varying
    density. NUTS therefore never meets a wall of zero density: with ``-inf`` outside
    the bounds instead, posteriors near a bound of ``s`` gave hundreds of divergent
    transitions.
    """
    import pymc as pm
    import pytensor.tensor as pt

    problem, fit = spec.problem, spec.fit
    k = fit.coef.shape[0]
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
        # measurement would compile anew (about 10 s); with data the code is reused.
        z0_ends = pm.Data("z_s_range", np.array(spec.z0_range()), dims="end")
        u_ends = pm.Data("log_c_bounds", np.array(spec.u_bounds), dims="end")
        data = replace(
            spec,
            mode=pm.Data("mode", spec.mode, dims="theta"),
            chol=pm.Data("chol", spec.chol, dims=("theta", "theta_")),
            u_bounds=(u_ends[0], u_ends[1]),
        )
        coef = pm.Data("chebyshev_coef", fit.coef, dims=("cheb_s", "cheb_c"))
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
        a, b = fit.to_unit(z0, z1)
        pm.Potential("loglik", S.chebval2d_tensor(a, b, coef))
    return model


def _initial_point(spec: ScaleModelSpec) -> dict[str, float]:
    """The point of the region nearest the mode along each coordinate, kept off the edges."""
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
    c_bounds: tuple[float, float],
    draws: int,
    tune: int,
    chains: int,
    rng,
    progressbar: bool,
    degrees: tuple[int, ...] = DEGREES,
) -> tuple[ScalePosterior, np.random.Generator]:
    """Sample ``(s, log c)`` with NUTS; warn on poor convergence.

    The log target is evaluated exactly at the Chebyshev points of a box of
    ``BOX_SD`` Laplace standard deviations around the mode, in coordinates whitened by
    the Laplace covariance, and interpolated there; NUTS samples those coordinates
    inside the box, which holds all but a negligible part of the posterior (a warning
    says when draws come near its edges).
    """
    import pymc as pm

    check_sampler_args(draws, tune, chains)
    seed, rng = seeds(rng)
    start = time.perf_counter()
    spec = prepare(m, s_bounds, c_bounds, degrees)
    problem, fit, mode, cov = spec.problem, spec.fit, spec.mode, spec.cov
    (s_lo, s_hi), (u_lo, u_hi) = spec.s_bounds, spec.u_bounds
    c_lo, c_hi = math.exp(u_lo), math.exp(u_hi)
    built = time.perf_counter()
    with build_scale_model(spec):
        idata = pm.sample(
            draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
            progressbar=progressbar, compute_convergence_checks=False,
            initvals=_initial_point(spec),
        )  # fmt: skip
    sampled = time.perf_counter()
    info = convergence_info(idata, ["s", "log_c"], chains, stacklevel=4)
    s_draws = idata.posterior["s"].values.ravel()
    u_draws = idata.posterior["log_c"].values.ravel()
    z_draws = idata.posterior["z"].values.reshape(-1, 2)
    near = np.abs(z_draws).max(axis=1) > 0.9 * BOX_SD
    if near.mean() > 0.01:
        warnings.warn(
            f"{near.mean():.1%} of the draws are near the edge of the sampling box; the "
            "posterior is far from its Laplace approximation",
            RuntimeWarning,
            stacklevel=3,
        )
    warn_at_bounds(s_draws, (s_lo, s_hi), "s_bounds", stacklevel=4)
    warn_at_bounds(u_draws, (u_lo, u_hi), "c_bounds (log scale)", stacklevel=4)
    info.update(
        {
            "mode": {"s": float(mode[0]), "c": float(math.exp(mode[1]))},
            "laplace_cov": cov.tolist(),
            "chebyshev_max_error": fit.max_error,
            "chebyshev_degree": fit.coef.shape[0],
            "s_bounds": (s_lo, s_hi),
            "c_bounds": (c_lo, c_hi),
            "s_mean": float(s_draws.mean()),
            "s_sd": float(s_draws.std()),
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
    return ScalePosterior(s_draws, u_draws, idata, problem, info), rng


def tilt(problem: S.Problem, s: float, c: float, span: float):
    """Condition one prior on the total by exponential tilting.

    Returns ``(shift, mean, var)``: the shift of every count estimate whose posterior
    means sum to ``n``, and the items' posterior means and variances there.
    """
    mom = problem.moments(s, c, pad=span)
    y, n = problem.y, problem.n

    def excess(shift: float) -> float:
        return float(mom.mean(y + shift).sum() - n)

    if excess(-span) > 0 or excess(span) < 0:
        raise RuntimeError(
            f"no tilt within +-{span / problem.sigma_c:.0f} sigma makes the expected counts "
            "sum to n; the shifted power-law prior does not fit these data"
        )
    shift = optimize.brentq(excess, -span, span, xtol=1e-9 * problem.sigma_c)
    return shift, mom.mean(y + shift), mom.variance(y + shift)


def condition_on_total(x: np.ndarray, var: np.ndarray, n: int) -> np.ndarray:
    r"""Move independent draws of the counts onto ``sum(x) = n``; return frequencies.

    Each row's excess over ``n`` is taken from the items in proportion to their
    variances, :math:`x_v - (v_v / \sum_u v_u)(\sum_u x_u - n)`: exactly how a vector of
    independent Gaussians is conditioned on its sum. (Dividing each row by its total
    instead would scale the largest items by the noise of all the others and make
    their intervals too wide.) The rare negative values this leaves are set to zero
    and the row is renormalised.
    """
    excess = x.sum(axis=1, keepdims=True) - n
    out = x - (var / var.sum())[None, :] * excess
    np.maximum(out, 0.0, out=out)
    totals = out.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("a conditioned posterior draw has no users")
    return out / totals


def bayes_consistent(
    m: Measurement,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    s_bounds: tuple[float, float] = (0.5, 8.0),
    c_bounds: tuple[float, float] = (0.01, 1e4),
    rng=None,
    progressbar: bool = False,
    exponent_points: int = 8,
    n_draws: int = 1000,
    tilt_span: float = 12.0,
) -> Estimate:
    """Posterior mean of frequencies under a shifted power-law prior conditioned on the total.

    .. math::

        s \\sim \\mathrm{Uniform}(s_{lo}, s_{hi}), \\quad
        \\log c \\sim \\mathrm{Uniform}(\\log c_{lo}, \\log c_{hi}), \\quad
        P(x_v = k \\mid s, c) \\propto (1 + k/c)^{-s}, \\ k = 0..n, \\\\
        n\\tilde f_v \\mid x_v \\sim \\mathcal N(x_v, (n\\sigma)^2), \\qquad
        \\text{conditioned on } \\textstyle\\sum_v x_v = n,
        \\qquad f'_v = \\mathbb E[x_v \\mid \\tilde f, \\textstyle\\sum x = n] / n .

    Every count is summed out. The parameters' posterior is
    :math:`p(s, c \\mid \\tilde f, \\sum x = n) \\propto p(s, c) \\prod_v p(\\tilde f_v
    \\mid s, c)\\, P(\\sum_v x_v = n \\mid \\tilde f, s, c)`, the last factor by the
    normal approximation to a sum of ``d`` independent item posteriors; ``s`` and
    ``log c`` are sampled with NUTS. Given them, the counts are conditioned on the
    total by exponential tilting (the saddle-point / Gibbs-conditioning
    approximation, accurate for large ``d``): the prior is multiplied by
    :math:`e^{\\lambda x}` with :math:`\\lambda` chosen so the item posterior means sum
    to ``n``, which for a Gaussian likelihood is a shift of every observation by
    :math:`\\lambda (n\\sigma)^2`. Posterior draws of the counts (moment-matched Gamma
    laws of the tilted item posteriors) are moved onto the total by
    :func:`condition_on_total`.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    draws, tune, chains : int
        NUTS settings (per chain).
    s_bounds : (float, float)
        Support of the exponent's uniform prior. The upper end was 4 until 2026-11-23:
        on US city populations at eps 2 the posterior of ``s`` reaches about 4 (with a
        large scale ``c`` the shifted power law is steep), so it piled up at the bound.
    c_bounds : (float, float)
        Support of the scale (in counts); its logarithm has a uniform prior.
    rng : numpy.random.Generator, int or None
        Seeds the sampler and the posterior draws (same seed, same result).
    progressbar : bool
        Show PyMC's progress bar.
    exponent_points : int
        Posterior draws of ``(s, c)`` at which the tilted item posteriors are computed
        (evenly spread over the sorted draws of ``s``).
    n_draws : int
        Posterior draws of the frequencies kept for :meth:`Estimate.interval`.
    tilt_span : float
        Search the tilt's shift within this many noise standard deviations.

    Returns
    -------
    Estimate
        Non-negative frequencies summing to 1, posterior draws on the simplex, the
        InferenceData, diagnostics (r_hat, ESS, divergences) and the tilts in ``info``.
    """
    for name, value in (("exponent_points", exponent_points), ("n_draws", n_draws)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if not (isinstance(tilt_span, int | float) and tilt_span > 0):
        raise ValueError(f"tilt_span must be a positive number, got {tilt_span!r}")
    post, rng = sample_scale(
        m, s_bounds=s_bounds, c_bounds=c_bounds, draws=draws, tune=tune, chains=chains,
        rng=rng, progressbar=progressbar,
    )  # fmt: skip
    start = time.perf_counter()
    problem = post.problem
    span = tilt_span * problem.sigma_c
    per_point = -(-n_draws // exponent_points)
    order = np.argsort(post.s, kind="stable")
    picks = order[((np.arange(exponent_points) + 0.5) * order.size / exponent_points).astype(int)]
    means, samples, shifts = [], [], []
    for i in picks:
        shift, mean, var = tilt(problem, float(post.s[i]), math.exp(post.log_c[i]), span)
        shifts.append(shift)
        means.append(mean / mean.sum())
        x = sample_counts(np.ones_like(mean), mean, var, per_point, rng)
        samples.append(condition_on_total(x, var, problem.n))
    info = dict(post.info)
    info["tilt_shift_sigma"] = [sh / problem.sigma_c for sh in shifts]
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


__all__ = [
    "bayes_consistent",
    "build_scale_model",
    "condition_on_total",
    "find_mode",
    "prepare",
    "sample_scale",
    "tilt",
]
