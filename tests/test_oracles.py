"""Frequency oracles: privacy, exactness of simulation, and agreement of the two paths."""

from __future__ import annotations

import decimal
import itertools
import math
import tracemalloc
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import bayesldp
from bayesldp.oracles import fwht
from tests.helpers import zipf_frequencies

ALL = list(bayesldp.ORACLES)


def output_keys(oracle, reports) -> np.ndarray:
    """Map each report to one output symbol: its bytes as transmitted.

    OLH is the exception: its hash parameters (a, b) are uniform whatever the value
    (tested separately below), so its output is keyed by the hash function's values on
    the domain and the bucket.
    """
    r = np.asarray(reports)
    if isinstance(oracle, bayesldp.OLH):
        items = np.arange(oracle.domain_size)
        pattern = oracle.hash(r[:, :1], r[:, 1:2], items[None, :])
        digits = np.concatenate([pattern, r[:, 2:3].astype(np.int64)], axis=1)
        return digits @ (oracle.g ** np.arange(digits.shape[1]))
    rows = np.ascontiguousarray(r).reshape(r.shape[0], -1)
    return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()


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
        laws.append(dict(zip([u.tobytes() for u in uniq], cnt.tolist(), strict=True)))
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


# ---------------------------------------------------------------------------
# exact output laws of the transmitted reports


