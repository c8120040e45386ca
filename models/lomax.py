r"""Numerics of the shifted power-law (Lomax) prior on counts used by ``bayes-consistent``.

The prior puts mass :math:`P(x) \propto (1 + x/c)^{-s}` on every count
:math:`x = 0, \dots, n`. Sums over all ``n + 1`` counts are done on a quadrature grid
(:class:`CountGrid`): every count exactly up to a few hundred, then cells whose width
grows geometrically but never exceeds a quarter of the noise's standard deviation, each
weighted by its prior mass. Each item's log evidence, posterior mean and posterior
variance are smooth functions of its count estimate ``y`` (a Gaussian convolution), so
they are computed exactly at nodes a fraction of a standard deviation apart and
interpolated with cubic splines (:class:`ItemMoments`).

:func:`summaries` gives the three sums the model needs as functions of the prior's
parameters: the total log evidence :math:`T`, and the mean :math:`M` and variance
:math:`V` of the total count under the items' independent posteriors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev as C
from scipy import optimize
from scipy.interpolate import CubicSpline
from scipy.special import logsumexp

from bayesldp.methods._calibrate import spline_nodes
from bayesldp.models.chebyshev import lagrange_weights

__all__ = [
    "BLOCK_SIGMA",
    "CELL_SIGMA",
    "EXACT_COUNTS",
    "EXACT_MAX_N",
    "EXACT_WORK",
    "FULL_SUM_MARGIN",
    "GROWTH",
    "KNEE_SIGMA",
    "LOG_SQRT_2PI",
    "NODES_PER_SIGMA",
    "NODE_GROWTH",
    "PROBES",
    "RELEVANT_DROP",
    "TARGET_SPAN",
    "TILT_SPAN",
    "WINDOW_SIGMA",
    "Chebyshev2D",
    "CountGrid",
    "ExactTotal",
    "ItemMoments",
    "Problem",
    "Saddle",
    "chebval2d_tensor",
    "chebyshev_fit",
    "item_nodes",
    "log_prior_mass",
    "log_target",
    "node_moments",
    "saddle_point",
    "summaries",
]

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
EXACT_COUNTS = 256  # counts below this are their own cells
GROWTH = 0.005  # relative cell width above them
CELL_SIGMA = 0.25  # cells never wider than this many noise standard deviations
NODES_PER_SIGMA = 8
KNEE_SIGMA = 12.0  # nodes are sigma / NODES_PER_SIGMA apart up to here, then geometric
NODE_GROWTH = 1.0 / 48


@dataclass(frozen=True)
class CountGrid:
    """Quadrature cells covering the counts ``0..n``.

    Attributes
    ----------
    x : numpy.ndarray
        Cell representatives (the middle of each cell's counts).
    log_width : numpy.ndarray
        Log of the number of counts in each cell.
    """

    x: np.ndarray
    log_width: np.ndarray

    @classmethod
    def build(cls, n: int, sigma_c: float) -> CountGrid:
        """Cells for counts ``0..n`` and noise standard deviation ``sigma_c``.

        Each cell is a run of consecutive counts represented by its middle (the
        midpoint rule), so sums of smooth functions over the counts are exact to second
        order in the cell width.

        Parameters
        ----------
        n : int
            Number of users, the largest count.
        sigma_c : float
            Noise standard deviation in counts; caps the cells' width (``CELL_SIGMA``
            standard deviations).
        """
        exact = min(n + 1, EXACT_COUNTS)
        edges = list(range(exact + 1))  # cell j holds the counts edges[j] .. edges[j+1]-1
        cap = max(1, math.floor(CELL_SIGMA * sigma_c))
        e = edges[-1]
        while e < n + 1:
            e = min(n + 1, e + max(1, min(cap, math.floor(GROWTH * e))))
            edges.append(e)
        bounds = np.asarray(edges, dtype=float)
        width = np.diff(bounds)
        return cls((bounds[:-1] + bounds[1:] - 1) / 2, np.log(width))


def log_prior_mass(grid: CountGrid, s: float, c: float) -> np.ndarray:
    r"""Normalised log prior mass of each cell: :math:`\log P(x) + \log` width.

    Parameters
    ----------
    grid : CountGrid
        The count cells.
    s, c : float
        Exponent and scale of the prior :math:`P(x) \propto (1 + x/c)^{-s}`.
    """
    lm = -s * np.log1p(grid.x / c) + grid.log_width
    return lm - logsumexp(lm)


WINDOW_SIGMA = 10.0  # node sums keep the cells within this many sigma of the node ...
FULL_SUM_MARGIN = 36.0  # ... unless what is left out may reach exp(-this) of what is kept
BLOCK_SIGMA = 4.0  # nodes closer together than this many sigma share one window of cells
TILT_SPAN = 12.0  # tilts of the posterior means are searched within this many sigma
TARGET_SPAN = 4.0  # the log target's saddle point is searched within this many sigma
#: P(sum x = n) is computed by exact (direct) convolution when ``d * (n + 1)`` and ``n``
#: are at most these.
EXACT_WORK = 100_000
EXACT_MAX_N = 2_000


def node_moments(
    grid: CountGrid, log_mass: np.ndarray, sigma_c: float, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact log evidence, posterior mean and variance of a count observed at each point.

    Sums over the quadrature cells. For speed, points within ``BLOCK_SIGMA`` noise
    standard deviations of each other sum the cells within ``WINDOW_SIGMA`` of them;
    where the largest term left out, times the number of cells, could reach
    :math:`e^{-36}` of the smallest kept sum (a steep prior with its mass far below
    the point), the block sums every cell instead.

    Parameters
    ----------
    grid : CountGrid
        The count cells.
    log_mass : numpy.ndarray
        Normalised log prior mass per cell (:func:`log_prior_mass`).
    sigma_c : float
        Noise standard deviation in counts.
    points : numpy.ndarray
        The count estimates at which to evaluate.

    Returns
    -------
    log_ev, mean, var : numpy.ndarray
        One value per point, in the order of ``points``.
    """
    points = np.asarray(points, dtype=float)
    order = np.argsort(points, kind="stable")
    pts = points[order]
    x = grid.x
    inv = 0.5 / sigma_c**2
    log_ev = np.empty(pts.size)
    mean = np.empty(pts.size)
    var = np.empty(pts.size)
    half = WINDOW_SIGMA * sigma_c
    head_max = np.maximum.accumulate(log_mass)
    tail_max = np.maximum.accumulate(log_mass[::-1])[::-1]

    def block(i0: int, i1: int, lo: int, hi: int) -> np.ndarray:
        xs = x[lo:hi]
        lw = log_mass[None, lo:hi] - (xs[None, :] - pts[i0:i1, None]) ** 2 * inv
        top = lw.max(axis=1, keepdims=True)
        w = np.exp(lw - top)
        z = w.sum(axis=1)
        mu = (w @ xs) / z
        v = (w @ (xs * xs)) / z - mu**2
        bad = v < 1e-6 * mu**2
        if np.any(bad):
            v[bad] = (w[bad] * (xs[None, :] - mu[bad, None]) ** 2).sum(axis=1) / z[bad]
        log_ev[i0:i1] = np.log(z) + top[:, 0]
        mean[i0:i1], var[i0:i1] = mu, v
        return log_ev[i0:i1]

    i0 = 0
    while i0 < pts.size:
        i1 = int(np.searchsorted(pts, pts[i0] + BLOCK_SIGMA * sigma_c, side="right"))
        i1 = max(i1, i0 + 1)
        lo = int(np.searchsorted(x, pts[i0] - half))
        hi = int(np.searchsorted(x, pts[i1 - 1] + half, side="right"))
        kept = block(i0, i1, lo, hi) if hi > lo else np.full(i1 - i0, -np.inf)
        # The largest term left out (the nearest node sees it largest), against the
        # smallest kept sum: refine to every cell unless it is below by FULL_SUM_MARGIN.
        floor = float(kept.min()) - FULL_SUM_MARGIN - math.log(x.size)
        # a quick bound first (largest mass times the kernel at the nearest left-out cell)
        out = -np.inf
        if lo > 0:
            out = max(out, head_max[lo - 1] - (x[lo - 1] - pts[i0]) ** 2 * inv)
        if hi < x.size:
            out = max(out, tail_max[hi] - (x[hi] - pts[i1 - 1]) ** 2 * inv)
        if out > floor:
            out = -np.inf
            if lo > 0:
                out = max(out, float((log_mass[:lo] - (x[:lo] - pts[i0]) ** 2 * inv).max()))
            if hi < x.size:
                tail = log_mass[hi:] - (x[hi:] - pts[i1 - 1]) ** 2 * inv
                out = max(out, float(tail.max()))
            if out > floor:
                block(i0, i1, 0, x.size)
        i0 = i1
    log_ev -= math.log(sigma_c) + LOG_SQRT_2PI
    results = [np.empty_like(a) for a in (log_ev, mean, var)]
    for o, a in zip(results, (log_ev, mean, var), strict=True):
        o[order] = a
    return results[0], results[1], results[2]


