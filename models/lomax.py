"""Numerics of the shifted power-law (Lomax) prior on counts used by ``bayes-consistent``.

The prior puts mass :math:`P(x) \\propto (1 + x/c)^{-s}` on every count
:math:`x = 0, \\dots, n`. Sums over all ``n + 1`` counts are done on a quadrature grid
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
from scipy.interpolate import CubicSpline
from scipy.special import logsumexp

from bayesldp.calibrate import spline_nodes

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
        """
        exact = min(n + 1, EXACT_COUNTS)
        edges = list(range(exact + 1))  # cell j holds the counts edges[j] .. edges[j+1]-1
        cap = max(1, math.floor(CELL_SIGMA * sigma_c))
        e = edges[-1]
        while e < n + 1:
            e = min(n + 1, e + max(1, min(cap, math.floor(GROWTH * e))))
            edges.append(e)
        edges = np.asarray(edges, dtype=float)
        width = np.diff(edges)
        return cls((edges[:-1] + edges[1:] - 1) / 2, np.log(width))


def log_prior_mass(grid: CountGrid, s: float, c: float) -> np.ndarray:
    """Normalised log prior mass of each cell: :math:`\\log P(x) + \\log` width."""
    lm = -s * np.log1p(grid.x / c) + grid.log_width
    return lm - logsumexp(lm)


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
    """

    def __init__(
        self, grid: CountGrid, log_mass: np.ndarray, sigma_c: float, y_min: float, y_max: float
    ) -> None:
        self.nodes = spline_nodes(y_min, y_max, sigma_c, NODES_PER_SIGMA, KNEE_SIGMA, NODE_GROWTH)
        self.lo, self.hi = float(self.nodes[0]), float(self.nodes[-1])
        x = grid.x
        lw = log_mass[None, :] - (x[None, :] - self.nodes[:, None]) ** 2 / (2 * sigma_c**2)
        top = lw.max(axis=1, keepdims=True)
        w = np.exp(lw - top)
        z = w.sum(axis=1)
        log_ev = np.log(z) + top[:, 0] - math.log(sigma_c) - LOG_SQRT_2PI
        mean = (w @ x) / z
        var = (w @ (x * x)) / z - mean**2
        # recompute the variance around the mean where cancellation would cost digits
        bad = var < 1e-6 * mean**2
        if np.any(bad):
            var[bad] = (w[bad] * (x[None, :] - mean[bad, None]) ** 2).sum(axis=1) / z[bad]
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
        """:math:`\\log \\sum_x P(x)\\,\\mathcal N(y; x, \\sigma_c^2)` per item."""
        y = np.asarray(y, dtype=float)
        self._check(y)
        return self._log_ev(y)

    def mean(self, y) -> np.ndarray:
        """Posterior mean count per item."""
        y = np.asarray(y, dtype=float)
        self._check(y)
        return np.exp(self._log_mean(y))

    def variance(self, y) -> np.ndarray:
        """Posterior variance of the count per item."""
        y = np.asarray(y, dtype=float)
        self._check(y)
        return np.exp(self._log_var(y))


@dataclass(frozen=True)
class Problem:
    """What the model conditions on: count estimates, noise, and the quadrature grid."""

    y: np.ndarray
    sigma_c: float
    n: int
    grid: CountGrid

    @classmethod
    def from_counts(cls, y: np.ndarray, sigma_c: float, n: int) -> Problem:
        return cls(np.asarray(y, dtype=float), float(sigma_c), int(n), CountGrid.build(n, sigma_c))

    def moments(self, s: float, c: float, pad: float = 0.0) -> ItemMoments:
        """Item splines for prior ``(s, c)`` covering ``y`` widened by ``pad`` counts."""
        lm = log_prior_mass(self.grid, s, c)
        return ItemMoments(
            self.grid, lm, self.sigma_c, float(self.y.min()) - pad, float(self.y.max()) + pad
        )


def summaries(problem: Problem, s: float, log_c: float) -> tuple[float, float, float]:
    """Total log evidence ``T``, and mean ``M`` and variance ``V`` of the total count."""
    mom = problem.moments(s, math.exp(log_c))
    y = problem.y
    return (
        float(mom.log_evidence(y).sum()),
        float(mom.mean(y).sum()),
        float(mom.variance(y).sum()),
    )


def log_target(problem: Problem, s: float, log_c: float) -> float:
    """Log-likelihood of the parameters given the estimates and the known total.

    .. math::

        G(s, c) = \\sum_v \\log p(y_v \\mid s, c)
            + \\log \\mathcal N\\big(n;\\, M(s, c),\\, V(s, c)\\big)

    The second term is the normal (central-limit) approximation to the probability
    that counts drawn from the items' posteriors add up to ``n``.
    """
    t, m, v = summaries(problem, s, log_c)
    return t - 0.5 * (problem.n - m) ** 2 / v - 0.5 * math.log(2 * math.pi * v)


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
        return (
            (2 * s - (self.s_lo + self.s_hi)) / (self.s_hi - self.s_lo),
            (2 * u - (self.u_lo + self.u_hi)) / (self.u_hi - self.u_lo),
        )

    def __call__(self, s: float, u: float) -> float:
        a, b = self.to_unit(s, u)
        return float(C.chebval2d(a, b, self.coef))


def chebyshev_fit(func, s_box, u_box, degree: int = 14) -> Chebyshev2D:
    """Interpolate ``func(s, u)`` at ``degree x degree`` Chebyshev points of the box."""
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
    err = 0.0
    probes = ((0.137, 0.61), (0.5, 0.5), (0.861, 0.29), (0.33, 0.9), (0.05, 0.07),
              (0.93, 0.96), (0.71, 0.13), (0.21, 0.37))  # fmt: skip
    for a, b in probes:
        s = s_box[0] + a * (s_box[1] - s_box[0])
        u = u_box[0] + b * (u_box[1] - u_box[0])
        err = max(err, abs(func(s, u) - fit(s, u)))
    return Chebyshev2D(coef, *s_box, *u_box, max_error=err)


def chebval2d_tensor(a, b, coef):
    """Evaluate a 2-D Chebyshev series at scalar tensors ``a``, ``b`` in pytensor.

    ``coef`` is a square array, or a shared matrix (``pm.Data``) holding one.
    """
    import pytensor.tensor as pt

    from bayesldp.models.chebyshev import chebyshev_basis_tensor as basis

    k = coef.shape[0] if isinstance(coef, np.ndarray) else coef.get_value().shape[0]
    return pt.dot(basis(a, k), pt.dot(pt.as_tensor(coef), basis(b, k)))
