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

from bayesldp.methods._calibrate import spline_nodes
from bayesldp.models._node_sums import NodeWindows
from bayesldp.models._spline import cubic_splines

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
    top = lm.max()
    return lm - (top + math.log(float(np.exp(lm - top).sum())))


TILT_SPAN = 12.0  # tilts of the posterior means are searched within this many sigma
TARGET_SPAN = 4.0  # the log target's saddle point is searched within this many sigma
#: P(sum x = n) is computed by exact (direct) convolution when ``d * (n + 1)`` and ``n``
#: are at most these.
EXACT_WORK = 100_000
EXACT_MAX_N = 2_000


def node_moments(
    grid: CountGrid,
    log_mass: np.ndarray,
    sigma_c: float,
    points: np.ndarray,
    windows: NodeWindows | None = None,
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
    windows : NodeWindows, optional
        The blocks and windows of these points (:meth:`NodeWindows.build`), when kept
        from an earlier call; built here otherwise.

    Returns
    -------
    log_ev, mean, var : numpy.ndarray
        One value per point, in the order of ``points``.
    """
    if windows is None:
        windows = NodeWindows.build(grid.x, sigma_c, points)
    return windows.moments(log_mass)


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
    windows : NodeWindows, optional
        The windows of these nodes on ``grid`` (:meth:`NodeWindows.build`), kept from an
        earlier prior; built here otherwise.

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
        windows: NodeWindows | None = None,
    ) -> None:
        self.nodes: np.ndarray = item_nodes(y_min, y_max, sigma_c) if nodes is None else nodes
        self.lo, self.hi = float(self.nodes[0]), float(self.nodes[-1])
        log_ev, mean, var = node_moments(grid, log_mass, sigma_c, self.nodes, windows)
        self.node_log_ev, self.node_mean, self.node_var = log_ev, mean, var
        logs = np.empty((log_ev.size, 3))
        logs[:, 0] = log_ev
        np.log(np.maximum(mean, 1e-300), out=logs[:, 1])
        np.log(np.maximum(var, 1e-300), out=logs[:, 2])
        splines = cubic_splines(self.nodes, logs)
        self._log_ev, self._log_mean, self._log_var = splines

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
