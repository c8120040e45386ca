r"""The power-prior marginal likelihood of each item, as a Chebyshev series in ``s``.

For item ``v`` with count estimate :math:`y_v = n\tilde f_v` and noise
:math:`\sigma_c = n\sigma`,

.. math::

    A_v(s) = \log \sum_{x=1}^{n} x^{-s} \exp\!\left(-\frac{(x - y_v)^2}{2\sigma_c^2}\right)

sums over *every* count (exactly, via :class:`bayesldp.methods._calibrate.PosteriorGrid`). It is an
analytic function of ``s``, so interpolating it at Chebyshev points of the prior's
support gives a series accurate to near machine precision; the PyMC models evaluate
that series (and its gradient) in a handful of operations, whatever ``d`` and ``n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev as numpy_chebyshev

import bayesldp.methods._calibrate as calibrate
from bayesldp.measurement import Measurement
from bayesldp.methods._calibrate import lagrange_basis

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class ChebyshevLikelihood:
    r"""Chebyshev coefficients of :math:`A_v(s)` and :math:`\log H_n(s)` on ``[lo, hi]``.

    Attributes
    ----------
    coef : numpy.ndarray
        Shape ``(d, K)``: coefficients of each item's :math:`A_v`.
    log_h : numpy.ndarray
        Shape ``(K,)``: coefficients of :math:`\log H_n(s) = \log \sum_{x=1}^n x^{-s}`.
    lo, hi : float
        Support of ``s`` the series is valid on.
    y : numpy.ndarray
        Count estimates.
    sigma_c : float
        Noise standard deviation in counts.
    n : int
        Number of users.
    max_error : float
        Largest interpolation error found at off-node check points.
    nodes, node_weights, node_coef : numpy.ndarray, optional
        With many items: estimates ``nodes`` (``bayesldp.methods._calibrate.spline_nodes``), the
        weights with which sums of smooth functions over the items become sums over the
        nodes (:func:`lagrange_weights`) and the coefficients of
        :math:`A` at each node, shape ``(J, K)``.
    """

    coef: np.ndarray
    log_h: np.ndarray
    lo: float
    hi: float
    y: np.ndarray
    sigma_c: float
    n: int
    max_error: float
    nodes: np.ndarray | None = None
    node_weights: np.ndarray | None = None
    node_coef: np.ndarray | None = None

    def to_unit(self, s):
        """Map ``s`` in ``[lo, hi]`` to ``t`` in ``[-1, 1]``.

        Parameters
        ----------
        s : float, numpy.ndarray or TensorVariable
            Exponent(s) in ``[lo, hi]``.
        """
        return (2 * s - (self.lo + self.hi)) / (self.hi - self.lo)

    def item_log_evidence(self, s: float) -> np.ndarray:
        """:math:`A_v(s)` for every item (numpy).

        Parameters
        ----------
        s : float
            The exponent, in ``[lo, hi]``.
        """
        return numpy_chebyshev.chebval(self.to_unit(s), self.coef.T)

    def log_norm(self, s: float) -> float:
        r""":math:`\log H_n(s)`.

        Parameters
        ----------
        s : float
            The exponent, in ``[lo, hi]``.
        """
        return float(numpy_chebyshev.chebval(self.to_unit(s), self.log_h))

    def log_gauss_const(self) -> float:
        r"""Log of the Gaussian density's constant :math:`1/(\sigma_c\sqrt{2\pi})`."""
        return -math.log(self.sigma_c) - LOG_SQRT_2PI


def _exact_log_evidence(y: np.ndarray, s: float, sigma_c: float, n: int) -> np.ndarray:
    return calibrate.PosteriorGrid(s, sigma_c, n, float(y.min()), float(y.max())).log_evidence(y)


#: Items are summed through node weights when there are more than this many per node.
NODE_RATIO = 2.0


