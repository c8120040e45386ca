r"""A consistent Bayesian frequency oracle: a shifted power-law prior conditioned on the total.

The counts of ``d`` items sum to ``n``. Conditioning a prior on the counts on that
total puts the posterior on the (scaled) simplex, so its mean is non-negative and sums
to 1 without a Norm-Sub step.

The prior is a shifted power law (a discrete Lomax law) on ``0..n``,
:math:`P(x) \propto (1 + x/c)^{-s}`: a power law in its tail, like Calibrate's, but
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

from bayesldp._validation import check_probability
from bayesldp.estimate import Estimate, Uncertainty
from bayesldp.measurement import Measurement
from bayesldp.models import lomax as S
from bayesldp.models.draws import (
    ExactTotalDraws,
    ItemPosteriorDraws,
    ItemPosteriorTable,
    PointTables,
)
from bayesldp.models.sampling import (
    check_sampler_args,
    convergence_info,
    limit_threads,
    seeds,
    warn_at_bounds,
)

logger = logging.getLogger(__name__)

#: Initial half-width of the sampling box around the mode, in standard deviations of the
#: whitening covariance; sides are pushed out while the log target there is within
#: EDGE_DROP nats of its maximum.
BOX_SD = 6.0
EDGE_DROP = 12.0
BOX_GROWTH = 1.6
#: Chebyshev degrees tried in turn until the interpolation error is below MAX_ERROR nats.
DEGREES = (16, 24, 32)
MAX_ERROR = 0.01
#: NUTS's target acceptance for (s, log c). The log target falls steeply off its ridge
#: (hundreds of nats within a few whitened sds), and at 0.8 a rare trajectory diverged,
#: which warns: 1 of 96,000 draws (48 seeds at the papers' setting), none at 0.9, for
#: 1.10x the sampling time and 1.02x the fit's (``benchmarks/consistent_divergences.py``).
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


def default_c_bounds(n: int, sigma_c: float) -> tuple[float, float]:
    r"""Support of the scale ``c`` derived from the data: ``(0.01, max(n, 100))``.

    Below 0.01 the prior is a point mass at 0 plus an :math:`x^{-s}` tail whatever
    ``c`` is (:math:`(1 + 1/c)^{-s}` is below :math:`100^{-s}`); a scale up to the
    largest possible count ``n`` lets the prior stay flat over every count the data
    hold (the fixed bound 10^4 was hit in 60 of 61 fits on US city populations, whose
    smallest items have ~500 users and whose largest 88,000).

    Parameters
    ----------
    n : int
        Number of users; the upper end is ``max(n, 100)``.
    sigma_c : float
        Noise standard deviation of a count estimate; unused (the noise level moves
        neither end).
    """
    del sigma_c  # the noise level does not move either end
    return 0.01, float(max(n, 100))


def find_mode(
    problem: S.Problem, s_bounds: tuple[float, float], u_bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Mode of the parameters' log target and its Laplace covariance.

    The target is :func:`bayesldp.models.lomax.log_target` under the flat prior on
    ``(s, log c)`` within the bounds. The covariance is the inverse of the negative
    Hessian (central differences); where that is not positive definite, the
    covariance of a uniform law on the bounds. Either only seeds the sampling region
    (:func:`find_region`), which is grown and re-whitened until it holds the posterior.

    Parameters
    ----------
    problem : bayesldp.models.lomax.Problem
        The count estimates, noise and total.
    s_bounds : (float, float)
        Bounds of the exponent ``s``.
    u_bounds : (float, float)
        Bounds of ``log c``.

    Returns
    -------
    mode : numpy.ndarray
        ``(s, log c)`` at the mode (kept two finite-difference steps inside the bounds).
    cov : numpy.ndarray
        Its 2 x 2 covariance.
    """

    def neg(theta):
        return -S.log_target(problem, float(theta[0]), float(theta[1]))

    starts = [
        (s, u) for s in np.linspace(*s_bounds, 5)[1:-1] for u in np.linspace(*u_bounds, 5)[1:-1]
    ]
    start = min(starts, key=neg)
    # The target is of order n nats (4e5 on word frequencies): relative to that, L-BFGS-B's
    # stopping rule halted 18 nats below the peak (wordfreq, eps 0.5, seed 9), so the
    # objective is measured from the start, and a derivative-free polish finishes the
    # climb along the (s, log c) ridge, where finite-difference gradients are noisy.
    offset = neg(start)

    def rise(theta):
        return neg(theta) - offset

    bounds = [s_bounds, u_bounds]
    res = optimize.minimize(
        rise, np.asarray(start), method="L-BFGS-B", bounds=bounds, options={"eps": 1e-5}
    )
    res = optimize.minimize(
        rise, res.x, method="Nelder-Mead", bounds=bounds,
        options={"xatol": 1e-4, "fatol": 1e-4, "maxfev": 400},
    )  # fmt: skip
    mode = res.x
    h = np.array([1e-3, 1e-2])
    hess = np.empty((2, 2))
    lows, highs = np.array([s_bounds[0], u_bounds[0]]), np.array([s_bounds[1], u_bounds[1]])
    mode = np.clip(mode, lows + 2 * h, highs - 2 * h)
    f0 = neg(mode)
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
        cov = np.diag((highs - lows) ** 2 / 12)
    return mode, cov


