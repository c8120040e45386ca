"""GRR: counts that sum to n, exact simulation in bounded memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import bayesldp
from tests.helpers import zipf_frequencies


def test_grr_simulate_sums_to_n(rng):
    oracle = bayesldp.GRR(0.5, 50)
    m = oracle.simulate(rng.multinomial(10_000, zipf_frequencies(50)), rng)
    assert m.support_counts.sum() == 10_000
    assert m.estimates.sum() == pytest.approx(1.0)


def _peak(func, *args):
    tracemalloc.start()
    try:
        out = func(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, out


def test_grr_simulate_memory_does_not_grow_with_n(monkeypatch):
    """Exact GRR simulation takes liars a block at a time (was 19 bytes per user)."""
    cells = 1 << 16
    monkeypatch.setattr("bayesldp.oracles._blocks.CHUNK_CELLS", cells)
    d, n = 1 << 16, 4_000_000
    oracle = bayesldp.GRR(1.0, d)
    x = np.random.default_rng(0).multinomial(n, np.full(d, 1 / d))
    peak, m = _peak(oracle.simulate, x, np.random.default_rng(1))
    assert m.support_counts.sum() == n
    assert peak < 80 * d + 64 * cells  # < 0.5 byte per user here
