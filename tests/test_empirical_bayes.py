"""Tests of the empirical-Bayes NPMLE (``eb-npmle``) and the ``oracle-bayes`` reference."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from scipy import optimize, stats

import bayesldp
from bayesldp import datasets, metrics
from bayesldp import empirical_bayes as eb
from bayesldp._draws import draw_set_sums
from bayesldp.estimate import Uncertainty
from bayesldp.measurement import Measurement


def _measurement(d=120, n=20_000, eps=1.0, seed=0, oracle="OUE", s=1.5):
    data = datasets.zipf(s=s, d=d, n=n, rng=seed)
    m = bayesldp.make_oracle(oracle, eps, d).simulate(data.counts, np.random.default_rng(seed))
    return data, m


def _problem(m, likelihood="binomial", **grid):
    grid_pts = eb.count_grid(m, likelihood=likelihood, **grid)
    counts = eb.total_corrected_counts(m, likelihood)
    return eb.count_likelihood(m, grid_pts, likelihood, counts)


# ---------------------------------------------------------------------------
# The likelihood and the posterior against brute force
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("likelihood", ["binomial", "gaussian"])
def test_likelihood_matrix_matches_scipy(likelihood):
    _, m = _measurement(d=40, n=500, seed=3)
    atoms = np.arange(0, m.n + 1, 7, dtype=float)
    lik = eb.count_likelihood(m, atoms, likelihood)
    c = m.support_counts
    if likelihood == "binomial":
        ref = stats.binom.logpmf(c[:, None], m.n, m.q + (m.p - m.q) * atoms[None, :] / m.n)
    else:
        var = atoms * m.p * (1 - m.p) + (m.n - atoms) * m.q * (1 - m.q)
        ref = stats.norm.logpdf(c[:, None], m.n * m.q + (m.p - m.q) * atoms, np.sqrt(var))
    ours = np.log(lik.matrix[lik.item_row]) + lik.log_scale[lik.item_row][:, None]
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-8)
    w = np.random.default_rng(0).dirichlet(np.ones(atoms.size))
    from scipy.special import logsumexp

    assert lik.loglik(w) == pytest.approx(logsumexp(ref + np.log(w), axis=1).sum(), rel=1e-12)


def test_posterior_under_known_prior_matches_enumeration():
    """Every count 0..n of a tiny problem, a known prior: posterior means, tilt and draws."""
    n = 30
    m = Measurement.from_support_counts([20, 9, 8, 12, 7, 10], n, p=0.5, q=0.27)
    rng = np.random.default_rng(1)
    g = rng.dirichlet(np.full(n + 1, 0.7))
    atoms = np.arange(n + 1, dtype=float)
    lik = eb.count_likelihood(m, atoms)
    # brute force: P(x | c) for every item and every count
    pmf = stats.binom.pmf(m.support_counts[:, None], n, m.q + (m.p - m.q) * atoms[None, :] / n)

    def brute(lam):
        post = g * np.exp(lam * atoms) * pmf
        post /= post.sum(axis=1, keepdims=True)
        return post

    untilted = eb.tilted_posterior(lik, g)
    np.testing.assert_allclose(untilted.item_means(), brute(0.0) @ atoms, rtol=1e-12)
    var = brute(0.0) @ atoms**2 - (brute(0.0) @ atoms) ** 2
    np.testing.assert_allclose(untilted.item_variances(), var, rtol=1e-10)
    # the tilt: lambda with sum of posterior means = n, by bisection on the brute force
    lam = optimize.brentq(lambda t: (brute(t) @ atoms).sum() - n, -5, 5, xtol=1e-14)
    tilted = eb.tilted_posterior(lik, g, total=float(n))
    assert tilted.tilt == pytest.approx(lam, rel=1e-8)
    np.testing.assert_allclose(tilted.item_means(), brute(lam) @ atoms, rtol=1e-9)
    assert tilted.item_means().sum() == pytest.approx(n, rel=1e-12)
    # draws of one item follow its posterior (chi-square goodness of fit)
    table = eb.PosteriorTable.from_posterior(tilted)
    gen = np.random.default_rng(2)
    x = np.array([table.draw_counts(gen)[0] for _ in range(20_000)])
    p0 = brute(lam)[0]
    keep = p0 * x.size > 5
    obs = np.bincount(x.astype(int), minlength=n + 1)
    stat = ((obs[keep] - x.size * p0[keep]) ** 2 / (x.size * p0[keep])).sum()
    assert stats.chi2.sf(stat, keep.sum() - 1) > 1e-3


def test_project_to_total():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, 50.0, size=200)
    var = rng.gamma(2.0, 10.0, size=200)
    var[:5] = 0.0
    # no clipping needed: the Gaussian conditioning formula
    n = x.sum() - 100.0
    out = eb.project_to_total(x, var, n)
    np.testing.assert_allclose(out, x - var / var.sum() * (x.sum() - n), rtol=1e-12)
    # heavy clipping: max(x - var * delta, 0) with delta by bisection, zero-variance untouched
    n = 0.3 * x.sum()
    out = eb.project_to_total(x, var, n)

    def total(delta):
        return np.where(var > 0, np.maximum(x - var * delta, 0), x).sum() - n

    delta = optimize.brentq(total, 0, 1e6, xtol=1e-14)
    np.testing.assert_allclose(out, np.where(var > 0, np.maximum(x - var * delta, 0), x))
    assert out.min() >= 0 and out.sum() == pytest.approx(n, rel=1e-12)
    np.testing.assert_array_equal(out[:5], x[:5])


def test_total_correction_removes_the_known_noise():
    _, m = _measurement(d=200, n=50_000, seed=4)
    c = eb.total_corrected_counts(m)
    d, n, p, q = m.domain_size, m.n, m.p, m.q
    assert c.sum() == pytest.approx(n * (d * q + p - q), rel=1e-12)
    # in proportion to each item's (plug-in) variance
    shift = m.support_counts - c
    x = np.clip(m.estimates * n, 0, n)
    pi = q + (p - q) * x / n
    np.testing.assert_allclose(shift / shift.sum(), pi * (1 - pi) / (pi * (1 - pi)).sum())
    # GRR: every user supports one item, the total carries no noise
    _, g = _measurement(d=50, n=20_000, seed=5, oracle="GRR")
    np.testing.assert_array_equal(eb.total_corrected_counts(g), g.support_counts)


# ---------------------------------------------------------------------------
# The NPMLE: solvers, optimality conditions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "n", "eps", "likelihood"),
    [(100, 10_000, 1.0, "binomial"), (80, 50_000, 2.0, "gaussian")],
)
def test_sqp_agrees_with_cvxpy(d, n, eps, likelihood):
    _, m = _measurement(d=d, n=n, eps=eps, seed=d)
    lik = _problem(m, likelihood)
    fast = eb.npmle(lik)
    ref = eb.npmle(lik, solver="cvxpy", tol=1e-10)
    assert fast.converged and fast.gap <= 1e-8
    # the optimality condition max_k S_k <= d holds at the SQP answer...
    s = eb.npmle_gradient(lik, fast.weights)
    assert s.max() <= d * (1 + 1e-8)
    np.testing.assert_allclose(s[fast.weights > 0], d, rtol=1e-7)
    # ...and bounds the conic solver's shortfall: 0 <= l(sqp) - l(cvxpy) <= d * gap(cvxpy)
    diff = fast.loglik - ref.loglik
    assert -1e-9 * abs(fast.loglik) <= diff <= d * max(ref.gap, 0) + 1e-9 * abs(fast.loglik)
    assert ref.gap < 1e-4  # Clarabel bounds its objective gap, not the KKT residual
    # the posterior means agree (the weights need not: grid neighbours are near-collinear)
    sc = m.sigma * m.n
    a = eb.tilted_posterior(lik, fast.weights, float(m.n)).item_means()
    b = eb.tilted_posterior(lik, ref.weights, float(m.n)).item_means()
    assert np.abs(a - b).max() < 1e-4 * sc
    # mass in every stretch of one noise sd agrees
    edges = np.arange(0, lik.atoms[-1] + sc, sc)
    ha = np.histogram(lik.atoms, edges, weights=fast.weights)[0]
    hb = np.histogram(lik.atoms, edges, weights=ref.weights)[0]
    assert np.abs(ha - hb).max() < 1e-4


def test_em_is_monotone_and_bounded_by_the_gap():
    _, m = _measurement(d=60, n=10_000, seed=7)
    lik = _problem(m)
    best = eb.npmle(lik)
    previous = -np.inf
    for iters in (10, 100, 1000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            em = eb.npmle(lik, solver="em", max_iter=iters)
        assert em.loglik >= previous - 1e-9
        previous = em.loglik
        # concavity: l(w*) - l(w) <= d * gap(w), for the EM iterate as for any w
        assert 0 <= best.loglik - em.loglik <= lik.n_items * em.gap + 1e-9
    with pytest.warns(RuntimeWarning, match="raise max_iter"):
        eb.npmle(lik, solver="em", max_iter=4)


def test_gap_bounds_the_loglik_shortfall_for_any_weights():
    _, m = _measurement(d=90, n=20_000, seed=8)
    lik = _problem(m)
    best = eb.npmle(lik)
    rng = np.random.default_rng(0)
    for alpha in (0.05, 1.0):
        w = rng.dirichlet(np.full(lik.atoms.size, alpha))
        w = 0.5 * w + 0.5 * best.weights
        shortfall = best.loglik - lik.loglik(w)
        assert 0 <= shortfall <= lik.n_items * eb.kkt_gap(lik, w) + 1e-9


# ---------------------------------------------------------------------------
# eb_npmle and oracle_bayes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("oracle", "eps", "likelihood"),
    [("OUE", 0.5, "binomial"), ("GRR", 2.0, "binomial"), ("SUE", 1.0, "gaussian")],
)
def test_estimate_is_consistent(oracle, eps, likelihood):
    _, m = _measurement(d=150, n=30_000, eps=eps, seed=11, oracle=oracle)
    est = eb.eb_npmle(m, likelihood=likelihood, rng=0)
    f = est.frequencies
    assert est.method == "eb-npmle"
    assert f.min() >= 0
    assert abs(f.sum() - 1) <= 1e-12
    assert est.is_consistent()
    assert est.info["converged"]
    # before the final division the tilted posterior means sum to n to the root finder's
    # accuracy: the tilt, not the division, makes the estimate consistent
    lik = _problem(m, likelihood)
    fit = eb.npmle(lik)
    post = eb.tilted_posterior(lik, fit.weights, float(m.n))
    assert post.item_means().sum() == pytest.approx(m.n, rel=1e-10)


def test_oracle_bayes_point_mass_prior_gives_the_point():
    d, count = 64, 500
    counts = np.full(d, count)
    m = bayesldp.OUE(epsilon=1.0, domain_size=d).simulate(counts, np.random.default_rng(0))
    est = eb.oracle_bayes(m, true_counts=counts, rng=0)
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
    est = eb.oracle_bayes(m, true_counts=counts)
    atoms = np.array([0.0, 200.0])
    prior = np.array([0.8, 0.2])
    pmf = stats.binom.pmf(m.support_counts[:, None], n, m.q + (m.p - m.q) * atoms / n)

    def means(lam):
        post = prior * np.exp(lam * atoms) * pmf
        return (post / post.sum(axis=1, keepdims=True)) @ atoms

    lam = optimize.brentq(lambda t: means(t).sum() - n, -1, 1, xtol=1e-15)
    np.testing.assert_allclose(est.frequencies, means(lam) / n, rtol=1e-8, atol=1e-15)


def test_grid_resolution():
    """Halving the grid's steps moves the estimates by a small fraction of the noise.

    Tolerances (in noise standard deviations of a count): root mean square 0.02 and
    largest 0.25 over the items. The largest change is on an item alone in its region
    of counts, whose estimate is the NPMLE atom next to it: a grid step of ``s/4`` puts
    that atom within ``s/8`` of the continuous NPMLE's. At the papers' settings the
    MSE changes by less than 0.3% (``paper/empirical_bayes.md``).
    """
    _, m = _measurement(d=400, n=200_000, seed=12)
    sc = m.sigma * m.n
    coarse = eb.eb_npmle(m, uncertainty="plug-in")
    fine = eb.eb_npmle(m, uncertainty="plug-in", grid_spacing=0.125, grid_growth=0.01)
    assert fine.info["grid_size"] > 1.7 * coarse.info["grid_size"]
    diff = (fine.frequencies - coarse.frequencies) * m.n / sc
    assert np.sqrt(np.mean(diff**2)) < 0.02
    assert np.abs(diff).max() < 0.25


def test_grid_layout():
    _, m = _measurement(d=200, n=100_000, seed=13)
    grid = eb.count_grid(m, spacing=0.25, growth=0.02, window=8.0)
    assert grid[0] == 0 and np.all(grid == np.round(grid)) and np.all(np.diff(grid) > 0)
    # every count up to 1 / growth, relative steps capped at spacing * sd
    np.testing.assert_array_equal(grid[:51], np.arange(51))
    step = np.diff(grid)
    sd = eb.count_noise_sd(m, grid[:-1])
    inside = step <= np.maximum(1, np.minimum(0.02 * grid[:-1], 0.25 * sd)) + 1e-9
    jumps = ~inside  # allowed only across stretches farther than the window from all data
    y = np.sort(m.estimates * m.n)
    for a, b in zip(grid[:-1][jumps], grid[1:][jumps], strict=True):
        mid = (a + b) / 2
        assert np.abs(y - mid).min() > 8 * eb.count_noise_sd(m, mid) - (b - a) / 2
    # covers every count estimate within the window
    assert grid[-1] >= min(m.n, y[-1])


def test_bad_input_raises_naming_the_argument():
    data, m = _measurement(d=30, n=3000)
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
            eb.eb_npmle(m, **kwargs)
    with pytest.raises(ValueError, match="Measurement"):
        eb.eb_npmle(m.estimates)
    with pytest.raises(ValueError, match="true_counts"):
        eb.oracle_bayes(m, true_counts=data.counts[:-1])
    with pytest.raises(ValueError, match="true_counts"):
        eb.oracle_bayes(m, true_counts=data.counts + 1)
    with pytest.raises(ValueError, match="true_counts"):
        eb.oracle_bayes(m, true_counts=-data.counts)
    with pytest.raises(ValueError, match="likelihood"):
        eb.oracle_bayes(m, true_counts=data.counts, likelihood="normal")
    with pytest.raises(ValueError, match="atoms"):
        eb.count_likelihood(m, [-1.0, 2.0])
    # a likelihood with a row no item has crashed the SQP (argmin of an empty sequence)
    lik = eb.count_likelihood(m, eb.count_grid(m))
    empty_row = lik.multiplicity.copy()
    empty_row[0] = 0.0
    for bad in (empty_row, empty_row[1:], np.full_like(empty_row, np.nan)):
        with pytest.raises(ValueError, match="multiplicity"):
            eb.npmle(dataclasses.replace(lik, multiplicity=bad))
    with pytest.raises(ValueError, match="lik"):
        eb.npmle(lik.matrix)
    with pytest.raises(ValueError, match="weights"):
        eb.tilted_posterior(eb.count_likelihood(m, [0.0, 5.0]), np.array([-1.0, 2.0]))
    est = eb.eb_npmle(m, uncertainty="plug-in", n_draws=10, rng=0)
    with pytest.raises(ValueError, match="stop"):
        est.uncertainty.sample(0, 11)
    with pytest.raises(ValueError, match="start"):
        est.uncertainty.sample(-1, 3)


@pytest.mark.parametrize("uncertainty", ["plug-in", "bootstrap"])
def test_same_seed_same_draws_whatever_the_chunks(uncertainty):
    _, m = _measurement(d=80, n=20_000, seed=14)
    kwargs = dict(uncertainty=uncertainty, n_draws=12, n_boot=3)
    a = eb.eb_npmle(m, rng=5, **kwargs)
    b = eb.eb_npmle(m, rng=np.random.default_rng(5), **kwargs)
    assert isinstance(a.uncertainty, Uncertainty)
    whole = a.uncertainty.sample(0, 12)
    np.testing.assert_array_equal(whole, b.uncertainty.sample(0, 12))
    pieces = np.vstack([b.uncertainty.sample(i, min(i + 5, 12)) for i in range(0, 12, 5)])
    np.testing.assert_array_equal(whole, pieces)
    np.testing.assert_array_equal(whole[7:9], a.uncertainty.sample(7, 9))
    assert not np.array_equal(whole, eb.eb_npmle(m, rng=6, **kwargs).uncertainty.sample(0, 12))
    # every draw is on the simplex
    assert whole.min() >= 0
    np.testing.assert_allclose(whole.sum(axis=1), 1, rtol=1e-12)
    # interval() goes through the same draws
    idx = np.arange(10)
    sums = whole[:, idx].sum(axis=1)
    mask = np.isin(np.arange(whole.shape[1]), idx)[None, :]
    np.testing.assert_allclose(draw_set_sums(a.uncertainty, mask)[0], sums)
    lo, hi = a.interval(idx, 0.8)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(sums, [0.1, 0.9])))


def test_bootstrap_widens_the_interval_of_a_lone_item():
    """The largest item's plug-in posterior is a point at its NPMLE atom.

    The bootstrap's is about as wide as the noise.
    """
    data, m = _measurement(d=300, n=200_000, seed=15)
    top = int(np.argmax(data.counts))
    plug = eb.eb_npmle(m, uncertainty="plug-in", n_draws=200, rng=0)
    boot = eb.eb_npmle(m, uncertainty="bootstrap", n_draws=200, n_boot=20, rng=0)
    lo, hi = plug.interval([top], 0.9)
    assert hi - lo < 1e-3 * m.sigma
    lo, hi = boot.interval([top], 0.9)
    sd = float(np.sqrt(m.variance(data.frequencies)[top]))
    assert 2 * sd < hi - lo < 5 * sd


# ---------------------------------------------------------------------------
# Slow: the papers' settings
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_oracle_bayes_reproduces_the_papers_zipf_bound():
    """paper/bayes.md: the tilted posterior under the true histogram, 2.68e-7 over 8 runs."""
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    mses = []
    for rep in range(8):
        m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(
            data.counts, np.random.default_rng([0, rep])
        )
        mses.append(metrics.mse(data.frequencies, eb.oracle_bayes(m, true_counts=data.counts)))
    assert np.mean(mses) == pytest.approx(2.68e-7, rel=0.01)


@pytest.mark.slow
def test_sqp_agrees_with_cvxpy_at_the_papers_setting():
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(data.counts, np.random.default_rng(2))
    lik = _problem(m)
    fast, ref = eb.npmle(lik), eb.npmle(lik, solver="cvxpy", tol=1e-10)
    assert fast.gap <= 1e-8 and ref.gap < 1e-6
    assert 0 <= fast.loglik - ref.loglik <= lik.n_items * ref.gap + 1e-6
    a = eb.tilted_posterior(lik, fast.weights, float(m.n)).item_means()
    b = eb.tilted_posterior(lik, ref.weights, float(m.n)).item_means()
    assert np.abs(a - b).max() < 1e-4 * m.sigma * m.n


@pytest.mark.slow
def test_wordfreq_fit_is_fast_and_near_the_oracle():
    pytest.importorskip("wordfreq")
    data = datasets.wordfreq_words()
    m = bayesldp.OUE(epsilon=1.0, domain_size=data.d).simulate(
        data.counts, np.random.default_rng(0)
    )
    est = eb.eb_npmle(m, rng=0)
    assert est.info["seconds"] < 5  # about 0.3 s on a quiet machine (benchmarks/eb_speed.py)
    oracle = eb.oracle_bayes(m, true_counts=data.counts)
    assert metrics.mse(data.frequencies, est) < 1.05 * metrics.mse(data.frequencies, oracle)


@pytest.mark.slow
def test_bootstrap_intervals_cover_on_the_papers_setting():
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    top = np.argsort(-data.counts)[:10]
    hits = []
    for rep in range(6):
        m = bayesldp.OUE(epsilon=1.0, domain_size=1024).simulate(
            data.counts, np.random.default_rng([7, rep])
        )
        draws = eb.eb_npmle(m, n_draws=400, rng=rep).uncertainty.sample(0, 400)
        masks = metrics.random_subsets(1024, 10, 20, np.random.default_rng(rep))
        for mask in masks:
            lo, hi = np.quantile(draws[:, mask].sum(axis=1), [0.05, 0.95])
            hits.append(lo <= data.frequencies[mask].sum() <= hi)
        for i in top:
            lo, hi = np.quantile(draws[:, i], [0.05, 0.95])
            hits.append(lo <= data.frequencies[i] <= hi)
    assert 0.8 <= np.mean(hits) <= 0.97
