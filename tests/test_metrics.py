"""The accuracy metrics, against direct computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bayesldp
from bayesldp import metrics
from tests.helpers import toy_measurement, zipf_frequencies


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


def test_rng_seed_accepted_in_set_value_mse():
    """``rng=0`` raised AttributeError deep inside numpy; a seed is a valid rng."""
    f = zipf_frequencies(20)
    est = bayesldp.postprocess(toy_measurement(np.round(f, 3)), "base")
    a = metrics.set_value_mse(f, est, 50, 0, n_queries=5)
    b = metrics.set_value_mse(f, est, 50, np.random.default_rng(0), n_queries=5)
    assert a == b and math.isfinite(a)


def test_mse_of_huge_finite_errors_is_finite():
    # Hypothesis (thorough profile): an error of 1.34e154 overflowed in the square
    value = metrics.mse([0.0, 0.0], [0.0, 1.3407807929942597e154])
    # the exact value, (e/2) * e with e = 1.34e154, computed without overflow
    e = 1.3407807929942597e154
    assert np.isfinite(value) and value == pytest.approx((e / 2) * e, rel=1e-12)


def test_absurd_numbers_of_random_sets_are_refused():
    # Hypothesis (thorough profile): n_queries = 2**40 allocated (n_queries, d) keys
    with pytest.raises(ValueError, match="n_queries"):
        metrics.random_subsets(10, 50, 2**40, 0)


def test_mse_beyond_the_largest_float_is_refused():
    # Hypothesis (thorough profile): errors [0, 0, 0, 0, 3.0e154]: the mean square,
    # 1.7977e308, exceeds the largest float even after scaling; inf was returned
    e = 2.9980769960612387e154
    assert (e / 5) * e > np.finfo(np.float64).max  # not representable
    with pytest.raises(ValueError, match="estimate"):
        metrics.mse([0, 0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0, e])
    # just below the limit it is still computed
    assert np.isfinite(metrics.mse([0, 0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0, e / 2]))
