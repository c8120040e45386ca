"""The three formulations (``bayesldp.convex._problems``) against problems with known optima.

Every case of the catalogue is solved at the *default* settings of
``postprocess(m, method, backend="cvxpy")`` (or at the options the case names) and goes
through :func:`tests.convex.references.check_solution`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import bayesldp
from bayesldp import convex, methods
from tests.convex.references import (
    ANALYTIC,
    ATOL,
    Case,
    check_solution,
    closed_form_cases,
    closed_form_reference,
    review_cases,
    simulated,
    toy_measurement,
)

#: Tightened settings per method, for the unpolished solvers.
TIGHT = {
    "cls": {"solver": "CLARABEL", "tol": 1e-12},
    "mle-apx": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
    "mle": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
}

CATALOGUE = [*ANALYTIC, *closed_form_cases(), *review_cases()]


@pytest.mark.parametrize("case", [c.param() for c in CATALOGUE])
def test_solve_is_the_known_optimum(case: Case):
    m = case.build()
    est = bayesldp.postprocess(m, case.method, backend="cvxpy", **case.options)
    check_solution(case.method, m, est, case.known(m))


@pytest.mark.slow
@pytest.mark.parametrize("case", [c.param() for c in closed_form_cases()])
def test_unpolished_solvers_at_tight_settings(case: Case):
    """Without polishing, SCS at tol 1e-10 (and Clarabel at 1e-12 for CLS) agree too."""
    m = case.build()
    est = bayesldp.postprocess(m, case.method, backend="cvxpy", polish=False, **TIGHT[case.method])
    check_solution(case.method, m, est, case.known(m), polished=False)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.2, 0.5])
@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_mle_large_domain_small_eps(oracle, eps):
    m = simulated(oracle, eps, 4096, n=200_000, seed=7)
    check_solution("mle", m, convex.mle(m), closed_form_reference("mle", m))


@pytest.mark.parametrize("solver", ["CLARABEL", "OSQP", "SCS", "HIGHS"])
def test_cls_every_qp_solver_agrees_after_polishing(solver):
    m = simulated("OUE", 1.0, 512, n=200_000, seed=11)
    est = convex.cls(m, solver=solver)
    assert est.info["solver"].upper() == solver
    check_solution("cls", m, est, closed_form_reference("cls", m))


def test_mle_by_clarabel_is_polished_too():
    m = simulated("OUE", 1.0, 256, n=100_000, seed=4)
    check_solution("mle", m, convex.mle(m, solver="CLARABEL"), closed_form_reference("mle", m))


def test_mle_with_an_item_no_user_reported():
    """A binomial MLE with a support count of 0: the closed form and cvxpy agree."""
    m = toy_measurement([-1.0, 0.5, 0.6])  # support count 0 for item 0
    check_solution("mle", m, convex.mle(m), closed_form_reference("mle", m))


def test_norm_sub_satisfies_cls_kkt():
    m = simulated("OUE", 1.0, 1024, n=1_000_000, seed=3)
    est = convex.cls(m)
    res = convex.kkt_residuals("cls", m, methods.norm_sub(m).frequencies, est.info["duals"])
    assert max(res.values()) < ATOL


# ---------------------------------------------------------------------------
# Which form of the MLE-Apx formula is correct
# ---------------------------------------------------------------------------


def eq13(m, f):
    """Return the long paper's Eq. (13), written out literally."""
    p, q, n = m.p, m.q, m.n
    c = m.support_counts
    return np.sum((c / n - q - (p - q) * f) ** 2 / (q * (1 - q) + (p - q) * (1 - p - q) * f))


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


@pytest.mark.parametrize(("oracle", "eps", "d"), [("OUE", 1.0, 20), ("GRR", 2.0, 12)])
def test_soc_form_equals_literal_eq13(oracle, eps, d):
    """One scalar quad_over_lin per term, eq. (13) unscaled, gives the same minimiser."""
    import cvxpy as cp

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


def test_the_checker_refuses_wrong_answers_and_wrong_references():
    case = next(c for c in ANALYTIC if c.method == "cls" and c.label == "cut")
    m = case.build()
    est, ref = convex.cls(m), case.known(m)
    check_solution("cls", m, est, ref)
    moved = np.array([2e-6, -2e-6, 0.0])
    with pytest.raises(AssertionError):  # a point off the optimum
        check_solution("cls", m, dataclasses.replace(est, frequencies=est.frequencies + moved), ref)
    with pytest.raises(AssertionError, match="not optimal"):  # a reference off the optimum
        check_solution("cls", m, est, dataclasses.replace(ref, f=ref.f + moved))
    with pytest.raises(AssertionError, match="not optimal"):  # a wrong multiplier
        check_solution("cls", m, est, dataclasses.replace(ref, nu=ref.nu + 1e-4))
