"""Base, Base-Pos, Post-Pos and Base-Cut."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm as normal

import bayesldp
from bayesldp.methods._baseline import threshold
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import CATALOGUE, run_quietly


def test_base_and_base_pos_and_norm():
    m = toy_measurement(CATALOGUE["noisy"])
    np.testing.assert_array_equal(run_quietly(m, "base").frequencies, m.estimates)
    np.testing.assert_array_equal(
        run_quietly(m, "base-pos").frequencies, np.maximum(m.estimates, 0)
    )
    f = run_quietly(m, "norm").frequencies
    shift = f - m.estimates
    np.testing.assert_allclose(shift, shift[0], atol=1e-15)  # the same delta everywhere
    assert abs(f.sum() - 1) < 1e-12


def test_post_pos_query_rule():
    m = toy_measurement([0.4, -0.3, 0.2, -0.1])
    est = run_quietly(m, "post-pos")
    np.testing.assert_allclose(est.frequencies, [0.4, 0.0, 0.2, 0.0], atol=1e-15)  # base-pos
    assert est.subset([0, 1]) == pytest.approx(0.1)  # raw sum, positive: unchanged
    assert est.subset([1, 3]) == 0.0  # raw sum -0.4 clipped
    assert run_quietly(m, "base-pos").subset([0, 1]) == pytest.approx(0.4)


@pytest.mark.parametrize("alpha", [2.0, 0.05])
def test_base_cut_threshold(alpha, rng):
    d = 1024
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    est = run_quietly(m, "base-cut", alpha=alpha)
    t = normal.ppf(1 - alpha / d) * math.sqrt(m.q * (1 - m.q) / (m.n * (m.p - m.q) ** 2))
    assert est.info["threshold"] == pytest.approx(t, rel=1e-12)
    keep = m.estimates >= t
    np.testing.assert_array_equal(est.frequencies[keep], m.estimates[keep])
    assert np.all(est.frequencies[~keep] == 0)


def test_threshold_clamped_when_alpha_large():
    m = toy_measurement([0.6, 0.5, -0.1])
    assert threshold(m, 2.0) == 0.0  # 1 - 2/3 < 1/2
    with pytest.raises(ValueError, match="alpha"):
        threshold(m, -1.0)
