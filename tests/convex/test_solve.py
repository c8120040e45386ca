"""Solver options, failures and the Estimate's ``info`` (``bayesldp.convex._solve``)."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp import convex
from bayesldp.convex._solve import solver_options
from bayesldp.convex._terms import PROBLEMS
from tests.convex.references import simulated


@pytest.mark.parametrize("method", PROBLEMS)
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


def test_not_optimal_raises_with_status_and_solver():
    m = simulated("OUE", 1.0, 256, n=100_000, seed=4)
    for polish in (True, False):
        with pytest.raises(convex.SolverFailedError, match="CLARABEL") as info:
            convex.cls(m, max_iter=1, polish=polish)
        assert info.value.status != "optimal"
        assert info.value.status in str(info.value)
        assert info.value.method == "cls" and info.value.solver == "CLARABEL"
        with pytest.raises(convex.SolverFailedError, match="SCS"):
            convex.mle(m, solver="SCS", max_iter=5, polish=polish)


def test_solver_without_the_cone_raises():
    m = simulated("OUE", 1.0, 16, n=10_000, seed=4)
    with pytest.raises(convex.SolverFailedError, match="OSQP"):
        convex.mle_apx(m, solver="OSQP")


def test_bad_options_raise_value_error():
    m = simulated("OUE", 1.0, 16, n=10_000, seed=4)
    with pytest.raises(ValueError, match="solver"):
        convex.cls(m, solver="NOT_A_SOLVER")
    with pytest.raises(ValueError, match="solver"):
        convex.cls(m, solver=3)
    with pytest.raises(ValueError, match="tol"):
        convex.cls(m, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        convex.cls(m, max_iter=0)
    with pytest.raises(ValueError, match="solver_options"):
        convex.cls(m, solver_options=[1])
    with pytest.raises(ValueError, match="likelihood"):
        convex.mle(m, likelihood="poisson")
    with pytest.raises(ValueError, match="polish"):
        convex.cls(m, polish=1)
    with pytest.raises(ValueError, match="unknown option"):
        bayesldp.postprocess(m, "cls", backend="cvxpy", tolerance=1e-9)
    with pytest.raises(ValueError, match="no cvxpy backend"):
        bayesldp.postprocess(m, "norm-cut", backend="cvxpy")


def test_solver_options_translate_tol_and_max_iter():
    assert solver_options("SCS", 1e-9, 50, None) == {
        "eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 50
    }  # fmt: skip
    assert solver_options("CLARABEL", None, 7, {"max_iter": 9}) == {"max_iter": 9}
    with pytest.raises(ValueError, match="tol is not mapped"):
        solver_options("ECOS", 1e-9, None, None)


def test_every_problem_is_a_registered_cvxpy_backend_and_takes_the_options():
    from bayesldp.methods.registry import get_method, method_names

    declared = {m for m in method_names() if "cvxpy" in get_method(m).backends}
    # norm-sub is the same problem as cls, solved by the same cvxpy form
    assert declared == {*PROBLEMS, "norm-sub"}
    assert get_method("norm-sub").backends["cvxpy"] is get_method("cls").backends["cvxpy"]
    m = simulated("GRR", 1.0, 8, n=10_000, seed=4)
    for name in PROBLEMS:
        est = bayesldp.postprocess(m, name, backend="cvxpy", solver="SCS", tol=1e-9)
        assert est.info["solver"] == "SCS"
        assert est.frequencies.shape == (8,)