def item_nodes(y_min: float, y_max: float, sigma_c: float) -> np.ndarray:
    """Interpolation nodes for the item quantities over ``[y_min, y_max]``.

    Parameters
    ----------
    y_min, y_max : float
        Range of the count estimates to cover.
    sigma_c : float
        Noise standard deviation in counts.
    """
    return spline_nodes(y_min, y_max, sigma_c, NODES_PER_SIGMA, KNEE_SIGMA, NODE_GROWTH)


class ItemMoments:
    """Per-item log evidence and posterior moments under one prior, as splines in ``y``.

    Parameters
    ----------
    grid : CountGrid
        The count cells.
    log_mass : numpy.ndarray
        Normalised log prior mass per cell (:func:`log_prior_mass`).
    sigma_c : float
        Noise standard deviation in counts.
    y_min, y_max : float
        Range of (possibly shifted) count estimates to cover.
    nodes : numpy.ndarray, optional
        The interpolation nodes (:func:`item_nodes` over the range by default).

    Attributes
    ----------
    nodes, node_log_ev, node_mean, node_var : numpy.ndarray
        The nodes and the exact values there.
    """

    def __init__(
        self,
        grid: CountGrid,
        log_mass: np.ndarray,
        sigma_c: float,
        y_min: float,
        y_max: float,
        nodes: np.ndarray | None = None,
    ) -> None:
        self.nodes: np.ndarray = item_nodes(y_min, y_max, sigma_c) if nodes is None else nodes
        self.lo, self.hi = float(self.nodes[0]), float(self.nodes[-1])
        log_ev, mean, var = node_moments(grid, log_mass, sigma_c, self.nodes)
        self.node_log_ev, self.node_mean, self.node_var = log_ev, mean, var
        tiny = 1e-300
        self._log_ev = CubicSpline(self.nodes, log_ev)
        self._log_mean = CubicSpline(self.nodes, np.log(np.maximum(mean, tiny)))
        self._log_var = CubicSpline(self.nodes, np.log(np.maximum(var, tiny)))

    def _check(self, y: np.ndarray) -> None:
        if y.min() < self.lo or y.max() > self.hi:
            raise ValueError(
                f"count estimates [{y.min():.4g}, {y.max():.4g}] outside the "
                f"interpolation range [{self.lo:.4g}, {self.hi:.4g}]"
            )

    def log_evidence(self, y) -> np.ndarray:
        r""":math:`\log \sum_x P(x)\,\mathcal N(y; x, \sigma_c^2)` per item.

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the nodes' range (else ValueError).
        """
        y = np.asarray(y, dtype=float)
        self._check(y)
        return self._log_ev(y)

    def mean(self, y) -> np.ndarray:
        """Posterior mean count per item.

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the nodes' range (else ValueError).
        """
        y = np.asarray(y, dtype=float)
        self._check(y)
        return np.exp(self._log_mean(y))

    def variance(self, y) -> np.ndarray:
        """Posterior variance of the count per item.

        Parameters
        ----------
        y : array_like of float
            Count estimates, within the nodes' range (else ValueError).
        """
        y = np.asarray(y, dtype=float)
        self._check(y)
        return np.exp(self._log_var(y))


