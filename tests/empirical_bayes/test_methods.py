"""``eb-npmle`` and the ``oracle-bayes`` reference (``bayesldp.empirical_bayes._methods``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.empirical_bayes import count_grid, eb_npmle, npmle, oracle_bayes, tilted_posterior
from bayesldp.empirical_bayes._grid import MAX_GRID_POINTS
from tests.empirical_bayes.helpers import likelihood_problem, zipf_measurement


@pytest.mark.parametrize(
    ("oracle", "eps", "likelihood"),
    [("OUE", 0.5, "binomial"), ("GRR", 2.0, "binomial"), ("SUE", 1.0, "gaussian")],
)
def test_estimate_is_consistent(oracle, eps, likelihood):
    _, m = zipf_measurement(d=150, n=30_000, eps=eps, seed=11, oracle=oracle)
    est = eb_npmle(m, likelihood=likelihood, rng=0)
    f = est.frequencies
    assert est.method == "eb-npmle"
    assert f.min() >= 0
    assert abs(f.sum() - 1) <= 1e-12
    assert est.is_consistent()
    assert est.info["converged"]
    # before the final division the tilted posterior means sum to n to the root finder's
    # accuracy: the tilt, not the division, makes the estimate consistent
    lik = likelihood_problem(m, likelihood)
    fit = npmle(lik)
    post = tilted_posterior(lik, fit.weights, float(m.n))
    assert post.item_means().sum() == pytest.approx(m.n, rel=1e-10)
    np.testing.assert_array_equal(f, post.item_means() / m.n / (post.item_means() / m.n).sum())


def test_oracle_bayes_point_mass_prior_gives_the_point():
    d, count = 64, 500
    counts = np.full(d, count)
    m = bayesldp.OUE(epsilon=1.0, domain_size=d).simulate(counts, np.random.default_rng(0))
    est = oracle_bayes(m, true_counts=counts, rng=0)
    np.testing.assert_allclose(est.frequencies, 1 / d, rtol=1e-14)
    assert est.method == "oracle-bayes"
    assert est.info["reference_only"] is True
    lo, hi = est.interval([0, 1, 2], 0.9)
    assert lo == pytest.approx(3 / d) and hi == pytest.approx(3 / d)


def test_oracle_bayes_two_point_prior_matches_enumeration():
    """Counts of two values: the oracle's posterior is a two-point law, tilted."""
    counts = np.array([0] * 40 + [200] * 10)
    n = int(counts.sum())
    m = bayesldp.OUE(epsilon=1.0, domain_size=counts.size).simulate(
        counts, np.random.default_rng(3)
    )
    est = oracle_bayes(m, true_counts=counts)
    atoms = np.array([0.0, 200.0])
    prior = np.array([0.8, 0.2])
    pmf = stats.binom.pmf(m.support_counts[:, None], n, m.q + (m.p - m.q) * atoms / n)

    def means(lam):
        post = prior * np.exp(lam * atoms) * pmf
        return (post / post.sum(axis=1, keepdims=True)) @ atoms

    lam = optimize.brentq(lambda t: means(t).sum() - n, -1, 1, xtol=1e-15)
    np.testing.assert_allclose(est.frequencies, means(lam) / n, rtol=1e-8, atol=1e-15)


def test_oracle_bayes_without_true_counts_is_a_value_error_naming_it():
    """``postprocess(m, "oracle-bayes")`` without ``true_counts`` was a TypeError."""
    _, m = zipf_measurement(d=20, n=2000)
    with pytest.raises(ValueError, match="true_counts is required"):
        bayesldp.postprocess(m, "oracle-bayes")
    with pytest.raises(ValueError, match="true_counts"):
        oracle_bayes(m)


def test_bad_input_raises_naming_the_argument():
    data, m = zipf_measurement(d=30, n=3000)
    cases = [
        (dict(solver="newton"), "solver"),
        (dict(likelihood="poisson"), "likelihood"),
        (dict(uncertainty="jackknife"), "uncertainty"),
        (dict(n_draws=0), "n_draws"),
        (dict(n_boot=0), "n_boot"),
        (dict(tol=-1.0), "tol"),
        (dict(tol=float("nan")), "tol"),
        (dict(grid_spacing=0.0), "spacing"),
        (dict(grid_growth=True), "growth"),
        (dict(grid_window="8"), "window"),
        (dict(max_iter=2.5), "max_iter"),
        (dict(correct_total=1), "correct_total"),
        (dict(rng="seed"), "rng"),
    ]
    for kwargs, name in cases:
        with pytest.raises(ValueError, match=name):
            eb_npmle(m, **kwargs)
    with pytest.raises(ValueError, match="Measurement"):
        eb_npmle(m.estimates)
    for bad in (data.counts[:-1], data.counts + 1, -data.counts):
        with pytest.raises(ValueError, match="true_counts"):
            oracle_bayes(m, true_counts=bad)
    with pytest.raises(ValueError, match="likelihood"):
        oracle_bayes(m, true_counts=data.counts, likelihood="normal")


