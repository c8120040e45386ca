"""Measurement: the variance formula and the checks a registered oracle asks for."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bayesldp


@pytest.mark.parametrize("oracle", ["OUE", "SUE", "GRR"])
@pytest.mark.parametrize("items", [1, 3])
def test_support_count_variance_is_the_sum_of_the_bernoulli_variances(oracle, items):
    """support_count_variance equals the sum of scipy's Bernoulli variances.

    Each of the x holders reports its own item w.p. p and the set's other items w.p. q;
    every other user reports each item w.p. q (independent bits).
    """
    from scipy.stats import binom

    from bayesldp.measurement import support_count_variance

    o = bayesldp.make_oracle(oracle, 1.3, 10)
    n, p, q = 1000, o.p, o.q
    x = np.array([0.0, 1.0, 250.0, 1000.0])
    brute = x * (binom.var(1, p) + (items - 1) * binom.var(1, q)) + (n - x) * items * binom.var(
        1, q
    )
    np.testing.assert_allclose(support_count_variance(n, p, q, x, items=items), brute, rtol=1e-12)


def test_measurement_checks_the_sum_for_one_item_oracles():
    from bayesldp.measurement import Measurement
    from bayesldp.oracles import ORACLES, register_oracle

    for name in ("GRR", "grr"):
        with pytest.raises(ValueError, match=f"support_counts of {name} must sum to n"):
            Measurement.from_support_counts([1, 2, 3], 7, 0.5, 0.25, oracle=name)
    Measurement.from_support_counts([1, 2, 3], 7, 0.5, 0.25, oracle="OneHot")  # not known
    register_oracle(type("OneHot", (bayesldp.GRR,), {"name": "OneHot"}))
    try:
        with pytest.raises(ValueError, match="must sum to n"):
            Measurement.from_support_counts([1, 2, 3], 7, 0.5, 0.25, oracle="OneHot")
    finally:
        ORACLES.pop("OneHot")
    # the fact is asked of the registry at check time: unregistered, the name is generic
    Measurement.from_support_counts([1, 2, 3], 7, 0.5, 0.25, oracle="OneHot")


def test_measurement_variance_checks_the_frequencies():
    m = bayesldp.OUE(1.0, 3).simulate([50, 30, 20], 0)
    for bad in ([math.nan, 0.2], [2.0], [-0.5, 0.1], [True], ["x"]):
        with pytest.raises(ValueError, match="frequencies"):
            m.variance(bad)
    np.testing.assert_allclose(m.variance(), m.variance(np.clip(m.estimates, 0, 1)))
    assert m.variance([0.0, 0.5, 1.0]).shape == (3,)


def test_measurement_oracle_must_be_a_name():
    with pytest.raises(ValueError, match="oracle"):
        bayesldp.Measurement.from_support_counts([1, 2], 3, 0.5, 0.25, oracle=3)


def test_grr_counts_must_sum_to_n():
    with pytest.raises(ValueError, match="sum to n"):
        bayesldp.Measurement.from_support_counts([0, 0, 0], 5, 0.6, 0.2, oracle="GRR")
    with pytest.raises(ValueError, match="sum to n"):
        bayesldp.Measurement.from_support_counts([3, 1, 0], 5, 0.6, 0.2, oracle="GRR")
    m = bayesldp.Measurement.from_support_counts([4, 1, 0], 5, 0.6, 0.2, oracle="GRR")
    assert bayesldp.postprocess(m, "mle").is_consistent()


def test_measurement_estimates_must_match_counts():
    with pytest.raises(ValueError, match="disagree"):
        bayesldp.Measurement(
            estimates=[0.9, 0.1], n=10, p=0.5, q=0.25, support_counts=[0, 0], oracle="OUE"
        )
    m = bayesldp.Measurement.from_support_counts([5, 3], 10, 0.5, 0.25)
    same = bayesldp.Measurement(m.estimates, 10, 0.5, 0.25, m.support_counts)
    np.testing.assert_array_equal(same.estimates, m.estimates)
