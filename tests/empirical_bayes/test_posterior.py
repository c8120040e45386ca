"""Tilted item posteriors and the table draws come from (``._posterior``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from bayesldp.empirical_bayes import count_likelihood, tilted_posterior
from bayesldp.empirical_bayes._posterior import PosteriorTable
from bayesldp.measurement import Measurement


def test_posterior_under_known_prior_matches_enumeration():
    """Every count 0..n of a tiny problem, a known prior: posterior means, tilt and draws."""
    n = 30
    m = Measurement.from_support_counts([20, 9, 8, 12, 7, 10], n, p=0.5, q=0.27)
    rng = np.random.default_rng(1)
    g = rng.dirichlet(np.full(n + 1, 0.7))
    atoms = np.arange(n + 1, dtype=float)
    lik = count_likelihood(m, atoms)
    # brute force: P(x | c) for every item and every count
    pmf = stats.binom.pmf(m.support_counts[:, None], n, m.q + (m.p - m.q) * atoms[None, :] / n)

    def brute(lam):
        post = g * np.exp(lam * atoms) * pmf
        post /= post.sum(axis=1, keepdims=True)
        return post

    untilted = tilted_posterior(lik, g)
    np.testing.assert_allclose(untilted.item_means(), brute(0.0) @ atoms, rtol=1e-12)
    var = brute(0.0) @ atoms**2 - (brute(0.0) @ atoms) ** 2
    np.testing.assert_allclose(untilted.item_variances(), var, rtol=1e-10)
    np.testing.assert_allclose(untilted.responsibilities(), brute(0.0).sum(axis=0), rtol=1e-10)
    # the tilt: lambda with sum of posterior means = n, by bisection on the brute force
    lam = optimize.brentq(lambda t: (brute(t) @ atoms).sum() - n, -5, 5, xtol=1e-14)
    tilted = tilted_posterior(lik, g, total=float(n))
    assert tilted.tilt == pytest.approx(lam, rel=1e-8)
    np.testing.assert_allclose(tilted.item_means(), brute(lam) @ atoms, rtol=1e-9)
    assert tilted.item_means().sum() == pytest.approx(n, rel=1e-12)
    # draws of one item follow its posterior (chi-square goodness of fit)
    table = PosteriorTable.from_posterior(tilted)
    gen = np.random.default_rng(2)
    x = np.array([table.draw_counts(gen)[0] for _ in range(20_000)])
    p0 = brute(lam)[0]
    keep = p0 * x.size > 5
    obs = np.bincount(x.astype(int), minlength=n + 1)
    stat = ((obs[keep] - x.size * p0[keep]) ** 2 / (x.size * p0[keep])).sum()
    assert stats.chi2.sf(stat, keep.sum() - 1) > 1e-3


def test_a_draw_is_on_the_simplex_and_moved_by_the_variances():
    n = 30
    m = Measurement.from_support_counts([20, 9, 8, 12, 7, 10], n, p=0.5, q=0.27)
    atoms = np.arange(n + 1, dtype=float)
    lik = count_likelihood(m, atoms)
    table = PosteriorTable.from_posterior(tilted_posterior(lik, np.full(n + 1, 1 / (n + 1)), n))
    for seed in range(5):
        f = table.draw(np.random.default_rng(seed), n)
        assert f.min() >= 0 and f.sum() == pytest.approx(1.0, abs=1e-12)


def test_no_tilt_reaches_the_total_raises():
    m = Measurement.from_support_counts([3, 4], 10, p=0.5, q=0.25)
    lik = count_likelihood(m, [1.0, 2.0])
    with pytest.raises(ValueError, match="no tilt"):
        tilted_posterior(lik, np.array([0.5, 0.5]), total=10.0)
    with pytest.raises(ValueError, match="weights"):
        tilted_posterior(lik, np.array([-1.0, 2.0]))
