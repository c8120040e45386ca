"""The cvxpy formulations against the closed forms of bayesldp.methods.

In the style of cvxpy's own ``tests/solver_test_helpers.py`` and ``tests/test_KKT.py``:
every case of a catalogue is solved at the *default* settings of
``postprocess(m, method, backend="cvxpy")``, and :class:`KKTCheck` (the counterpart of
cvxpy's ``SolverTestHelper``, on an :class:`~bayesldp.Estimate`) checks

* the known optimum: the frequencies against the closed form (``ATOL`` = 1e-6), the
  multipliers against those the closed form implies (stationarity at the closed form)
  and the objective value;
* the KKT conditions of the returned point with its own multipliers: primal
  feasibility (on the simplex within ``SIMPLEX`` = 1e-8), dual domains,
  complementary slackness and a stationary Lagrangian, each within
  ``convex.KKT_TOL`` (1e-9).

Objectives and gradients in these checks are cvxpy's: a literal cvxpy expression of
each objective (Eq. (13) as printed for MLE-Apx, the log-likelihood for the MLE),
evaluated and differentiated by cvxpy, not the derivatives ``bayesldp.convex`` polishes
with. Regression tests reproduce each case of the outside review, all of which failed
before polishing.
"""

from __future__ import annotations

import zlib

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import xlogy

import bayesldp
from bayesldp import convex, methods
from bayesldp.methods._likelihood import likelihood_kind
from bayesldp.oracles import make_oracle
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import CATALOGUE as METHODS_CATALOGUE

#: Agreement in f with the closed forms.
ATOL = 1e-6
#: Distance of a returned point from the simplex (negative entries, |sum f - 1|).
SIMPLEX = 1e-8
#: KKT residuals of a returned point with its own multipliers.
KKT = convex.KKT_TOL

#: Tightened settings per method, for the unpolished solvers.
TIGHT = {
    "cls": {"solver": "CLARABEL", "tol": 1e-12},
    "mle-apx": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
    "mle": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
}

CLOSED_FORMS = {"cls": methods.cls, "mle-apx": methods.mle_apx, "mle": methods.mle}


def simulated(oracle: str, eps: float, d: int, n: int, seed: int, s: float = 1.5):
    """Return a Zipf(s) measurement with exact (GRR/OUE) simulation."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, zipf_frequencies(d, s))
    return make_oracle(oracle, eps, d).simulate(counts, rng)


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------

# GRR and OUE, eps 0.2 to 4, d from 2 to 4096 (n = 2e5, Zipf 1.5).
SIMULATED = [
    (oracle, eps, d)
    for oracle in ("GRR", "OUE")
    for eps in (0.2, 1.0, 4.0)
    for d in (2, 16, 256, 4096)
]

# Hand-written raw estimates (toy OUE-like oracle, p = 1/2, q = 1/4, n = 4000).
TOY = {
    # every estimate negative: the whole mass must be created
    "all-negative": [-0.1, -0.2, -0.05, -0.3, -0.15],
    # already on the simplex, one item exactly 0: nothing to change
    "consistent": [0.5, 0.25, 0.25, 0.0],
    # strictly inside the simplex
    "consistent-interior": [0.4, 0.3, 0.2, 0.1],
    # ties among the kept and among the dropped items
    "ties": [0.3, 0.3, 0.3, -0.1, -0.1, 0.2, 0.2],
    # ties straddling the cut: after the shift the tied items land exactly at 0
    "ties-at-cut": [0.6, 0.5, 0.1, 0.1, -0.2],
    # a sum far above 1
    "sum-above-one": [0.9, 0.8, 0.7, 0.05, -0.02],
    # one item, d = 1 is not a frequency problem, but d = 2 with one dominant item is
    "two-items": [1.4, -0.2],
}


def catalogue():
    """(case, method) parameters over this file's and test_methods' catalogues.

    The exact MLE by SCS on d = 4096 at eps < 1 takes seconds: marked slow.
    """
    cases = [(("sim", c), f"{c[0]}-eps{c[1]}-d{c[2]}") for c in SIMULATED]
    cases += [(("toy", name), f"toy-{name}") for name in TOY]
    cases += [(("methods", name), f"methods-{name}") for name in METHODS_CATALOGUE]
    params = []
    for case, label in cases:
        for method in ("cls", "mle-apx", "mle"):
            slow = case[0] == "sim" and case[1][2] >= 4096 and case[1][1] < 1 and method == "mle"
            marks = [pytest.mark.slow] if slow else []
            params.append(pytest.param(case, method, id=f"{method}-{label}", marks=marks))
    return params


def build(case) -> bayesldp.Measurement:
    kind, spec = case
    if kind == "sim":
        oracle, eps, d = spec
        return simulated(oracle, eps, d, n=200_000, seed=zlib.crc32(repr(spec).encode()))
    if kind == "methods":
        return toy_measurement(METHODS_CATALOGUE[spec])
    return toy_measurement(TOY[spec])


# ---------------------------------------------------------------------------
# The checker (cvxpy's SolverTestHelper, for an Estimate)
# ---------------------------------------------------------------------------


def literal_objective(method: str, m: bayesldp.Measurement, f: cp.Variable) -> cp.Expression:
    """Return the objective ``METHODS[method]`` minimises, written out literally in cvxpy.

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


