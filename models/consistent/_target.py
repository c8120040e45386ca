"""The Chebyshev interpolant of ``bayes-consistent``'s log target in whitened coordinates.

NUTS samples ``(s, log c)`` through a two-dimensional Chebyshev series fitted to
:func:`~bayesldp.models.consistent._exact_total.log_target` at the Chebyshev points of a
region holding the posterior; :func:`chebval2d_tensor` evaluates it in PyTensor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev as numpy_chebyshev


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
        return float(numpy_chebyshev.chebval2d(a, b, self.coef))


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
    basis = numpy_chebyshev.chebvander(t, degree - 1)  # (k, j): T_j(t_k)
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

    from bayesldp.models._chebyshev import chebyshev_basis_tensor

    k = coef.shape[0] if isinstance(coef, np.ndarray) else coef.get_value().shape[0]
    basis_a, basis_b = chebyshev_basis_tensor(a, k), chebyshev_basis_tensor(b, k)
    return pt.dot(basis_a, pt.dot(pt.as_tensor(coef), basis_b))
