"""Posterior draws of the frequency vector, generated on demand from compact tables.

The Bayesian models sample only the prior's hyper-parameters; given them, each item's
count has a one-dimensional posterior (the prior times the Gaussian likelihood of its
estimate), the same function of the estimate for every item. :class:`ItemPosteriorTable`
tabulates the cumulative distribution of that posterior over the count cells of
:class:`bayesldp.models._counts.CountGrid` (every count up to a few hundred, then cells a
fraction of a noise standard deviation wide) at estimates ``h = sigma_c / 16`` apart;
an item whose estimate falls between two tabulated estimates draws from one of them,
chosen with the linear-interpolation weights (a mixture whose mean and quantiles are
off by ``O(h^2)``). The point masses at counts 0 and 1 are drawn exactly, unlike the
moment-matched Gamma laws used before.

:class:`ItemPosteriorDraws` (and ``bayes-consistent``'s ``ExactTotalDraws``) implement
:class:`bayesldp.estimate.Uncertainty`: row ``i`` of the draws comes from its own
random stream (:func:`bayesldp._draws.row_generator`), so it is the same whatever
chunk asks for it. Nothing of size ``(n_draws, d)`` is needed: rows are generated on
demand, and kept after the first query only while they take at most
:data:`bayesldp._draws.ROW_CACHE_MAX_BYTES` (:func:`bayesldp._draws.cached_rows`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bayesldp._draws import cached_rows, row_generator
from bayesldp._total import condition_on_total
from bayesldp.models._counts import CountGrid
from bayesldp.models._node_sums import WINDOW_SIGMA

#: Spacing of the tabulated estimates, in noise standard deviations.
TABLE_STEP = 1.0 / 16
#: Cells whose cumulative probability is within this of 0 or 1 are left out.
TAIL = 1e-15


class ItemPosteriorTable:
    """Inverse-CDF tables of one prior's item posterior at estimates on a fine grid.

    Parameters
    ----------
    grid : CountGrid
        Count cells covering ``0..n``.
    log_mass : numpy.ndarray
        Normalised log prior mass of each cell (``-inf`` allowed).
    sigma_c : float
        Noise standard deviation in counts.
    z : numpy.ndarray
        The (shifted) estimates that will be drawn for; only the grid points around
        them are tabulated.
    """

    def __init__(
        self, grid: CountGrid, log_mass: np.ndarray, sigma_c: float, z: np.ndarray
    ) -> None:
        self.sigma_c = float(sigma_c)
        self.step = TABLE_STEP * self.sigma_c
        z = np.asarray(z, dtype=float)
        self.origin = math.floor(float(z.min()) / self.step) - 1
        k = np.floor(z / self.step).astype(np.int64) - self.origin
        needed = np.unique(np.concatenate([k, k + 1]))
        self.row_of = np.full(int(needed.max()) + 2, -1, dtype=np.int64)
        self.row_of[needed] = np.arange(needed.size)
        width = np.rint(np.exp(grid.log_width))
        self.cell_low = grid.x - (width - 1) / 2
        self.cell_width = width
        points = (needed + self.origin) * self.step
        starts, values, means, variances = [], [], [], []
        x = grid.x
        half = WINDOW_SIGMA * self.sigma_c
        inv = 0.5 / self.sigma_c**2
        for r, y in enumerate(points):
            lo = int(np.searchsorted(x, y - half))
            hi = int(np.searchsorted(x, y + half, side="right"))
            lw = log_mass[lo:hi] - (x[lo:hi] - y) ** 2 * inv
            if hi <= lo or lw.max() < -0.5 * WINDOW_SIGMA**2 + 30.0 or not np.isfinite(lw).any():
                lo, hi = 0, x.size
                lw = log_mass - (x - y) ** 2 * inv
            p = np.exp(lw - lw.max())
            p /= p.sum()
            xs = x[lo:hi]
            mu = float(p @ xs)
            # within-cell spread of a uniform over the cell's counts adds (w^2 - 1) / 12
            var = float(p @ ((xs - mu) ** 2 + (width[lo:hi] ** 2 - 1) / 12))
            cdf = np.cumsum(p)
            keep_lo = int(np.searchsorted(cdf, TAIL))
            keep_hi = int(np.searchsorted(cdf, 1.0 - TAIL)) + 1
            keep_hi = min(max(keep_hi, keep_lo + 1), cdf.size)
            cdf = cdf[keep_lo:keep_hi]
            prev = cdf[0] - p[keep_lo] if keep_lo > 0 else 0.0
            cdf = (cdf - prev) / (cdf[-1] - prev)
            cdf[-1] = 1.0
            starts.append(lo + keep_lo)
            values.append(r + cdf)
            means.append(mu)
            variances.append(var)
        lengths = np.array([v.size for v in values])
        self.offset = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        self.start_cell = np.asarray(starts, dtype=np.int64)
        self.values = np.concatenate(values)
        self.mean_at = np.asarray(means)
        self.var_at = np.asarray(variances)

    @property
    def nbytes(self) -> int:
        """Memory held by the table."""
        return sum(
            a.nbytes
            for a in (self.values, self.offset, self.start_cell, self.mean_at, self.var_at)
        ) + self.row_of.nbytes + self.cell_low.nbytes + self.cell_width.nbytes  # fmt: skip

    def _locate(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = z / self.step - self.origin
        k = np.floor(t).astype(np.int64)
        return k, t - k

    def moments(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the draws for estimates ``z`` (the mixture's moments).

        Parameters
        ----------
        z : numpy.ndarray
            (Shifted) count estimates, within the range the table was built for.

        Returns
        -------
        mean, var : numpy.ndarray
            Of the count drawn for each estimate: the mixture of the two tabulated grid
            points around it.
        """
        k, frac = self._locate(z)
        r0, r1 = self.row_of[k], self.row_of[k + 1]
        m0, m1 = self.mean_at[r0], self.mean_at[r1]
        v0, v1 = self.var_at[r0], self.var_at[r1]
        mean = (1 - frac) * m0 + frac * m1
        var = (1 - frac) * v0 + frac * v1 + frac * (1 - frac) * (m1 - m0) ** 2
        return mean, var

    def draw(self, z: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        """One count per estimate in ``z``, from the tabulated posteriors.

        Parameters
        ----------
        z : numpy.ndarray
            (Shifted) count estimates, within the range the table was built for.
        gen : numpy.random.Generator
            Source of randomness (two uniforms per estimate).

        Returns
        -------
        numpy.ndarray of float
            One count per estimate, spread uniformly within the grid cell drawn.
        """
        k, frac = self._locate(z)
        u = gen.random((2, z.size))
        row = self.row_of[k + (u[0] < frac)]
        idx = np.searchsorted(self.values, row + u[1], side="right")
        cell = self.start_cell[row] + (idx - self.offset[row])
        hi = self.values[idx] - row
        lo = np.where(idx > self.offset[row], self.values[np.maximum(idx - 1, 0)] - row, 0.0)
        width = self.cell_width[cell]
        inside = np.where(hi > lo, (u[1] - lo) / np.where(hi > lo, hi - lo, 1.0), 0.5)
        x = self.cell_low[cell] + np.where(width > 1, width * inside - 0.5, 0.0)
        return x


@dataclass(frozen=True)
class PointTables:
    """The tables of one posterior draw of the hyper-parameters."""

    table: ItemPosteriorTable
    shift: float = 0.0


@dataclass(frozen=True)
class ItemPosteriorDraws:
    """Draws of the frequency vector from the items' posteriors (an ``Uncertainty``).

    Row ``i`` uses hyper-parameter point ``i % len(points)``: each item's count is drawn
    from its posterior given that point, at its estimate plus the point's tilt
    ``shift``. With ``total`` set, each row is then moved onto ``sum x = n`` the way
    independent Gaussians are conditioned on their sum, keeping the counts non-negative
    (:func:`bayesldp._total.condition_on_total`); otherwise counts are divided by ``n``.

    Rows are generated on demand, so that ``d = 10^6`` needs no ``(n_draws, d)`` array.
    When that array would take at most :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`, the
    first query generates every row once and keeps them, so later queries (an interval
    per subset) only read them (:func:`bayesldp._draws.cached_rows`); each row is the
    same either way (its own seeded generator).
    """

    y: np.ndarray
    n: int
    points: tuple[PointTables, ...]
    seed: int
    n_draws: int
    total: bool = False
    kind: str = "posterior"
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def nbytes(self) -> int:
        """Memory held (the estimates, the tables and any cached rows)."""
        cached = sum(a.nbytes for a in self._cache.values())
        return self.y.nbytes + sum(p.table.nbytes for p in self.points) + cached

    def _row(self, i: int) -> np.ndarray:
        point = self.points[i % len(self.points)]
        gen = row_generator(self.seed, i)
        z = self.y + point.shift
        x = point.table.draw(z, gen)
        if not self.total:
            return x / self.n
        _, var = point.table.moments(z)
        x = condition_on_total(x, var, self.n)
        return x / x.sum()

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1``, read-only, shape ``(stop - start, d)``.

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.
        """
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, self.y.size)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.y.size))
        for j, i in enumerate(range(start, stop)):
            out[j] = self._row(i)
        return out
