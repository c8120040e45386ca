"""OUE and SUE: packed bits on the wire, exact O(d) simulation."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from tests.helpers import zipf_frequencies


def test_unary_bits_in_packbits_order(rng):
    """Item j is bit 7 - j % 8 of byte j // 8: users at eps 30 report their own bit only."""
    oracle = bayesldp.OUE(30.0, 20)
    values = np.arange(20)
    bits = np.unpackbits(oracle.privatize(values, rng), axis=1, count=20)
    own = bits[values, values]
    assert bits.sum() == own.sum()  # q = 9e-14: no other bit is set
    assert 0 < own.mean() < 1  # p = 1/2


def test_unary_aggregate_refuses_float_reports():
    """0.5 used to be truncated to 0."""
    for oracle in (bayesldp.OUE(1.0, 16), bayesldp.SUE(1.0, 16)):
        with pytest.raises(ValueError, match="reports"):
            oracle.aggregate(np.full((100, 16), 0.5))
        with pytest.raises(ValueError, match="reports"):
            oracle.aggregate(np.full((100, 2), 0.5))


@pytest.mark.parametrize("name", ["OUE", "SUE"])
def test_unary_simulate_needs_no_per_user_work(name, rng, monkeypatch):
    """Exact unary simulation is O(d) binomials: no work limit applies, at any n."""
    oracle = bayesldp.make_oracle(name, 1.0, 42178)
    monkeypatch.setattr(type(oracle), "simulation_cell_limit", 0)
    m = oracle.simulate(rng.multinomial(10**6, zipf_frequencies(42178, 1.1)), rng)
    assert m.n == 10**6 and m.support_counts.max() <= 10**6
