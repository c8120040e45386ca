"""Where ``bayes-consistent`` samples: the mode, the region holding the posterior, its fit.

:func:`prepare` finds the mode of the log target of ``(s, log c)`` and its Laplace
covariance, grows and re-whitens a box until it holds the posterior
(:func:`find_region`), and fits the Chebyshev interpolant NUTS samples
(:class:`ScaleModelSpec`).
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from bayesldp.measurement import Measurement
from bayesldp.models.consistent._exact_total import Problem, log_target
from bayesldp.models.consistent._target import Chebyshev2D, chebyshev_fit

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


def check_bounds(bounds, name: str, positive: bool) -> tuple[float, float]:
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
    hold (a fixed bound such as 10^4 is too small for populations whose smallest items
    have hundreds of users).

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


def memoised_target(problem: Problem):
    """Return ``target(s, log_c)``: :func:`log_target` of ``problem``, each point computed once.

    :func:`prepare` comes back to some points (the check points of successive fits,
    the mode); the values are the same either way.
    """
    values: dict[tuple[float, float], float] = {}

    def target(s: float, log_c: float) -> float:
        key = (float(s), float(log_c))
        if key not in values:
            values[key] = log_target(problem, *key)
        return values[key]

    return target


def find_mode(
    problem: Problem,
    s_bounds: tuple[float, float],
    u_bounds: tuple[float, float],
    target=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mode of the parameters' log target and its Laplace covariance.

    The target is :func:`bayesldp.models.consistent._exact_total.log_target` under the flat prior on
    ``(s, log c)`` within the bounds. The covariance is the inverse of the negative
    Hessian (central differences); where that is not positive definite, the
    covariance of a uniform law on the bounds. Either only seeds the sampling region
    (:func:`find_region`), which is grown and re-whitened until it holds the posterior.

    Parameters
    ----------
    problem : bayesldp.models.consistent._exact_total.Problem
        The count estimates, noise and total.
    s_bounds : (float, float)
        Bounds of the exponent ``s``.
    u_bounds : (float, float)
        Bounds of ``log c``.
    target : callable, optional
        ``target(s, log_c)``, the log target of ``problem`` (e.g. from
        :func:`memoised_target`); :func:`log_target` by default.

    Returns
    -------
    mode : numpy.ndarray
        ``(s, log c)`` at the mode (kept two finite-difference steps inside the bounds).
    cov : numpy.ndarray
        Its 2 x 2 covariance.
    """
    if target is None:
        target = functools.partial(log_target, problem)

    def neg(theta):
        return -target(float(theta[0]), float(theta[1]))

    starts = [
        (s, u) for s in np.linspace(*s_bounds, 5)[1:-1] for u in np.linspace(*u_bounds, 5)[1:-1]
    ]
    start = min(starts, key=neg)
    # The target is of order n nats: relative to that, L-BFGS-B's stopping rule can halt
    # many nats below the peak, so the objective is measured from the start, and a
    # derivative-free polish finishes the climb along the (s, log c) ridge, where
    # finite-difference gradients are noisy.
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

    problem: Problem
    mode: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    fit: Chebyshev2D
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


def prior_extent(mode, chol, s_bounds, u_bounds) -> np.ndarray:
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
    extent = prior_extent(mode, chol, s_bounds, u_bounds)
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


def _fit_region(log_target_at, mode, chol, box, degrees, peak):
    def target(z0, z1):
        s = mode[0] + chol[0, 0] * z0
        u = mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
        return log_target_at(s, u)

    fit = None
    for deg in degrees:
        fit = chebyshev_fit(target, tuple(box[0]), tuple(box[1]), degree=deg, peak=peak)
        if fit.max_error < MAX_ERROR:
            break
    return fit


def _fit_moments(fit: Chebyshev2D, mode, chol, s_bounds, u_bounds):
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
    s_lo, s_hi = check_bounds(s_bounds, "s_bounds", positive=True)
    if c_bounds is None:
        c_bounds = default_c_bounds(m.n, m.sigma * m.n)
    c_lo, c_hi = check_bounds(c_bounds, "c_bounds", positive=True)
    u_bounds = (math.log(c_lo), math.log(c_hi))
    problem = Problem.from_counts(m.estimates * m.n, m.sigma * m.n, m.n, exact=exact)
    log_target_at = memoised_target(problem)
    mode, cov = find_mode(problem, (s_lo, s_hi), u_bounds, log_target_at)
    fit = None
    passes = 3
    for attempt in range(passes):
        chol = np.linalg.cholesky(cov)

        def target(z0, z1, mode=mode, chol=chol):
            return log_target_at(
                mode[0] + chol[0, 0] * z0, mode[1] + chol[1, 0] * z0 + chol[1, 1] * z1
            )

        box, peak = find_region(target, mode, chol, (s_lo, s_hi), u_bounds, target(0.0, 0.0))
        # The first degree is enough to tell whether the whitening must change; the finer
        # ones are fitted only in the region that is kept (on small exact problems every
        # evaluation of the target is a convolution over all counts).
        fit, agree = None, False
        for stage in (degrees[:1], degrees[1:]):
            if not stage or (fit is not None and fit.max_error < MAX_ERROR):
                continue
            fit = _fit_region(log_target_at, mode, chol, box, stage, peak)
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
