"""Post-processing methods against brute-force references over a catalogue of cases."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm as normal

import bayesldp
from bayesldp import calibrate as P
from bayesldp import methods as M
from bayesldp.registry import method_names
from tests.helpers import toy_measurement, zipf_frequencies

# ---------------------------------------------------------------------------
# The catalogue. Each case is a vector of raw estimates f~ (exactly representable by
# the toy oracle p = 1/2, q = 1/4, n = 4000) and the reason it is interesting.
# ---------------------------------------------------------------------------
CATALOGUE = {
    # Every estimate negative: norm-sub must lift them all; norm-mul has nothing to scale.
    "all-negative": [-0.2, -0.1, -0.05, -0.3, -0.001],
    # Already a probability vector: consistent methods should (mostly) leave it alone.
    "already-consistent": [0.5, 0.25, 0.125, 0.125, 0.0],
    # Ties, including ties at the norm-cut boundary (0.3 + 0.3 + 0.3 + 0.3 > 1).
    "ties": [0.3, 0.3, 0.3, 0.3, -0.1, -0.1],
    # One estimate far above 1: norm-cut keeps nothing, norm-hyb keeps no item.
    "single-huge": [2.5, 0.01, -0.02, 0.0, 0.03],
    # A typical noisy vector: some negatives, sum above 1.
    "noisy": [0.45, 0.3, 0.12, 0.08, -0.04, 0.06, -0.07, 0.11],
    # Sum of positives below 1 (norm-cut only clips).
    "small-positives": [0.2, 0.1, -0.3, 0.05, 0.0],
    # Domain of one item.
    "d=1": [0.7],
}

# The promises each method declares in the registry, which these tests hold it to.
NUMPY_METHODS = method_names(bayesian=False, needs_truth=False)
NONNEGATIVE = set(method_names(nonnegative=True))
SUM_TO_ONE = set(method_names(sums_to_one=True))


def _run(m, method, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # norm-mul fallback, ibu steps
        return bayesldp.postprocess(m, method, **options)


@pytest.mark.parametrize("case", CATALOGUE)
@pytest.mark.parametrize("method", NUMPY_METHODS)
def test_catalogue_promises(case, method):
    m = toy_measurement(CATALOGUE[case])
    est = _run(m, method)
    f = est.frequencies
    assert f.shape == (m.domain_size,)
    assert np.all(np.isfinite(f))
    if method in NONNEGATIVE:
        assert f.min() >= 0, f
    if method in SUM_TO_ONE:
        assert abs(f.sum() - 1) <= 1e-9, f.sum()
    if method == "norm-cut":
        assert f.sum() <= 1 + 1e-12 or np.maximum(m.estimates, 0).sum() <= 1


def test_large_domain_all_methods(rng):
    """At d = 1e5 every method runs and keeps its promises."""
    d, n = 100_000, 2_000_000
    counts = rng.multinomial(n, zipf_frequencies(d, 1.1))
    m = bayesldp.OUE(1.0, d).simulate(counts, rng)
    for method in NUMPY_METHODS:
        options = {"max_iter": 200} if method == "ibu" else {}
        f = _run(m, method, **options).frequencies
        if method in NONNEGATIVE:
            assert f.min() >= 0, method
        if method in SUM_TO_ONE:
            assert abs(f.sum() - 1) <= 1e-9, method


# ---------------------------------------------------------------------------
# Norm-Sub / CLS: the Euclidean projection onto the simplex.
# ---------------------------------------------------------------------------


def brute_force_projection(x: np.ndarray) -> np.ndarray:
    """Projection by enumerating every support set and checking the KKT conditions."""
    d = x.size
    for size in range(1, d + 1):
        for support in itertools.combinations(range(d), size):
            s = list(support)
            delta = (1 - x[s].sum()) / size
            inside = x[s] + delta
            outside = np.delete(x, s) + delta
            if inside.min() > 0 and (outside.size == 0 or outside.max() <= 1e-15):
                f = np.zeros(d)
                f[s] = inside
                return f
    raise AssertionError("no KKT point found")


@pytest.mark.parametrize("case", [c for c in CATALOGUE if c != "d=1"])
def test_norm_sub_is_projection_brute_force(case):
    m = toy_measurement(CATALOGUE[case])
    ref = brute_force_projection(m.estimates)
    np.testing.assert_allclose(_run(m, "norm-sub").frequencies, ref, atol=1e-12)
    np.testing.assert_allclose(_run(m, "cls").frequencies, ref, atol=1e-12)


def test_norm_sub_equals_sort_projection_random(rng):
    for d in (2, 10, 1000, 50_000):
        x = rng.normal(0, 0.05, d) + rng.dirichlet(np.full(d, 0.3))
        f1, delta = M.shift_to_total(x, 1.0)
        f2 = M.project_simplex(x, 1.0)
        np.testing.assert_allclose(f1, f2, atol=1e-12)
        np.testing.assert_allclose(f1, np.maximum(x + delta, 0), atol=0)


def test_norm_sub_is_closest_point_on_simplex(rng):
    """No random point of the simplex is closer to f~ than the projection."""
    m = toy_measurement(CATALOGUE["noisy"])
    f = _run(m, "norm-sub").frequencies
    best = np.sum((f - m.estimates) ** 2)
    others = rng.dirichlet(np.ones(m.domain_size), size=20_000)
    assert np.all(np.sum((others - m.estimates) ** 2, axis=1) >= best - 1e-15)


def test_shift_to_total_zero_and_errors():
    f, _ = M.shift_to_total(np.array([0.3, -0.2]), 0.0)
    assert np.all(f == 0)
    with pytest.raises(ValueError, match="total"):
        M.shift_to_total(np.array([0.3]), -1.0)


# ---------------------------------------------------------------------------
# Baselines and thresholds
# ---------------------------------------------------------------------------


def test_base_and_base_pos_and_norm():
    m = toy_measurement(CATALOGUE["noisy"])
    np.testing.assert_array_equal(_run(m, "base").frequencies, m.estimates)
    np.testing.assert_array_equal(_run(m, "base-pos").frequencies, np.maximum(m.estimates, 0))
    f = _run(m, "norm").frequencies
    shift = f - m.estimates
    np.testing.assert_allclose(shift, shift[0], atol=1e-15)  # the same delta everywhere
    assert abs(f.sum() - 1) < 1e-12


def test_post_pos_query_rule():
    m = toy_measurement([0.4, -0.3, 0.2, -0.1])
    est = _run(m, "post-pos")
    np.testing.assert_allclose(est.frequencies, [0.4, 0.0, 0.2, 0.0], atol=1e-15)  # base-pos
    assert est.subset([0, 1]) == pytest.approx(0.1)  # raw sum, positive: unchanged
    assert est.subset([1, 3]) == 0.0  # raw sum -0.4 clipped
    assert _run(m, "base-pos").subset([0, 1]) == pytest.approx(0.4)


@pytest.mark.parametrize("alpha", [2.0, 0.05])
def test_base_cut_threshold(alpha, rng):
    d = 1024
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    est = _run(m, "base-cut", alpha=alpha)
    t = normal.ppf(1 - alpha / d) * math.sqrt(m.q * (1 - m.q) / (m.n * (m.p - m.q) ** 2))
    assert est.info["threshold"] == pytest.approx(t, rel=1e-12)
    keep = m.estimates >= t
    np.testing.assert_array_equal(est.frequencies[keep], m.estimates[keep])
    assert np.all(est.frequencies[~keep] == 0)


def test_threshold_clamped_when_alpha_large():
    m = toy_measurement([0.6, 0.5, -0.1])
    assert M.threshold(m, 2.0) == 0.0  # 1 - 2/3 < 1/2
    with pytest.raises(ValueError, match="alpha"):
        M.threshold(m, -1.0)


# ---------------------------------------------------------------------------
# Norm-Mul, Norm-Cut and Norm-Hyb edge cases
# ---------------------------------------------------------------------------


def test_norm_mul_scales_positive_part():
    m = toy_measurement(CATALOGUE["noisy"])
    f = _run(m, "norm-mul").frequencies
    pos = np.maximum(m.estimates, 0)
    np.testing.assert_allclose(f, pos / pos.sum(), rtol=1e-14)


def test_norm_mul_all_negative_warns_uniform():
    m = toy_measurement(CATALOGUE["all-negative"])
    with pytest.warns(RuntimeWarning, match="uniform"):
        f = bayesldp.postprocess(m, "norm-mul").frequencies
    np.testing.assert_allclose(f, 1 / m.domain_size)


def test_norm_cut_sum_below_one_only_clips():
    m = toy_measurement(CATALOGUE["small-positives"])
    np.testing.assert_array_equal(_run(m, "norm-cut").frequencies, np.maximum(m.estimates, 0))


def test_norm_cut_smallest_theta():
    m = toy_measurement([0.5, 0.3, 0.15, 0.1, 0.05, -0.1])
    est = _run(m, "norm-cut")
    # Cumulative sums 0.5, 0.8, 0.95, 1.05: theta = 0.15, the smallest keeping sum <= 1.
    np.testing.assert_allclose(est.frequencies, [0.5, 0.3, 0.15, 0, 0, 0])
    assert est.info["theta"] == pytest.approx(0.15)


def test_norm_cut_ties_dropped_together():
    m = toy_measurement(CATALOGUE["ties"])  # four 0.3s: three would fit, not all four
    f = _run(m, "norm-cut").frequencies
    assert np.all(f == 0)  # theta must exceed 0.3: no tied item is kept alone


def test_norm_cut_single_huge():
    f = _run(toy_measurement(CATALOGUE["single-huge"]), "norm-cut").frequencies
    assert np.all(f == 0)


def test_norm_hyb_keeps_large_estimates(rng):
    d = 1024
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**6, zipf_frequencies(d)), rng)
    est = _run(m, "norm-hyb")
    t = est.info["threshold"]
    above = m.estimates > t
    assert above.sum() == est.info["kept"] > 0
    np.testing.assert_array_equal(est.frequencies[above], m.estimates[above])
    rest_total = 1 - m.estimates[above].sum()
    np.testing.assert_allclose(
        est.frequencies[~above], M.project_simplex(m.estimates[~above], rest_total), atol=1e-12
    )


def test_norm_hyb_kept_sum_above_one():
    # T = 0 here (alpha/d >= 1/2 with d = 4 is not the case: 2/4 = 1/2 -> clamped to 0).
    m = toy_measurement([0.6, 0.5, 0.2, -0.1])
    est = _run(m, "norm-hyb")
    # 0.6 + 0.5 > 1: keep only the top one (sum 0.6 < 1), Norm-Sub the rest to 0.4.
    assert est.frequencies[0] == pytest.approx(0.6)
    assert est.info["kept"] == 1
    np.testing.assert_allclose(
        est.frequencies[1:], M.project_simplex(np.array([0.5, 0.2, -0.1]), 0.4), atol=1e-12
    )


def test_norm_hyb_everything_kept_falls_back():
    est = _run(toy_measurement([0.7]), "norm-hyb")
    assert est.info.get("fallback") == "norm-sub"
    assert est.frequencies[0] == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# MLE-Apx: the long paper's Eq. (14), transcribed independently
# ---------------------------------------------------------------------------


def mle_apx_reference(c, n, p, q):
    """Eq. (14) of the long paper, item by item, exactly as printed."""
    d = len(c)
    d1 = set(range(d))
    while True:
        x = (sum(c[v] / n for v in d1) - len(d1) * q - (p - q)) / (
            (p - q) * (1 - p - q) + len(d1) * q * (1 - q)
        )
        f = [0.0] * d
        for v in d1:
            f[v] = (c[v] / n - q - q * (1 - q) * x) / (p - q + (p * (1 - p) - q * (1 - q)) * x)
        negative = {v for v in d1 if f[v] < 0}
        if not negative:
            return np.array(f)
        d1 -= negative


@pytest.mark.parametrize("oracle", ["GRR", "OUE", "SUE"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_mle_apx_follows_eq14(oracle, eps, rng):
    d = 64
    m = bayesldp.make_oracle(oracle, eps, d).simulate(
        rng.multinomial(20_000, zipf_frequencies(d)), rng
    )
    ref = mle_apx_reference(m.support_counts.tolist(), m.n, m.p, m.q)
    np.testing.assert_allclose(_run(m, "mle-apx").frequencies, ref, atol=1e-12)


def test_mle_apx_is_stationary_point_of_eq13(rng):
    """On its support, the gradient of Eq. (13) is constant (a KKT point)."""
    d = 128
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    f = _run(m, "mle-apx").frequencies
    a, p, q = m.support_counts / m.n, m.p, m.q
    e, g = q * (1 - q), (p - q) * (1 - p - q)
    r = a - q - (p - q) * f
    grad = (-2 * (p - q) * r * (e + g * f) - g * r**2) / (e + g * f) ** 2
    support = f > 0
    assert np.ptp(grad[support]) < 1e-9 * np.abs(grad[support]).max()
    assert np.all(grad[~support] >= grad[support].mean() - 1e-9)


# ---------------------------------------------------------------------------
# Exact MLE and IBU
# ---------------------------------------------------------------------------


def _loglik(m, f, kind):
    pi = m.q + (m.p - m.q) * f
    c = m.support_counts
    ll = np.sum(c * np.log(pi))
    if kind == "binomial":
        ll += np.sum((m.n - c) * np.log1p(-pi))
    return ll


@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_mle_beats_random_feasible_points(oracle, rng):
    d = 8
    m = bayesldp.make_oracle(oracle, 1.0, d).simulate(
        rng.multinomial(5000, zipf_frequencies(d)), rng
    )
    est = _run(m, "mle")
    kind = est.info["likelihood"]
    assert kind == ("multinomial" if oracle == "GRR" else "binomial")
    best = _loglik(m, est.frequencies, kind)
    for f in rng.dirichlet(np.full(d, 0.5), size=5000):
        assert _loglik(m, f, kind) <= best + 1e-9
    # and small moves along the simplex do not improve it
    for _ in range(200):
        i, j = rng.choice(d, 2, replace=False)
        step = min(1e-4, est.frequencies[j])
        g = est.frequencies.copy()
        g[i] += step
        g[j] -= step
        assert _loglik(m, g, kind) <= best + 1e-9


@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_ibu_converges_to_mle(oracle, rng):
    d = 32
    m = bayesldp.make_oracle(oracle, 2.0, d).simulate(
        rng.multinomial(50_000, zipf_frequencies(d)), rng
    )
    a = _run(m, "ibu", max_iter=50_000, tol=1e-12)
    b = _run(m, "mle")
    kind = b.info["likelihood"]
    assert _loglik(m, a.frequencies, kind) == pytest.approx(
        _loglik(m, b.frequencies, kind), abs=1e-4
    )
    np.testing.assert_allclose(a.frequencies, b.frequencies, atol=2e-3)


def test_ibu_plain_em_is_monotone(rng):
    d = 16
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10_000, zipf_frequencies(d)), rng)
    lls = [
        _loglik(m, _run(m, "ibu", max_iter=k, accelerate=False).frequencies, "binomial")
        for k in (1, 2, 5, 20, 100)
    ]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(lls))


def test_ibu_warns_when_not_converged(rng):
    m = toy_measurement(CATALOGUE["noisy"])
    with pytest.warns(RuntimeWarning, match="max_iter"):
        bayesldp.postprocess(m, "ibu", max_iter=3)


def test_multinomial_likelihood_needs_grr():
    with pytest.raises(ValueError, match="multinomial"):
        # p + (d - 1) q = 1/2 + 3/4 != 1: these counts cannot be multinomial.
        m = toy_measurement([0.5, 0.5, 0.0, 0.0])
        bayesldp.postprocess(m, "mle", likelihood="multinomial")


def test_multinomial_likelihood_needs_counts_summing_to_n():
    # GRR's p and q (p + (d-1) q = 1) on an oracle the library does not know, so the
    # Measurement itself does not insist on the sum: 60 + 30 + 20 = 110 reports from
    # 100 users cannot be one multinomial draw, and mle must not treat them as one.
    p = float(np.e / (np.e + 2))
    q = (1 - p) / 2
    m = bayesldp.Measurement.from_support_counts([60, 30, 20], 100, p, q, oracle="custom")
    with pytest.raises(ValueError, match="sum to 110, n=100"):
        bayesldp.postprocess(m, "mle", likelihood="multinomial")
    # the binomial marginals still apply
    binomial = bayesldp.postprocess(m, "mle", likelihood="binomial")
    assert binomial.frequencies.sum() == pytest.approx(1)
    # and the PyMC layer asks the same function
    from bayesldp.models.likelihood import resolve_kind

    with pytest.raises(ValueError, match="sum to 110, n=100"):
        resolve_kind(m, "multinomial")


# ---------------------------------------------------------------------------
# Power and Power-NS
# ---------------------------------------------------------------------------


def test_power_fast_equals_direct_sum(rng):
    """The interpolated posterior mean equals a direct sum over every count 1..n."""
    d, n = 3000, 20_000
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d, 1.2)), rng)
    est = _run(m, "power", s=1.3)
    y = m.estimates * n
    sigma_c = m.sigma * n
    idx = rng.choice(d, 60, replace=False)
    ref = P.posterior_mean_direct(y[idx], 1.3, sigma_c, n, full=True) / n
    np.testing.assert_allclose(est.frequencies[idx], ref, rtol=1e-7, atol=1e-12)


def test_power_fit_mean_matches_observed_mean(rng):
    d, n = 1024, 10**6
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d)), rng)
    est = _run(m, "power")
    assert P.prior_mean(est.info["s"], n) == pytest.approx(m.estimates.mean() * n, rel=1e-8)


def test_power_sum_matches_direct():
    for a in (-0.5, 0.0, 0.5, 1.0, 1.5, 3.0):
        for n in (10, 5000, 123_457):
            direct = np.sum(np.arange(1, n + 1, dtype=float) ** (-a))
            assert P.power_sum(a, n) == pytest.approx(direct, rel=1e-12)


def test_power_ns_is_norm_sub_of_power(rng):
    d = 256
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    pw = _run(m, "power").frequencies
    np.testing.assert_allclose(_run(m, "power-ns").frequencies, M.project_simplex(pw), atol=1e-12)


def test_power_mle_fit_close_to_truth(rng):
    """On data drawn from the power-law prior itself, the MLE fit recovers s."""
    d, n, s_true = 4000, 10**6, 1.8
    x = np.arange(1, n + 1, dtype=float)
    w = x ** (-s_true)
    counts = rng.choice(n, size=d, p=w / w.sum()) + 1
    n_total = int(counts.sum())
    oracle = bayesldp.OUE(2.0, d)
    m = oracle.measurement(
        rng.binomial(counts, oracle.p) + rng.binomial(n_total - counts, oracle.q), n_total
    )
    s_hat = P.fit_exponent_mle(m.estimates * n_total, m.sigma * n_total, n_total)
    assert abs(s_hat - s_true) < 0.1


# ---------------------------------------------------------------------------
# Unbiasedness of Base and Norm over repeated simulation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["base", "norm"])
@pytest.mark.parametrize("oracle", ["GRR", "OUE", "SUE"])
def test_unbiased_over_repetitions(method, oracle, rng):
    d, n, reps = 16, 5000, 3000
    counts = rng.multinomial(n, zipf_frequencies(d))
    o = bayesldp.make_oracle(oracle, 1.0, d)
    est = np.array([_run(o.simulate(counts, rng), method).frequencies for _ in range(reps)])
    f = counts / n
    se = np.sqrt(o.variance(f) / n / reps)
    z = (est.mean(axis=0) - f) / se
    assert np.abs(z).max() < 4.5, z
