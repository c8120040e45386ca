"""Queries on an Estimate and the accuracy metrics, against direct computation."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp import metrics
from bayesldp.estimate import Estimate, get_inference, set_inference
from bayesldp.inference import DefaultInference
from tests.helpers import toy_measurement


def test_subset_top_k_and_mask():
    est = bayesldp.postprocess(toy_measurement([0.1, 0.4, 0.2, 0.3]), "base")
    assert est.subset([1, 3]) == pytest.approx(0.7)
    assert est.subset(np.array([True, False, True, False])) == pytest.approx(0.3)
    assert est.subset(2) == pytest.approx(0.2)
    idx, vals = est.top_k(2)
    np.testing.assert_array_equal(idx, [1, 3])
    np.testing.assert_allclose(vals, [0.4, 0.3])


def test_top_k_ties_by_index():
    est = bayesldp.postprocess(toy_measurement([0.25, 0.25, 0.25, 0.25]), "base")
    np.testing.assert_array_equal(est.top_k(3)[0], [0, 1, 2])


def test_interval_from_draws(rng):
    m = toy_measurement([0.5, 0.3, 0.2])
    draws = rng.dirichlet([50, 30, 20], size=4000)
    est = Estimate(draws.mean(axis=0), "test", m, draws=draws)
    lo, hi = est.interval([0, 1], prob=0.9)
    sums = draws[:, :2].sum(axis=1)
    assert lo == pytest.approx(np.quantile(sums, 0.05))
    assert hi == pytest.approx(np.quantile(sums, 0.95))
    with pytest.raises(ValueError, match="prob"):
        est.interval([0], prob=1.5)


def test_estimate_rejects_bad_frequencies():
    m = toy_measurement([0.5, 0.5])
    with pytest.raises(ValueError, match="shape"):
        Estimate(np.zeros(3), "x", m)
    with pytest.raises(ValueError, match="non-finite"):
        Estimate(np.array([np.nan, 1.0]), "x", m)


def test_full_domain_metrics():
    true = np.array([0.5, 0.3, 0.2, 0.0])
    est = np.array([0.4, 0.35, 0.2, 0.05])
    assert metrics.mse(true, est) == pytest.approx(np.mean((est - true) ** 2))
    assert metrics.mae(true, est) == pytest.approx(np.mean(np.abs(est - true)))
    with pytest.raises(ValueError, match="shape"):
        metrics.mse(true, est[:3])


def test_topk_uses_true_ranking():
    true = np.array([0.1, 0.6, 0.3])
    est = np.array([0.5, 0.5, 0.0])
    # true top-2 are items 1 and 2: errors 0.1 and 0.3
    assert metrics.topk_mse(true, est, 2) == pytest.approx((0.01 + 0.09) / 2)
    with pytest.raises(ValueError, match="k must"):
        metrics.topk_mse(true, est, 5)


def test_random_subsets_size_and_uniqueness(rng):
    masks = metrics.random_subsets(200, 10, 50, rng)
    assert masks.shape == (50, 200)
    assert np.all(masks.sum(axis=1) == 20)
    with pytest.raises(ValueError, match="percent"):
        metrics.random_subsets(10, 0, 1, rng)


def test_set_value_mse_against_direct(rng):
    m = toy_measurement([0.4, -0.3, 0.2, 0.5, 0.2])
    true = np.array([0.3, 0.0, 0.2, 0.4, 0.1])
    est = bayesldp.postprocess(m, "post-pos")
    seed = 7
    masks = metrics.random_subsets(5, 40, 20, np.random.default_rng(seed))
    direct = np.mean([(max(m.estimates[k].sum(), 0) - true[k].sum()) ** 2 for k in masks])
    got = metrics.set_value_mse(true, est, 40, np.random.default_rng(seed), 20)
    assert got == pytest.approx(direct)


def test_heavy_hitters():
    true = np.array([0.4, 0.3, 0.2, 0.05, 0.05])
    est = np.array([0.45, 0.1, 0.25, 0.2, 0.0])
    score = metrics.heavy_hitters(true, est, 0.15)
    # truly heavy {0,1,2}; predicted {0,2,3}: tp = 2
    assert score.precision == pytest.approx(2 / 3)
    assert score.recall == pytest.approx(2 / 3)
    assert score.f_score == pytest.approx(2 / 3)
    empty = metrics.heavy_hitters(true, est, 0.9)
    assert (empty.precision, empty.recall) == (1.0, 1.0)


def test_queries_go_through_the_installed_inference():
    """Estimate's statistical queries are answered by the installed Inference, whatever it is."""
    assert isinstance(get_inference(), DefaultInference)  # import bayesldp did

    class Recorder:
        def __init__(self):
            self.calls = []

        def interval(self, estimate, indices, prob, method):
            self.calls.append(("interval", estimate, indices, prob, method))
            return "iv"

        def bootstrap(self, estimate, n_replicates, rng):
            self.calls.append(("bootstrap", estimate, n_replicates, rng))
            return "boot"

        def heavy_hitters(self, estimate, threshold, alpha):
            self.calls.append(("heavy_hitters", estimate, threshold, alpha))
            return "hh"

        def top_k_probability(self, estimate, k):
            self.calls.append(("top_k_probability", estimate, k))
            return "topk"

    with pytest.raises(ValueError, match="inference"):
        set_inference(object())
    est = bayesldp.postprocess(toy_measurement([0.5, 0.3, 0.2]), "norm-sub")
    recorder, installed = Recorder(), get_inference()
    set_inference(recorder)
    try:
        answers = (
            est.interval([0], 0.8, "normal"),
            est.bootstrap(7, rng=3),
            est.bootstrap(7, rng=3),
            est.heavy_hitters(0.1, 0.2),
            est.top_k_probability(2),
        )
    finally:
        set_inference(installed)
    assert answers == ("iv", "boot", "boot", "hh", "topk")
    assert recorder.calls == [
        ("interval", est, [0], 0.8, "normal"),
        ("bootstrap", est, 7, 3),  # once: the Estimate caches replicates by seed and size
        ("heavy_hitters", est, 0.1, 0.2),
        ("top_k_probability", est, 2),
    ]