@pytest.mark.parametrize(
    ("counts", "n", "correct_total", "fallback"),
    [
        ([3, 1, 1, 0, 0], 5, False, "prior weight 1e-09"),
        ([3], 5, False, "moved onto the total"),
        ([0], 4, False, "shared equally"),
        ([0, 0], 1, True, "prior weight 1e-09"),
    ],
)
def test_no_tilt_reaches_the_total_falls_back_with_a_warning(counts, n, correct_total, fallback):
    """Tiny measurements whose prior cannot be tilted to n: each fallback is named.

    The estimate and its draws stay on the simplex (the draws of the all-zero case
    raised before the draws were shared equally too).
    """
    m = bayesldp.Measurement.from_support_counts(np.array(counts), n, 0.7310585786300049, 0.5)
    with pytest.warns(RuntimeWarning, match=fallback):
        est = eb_npmle(m, correct_total=correct_total, uncertainty="plug-in", n_draws=4, rng=0)
    assert est.frequencies.min() >= 0 and abs(est.frequencies.sum() - 1) < 1e-12
    draws = est.uncertainty.sample(0, 4)
    assert draws.min() >= 0
    np.testing.assert_allclose(draws.sum(axis=1), 1, rtol=1e-12)


@pytest.mark.slow
def test_oracle_bayes_reproduces_the_papers_zipf_bound():
    """The tilted posterior under the true histogram, as in paper/bayes.md (8 runs)."""
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    mses = []
    for rep in range(8):
        m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(
            data.counts, np.random.default_rng([0, rep])
        )
        mses.append(metrics.mse(data.frequencies, oracle_bayes(m, true_counts=data.counts)))
    assert np.mean(mses) == pytest.approx(2.68e-7, rel=0.01)


@pytest.mark.slow
def test_wordfreq_fit_is_near_the_oracle():
    pytest.importorskip("wordfreq")
    data = datasets.wordfreq_words()
    m = bayesldp.OUE(epsilon=1.0, domain_size=data.d).simulate(
        data.counts, np.random.default_rng(0)
    )
    est = eb_npmle(m, rng=0)
    oracle = oracle_bayes(m, true_counts=data.counts)
    assert metrics.mse(data.frequencies, est) < 1.05 * metrics.mse(data.frequencies, oracle)


def test_eb_npmle_all_zero_counts_still_sums_to_one():
    # every support count 0 (n = 1, HR): the NPMLE puts all its weight at count 0 and no
    # tilt of it reaches the total; the fallback is named in a warning
    m = bayesldp.Measurement.from_support_counts(np.array([0, 0]), 1, 0.7310585786300049, 0.5)
    with pytest.warns(RuntimeWarning, match="eb-npmle"):
        est = bayesldp.postprocess(m, "eb-npmle", rng=0)
    assert est.frequencies.min() >= 0 and abs(est.frequencies.sum() - 1) < 1e-12


def test_eb_npmle_one_item_no_support_and_raw_total():
    # Hypothesis (thorough profile): d = 1, n = 1, support count 0, correct_total=False:
    # every posterior mean is 0 and no tilt reaches n; the answer is the only one possible
    m = bayesldp.Measurement.from_support_counts(np.array([0]), 1, 0.7310585786300049, 0.5)
    with pytest.warns(RuntimeWarning, match="eb-npmle"):
        est = bayesldp.postprocess(m, "eb-npmle", correct_total=False, rng=0)
    np.testing.assert_array_equal(est.frequencies, [1.0])


@pytest.mark.parametrize(
    "options",
    [{"grid_spacing": 1e-300}, {"grid_growth": 1e-300}, {"grid_spacing": 1e-6, "grid_window": 1e6}],
)
def test_eb_npmle_refuses_a_grid_of_millions_of_counts(options):
    # n = 10^7 with counts far apart and a tiny grid step: the grid would step one count
    # at a time over ~870,000 counts (a large grid_window widens it to all n + 1 counts);
    # a ValueError naming the options comes before any grid is built
    oracle = bayesldp.make_oracle("OUE", 1.0, 24)
    f = 1.0 / np.arange(1, 25) ** 1.5
    counts = np.random.default_rng(0).multinomial(10**7, f / f.sum())
    m = oracle.simulate(counts, np.random.default_rng(1))
    with pytest.raises(ValueError, match="grid_spacing or grid_growth, or lower grid_window"):
        bayesldp.postprocess(m, "eb-npmle", rng=0, **options)
    # the default grid is far below the limit
    assert count_grid(m).size < MAX_GRID_POINTS / 20
