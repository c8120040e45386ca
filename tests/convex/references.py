"""Reference problems with known optima and duals, and the one checker every solve goes through.

In the style of cvxpy's ``tests/solver_test_helpers.py``: a reference is a problem whose
optimum ``f*``, multipliers (``nu`` of ``sum(f) == 1``, ``lambda`` of ``f >= 0``) and
objective value are known, and :func:`check_solution` (the counterpart of cvxpy's
``SolverTestHelper`` checks, on an :class:`~bayesldp.Estimate`) checks a solve against
it:

* the known optimum: the frequencies (``ATOL`` = 1e-6), the multipliers and the
  objective value;
* the KKT conditions of the returned point with its own multipliers: primal
  feasibility (on the simplex within ``SIMPLEX`` = 1e-8), dual domains, complementary
  slackness and a stationary Lagrangian, each within the polishing tolerance (1e-9);
* the reported ``info``.

Objectives and gradients in these checks are cvxpy's: a literal cvxpy expression of
each objective (Eq. (13) as printed for MLE-Apx, the log-likelihood for the MLE),
evaluated and differentiated by cvxpy, not the derivatives ``bayesldp.convex`` polishes
with.

Two kinds of reference: small problems whose optimum and duals are written in closed
form here (:data:`ANALYTIC`), and measurements whose optimum is the closed form of
:mod:`bayesldp.methods` (its duals implied by stationarity at it).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import xlogy

import bayesldp
from bayesldp import convex, methods
from bayesldp.convex._polish import KKT_TOL
from bayesldp.oracles import make_oracle
from bayesldp.oracles._likelihood import likelihood_kind
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import CATALOGUE as METHODS_CATALOGUE

#: Agreement in f (and in the multipliers, relative to max(1, |nu|)) with the reference.
ATOL = 1e-6
#: Distance of a returned point from the simplex (negative entries, |sum f - 1|).
SIMPLEX = 1e-8
#: KKT residuals of a polished point with its own multipliers.
KKT = KKT_TOL

CLOSED_FORMS = {"cls": methods.cls, "mle-apx": methods.mle_apx, "mle": methods.mle}


def simulated(oracle: str, eps: float, d: int, n: int, seed: int, s: float = 1.5):
    """Return a Zipf(s) measurement with exact (GRR/OUE) simulation."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, zipf_frequencies(d, s))
    return make_oracle(oracle, eps, d).simulate(counts, rng)


# ---------------------------------------------------------------------------
# cvxpy's own view of each objective
# ---------------------------------------------------------------------------


def literal_objective(method: str, m: bayesldp.Measurement, f: cp.Variable) -> cp.Expression:
    """Return the objective ``method`` minimises, written out literally in cvxpy.

    CLS: ``||f - f~||^2``. MLE-Apx: Eq. (13) as printed, times ``q(1-q)/(p-q)^2``. MLE:
    ``q(1-q)/(p-q)^2`` times minus the log-likelihood per user, shifted by the saturated
    model's value.
    """
    p, q, n = m.p, m.q, m.n
    if method == "cls":
        return cp.sum_squares(f - m.estimates)
    scale = q * (1 - q) / (p - q) ** 2
    w = m.support_counts / n
    if method == "mle-apx":
        numerator = cp.square(w - q - (p - q) * f)
        denominator = q * (1 - q) + (p - q) * (1 - p - q) * f
        return scale * cp.sum(cp.multiply(numerator, cp.inv_pos(denominator)))
    pi = q + (p - q) * f
    loglik = w @ cp.log(pi)
    saturated = xlogy(w, w).sum()
    if likelihood_kind(m, "auto") == "binomial":
        loglik = loglik + (1 - w) @ cp.log(1 - pi)
        saturated += xlogy(1 - w, 1 - w).sum()
    return scale * (saturated - loglik)


def cvxpy_gradient(expr: cp.Expression, f: cp.Variable, at: np.ndarray) -> np.ndarray:
    """Return cvxpy's own gradient of ``expr`` with respect to ``f`` at ``at``."""
    f.value = at
    grad = expr.grad[f]
    return np.asarray(grad.toarray() if hasattr(grad, "toarray") else grad).reshape(-1)


def literal_value(method: str, m: bayesldp.Measurement, at: np.ndarray) -> float:
    """Return cvxpy's value of the literal objective at ``at``."""
    f = cp.Variable(m.domain_size)
    f.value = at
    return float(literal_objective(method, m, f).value)


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """A known optimum: frequencies, multipliers and the objective value there."""

    f: np.ndarray
    nu: float
    lam: np.ndarray
    objective: float

    @property
    def duals(self) -> dict[str, Any]:
        return {"sum": self.nu, "nonneg": self.lam}


