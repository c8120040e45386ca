"""Objectives, derivatives and KKT residuals (``bayesldp.convex._terms``)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from bayesldp import convex
from bayesldp.convex._terms import PROBLEMS, curvature, gradient
from tests.convex.references import cvxpy_gradient, literal_objective, literal_value, simulated


@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_gradient_and_curvature_match_finite_differences_and_cvxpy(oracle):
    m = simulated(oracle, 1.0, 12, n=20_000, seed=6)
    f = np.linspace(0.02, 0.15, 12)
    h = 1e-6
    for method in PROBLEMS:
        g = gradient(method, m, f)
        c = curvature(method, m, f)
        for v in range(12):
            e = np.zeros(12)
            e[v] = h
            up, down = convex.objective(method, m, f + e), convex.objective(method, m, f - e)
            assert g[v] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-9)
            gu, gd = gradient(method, m, f + e)[v], gradient(method, m, f - e)[v]
            assert c[v] == pytest.approx((gu - gd) / (2 * h), rel=1e-6, abs=1e-9)
        # against cvxpy's own evaluation and differentiation of the literal objective
        x = cp.Variable(12)
        np.testing.assert_allclose(
            g, cvxpy_gradient(literal_objective(method, m, x), x, f), rtol=1e-10, atol=1e-12
        )
        assert convex.objective(method, m, f) == pytest.approx(
            literal_value(method, m, f), rel=1e-10, abs=1e-14
        )


def test_kkt_residuals_measure_each_condition():
    m = simulated("OUE", 1.0, 4, n=10_000, seed=1)
    f = np.array([0.5, 0.5, 0.0, 0.0])
    grad = gradient("cls", m, f)
    nu = -grad[0]
    lam = grad + nu
    lam[:2] = 0.0
    res = convex.kkt_residuals("cls", m, f, {"sum": nu, "nonneg": lam})
    assert set(res) == {"primal", "dual", "complementary", "stationarity"}
    assert res["primal"] == 0 and res["complementary"] == 0
    assert res["stationarity"] == pytest.approx(abs(grad[1] - grad[0]))
    off = convex.kkt_residuals("cls", m, f - [0.1, 0, 0, 0], {"sum": nu, "nonneg": -lam})
    assert off["primal"] == pytest.approx(0.1) and off["dual"] == pytest.approx(lam.max())


def test_unknown_method_and_likelihood_raise():
    m = simulated("OUE", 1.0, 4, n=10_000, seed=1)
    with pytest.raises(ValueError, match="unknown method"):
        convex.objective("norm-sub", m, np.full(4, 0.25))
    with pytest.raises(ValueError, match="likelihood"):
        convex.objective("mle", m, np.full(4, 0.25), likelihood="poisson")
