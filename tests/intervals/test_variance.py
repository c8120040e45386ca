"""Exact variances of subset sums of the raw estimates, and the normal interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import bayesldp
from bayesldp import intervals
from bayesldp.intervals._variance import subset_count_variance
from tests.helpers import toy_measurement, zipf_frequencies

ORACLES = list(bayesldp.ORACLES)


def fixed_users(d: int, n: int) -> np.ndarray:
    """Return true counts summing to n, Zipf-shaped."""
    x = np.floor(zipf_frequencies(d, 1.2) * n).astype(np.int64)
    x[0] += n - x.sum()
    return x


def independent_variance(m, mask, x) -> float:
    """Return the variance if supports were independent across items (no covariances)."""
    a, x_set = mask.sum(), x[mask].sum()
    return a * m.n * m.q * (1 - m.q) + x_set * (m.p * (1 - m.p) - m.q * (1 - m.q))


@pytest.mark.parametrize("name", ORACLES)
def test_subset_count_variance_matches_privatize(name):
    """Var(sum of support counts over a set) against many rounds of privatize.

    Users' values are fixed; 3000 rounds of privatize + support_counts give the empirical
    variance of the set's summed counts, within 5 standard errors of the formula. For the
    oracles with dependent supports (GRR, SS, HR) the independence formula is rejected
    by the same simulation, so the test can tell them apart.
    """
    d, n, rounds = 16, 300, 3000
    rng = np.random.default_rng(7)
    oracle = bayesldp.make_oracle(name, 1.0, d)
    x = fixed_users(d, n)
    values = np.repeat(np.arange(d), x)
    mask = np.zeros(d, dtype=bool)
    if name == "HR":  # rows 1..7: their XORs name the heaviest items, a large cross term
        mask[:7] = True
    else:
        mask[rng.choice(d, 7, replace=False)] = True
    sums = np.empty(rounds)
    for r in range(rounds):
        sums[r] = oracle.support_counts(oracle.privatize(values, rng))[mask].sum()
    m = oracle.measurement(oracle.support_counts(oracle.privatize(values, rng)), n)
    formula = intervals.subset_count_variances(m, mask[None, :], x / n)[0]
    empirical = sums.var(ddof=1)
    se = empirical * math.sqrt(2 / (rounds - 1))
    assert abs(empirical - formula) < 5 * se
    independent = independent_variance(m, mask, x)
    if name in ("GRR", "SS", "HR"):
        assert abs(empirical - independent) > 5 * se
    # The frequency-scale variance is the count variance over (n (p - q))^2.
    assert intervals.subset_variance(m, mask, x / n) == pytest.approx(
        formula / (n * (m.p - m.q)) ** 2
    )


@pytest.mark.xfail(reason="OLH's universal hash family is not 3-wise independent", strict=False)
def test_olh_structured_set_known_deviation():
    """Known limitation: items 0..6 with users at small values are correlated under OLH.

    ``((a v + b) mod P) mod g`` makes the buckets of ``v`` and ``w`` dependent when
    ``(w - u) / (v - u)`` is a small rational; the ideal-hash formula (independent
    supports) then understates the variance of such sets by about 10%.
    """
    d, n, rounds = 16, 300, 3000
    rng = np.random.default_rng(7)
    oracle = bayesldp.OLH(1.0, d)
    x = fixed_users(d, n)
    values = np.repeat(np.arange(d), x)
    mask = np.zeros(d, dtype=bool)
    mask[:7] = True
    sums = [oracle.support_counts(oracle.privatize(values, rng))[mask].sum() for _ in range(rounds)]
    m = oracle.measurement(oracle.support_counts(oracle.privatize(values, rng)), n)
    formula = intervals.subset_count_variances(m, mask[None, :], x / n)[0]
    empirical = np.var(sums, ddof=1)
    assert abs(empirical - formula) < 3 * empirical * math.sqrt(2 / (rounds - 1))


@pytest.mark.parametrize("name", ORACLES)
def test_single_item_variance_is_the_oracles(name):
    oracle = bayesldp.make_oracle(name, 2.0, 12)
    f = zipf_frequencies(12)
    counts = np.full(12, 10)
    counts[0] += 1000 - counts.sum() if name == "GRR" else 0
    m = oracle.measurement(counts, 1000)
    for v in (0, 5):
        assert intervals.subset_variance(m, [v], f) == pytest.approx(m.variance(f)[v], rel=1e-12)


def test_hr_pairs_against_brute_force():
    """HR's cross term: ordered pairs of rows of S whose XOR is u + 1, counted directly."""
    d, n = 11, 500
    f = zipf_frequencies(d)
    oracle = bayesldp.HR(1.0, d)
    m = oracle.measurement(np.full(d, n // 2), n)
    mask = np.zeros(d, dtype=bool)
    mask[[0, 2, 3, 7, 10]] = True
    rows = np.flatnonzero(mask) + 1
    beta = 2 * m.p - 1
    total = 0.0
    for u in range(d):
        pairs = sum(1 for r in rows for s in rows if r ^ s == u + 1)
        total += n * f[u] * (mask.sum() + beta * pairs - beta**2 * mask[u])
    assert intervals.subset_count_variances(m, mask[None, :], f)[0] == pytest.approx(total / 4)


def test_vectorised_variances_equal_single_sets(rng):
    for name in ORACLES:
        oracle = bayesldp.make_oracle(name, 1.0, 20)
        m = oracle.simulate(fixed_users(20, 2000), rng)
        masks = rng.random((5, 20)) < 0.4
        many = intervals.subset_count_variances(m, masks)
        one = [subset_count_variance(m, np.flatnonzero(mk)) for mk in masks]
        np.testing.assert_allclose(many, one, rtol=1e-12)


def test_normal_interval_formula():
    m = toy_measurement([0.3, 0.1, -0.05, 0.4, 0.25])
    idx = [0, 2, 3]
    iv = intervals.normal_interval(m, idx, 0.8)
    center = m.estimates[idx].sum()
    half = norm.ppf(0.9) * math.sqrt(intervals.subset_variance(m, idx))
    assert iv == pytest.approx((center - half, center + half))
    assert iv.kind == "normal" and iv.center == pytest.approx(center)
    # post-pos clips the ends at 0 (a monotone map of base's interval); then [0, 1].
    low = intervals.normal_interval(m, [2], 0.8, clip_at_zero=True)
    assert low.lo == 0.0 and low.hi >= 0.0