def implied_duals(method: str, m: bayesldp.Measurement, f_star: np.ndarray):
    """Return the multipliers of a known optimum.

    ``nu`` from the largest item's stationarity, ``lambda = grad F(f*) + nu`` (zero on the
    support, up to the optimum's accuracy).
    """
    f = cp.Variable(m.domain_size)
    g = cvxpy_gradient(literal_objective(method, m, f), f, f_star)
    nu = -g[np.argmax(f_star)]
    return float(nu), g + nu


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

    def verify_objective(self, f_star: np.ndarray, rel: float, abs_: float) -> None:
        self.f.value = f_star
        expected = float(self.objective.value)
        self.f.value = self.est.frequencies
        assert self.est.info["objective"] == pytest.approx(expected, rel=rel, abs=abs_)
        assert float(self.objective.value) == pytest.approx(expected, rel=rel, abs=abs_)

    def verify_primal_values(self, f_star: np.ndarray, atol: float) -> None:
        np.testing.assert_allclose(self.est.frequencies, f_star, rtol=0, atol=atol)

    def verify_dual_values(self, f_star: np.ndarray, atol: float) -> None:
        nu, lam = implied_duals(self.method, self.m, f_star)
        scale = max(1.0, abs(nu))
        assert self.nu == pytest.approx(nu, abs=atol * scale)
        np.testing.assert_allclose(self.lam, lam, rtol=0, atol=atol * scale)


def check_all(method: str, m: bayesldp.Measurement, est: bayesldp.Estimate) -> None:
    """Every check of the catalogue: known optimum, KKT, simplex, info."""
    closed = CLOSED_FORMS[method](m).frequencies
    check = KKTCheck(method, m, est)
    check.verify_primal_values(closed, ATOL)
    check.verify_dual_values(closed, ATOL)
    check.verify_objective(closed, rel=1e-9, abs_=1e-12)
    check.check_primal_feasibility(SIMPLEX)
    check.check_dual_domains(KKT)
    check.check_complementarity(KKT)
    check.check_stationary_lagrangian(KKT)
    f = est.frequencies
    assert f.min() >= -SIMPLEX and abs(f.sum() - 1) <= SIMPLEX
    info = est.info
    assert info["status"] == "optimal"
    assert info["solver_status"] in ("optimal", "optimal_inaccurate", "user_limit")
    assert info["polished"] is True and info["polish"]["verified"] is True
    # The reported residuals are those of the returned point with its duals.
    recomputed = convex.kkt_residuals(method, m, f, info["duals"])
    assert info["kkt_residuals"] == pytest.approx(recomputed, abs=1e-15)
    assert max(recomputed.values()) <= KKT
    # The closed form satisfies the KKT conditions with the solver-side multipliers.
    res = convex.kkt_residuals(method, m, closed, info["duals"])
    assert max(res.values()) < ATOL, res