def _exact_law(oracle, v):
    """Every possible report (as bytes) for a user holding v, with its probability."""
    d = oracle.domain_size
    p = oracle.p
    if isinstance(oracle, bayesldp.GRR):
        rows = [np.array(u, dtype=oracle.report_dtype) for u in range(d)]
        probs = [p if u == v else (1 - p) / (d - 1) for u in range(d)]
    elif isinstance(oracle, bayesldp.HR):
        k = oracle.K
        own = [j for j in range(k) if bin((v + 1) & j).count("1") % 2 == 0]
        rows = [np.array(j, dtype=oracle.report_dtype) for j in range(k)]
        probs = [(p if j in own else 1 - p) / (k // 2) for j in range(k)]
    elif isinstance(oracle, bayesldp.SS):
        rows, probs = [], []
        for s in itertools.combinations(range(d), oracle.k):
            rows.append(np.array(s, dtype=oracle.report_dtype))
            if v in s:
                probs.append(p / math.comb(d - 1, oracle.k - 1))
            else:
                probs.append((1 - p) / math.comb(d - 1, oracle.k))
    else:  # unary encodings: every bit vector, packed
        q = oracle.q
        rows, probs = [], []
        for bits in itertools.product([0, 1], repeat=d):
            rows.append(np.packbits(np.array(bits, dtype=np.uint8)))
            pr = 1.0
            for u, b in enumerate(bits):
                on = p if u == v else q
                pr *= on if b else 1 - on
            probs.append(pr)
    return [r.tobytes() for r in rows], np.array(probs)


@pytest.mark.parametrize(
    ("name", "eps", "d", "params"),
    [
        ("GRR", 1.0, 5, {}),
        ("HR", 1.0, 5, {}),
        ("OUE", 1.0, 5, {}),
        ("SUE", 2.0, 5, {}),
        ("SS", 1.0, 6, {"k": 2}),  # rejection sampler
        ("SS", 0.5, 6, {"k": 3}),  # mask sampler
    ],
)
def test_reports_follow_the_exact_law(name, eps, d, params, rng):
    """Chi-square of the reports' bytes against the mechanism's exact output law."""
    oracle = bayesldp.make_oracle(name, eps, d, **params)
    outputs, probs = _exact_law(oracle, 1)
    assert probs.sum() == pytest.approx(1.0)
    trials = 60_000
    reports = oracle.privatize(np.full(trials, 1), rng)
    index = {o: i for i, o in enumerate(outputs)}
    rows = np.ascontiguousarray(reports).reshape(trials, -1)
    seen = np.bincount([index[r.tobytes()] for r in rows], minlength=len(outputs))
    assert seen.sum() == trials  # nothing outside the law's support
    assert stats.chisquare(seen, probs * trials).pvalue > 1e-4


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


# ---------------------------------------------------------------------------
# wire format


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("d", [2, 37, 256, 257, 1024])
def test_wire_format(name, d, rng):
    oracle = bayesldp.make_oracle(name, 1.0, d)
    n = 500
    reports = oracle.privatize(rng.integers(0, d, n), rng)
    assert reports.dtype == oracle.report_dtype
    assert reports.shape == (n, *oracle.report_shape)
    assert reports.flags.c_contiguous
    assert oracle.report_nbytes == reports.nbytes // n
    if name in ("GRR", "HR", "SS"):
        bound = oracle.K if name == "HR" else d
        smallest = next(t for t in (np.uint8, np.uint16, np.uint32) if bound - 1 <= np.iinfo(t).max)
        assert reports.dtype == smallest
        assert reports.max() < bound
    if name == "SS":
        assert reports.shape[1] == oracle.k
        assert np.all(reports[:, 1:] > reports[:, :-1])  # sorted, no repeats
    if name in ("OUE", "SUE"):
        assert reports.dtype == np.uint8 and reports.shape[1] == -(-d // 8)
        bits = np.unpackbits(reports, axis=1)
        assert not bits[:, d:].any()  # padding bits are 0
    if name == "OLH":
        assert reports.dtype == np.uint32 and reports.shape[1] == 3
        assert reports[:, 0].min() >= 1 and reports[:, :2].max() < oracle.prime
        assert reports[:, 2].max() < oracle.g
    # the dtype depends on the parameters only: an empty batch has the same one
    assert oracle.privatize(np.zeros(0, dtype=int), rng).dtype == reports.dtype


def test_unary_bits_in_packbits_order(rng):
    """Item j is bit 7 - j % 8 of byte j // 8: users at eps 30 report their own bit only."""
    oracle = bayesldp.OUE(30.0, 20)
    values = np.arange(20)
    bits = np.unpackbits(oracle.privatize(values, rng), axis=1, count=20)
    own = bits[values, values]
    assert bits.sum() == own.sum()  # q = 9e-14: no other bit is set
    assert 0 < own.mean() < 1  # p = 1/2


def test_smallest_dtypes():
    assert bayesldp.GRR(1.0, 256).report_dtype == np.uint8
    assert bayesldp.GRR(1.0, 257).report_dtype == np.uint16
    assert bayesldp.HR(1.0, 255).report_dtype == np.uint8  # K = 256
    assert bayesldp.HR(1.0, 256).report_dtype == np.uint16  # K = 512
    assert bayesldp.SS(1.0, 70_000).report_dtype == np.uint32


# ---------------------------------------------------------------------------
# strict validation of reports (each of these was silently accepted before)


def test_unary_aggregate_refuses_float_reports():
    """0.5 used to be truncated to 0."""
    for oracle in (bayesldp.OUE(1.0, 16), bayesldp.SUE(1.0, 16)):
        with pytest.raises(ValueError, match="reports"):
            oracle.aggregate(np.full((100, 16), 0.5))
        with pytest.raises(ValueError, match="reports"):
            oracle.aggregate(np.full((100, 2), 0.5))


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


@pytest.mark.parametrize("name", ALL)
def test_support_counts_refuse_anything_but_the_wire_format(name, rng):
    oracle = bayesldp.make_oracle(name, 1.0, 12)
    reports = oracle.privatize(rng.integers(0, 12, 40), rng)
    with pytest.raises(ValueError, match="reports"):
        oracle.support_counts(reports.astype(np.int64))  # another dtype
    with pytest.raises(ValueError, match="reports"):
        oracle.support_counts(reports.astype(np.float64))
    with pytest.raises(ValueError, match="reports"):
        oracle.support_counts(reports[..., None])  # another shape
    with pytest.raises(ValueError, match="reports"):
        oracle.support_counts(reports.tolist())
    with pytest.raises(ValueError, match="at least one"):
        oracle.aggregate(reports[:0])
    np.testing.assert_array_equal(oracle.support_counts(reports[:0]), np.zeros(12, np.int64))


def test_out_of_range_and_malformed_reports(rng):
    grr = bayesldp.GRR(1.0, 12)
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 12\)"):
        grr.support_counts(np.array([0, 12], dtype=np.uint8))
    hr = bayesldp.HR(1.0, 12)
    with pytest.raises(ValueError, match="reports"):
        hr.support_counts(np.array([0, 16], dtype=np.uint8))
    ss = bayesldp.SS(1.0, 12, k=3)
    good = ss.privatize(rng.integers(0, 12, 5), rng)
    for bad in (good[:, ::-1], np.array([[1, 1, 2]], dtype=np.uint8)):
        with pytest.raises(ValueError, match="increasing"):
            ss.support_counts(np.ascontiguousarray(bad))
    with pytest.raises(ValueError, match="reports"):
        ss.support_counts(np.array([[1, 2, 12]], dtype=np.uint8))
    oue = bayesldp.OUE(1.0, 12)
    reports = oue.privatize(rng.integers(0, 12, 5), rng)
    reports[0, 1] |= 0x01  # a padding bit (item 15 of a 12-item domain)
    with pytest.raises(ValueError, match="padding"):
        oue.support_counts(reports)


# ---------------------------------------------------------------------------
# registry and parameters


def test_registry_and_make_oracle():
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]
    assert bayesldp.ORACLES["OLH"].parameter_names == ("g",)
    assert bayesldp.ORACLES["SS"].parameter_names == ("k",)
    olh = bayesldp.make_oracle("olh", 1.0, 100, g=7)
    assert isinstance(olh, bayesldp.OLH) and olh.g == 7
    ss = bayesldp.make_oracle("SS", 1.0, 100, k=9)
    assert ss.k == 9
    assert ss.parameters() == {"name": "SS", "epsilon": 1.0, "domain_size": 100, "k": 9}
    rebuilt = bayesldp.make_oracle(**olh.parameters())
    assert rebuilt.parameters() == olh.parameters()
    with pytest.raises(ValueError, match="'g'"):
        bayesldp.make_oracle("GRR", 1.0, 10, g=3)
    with pytest.raises(ValueError, match=r"'kk'.*accepts.*k"):
        bayesldp.make_oracle("SS", 1.0, 10, kk=3)
    with pytest.raises(ValueError, match="unknown oracle 'XYZ'"):
        bayesldp.make_oracle("XYZ", 1.0, 10)
    with pytest.raises(ValueError, match="g must"):
        bayesldp.make_oracle("OLH", 1.0, 10, g=1)
    with pytest.raises(ValueError, match="g must"):
        bayesldp.make_oracle("OLH", 1.0, 10, g=2.0)
    with pytest.raises(ValueError, match="k must"):
        bayesldp.make_oracle("SS", 1.0, 10, k=10)


def test_register_oracle_refuses_duplicates_and_strangers():
    from bayesldp.oracles import register_oracle

    with pytest.raises(ValueError, match="already registered"):
        register_oracle(type("GRR2", (bayesldp.GRR,), {"name": "GRR"}))
    with pytest.raises(ValueError, match="FrequencyOracle"):
        register_oracle(object)
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]


