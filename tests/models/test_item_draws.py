"""Posterior draws from the item posteriors (models/_item_draws.py).

Against the exact item posteriors (scipy sums over every count), and the bayes-power
intervals through the public API.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesldp

pytest.importorskip("pymc")

from bayesldp.models import _counts, _item_draws


def exact_cdf(y, sigma_c, n, log_prior):
    """CDF over 0..n of the count's posterior (every count summed with scipy)."""
    x = np.arange(n + 1)
    lw = log_prior + stats.norm.logpdf(y, x, sigma_c)
    return np.cumsum(np.exp(lw - logsumexp(lw)))


def lomax_log_prior(n, s, c):
    lp = -s * np.log1p(np.arange(n + 1) / c)
    return lp - logsumexp(lp)


def check_cdf(draws, cdf, label):
    """Check the draws' CDF at the exact quantiles (and at 0, 1) against the exact CDF."""
    size = draws.size
    ks = {0, 1, *(int(np.searchsorted(cdf, p)) for p in (0.05, 0.25, 0.5, 0.75, 0.95))}
    for k in sorted(ks):
        f = cdf[k]
        got = np.mean(draws <= k + 0.5)  # counts in wide cells are drawn continuously
        tol = 4 * math.sqrt(max(f * (1 - f), 1e-4) / size) + 0.004
        assert abs(got - f) < tol, (label, k, got, f)


# (n, sigma_c, s, c, estimates): steep priors put point masses at 0 and 1
TABLE_CASES = [
    (20_000, 300.0, 2.5, 0.05, (-400.0, 0.0, 700.0, 1500.0, 9000.0)),
    (20_000, 300.0, 1.5, 10.0, (-400.0, 150.0, 700.0, 1500.0)),
    (5_000, 40.0, 3.0, 500.0, (-50.0, 20.0, 160.0, 3000.0)),
]


@pytest.mark.parametrize(("n", "sigma_c", "s", "c", "ys"), TABLE_CASES)
def test_item_draws_match_exact_item_posterior(n, sigma_c, s, c, ys):
    grid = _counts.CountGrid.build(n, sigma_c)
    ys = np.asarray(ys)
    table = _item_draws.ItemPosteriorTable(grid, _counts.log_prior_mass(grid, s, c), sigma_c, ys)
    gen = np.random.default_rng(1)
    draws = np.array([table.draw(ys, gen) for _ in range(8000)])
    log_prior = lomax_log_prior(n, s, c)
    for j, y in enumerate(ys):
        check_cdf(draws[:, j], exact_cdf(y, sigma_c, n, log_prior), (s, c, y))


def sample_counts(w1, mean, var, size, rng):
    """Draw counts from moment-matched Gamma laws, zero with probability ``1 - w1``."""
    var = np.maximum(var, 1e-12 * mean**2 + 1e-300)
    shape, scale = mean**2 / var, var / mean
    x = rng.gamma(shape, scale, size=(size, mean.size))
    return np.where(rng.random((size, mean.size)) < w1, x, 0.0)


def test_moment_matched_gamma_fails_the_same_check():
    """The moment-matched Gamma draws used before misplace the point mass at 0."""
    n, sigma_c, s, c, y = 20_000, 300.0, 1.5, 10.0, 150.0
    x = np.arange(n + 1)
    lw = lomax_log_prior(n, s, c) + stats.norm.logpdf(y, x, sigma_c)
    w = np.exp(lw - logsumexp(lw))
    mean, var = w @ x, w @ (x - w @ x) ** 2
    gamma = sample_counts(
        np.ones(1), np.array([mean]), np.array([var]), 8000, np.random.default_rng(0)
    )
    with pytest.raises(AssertionError):  # P(0) = 0.054 exactly, 0.136 under the Gamma
        check_cdf(gamma[:, 0], np.cumsum(w), "gamma")


