"""Norm, Norm-Mul, Norm-Cut and Norm-Hyb edge cases."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp.methods import project_simplex
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import CATALOGUE, run_quietly


def test_norm_mul_scales_positive_part():
    m = toy_measurement(CATALOGUE["noisy"])
    f = run_quietly(m, "norm-mul").frequencies
    pos = np.maximum(m.estimates, 0)
    np.testing.assert_allclose(f, pos / pos.sum(), rtol=1e-14)


def test_norm_mul_all_negative_warns_uniform():
    m = toy_measurement(CATALOGUE["all-negative"])
    with pytest.warns(RuntimeWarning, match="uniform"):
        f = bayesldp.postprocess(m, "norm-mul").frequencies
    np.testing.assert_allclose(f, 1 / m.domain_size)


def test_norm_cut_sum_below_one_only_clips():
    m = toy_measurement(CATALOGUE["small-positives"])
    np.testing.assert_array_equal(
        run_quietly(m, "norm-cut").frequencies, np.maximum(m.estimates, 0)
    )


def test_norm_cut_smallest_theta():
    m = toy_measurement([0.5, 0.3, 0.15, 0.1, 0.05, -0.1])
    est = run_quietly(m, "norm-cut")
    # Cumulative sums 0.5, 0.8, 0.95, 1.05: theta = 0.15, the smallest keeping sum <= 1.
    np.testing.assert_allclose(est.frequencies, [0.5, 0.3, 0.15, 0, 0, 0])
    assert est.info["theta"] == pytest.approx(0.15)


def test_norm_cut_ties_dropped_together():
    m = toy_measurement(CATALOGUE["ties"])  # four 0.3s: three would fit, not all four
    f = run_quietly(m, "norm-cut").frequencies
    assert np.all(f == 0)  # theta must exceed 0.3: no tied item is kept alone


def test_norm_cut_single_huge():
    f = run_quietly(toy_measurement(CATALOGUE["single-huge"]), "norm-cut").frequencies
    assert np.all(f == 0)


def test_norm_hyb_keeps_large_estimates(rng):
    d = 1024
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**6, zipf_frequencies(d)), rng)
    est = run_quietly(m, "norm-hyb")
    t = est.info["threshold"]
    above = m.estimates > t
    assert above.sum() == est.info["kept"] > 0
    np.testing.assert_array_equal(est.frequencies[above], m.estimates[above])
    rest_total = 1 - m.estimates[above].sum()
    np.testing.assert_allclose(
        est.frequencies[~above], project_simplex(m.estimates[~above], rest_total), atol=1e-12
    )


def test_norm_hyb_kept_sum_above_one():
    # T = 0 here (alpha/d >= 1/2 with d = 4 is not the case: 2/4 = 1/2 -> clamped to 0).
    m = toy_measurement([0.6, 0.5, 0.2, -0.1])
    est = run_quietly(m, "norm-hyb")
    # 0.6 + 0.5 > 1: keep only the top one (sum 0.6 < 1), Norm-Sub the rest to 0.4.
    assert est.frequencies[0] == pytest.approx(0.6)
    assert est.info["kept"] == 1
    np.testing.assert_allclose(
        est.frequencies[1:], project_simplex(np.array([0.5, 0.2, -0.1]), 0.4), atol=1e-12
    )


def test_norm_hyb_everything_kept_falls_back():
    est = run_quietly(toy_measurement([0.7]), "norm-hyb")
    assert est.info.get("fallback") == "norm-sub"
    assert est.frequencies[0] == pytest.approx(1.0)


def test_norm_hyb_keeps_the_first_crossing():
    """The kept-sum-above-1 rule keeps the largest k whose sum stays below 1.

    The running sum of sorted estimates is not monotone (it falls through the negative
    estimates), so k is where it first reaches 1, not a bisection of it.
    """
    est = run_quietly(toy_measurement([0.6, 0.6] + [-0.1] * 14), "norm-hyb")
    np.testing.assert_allclose(est.frequencies[:2], [0.6, 0.4], atol=1e-12)
    assert np.all(est.frequencies[2:] == 0)
    assert est.info["kept"] == 1 and est.info["fallback"] is None


def test_norm_cut_keeps_consistent_grr_estimates():
    oracle = bayesldp.GRR(0.2, 5)
    m = oracle.measurement([398, 417, 391, 389, 405], 2000)
    est = bayesldp.postprocess(m, "norm-cut")
    np.testing.assert_allclose(est.frequencies, np.maximum(m.estimates, 0))
    assert abs(est.total - 1) < 1e-12