def build(m: Measurement, lo: float, hi: float, degree: int = 24) -> ChebyshevLikelihood:
    """Tabulate :math:`A_v(s)` at Chebyshev points and fit the series.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    lo, hi : float
        Support of the prior on ``s``.
    degree : int
        Number of Chebyshev points (series degree + 1).
    """
    if not 0 <= lo < hi:
        raise ValueError(f"need 0 <= lo < hi for the exponent's support, got {lo}, {hi}")
    y = m.estimates * m.n
    sigma_c = m.sigma * m.n
    k = np.arange(degree)
    t_nodes = np.cos(np.pi * (k + 0.5) / degree)  # Chebyshev points of the first kind
    s_nodes = lo + (t_nodes + 1) * (hi - lo) / 2
    nodes = calibrate.spline_nodes(float(y.min()), float(y.max()), sigma_c)
    use_nodes = y.size > NODE_RATIO * nodes.size
    table, node_table = [], []
    for s in s_nodes:
        grid = calibrate.PosteriorGrid(s, sigma_c, m.n, float(y.min()), float(y.max()))
        table.append(grid.log_evidence(y))
        if use_nodes:
            node_table.append(grid.log_evidence(nodes))
    coef = numpy_chebyshev.chebfit(t_nodes, np.asarray(table), degree - 1).T  # (d, K)
    log_h = numpy_chebyshev.chebfit(
        t_nodes, [math.log(calibrate.power_sum(s, m.n)) for s in s_nodes], degree - 1
    )
    # Check the interpolation between the nodes, on a few items.
    probe = np.unique(np.linspace(0, y.size - 1, min(y.size, 16)).astype(int))
    err = 0.0
    for s in lo + np.array([0.137, 0.5, 0.861]) * (hi - lo):
        t = (2 * s - lo - hi) / (hi - lo)
        exact = _exact_log_evidence(y[probe], s, sigma_c, m.n)
        err = max(err, float(np.abs(exact - numpy_chebyshev.chebval(t, coef[probe].T)).max()))
        err = max(
            err, abs(math.log(calibrate.power_sum(s, m.n)) - numpy_chebyshev.chebval(t, log_h))
        )
    node_weights = node_coef = None
    if use_nodes:
        node_weights = lagrange_weights(y, nodes)
        node_coef = numpy_chebyshev.chebfit(t_nodes, np.asarray(node_table), degree - 1).T
    return ChebyshevLikelihood(
        coef, log_h, lo, hi, y, sigma_c, m.n, err, nodes if use_nodes else None, node_weights,
        node_coef,
    )  # fmt: skip


def chebyshev_basis_tensor(t, degree: int):
    """Return ``[T_0(t), ..., T_{degree-1}(t)]`` for a scalar tensor ``t`` in [-1, 1].

    Computed as ``T_k(t) = cos(k arccos t)``: one small vectorised graph (the three-term
    recurrence unrolls into a fused C loop that is slow to compile); ``t`` is shrunk
    by 1e-15 so that arccos's derivative stays finite at the ends of the interval.

    Parameters
    ----------
    t : TensorVariable
        A scalar in [-1, 1].
    degree : int
        Number of polynomials returned.
    """
    import pytensor.tensor as pt

    theta = pt.arccos(t * (1.0 - 1e-15))
    return pt.cos(np.arange(degree, dtype=np.float64) * theta)


def chebval_tensor(t, coef, degree: int):
    """Evaluate a Chebyshev series in pytensor: ``sum_k coef[..., k] T_k(t)``.

    ``degree`` is the number of coefficients (the length of ``coef``'s last axis).

    Parameters
    ----------
    t : TensorVariable
        A scalar in [-1, 1].
    coef : numpy.ndarray or TensorVariable
        Coefficients, shape ``(..., degree)``.
    degree : int
        Number of coefficients.
    """
    import pytensor.tensor as pt

    return pt.dot(coef, chebyshev_basis_tensor(t, degree))


def lagrange_weights(y: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Weights ``W`` with ``sum_v f(y_v) = W @ f(nodes)`` for cubics, accurate for smooth f.

    Each ``y_v`` spreads its unit weight over the four nodes around it with the cubic
    Lagrange basis, so the sum over items of a function smooth on the nodes' scale
    costs one dot product with its values at the nodes, whatever ``d``.

    Parameters
    ----------
    y : numpy.ndarray
        The items' count estimates.
    nodes : numpy.ndarray
        Increasing nodes, at least 4, normally covering ``y``.

    Returns
    -------
    numpy.ndarray
        One weight per node.
    """
    y = np.asarray(y, dtype=float)
    if nodes.size < 4:
        raise ValueError("need at least 4 nodes")
    i = np.clip(np.searchsorted(nodes, y) - 2, 0, nodes.size - 4)
    pts = nodes[i[:, None] + np.arange(4)[None, :]]  # (d, 4)
    w = lagrange_basis(pts, y)
    return np.bincount((i[:, None] + np.arange(4)).ravel(), w.ravel(), minlength=nodes.size)