@pytest.mark.parametrize(("case", "method"), catalogue())
def test_default_solve_is_the_known_optimum(case, method):
    m = build(case)
    est = bayesldp.postprocess(m, method, backend="cvxpy")
    check_all(method, m, est)


@pytest.mark.slow
@pytest.mark.parametrize(("case", "method"), catalogue())
def test_unpolished_solvers_at_tight_settings(case, method):
    """Without polishing, SCS at tol 1e-10 (and Clarabel at 1e-12 for CLS) agree too."""
    m = build(case)
    closed = CLOSED_FORMS[method](m).frequencies
    est = bayesldp.postprocess(m, method, backend="cvxpy", polish=False, **TIGHT[method])
    assert est.info["status"] == est.info["solver_status"] == "optimal"
    np.testing.assert_allclose(est.frequencies, closed, rtol=0, atol=ATOL)
    res = convex.kkt_residuals(method, m, closed, est.info["duals"])
    assert max(res.values()) < ATOL, res


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.2, 0.5])
@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_mle_large_domain_small_eps(oracle, eps):
    m = simulated(oracle, eps, 4096, n=200_000, seed=7)
    check_all("mle", m, convex.mle(m))


def test_norm_sub_satisfies_cls_kkt():
    m = simulated("OUE", 1.0, 1024, n=1_000_000, seed=3)
    est = convex.cls(m)
    res = convex.kkt_residuals("cls", m, methods.norm_sub(m).frequencies, est.info["duals"])
    assert max(res.values()) < ATOL


@pytest.mark.parametrize(
    ("solver", "tol"), [("CLARABEL", None), ("OSQP", None), ("SCS", None), ("HIGHS", None)]
)
def test_cls_every_qp_solver_agrees_after_polishing(solver, tol):
    m = simulated("OUE", 1.0, 512, n=200_000, seed=11)
    est = convex.cls(m, solver=solver, tol=tol)
    assert est.info["solver"].upper() == solver
    check_all("cls", m, est)


def test_mle_by_clarabel_is_polished_too():
    m = simulated("OUE", 1.0, 256, n=100_000, seed=4)
    est = convex.mle(m, solver="CLARABEL")
    check_all("mle", m, est)


# ---------------------------------------------------------------------------
# Regression: the cases of the outside review (each failed before polishing)
# ---------------------------------------------------------------------------


def assert_agrees(method, m, est):
    """Check the review's criteria: 1e-6 in f, on the simplex within 1e-8."""
    closed = CLOSED_FORMS[method](m).frequencies
    f = est.frequencies
    assert np.abs(f - closed).max() <= ATOL, np.abs(f - closed).max()
    assert f.min() >= -SIMPLEX, f.min()
    assert abs(f.sum() - 1) <= SIMPLEX, f.sum() - 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_review_oue_d1000_exact_mle_default(seed):
    """OUE, d = 1000, eps 1, n = 2e5: SCS 'optimal' was 1e-5 off with negative entries."""
    m = simulated("OUE", 1.0, 1000, n=200_000, seed=seed)
    est = bayesldp.postprocess(m, "mle", backend="cvxpy")
    assert_agrees("mle", m, est)


@pytest.mark.parametrize(
    ("catalogue_name", "case", "method"),
    [
        ("toy", "consistent", "cls"),
        ("toy", "consistent", "mle-apx"),
        ("toy", "all-negative", "mle-apx"),
        ("toy", "ties", "mle-apx"),
        ("methods", "already-consistent", "cls"),
        ("methods", "already-consistent", "mle-apx"),
        ("methods", "all-negative", "mle-apx"),
        ("methods", "ties", "mle"),
    ],
)
def test_review_toy_cases_default(catalogue_name, case, method):
    """All-negative, ties and already-consistent: 2e-6 to 5e-5 off at default tolerances."""
    m = build((catalogue_name, case))
    assert_agrees(method, m, bayesldp.postprocess(m, method, backend="cvxpy"))


