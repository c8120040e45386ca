r"""Sums over the count cells at many points: log evidence, posterior mean and variance.

A count observed at :math:`y` with Gaussian noise :math:`\sigma_c` has evidence
:math:`\sum_j P_j\,\mathcal N(y; x_j, \sigma_c^2)` over the quadrature cells
:math:`x_j` (prior mass :math:`P_j`), and a posterior mean and variance that are sums
of the same terms. :class:`NodeWindows` evaluates them at a fixed set of points for
any prior: everything that depends on the points and the cells only (which cells each
point keeps, the kernels) is computed once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
WINDOW_SIGMA = 10.0  # node sums keep the cells within this many sigma of the node ...
FULL_SUM_MARGIN = 36.0  # ... unless what is left out may reach exp(-this) of what is kept
BLOCK_SIGMA = 4.0  # nodes closer together than this many sigma share one window of cells
#: exp of anything this far below a sum's largest term is exactly 0 in double precision
UNDERFLOW = 750.0


@dataclass(frozen=True)
class NodeWindows:
    r"""Which cells the sums at each point keep, and the kernels: fixed by points and cells.

    Points within ``BLOCK_SIGMA`` noise standard deviations of each other form a block
    and sum the cells within ``WINDOW_SIGMA`` of the block; where the largest term left
    out, times the number of cells, could reach :math:`e^{-36}`
    (``FULL_SUM_MARGIN``) of the smallest kept sum (a steep prior with its mass far
    below the points), the block sums every cell instead (every cell whose term is not
    exactly 0 in double precision). None of this but the last check depends on the
    prior, so it is built once per set of points (:meth:`build`). Within a block of
    centre :math:`y_0`, with :math:`b_j = x_j - y_0` and :math:`\delta_i = y_i - y_0`,
    the kernel factorises,

    .. math::

        \log P_j - \frac{(x_j - y_i)^2}{2\sigma_c^2}
        = \Big[\log P_j - \frac{b_j^2}{2\sigma_c^2}\Big]
        + \frac{b_j \delta_i}{\sigma_c^2} - \frac{\delta_i^2}{2\sigma_c^2},

    so the prior enters through one exponential per cell, and the sums of all the
    block's points are one matrix product with the fixed :math:`e^{b_j \delta_i /
    \sigma_c^2}` (at most :math:`e^{24}`: the block spans ``BLOCK_SIGMA`` and the
    window ``WINDOW_SIGMA`` on each side, so nothing overflows, and every point's sum
    is at least :math:`e^{-26}` of the scale, so nothing that matters underflows).

    Attributes
    ----------
    x : numpy.ndarray
        The cells' representatives (``CountGrid.x``).
    sigma_c : float
        Noise standard deviation in counts.
    points : numpy.ndarray
        The points, in the caller's order.
    order : numpy.ndarray
        The permutation sorting ``points``.
    blocks : numpy.ndarray
        One row ``(i0, i1, lo, hi)`` per block: sorted points ``i0 .. i1 - 1`` keep cells
        ``lo .. hi - 1``.
    starts, cells, segment : numpy.ndarray
        The windows laid end to end: where each block's begins, the cell of every entry
        and its block.
    row_block, offset : numpy.ndarray
        Per sorted point, its block and :math:`-\delta_i^2 / 2\sigma_c^2`.
    quad, powers : numpy.ndarray
        Per entry, :math:`b_j^2 / 2\sigma_c^2` and :math:`1, x_j, x_j^2`.
    tilts : tuple of numpy.ndarray
        Per block, :math:`e^{b_j \delta_i / \sigma_c^2}` (rows: its points).
    cell_powers : numpy.ndarray
        Per cell, :math:`1, x_j, x_j^2`.
    spans : tuple
        Per block with cells, ``(block, i0, i1, start, stop)``: its points and entries.

    The kernels of the blocks that needed every cell are kept after their first use.
    """

    x: np.ndarray
    sigma_c: float
    points: np.ndarray
    order: np.ndarray
    blocks: np.ndarray
    starts: np.ndarray
    cells: np.ndarray
    segment: np.ndarray
    row_block: np.ndarray
    offset: np.ndarray
    quad: np.ndarray
    powers: np.ndarray
    tilts: tuple[np.ndarray, ...]
    cell_powers: np.ndarray
    spans: tuple[tuple[int, int, int, int, int], ...]
    _kernels: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def build(cls, x: np.ndarray, sigma_c: float, points: np.ndarray) -> NodeWindows:
        """Blocks, windows and kernels of ``points`` on cells ``x`` with noise ``sigma_c``.

        Parameters
        ----------
        x : numpy.ndarray
            Increasing cell representatives (``CountGrid.x``).
        sigma_c : float
            Noise standard deviation in counts.
        points : numpy.ndarray
            The count estimates at which sums will be evaluated (at least one).
        """
        points = np.asarray(points, dtype=float)
        order = np.argsort(points, kind="stable")
        pts = points[order]
        half = WINDOW_SIGMA * sigma_c
        var2 = 2 * sigma_c**2
        blocks, offset, quad, tilts = [], [], [], []
        i0 = 0
        while i0 < pts.size:
            i1 = int(np.searchsorted(pts, pts[i0] + BLOCK_SIGMA * sigma_c, side="right"))
            i1 = max(i1, i0 + 1)
            lo = int(np.searchsorted(x, pts[i0] - half))
            hi = int(np.searchsorted(x, pts[i1 - 1] + half, side="right"))
            y0 = 0.5 * (pts[i0] + pts[i1 - 1])
            delta, b = pts[i0:i1] - y0, x[lo:hi] - y0
            blocks.append((i0, i1, lo, hi))
            offset.append(-(delta**2) / var2)
            quad.append(b**2 / var2)
            tilts.append(np.exp(np.outer(delta, b) * (2.0 / var2)))
            i0 = i1
        block_arr = np.array(blocks, dtype=np.int64)
        lengths = block_arr[:, 3] - block_arr[:, 2]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        cells = np.concatenate([np.arange(lo, hi, dtype=np.int64) for _, _, lo, hi in blocks])
        xs = x[cells]
        return cls(
            x, float(sigma_c), points, order, block_arr, starts, cells,
            np.repeat(np.arange(len(blocks)), lengths),
            np.repeat(np.arange(len(blocks)), block_arr[:, 1] - block_arr[:, 0]),
            np.concatenate(offset), np.concatenate(quad),
            np.stack([np.ones_like(xs), xs, xs * xs], axis=1), tuple(tilts),
            np.stack([np.ones_like(x), x, x * x], axis=1),
            tuple(
                (b, i0, i1, int(start), int(start) + hi - lo)
                for b, ((i0, i1, lo, hi), start) in enumerate(zip(blocks, starts, strict=True))
                if hi > lo
            ),
        )  # fmt: skip

    def _window_sums(self, log_mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per sorted point, the log scale and the scaled sums of 1, x, x^2 over its window."""
        sums = np.zeros((self.points.size, 3))
        top = np.full(self.blocks.shape[0], -np.inf)
        if self.cells.size:
            kept = self.blocks[:, 3] > self.blocks[:, 2]
            # per entry: the prior times the kernel at its block's centre, at most 1
            head = log_mass[self.cells] - self.quad
            top[kept] = np.maximum.reduceat(head, self.starts[kept])
            moments = np.exp(head - top[self.segment])[:, None] * self.powers
            for b, r0, r1, start, stop in self.spans:
                sums[r0:r1] = self.tilts[b] @ moments[start:stop]
        return top[self.row_block] + self.offset, sums

    def _reach(self, b: int) -> np.ndarray:
        """Per cell, the kernel from block ``b``'s nearest point; ``-inf`` in its window."""
        reach = self._kernels.get(("reach", b))
        if reach is None:
            i0, i1, lo, hi = self.blocks[b].tolist()
            pts = self.points[self.order]
            x, inv = self.x, 0.5 / self.sigma_c**2
            reach = np.full(x.size, -np.inf)
            reach[:lo] = (x[:lo] - pts[i0]) ** 2 * inv
            reach[hi:] = (x[hi:] - pts[i1 - 1]) ** 2 * inv
            self._kernels[("reach", b)] = reach
        return reach

    def _dense_sums(self, b: int, log_mass: np.ndarray, part: slice):
        """Per point of block ``b``: log scale and scaled sums of 1, x, x^2 over cells ``part``."""
        kernel = self._kernels.get(("every cell", b))
        if kernel is None:  # kept: the same blocks tend to need every cell at every prior
            pts = self.points[self.order[self.blocks[b, 0] : self.blocks[b, 1]]]
            kernel = (self.x[None, :] - pts[:, None]) ** 2 * (0.5 / self.sigma_c**2)
            self._kernels[("every cell", b)] = kernel
        w = log_mass[None, part] - kernel[:, part]
        top = w.max(axis=1)
        w -= top[:, None]
        np.exp(w, out=w)
        return top, w @ self.cell_powers[part]

    def moments(self, log_mass: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Log evidence, posterior mean and variance of a count observed at each point.

        Parameters
        ----------
        log_mass : numpy.ndarray
            Normalised log prior mass per cell.

        Returns
        -------
        log_ev, mean, var : numpy.ndarray
            One value per point, in the order of ``points``.
        """
        x, pts = self.x, self.points[self.order]
        inv = 0.5 / self.sigma_c**2
        scale, sums = self._window_sums(log_mass)
        with np.errstate(divide="ignore"):  # a point with no cell in its window: -inf
            kept = np.log(sums[:, 0]) + scale
        # The largest term left out (the nearest point sees it largest), against the
        # smallest kept sum: refine to every cell unless it is below by FULL_SUM_MARGIN.
        i0, i1, lo, hi = self.blocks.T
        floor = np.minimum.reduceat(kept, i0) - FULL_SUM_MARGIN - math.log(x.size)
        # a quick bound first (largest mass times the kernel at the nearest left-out cell)
        head_max = np.maximum.accumulate(log_mass)
        tail_max = np.maximum.accumulate(log_mass[::-1])[::-1]
        left, right = lo > 0, hi < x.size
        out = np.full(i0.size, -np.inf)
        j = lo[left] - 1
        out[left] = head_max[j] - (x[j] - pts[i0[left]]) ** 2 * inv
        j = hi[right]
        out[right] = np.maximum(out[right], tail_max[j] - (x[j] - pts[i1[right] - 1]) ** 2 * inv)
        summed = {}  # refined block -> the cells it sums
        for b in np.flatnonzero(out > floor).tolist():
            b0, b1, b_lo, b_hi = self.blocks[b].tolist()
            # per cell, the largest term any point of the block sees (+inf in the window)
            bound = log_mass - self._reach(b)
            worst = max(bound[:b_lo].max(initial=-np.inf), bound[b_hi:].max(initial=-np.inf))
            if worst <= floor[b]:
                continue
            # every cell, but for those whose terms are exactly 0 (below the smallest
            # kept sum by UNDERFLOW): the window's sums plus the cells either side
            keep = np.flatnonzero(bound >= floor[b] - UNDERFLOW)
            k0, k1 = int(keep[0]), int(keep[-1]) + 1
            summed[b] = slice(k0, k1)
            for part in (slice(k0, b_lo), slice(b_hi, k1)):
                if part.stop > part.start:
                    extra_scale, extra = self._dense_sums(b, log_mass, part)
                    new = np.maximum(scale[b0:b1], extra_scale)
                    sums[b0:b1] = (
                        sums[b0:b1] * np.exp(scale[b0:b1] - new)[:, None]
                        + extra * np.exp(extra_scale - new)[:, None]
                    )
                    scale[b0:b1] = new
        z = sums[:, 0]
        mean = sums[:, 1] / z
        var = sums[:, 2] / z - mean**2
        for r in np.flatnonzero(var < 1e-6 * mean**2).tolist():
            # the two sums cancel: sum the squared deviations instead
            b = int(self.row_block[r])
            part = summed.get(b, slice(int(lo[b]), int(hi[b])))
            lw = log_mass[part] - (x[part] - pts[r]) ** 2 * inv
            w = np.exp(lw - lw.max())
            var[r] = float(w @ (x[part] - mean[r]) ** 2) / float(w.sum())
        log_ev = np.log(z) + scale - (math.log(self.sigma_c) + LOG_SQRT_2PI)
        results = [np.empty_like(a) for a in (log_ev, mean, var)]
        for o, a in zip(results, (log_ev, mean, var), strict=True):
            o[self.order] = a
        return results[0], results[1], results[2]