@dataclass(frozen=True)
class ScaleModelSpec:
    """Everything the PyMC model of ``(s, log c)`` is built from.

    ``(s, log c) = mode + chol @ z`` with ``z`` in the rectangle ``box`` (whitened
    coordinates; ``mode`` and ``chol`` are the centre and Cholesky factor used for the
    whitening), and ``fit`` interpolates the log target in ``z``.
    """

    problem: S.Problem
    mode: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    fit: S.Chebyshev2D
    s_bounds: tuple[float, float]
    u_bounds: tuple[float, float]
    box: tuple[tuple[float, float], tuple[float, float]] = ((-BOX_SD, BOX_SD), (-BOX_SD, BOX_SD))

    def to_theta(self, z0, z1):
        """Map whitened coordinates to ``(s, log c)`` (works on numbers and tensors)."""
        return (
            self.mode[0] + self.chol[0, 0] * z0,
            self.mode[1] + self.chol[1, 0] * z0 + self.chol[1, 1] * z1,
        )

    def inside(self, z0, z1) -> np.ndarray:
        """Whether whitened points lie within the prior's bounds."""
        s, u = self.to_theta(np.asarray(z0, float), np.asarray(z1, float))
        (s_lo, s_hi), (u_lo, u_hi) = self.s_bounds, self.u_bounds
        return (s >= s_lo) & (s <= s_hi) & (u >= u_lo) & (u <= u_hi)

    def z0_range(self) -> tuple[float, float]:
        """Return the values of ``z0`` for which some ``z1`` gives a point of the region.

        The region is the sampling box intersected with the prior's bounds on
        ``(s, log c)``: a convex polygon, whose extent in ``z0`` two linear programs
        find.
        """
        (s_lo, s_hi), (u_lo, u_hi) = self.s_bounds, self.u_bounds
        (m0, m1), L = self.mode, self.chol
        # rows: s <= s_hi, -s <= -s_lo, u <= u_hi, -u <= -u_lo, as A @ z <= b
        A = np.array([[L[0, 0], 0.0], [-L[0, 0], 0.0], [L[1, 0], L[1, 1]], [-L[1, 0], -L[1, 1]]])
        b = np.array([s_hi - m0, m0 - s_lo, u_hi - m1, m1 - u_lo])
        ends = []
        for sign in (1.0, -1.0):
            res = optimize.linprog([sign, 0.0], A_ub=A, b_ub=b, bounds=list(self.box))
            if res.status != 0:
                raise RuntimeError(f"no point of the sampling box is inside the bounds: {res}")
            ends.append(float(res.x[0]))
        return ends[0], ends[1]

    def z1_range(self, z0, xp=np):
        """Return the interval of ``z1`` inside the region, given ``z0`` (numbers or tensors)."""
        (u_lo, u_hi), (m1, L) = self.u_bounds, (self.mode[1], self.chol)
        lo = (u_lo - m1 - L[1, 0] * z0) / L[1, 1]
        hi = (u_hi - m1 - L[1, 0] * z0) / L[1, 1]
        (b_lo, b_hi) = self.box[1]
        return xp.maximum(lo, b_lo), xp.minimum(hi, b_hi)