@pytest.mark.parametrize(
    "case",
    [
        ("sim", ("GRR", 0.2, 4096)),
        ("sim", ("GRR", 4.0, 16)),
        ("sim", ("OUE", 1.0, 2)),
        ("sim", ("OUE", 1.0, 16)),
        ("sim", ("OUE", 4.0, 16)),
        ("toy", "consistent"),
        ("methods", "all-negative"),
        ("methods", "already-consistent"),
    ],
    ids=str,
)
def test_review_mle_apx_tight_tolerance(case):
    """Clarabel at tol 1e-10 said 'optimal' 1e-6 to 5e-6 from the closed form."""
    m = build(case)
    assert_agrees("mle-apx", m, convex.mle_apx(m, tol=1e-10))


@pytest.mark.parametrize("seed", range(6))
def test_review_grr_d500_small_n(seed):
    """GRR, d = 500, eps 0.2, n = 2000: default solves up to 4e-4 off."""
    m = simulated("GRR", 0.2, 500, n=2000, seed=seed)
    for method in ("cls", "mle-apx", "mle"):
        assert_agrees(method, m, bayesldp.postprocess(m, method, backend="cvxpy"))


@pytest.mark.parametrize("seed", range(6))
def test_review_grr_d500_inaccurate_status_is_polished(seed):
    """At tol 1e-11 Clarabel ends 'optimal_inaccurate' (this raised); polishing verifies."""
    m = simulated("GRR", 0.2, 500, n=2000, seed=seed)
    est = convex.mle_apx(m, tol=1e-11)
    assert est.info["status"] == "optimal"
    assert est.info["solver_status"] in ("optimal", "optimal_inaccurate")
    assert_agrees("mle-apx", m, est)
    check_all("mle-apx", m, est)


# ---------------------------------------------------------------------------
# Polishing: what it does and what it refuses
# ---------------------------------------------------------------------------


def test_polish_does_not_use_the_closed_forms(monkeypatch):
    """The cvxpy answer is an independent computation: it runs with the closed forms gone."""
    m = simulated("OUE", 1.0, 256, n=200_000, seed=5)
    expected = {name: func(m).frequencies for name, func in CLOSED_FORMS.items()}

    def refuse(*args, **kwargs):
        raise AssertionError("a closed form was called")

    for name in ("cls", "mle_apx", "mle", "norm_sub", "project_simplex"):
        monkeypatch.setattr(methods, name, refuse)
    for name in convex.PROBLEMS:
        est = bayesldp.postprocess(m, name, backend="cvxpy")
        np.testing.assert_allclose(est.frequencies, expected[name], rtol=0, atol=ATOL)


def test_gradient_and_curvature_match_finite_differences():
    m = simulated("GRR", 1.0, 12, n=20_000, seed=6)
    f = np.linspace(0.02, 0.15, 12)
    h = 1e-6
    for method in convex.PROBLEMS:
        g = convex.gradient(method, m, f)
        c = convex.curvature(method, m, f)
        for v in range(12):
            e = np.zeros(12)
            e[v] = h
            up, down = convex.objective(method, m, f + e), convex.objective(method, m, f - e)
            assert g[v] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-9)
            gu, gd = convex.gradient(method, m, f + e)[v], convex.gradient(method, m, f - e)[v]
            assert c[v] == pytest.approx((gu - gd) / (2 * h), rel=1e-6, abs=1e-9)
        # and against cvxpy's own differentiation of the literal objective
        x = cp.Variable(12)
        np.testing.assert_allclose(
            g, cvxpy_gradient(literal_objective(method, m, x), x, f), rtol=1e-10, atol=1e-12
        )


