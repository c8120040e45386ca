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
from scipy.interpolate import CubicSpline
from scipy.special import logsumexp

from bayesldp.methods._calibrate import spline_nodes

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
