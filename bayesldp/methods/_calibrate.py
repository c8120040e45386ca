r"""Calibrate's power-law posterior mean (Jia and Gong 2019), made fast.

The prior puts mass :math:`\propto x^{-s}` on each count :math:`x = 1, \dots, n`; the
noise on the count estimate :math:`y_v = n \tilde f_v` is Gaussian with the oracle's
known standard deviation :math:`\sigma_c = n\sigma`. The posterior mean is

.. math::

    g(y) = \frac{\sum_{x=1}^{n} x \, x^{-s} \, \phi((x - y)/\sigma_c)}
                {\sum_{x=1}^{n} x^{-s} \, \phi((x - y)/\sigma_c)} .

Because the prior and :math:`\sigma_c` are shared by all items, :math:`g` is one smooth
function of the scalar :math:`y`. We evaluate it exactly (log-sum-exp over the window
of counts that carry weight) on a grid of nodes spaced :math:`\sigma_c/16` near zero
and geometrically beyond :math:`16\sigma_c`, and interpolate with a cubic spline. The
cost is independent of ``d`` apart from the interpolation; the papers' direct sum is
:math:`O(n d)`. When ``d`` is smaller than the grid, each item is summed directly.

The PyMC models (:mod:`bayesldp.models`) build on the same sums. SciPy's optimisers and
splines are imported on first use, so that ``import bayesldp`` stays light.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "GEOMETRIC_STEP",
    "NODES_PER_SIGMA",
    "REFINE_DEPTH",
    "REFINE_TOL",
    "S_LIMIT",
    "S_MAX",
    "WINDOW",
    "PosteriorGrid",
    "fit_exponent_mean",
    "fit_exponent_mle",
    "lagrange_basis",
    "log_marginal",
    "posterior_mean",
    "posterior_mean_direct",
    "power_sum",
    "prior_mean",
    "spline_nodes",
]

#: Upper end of the exponent's search interval (both fits).
S_MAX = 20.0
#: Largest exponent accepted: 2^-1000 underflows, so beyond it the prior is a point mass
#: at count 1 in double precision.
S_LIMIT = 1000.0
#: Half-width of the count window, in units of sigma: terms below exp(-W^2/2) ~ 3e-18 are dropped.
WINDOW = 9.0
#: Largest spline error (log units) accepted at an interval's midpoint before it is split.
REFINE_TOL = 1e-8
#: Rounds of splitting at most.
REFINE_DEPTH = 12
#: Grid nodes per sigma near zero.
NODES_PER_SIGMA = 16
#: Relative node spacing of the geometric part of the grid.
GEOMETRIC_STEP = 1.0 / 64


def power_sum(a: float, n: int, exact_terms: int = 2000) -> float:
    r"""Return :math:`\sum_{x=1}^{n} x^{-a}` for any real ``a`` and large ``n``.

    The first ``exact_terms`` terms are summed; the tail uses Euler-Maclaurin with
    derivative corrections up to the third, accurate to double precision for
    ``exact_terms >= 1000`` and moderate ``a``.

    Parameters
    ----------
    a : float
        The exponent (any real; ``a = 1`` uses the logarithm for the integral).
    n : int
        Number of terms, at least 1.
    exact_terms : int, default 2000
        Terms summed directly before the Euler-Maclaurin tail.
    """
    m = min(n, exact_terms)
    head = float(np.sum(np.arange(1, m + 1, dtype=np.float64) ** (-a)))
    if n <= m:
        return head
    lo, hi = float(m + 1), float(n)

    def f(x: float) -> float:
        return x ** (-a)

    def d1(x: float) -> float:
        return -a * x ** (-a - 1)

    def d3(x: float) -> float:
        return -a * (a + 1) * (a + 2) * x ** (-a - 3)

    integral = (
        math.log(hi / lo) if abs(a - 1) < 1e-15 else (hi ** (1 - a) - lo ** (1 - a)) / (1 - a)
    )
    tail = integral + (f(lo) + f(hi)) / 2 + (d1(hi) - d1(lo)) / 12 - (d3(hi) - d3(lo)) / 720
    return head + tail


def prior_mean(s: float, n: int) -> float:
    """Mean count under the prior :math:`x^{-s}` on ``1..n``.

    Parameters
    ----------
    s : float
        The power-law exponent.
    n : int
        Number of users, the largest count.
    """
    return power_sum(s - 1, n) / power_sum(s, n)


def fit_exponent_mean(y_mean: float, n: int, s_max: float = S_MAX) -> tuple[float, str]:
    r"""Fit ``s`` by matching the prior mean count to the observed mean (Calibrate).

    Parameters
    ----------
    y_mean : float
        Mean estimated count, :math:`n \cdot \mathrm{mean}(\tilde f)`.
    n : int
        Number of users.
    s_max : float
        Upper end of the search interval.

    Returns
    -------
    s : float
        The exponent; clipped to ``[0, s_max]`` when the observed mean lies outside what
        the prior family can produce.
    note : str
        Why it was clipped ("" when it was not): the caller decides whether to warn.
    """
    from scipy.optimize import brentq

    lo_mean, hi_mean = prior_mean(s_max, n), prior_mean(0.0, n)
    if y_mean >= hi_mean:
        return 0.0, f"mean count {y_mean:.3g} is at least the flat prior's mean; using s = 0"
    if y_mean <= lo_mean:
        return (
            s_max,
            f"mean count {y_mean:.3g} is below what s <= {s_max} allows; using s = {s_max}",
        )
    return float(brentq(lambda s: prior_mean(s, n) - y_mean, 0.0, s_max, xtol=1e-12)), ""


def _window(y: float, sigma_c: float, n: int) -> tuple[int, int]:
    # an estimate far above n (possible with very little privacy budget) leaves only n
    lo = min(n, max(1, math.floor(y - WINDOW * sigma_c)))
    hi = min(n, math.ceil(max(y, 1.0) + WINDOW * sigma_c))
    return lo, max(lo, hi)


class _Counts:
    """Counts ``1..top`` and their logs, computed once and sliced per window."""

    def __init__(self, top: int) -> None:
        self.x = np.arange(1, top + 1, dtype=np.float64)
        self.logx = np.log(self.x)

    @classmethod
    def for_range(cls, y_max: float, sigma_c: float, n: int) -> _Counts:
        return cls(_window(y_max, sigma_c, n)[1])


def _log_sums(
    y: float, s: float, sigma_c: float, n: int, counts: _Counts | None = None
) -> tuple[float, float, float]:
    r"""Log of :math:`\sum_x x^{k-s} e^{-(x-y)^2/2\sigma_c^2}` for k = 0, 1, 2.

    Summed over the counts that carry weight: those within ``WINDOW`` noise standard
    deviations of ``y``, and those down to 1 when the prior makes them count.
    """
    lo, hi = _window(y, sigma_c, n)
    if counts is None:
        counts = _Counts(hi)
    x = counts.x[lo - 1 : hi]
    logw = -s * counts.logx[lo - 1 : hi] - (x - y) ** 2 * (0.5 / sigma_c**2)
    top = logw.max()
    # Below the window the weight falls from x = 1 (where the prior peaks) and then rises
    # towards the window, so its largest term is at x = 1 or at the window's edge. When a
    # steep prior makes x = 1 outweigh the window (s near s_max, y a few sigma above 0),
    # the counts below the window carry the posterior and are summed too.
    if lo > 1 and -((1.0 - y) ** 2) * (0.5 / sigma_c**2) > top - 0.5 * WINDOW**2:
        lo = 1
        x = counts.x[:hi]
        logw = -s * counts.logx[:hi] - (x - y) ** 2 * (0.5 / sigma_c**2)
        top = logw.max()
    w = np.exp(logw - top)
    # Plain multiply-and-sum, not ``@``: a multi-threaded BLAS dot on vectors this
    # short waits for busy cores.
    wx = w * x
    return top + math.log(w.sum()), top + math.log(wx.sum()), top + math.log((wx * x).sum())


def posterior_mean_direct(y, s: float, sigma_c: float, n: int, full: bool = False) -> np.ndarray:
    r"""Posterior mean count for each ``y``, by summing every count (the reference).

    Parameters
    ----------
    y : array_like
        Count estimates :math:`n \tilde f_v`.
    s : float
        Power-law exponent.
    sigma_c : float
        Noise standard deviation in counts.
    n : int
        Number of users (largest count).
    full : bool, default False
        Sum over all of ``1..n`` with scipy's ``logsumexp`` instead of the window
        that carries weight: the slow, independent reference used in tests.
    """
    y = np.atleast_1d(np.asarray(y, dtype=np.float64))
    out = np.empty_like(y)
    if full:
        from scipy.special import logsumexp

        x = np.arange(1, n + 1, dtype=np.float64)
        logprior = -s * np.log(x)
        for i, yi in enumerate(y):
            logw = logprior - (x - yi) ** 2 / (2 * sigma_c**2)
            out[i] = math.exp(logsumexp(logw, b=x) - logsumexp(logw))
        return out
    counts = _Counts.for_range(float(y.max()), sigma_c, n)
    for i, yi in enumerate(y):
        log_den, log_num, _ = _log_sums(float(yi), s, sigma_c, n, counts)
        out[i] = math.exp(log_num - log_den)
    # a mean of counts in [1, n]: exp(log ratio) can round past n (by ~1e-10 relative)
    return np.minimum(out, float(n))


def spline_nodes(
    y_min: float,
    y_max: float,
    sigma_c: float,
    per_sigma: int = NODES_PER_SIGMA,
    knee: float = 16.0,
    growth: float = GEOMETRIC_STEP,
) -> np.ndarray:
    """Interpolation nodes covering ``[y_min, y_max]`` for functions smoothed by the noise.

    ``per_sigma`` nodes per noise standard deviation up to ``knee`` standard deviations,
    then geometrically spaced (relative step ``growth``), padded by two nodes each side.

    Parameters
    ----------
    y_min, y_max : float
        Range of the count estimates to cover.
    sigma_c : float
        Noise standard deviation of a count estimate, positive.
    per_sigma : int, default ``NODES_PER_SIGMA``
        Nodes per standard deviation in the evenly spaced part.
    knee : float, default 16.0
        Where the spacing turns geometric, in standard deviations.
    growth : float, default ``GEOMETRIC_STEP``
        Relative step of the geometric part.

    Returns
    -------
    numpy.ndarray
        Increasing nodes, in counts.
    """
    t_min, t_max = y_min / sigma_c, y_max / sigma_c
    step = 1.0 / per_sigma
    upper = min(t_max, knee)
    t = list(np.arange(t_min, upper, step)) if upper > t_min else []
    t.append(upper)
    if t_max > knee:
        start = max(knee, t_min)
        count = math.ceil(math.log(t_max / start) / math.log1p(growth))
        t.extend(np.geomspace(start, t_max, count + 1)[1:])
    nodes = np.unique(np.asarray(t))
    # Pad with two nodes on each side so the spline is well conditioned at the ends.
    pad = np.array([nodes[0] - 2 * step, nodes[0] - step, nodes[-1] + step, nodes[-1] + 2 * step])
    return np.unique(np.concatenate([nodes, pad])) * sigma_c


class PosteriorGrid:
    """Posterior moments of a count under the power prior, as smooth functions of ``y``.

    The sums are computed exactly at the grid nodes covering ``[y_min, y_max]`` and
    interpolated with cubic splines of their logarithms.

    Parameters
    ----------
    s : float
        Power-law exponent.
    sigma_c : float
        Noise standard deviation in counts.
    n : int
        Largest count.
    y_min, y_max : float
        Range of observed counts the grid must cover.
    """

    def __init__(self, s: float, sigma_c: float, n: int, y_min: float, y_max: float) -> None:
        self.s, self.sigma_c, self.n = s, sigma_c, n
        nodes = spline_nodes(y_min, y_max, sigma_c)
        counts = _Counts.for_range(float(nodes.max()), sigma_c, n)

        def exact(points: np.ndarray) -> np.ndarray:
            return np.array([_log_sums(float(t), s, sigma_c, n, counts) for t in points])

        sums = exact(nodes)
        self._fit(nodes, sums)
        # Check every interval at its midpoint and split those where a spline is off by
        # more than REFINE_TOL (a steep prior makes the posterior mean jump from near 1 to
        # near y over a fraction of a noise sd); only the split intervals are checked again.
        todo = np.arange(nodes.size - 1)
        self.refinements = 0
        for _ in range(REFINE_DEPTH):
            if todo.size == 0:
                break
            mids = (nodes[todo] + nodes[todo + 1]) / 2
            at_mids = exact(mids)
            bad = self._error(mids, at_mids) > REFINE_TOL
            if not bad.any():
                break
            nodes = np.concatenate([nodes, mids[bad]])
            sums = np.concatenate([sums, at_mids[bad]])
            order = np.argsort(nodes)
            nodes, sums = nodes[order], sums[order]
            self._fit(nodes, sums)
            self.refinements += int(bad.sum())
            new = np.flatnonzero(np.isin(nodes, mids[bad]))
            todo = np.unique(np.concatenate([new - 1, new]))
            todo = todo[(todo >= 0) & (todo < nodes.size - 1)]
        self.nodes = nodes

    def _fit(self, nodes: np.ndarray, sums: np.ndarray) -> None:
        from scipy.interpolate import CubicSpline

        self.log_den = CubicSpline(nodes, sums[:, 0])
        self.log_ratio = CubicSpline(nodes, sums[:, 1] - sums[:, 0])
        self.log_ratio2 = CubicSpline(nodes, sums[:, 2] - sums[:, 0])

    def _error(self, points: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """Largest error of the three splines at ``points`` (log units)."""
        return np.max(
            np.abs(
                np.stack(
                    [
                        self.log_den(points) - sums[:, 0],
                        self.log_ratio(points) - (sums[:, 1] - sums[:, 0]),
                        self.log_ratio2(points) - (sums[:, 2] - sums[:, 0]),
                    ]
                )
            ),
            axis=0,
        )

    def covers(self, y) -> bool:
        """Whether every ``y`` lies inside the interpolation range.

        Parameters
        ----------
        y : array_like of float
            Count estimates.
        """
        y = np.asarray(y)
        return bool(y.min() >= self.nodes[0] and y.max() <= self.nodes[-1])

    def log_evidence(self, y) -> np.ndarray:
        r""":math:`\log \sum_{x=1}^n x^{-s} e^{-(x-y)^2/2\sigma_c^2}` (unnormalised).

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the interpolation range (:meth:`covers`).
        """
        return self.log_den(y)

    def mean(self, y) -> np.ndarray:
        """Posterior mean count :math:`g(y)`.

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the interpolation range (:meth:`covers`).
        """
        return np.exp(self.log_ratio(y))

    def variance(self, y) -> np.ndarray:
        """Posterior variance of the count.

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the interpolation range (:meth:`covers`).
        """
        m = self.mean(y)
        return np.maximum(np.exp(self.log_ratio2(y)) - m * m, 0.0)


def posterior_mean(y, s: float, sigma_c: float, n: int) -> np.ndarray:
    r"""Posterior mean count of each item (fast; exact summation when ``d`` is small).

    Parameters
    ----------
    y : array_like of float
        Count estimates :math:`n \tilde f_v`.
    s : float
        The power-law exponent.
    sigma_c : float
        Noise standard deviation of a count estimate, positive.
    n : int
        Number of users, the largest count.

    Returns
    -------
    numpy.ndarray
        :math:`g(y_v)`, in counts; divide by ``n`` for frequencies.
    """
    y = np.asarray(y, dtype=np.float64)
    nodes = spline_nodes(float(y.min()), float(y.max()), sigma_c)
    if y.size <= nodes.size:
        return posterior_mean_direct(y, s, sigma_c, n)
    return PosteriorGrid(s, sigma_c, n, float(y.min()), float(y.max())).mean(y)


def log_marginal(y, s: float, sigma_c: float, n: int) -> float:
    r"""Log marginal likelihood :math:`\sum_v \log \sum_x P_s(x) N(y_v; x, \sigma_c)`.

    Parameters
    ----------
    y : array_like of float
        Count estimates.
    s : float
        The power-law exponent.
    sigma_c : float
        Noise standard deviation of a count estimate, positive.
    n : int
        Number of users, the largest count.
    """
    y = np.asarray(y, dtype=np.float64)
    nodes = spline_nodes(float(y.min()), float(y.max()), sigma_c)
    if y.size <= nodes.size:
        counts = _Counts.for_range(float(y.max()), sigma_c, n)
        log_den = np.array([_log_sums(float(t), s, sigma_c, n, counts)[0] for t in y])
    else:
        log_den = PosteriorGrid(s, sigma_c, n, float(y.min()), float(y.max())).log_den(y)
    log_norm = math.log(power_sum(s, n)) + math.log(sigma_c * math.sqrt(2 * math.pi))
    return float(log_den.sum() - y.size * log_norm)


def fit_exponent_mle(y, sigma_c: float, n: int, s_max: float = S_MAX) -> float:
    """Fit ``s`` by maximising the marginal likelihood (Calibrate's Equation 16).

    Parameters
    ----------
    y : array_like of float
        Count estimates.
    sigma_c : float
        Noise standard deviation of a count estimate, positive.
    n : int
        Number of users, the largest count.
    s_max : float, default ``S_MAX``
        Upper end of the search interval ``[0, s_max]`` (bounded scalar search).
    """
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda s: -log_marginal(y, s, sigma_c, n),
        bounds=(0.0, s_max),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return float(res.x)


def lagrange_basis(points: np.ndarray, at: np.ndarray) -> np.ndarray:
    r"""Lagrange basis polynomials of ``points`` evaluated at ``at``.

    ``W[..., k] = prod_{j != k} (at - points[j]) / (points[k] - points[j])``, so that
    ``sum_k W[..., k] g(points[..., k])`` interpolates ``g`` at ``at``. ``points`` has
    shape ``(..., K)`` and ``at`` shape ``(...)`` (broadcast against each other): one set
    of nodes for many points (interpolation in ``s``), or each point its own nodes (the
    local cubic weights of :mod:`bayesldp.models`).

    Parameters
    ----------
    points : numpy.ndarray
        Distinct nodes along the last axis, shape ``(..., K)``.
    at : numpy.ndarray
        Where to evaluate, shape ``(...)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., K)`` (the broadcast shape).
    """
    points = np.asarray(points, dtype=np.float64)
    at = np.asarray(at, dtype=np.float64)[..., None]
    size = points.shape[-1]
    w = np.ones(np.broadcast_shapes(points.shape, at.shape))
    for k in range(size):
        for j in range(size):
            if j != k:
                w[..., k] *= (at[..., 0] - points[..., j]) / (points[..., k] - points[..., j])
    return w
