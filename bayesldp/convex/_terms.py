r"""The separable objectives of the three problems, their derivatives and KKT residuals.

Each problem minimises :math:`F(f) = \sum_v F_v(f_v)` on the probability simplex; the
terms are written here once, in NumPy, for polishing a solver's answer and for checking
any candidate solution (:func:`kkt_residuals`). Nothing here needs cvxpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp.measurement import Measurement
from bayesldp.oracles._likelihood import likelihood_kind

#: The problems this package formulates (the methods that declare a ``cvxpy`` backend in
#: the registry; a test keeps the two in step).
PROBLEMS: tuple[str, ...] = ("cls", "mle-apx", "mle")


def apx_kappa(m: Measurement) -> float:
    r""":math:`\kappa = (p-q)(1-p-q) / (q(1-q))`, the slope of MLE-Apx's variance ratio."""
    return (m.p - m.q) * (1 - m.p - m.q) / (m.q * (1 - m.q))


def apx_scale(m: Measurement) -> float:
    """:math:`q(1-q)/(p-q)^2`: Eq. (13) (and the scaled MLE) times this is what is solved."""
    return m.q * (1 - m.q) / (m.p - m.q) ** 2


class ObjectiveTerms:
    r""":math:`F(f) = \sum_v F_v(f_v)` of one method, with its first two derivatives.

    ``idx`` selects the items that ``f`` holds (all of them by default).

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).
    """

    def __init__(self, method: str, m: Measurement, likelihood: str = "auto") -> None:
        if method not in PROBLEMS:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(PROBLEMS)}")
        self.method = method
        self.kind = likelihood_kind(m, likelihood) if method == "mle" else None
        self.ft = m.estimates
        self.kappa = apx_kappa(m)
        self.w = m.support_counts / m.n
        self.q, self.pq, self.scale = m.q, m.p - m.q, apx_scale(m)
        # Items whose term has no curvature: constant (no count, multinomial likelihood)
        # or, for MLE-Apx with 1 + kappa f~_v = 0, linear. Newton cannot place them;
        # at an optimum they are at 0 unless their multiplier is exactly 0.
        if self.kind == "multinomial":
            self.flat = self.w == 0
        elif method == "mle-apx":
            self.flat = 1 + self.kappa * self.ft == 0
        else:
            self.flat = np.zeros(m.domain_size, dtype=bool)

    def value(self, f: np.ndarray) -> float:
        """Return :math:`F(f)` for the full vector ``f``."""
        if self.method == "cls":
            return float(np.sum((f - self.ft) ** 2))
        if self.method == "mle-apx":
            return float(np.sum((f - self.ft) ** 2 / (1 + self.kappa * f)))
        w1, pi = self.w, self.q + self.pq * f
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(w1 > 0, w1 * np.log(w1 / pi), 0.0).sum()
            if self.kind == "binomial":
                val += np.where(w1 < 1, (1 - w1) * np.log((1 - w1) / (1 - pi)), 0.0).sum()
        return float(self.scale * val)

    def grad(self, f: np.ndarray, idx: Any = slice(None)) -> np.ndarray:
        """Return :math:`F'_v(f_v)` for the items ``idx`` (``f`` holds those items)."""
        if self.method == "cls":
            return 2 * (f - self.ft[idx])
        if self.method == "mle-apx":
            x = (f - self.ft[idx]) / (1 + self.kappa * f)
            return 2 * x - self.kappa * x**2
        w1, pi = self.w[idx], self.q + self.pq * f
        grad = -self.pq * w1 / pi
        if self.kind == "binomial":
            grad = grad + self.pq * (1 - w1) / (1 - pi)
        return self.scale * grad

    def curv(self, f: np.ndarray, idx: Any = slice(None)) -> np.ndarray:
        """Return :math:`F''_v(f_v)` for the items ``idx`` (the Hessian is diagonal)."""
        if self.method == "cls":
            return np.full(np.shape(f), 2.0)
        if self.method == "mle-apx":
            return 2 * (1 + self.kappa * self.ft[idx]) ** 2 / (1 + self.kappa * f) ** 3
        w1, pi = self.w[idx], self.q + self.pq * f
        h = w1 / pi**2
        if self.kind == "binomial":
            h = h + (1 - w1) / (1 - pi) ** 2
        return self.scale * self.pq**2 * h

    def in_domain(self, f: np.ndarray, idx: Any = slice(None)) -> bool:
        """Whether every term is finite (and strictly convex) at ``f``."""
        if not np.all(np.isfinite(f)):
            return False
        if self.method == "cls":
            return True
        if self.method == "mle-apx":
            return bool(np.all(1 + self.kappa * f > 0))
        w1, pi = self.w[idx], self.q + self.pq * f
        ok = np.all((pi > 0) | (w1 == 0))
        if self.kind == "binomial":
            ok = ok and np.all((pi < 1) | (w1 == 1))
        return bool(ok)


