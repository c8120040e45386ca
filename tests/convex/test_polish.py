"""Polishing a solver's answer, and what it refuses (``bayesldp.convex._polish``)."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp import convex, methods
from bayesldp.convex._polish import polish_point
from bayesldp.convex._terms import PROBLEMS, ObjectiveTerms
from tests.convex.references import (
    ATOL,
    CLOSED_FORMS,
    TOY,
    check_solution,
    closed_form_reference,
    implied_reference,
    simulated,
    toy_measurement,
)


def test_polish_does_not_use_the_closed_forms(monkeypatch):
    """The cvxpy answer is an independent computation: it runs with the closed forms gone."""
    m = simulated("OUE", 1.0, 256, n=200_000, seed=5)
    expected = {name: func(m).frequencies for name, func in CLOSED_FORMS.items()}

    def refuse(*args, **kwargs):
        raise AssertionError("a closed form was called")

    from bayesldp.methods import _likelihood, _normalise, _simplex

    for module in (methods, _likelihood, _normalise, _simplex):
        for name in ("cls", "mle_apx", "mle", "norm_sub", "project_simplex", "project_rows"):
            monkeypatch.setattr(module, name, refuse, raising=False)
    for name in PROBLEMS:
        est = bayesldp.postprocess(m, name, backend="cvxpy")
        np.testing.assert_allclose(est.frequencies, expected[name], rtol=0, atol=ATOL)


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
    check_solution("mle", m, est, closed_form_reference("mle", m))


def test_polish_moves_only_items_at_the_boundary():
    """Corrections change the side of items the solver could not place, never others."""
    m = toy_measurement(TOY["ties-at-cut"])  # optimum 0.55, 0.45, 0, 0, 0
    ref = implied_reference("cls", m, methods.cls(m).frequencies)
    np.testing.assert_allclose(ref.f, [0.55, 0.45, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(ref.lam[2:4], 0, atol=1e-15)  # degenerate: f* = lambda* = 0
    terms = ObjectiveTerms("cls", m)
    # An interior-point answer that leaves the tied items 2 and 3 ambiguous, one on each
    # side: either side is right for them, so nothing moves.
    f0, lam0 = ref.f.copy(), np.maximum(ref.lam, 0)
    f0[2], lam0[2] = 2e-6, 1e-6
    f0[3], lam0[3] = 1e-6, 2e-6
    ok = polish_point(terms, f0, ref.nu, lam0)
    assert ok.verified and ok.moved == [] and ok.support_size == 3
    np.testing.assert_allclose(ok.frequencies, ref.f, atol=1e-15)
    # Item 1 (f* = 0.45) placed clearly on the wrong side: refused, not corrected.
    f0[1], lam0[1] = 0.0, 0.3
    bad = polish_point(terms, f0, ref.nu, lam0)
    assert not bad.verified and "placed clearly" in bad.reason


def test_polish_corrects_an_item_the_solver_left_out():
    """A tied item inside the support, left at zero by the solver, joins it."""
    m = toy_measurement(TOY["ties-above-cut"])  # optimum 0.525, 0.425, 0.025, 0.025, 0
    ref = implied_reference("cls", m, methods.cls(m).frequencies)
    f0, lam0 = ref.f.copy(), np.maximum(ref.lam, 0)
    f0[2], lam0[2] = 1e-6, 2e-6  # on the wrong side, within the boundary
    ok = polish_point(ObjectiveTerms("cls", m), f0, ref.nu, lam0)
    assert ok.verified and ok.moved == [2] and ok.rounds == 2
    np.testing.assert_allclose(ok.frequencies, ref.f, atol=1e-15)


def test_polish_rejects_unverified_point():
    """A polished point failing the KKT check raises even when the solver said optimal."""
    m = simulated("OUE", 1.0, 128, n=100_000, seed=4)
    with pytest.raises(convex.SolverFailedError, match="KKT check"):
        # so few iterations that the support the solver reports is far off
        convex.mle_apx(m, max_iter=3)
