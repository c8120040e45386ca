"""Heavy hitters with error control and top-k probabilities."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

import bayesldp
from bayesldp import selection
from bayesldp.estimate import Estimate, StoredDraws
from bayesldp.methods.registry import postprocess
from tests.helpers import toy_measurement, zipf_frequencies


def holm_direct(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's procedure as written in textbooks: step down, stop at the first failure."""
    m = p.size
    order = sorted(range(m), key=lambda i: (p[i], i))
    rejected = np.zeros(m, dtype=bool)
    for step, i in enumerate(order):
        if p[i] > alpha / (m - step):
            break
        rejected[i] = True
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_against_direct(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.random(m) ** 3  # many small p-values, so there is something to reject
    if seed % 3 == 0:
        p = np.round(p, 2)  # ties
    alpha = float(rng.choice([0.01, 0.05, 0.2]))
    rejected, adjusted = selection.holm(p, alpha)
    np.testing.assert_array_equal(rejected, holm_direct(p, alpha))
    np.testing.assert_array_equal(rejected, adjusted <= alpha)


def test_holm_step_down_stop_and_ties():
    # 0.001 <= 0.05/4 and 0.01 <= 0.05/3, but 0.03 > 0.05/2 stops the procedure, so 0.04
    # is kept although it is below 0.05/1.
    rejected, _ = selection.holm(np.array([0.01, 0.03, 0.001, 0.04]), 0.05)
    np.testing.assert_array_equal(rejected, [True, False, True, False])
    # Ties are rejected together or not at all.
    rejected, _ = selection.holm(np.array([0.02, 0.02, 0.9]), 0.05)
    np.testing.assert_array_equal(rejected, [False, False, False])
    rejected, _ = selection.holm(np.array([0.01, 0.01, 0.9]), 0.05)
    np.testing.assert_array_equal(rejected, [True, True, False])


def test_item_p_values_formula():
    m = toy_measurement([0.5, 0.1, 0.02, -0.05])
    p, sd = selection.item_p_values(m, 0.05)
    var = (m.q * (1 - m.q) + 0.05 * (m.p - m.q) * (1 - m.p - m.q)) / (m.n * (m.p - m.q) ** 2)
    assert sd == pytest.approx(np.sqrt(var))
    np.testing.assert_allclose(p, norm.cdf(-(m.estimates - 0.05) / sd), rtol=1e-12)


def test_item_p_values_use_the_largest_null_variance():
    """HR's variance falls with f (p + q > 1): the null's largest variance is at f = 0."""
    m = bayesldp.HR(2.0, 7).measurement(np.full(7, 500), 1000)
    _, sd = selection.item_p_values(m, 0.3)
    assert sd**2 == pytest.approx(m.variance(np.array([0.0]))[0])


def test_heavy_hitters_frequentist(rng):
    f = zipf_frequencies(200)
    x = np.floor(f * 10**6).astype(np.int64)
    m = bayesldp.OUE(2.0, 200).simulate(x, rng)
    hh = postprocess(m, "norm-sub").heavy_hitters(0.01, alpha=0.05)
    assert hh.rule == "holm"
    # The same items from the p-values directly, strongest first.
    p, _ = selection.item_p_values(m, 0.01)
    expected = np.flatnonzero(holm_direct(p, 0.05))
    assert set(hh.indices) == set(expected)
    assert np.all(np.diff(hh.p_values[hh.indices]) >= 0)
    # The raw estimates decide, whatever the method.
    assert set(postprocess(m, "power").heavy_hitters(0.01).indices) == set(expected)
    assert set(hh.indices) <= set(np.flatnonzero(x / x.sum() > 0.005))


def test_heavy_hitters_posterior(rng):
    m = toy_measurement([0.5, 0.3, 0.15, 0.05])
    draws = rng.dirichlet([500, 300, 150, 50], size=2000)
    est = Estimate(draws.mean(axis=0), "test", m, draws=draws)
    hh = est.heavy_hitters(0.2, alpha=0.1)
    prob = (draws > 0.2).mean(axis=0)
    assert hh.rule == "posterior"
    np.testing.assert_allclose(hh.probabilities, prob)
    np.testing.assert_array_equal(hh.indices, np.flatnonzero(prob > 0.9))


def test_heavy_hitters_bad_input():
    est = postprocess(toy_measurement([0.5, 0.5]), "base")
    for bad in (0.0, -0.1, 1.5, "0.1", True, float("nan")):
        with pytest.raises(ValueError, match="threshold"):
            est.heavy_hitters(bad)
    est.heavy_hitters(1.0)  # the closed end is allowed
    for bad in (0.0, 1.0, -1, "0.05", None):
        with pytest.raises(ValueError, match="alpha"):
            est.heavy_hitters(0.1, alpha=bad)


@pytest.mark.slow
def test_fwer_on_a_null_configuration():
    """Every item at the threshold (the least favourable null): FWER at most alpha.

    400 runs of OUE with 50 items at f = 0.02 each, threshold 0.02, alpha = 0.1: the
    share of runs declaring any item must not exceed alpha beyond sampling error.
    """
    rng = np.random.default_rng(11)
    d, n, runs, alpha = 50, 10**5, 400, 0.1
    x = np.full(d, n // d)
    oracle = bayesldp.OUE(1.0, d)
    errors = 0
    for _ in range(runs):
        m = oracle.simulate(x, rng)
        errors += len(postprocess(m, "base").heavy_hitters(0.02, alpha)) > 0
    assert errors / runs <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / runs)


def test_fwer_small_null_simulation():
    """A quick version: items below the threshold are never declared at alpha = 0.05."""
    rng = np.random.default_rng(12)
    d, n = 30, 10**5
    x = np.full(d, n // d)  # f = 1/30 < 0.05
    oracle = bayesldp.OUE(1.0, d)
    declared = [len(postprocess(oracle.simulate(x, rng), "base").heavy_hitters(0.05)) for _ in
                range(100)]  # fmt: skip
    assert sum(declared) == 0


def test_top_k_probability_sums_to_k_and_clear_cases(rng):
    f = np.array([0.4, 0.3, 0.2] + [0.1 / 47] * 47)
    x = np.floor(f * 10**6).astype(np.int64)
    m = bayesldp.OUE(4.0, 50).simulate(x, rng)
    for method in ("norm-sub", "base", "post-pos"):
        probs = postprocess(m, method).top_k_probability(3)
        assert probs.sum() == pytest.approx(3)
        np.testing.assert_array_equal(probs[:3], 1.0)
        assert np.all(probs[3:] == 0.0)
    draws = rng.dirichlet(f * 1e4, size=500)
    est = Estimate(draws.mean(axis=0), "test", m, draws=draws)
    probs = est.top_k_probability(2)
    assert probs.sum() == pytest.approx(2)
    np.testing.assert_array_equal(probs[:2], 1.0)


def test_top_k_probability_ties_by_index():
    draws = np.zeros((4, 5))
    probs = selection.top_k_probability(StoredDraws(draws), 2)
    np.testing.assert_array_equal(probs, [1, 1, 0, 0, 0])


def test_top_k_probability_bad_k():
    est = postprocess(toy_measurement([0.5, 0.5, 0.0]), "norm-sub")
    for bad in (0, 4, 1.5, "2", True):
        with pytest.raises(ValueError, match="k"):
            est.top_k_probability(bad)