@dataclass(frozen=True)
class Problem:
    """What the model conditions on: count estimates, noise, and the quadrature grid.

    ``nodes`` cover the estimates widened by ``span`` (the log target's saddle point is
    searched within it; beyond it the target is continued by a tilted normal term)
    and ``weights`` turn sums over items into sums over nodes
    (:func:`lagrange_weights`). ``exact`` says whether ``P(sum x = n)`` is computed by
    exact convolution over every count (``d * (n + 1) <= EXACT_WORK`` and ``n <= EXACT_MAX_N``).
    """

    y: np.ndarray
    sigma_c: float
    n: int
    grid: CountGrid
    nodes: np.ndarray | None = None
    weights: np.ndarray | None = None
    span: float = 0.0
    exact: bool = False

    @classmethod
    def from_counts(
        cls, y: np.ndarray, sigma_c: float, n: int, exact: bool | None = None
    ) -> Problem:
        r"""Set up the grid, nodes and weights for count estimates ``y``.

        ``exact=None`` chooses exact convolution for small problems (see above).

        Parameters
        ----------
        y : numpy.ndarray
            Count estimates :math:`n \tilde f_v`.
        sigma_c : float
            Noise standard deviation in counts.
        n : int
            Number of users.
        exact : bool, optional
            Force (``True``) or forbid (``False``) the exact computation of the total's
            probability; None chooses it when ``d (n + 1) <= EXACT_WORK`` and
            ``n <= EXACT_MAX_N``.
        """
        y = np.asarray(y, dtype=float)
        sigma_c, n = float(sigma_c), int(n)
        span = TARGET_SPAN * sigma_c
        nodes = item_nodes(float(y.min()) - span, float(y.max()) + span, sigma_c)
        if exact is None:
            exact = y.size * (n + 1) <= EXACT_WORK and n <= EXACT_MAX_N
        return cls(
            y, sigma_c, n, CountGrid.build(n, sigma_c), nodes, lagrange_weights(y, nodes),
            span, bool(exact),
        )  # fmt: skip

    @property
    def d(self) -> int:
        """Number of items."""
        return int(self.y.size)

    def moments(self, s: float, c: float, pad: float = 0.0) -> ItemMoments:
        """Item splines for prior ``(s, c)`` covering ``y`` widened by ``pad`` counts.

        With ``pad <= span`` the problem's own nodes are used (they cover ``span``).

        Parameters
        ----------
        s, c : float
            Exponent and scale of the prior.
        pad : float, default 0.0
            Widening of the estimates' range on each side, in counts.
        """
        lm = log_prior_mass(self.grid, s, c)
        lo, hi = float(self.y.min()) - pad, float(self.y.max()) + pad
        if self.nodes is not None and pad <= self.span:
            return ItemMoments(self.grid, lm, self.sigma_c, lo, hi, nodes=self.nodes)
        return ItemMoments(self.grid, lm, self.sigma_c, lo, hi)