def _prior_extent(mode, chol, s_bounds, u_bounds) -> np.ndarray:
    """Extent in whitened coordinates of the prior's rectangle: ``[[lo0, hi0], [lo1, hi1]]``."""
    corners = np.array([(s, u) for s in s_bounds for u in u_bounds]) - mode
    z = np.linalg.solve(chol, corners.T).T
    return np.stack([z.min(axis=0), z.max(axis=0)], axis=1)


def find_region(target, mode, chol, s_bounds, u_bounds, peak: float):
    """Return a rectangle in whitened coordinates that holds the posterior.

    Starts at ``[-BOX_SD, BOX_SD]^2`` and pushes each side out (by ``BOX_GROWTH``)
    while the log target on that side, inside the prior's bounds, comes within
    ``EDGE_DROP`` nats of the largest value seen; a side stops at the prior's extent.
    Returns the box and the largest value seen.

    Parameters
    ----------
    target : callable
        ``target(z0, z1)``: the log target at whitened coordinates.
    mode : numpy.ndarray
        Whitening centre, ``(s, log c)``.
    chol : numpy.ndarray
        Lower Cholesky factor of the whitening covariance, ``(s, log c) = mode + chol z``.
    s_bounds, u_bounds : (float, float)
        Bounds of ``s`` and ``log c``.
    peak : float
        Largest log target seen so far (e.g. at the centre).

    Returns
    -------
    box : numpy.ndarray
        Shape ``(2, 2)``: the low and high end of each whitened axis.
    peak : float
        The largest log target seen, including on the sides probed.
    """
    box = np.array([[-BOX_SD, BOX_SD], [-BOX_SD, BOX_SD]])
    extent = _prior_extent(mode, chol, s_bounds, u_bounds)
    probe = np.linspace(0.0, 1.0, 13)
    for _ in range(12):
        grown = False
        for axis in (0, 1):
            for end in (0, 1):
                edge = box[axis, end]
                if (end == 0 and edge <= extent[axis, 0]) or (end == 1 and edge >= extent[axis, 1]):
                    continue
                other = box[1 - axis, 0] + probe * (box[1 - axis, 1] - box[1 - axis, 0])
                z = np.empty((other.size, 2))
                z[:, axis], z[:, 1 - axis] = edge, other
                theta = mode + z @ chol.T
                ok = (
                    (theta[:, 0] >= s_bounds[0]) & (theta[:, 0] <= s_bounds[1])
                    & (theta[:, 1] >= u_bounds[0]) & (theta[:, 1] <= u_bounds[1])
                )  # fmt: skip
                if not ok.any():
                    continue
                values = [target(*z_) for z_ in z[ok]]
                peak = max(peak, max(values))
                if max(values) > peak - EDGE_DROP:
                    box[axis, end] = edge * BOX_GROWTH
                    grown = True
        if not grown:
            break
    # no wider than the prior's extent (with a small margin for the interpolant)
    margin = 0.02 * (extent[:, 1] - extent[:, 0])
    box[:, 0] = np.maximum(box[:, 0], extent[:, 0] - margin)
    box[:, 1] = np.minimum(box[:, 1], extent[:, 1] + margin)
    return box, peak


def _fit_region(problem, mode, chol, box, degrees, peak):
    def target(z0, z1):
        s = mode[0] + chol[0, 0] * z0
        u = mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
        return S.log_target(problem, s, u)

    fit = None
    for deg in degrees:
        fit = S.chebyshev_fit(target, tuple(box[0]), tuple(box[1]), degree=deg, peak=peak)
        if fit.max_error < MAX_ERROR:
            break
    return fit


def _fit_moments(fit: S.Chebyshev2D, mode, chol, s_bounds, u_bounds):
    """Posterior mean and covariance of ``(s, log c)`` under the interpolated target."""
    a = np.linspace(fit.s_lo, fit.s_hi, 121)
    b = np.linspace(fit.u_lo, fit.u_hi, 121)
    z0, z1 = np.meshgrid(a, b, indexing="ij")
    ta, tb = fit.to_unit(z0, z1)
    from numpy.polynomial import chebyshev as C

    lp = C.chebval2d(ta, tb, fit.coef)
    s = mode[0] + chol[0, 0] * z0
    u = mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
    inside = (s >= s_bounds[0]) & (s <= s_bounds[1]) & (u >= u_bounds[0]) & (u <= u_bounds[1])
    lp = np.where(inside, lp, -np.inf)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    theta = np.stack([s.ravel(), u.ravel()], axis=1)
    mean = w.ravel() @ theta
    dev = theta - mean
    cov = (dev * w.ravel()[:, None]).T @ dev
    return mean, cov