def implied_reference(method: str, m: bayesldp.Measurement, f_star: np.ndarray) -> Reference:
    """Return the reference of a known optimum ``f_star``, its duals implied by stationarity.

    ``nu`` from the largest item's stationarity, ``lambda = grad F(f*) + nu`` (zero on the
    support, up to the optimum's accuracy); the gradient is cvxpy's.
    """
    f = cp.Variable(m.domain_size)
    g = cvxpy_gradient(literal_objective(method, m, f), f, f_star)
    nu = -g[np.argmax(f_star)]
    return Reference(f_star, float(nu), g + nu, literal_value(method, m, f_star))


def closed_form_reference(method: str, m: bayesldp.Measurement) -> Reference:
    """Return the closed form of :mod:`bayesldp.methods` as the reference."""
    return implied_reference(method, m, CLOSED_FORMS[method](m).frequencies)


def cls_reference(estimates: list[float], support: list[int]) -> Callable:
    r"""CLS with a known support ``S``: :math:`f^* = (\tilde f - \tau)_S`, ``nu = 2 tau``.

    :math:`\tau = (\sum_S \tilde f_v - 1) / |S|`; off the support
    :math:`\lambda_v = 2(\tau - \tilde f_v)`; :math:`F^* = |S| \tau^2 + \sum_{v \notin S}
    \tilde f_v^2`.
    """

    def reference(m: bayesldp.Measurement) -> Reference:
        ft = np.asarray(estimates, dtype=float)
        inside = np.isin(np.arange(ft.size), support)
        tau = (ft[inside].sum() - 1) / inside.sum()
        f = np.where(inside, ft - tau, 0.0)
        lam = np.where(inside, 0.0, 2 * (tau - ft))
        value = inside.sum() * tau**2 + (ft[~inside] ** 2).sum()
        return Reference(f, 2 * tau, lam, value)

    return reference


def apx_derivative(m: bayesldp.Measurement, f: np.ndarray) -> np.ndarray:
    r"""Return MLE-Apx's scaled term derivatives :math:`2x - \kappa x^2`.

    With :math:`x = (f - \tilde f)/(1 + \kappa f)`.
    """
    kappa = (m.p - m.q) * (1 - m.p - m.q) / (m.q * (1 - m.q))
    x = (f - m.estimates) / (1 + kappa * f)
    return 2 * x - kappa * x**2


def symmetric_reference(method: str, support: list[int]) -> Callable:
    """Items of ``support`` tied (equal estimates) share the mass equally; the rest are 0.

    By symmetry and convexity the optimum is ``1/|S|`` on ``S``; ``nu = -F'(1/|S|)`` and
    ``lambda_v = F'_v(0) + nu`` off ``S`` (non-negative for the cases written here, which
    the checker verifies). The derivative is the scaled one of the package (MLE-Apx:
    ``2x - kappa x^2``; MLE: binomial or multinomial).
    """

    def reference(m: bayesldp.Measurement) -> Reference:
        d = m.domain_size
        inside = np.isin(np.arange(d), support)
        f = np.where(inside, 1.0 / inside.sum(), 0.0)
        if method == "mle-apx":
            g_star, g_zero = apx_derivative(m, f), apx_derivative(m, np.zeros(d))
        else:
            g_star, g_zero = mle_derivative(m, f), mle_derivative(m, np.zeros(d))
        nu = float(-g_star[inside][0])
        lam = np.where(inside, 0.0, g_zero + nu)
        return Reference(f, nu, lam, literal_value(method, m, f))

    return reference


def mle_derivative(m: bayesldp.Measurement, f: np.ndarray) -> np.ndarray:
    r"""Return the scaled MLE term derivatives :math:`s(p-q)[-w/\pi + (1-w)/(1-\pi)]`.

    Without the second term for a multinomial (GRR) likelihood.
    """
    s, pq = m.q * (1 - m.q) / (m.p - m.q) ** 2, m.p - m.q
    w, pi = m.support_counts / m.n, m.q + pq * f
    grad = -pq * w / pi
    if likelihood_kind(m, "auto") == "binomial":
        grad = grad + pq * (1 - w) / (1 - pi)
    return s * grad


