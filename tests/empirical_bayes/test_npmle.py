"""The NPMLE and its three solvers (``bayesldp.empirical_bayes._npmle``, ``._sqp``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import datasets
from bayesldp.empirical_bayes import npmle, tilted_posterior
from tests.empirical_bayes.helpers import likelihood_problem, zipf_measurement


@pytest.mark.parametrize(
    ("d", "n", "eps", "likelihood"),
    [(100, 10_000, 1.0, "binomial"), (80, 50_000, 2.0, "gaussian")],
)
def test_sqp_agrees_with_cvxpy(d, n, eps, likelihood):
    _, m = zipf_measurement(d=d, n=n, eps=eps, seed=d)
    lik = likelihood_problem(m, likelihood)
    fast = npmle(lik)
    ref = npmle(lik, solver="cvxpy", tol=1e-10)
    assert fast.converged and fast.gap <= 1e-8
    # the optimality condition max_k S_k <= d holds at the SQP answer...
    s = lik.gradient(fast.weights)
    assert s.max() <= d * (1 + 1e-8)
    np.testing.assert_allclose(s[fast.weights > 0], d, rtol=1e-7)
    # ...and bounds the conic solver's shortfall: 0 <= l(sqp) - l(cvxpy) <= d * gap(cvxpy)
    diff = fast.loglik - ref.loglik
    assert -1e-9 * abs(fast.loglik) <= diff <= d * max(ref.gap, 0) + 1e-9 * abs(fast.loglik)
    assert ref.gap < 1e-4  # Clarabel bounds its objective gap, not the KKT residual
    # the posterior means agree (the weights need not: grid neighbours are near-collinear)
    sc = m.sigma * m.n
    a = tilted_posterior(lik, fast.weights, float(m.n)).item_means()
    b = tilted_posterior(lik, ref.weights, float(m.n)).item_means()
    assert np.abs(a - b).max() < 1e-4 * sc
    # mass in every stretch of one noise sd agrees
    edges = np.arange(0, lik.atoms[-1] + sc, sc)
    ha = np.histogram(lik.atoms, edges, weights=fast.weights)[0]
    hb = np.histogram(lik.atoms, edges, weights=ref.weights)[0]
    assert np.abs(ha - hb).max() < 1e-4


def test_em_is_monotone_and_bounded_by_the_gap():
    _, m = zipf_measurement(d=60, n=10_000, seed=7)
    lik = likelihood_problem(m)
    best = npmle(lik)
    previous = -np.inf
    for iters in (10, 100, 1000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            em = npmle(lik, solver="em", max_iter=iters)
        assert em.loglik >= previous - 1e-9
        previous = em.loglik
        # concavity: l(w*) - l(w) <= d * gap(w), for the EM iterate as for any w
        assert 0 <= best.loglik - em.loglik <= lik.n_items * em.gap + 1e-9
    with pytest.warns(RuntimeWarning, match="raise max_iter"):
        npmle(lik, solver="em", max_iter=4)


def test_sqp_from_a_given_start_reaches_the_same_optimum():
    _, m = zipf_measurement(d=30, n=3000, seed=9)
    lik = likelihood_problem(m)
    default = npmle(lik)
    uniform = npmle(lik, start=np.ones(lik.atoms.size))
    assert uniform.converged
    assert uniform.loglik == pytest.approx(default.loglik, rel=1e-10)
    assert set(uniform.info) == {"newton_steps", "qp_unfinished"}
    assert default.support.size == int((default.weights > 0).sum())


def test_bad_arguments_raise_naming_them():
    _, m = zipf_measurement(d=30, n=3000)
    lik = likelihood_problem(m)
    for kwargs, name in [
        ({"solver": "newton"}, "solver"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"start": np.ones(3)}, "start"),
        ({"start": np.zeros(lik.atoms.size)}, "start"),
    ]:
        with pytest.raises(ValueError, match=name):
            npmle(lik, **kwargs)
    with pytest.raises(ValueError, match="lik"):
        npmle(lik.matrix)


@pytest.mark.slow
def test_sqp_agrees_with_cvxpy_at_the_papers_setting():
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(data.counts, np.random.default_rng(2))
    lik = likelihood_problem(m)
    fast, ref = npmle(lik), npmle(lik, solver="cvxpy", tol=1e-10)
    assert fast.gap <= 1e-8 and ref.gap < 1e-6
    assert 0 <= fast.loglik - ref.loglik <= lik.n_items * ref.gap + 1e-6
    a = tilted_posterior(lik, fast.weights, float(m.n)).item_means()
    b = tilted_posterior(lik, ref.weights, float(m.n)).item_means()
    assert np.abs(a - b).max() < 1e-4 * m.sigma * m.n