def prepare(
    m: Measurement,
    s_bounds: tuple[float, float] = (0.5, 8.0),
    c_bounds: tuple[float, float] | None = None,
    degrees: tuple[int, ...] = DEGREES,
    exact: bool | None = None,
) -> ScaleModelSpec:
    """Find the sampling region and interpolate the log target (see :func:`sample_scale`).

    The region starts from the mode and Laplace covariance, is grown until it holds
    the posterior (:func:`find_region`), and, when the posterior's own covariance (from
    the interpolant) differs from the Laplace one (a standard deviation off by more
    than a factor 1.5, or a correlation by more than 0.3), it is re-whitened with the
    posterior's mean and covariance and found again. The interpolant's degree is the
    first of ``degrees`` whose error at off-node check points is below ``MAX_ERROR``.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    s_bounds : (float, float), default (0.5, 8.0)
        Support of the exponent's uniform prior, ``0 < lo < hi``.
    c_bounds : (float, float), optional
        Support of the scale, ``0 < lo < hi``; by default :func:`default_c_bounds`.
    degrees : tuple of int, default ``DEGREES``
        Chebyshev degrees tried in turn.
    exact : bool, optional
        Force (``True``) or forbid (``False``) the exact computations of small problems;
        None lets the problem's size decide.

    Returns
    -------
    ScaleModelSpec
    """
    s_lo, s_hi = _check_bounds(s_bounds, "s_bounds", positive=True)
    if c_bounds is None:
        c_bounds = default_c_bounds(m.n, m.sigma * m.n)
    c_lo, c_hi = _check_bounds(c_bounds, "c_bounds", positive=True)
    u_bounds = (math.log(c_lo), math.log(c_hi))
    problem = S.Problem.from_counts(m.estimates * m.n, m.sigma * m.n, m.n, exact=exact)
    mode, cov = find_mode(problem, (s_lo, s_hi), u_bounds)
    fit = None
    passes = 3
    for attempt in range(passes):
        chol = np.linalg.cholesky(cov)

        def target(z0, z1, mode=mode, chol=chol):
            return S.log_target(
                problem, mode[0] + chol[0, 0] * z0, mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
            )

        box, peak = find_region(target, mode, chol, (s_lo, s_hi), u_bounds, target(0.0, 0.0))
        # The first degree is enough to tell whether the whitening must change; the finer
        # ones are fitted only in the region that is kept (on small exact problems every
        # evaluation of the target is a convolution over all counts).
        fit, agree = None, False
        for stage in (degrees[:1], degrees[1:]):
            if not stage or (fit is not None and fit.max_error < MAX_ERROR):
                continue
            fit = _fit_region(problem, mode, chol, box, stage, peak)
            mean, post_cov = _fit_moments(fit, mode, chol, (s_lo, s_hi), u_bounds)
            sd_ratio = np.sqrt(np.diag(post_cov) / np.diag(cov))
            corr = [c[0, 1] / math.sqrt(c[0, 0] * c[1, 1]) for c in (cov, post_cov)]
            agree = bool(
                np.all((sd_ratio > 1 / 1.5) & (sd_ratio < 1.5)) and abs(corr[0] - corr[1]) < 0.3
            )
            if not agree and attempt < passes - 1:
                break
        if agree or attempt == passes - 1:
            break
        if np.any(np.linalg.eigvalsh(post_cov) <= 1e-12 * np.diag(cov).max()):
            break  # a degenerate fit (the region missed the posterior): keep the whitening
        mode, cov = mean, post_cov
    assert fit is not None  # the loop ran
    box_t = ((float(fit.s_lo), float(fit.s_hi)), (float(fit.u_lo), float(fit.u_hi)))
    return ScaleModelSpec(problem, mode, cov, chol, fit, (s_lo, s_hi), u_bounds, box_t)