def test_polish_info_and_unpolished_answer():
    m = simulated("OUE", 1.0, 1000, n=200_000, seed=0)
    raw = convex.mle(m, polish=False)
    assert raw.info["polished"] is False and raw.info["polish"] is None
    assert raw.info["duals"] is raw.info["solver_duals"]
    est = convex.mle(m)
    info = est.info
    assert set(info["polish"]) == {
        "verified", "support_size", "rounds", "moved", "newton_iterations", "distance"
    }  # fmt: skip
    # Same solver, same problem, same answer before polishing: the distance moved is
    # the gap between the unpolished and the polished frequencies.
    assert info["polish"]["distance"] == pytest.approx(
        np.abs(est.frequencies - raw.frequencies).max(), rel=1e-6
    )
    assert info["polish"]["support_size"] == int((est.frequencies > 0).sum())
    assert info["solver_objective"] == pytest.approx(raw.info["objective"], rel=1e-12)
    assert info["wall_time"] >= info["polish_time"] > 0


def test_non_optimal_status_polished_to_verified_optimum():
    """A solve stopped early (status not 'optimal') is returned once polishing verifies it."""
    m = simulated("OUE", 1.0, 64, n=200_000, seed=8)
    with pytest.raises(convex.SolverFailedError):
        convex.mle(m, max_iter=50, polish=False)
    est = convex.mle(m, max_iter=50)
    assert est.info["solver_status"] != "optimal"
    check_all("mle", m, est)


def test_not_optimal_raises_with_status_and_solver():
    m = simulated("OUE", 1.0, 256, n=100_000, seed=4)
    for polish in (True, False):
        with pytest.raises(convex.SolverFailedError, match="CLARABEL") as info:
            convex.cls(m, max_iter=1, polish=polish)
        assert info.value.status != "optimal"
        assert info.value.status in str(info.value)
        with pytest.raises(convex.SolverFailedError, match="SCS"):
            convex.mle(m, solver="SCS", max_iter=5, polish=polish)


def test_polish_moves_only_items_at_the_boundary():
    """Corrections change the side of items the solver could not place, never others."""
    m = toy_measurement(TOY["ties-at-cut"])  # optimum 0.55, 0.45, 0, 0, 0
    closed = methods.cls(m).frequencies
    terms = convex.ObjectiveTerms("cls", m)
    nu, lam = implied_duals("cls", m, closed)
    # An interior-point answer that leaves item 1 (f* = 0.45) clearly in the support and
    # tied item 2 (f* = 0, lambda* = 0) ambiguous, put on the wrong side.
    f0, lam0 = closed.copy(), np.maximum(lam, 0)
    f0[2], lam0[2] = 1e-6, 2e-6
    ok = convex.polish_point(terms, f0, nu, lam0)
    assert ok.verified
    np.testing.assert_allclose(ok.frequencies, closed, atol=1e-15)
    # Item 1 placed clearly on the wrong side: refused, not corrected.
    f0[1], lam0[1] = 0.0, 0.3
    bad = convex.polish_point(terms, f0, nu, lam0)
    assert not bad.verified and "placed clearly" in bad.reason


def test_polish_rejects_unverified_point():
    """A polished point failing the KKT check raises even when the solver said optimal."""
    m = simulated("OUE", 1.0, 128, n=100_000, seed=4)
    with pytest.raises(convex.SolverFailedError, match="KKT check"):
        # so few iterations that the support the solver reports is far off
        convex.mle_apx(m, max_iter=3)


# ---------------------------------------------------------------------------
# A case the closed form cannot do (found by this comparison)
# ---------------------------------------------------------------------------


def test_mle_zero_count_verified_by_kkt():
    """A binomial MLE with an item no user reported: the cvxpy answer passes every check."""
    m = toy_measurement([-1.0, 0.5, 0.6])  # support count 0 for item 0
    est = convex.mle(m)
    check = KKTCheck("mle", m, est)
    check.check_primal_feasibility(SIMPLEX)
    check.check_dual_domains(KKT)
    check.check_complementarity(KKT)
    check.check_stationary_lagrangian(KKT)


def test_closed_form_mle_zero_count():
    m = toy_measurement([-1.0, 0.5, 0.6])
    assert_agrees("mle", m, convex.mle(m))


# ---------------------------------------------------------------------------
# The formulations are what they claim to be
# ---------------------------------------------------------------------------


def eq13(m, f):
    """Return the long paper's Eq. (13), written out literally."""
    p, q, n = m.p, m.q, m.n
    c = m.support_counts
    return np.sum((c / n - q - (p - q) * f) ** 2 / (q * (1 - q) + (p - q) * (1 - p - q) * f))