def residuals(terms: ObjectiveTerms, f: np.ndarray, duals: dict[str, Any]) -> dict[str, float]:
    """KKT residuals of ``f`` with ``duals`` under ``terms`` (see :func:`kkt_residuals`)."""
    f = np.asarray(f, dtype=np.float64)
    lam = np.asarray(duals["nonneg"], dtype=np.float64)
    nu = float(duals["sum"])
    grad = terms.grad(f)
    return {
        "primal": float(max(np.maximum(-f, 0).max(), abs(f.sum() - 1))),
        "dual": float(np.maximum(-lam, 0).max()),
        "complementary": float(np.abs(lam * f).max()),
        "stationarity": float(np.abs(grad + nu - lam).max()),
    }


def objective(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> float:
    """Value of the objective :math:`F(f)` that method ``method`` minimises.

    The rescaled forms of the package notes: for ``mle-apx``, Eq. (13) times
    :math:`q(1-q)/(p-q)^2`; for ``mle``, the scaled divergence to the saturated model.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).

    Returns
    -------
    float
        :math:`F(f)`.
    """
    return ObjectiveTerms(method, m, likelihood).value(np.asarray(f, dtype=np.float64))


def gradient(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> np.ndarray:
    r"""Gradient :math:`\nabla F(f)` of the objective of method ``method``.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).

    Returns
    -------
    numpy.ndarray
        Shape ``(d,)``.
    """
    return ObjectiveTerms(method, m, likelihood).grad(np.asarray(f, dtype=np.float64))


def curvature(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> np.ndarray:
    r"""Diagonal of the Hessian :math:`\nabla^2 F(f)` (the objective is separable).

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).

    Returns
    -------
    numpy.ndarray
        Shape ``(d,)``.
    """
    return ObjectiveTerms(method, m, likelihood).curv(np.asarray(f, dtype=np.float64))


def kkt_residuals(
    method: str,
    m: Measurement,
    f: np.ndarray,
    duals: dict[str, Any],
    likelihood: str = "auto",
) -> dict[str, float]:
    r"""KKT residuals of a candidate solution ``f`` with multipliers ``duals``.

    With cvxpy's sign convention the conditions are: :math:`f \ge 0`,
    :math:`\sum_v f_v = 1`, :math:`\lambda \ge 0`, :math:`\lambda_v f_v = 0` and
    :math:`\nabla F(f) + \nu \mathbf 1 - \lambda = 0`.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Candidate frequencies, e.g. a closed form from :mod:`bayesldp.methods`.
    duals : dict
        ``"sum"`` (:math:`\nu`) and ``"nonneg"`` (:math:`\lambda`), e.g. a solver's
        ``info["duals"]``.
    likelihood : {"auto", "multinomial", "binomial"}
        For ``mle``, as in :func:`bayesldp.convex.mle`.

    Returns
    -------
    dict
        ``primal`` (largest of :math:`\max(-f_v, 0)` and :math:`|\sum f - 1|`),
        ``dual`` (largest :math:`\max(-\lambda_v, 0)`), ``complementary``
        (largest :math:`|\lambda_v f_v|`) and ``stationarity`` (largest
        :math:`|\nabla F(f) + \nu - \lambda|`).
    """
    return residuals(ObjectiveTerms(method, m, likelihood), f, duals)