@dataclass(frozen=True)
class Saddle:
    """The saddle point of the total: shift, log target and the total's tilted moments."""

    shift: float
    log_target: float
    mean: float
    var: float


def saddle_point(problem: Problem, mom: ItemMoments, span: float | None = None) -> Saddle:
    r"""Saddle-point approximation to the log target (see :func:`log_target`).

    Tilting every item's posterior by :math:`e^{\lambda x}` is evaluating it at the
    shifted estimate :math:`y_v + \delta`, :math:`\delta = \lambda\sigma_c^2`, so the
    cumulant generating function of the total is
    :math:`K(\lambda) = \sum_v [A(y_v + \delta) - A(y_v)] + \lambda \sum_v y_v
    + d\,\delta^2 / 2\sigma_c^2`, with :math:`A` the log evidence. The shift solves
    :math:`K'(\lambda) = n` (searched within ``problem.span``; beyond it the normal
    approximation of the distribution tilted to the end of the range is used, which
    is continuous with the saddle point). ``span`` (``problem.span`` by default) must
    not exceed what ``mom`` covers.

    Parameters
    ----------
    problem : Problem
        A problem from :meth:`Problem.from_counts` (with nodes and weights).
    mom : ItemMoments
        The item splines of one prior, covering the estimates widened by ``span``.
    span : float, optional
        Search the shift within ``+-span`` counts; ``problem.span`` by default.
    """
    w, nodes, sc, n = problem.weights, problem.nodes, problem.sigma_c, problem.n
    assert w is not None and nodes is not None, "a Problem from Problem.from_counts"
    active = w != 0
    wa, na = w[active], nodes[active]

    # at shift 0 on the problem's own nodes the exact node values are used
    own = mom.nodes is nodes or (mom.nodes.shape == nodes.shape and np.all(mom.nodes == nodes))

    def total_mean(shift: float) -> float:
        if shift == 0.0 and own:
            return float(wa @ mom.node_mean[active])
        return float(wa @ np.exp(mom._log_mean(na + shift)))

    span = problem.span if span is None else float(span)
    lo, hi = total_mean(-span) - n, total_mean(span) - n
    if lo > 0:
        shift = -span
    elif hi < 0:
        shift = span
    else:
        shift = optimize.brentq(
            lambda h: total_mean(h) - n, -span, span, xtol=1e-10 * sc, rtol=1e-14
        )
    if shift == 0.0 and own:
        at_nodes = (mom.node_log_ev, mom.node_mean, mom.node_var)
        a, mean, var = (float(wa @ v[active]) for v in at_nodes)
    else:
        z = na + shift
        a = float(wa @ mom._log_ev(z))
        mean = float(wa @ np.exp(mom._log_mean(z)))
        var = float(wa @ np.exp(mom._log_var(z)))
    lam = shift / sc**2
    value = (
        a + lam * (float(problem.y.sum()) - n) + problem.d * shift**2 / (2 * sc**2)
        - 0.5 * math.log(2 * math.pi * var) - 0.5 * (n - mean) ** 2 / var
    )  # fmt: skip
    return Saddle(float(shift), float(value), mean, var)


