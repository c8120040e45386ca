"""Exact samplers of the user side: proofs by enumeration and exact arithmetic, then laws."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from bayesldp.oracles._exact_random import (
    CHAIN_DIGITS,
    bernoulli,
    bernoulli_chain,
    bernoulli_packed,
    binary_digits,
    random_words,
    subsets,
)

# probabilities with short, long, tiny and nearly-1 binary expansions
PROBS = [
    0.5,
    0.25 + 2**-60,
    1 / (math.e + 1),
    2**-9,  # all its mass is in the digits after the chain's 8
    2**-9 + 2**-70,
    1 - 2**-53,
    math.exp(-50),
    5e-324,  # the smallest subnormal
]


def _lanes_enumerating(n_digits: int) -> np.ndarray:
    """Words whose 2^n_digits lanes hold every pattern of n_digits random digits once."""
    lanes = np.arange(max(64, 1 << n_digits))
    words = np.empty((n_digits, lanes.size // 64), dtype=np.uint64)
    for i in range(n_digits):
        bits = ((lanes >> (n_digits - 1 - i)) & 1).astype(np.uint8)
        words[i] = np.packbits(bits, bitorder="little").view(np.uint64)
    return words


@pytest.mark.parametrize("n_digits", [1, 2, 3, 5, 8])
def test_chain_is_exact_on_every_digit_pattern(n_digits):
    """Over all 2^n equally likely digit patterns: exactly t lanes give 1 and one ties."""
    copies = max(64, 1 << n_digits) >> n_digits  # lanes hold each pattern this often
    for t in range(1 << n_digits):
        ones, ties = bernoulli_chain(_lanes_enumerating(n_digits), t, n_digits)
        assert int(np.bitwise_count(ones).sum()) == t * copies
        assert int(np.bitwise_count(ties).sum()) == copies
        assert not np.any(ones & ties)


@pytest.mark.parametrize("prob", PROBS)
def test_digit_blocks_rebuild_the_probability_exactly(prob):
    """The chain's 8 digits and the 64-digit blocks of the ties sum to prob, exactly."""
    exact = Fraction(prob)
    first = binary_digits(prob, 0, CHAIN_DIGITS)
    rest = exact * 2**CHAIN_DIGITS - first
    assert rest == Fraction(prob * 2.0**CHAIN_DIGITS - first)  # the float the code uses
    assert 0 <= rest < 1
    blocks = [binary_digits(prob, start, 64) for start in range(0, 1200, 64)]
    assert all(0 <= b < 2**64 for b in blocks)
    assert sum(Fraction(b, 2 ** (64 * (j + 1))) for j, b in enumerate(blocks)) == exact


@pytest.mark.parametrize("prob", [*PROBS, 0.0, 1.0])
def test_bernoulli_means(prob, rng):
    n = 1 << 22
    flags = bernoulli(prob, n, rng)
    bits = np.unpackbits(bernoulli_packed(prob, n // 8, rng))
    for mean in (flags.mean(), bits.mean()):
        if prob in (0.0, 1.0):
            assert mean == prob
        else:
            se = math.sqrt(prob * (1 - prob) / n) + 1e-12
            assert abs(mean - prob) < 5 * se + 3 / n, (mean, prob)


def test_tied_lanes_are_resolved():
    """At 2^-9 + 2^-10 (first 8 digits 0) every 1 comes from the tie resolution."""
    prob = 2**-9 + 2**-10
    rng = np.random.default_rng(1)
    n = 1 << 24
    bits = np.unpackbits(bernoulli_packed(prob, n // 8, rng))
    assert abs(bits.mean() - prob) < 5 * math.sqrt(prob / n)


def test_bad_probabilities():
    rng = np.random.default_rng(0)
    for prob in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="prob"):
            bernoulli(prob, 3, rng)
        with pytest.raises(ValueError, match="prob"):
            bernoulli_packed(prob, 3, rng)


def test_random_words_are_64_bit_for_every_bit_generator():
    for bitgen in (np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64):
        words = random_words(np.random.Generator(bitgen(0)), 4096)
        assert words.dtype == np.uint64
        assert (words >> np.uint64(32)).any()  # MT19937's raw output has 32 bits only
        bits = np.unpackbits(words.view(np.uint8))
        assert abs(bits.mean() - 0.5) < 5 * math.sqrt(0.25 / bits.size)


def test_same_seed_same_bits():
    a = bernoulli_packed(0.3, 1000, np.random.default_rng(5))
    b = bernoulli_packed(0.3, 1000, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["reject", "mask"])
@pytest.mark.parametrize(("d", "k"), [(6, 1), (6, 2), (6, 3), (7, 5), (40, 9)])
def test_subsets_are_uniform(method, d, k):
    """Each row is a uniform k-subset holding (or avoiding) its item: chi-square."""
    rng = np.random.default_rng(7)
    rows = 30_000 if d < 40 else 2000
    avoid = np.full(rows, 2)
    include = np.arange(rows) % 2 == 0
    out = subsets(avoid, include, d, k, rng, method=method)
    assert out.shape == (rows, k) and out.dtype == np.int64
    assert np.all(np.diff(out, axis=1) > 0) and out.min() >= 0 and out.max() < d
    has = (out == 2).any(axis=1)
    np.testing.assert_array_equal(has, include)
    if d >= 40:  # too many subsets to enumerate: check each item's inclusion rate
        counts = np.bincount(out[~include].ravel(), minlength=d)
        rate = np.delete(counts, 2) / (~include).sum()
        assert np.all(np.abs(rate - k / (d - 1)) < 5 * math.sqrt(k / (d - 1) / 1000))
        return
    others = [u for u in range(d) if u != 2]
    for flag, size in ((True, k - 1), (False, k)):
        sets = [
            tuple(sorted(({2} if flag else set()) | set(c))) for c in combinations(others, size)
        ]
        index = {s: i for i, s in enumerate(sets)}
        seen = np.bincount(
            [index[tuple(r)] for r in out[include == flag].tolist()], minlength=len(sets)
        )
        if len(sets) > 1:
            assert stats.chisquare(seen).pvalue > 1e-4


@pytest.mark.parametrize(("d", "k"), [(7, 3), (9, 6)])
def test_subsets_uniform_when_few_rows(d, k):
    """Few rows per call: the mask is completed many candidates per row at a time."""
    rng = np.random.default_rng(11)
    calls = 4000
    out = np.concatenate(
        [subsets([0, 1], [False, True], d, k, rng, method="mask") for _ in range(calls)]
    )
    assert np.all(np.diff(out, axis=1) > 0)
    for row, flag in ((0, False), (1, True)):
        got = out[row::2]
        assert (got == row).any(axis=1).tolist() == [flag] * calls
        sets = sorted({tuple(r) for r in got.tolist()})
        expected = math.comb(d - 1, k - 1 if flag else k)
        assert len(sets) == expected
        index = {s: i for i, s in enumerate(sets)}
        seen = np.bincount([index[tuple(r)] for r in got.tolist()], minlength=expected)
        assert stats.chisquare(seen).pvalue > 1e-4


def test_subsets_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="k must"):
        subsets([0], [True], 5, 5, rng)
    with pytest.raises(ValueError, match="method"):
        subsets([0], [True], 5, 2, rng, method="sort")
