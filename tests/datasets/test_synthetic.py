"""Synthetic datasets: Zipf, uniform and Beta."""

from __future__ import annotations

import numpy as np
import pytest

from bayesldp import datasets
from bayesldp.datasets import get_dataset


def test_str_reports_n_d_and_source():
    ds = datasets.zipf(1.5, 16, 1000, rng=1)
    text = str(ds)
    assert "n=1,000" in text and "d=16" in text and ds.source in text


def test_zipf_and_beta_keep_their_signatures():
    z = datasets.zipf(s=1.1, d=32, n=5000, rng=np.random.default_rng(3))
    b = datasets.beta(a=5.0, b=2.0, d=20, n=3000, rng=4)
    assert (z.n, z.d, b.n, b.d) == (5000, 32, 3000, 20)
    # Zipf: item 0 is the most frequent in expectation; with n=5000 it is by far.
    assert z.counts.argmax() == 0


def test_uniform_draws_users_from_the_flat_law():
    # the same draw as rng.multinomial(n, [1/d] * d) on the same generator
    expected = np.random.default_rng(5).multinomial(1000, np.full(16, 1 / 16))
    np.testing.assert_array_equal(get_dataset("uniform:d=16,n=1000", rng=5).counts, expected)
    assert get_dataset("uniform").d == 1024 and get_dataset("uniform").n == 1_000_000
    with pytest.raises(ValueError, match="d must be"):
        get_dataset("uniform:d=0")
