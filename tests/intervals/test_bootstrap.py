"""The parametric bootstrap: simulation, re-runs through the row functions, intervals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import intervals
from bayesldp.intervals._bootstrap import bootstrap_counts, fitted_counts, rerun_rows
from bayesldp.methods.registry import get_method, method_names, postprocess
from tests.intervals.test_variance import fixed_users


def test_row_by_row_fallback_equals_postprocess(rng):
    """Ibu with iteration options re-runs its iteration one replicate at a time."""
    o = bayesldp.OUE(2.0, 30)
    ms = [o.simulate(fixed_users(30, 5000), rng) for _ in range(3)]
    counts = np.stack([m.support_counts for m in ms])
    out, info = rerun_rows(get_method("ibu"), ms[0], counts, options={"tol": 1e-9})
    assert not info["vectorised"]
    for row, m in zip(out, ms, strict=True):
        np.testing.assert_allclose(row, postprocess(m, "ibu", tol=1e-9).frequencies)


@pytest.mark.filterwarnings("ignore::bayesldp.errors.ConvergenceWarning")  # ibu's max_iter
def test_methods_with_rows_never_loop_over_replicates(monkeypatch):
    """B = 200, d = 1024: no method with a row function re-runs one replicate at a time."""
    o = bayesldp.OUE(1.0, 1024)
    m = o.simulate(fixed_users(1024, 10**6), np.random.default_rng(0))
    names = [n for n in method_names() if get_method(n).rows is not None]
    ests = {name: postprocess(m, name) for name in names if not name.startswith("power")}

    def refuse(*args, **kwargs):
        raise AssertionError("re-ran a method one replicate at a time")

    monkeypatch.setattr("bayesldp.intervals._bootstrap.postprocess", refuse)
    for est in ests.values():
        boot = est.bootstrap(200, rng=1)
        assert boot.sample(0, 200).shape == (200, 1024)
        assert boot.info["vectorised"] is True


def test_warnings_of_the_rows_are_summarised_once():
    o = bayesldp.OUE(1.0, 4)
    m = o.measurement(np.array([260, 250, 240, 255]), 1000)  # every estimate below 0
    counts = np.stack([m.support_counts, [400, 300, 200, 100], m.support_counts])
    with warnings.catch_warnings(record=True) as caught:  # vectorised: norm-mul's rows
        warnings.simplefilter("always")
        _, info = rerun_rows(get_method("norm-mul"), m, counts)
    assert info == {"vectorised": True, "warnings": 2} and len(caught) == 1
    assert "2 warning(s) while re-running 'norm-mul' on 3" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = postprocess(m, "ibu", max_iter=3)
    with pytest.warns(RuntimeWarning, match=r"5 warning\(s\) while re-running 'ibu'"):
        est.bootstrap(5, rng=0).sample(0, 5)  # one row at a time


def test_grr_bootstrap_counts_are_exact(rng):
    """The mixture form of GRR has the exact mean and variance of fixed-user GRR counts."""
    d, n = 5, 400
    o = bayesldp.GRR(2.0, d)
    x = fixed_users(d, n)
    m = o.simulate(x, rng)
    draws = np.stack([bootstrap_counts(m, x, rng) for _ in range(20000)])
    assert np.all(draws.sum(axis=1) == n)
    mean = x * m.p + (n - x) * m.q
    var = x * m.p * (1 - m.p) + (n - x) * m.q * (1 - m.q)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / 20000))
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.05)


def test_fitted_counts_sum_to_n():
    x = fitted_counts(np.array([0.5, 0.3, -0.1, 0.4]), 1001)
    assert x.sum() == 1001 and np.all(x >= 0) and x[2] == 0


@pytest.mark.filterwarnings("ignore:.*undercover:RuntimeWarning")
def test_bootstrap_is_reproducible_and_chunk_free(monkeypatch):
    o = bayesldp.OUE(1.0, 64)
    m = o.simulate(fixed_users(64, 10**5), np.random.default_rng(0))
    est = postprocess(m, "norm-sub")
    same = postprocess(m, "norm-sub")
    a = est.interval(np.arange(10), method="bootstrap")
    b = same.interval(np.arange(10), method="bootstrap")
    assert tuple(a) == tuple(b)
    assert est.bootstrap() is est.bootstrap()
    other = est.bootstrap(200, rng=5).sample(0, 200)
    assert not np.array_equal(other, est.bootstrap().sample(0, 200))
    # Replicate i is the same whatever chunk it is asked in (regenerated, not cached).
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    fresh = intervals.ParametricBootstrap(est, 50, rng=3)
    np.testing.assert_array_equal(fresh.sample(5, 9), fresh.sample(0, 20)[5:9])


def test_bootstrap_reruns_with_the_recorded_options(rng):
    m = bayesldp.OUE(1.0, 100).simulate(fixed_users(100, 10**5), rng)
    est = postprocess(m, "base-cut", alpha=0.5)
    assert est.info["options"] == {"alpha": 0.5} and est.info["backend"] == "numpy"
    boot = est.bootstrap(20, rng=0)
    counts = boot.counts(0, 20)
    expected = [postprocess(bayesldp.OUE(1.0, 100).measurement(c, m.n), "base-cut", alpha=0.5)
                for c in counts]  # fmt: skip
    np.testing.assert_allclose(boot.sample(0, 20), [e.frequencies for e in expected])


def test_basic_and_percentile_intervals_from_replicates(rng):
    m = bayesldp.OUE(1.0, 50).simulate(fixed_users(50, 10**5), rng)
    est = postprocess(m, "norm-sub")
    idx = np.arange(5)
    sums = est.bootstrap().sample(0, 200)[:, idx].sum(axis=1)
    theta = est.bootstrap().fitted[idx].sum()
    answer = est.subset(idx)
    basic = est.interval(idx, 0.9, method="bootstrap")
    q = np.quantile(sums - theta, [0.05, 0.95])
    assert basic == pytest.approx((answer - q[1], answer - q[0]))
    with pytest.warns(RuntimeWarning, match="bias"):
        perc = est.interval(idx, 0.9, method="percentile")
    assert perc == pytest.approx(tuple(np.quantile(sums, [0.05, 0.95])))