def summaries(problem: Problem, s: float, log_c: float) -> tuple[float, float, float]:
    """Total log evidence ``T``, and mean ``M`` and variance ``V`` of the total count.

    Parameters
    ----------
    problem : Problem
        A problem from :meth:`Problem.from_counts` (with nodes and weights).
    s : float
        The prior's exponent.
    log_c : float
        Log of the prior's scale.
    """
    mom = problem.moments(s, math.exp(log_c))
    w = problem.weights
    return (
        float(w @ mom.node_log_ev),
        float(w @ mom.node_mean),
        float(w @ mom.node_var),
    )


class ExactTotal:
    r"""The item posteriors over every count ``0..n`` and their sum, exactly (small cases).

    Each item's posterior is tilted by :math:`e^{\lambda x}` so that the tilted means
    add up to ``n`` (which changes nothing once the total is conditioned on, and keeps
    :math:`P(\sum x = n)` in the bulk of the tilted sum's law, where convolution is
    accurate), then the items are convolved one by one, truncated at ``n``.

    Attributes
    ----------
    log_evidence : numpy.ndarray
        Per item, :math:`\log p(y_v \mid s, c)`.
    log_total : float
        :math:`\log P(\sum_v x_v = n \mid y, s, c)` under the items' posteriors.
    q : numpy.ndarray
        Tilted item posteriors, shape ``(d, n + 1)``, rows summing to 1.
    suffix : numpy.ndarray
        ``suffix[v]`` is the (rescaled) law of :math:`x_v + \dots + x_{d-1}` on ``0..n``;
        ``suffix[d]`` is a point mass at 0.
    """

    def __init__(self, y: np.ndarray, sigma_c: float, n: int, s: float, c: float) -> None:
        self.log_evidence, q, log_z, lam = _tilted_item_posteriors(y, sigma_c, n, s, c)
        self.q, self.lam = q, lam
        d = q.shape[0]
        suffix = np.zeros((d + 1, n + 1))
        suffix[d, 0] = 1.0
        log_scale = 0.0
        for v in range(d - 1, -1, -1):
            # direct convolution: sums of positive products, accurate over any range
            row = np.convolve(suffix[v + 1], q[v])[: n + 1]
            top = row.max()
            suffix[v] = row / top
            log_scale += math.log(top)
        self.suffix = suffix
        p_n = suffix[0, n]
        self.log_total = (
            _untilted(math.log(p_n) + log_scale, log_z, lam, n) if p_n > 0 else -math.inf
        )

    def means(self) -> np.ndarray:
        r""":math:`E[x_v \mid y, \sum x = n]` for every item."""
        q, suffix = self.q, self.suffix
        d, n1 = q.shape
        n = n1 - 1
        k = np.arange(n1)
        prefix = np.zeros(n1)
        prefix[0] = 1.0
        out = np.empty(d)
        for v in range(d):
            others = np.convolve(prefix, suffix[v + 1])[:n1]
            w = q[v] * others[n - k]
            out[v] = (w @ k) / w.sum()
            prefix = np.convolve(prefix, q[v])[:n1]
            prefix /= prefix.max()
        return out

    def sample(self, u: np.ndarray) -> np.ndarray:
        r"""Count vectors summing to ``n`` drawn exactly from the conditioned posterior.

        ``u`` holds uniforms of shape ``(rows, d)``; item ``v`` is drawn given the
        items before it, from :math:`q_v(k)\,\mathrm{suffix}_{v+1}(r - k)`, ``r`` the
        users left.

        Parameters
        ----------
        u : numpy.ndarray
            Uniforms in [0, 1), shape ``(rows, d)``.
        """
        q, suffix = self.q, self.suffix
        d, n1 = q.shape
        rows = u.shape[0]
        left = np.full(rows, n1 - 1)
        out = np.empty((rows, d))
        k = np.arange(n1)
        for v in range(d):
            idx = left[:, None] - k[None, :]
            w = np.where(idx >= 0, q[v][None, :] * suffix[v + 1][np.maximum(idx, 0)], 0.0)
            cdf = np.cumsum(w, axis=1)
            pick = (cdf < u[:, v : v + 1] * cdf[:, -1:]).sum(axis=1)
            pick = np.minimum(pick, left)
            out[:, v] = pick
            left = left - pick
        return out


