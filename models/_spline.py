"""Not-a-knot cubic splines through values at nodes that stay fixed while the values change.

:class:`scipy.interpolate.CubicSpline` solves a tridiagonal system for the slopes at
the nodes every time; its solution is linear in the secants of the values, with a
matrix that depends on the nodes only. :func:`cubic_splines` keeps that matrix per set
of nodes (the last few sets are kept), so a spline costs one small matrix product, and
gives the same piecewise cubics as ``CubicSpline(x, y)`` (to rounding), evaluated by
:class:`PiecewiseCubic` with less overhead than ``PPoly``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicSpline


@dataclass(frozen=True)
class PiecewiseCubic:
    """A cubic on each interval between nodes, extrapolated by the end ones.

    Attributes
    ----------
    x : numpy.ndarray
        The nodes, increasing, shape ``(n,)``.
    c : numpy.ndarray
        Coefficients, shape ``(4, n - 1)``: on ``[x[i], x[i + 1]]`` the cubic is
        ``c[0, i] t^3 + c[1, i] t^2 + c[2, i] t + c[3, i]`` with ``t = z - x[i]``
        (``scipy.interpolate.PPoly``'s layout).
    """

    x: np.ndarray
    c: np.ndarray
    _inner: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_inner", self.x[1:-1])

    def __call__(self, z) -> np.ndarray:
        """Evaluate at ``z`` (array_like)."""
        z = np.asarray(z, dtype=float)
        # the interval holding z, the end ones extended outwards
        i = self._inner.searchsorted(z, side="right")
        t = z - self.x[i]
        c = self.c[:, i]
        out = c[0] * t
        out += c[1]
        out *= t
        out += c[2]
        out *= t
        out += c[3]
        return out


@functools.lru_cache(maxsize=8)
def _secant_gain(key: bytes) -> np.ndarray:
    """Matrix taking the secants to the slopes at the nodes (``CubicSpline``'s system)."""
    x = np.frombuffer(key, dtype=float)
    n, dx = x.size, np.diff(x)
    a = np.zeros((n, n))  # a @ slopes_at_nodes = r @ secants
    r = np.zeros((n, n - 1))
    i = np.arange(1, n - 1)
    a[i, i] = 2 * (dx[:-1] + dx[1:])
    a[i, i + 1] = dx[:-1]
    a[i, i - 1] = dx[1:]
    r[i, i - 1] = 3 * dx[1:]
    r[i, i] = 3 * dx[:-1]
    d = x[2] - x[0]  # not-a-knot at both ends, as CubicSpline writes it
    a[0, 0], a[0, 1] = dx[1], d
    r[0, 0], r[0, 1] = (dx[0] + 2 * d) * dx[1] / d, dx[0] ** 2 / d
    d = x[-1] - x[-3]
    a[-1, -1], a[-1, -2] = dx[-2], d
    r[-1, -2], r[-1, -1] = dx[-1] ** 2 / d, (2 * d + dx[-1]) * dx[-2] / d
    return np.linalg.solve(a, r)


def cubic_splines(x: np.ndarray, y: np.ndarray) -> list[PiecewiseCubic]:
    """Not-a-knot cubic splines through each column of ``y`` at the nodes ``x``.

    Parameters
    ----------
    x : numpy.ndarray
        Increasing nodes, shape ``(n,)``.
    y : numpy.ndarray
        Values at the nodes, shape ``(n, k)``: one spline per column.

    Returns
    -------
    list of PiecewiseCubic
        ``k`` splines, each ``CubicSpline(x, y[:, j])``'s cubics (extrapolating).
    """
    x = np.ascontiguousarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 4:  # CubicSpline's special cases
        c = CubicSpline(x, y).c
    else:
        dx = np.diff(x)[:, None]
        secant = np.diff(y, axis=0) / dx
        slope = _secant_gain(x.tobytes()) @ secant
        t = (slope[:-1] + slope[1:] - 2 * secant) / dx
        c = np.empty((y.shape[1], 4, x.size - 1))  # one spline after the other
        c[:, 0], c[:, 1] = (t / dx).T, ((secant - slope[:-1]) / dx - t).T
        c[:, 2], c[:, 3] = slope[:-1].T, y[:-1].T
        return [PiecewiseCubic(x, c[j]) for j in range(y.shape[1])]
    return [PiecewiseCubic(x, np.ascontiguousarray(c[..., j])) for j in range(y.shape[1])]