def test_bayes_power_item_intervals_match_exact_quantiles(rng):
    """With s pinned (a tiny prior range), an item's interval is its exact posterior's."""
    d, n, eps = 60, 20_000, 1.0
    counts = rng.multinomial(n, np.r_[np.full(50, 0.002), np.full(10, 0.09)])
    m = bayesldp.OUE(eps, d).simulate(counts, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = bayesldp.postprocess(
            m, "bayes-power", s_bounds=(1.5, 1.5005), rng=3, draws=100, tune=100,
            exponent_points=1, n_draws=4000,
        )  # fmt: skip
    assert est.draws is None
    y, sigma_c = m.estimates * n, m.sigma * n
    x = np.arange(1, n + 1)
    log_prior = np.r_[-np.inf, -1.5 * np.log(x)]
    log_prior -= logsumexp(log_prior)
    tol = 4 * math.sqrt(0.05 * 0.95 / 4000) + 0.004

    def below(cdf, b):  # P(X < b)
        k = math.ceil(b - 1e-9) - 1
        return cdf[min(k, n)] if k >= 0 else 0.0

    def at(cdf, b):  # P(X <= b)
        return cdf[min(math.floor(b + 1e-9), n)]

    for v in (0, 3, 17, 55):
        cdf = exact_cdf(y[v], sigma_c, n, log_prior)
        lo, hi = (b * n for b in est.interval([v], 0.9, method="posterior"))
        # lo is a 5% quantile and hi a 95% quantile of the exact posterior, within MC error
        assert below(cdf, lo) <= 0.05 + tol and at(cdf, lo) >= 0.05 - tol, (v, lo)
        assert below(cdf, hi) <= 0.95 + tol and at(cdf, hi) >= 0.95 - tol, (v, hi)


def test_uncertainty_rows_reproducible_in_any_chunk():
    n, sigma_c = 10_000, 200.0
    grid = _counts.CountGrid.build(n, sigma_c)
    y = np.linspace(-300, 5000, 50)
    table = _item_draws.ItemPosteriorTable(
        grid, _counts.log_prior_mass(grid, 1.4, 3.0), sigma_c, y + 7.0
    )
    unc = _item_draws.ItemPosteriorDraws(
        y, n, (_item_draws.PointTables(table, 7.0),), seed=5, n_draws=30, total=True
    )
    rows = unc.sample(0, 30)
    np.testing.assert_array_equal(rows[11:19], unc.sample(11, 19))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)
    assert isinstance(unc, bayesldp.estimate.Uncertainty)
    with pytest.raises(ValueError, match="stop must be <= 30"):
        unc.sample(5, 31)


def test_cached_rows_equal_rows_generated_on_demand(monkeypatch):
    """Below ROW_CACHE_MAX_BYTES every row is generated once and kept; the values are the same."""
    n, sigma_c = 10_000, 200.0
    grid = _counts.CountGrid.build(n, sigma_c)
    y = np.linspace(-300, 5000, 50)
    table = _item_draws.ItemPosteriorTable(
        grid, _counts.log_prior_mass(grid, 1.4, 3.0), sigma_c, y + 7.0
    )
    point = (_item_draws.PointTables(table, 7.0),)
    cached = _item_draws.ItemPosteriorDraws(y, n, point, seed=5, n_draws=30, total=True)
    first = cached.sample(3, 9)
    with pytest.raises(ValueError, match="read-only"):
        first[:] = -1.0  # a view of the cache: callers cannot change it
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    lazy = _item_draws.ItemPosteriorDraws(y, n, point, seed=5, n_draws=30, total=True)
    np.testing.assert_array_equal(cached.sample(0, 30), lazy.sample(0, 30))
    assert not lazy.sample(3, 9).flags.writeable  # read-only uncached too
    assert cached.nbytes - lazy.nbytes == 30 * 50 * 8  # every row held by the cached one


@pytest.mark.slow  # a fit in a fresh process (~45 s on 2 cores); the cache is tested above
def test_interval_speed_script_tiny(tmp_path):
    """benchmarks/interval_speed.py runs end to end; cached and uncached intervals agree."""
    import subprocess
    import sys

    import pandas as pd

    pytest.importorskip("pymc")
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, str(root / "benchmarks" / "interval_speed.py"), "--d", "64",
           "--queries", "2", "--methods", "bayes-consistent", "eb-npmle",
           "--out", str(tmp_path)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, cwd=root, timeout=600)
    table = pd.read_csv(tmp_path / "interval_speed.csv")
    assert list(table["method"]) == ["bayes-consistent", "eb-npmle"]
    assert table["same_intervals"].astype(bool).all()
    assert {"set_seconds", "set_seconds_uncached"} <= set(table.columns)
