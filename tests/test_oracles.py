"""Frequency oracles: privacy, exactness of simulation, and agreement of the two paths."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bayesldp
from bayesldp.oracles import fwht
from tests.helpers import zipf_frequencies

ALL = list(bayesldp.ORACLES)


def output_keys(oracle, reports) -> np.ndarray:
    """Map each report to one hashable output symbol, for empirical output laws."""
    r = np.asarray(reports)
    if isinstance(oracle, bayesldp.OLH):
        # The output is the hash function (its values on the domain) and the bucket.
        items = np.arange(oracle.domain_size)
        pattern = oracle.hash(r[:, :1], r[:, 1:2], items[None, :])
        digits = np.concatenate([pattern, r[:, 2:3]], axis=1)
        return digits @ (oracle.g ** np.arange(digits.shape[1]))
    if isinstance(oracle, bayesldp.SS):
        mask = np.zeros((r.shape[0], oracle.domain_size), dtype=np.int64)
        np.put_along_axis(mask, r, 1, axis=1)
        return mask @ (2 ** np.arange(oracle.domain_size))
    if r.ndim == 2:  # unary encodings: bit vectors
        return r.astype(np.int64) @ (2 ** np.arange(r.shape[1]))
    return r


# (oracle, epsilon, domain size) small enough to enumerate the output space.
LDP_CASES = [
    ("GRR", 1.0, 4),
    ("OUE", 1.0, 3),
    ("SUE", 1.0, 3),
    ("OLH", 1.0, 3),
    ("SS", 0.5, 5),
    ("HR", 1.0, 3),
]


@pytest.mark.parametrize(("name", "eps", "d"), LDP_CASES)
def test_privatize_satisfies_ldp(name, eps, d, rng):
    """Empirical P(o | v) / P(o | v') stays within e^eps up to sampling error.

    For each pair of inputs and each output seen often enough, the log-ratio of the
    empirical output probabilities must not exceed eps by more than 5 standard errors
    (delta method); and the largest ratio must come close to e^eps, showing that the
    mechanism spends its budget rather than adding needless noise.
    """
    oracle = bayesldp.make_oracle(name, eps, d)
    trials = 120_000
    laws = []
    for v in range(d):
        keys = output_keys(oracle, oracle.privatize(np.full(trials, v), rng))
        uniq, cnt = np.unique(keys, return_counts=True)
        laws.append(dict(zip(uniq.tolist(), cnt.tolist(), strict=True)))
    outputs = set().union(*laws)
    worst_excess, largest = -np.inf, 0.0
    for o in outputs:
        counts = np.array([law.get(o, 0) for law in laws], dtype=float)
        if counts.min() < 200:
            continue
        logs = np.log(counts / trials)
        se = np.sqrt(1 / counts)  # delta-method s.e. of each log-probability
        for i in range(d):
            for j in range(d):
                if i != j:
                    excess = (logs[i] - logs[j] - eps) / math.hypot(se[i], se[j])
                    worst_excess = max(worst_excess, excess)
                    largest = max(largest, logs[i] - logs[j])
    assert worst_excess < 5, worst_excess
    assert largest > eps - 0.15, (largest, eps)


@pytest.mark.parametrize("name", ALL)
def test_support_probabilities(name, rng):
    """Reports of users holding v support v w.p. p and other items w.p. q."""
    d = 6
    oracle = bayesldp.make_oracle(name, 1.0, d)
    trials = 60_000
    counts = oracle.support_counts(oracle.privatize(np.zeros(trials, dtype=int), rng))
    se_p = math.sqrt(oracle.p * (1 - oracle.p) / trials)
    se_q = math.sqrt(oracle.q * (1 - oracle.q) / trials)
    assert abs(counts[0] / trials - oracle.p) < 5 * se_p
    assert np.all(np.abs(counts[1:] / trials - oracle.q) < 5 * se_q)


@pytest.mark.parametrize("name", ALL)
def test_simulate_mean_and_variance(name, rng):
    """Raw estimates are unbiased with the exact variance formula, for every oracle."""
    d, n = 8, 4000
    reps = 400 if name in ("OLH", "SS") else 1500
    counts = rng.multinomial(n, zipf_frequencies(d))
    oracle = bayesldp.make_oracle(name, 1.0, d)
    est = np.array([oracle.simulate(counts, rng).estimates for _ in range(reps)])
    f = counts / n
    var = oracle.variance(f) / n
    z = (est.mean(axis=0) - f) / np.sqrt(var / reps)
    assert np.abs(z).max() < 4.5
    # sample variance / true variance ~ chi2(reps-1)/(reps-1): s.e. sqrt(2/reps)
    ratio = est.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / reps)), ratio


@pytest.mark.parametrize("name", ["OLH", "SS", "HR"])
def test_marginal_approximation_matches_per_user(name, rng):
    d, n, reps = 6, 3000, 300
    counts = rng.multinomial(n, zipf_frequencies(d))
    oracle = bayesldp.make_oracle(name, 1.0, d)
    exact = np.array([oracle.simulate(counts, rng).estimates for _ in range(reps)])
    approx = np.array([oracle.simulate(counts, rng, exact=False).estimates for _ in range(reps)])
    se = np.sqrt(exact.var(axis=0) / reps + approx.var(axis=0) / reps)
    assert np.all(np.abs(exact.mean(axis=0) - approx.mean(axis=0)) < 5 * se)


@pytest.mark.parametrize("name", ALL)
def test_aggregate_counts_reports(name, rng):
    d = 5
    oracle = bayesldp.make_oracle(name, 1.0, d)
    values = rng.integers(0, d, 1000)
    m = oracle.aggregate(oracle.privatize(values, rng))
    assert m.n == 1000
    assert m.oracle == name
    assert m.epsilon == 1.0
    assert m.domain_size == d
    assert np.all((m.support_counts >= 0) & (m.support_counts <= 1000))


def test_grr_simulate_sums_to_n(rng):
    oracle = bayesldp.GRR(0.5, 50)
    m = oracle.simulate(rng.multinomial(10_000, zipf_frequencies(50)), rng)
    assert m.support_counts.sum() == 10_000
    assert m.estimates.sum() == pytest.approx(1.0)


def test_hr_aggregation_matches_brute_force(rng):
    oracle = bayesldp.HR(1.0, 5)
    reports = oracle.privatize(rng.integers(0, 5, 500), rng)
    k = oracle.K
    h = np.array([[(-1) ** bin(r & c).count("1") for c in range(k)] for r in range(k)])
    brute = np.array([(h[v + 1, reports] == 1).sum() for v in range(5)])
    np.testing.assert_array_equal(oracle.support_counts(reports), brute)
    np.testing.assert_allclose(fwht(np.eye(k)[3]), h[:, 3])


def test_olh_support_matches_brute_force(rng):
    oracle = bayesldp.OLH(1.0, 7)
    reports = oracle.privatize(rng.integers(0, 7, 300), rng)
    brute = [sum(int(oracle.hash(a, b, v) == y) for a, b, y in reports.tolist()) for v in range(7)]
    np.testing.assert_array_equal(oracle.support_counts(reports), brute)


def test_oracle_parameters():
    e = math.e
    grr = bayesldp.GRR(1.0, 10)
    assert grr.p == pytest.approx(e / (e + 9)) and grr.q == pytest.approx(1 / (e + 9))
    oue = bayesldp.OUE(1.0, 10)
    assert oue.p == 0.5 and oue.q == pytest.approx(1 / (e + 1))
    sue = bayesldp.SUE(1.0, 10)
    assert sue.p == pytest.approx(math.sqrt(e) / (math.sqrt(e) + 1))
    olh = bayesldp.OLH(1.0, 10)
    assert olh.g == round(e + 1) and olh.q == pytest.approx(1 / olh.g)
    ss = bayesldp.SS(1.0, 10)
    assert ss.k == round(10 / (e + 1))
    assert ss.q == pytest.approx(ss.p * (ss.k - 1) / 9 + (1 - ss.p) * ss.k / 9)
    hr = bayesldp.HR(1.0, 10)
    assert hr.K == 16 and hr.q == 0.5
    assert oue.approx_variance(100) == pytest.approx(
        oue.q * (1 - oue.q) / (100 * 0.25**2) * 0.25**2 / (oue.p - oue.q) ** 2
    )


def test_oue_simulate_is_fast_enough_for_kosarak_scale(rng):
    """Exact OUE simulation is O(d): n = 1e6, d = 42178 is a handful of binomials."""
    oracle = bayesldp.OUE(1.0, 42178)
    m = oracle.simulate(rng.multinomial(10**6, zipf_frequencies(42178, 1.1)), rng)
    assert m.n == 10**6
