"""The cvxpy formulations against the closed forms of bayesldp.methods.

In the style of cvxpy's own ``solver_test_helpers.py`` / ``test_KKT.py``: a catalogue
of cases, each solved with tightened tolerances, where

* the solver's frequencies and the closed form agree to 1e-6 (absolute), and
* the closed form satisfies the KKT conditions (primal feasibility, complementary
  slackness, stationarity) with the *solver's* dual values, to 1e-6.
"""

from __future__ import annotations

import zlib

import cvxpy as cp
import numpy as np
import pytest

import bayesldp
from bayesldp import convex, methods
from bayesldp.oracles import make_oracle
from tests.helpers import toy_measurement, zipf_frequencies

ATOL = 1e-6

#: Tightened settings per method: solver, tolerance.
TIGHT = {
    "cls": {"solver": "CLARABEL", "tol": 1e-12},
    "mle-apx": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
    "mle": {"solver": "SCS", "tol": 1e-10, "max_iter": 200_000},
}

CLOSED_FORMS = {"cls": methods.cls, "mle-apx": methods.mle_apx, "mle": methods.mle}


def simulated(oracle: str, eps: float, d: int, n: int, seed: int, s: float = 1.5):
    """A Zipf(s) measurement with exact (GRR/OUE) simulation."""
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
    """(case, method) parameters; the exact MLE by SCS on d = 4096 at eps < 1 is slow."""
    cases = [(("sim", c), f"{c[0]}-eps{c[1]}-d{c[2]}") for c in SIMULATED]
    cases += [(("toy", name), f"toy-{name}") for name in TOY]
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
    return toy_measurement(TOY[spec])


@pytest.mark.parametrize(("case", "method"), catalogue())
def test_closed_form_matches_solver_and_kkt(case, method):
    m = build(case)
    closed = CLOSED_FORMS[method](m).frequencies
    est = bayesldp.postprocess(m, method, backend="cvxpy", **TIGHT[method])
    assert est.info["status"] == "optimal"
    np.testing.assert_allclose(est.frequencies, closed, rtol=0, atol=ATOL)
    res = convex.kkt_residuals(method, m, closed, est.info["duals"])
    for name, value in res.items():
        assert value < ATOL, f"KKT {name} residual {value:.2e} of the closed form"
    # Same optimal value (the solver's may be a little lower: its f is feasible only to
    # its tolerance).
    obj = est.info["objective"]
    assert convex.objective(method, m, closed) == pytest.approx(obj, rel=1e-8, abs=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.2, 0.5])
@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_mle_large_domain_small_eps(oracle, eps):
    m = simulated(oracle, eps, 4096, n=200_000, seed=7)
    est = convex.mle(m, **{k: v for k, v in TIGHT["mle"].items()})
    closed = methods.mle(m).frequencies
    np.testing.assert_allclose(est.frequencies, closed, rtol=0, atol=ATOL)
    res = convex.kkt_residuals("mle", m, closed, est.info["duals"])
    assert max(res.values()) < ATOL


def test_norm_sub_satisfies_cls_kkt():
    m = simulated("OUE", 1.0, 1024, n=1_000_000, seed=3)
    est = convex.cls(m, tol=1e-10)
    res = convex.kkt_residuals("cls", m, methods.norm_sub(m).frequencies, est.info["duals"])
    assert max(res.values()) < ATOL


@pytest.mark.parametrize(
    ("solver", "tol"), [("CLARABEL", 1e-12), ("OSQP", 1e-9), ("SCS", 1e-10), ("HIGHS", 1e-10)]
)
def test_cls_every_qp_solver_agrees(solver, tol):
    m = simulated("OUE", 1.0, 512, n=200_000, seed=11)
    extra = {"max_iter": 200_000} if solver in ("OSQP", "SCS") else {}
    est = convex.cls(m, solver=solver, tol=tol, **extra)
    assert est.info["solver"].upper() == solver
    np.testing.assert_allclose(est.frequencies, methods.cls(m).frequencies, atol=ATOL)


def test_mle_apx_default_clarabel_with_tight_tolerance():
    # The interior-point default gets within 1e-5 at tol 1e-11 (not always 1e-6: the
    # many items near zero each keep a mass of about tol / lambda_v, which adds up);
    # Clarabel stops with "insufficient progress" at tol 1e-12 on d = 4096. SCS, which
    # projects onto the cone, reaches 1e-6 (the catalogue above).
    for oracle, eps, d in [("OUE", 1.0, 512), ("GRR", 0.2, 4096), ("GRR", 4.0, 8)]:
        m = simulated(oracle, eps, d, n=200_000, seed=1)
        est = convex.mle_apx(m, tol=1e-11)
        assert est.info["solver"] == "CLARABEL"
        np.testing.assert_allclose(est.frequencies, methods.mle_apx(m).frequencies, atol=1e-5)


# ---------------------------------------------------------------------------
# The formulations are what they claim to be
# ---------------------------------------------------------------------------


def eq13(m, f):
    """The long paper's Eq. (13), written out literally."""
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
    est = convex.mle_apx(m, **TIGHT["mle-apx"])
    np.testing.assert_allclose(est.frequencies, f.value, atol=ATOL)
    assert est.info["objective_eq13"] == pytest.approx(eq13(m, est.frequencies), rel=1e-6)
    assert est.info["objective"] == pytest.approx(problem.value, rel=1e-6, abs=1e-12)


def test_mle_objective_is_the_likelihood():
    """Moving mass between items changes the objective as the log-likelihood says."""
    m = simulated("OUE", 1.0, 64, n=100_000, seed=9)
    est = convex.mle(m, **TIGHT["mle"])
    f = est.frequencies.clip(0)
    f /= f.sum()
    g = f.copy()
    g[0] -= 0.01
    g[1] += 0.01
    kind = est.info["likelihood"]
    args = (m.support_counts.astype(float), m.n, m.p, m.q, kind)
    scale = est.info["scale"]
    dll = methods._loglik(f, *args) - methods._loglik(g, *args)
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
    exact = convex.mle_apx(m, **TIGHT["mle-apx"]).frequencies
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
    assert isinstance(info["solver"], str)
    assert np.isfinite(info["objective"])
    assert set(info["duals"]) == {"sum", "nonneg"}
    assert info["duals"]["nonneg"].shape == (32,)
    assert info["wall_time"] > 0
    assert info["clipped"] is False
    assert info["min_frequency"] == est.frequencies.min()
    assert est.method == method


def test_not_optimal_raises_with_status_and_solver():
    m = simulated("OUE", 1.0, 256, n=100_000, seed=4)
    with pytest.raises(convex.SolverFailedError, match="CLARABEL") as info:
        convex.cls(m, max_iter=1)
    assert info.value.status != "optimal"
    assert info.value.status in str(info.value)
    with pytest.raises(convex.SolverFailedError, match="SCS"):
        convex.mle(m, solver="SCS", max_iter=5)


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
    with pytest.raises(ValueError, match="unknown option"):
        bayesldp.postprocess(m, "cls", backend="cvxpy", tolerance=1e-9)
    with pytest.raises(ValueError, match="no cvxpy backend"):
        bayesldp.postprocess(m, "norm-cut", backend="cvxpy")


def test_methods_table_and_signatures():
    assert set(convex.METHODS) == {"cls", "mle-apx", "mle"}
    m = simulated("GRR", 1.0, 8, n=10_000, seed=4)
    for name in convex.METHODS:
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
    assert (frame["max_abs_diff"] < 1e-5).all()
    assert (tmp_path / "convex_bench.csv").exists()
    assert (tmp_path / "convex_bench.png").exists()