@pytest.mark.parametrize(("oracle", "eps", "d"), [("OUE", 1.0, 20), ("GRR", 2.0, 12)])
def test_soc_form_equals_literal_eq13(oracle, eps, d):
    """One scalar quad_over_lin per term, eq. (13) unscaled, gives the same minimiser."""
    m = simulated(oracle, eps, d, n=50_000, seed=5)
    p, q, n = m.p, m.q, m.n
    f = cp.Variable(d)
    terms = [
        cp.quad_over_lin(m.support_counts[v] / n - q - (p - q) * f[v],
                         q * (1 - q) + (p - q) * (1 - p - q) * f[v])
        for v in range(d)
    ]  # fmt: skip
    scale = q * (1 - q) / (p - q) ** 2
    problem = cp.Problem(cp.Minimize(scale * cp.sum(cp.hstack(terms))), [cp.sum(f) == 1, f >= 0])
    problem.solve(solver="SCS", eps_abs=1e-10, eps_rel=1e-10, max_iters=200_000)
    est = convex.mle_apx(m)
    np.testing.assert_allclose(est.frequencies, f.value, atol=ATOL)
    assert est.info["objective_eq13"] == pytest.approx(eq13(m, est.frequencies), rel=1e-6)
    assert est.info["objective"] == pytest.approx(problem.value, rel=1e-6, abs=1e-12)


def test_mle_objective_is_the_likelihood():
    """Moving mass between items changes the objective as the log-likelihood says."""
    m = simulated("OUE", 1.0, 64, n=100_000, seed=9)
    est = convex.mle(m)
    f = est.frequencies.clip(0)
    f /= f.sum()
    g = f.copy()
    g[0] -= 0.01
    g[1] += 0.01
    scale = est.info["scale"]
    dll = methods.log_likelihood(m, f) - methods.log_likelihood(m, g)
    dobj = convex.objective("mle", m, g) - convex.objective("mle", m, f)
    assert dobj == pytest.approx(scale * dll / m.n, rel=1e-8)
    assert dobj > 0  # the solver's optimum has the higher likelihood
    assert est.info["deviance"] == pytest.approx(
        2 * m.n * convex.objective("mle", m, est.frequencies) / scale, rel=1e-6
    )


# ---------------------------------------------------------------------------
# Which form of the MLE-Apx formula is correct
# ---------------------------------------------------------------------------


def mle_apx_ndss_signs(m: bayesldp.Measurement) -> np.ndarray:
    """Eq. (10) of the NDSS OCR copy, with its signs.

    x = (sum_{D1} f~_v (p-q) - (p-q)) / ((p-q)(1-p-q) - |D1| q(1-q)),
    f'_v = (q(1-q) x + f~_v (p-q)) / (p - q - (p-q)(1-p-q) x),
    dropping negatives into D0 as in the long paper.
    """
    p, q = m.p, m.q
    pq = p - q
    ft = m.estimates
    active = np.ones(m.domain_size, dtype=bool)
    for _ in range(m.domain_size):
        x = (pq * ft[active].sum() - pq) / (pq * (1 - p - q) - active.sum() * q * (1 - q))
        f = np.where(active, (q * (1 - q) * x + ft * pq) / (pq - pq * (1 - p - q) * x), 0.0)
        if not (f < 0).any():
            break
        active &= f >= 0
    return f


@pytest.mark.parametrize(("oracle", "eps", "d"), [("OUE", 1.0, 512), ("GRR", 1.0, 64)])
def test_long_paper_mle_apx_form_is_the_correct_one(oracle, eps, d):
    m = simulated(oracle, eps, d, n=200_000, seed=13)
    exact = convex.mle_apx(m).frequencies
    long_form = methods.mle_apx(m).frequencies
    ndss_form = mle_apx_ndss_signs(m)
    np.testing.assert_allclose(long_form, exact, atol=ATOL)
    assert long_form.sum() == pytest.approx(1.0, abs=1e-12)
    # The NDSS signs give neither the minimiser nor a distribution.
    assert np.abs(ndss_form - exact).max() > 10 * ATOL
    assert abs(ndss_form.sum() - 1) > 1e-4
    assert eq13(m, long_form) < eq13(m, np.clip(ndss_form, 0, None))