def build_scale_model(spec: ScaleModelSpec):
    r"""Build the PyMC model of the prior's exponent and scale given the estimates and total.

    .. math::

        (s, \log c) &= \hat\theta + L z, \qquad
        z \sim \mathrm{Uniform}(R), \quad
        R = Z \cap \{z : s \in [s_{lo}, s_{hi}],\ \log c \in [u_{lo}, u_{hi}]\},
        \\
        \log p(\tilde f, \textstyle\sum x = n \mid s, c) &= G(s, c)
        \quad \text{(see :func:`bayesldp.models.lomax.log_target`)}

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
        # measurement would compile anew (about 10 s); with data the code is reused.
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
        pm.Potential("loglik", S.chebval2d_tensor(a, b, coef))
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
    draws: int,
    tune: int,
    chains: int,
    rng,
    progressbar: bool,
    degrees: tuple[int, ...] = DEGREES,
    exact: bool | None = None,
    target_accept: float = TARGET_ACCEPT,
) -> tuple[ScalePosterior, np.random.Generator]:
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
    draws, tune, chains : int
        NUTS settings (per chain); chains run one after the other.
    rng : numpy.random.Generator, int or None
        Randomness of the whole fit.
    progressbar : bool
        Show PyMC's progress bar.
    degrees : tuple of int, default ``DEGREES``
        Chebyshev degrees tried in turn (:func:`prepare`).
    exact : bool, optional
        Force or forbid the exact computations of small problems (:func:`prepare`).
    target_accept : float, default :data:`TARGET_ACCEPT`
        NUTS's target acceptance probability, in (0, 1).

    Returns
    -------
    ScalePosterior
        The draws of ``s`` and ``log c`` with the inference data and diagnostics.
    numpy.random.Generator
        The generator the sampler's seed came from, for the draws that follow.
    """
    import pymc as pm

    check_sampler_args(draws, tune, chains)
    target_accept = check_probability(target_accept, "target_accept")
    seed, rng = seeds(rng)
    start = time.perf_counter()
    spec = prepare(m, s_bounds, c_bounds, degrees, exact)
    problem, fit, mode, cov = spec.problem, spec.fit, spec.mode, spec.cov
    (s_lo, s_hi), (u_lo, u_hi) = spec.s_bounds, spec.u_bounds
    c_lo, c_hi = math.exp(u_lo), math.exp(u_hi)
    built = time.perf_counter()
    with build_scale_model(spec), limit_threads():
        idata = pm.sample(
            draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
            progressbar=progressbar, compute_convergence_checks=False,
            initvals=initial_point(spec), target_accept=target_accept,
        )  # fmt: skip
    sampled = time.perf_counter()
    info = convergence_info(idata, ["s", "log_c"], chains, stacklevel=4)
    s_draws = idata.posterior["s"].values.ravel()
    u_draws = idata.posterior["log_c"].values.ravel()
    z_draws = idata.posterior["z"].values.reshape(-1, 2)
    extent = _prior_extent(spec.mode, spec.chol, spec.s_bounds, spec.u_bounds)
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
    return ScalePosterior(s_draws, u_draws, idata, problem, info), rng