# ---------------------------------------------------------------------------
# large epsilon: no overflow, exact p and q, a clear error where undefined

LARGE_EPS = [50.0, 100.0, 708.5, 709.7, 710.0, 1000.0]


def _exact_pq(name, eps, d, oracle):
    """Return p and q from their textbook forms, in 80-digit decimal arithmetic."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        e = Decimal(eps).exp()
        if name == "GRR":
            p, q = e / (e + d - 1), 1 / (e + d - 1)
        elif name == "OUE":
            p, q = Decimal("0.5"), 1 / (e + 1)
        elif name == "SUE":
            h = (Decimal(eps) / 2).exp()
            p, q = h / (h + 1), 1 / (h + 1)
        elif name == "HR":
            p, q = e / (e + 1), Decimal("0.5")
        elif name == "SS":
            k = oracle.k
            p = k * e / (k * e + d - k)
            q = p * (k - 1) / (d - 1) + (1 - p) * k / (d - 1)
        else:
            g = oracle.g
            c = Decimal(Fraction(oracle.collision_probability).numerator) / Decimal(
                Fraction(oracle.collision_probability).denominator
            )
            p = e / (e + g - 1)
            q = c * p + (1 - c) / (e + g - 1)
        return float(p), float(q)


@pytest.mark.parametrize("eps", LARGE_EPS)
@pytest.mark.parametrize("name", ALL)
def test_large_epsilon(name, eps, rng):
    d = 40
    oracle = bayesldp.make_oracle(name, eps, d)
    p, q = _exact_pq(name, eps, d, oracle)
    assert oracle.p == pytest.approx(p, rel=1e-13, abs=1e-300)
    assert oracle.q == pytest.approx(q, rel=1e-13, abs=1e-300)
    values = rng.integers(0, d, 2000)
    m = oracle.aggregate(oracle.privatize(values, rng))
    assert m.n == 2000 and np.isfinite(m.estimates).all()
    if name in ("GRR", "SS") or (name == "OLH" and eps >= 100):
        # the truth comes through: own value always supported, others almost never
        assert np.all(m.support_counts >= np.bincount(values, minlength=d))
    sim = oracle.simulate(np.bincount(values, minlength=d), rng)
    assert np.isfinite(sim.estimates).all()
    assert np.isfinite(oracle.variance(np.full(d, 1 / d))).all()


def test_olh_default_g_is_capped_and_explicit_g_checked():
    cap = bayesldp.OLH.max_default_g
    assert bayesldp.OLH(44.0, 10).g == cap  # round(e^44 + 1) has 20 digits
    assert bayesldp.OLH(math.log(cap) - 0.01, 10).g == round(math.exp(math.log(cap) - 0.01) + 1)
    assert bayesldp.OLH(1.0, 10, g=2**31 - 1).g == 2**31 - 1
    with pytest.raises(ValueError, match="g must be <= 2147483647"):
        bayesldp.OLH(1.0, 10, g=2**31)
    with pytest.raises(ValueError, match="domain_size must be at most"):
        bayesldp.OLH(1.0, 2**31)


@pytest.mark.parametrize("eps", [1e-9, 0.01])
def test_small_epsilon_is_accurate(eps):
    """The exp(-eps) forms lose nothing at small eps either."""
    d = 10
    oracle = bayesldp.GRR(eps, d)
    assert oracle.p == pytest.approx(math.exp(eps) / (math.exp(eps) + d - 1), rel=1e-14)
    assert bayesldp.OUE(eps, d).q == pytest.approx(1 / (math.exp(eps) + 1), rel=1e-14)


# ---------------------------------------------------------------------------
# memory stays flat in n


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
    from bayesldp import oracles

    monkeypatch.setattr(oracles, "CHUNK_CELLS", 1 << 12)
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
        assert extra[1] < 64 * oracles.CHUNK_CELLS + (256 << 10), extra


def test_grr_simulate_memory_does_not_grow_with_n(monkeypatch):
    """Exact GRR simulation takes liars a block at a time (was 19 bytes per user)."""
    from bayesldp import oracles

    monkeypatch.setattr(oracles, "CHUNK_CELLS", 1 << 16)
    d, n = 1 << 16, 4_000_000
    oracle = bayesldp.GRR(1.0, d)
    x = np.random.default_rng(0).multinomial(n, np.full(d, 1 / d))
    peak, m = _peak(oracle.simulate, x, np.random.default_rng(1))
    assert m.support_counts.sum() == n
    assert peak < 80 * d + 64 * oracles.CHUNK_CELLS  # < 0.5 byte per user here


TINY_BENCH = ["--domains", "64", "--users", "3000", "--subsample", "20", "--repeat", "1"]
TINY_BENCH += ["--previous-users", "3000", "--grr-d", "1000", "--grr-n", "20000"]


def test_user_side_benchmark_runs_with_tiny_arguments(tmp_path):
    from benchmarks import user_side as bench

    result = bench.main([*TINY_BENCH, "--libraries", "--out", str(tmp_path)])
    ratios = result["ratios"].set_index("oracle")
    assert set(ratios.index) == set(ALL)
    assert (ratios["over_raw_random_bytes"] > 0).all()
    for name in ("user_side.csv", "ratios.csv", "run.json"):
        assert (tmp_path / name).exists()


@pytest.mark.slow
def test_user_side_benchmark_with_the_other_libraries(tmp_path):
    from benchmarks import user_side as bench

    frame = bench.main([*TINY_BENCH, "--out", str(tmp_path)])["user_side"]
    assert {"pure-LDP", "multi-freq-ldpy"} <= set(frame["library"])


@pytest.mark.parametrize("name", ALL)
def test_supports_agrees_with_support_counts(name):
    # The per-report support matrix is the wire format's meaning: its column sums are
    # the support counts, for every oracle (the audit's support event relies on it).
    oracle = bayesldp.make_oracle(name, 1.0, 11)
    reports = oracle.privatize(np.arange(500) % 11, np.random.default_rng(3))
    matrix = oracle.supports(reports, np.arange(11))
    assert matrix.dtype == bool and matrix.shape == (500, 11)
    np.testing.assert_array_equal(matrix.sum(axis=0), oracle.support_counts(reports))
    with pytest.raises(ValueError, match="items"):
        oracle.supports(reports, [11])


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


# ---------------------------------------------------------------------------
# facts about an oracle, declared on its class


def test_oracle_class_lookup():
    from bayesldp.oracles import FrequencyOracle, oracle_class

    for name, cls in bayesldp.ORACLES.items():
        assert oracle_class(name) is cls
        assert oracle_class(name.lower()) is cls
    assert oracle_class("custom", FrequencyOracle) is FrequencyOracle
    assert oracle_class("ss", FrequencyOracle) is bayesldp.SS
    with pytest.raises(ValueError, match=r"unknown oracle 'custom'; name must be one of GRR"):
        oracle_class("custom")
    with pytest.raises(ValueError, match="already registered"):  # case-insensitive names
        bayesldp.oracles.register_oracle(type("Grr2", (bayesldp.GRR,), {"name": "grr"}))


def test_oracle_facts_on_the_classes():
    from bayesldp.measurement import COUNTS_SUM_TO_N
    from bayesldp.oracles import FrequencyOracle

    facts = {
        name: (cls.likelihood_kind, cls.counts_sum_to_n, cls.bootstrap_simulation)
        for name, cls in bayesldp.ORACLES.items()
    }
    marginals = ("binomial", False, "binomial marginals")
    assert facts == {
        "GRR": ("multinomial", True, "exact (GRR mixture form)"),
        "OUE": ("binomial", False, "exact"),
        "SUE": ("binomial", False, "exact"),
        "OLH": marginals,
        "SS": marginals,
        "HR": marginals,
    }
    base = FrequencyOracle
    assert (base.likelihood_kind, base.counts_sum_to_n, base.bootstrap_simulation) == marginals
    assert COUNTS_SUM_TO_N == {"GRR"}
    # Only the oracles with dependent supports override the generic variance.
    own = {name for name, cls in bayesldp.ORACLES.items() if "_count_sum_variances" in vars(cls)}
    assert own == {"GRR", "SS", "HR"}


@pytest.mark.parametrize(
    ("name", "params"), [("GRR", {}), ("OUE", {}), ("SUE", {}), ("SS", {"k": 2}), ("HR", {})]
)
def test_count_sum_variances_by_enumerating_reports(name, params):
    """Var(summed support counts of S) from every report's exact probability.

    For each value u, the number of items of S a report supports has an exact law
    (:func:`_exact_law`, read through the oracle's own ``supports``); the variance of
    the sum over fixed users is sum_u x_u Var(N | u). OLH is left out: its formula is
    the ideal hash's, not its universal family's (see tests/intervals/test_variance.py).
    """
    from bayesldp.intervals import subset_count_variances

    d = 5
    oracle = bayesldp.make_oracle(name, 1.2, d, **params)
    x = np.array([7, 0, 3, 9, 1])
    n = int(x.sum())
    m = oracle.measurement(x, n)  # only n, p, q and d are used
    masks = np.array(
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]],
        dtype=bool,
    )
    brute = np.zeros(len(masks))
    for u in range(d):
        outputs, probs = _exact_law(oracle, u)
        reports = np.stack(
            [
                np.frombuffer(o, dtype=oracle.report_dtype).reshape(oracle.report_shape)
                for o in outputs
            ]
        )
        support = oracle.supports(reports, np.arange(d))
        for i, mask in enumerate(masks):
            hits = support[:, mask].sum(axis=1)
            brute[i] += x[u] * (probs @ hits**2 - (probs @ hits) ** 2)
    f = x / n
    formula = subset_count_variances(m, masks, f)
    np.testing.assert_allclose(formula, brute, rtol=1e-9, atol=1e-12)
    direct = type(oracle).count_sum_variances(m, masks, f, masks @ x)
    np.testing.assert_allclose(direct, brute, rtol=1e-9, atol=1e-12)
    assert direct[-1] == 0.0  # the empty set


class _ToyOracle(bayesldp.FrequencyOracle):
    """A user's own oracle: independent bits with fixed p and q, no facts declared."""

    name = "TOYBITS"
    p, q, report_dtype = 0.7, 0.2, np.dtype(np.uint8)  # class attributes fill the properties

    def _unused(self, *args):
        raise NotImplementedError("the toy only simulates counts")

    _privatize_block = _check_values = _block_counts = _supports = _unused
    _arrow_arrays = _from_arrow_arrays = _unused


def test_a_registered_oracle_gets_the_generic_facts(rng):
    from bayesldp.intervals._bootstrap import bootstrap_counts
    from bayesldp.intervals._variance import subset_count_variance
    from bayesldp.measurement import Measurement, support_count_variance
    from bayesldp.methods._likelihood import likelihood_kind
    from bayesldp.methods.registry import postprocess
    from bayesldp.oracles import ORACLES, oracle_class, register_oracle

    register_oracle(_ToyOracle)
    try:
        assert oracle_class("toybits") is _ToyOracle
        toy = bayesldp.make_oracle("ToyBits", 1.0, 8)
        x = np.array([4000, 2500, 1500, 1000, 500, 300, 100, 100])
        m = toy.simulate(x, rng)
        assert m.oracle == "TOYBITS" and likelihood_kind(m, "auto") == "binomial"
        custom = Measurement.from_support_counts(m.support_counts, m.n, m.p, m.q)
        # the generic variance: independent supports, as for an unregistered "custom"
        idx = [0, 1, 2]
        x_set = m.n * np.clip(m.estimates[idx].sum(), 0, 1)
        expect = support_count_variance(m.n, m.p, m.q, x_set, items=3)
        assert subset_count_variance(m, idx) == pytest.approx(expect, rel=1e-12)
        assert subset_count_variance(custom, idx) == pytest.approx(expect, rel=1e-12)
        base = postprocess(m, "base")
        normal = base.interval(idx, 0.9, method="normal")
        assert normal == postprocess(custom, "base").interval(idx, 0.9, method="normal")
        assert 0 <= normal.lo < normal.hi <= 1
        # the bootstrap simulates binomial marginals
        draws = bootstrap_counts(m, x, np.random.default_rng(4))
        again = np.random.default_rng(4)
        np.testing.assert_array_equal(draws, again.binomial(x, m.p) + again.binomial(m.n - x, m.q))
        estimate = postprocess(m, "norm-sub")
        boot = estimate.interval(idx, 0.9, method="bootstrap")
        assert boot.kind == "bootstrap" and 0 <= boot.lo <= boot.hi <= 1
        assert estimate.bootstrap().info["simulation"] == "binomial marginals"
    finally:
        ORACLES.pop("TOYBITS")
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]


def test_measurement_checks_the_sum_for_one_item_oracles():
    from bayesldp.measurement import COUNTS_SUM_TO_N, Measurement
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
        COUNTS_SUM_TO_N.discard("ONEHOT")
