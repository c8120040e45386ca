"""The likelihood matrix and its optimality terms (``bayesldp.empirical_bayes._likelihood``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from bayesldp.empirical_bayes import count_likelihood, npmle
from bayesldp.empirical_bayes._likelihood import total_corrected_counts
from tests.empirical_bayes.helpers import likelihood_problem, zipf_measurement


@pytest.mark.parametrize("likelihood", ["binomial", "gaussian"])
def test_likelihood_matrix_matches_scipy(likelihood):
    _, m = zipf_measurement(d=40, n=500, seed=3)
    atoms = np.arange(0, m.n + 1, 7, dtype=float)
    lik = count_likelihood(m, atoms, likelihood)
    c = m.support_counts
    if likelihood == "binomial":
        ref = stats.binom.logpmf(c[:, None], m.n, m.q + (m.p - m.q) * atoms[None, :] / m.n)
    else:
        var = atoms * m.p * (1 - m.p) + (m.n - atoms) * m.q * (1 - m.q)
        ref = stats.norm.logpdf(c[:, None], m.n * m.q + (m.p - m.q) * atoms, np.sqrt(var))
    ours = np.log(lik.matrix[lik.item_row]) + lik.log_scale[lik.item_row][:, None]
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-8)
    w = np.random.default_rng(0).dirichlet(np.ones(atoms.size))
    assert lik.loglik(w) == pytest.approx(logsumexp(ref + np.log(w), axis=1).sum(), rel=1e-12)


def test_gradient_is_the_loglik_s_and_sums_to_d():
    _, m = zipf_measurement(d=30, n=3000, seed=2)
    lik = likelihood_problem(m)
    w = np.random.default_rng(1).dirichlet(np.ones(lik.atoms.size))
    s = lik.gradient(w)
    assert w @ s == pytest.approx(lik.n_items, rel=1e-12)
    h = 1e-7
    for k in (0, lik.atoms.size // 2, lik.atoms.size - 1):
        e = np.zeros_like(w)
        e[k] = h
        numeric = (lik.loglik(w + e) - lik.loglik(w - e)) / (2 * h)
        assert s[k] == pytest.approx(numeric, rel=1e-5, abs=1e-3)  # S_k is of order d


def test_gap_bounds_the_loglik_shortfall_for_any_weights():
    _, m = zipf_measurement(d=90, n=20_000, seed=8)
    lik = likelihood_problem(m)
    best = npmle(lik)
    rng = np.random.default_rng(0)
    for alpha in (0.05, 1.0):
        w = rng.dirichlet(np.full(lik.atoms.size, alpha))
        w = 0.5 * w + 0.5 * best.weights
        shortfall = best.loglik - lik.loglik(w)
        assert 0 <= shortfall <= lik.n_items * lik.kkt_gap(w) + 1e-9


def test_total_correction_removes_the_known_noise():
    _, m = zipf_measurement(d=200, n=50_000, seed=4)
    c = total_corrected_counts(m)
    d, n, p, q = m.domain_size, m.n, m.p, m.q
    assert c.sum() == pytest.approx(n * (d * q + p - q), rel=1e-12)
    # in proportion to each item's (plug-in) variance
    shift = m.support_counts - c
    x = np.clip(m.estimates * n, 0, n)
    pi = q + (p - q) * x / n
    np.testing.assert_allclose(shift / shift.sum(), pi * (1 - pi) / (pi * (1 - pi)).sum())
    # GRR: every user supports one item, the total carries no noise
    _, g = zipf_measurement(d=50, n=20_000, seed=5, oracle="GRR")
    np.testing.assert_array_equal(total_corrected_counts(g), g.support_counts)


def test_bad_atoms_counts_and_rows_raise():
    _, m = zipf_measurement(d=30, n=3000)
    with pytest.raises(ValueError, match="atoms"):
        count_likelihood(m, [-1.0, 2.0])
    with pytest.raises(ValueError, match="atoms"):
        count_likelihood(m, [])
    with pytest.raises(ValueError, match="counts"):
        count_likelihood(m, [0.0, 5.0], counts=np.full(m.domain_size, -1.0))
    with pytest.raises(ValueError, match="likelihood"):
        count_likelihood(m, [0.0, 5.0], likelihood="poisson")
    # a likelihood with a row no item has crashed the SQP (argmin of an empty sequence)
    lik = likelihood_problem(m)
    empty_row = lik.multiplicity.copy()
    empty_row[0] = 0.0
    for bad in (empty_row, empty_row[1:], np.full_like(empty_row, np.nan)):
        with pytest.raises(ValueError, match="multiplicity"):
            npmle(dataclasses.replace(lik, multiplicity=bad))