def tilt(problem: S.Problem, s: float, c: float, span: float | None = None):
    """Condition one prior on the total by exponential tilting (the saddle point).

    Returns ``(shift, mean, var)``: the shift of every count estimate whose posterior
    means sum to ``n`` (the saddle point of :func:`bayesldp.models.lomax.saddle_point`),
    and the items' posterior means and variances there.

    Parameters
    ----------
    problem : bayesldp.models.lomax.Problem
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
    span = S.TILT_SPAN * problem.sigma_c if span is None else float(span)
    mom = problem.moments(s, c, pad=span)
    y, n = problem.y, problem.n
    sad = S.saddle_point(problem, mom, span=span)
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
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    s_bounds: tuple[float, float] = (0.5, 8.0),
    c_bounds: tuple[float, float] | None = None,
    rng=None,
    progressbar: bool = False,
    exponent_points: int | None = None,
    n_draws: int = 1000,
    tilt_span: float = 12.0,
    exact: bool | None = None,
    target_accept: float = TARGET_ACCEPT,
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
    :data:`bayesldp.models.lomax.EXACT_WORK`: convolution of the item posteriors over
    every count) and otherwise the saddle-point approximation (relative error
    :math:`O(1/d)`; 0.015 nats off the exact value even at ``d = 5``, ``n = 100``).
    The sampling region is grown and re-whitened until it holds the posterior
    (:func:`prepare`), so diffuse or skewed posteriors of small domains are sampled
    whole. Given ``(s, c)``, the counts are conditioned on the total exactly on small
    problems (:class:`bayesldp.models.lomax.ExactTotal`: the items' posterior means
    given the total, and exact draws item after item); on larger ones by exponential
    tilting (the Gibbs-conditioning / saddle-point approximation, exact as ``d`` grows):
    the prior is multiplied by :math:`e^{\lambda x}` with :math:`\lambda` chosen so the
    item posterior means sum to ``n``, which for a Gaussian likelihood is a shift of
    every observation by :math:`\lambda (n\sigma)^2`; draws come from each item's
    tilted posterior itself (:class:`bayesldp.models.draws.ItemPosteriorTable`) and are
    moved onto the total by :func:`bayesldp._total.condition_on_total`.

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
    c_bounds : (float, float), optional
        Support of the scale (in counts); its logarithm has a uniform prior. By default
        ``(0.01, n)`` (:func:`default_c_bounds`).
    rng : numpy.random.Generator, int or None
        Seeds the sampler and the posterior draws (same seed, same result).
    progressbar : bool
        Show PyMC's progress bar.
    exponent_points : int, optional
        Posterior draws of ``(s, c)`` at which the item posteriors given the total are
        computed (evenly spread over the sorted draws of ``s``). By default 8, or up to
        64 on problems small enough for exact conditioning (fewer as ``d n`` grows).
    n_draws : int
        Posterior draws of the frequencies behind :meth:`Estimate.interval`, generated
        on demand (``Estimate.uncertainty``).
    tilt_span : float
        Search the tilt's shift within this many noise standard deviations (at most
        :data:`bayesldp.models.lomax.TILT_SPAN`).
    exact : bool, optional
        Force (``True``) or forbid (``False``) the exact computations of small problems.
    target_accept : float, default :data:`bayesldp.models.consistent.TARGET_ACCEPT`
        NUTS's target acceptance probability for ``(s, log c)``, in (0, 1): 0.9 (at 0.8 a
        rare trajectory diverged off the target's steep ridge; see the constant).

    Returns
    -------
    Estimate
        Non-negative frequencies summing to 1, ``uncertainty`` (draws on the simplex,
        generated chunk by chunk), the InferenceData, diagnostics (r_hat, ESS,
        divergences) and the tilts in ``info``.
    """
    for name, value in (("exponent_points", exponent_points), ("n_draws", n_draws)):
        if value is None and name == "exponent_points":
            continue
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(tilt_span, bool) or not (isinstance(tilt_span, int | float) and tilt_span > 0):
        raise ValueError(f"tilt_span must be a positive number, got {tilt_span!r}")
    if exact is not None and not isinstance(exact, bool):
        raise ValueError(f"exact must be a bool or None, got {exact!r}")
    with limit_threads():
        post, rng = sample_scale(
            m, s_bounds=s_bounds, c_bounds=c_bounds, draws=draws, tune=tune, chains=chains,
            rng=rng, progressbar=progressbar, exact=exact, target_accept=target_accept,
        )  # fmt: skip
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
                S.ExactTotal(problem.y, problem.sigma_c, problem.n, float(post.s[i]),
                             math.exp(post.log_c[i]))
                for i in picks
            ]  # fmt: skip
            means = [p.means() / problem.n for p in points]
            uncertainty = ExactTotalDraws(tuple(points), problem.n, draw_seed, n_draws)
            info["tilt_shift_sigma"] = [p.lam * problem.sigma_c for p in points]
        else:
            span = min(float(tilt_span), S.TILT_SPAN) * problem.sigma_c
            means, tables, shifts = [], [], []
            for i in picks:
                s_i, c_i = float(post.s[i]), math.exp(post.log_c[i])
                shift, mean, _ = tilt(problem, s_i, c_i, span)
                shifts.append(shift)
                means.append(mean / mean.sum())
                lm = S.log_prior_mass(problem.grid, s_i, c_i)
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


__all__ = [
    "TARGET_ACCEPT",
    "bayes_consistent",
    "build_scale_model",
    "default_c_bounds",
    "find_mode",
    "find_region",
    "prepare",
    "sample_scale",
    "tilt",
]
