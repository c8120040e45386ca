"""OLH: the hash family enumerated, its exact q, its reports checked."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import bayesldp


def test_olh_support_matches_brute_force(rng):
    oracle = bayesldp.OLH(1.0, 7)
    reports = oracle.privatize(rng.integers(0, 7, 300), rng)
    brute = [sum(int(oracle.hash(a, b, v) == y) for a, b, y in reports.tolist()) for v in range(7)]
    np.testing.assert_array_equal(oracle.support_counts(reports), brute)


class _SmallPrimeOLH(bayesldp.OLH):
    """OLH over the prime 13, so that every hash can be enumerated."""

    prime = 13


def test_olh_law_and_exact_q_by_enumeration(rng):
    oracle = _SmallPrimeOLH(1.0, 6)
    g, P = oracle.g, oracle.prime
    # exact q: enumerate every hash (a, b) and the GRR step over buckets
    p = Fraction(oracle.p)
    other = (1 - p) / (g - 1)
    q = Fraction(0)
    for a in range(1, P):
        for b in range(P):
            same = (a * 3 + b) % P % g == (a * 1 + b) % P % g
            q += (p if same else other) / ((P - 1) * P)
    assert oracle.q == pytest.approx(float(q), rel=1e-14)
    pairs = sum(
        ((a * 3 + b) % P) % g == ((a * 1 + b) % P) % g for a in range(1, P) for b in range(P)
    )
    assert oracle.collision_probability == pytest.approx(pairs / ((P - 1) * P), rel=1e-15)
    # the law of (a, b, y) for a user holding 1: chi-square over all 12 * 13 * g reports
    trials = 100_000
    r = oracle.privatize(np.full(trials, 1), rng).astype(np.int64)
    seen = np.bincount(((r[:, 0] - 1) * P + r[:, 1]) * g + r[:, 2], minlength=(P - 1) * P * g)
    expected = np.empty((P - 1, P, g))
    for a in range(1, P):
        for b in range(P):
            h = (a + b) % P % g
            expected[a - 1, b] = float(other)
            expected[a - 1, b, h] = float(p)
    expected /= (P - 1) * P
    assert stats.chisquare(seen, expected.ravel() * trials).pvalue > 1e-4


def test_olh_hash_parameters_do_not_depend_on_the_value(rng):
    oracle = bayesldp.OLH(1.0, 10)
    binned = [oracle.privatize(np.full(40_000, v), rng)[:, :2] >> 27 for v in (0, 9)]
    for col in (0, 1):
        table = [np.bincount(b[:, col], minlength=16) for b in binned]
        assert stats.chi2_contingency(table).pvalue > 1e-4


def test_olh_aggregate_refuses_buckets_outside_g(rng):
    oracle = bayesldp.OLH(1.0, 10)
    reports = oracle.privatize(rng.integers(0, 10, 50), rng)
    bad = reports.copy()
    bad[3, 2] = oracle.g
    with pytest.raises(ValueError, match="reports"):
        oracle.aggregate(bad)
    bad = reports.copy()
    bad[3, 0] = 0  # a = 0 is not a hash of the family
    with pytest.raises(ValueError, match="reports"):
        oracle.support_counts(bad)


def test_olh_default_g_is_capped_and_explicit_g_checked():
    cap = bayesldp.OLH.max_default_g
    assert bayesldp.OLH(44.0, 10).g == cap  # round(e^44 + 1) has 20 digits
    assert bayesldp.OLH(math.log(cap) - 0.01, 10).g == round(math.exp(math.log(cap) - 0.01) + 1)
    assert bayesldp.OLH(1.0, 10, g=2**31 - 1).g == 2**31 - 1
    with pytest.raises(ValueError, match="g must be <= 2147483647"):
        bayesldp.OLH(1.0, 10, g=2**31)
    with pytest.raises(ValueError, match="domain_size must be at most"):
        bayesldp.OLH(1.0, 2**31)