def _tilted_item_posteriors(
    y: np.ndarray, sigma_c: float, n: int, s: float, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    r"""Return the items' log evidence and posteriors on ``0..n``, tilted: means sum to ``n``.

    Returns ``(log_evidence, q, log_z, lam)``: ``q[v]`` is item ``v``'s posterior times
    :math:`e^{\lambda x}`, normalised, and ``log_z[v]`` the log of that normaliser.
    """
    x = np.arange(n + 1, dtype=float)
    lp = -s * np.log1p(x / c)
    lp -= logsumexp(lp)
    lw = lp[None, :] - (x[None, :] - y[:, None]) ** 2 / (2 * sigma_c**2)
    lw -= math.log(sigma_c) + LOG_SQRT_2PI
    q, log_evidence = _normalised_exp(lw)
    log_post = lw  # (in place: lw is not used again)
    log_post -= log_evidence[:, None]

    def tilted(lam: float) -> tuple[np.ndarray, np.ndarray]:
        return _normalised_exp(log_post + lam * x[None, :]) if lam else (q, np.zeros(y.size))

    lam = 0.0
    if y.size > 1:
        lam = _solve_tilt(tilted, x, n, 1.0 / max(sigma_c, 1.0))
    q, log_z = tilted(lam)
    return log_evidence, q, log_z, lam


def _untilted(log_p_n: float, log_z: np.ndarray, lam: float, n: int) -> float:
    r""":math:`\log P(\sum x = n)` under the item posteriors, from that under the tilted ones.

    Tilting each posterior by :math:`e^{\lambda x} / z_v` multiplies the law of the sum
    at ``n`` by :math:`e^{\lambda n} / \prod_v z_v`; this undoes it.
    """
    return log_p_n + float(log_z.sum()) - lam * n


def _normalised_exp(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``exp(t)`` normalised to sum to 1, and each row's log of the sum.

    One exponential per element (``scipy.special.logsumexp`` followed by ``exp`` takes
    two, and this sits in the exact target's innermost loop).
    """
    top = t.max(axis=1)
    e = t - top[:, None]
    np.exp(e, out=e)
    total = e.sum(axis=1)
    e /= total[:, None]
    return e, top + np.log(total)


def _log_total_probability(q: np.ndarray, n: int) -> float:
    """Log of the probability that independent counts with laws ``q`` (rows) sum to ``n``.

    Pairwise FFT convolutions, all pairs of a level at once, truncated at ``n`` (every
    count is non-negative, so counts above ``n`` never come back). FFT rounding is
    absolute, about 1e-16 of each law's peak, and the rows are tilted so that ``n`` is
    the mean of the sum: the products that make up the value at ``n`` pair each half's
    bulk with the other's, so the value keeps ~13 significant digits
    (:class:`ExactTotal`'s direct convolution is the reference in the tests).
    """
    from scipy import fft

    size = fft.next_fast_len(2 * n + 1, real=True)  # no wrap-around of two laws on 0..n
    top = q.max(axis=1)
    laws = q / top[:, None]
    log_scale = float(np.log(top).sum())
    while laws.shape[0] > 1:
        pairs = laws.shape[0] // 2
        spectra = fft.rfft(laws[: 2 * pairs], n=size, axis=1)
        paired = fft.irfft(spectra[0::2] * spectra[1::2], n=size, axis=1)[:, : n + 1]
        np.maximum(paired, 0.0, out=paired)
        top = paired.max(axis=1)
        paired /= top[:, None]
        log_scale += float(np.log(top).sum())
        laws = np.vstack([paired, laws[2 * pairs :]])
    p_n = float(laws[0, n])
    return math.log(p_n) + log_scale if p_n > 0 else -math.inf


def _solve_tilt(tilted, x: np.ndarray, n: int, scale: float) -> float:
    """Find the tilt whose item means add up to ``n``: Newton steps inside a bracket.

    The bracket is grown geometrically from ``scale`` until it holds the root. A Newton
    step that leaves the bracket, or one after a step that did not halve the error, is
    replaced by bisection (the sum of the means is increasing in the tilt, so Newton
    from the convex side can overshoot: bisecting only then keeps Newton's quadratic
    convergence near the root).
    """
    lam, lo, hi, step = 0.0, -math.inf, math.inf, scale
    last = math.inf
    for _ in range(400):
        p, _ = tilted(lam)
        mean_each = p @ x
        f = float(mean_each.sum()) - n
        var = float((p @ (x * x) - mean_each**2).sum())
        if abs(f) <= 1e-10 * max(1.0, math.sqrt(max(var, 0.0))):
            return lam
        if f < 0:
            lo = lam
        else:
            hi = lam
        newton = lam - f / var if var > 0 else math.nan
        if math.isfinite(lo) and math.isfinite(hi):
            if hi - lo <= 1e-15 * max(1.0, abs(lam)):
                return lam
            slow = abs(f) > 0.5 * last
            new = newton if lo < newton < hi and not slow else 0.5 * (lo + hi)
        else:
            new = lam + (step if f < 0 else -step)
            step *= 2.0
            if lo < newton < hi and abs(newton - lam) < abs(new - lam):
                new = newton
        last = abs(f)
        lam = new
    return lam


def log_target(problem: Problem, s: float, log_c: float) -> float:
    r"""Log-likelihood of the parameters given the estimates and the known total.

    .. math::

        G(s, c) = \sum_v \log p(y_v \mid s, c)
            + \log P\big(\textstyle\sum_v x_v = n \mid y, s, c\big)

    The second term is the probability that counts drawn from the items' posteriors add
    up to ``n``: exact (convolution over every count, :class:`ExactTotal`) when
    ``problem.exact``, otherwise the saddle-point approximation
    (:func:`saddle_point`), whose relative error is :math:`O(1/d)`.

    Parameters
    ----------
    problem : Problem
        The count estimates, noise and total.
    s : float
        The prior's exponent.
    log_c : float
        Log of the prior's scale.
    """
    if problem.exact:
        n = problem.n
        log_ev, q, log_z, lam = _tilted_item_posteriors(
            problem.y, problem.sigma_c, n, s, math.exp(log_c)
        )
        log_total = _untilted(_log_total_probability(q, n), log_z, lam, n)
        return float(log_ev.sum() + log_total)
    return saddle_point(problem, problem.moments(s, math.exp(log_c))).log_target


@dataclass(frozen=True)
class Chebyshev2D:
    """A tensor Chebyshev interpolant of a function on ``[s_lo, s_hi] x [u_lo, u_hi]``."""

    coef: np.ndarray
    s_lo: float
    s_hi: float
    u_lo: float
    u_hi: float
    max_error: float

    def to_unit(self, s, u):
        """Map ``(s, u)`` in the box to ``[-1, 1] x [-1, 1]``.

        Parameters
        ----------
        s, u : float, numpy.ndarray or TensorVariable
            Coordinates in ``[s_lo, s_hi]`` and ``[u_lo, u_hi]``.
        """
        return (
            (2 * s - (self.s_lo + self.s_hi)) / (self.s_hi - self.s_lo),
            (2 * u - (self.u_lo + self.u_hi)) / (self.u_hi - self.u_lo),
        )

    def __call__(self, s: float, u: float) -> float:
        """Evaluate the interpolant at ``(s, u)``."""
        a, b = self.to_unit(s, u)
        return float(C.chebval2d(a, b, self.coef))


#: Off-node points (fractions of the box) at which an interpolant's error is measured.
PROBES = (
    (0.137, 0.61), (0.5, 0.5), (0.861, 0.29), (0.33, 0.9), (0.05, 0.07),
    (0.93, 0.96), (0.71, 0.13), (0.21, 0.37),
    *((a, b) for a in (0.09, 0.29, 0.52, 0.73, 0.91) for b in (0.11, 0.31, 0.47, 0.69, 0.89)),
)  # fmt: skip
#: Probes further than this many nats below the peak (in value and interpolant) don't count.
RELEVANT_DROP = 30.0


def chebyshev_fit(
    func,
    s_box: tuple[float, float],
    u_box: tuple[float, float],
    degree: int = 14,
    peak: float | None = None,
) -> Chebyshev2D:
    """Interpolate ``func(s, u)`` at ``degree x degree`` Chebyshev points of the box.

    ``max_error`` is the largest error at the off-node :data:`PROBES`; with ``peak``
    (the largest value of ``func``), probes where both ``func`` and the interpolant are
    more than :data:`RELEVANT_DROP` nats below it are left out: as a log density there,
    neither carries any mass.

    Parameters
    ----------
    func : callable
        ``func(s, u) -> float``.
    s_box, u_box : (float, float)
        The box's extent along each coordinate.
    degree : int, default 14
        Chebyshev points per coordinate (the series has ``degree`` terms in each).
    peak : float, optional
        Largest value of ``func`` known; the node values' maximum is used if larger.
    """
    k = np.arange(degree)
    t = np.cos(np.pi * (k + 0.5) / degree)
    s_nodes = s_box[0] + (t + 1) * (s_box[1] - s_box[0]) / 2
    u_nodes = u_box[0] + (t + 1) * (u_box[1] - u_box[0]) / 2
    values = np.array([[func(s, u) for u in u_nodes] for s in s_nodes])
    # Discrete Chebyshev transform (exact for points of the first kind).
    basis = C.chebvander(t, degree - 1)  # (k, j): T_j(t_k)
    scale = np.full(degree, 2.0 / degree)
    scale[0] = 1.0 / degree
    coef = (basis.T * scale[:, None]) @ values @ (basis * scale[None, :])
    fit = Chebyshev2D(coef, *s_box, *u_box, max_error=0.0)
    top = max(float(values.max()), -math.inf if peak is None else peak)
    err = 0.0
    for a, b in PROBES:
        s = s_box[0] + a * (s_box[1] - s_box[0])
        u = u_box[0] + b * (u_box[1] - u_box[0])
        exact, approx = func(s, u), fit(s, u)
        if peak is not None and max(exact, approx) < top - RELEVANT_DROP:
            continue
        err = max(err, abs(exact - approx))
    return Chebyshev2D(coef, *s_box, *u_box, max_error=err)


def chebval2d_tensor(a, b, coef):
    """Evaluate a 2-D Chebyshev series at scalar tensors ``a``, ``b`` in pytensor.

    ``coef`` is a square array, or a shared matrix (``pm.Data``) holding one.

    Parameters
    ----------
    a, b : TensorVariable
        Scalars in [-1, 1], the first and second coordinate.
    coef : numpy.ndarray or shared variable
        Square coefficient matrix, ``coef[i, j]`` multiplying ``T_i(a) T_j(b)``.
    """
    import pytensor.tensor as pt

    from bayesldp.models.chebyshev import chebyshev_basis_tensor as basis

    k = coef.shape[0] if isinstance(coef, np.ndarray) else coef.get_value().shape[0]
    return pt.dot(basis(a, k), pt.dot(pt.as_tensor(coef), basis(b, k)))