def saturated_reference(m: bayesldp.Measurement) -> Reference:
    r"""Return the MLE when the raw estimates lie on the simplex: the estimates themselves.

    :math:`f^* = \tilde f` and :math:`F^* = 0`: every :math:`\pi_v = w_v`, so the
    binomial gradient vanishes (``nu = 0``) and the multinomial (GRR) one is
    :math:`-s(p - q)` for every item (``nu = s (p - q)``).
    """
    f = m.estimates.copy()
    nu = float(-mle_derivative(m, f)[0])
    return Reference(f, nu, np.zeros(m.domain_size), 0.0)


def grr_measurement(counts: list[int], eps: float = 2.0) -> bayesldp.Measurement:
    """Return a GRR measurement with these support counts (n is their sum)."""
    oracle = make_oracle("GRR", eps, len(counts))
    return bayesldp.Measurement.from_support_counts(
        np.asarray(counts), int(sum(counts)), oracle.p, oracle.q, oracle="GRR"
    )


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One solve to check: the measurement, the method, options, and the reference."""

    label: str
    method: str
    build: Callable[[], bayesldp.Measurement]
    reference: Callable[[bayesldp.Measurement], Reference] | None = None  # closed form
    options: dict = field(default_factory=dict)
    slow: bool = False

    def param(self):
        marks = [pytest.mark.slow] if self.slow else []
        return pytest.param(self, id=f"{self.method}-{self.label}", marks=marks)

    def known(self, m: bayesldp.Measurement) -> Reference:
        if self.reference is None:
            return closed_form_reference(self.method, m)
        return self.reference(m)


def toy(estimates: list[float]) -> Callable[[], bayesldp.Measurement]:
    """Return a builder of the toy measurement with these raw estimates."""
    return lambda: toy_measurement(estimates)


#: Small problems whose optimum and multipliers are written in closed form.
ANALYTIC = [
    Case("interior", "cls", toy([0.4, 0.3, 0.2, 0.1]), cls_reference([0.4, 0.3, 0.2, 0.1],
                                                                      [0, 1, 2, 3])),
    Case("uniform-shift", "cls", toy([0.5, 0.3, 0.4]), cls_reference([0.5, 0.3, 0.4], [0, 1, 2])),
    Case("cut", "cls", toy([0.9, 0.3, -0.2]), cls_reference([0.9, 0.3, -0.2], [0, 1])),
    # the tied items land exactly at 0 with multiplier exactly 0 (degenerate)
    Case("ties-at-cut", "cls", toy([0.6, 0.5, 0.05, 0.05, -0.2]),
         cls_reference([0.6, 0.5, 0.05, 0.05, -0.2], [0, 1])),
    Case("all-negative", "cls", toy([-0.1, -0.2, -0.05, -0.3]),
         cls_reference([-0.1, -0.2, -0.05, -0.3], [0, 1, 2, 3])),
    Case("d=1", "cls", toy([0.7]), cls_reference([0.7], [0])),
    Case("tied", "mle-apx", toy([0.4, 0.4, 0.4]), symmetric_reference("mle-apx", [0, 1, 2])),
    Case("tied-and-dropped", "mle-apx", toy([0.7, 0.7, -0.5]),
         symmetric_reference("mle-apx", [0, 1])),
    Case("d=1", "mle-apx", toy([0.7]), symmetric_reference("mle-apx", [0])),
    Case("saturated", "mle", toy([0.4, 0.3, 0.2, 0.1]), saturated_reference),
    Case("tied", "mle", toy([0.4, 0.4, 0.4]), symmetric_reference("mle", [0, 1, 2])),
    Case("tied-and-dropped", "mle", toy([0.7, 0.7, -0.5]), symmetric_reference("mle", [0, 1])),
    Case("grr-saturated", "mle", lambda: grr_measurement([500, 300, 200, 150]),
         saturated_reference),
    Case("d=1", "mle", toy([0.7]), symmetric_reference("mle", [0])),
]  # fmt: skip

#: Hand-written raw estimates (toy OUE-like oracle, p = 1/2, q = 1/4, n = 4000).
TOY = {
    # every estimate negative: the whole mass must be created
    "all-negative": [-0.1, -0.2, -0.05, -0.3, -0.15],
    # already on the simplex, one item exactly 0: nothing to change
    "consistent": [0.5, 0.25, 0.25, 0.0],
    # strictly inside the simplex
    "consistent-interior": [0.4, 0.3, 0.2, 0.1],
    # ties among the kept and among the dropped items
    "ties": [0.3, 0.3, 0.3, -0.1, -0.1, 0.2, 0.2],
    # tied items just inside the support (CLS: they keep 0.025 each)
    "ties-above-cut": [0.6, 0.5, 0.1, 0.1, -0.2],
    # tied items exactly at the cut (CLS: they land at 0 with multiplier 0)
    "ties-at-cut": [0.6, 0.5, 0.05, 0.05, -0.2],
    # a sum far above 1
    "sum-above-one": [0.9, 0.8, 0.7, 0.05, -0.02],
    # one dominant item
    "two-items": [1.4, -0.2],
}

METHODS = ("cls", "mle-apx", "mle")


def closed_form_cases() -> list[Case]:
    """Return simulated GRR/OUE (eps 0.2 to 4, d 2 to 4096) and toy cases, every method.

    The exact MLE by SCS on d = 4096 at eps < 1 takes seconds: marked slow.
    """
    cases = []
    for oracle in ("GRR", "OUE"):
        for eps in (0.2, 1.0, 4.0):
            for d in (2, 16, 256, 4096):
                spec = (oracle, eps, d)
                seed = zlib.crc32(repr(spec).encode())
                for method in METHODS:
                    cases.append(Case(
                        f"{oracle}-eps{eps}-d{d}", method,
                        lambda spec=spec, seed=seed: simulated(*spec, n=200_000, seed=seed),
                        slow=method == "mle" and d >= 4096 and eps < 1,
                    ))  # fmt: skip
    for catalogue, prefix in ((TOY, "toy"), (METHODS_CATALOGUE, "methods")):
        for name, estimates in catalogue.items():
            cases += [Case(f"{prefix}-{name}", method, toy(estimates)) for method in METHODS]
    return cases


def review_cases() -> list[Case]:
    """Return the cases of the outside review, each of which failed before polishing."""
    cases = []
    # OUE, d = 1000, eps 1, n = 2e5: SCS 'optimal' was 1e-5 off with negative entries
    for seed in range(3):
        build = lambda seed=seed: simulated("OUE", 1.0, 1000, n=200_000, seed=seed)  # noqa: E731
        cases.append(Case(f"review-oue-d1000-seed{seed}", "mle", build))
    # Clarabel at tol 1e-10 said 'optimal' 1e-6 to 5e-6 from the closed form
    for spec in (("GRR", 0.2, 4096), ("GRR", 4.0, 16), ("OUE", 1.0, 2), ("OUE", 1.0, 16),
                 ("OUE", 4.0, 16)):  # fmt: skip
        seed = zlib.crc32(repr(spec).encode())
        build = lambda spec=spec, seed=seed: simulated(*spec, n=200_000, seed=seed)  # noqa: E731
        cases.append(Case(f"review-tol1e-10-{'-'.join(map(str, spec))}", "mle-apx", build,
                          options={"tol": 1e-10}))  # fmt: skip
    for name in ("consistent",):
        cases.append(Case(f"review-tol1e-10-toy-{name}", "mle-apx", toy(TOY[name]),
                          options={"tol": 1e-10}))  # fmt: skip
    for name in ("all-negative", "already-consistent"):
        cases.append(Case(f"review-tol1e-10-methods-{name}", "mle-apx",
                          toy(METHODS_CATALOGUE[name]), options={"tol": 1e-10}))  # fmt: skip
    # GRR, d = 500, eps 0.2, n = 2000: default solves up to 4e-4 off; at tol 1e-11
    # Clarabel ends 'optimal_inaccurate' (this raised): polishing verifies
    for seed in range(6):
        build = lambda seed=seed: simulated("GRR", 0.2, 500, n=2000, seed=seed)  # noqa: E731
        cases += [Case(f"review-grr-d500-seed{seed}", method, build) for method in METHODS]
        cases.append(Case(f"review-grr-d500-tol1e-11-seed{seed}", "mle-apx", build,
                          options={"tol": 1e-11}))  # fmt: skip
    return cases


# ---------------------------------------------------------------------------
# The checker (cvxpy's SolverTestHelper, for an Estimate)
# ---------------------------------------------------------------------------


class KKTCheck:
    """The checks of cvxpy's ``SolverTestHelper``, on an Estimate of ``bayesldp.convex``.

    The problem is ``min F(f)`` s.t. ``sum(f) == 1`` (dual ``nu``), ``f >= 0`` (dual
    ``lambda``); the Lagrangian is ``F(f) + nu (sum f - 1) - lambda' f``, cvxpy's
    convention (constraint expressions ``sum(f) - 1`` and ``-f``).
    """

    def __init__(self, method: str, m: bayesldp.Measurement, est: bayesldp.Estimate) -> None:
        self.method, self.m, self.est = method, m, est
        self.f = cp.Variable(m.domain_size, name="f")
        self.f.value = est.frequencies
        self.objective = literal_objective(method, m, self.f)
        self.sum_constraint = cp.sum(self.f) == 1
        self.nonneg_constraint = self.f >= 0
        self.nu = est.info["duals"]["sum"]
        self.lam = np.asarray(est.info["duals"]["nonneg"])

    def check_primal_feasibility(self, tol: float) -> None:
        for con in (self.sum_constraint, self.nonneg_constraint):
            assert np.max(con.violation()) <= tol, f"{con}: violation {np.max(con.violation())}"

    def check_dual_domains(self, tol: float) -> None:
        assert isinstance(self.nu, float) and np.isfinite(self.nu)
        assert self.lam.shape == (self.m.domain_size,)
        assert self.lam.min() >= -tol, f"negative multiplier {self.lam.min():.2e}"

    def check_complementarity(self, tol: float) -> None:
        assert abs(self.nu * self.sum_constraint.expr.value) <= tol
        comp = self.lam * self.nonneg_constraint.expr.value
        assert np.abs(comp).max() <= tol, f"lambda_v f_v up to {np.abs(comp).max():.2e}"

    def check_stationary_lagrangian(self, tol: float) -> None:
        lagrangian = (
            self.objective
            + self.nu * self.sum_constraint.expr
            + self.lam @ self.nonneg_constraint.expr
        )
        g = cvxpy_gradient(lagrangian, self.f, self.est.frequencies)
        assert np.abs(g).max() <= tol, f"gradient of the Lagrangian up to {np.abs(g).max():.2e}"

    def verify_objective(self, ref: Reference, rel: float, abs_: float) -> None:
        assert self.est.info["objective"] == pytest.approx(ref.objective, rel=rel, abs=abs_)
        assert float(self.objective.value) == pytest.approx(ref.objective, rel=rel, abs=abs_)

    def verify_primal_values(self, ref: Reference, atol: float) -> None:
        np.testing.assert_allclose(self.est.frequencies, ref.f, rtol=0, atol=atol)

    def verify_dual_values(self, ref: Reference, atol: float) -> None:
        scale = max(1.0, abs(ref.nu))
        assert self.nu == pytest.approx(ref.nu, abs=atol * scale)
        np.testing.assert_allclose(self.lam, ref.lam, rtol=0, atol=atol * scale)


def check_solution(
    method: str,
    m: bayesldp.Measurement,
    est: bayesldp.Estimate,
    ref: Reference,
    *,
    polished: bool = True,
) -> None:
    """Every check of a solve against its reference: the known optimum, KKT, simplex, info.

    ``polished=False`` (the solver's own answer at tight settings) checks the optimum,
    the status and the reference's KKT conditions with the solver's multipliers, to
    ``ATOL``.
    """
    # The reference itself is an optimum: it satisfies the KKT conditions with its duals.
    own = convex.kkt_residuals(method, m, ref.f, ref.duals)
    assert max(own.values()) < ATOL, f"the reference is not optimal: {own}"
    check = KKTCheck(method, m, est)
    check.verify_primal_values(ref, ATOL)
    info = est.info
    # The reference satisfies the KKT conditions with the solver-side multipliers.
    res = convex.kkt_residuals(method, m, ref.f, info["duals"])
    assert max(res.values()) < ATOL, res
    if not polished:
        assert info["status"] == info["solver_status"] == "optimal"
        assert info["polished"] is False and info["polish"] is None
        return
    check.verify_dual_values(ref, ATOL)
    check.verify_objective(ref, rel=1e-9, abs_=1e-12)
    check.check_primal_feasibility(SIMPLEX)
    check.check_dual_domains(KKT)
    check.check_complementarity(KKT)
    check.check_stationary_lagrangian(KKT)
    f = est.frequencies
    assert f.min() >= -SIMPLEX and abs(f.sum() - 1) <= SIMPLEX
    assert info["status"] == "optimal"
    assert info["solver_status"] in ("optimal", "optimal_inaccurate", "user_limit")
    assert info["polished"] is True and info["polish"]["verified"] is True
    # The reported residuals are those of the returned point with its duals.
    recomputed = convex.kkt_residuals(method, m, f, info["duals"])
    assert info["kkt_residuals"] == pytest.approx(recomputed, abs=1e-15)
    assert max(recomputed.values()) <= KKT
    assert info["min_frequency"] == f.min() and info["sum_error"] == f.sum() - 1
    assert est.method == method