# ---------------------------------------------------------------------------
# Errors, options and the Estimate's info
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["cls", "mle-apx", "mle"])
def test_info_carries_status_objective_duals_and_time(method):
    m = simulated("OUE", 1.0, 32, n=20_000, seed=2)
    est = bayesldp.postprocess(m, method, backend="cvxpy")
    info = est.info
    assert info["status"] == "optimal"
    assert info["solver_status"] == "optimal"
    assert isinstance(info["solver"], str)
    assert np.isfinite(info["objective"]) and np.isfinite(info["solver_objective"])
    for key in ("duals", "solver_duals"):
        assert set(info[key]) == {"sum", "nonneg"}
        assert info[key]["nonneg"].shape == (32,)
    assert set(info["kkt_residuals"]) == {"primal", "dual", "complementary", "stationarity"}
    assert info["polished"] is True and info["polish"]["verified"] is True
    assert info["polish"]["distance"] >= 0
    assert info["wall_time"] > 0
    assert info["clipped"] is False
    assert info["min_frequency"] == est.frequencies.min()
    assert est.method == method


def test_solver_without_the_cone_raises():
    m = simulated("OUE", 1.0, 16, n=10_000, seed=4)
    with pytest.raises(convex.SolverFailedError, match="OSQP"):
        convex.mle_apx(m, solver="OSQP")


def test_bad_options_raise_value_error():
    m = simulated("OUE", 1.0, 16, n=10_000, seed=4)
    with pytest.raises(ValueError, match="solver"):
        convex.cls(m, solver="NOT_A_SOLVER")
    with pytest.raises(ValueError, match="tol"):
        convex.cls(m, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        convex.cls(m, max_iter=0)
    with pytest.raises(ValueError, match="likelihood"):
        convex.mle(m, likelihood="poisson")
    with pytest.raises(ValueError, match="polish"):
        convex.cls(m, polish=1)
    with pytest.raises(ValueError, match="unknown option"):
        bayesldp.postprocess(m, "cls", backend="cvxpy", tolerance=1e-9)
    with pytest.raises(ValueError, match="no cvxpy backend"):
        bayesldp.postprocess(m, "norm-cut", backend="cvxpy")


def test_methods_table_and_signatures():
    assert set(convex.PROBLEMS) == {"cls", "mle-apx", "mle"}
    m = simulated("GRR", 1.0, 8, n=10_000, seed=4)
    for name in convex.PROBLEMS:
        est = bayesldp.postprocess(m, name, backend="cvxpy", solver="SCS", tol=1e-9)
        assert est.info["solver"] == "SCS"
        assert est.frequencies.shape == (8,)


# ---------------------------------------------------------------------------
# The scripts run end to end with tiny arguments
# ---------------------------------------------------------------------------


def test_convex_bench_tiny(tmp_path):
    from benchmarks import convex_bench as bench

    args = bench.build_parser().parse_args(
        ["--sizes", "50", "200", "--repeat", "1", "--out", str(tmp_path)]
    )
    frame = bench.main(args)
    assert set(frame["method"]) == {"cls", "mle-apx", "mle"}
    assert set(frame["d"]) == {50, 200}
    assert (frame["max_abs_diff"] < ATOL).all()
    assert (tmp_path / "convex_bench.csv").exists()
    assert (tmp_path / "convex_bench.png").exists()


def test_problems_are_the_registry_s_cvxpy_backends():
    from bayesldp.methods.registry import get_method, method_names

    declared = {m for m in method_names() if "cvxpy" in get_method(m).backends}
    # norm-sub is cls's problem (the projection onto the simplex): the same function
    assert declared == set(convex.PROBLEMS) | {"norm-sub"}
    assert get_method("norm-sub").backends["cvxpy"] is get_method("cls").backends["cvxpy"]
