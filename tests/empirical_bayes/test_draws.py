"""Posterior draws behind the intervals (``bayesldp.empirical_bayes._draws``)."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp import datasets, metrics
from bayesldp._draws import draw_set_sums
from bayesldp.empirical_bayes import eb_npmle
from bayesldp.empirical_bayes._draws import simulate_support_counts
from bayesldp.estimate import Uncertainty
from tests.empirical_bayes.helpers import zipf_measurement


@pytest.mark.parametrize("uncertainty", ["plug-in", "bootstrap"])
def test_same_seed_same_draws_whatever_the_chunks(uncertainty):
    _, m = zipf_measurement(d=80, n=20_000, seed=14)
    kwargs = dict(uncertainty=uncertainty, n_draws=12, n_boot=3)
    a = eb_npmle(m, rng=5, **kwargs)
    b = eb_npmle(m, rng=np.random.default_rng(5), **kwargs)
    assert isinstance(a.uncertainty, Uncertainty)
    whole = a.uncertainty.sample(0, 12)
    np.testing.assert_array_equal(whole, b.uncertainty.sample(0, 12))
    pieces = np.vstack([b.uncertainty.sample(i, min(i + 5, 12)) for i in range(0, 12, 5)])
    np.testing.assert_array_equal(whole, pieces)
    np.testing.assert_array_equal(whole[7:9], a.uncertainty.sample(7, 9))
    assert not np.array_equal(whole, eb_npmle(m, rng=6, **kwargs).uncertainty.sample(0, 12))
    # every draw is on the simplex
    assert whole.min() >= 0
    np.testing.assert_allclose(whole.sum(axis=1), 1, rtol=1e-12)
    # interval() goes through the same draws
    idx = np.arange(10)
    sums = whole[:, idx].sum(axis=1)
    mask = np.zeros(a.domain_size, dtype=bool)
    mask[idx] = True
    np.testing.assert_allclose(draw_set_sums(a.uncertainty, mask[None])[0], sums)
    lo, hi = a.interval(idx, 0.8, method="posterior")
    assert (lo, hi) == pytest.approx(tuple(np.quantile(sums, [0.1, 0.9])))
    with pytest.raises(ValueError, match="stop"):
        a.uncertainty.sample(0, 13)
    with pytest.raises(ValueError, match="start"):
        a.uncertainty.sample(-1, 3)


def test_bootstrap_widens_the_interval_of_a_lone_item():
    """The largest item's plug-in posterior is a point at its NPMLE atom.

    The bootstrap's is about as wide as the noise.
    """
    data, m = zipf_measurement(d=300, n=200_000, seed=15)
    top = int(np.argmax(data.counts))
    plug = eb_npmle(m, uncertainty="plug-in", n_draws=200, rng=0)
    boot = eb_npmle(m, uncertainty="bootstrap", n_draws=200, n_boot=20, rng=0)
    lo, hi = plug.interval([top], 0.9, method="posterior")
    assert hi - lo < 1e-3 * m.sigma
    lo, hi = boot.interval([top], 0.9, method="posterior")
    sd = float(np.sqrt(m.variance(data.frequencies)[top]))
    assert 2 * sd < hi - lo < 5 * sd


@pytest.mark.parametrize("likelihood", ["binomial", "gaussian"])
def test_grr_bootstrap_replicates_are_valid_measurements(likelihood):
    """GRR's support counts sum to n, so its replicates are drawn as one multinomial.

    Independent binomial counts made every GRR replicate an invalid Measurement, and
    the default (bootstrap) interval of eb-npmle on GRR raised.
    """
    data, m = zipf_measurement(d=60, n=20_000, eps=2.0, seed=3, oracle="GRR")
    est = eb_npmle(m, likelihood=likelihood, n_draws=8, n_boot=2, rng=0)
    draws = est.uncertainty.sample(0, 8)
    np.testing.assert_allclose(draws.sum(axis=1), 1, rtol=1e-12)
    lo, hi = est.interval(np.arange(10), 0.9)
    assert 0 <= lo <= hi <= 1
    c = simulate_support_counts(m, data.counts, likelihood, np.random.default_rng(0))
    assert c.sum() == m.n


def test_simulated_counts_follow_the_likelihood():
    _, m = zipf_measurement(d=40, n=5000, seed=1)
    x = np.full(40, m.n // 40)
    pi = m.q + (m.p - m.q) * x / m.n
    c = np.array([simulate_support_counts(m, x, "binomial", np.random.default_rng(i))
                  for i in range(400)])  # fmt: skip
    np.testing.assert_allclose(c.mean(axis=0).mean(), m.n * pi[0], rtol=0.01)
    np.testing.assert_allclose(c.var(axis=0).mean(), m.n * pi[0] * (1 - pi[0]), rtol=0.1)
    g = np.array([simulate_support_counts(m, x, "gaussian", np.random.default_rng(i))
                  for i in range(400)])  # fmt: skip
    given = x[0] * m.p * (1 - m.p) + (m.n - x[0]) * m.q * (1 - m.q)
    np.testing.assert_allclose(g.var(axis=0).mean(), given, rtol=0.1)


@pytest.mark.slow
def test_bootstrap_intervals_cover_on_the_papers_setting():
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    top = np.argsort(-data.counts)[:10]
    hits = []
    for rep in range(6):
        m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(
            data.counts, np.random.default_rng([7, rep])
        )
        draws = eb_npmle(m, n_draws=400, rng=rep).uncertainty.sample(0, 400)
        masks = metrics.random_subsets(1024, 10, 20, np.random.default_rng(rep))
        for mask in masks:
            lo, hi = np.quantile(draws[:, mask].sum(axis=1), [0.05, 0.95])
            hits.append(lo <= data.frequencies[mask].sum() <= hi)
        for i in top:
            lo, hi = np.quantile(draws[:, i], [0.05, 0.95])
            hits.append(lo <= data.frequencies[i] <= hi)
    assert 0.8 <= np.mean(hits) <= 0.97
