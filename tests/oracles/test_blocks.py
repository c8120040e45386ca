"""Block iteration: memory beyond the reports stays flat in the number of users."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import bayesldp

ALL = list(bayesldp.ORACLES)


def _peak(func, *args):
    tracemalloc.start()
    try:
        out = func(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, out


@pytest.mark.parametrize("name", ALL)
def test_privatize_memory_is_flat_in_n(name, monkeypatch):
    """Beyond the reports themselves, peak memory does not grow with n."""
    monkeypatch.setattr("bayesldp.oracles._blocks.CHUNK_CELLS", 1 << 12)
    cells = 1 << 12
    d = 64
    oracle = bayesldp.make_oracle(name, 1.0, d)
    rng = np.random.default_rng(0)
    privatize, count = [], []
    for n in (5_000, 20_000):  # more than one block of users (4096 at most) each time
        values = rng.integers(0, d, n).astype(np.int64)
        peak, reports = _peak(oracle.privatize, values, rng)
        privatize.append(peak - reports.nbytes)
        peak, _ = _peak(oracle.support_counts, reports)  # the aggregator side too
        count.append(peak)
    for extra in (privatize, count):
        assert extra[1] < 1.2 * extra[0] + (64 << 10), extra  # does not grow with n
        assert extra[1] < 64 * cells + (256 << 10), extra


def test_blocks_cover_every_row_once():
    from bayesldp.oracles._blocks import blocks, rows_per_block, units_in_range

    assert [(s.start, s.stop) for s in blocks(10, 4)] == [(0, 4), (4, 8), (8, 10)]
    assert list(blocks(0, 4)) == []
    assert rows_per_block(0) == rows_per_block(1) >= rows_per_block(7) >= 1
    counts = np.array([3, 0, 2, 5])
    ends = np.cumsum(counts)
    every = np.repeat(np.arange(4), counts)
    for start, stop in [(0, 10), (2, 7), (3, 5), (9, 10)]:
        np.testing.assert_array_equal(units_in_range(counts, ends, start, stop), every[start:stop])
