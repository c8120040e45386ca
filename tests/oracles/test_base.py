"""Every registered oracle: privacy, exact laws, simulation, wire format, supports."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import bayesldp
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


def test_smallest_dtypes():
    assert bayesldp.GRR(1.0, 256).report_dtype == np.uint8
    assert bayesldp.GRR(1.0, 257).report_dtype == np.uint16
    assert bayesldp.HR(1.0, 255).report_dtype == np.uint8  # K = 256
    assert bayesldp.HR(1.0, 256).report_dtype == np.uint16  # K = 512
    assert bayesldp.SS(1.0, 70_000).report_dtype == np.uint32


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


@pytest.mark.parametrize(
    ("name", "params"), [("GRR", {}), ("OUE", {}), ("SUE", {}), ("SS", {"k": 2}), ("HR", {})]
)
def test_count_sum_variances_by_enumerating_reports(name, params):
    """Var(summed support counts of S) from every report's exact probability.

    For each value u, the number of items of S a report supports has an exact law
    (:func:`_exact_law`, read through the oracle's own ``supports``); the variance of
    the sum over fixed users is sum_u x_u Var(N | u). OLH is left out: its formula is
    the ideal hash's, not its universal family's (see tests/test_intervals.py).
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


# ---------------------------------------------------------------------------
# rng, work bounds and hostile input of the public entry points

HUGE = 10**15  # users: a round no per-user simulation finishes


@pytest.mark.parametrize("name", ALL)
def test_rng_is_a_generator_or_an_integer_seed(name):
    oracle = bayesldp.make_oracle(name, 1.0, 6)
    counts = np.array([50, 30, 10, 5, 3, 2])
    seeded = oracle.simulate(counts, 7)
    again = oracle.simulate(counts, np.random.default_rng(7))
    np.testing.assert_array_equal(seeded.support_counts, again.support_counts)
    values = np.repeat(np.arange(6), counts)
    np.testing.assert_array_equal(
        oracle.privatize(values, 3), oracle.privatize(values, np.random.default_rng(3))
    )
    m = oracle.aggregate(oracle.privatize(values, 3))
    np.testing.assert_array_equal(
        type(oracle).bootstrap_counts(m, counts, 5),
        type(oracle).bootstrap_counts(m, counts, np.random.default_rng(5)),
    )
    for bad in ("7", -1, 1.5, True):
        with pytest.raises(ValueError, match="rng"):
            oracle.simulate(counts, bad)
        with pytest.raises(ValueError, match="rng"):
            oracle.privatize(values, bad)


@pytest.mark.parametrize("name", ["GRR", "OLH", "SS", "HR"])
def test_simulate_refuses_work_beyond_the_stated_limit(name, monkeypatch):
    """exact=True works user by user for these oracles: beyond the limit it refuses."""
    oracle = bayesldp.make_oracle(name, 1.0, 8)
    counts = np.full(8, 1000)
    monkeypatch.setattr(type(oracle), "simulation_cell_limit", 1000, raising=False)
    with pytest.raises(ValueError, match=r"exact=False.*|limit"):
        oracle.simulate(counts, 0)
    m = oracle.simulate(counts, 0, exact=False)  # O(d) whatever n
    assert m.n == 8000


@pytest.mark.parametrize("name", ALL)
def test_a_huge_round_is_refused_or_drawn_in_o_d(name):
    oracle = bayesldp.make_oracle(name, 1.0, 8)
    counts = np.full(8, HUGE // 8)
    if name in ("OUE", "SUE"):  # independent bits: exact binomials in O(d)
        assert oracle.simulate(counts, 0).n == HUGE
    else:
        with pytest.raises(ValueError, match="exact=False"):
            oracle.simulate(counts, 0)
    m = oracle.simulate(counts, 0, exact=False)
    assert m.n == HUGE and np.all(np.isfinite(m.estimates))
    if name == "GRR":
        assert m.support_counts.sum() == HUGE  # the mixture form keeps one item per report


def test_grr_exact_false_draws_the_same_law(rng):
    """GRR's mixture form (exact=False) against the user-by-user draw: mean and variance."""
    oracle = bayesldp.GRR(1.0, 5)
    counts = np.array([400, 300, 200, 80, 20])
    reps = 1500
    per_user = np.array([oracle.simulate(counts, rng).support_counts for _ in range(reps)])
    mixture = np.array(
        [oracle.simulate(counts, rng, exact=False).support_counts for _ in range(reps)]
    )
    assert np.all(mixture.sum(axis=1) == counts.sum())
    se = np.sqrt(per_user.var(axis=0) / reps + mixture.var(axis=0) / reps)
    assert np.all(np.abs(per_user.mean(axis=0) - mixture.mean(axis=0)) < 5 * se)
    ratio = mixture.var(axis=0, ddof=1) / per_user.var(axis=0, ddof=1)
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(4 / reps)), ratio


@pytest.mark.parametrize("name", ALL)
def test_variance_arguments_are_checked(name):
    oracle = bayesldp.make_oracle(name, 1.0, 4)
    with pytest.raises(ValueError, match="frequencies"):
        oracle.variance([math.nan, 2.0])
    for bad in ([0.5, 2.0], [-0.1], [True, False], ["a"], [math.inf]):
        with pytest.raises(ValueError, match="frequencies"):
            oracle.variance(bad)
    for bad in (0, -3, 2.5, True, "10", None):
        with pytest.raises(ValueError, match="n"):
            oracle.approx_variance(n=bad)
    assert oracle.approx_variance(10) == pytest.approx(oracle.approx_variance() / 10)
    np.testing.assert_allclose(oracle.variance([0.0, 1.0]), oracle.variance(np.array([0, 1])))


@given(
    name=st.sampled_from(ALL),
    frequencies=st.one_of(
        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6),
        st.lists(st.one_of(st.booleans(), st.integers(-3, 3), st.text(max_size=2)), max_size=4),
        hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)),
    ),
    n=st.one_of(st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.none()),
)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_variances_under_hostile_input(name, frequencies, n):
    oracle = bayesldp.make_oracle(name, 1.0, 4)
    var = _outcome(lambda: oracle.variance(frequencies), "frequencies")
    if var is not None:
        assert np.all(np.isfinite(var)) and np.all(var >= 0)
    approx = _outcome(lambda: oracle.approx_variance(n), "n")
    if approx is not None:
        assert math.isfinite(approx) and approx >= 0


@given(
    name=st.sampled_from(ALL),
    rng=st.one_of(
        st.integers(-5, 2**64),
        st.floats(),
        st.booleans(),
        st.text(max_size=3),
        st.sampled_from([np.int64(3), np.uint8(2), np.float64(1.0), np.bool_(True)]),
    ),
    exact=st.one_of(st.booleans(), st.integers(-1, 2), st.none()),
)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_simulate_under_hostile_rng_and_exact(name, rng, exact):
    oracle = bayesldp.make_oracle(name, 1.0, 4)
    m = _outcome(lambda: oracle.simulate([5, 3, 2, 1], rng, exact=exact), "rng", "exact")
    if m is not None:
        assert m.n == 11 and np.all(np.isfinite(m.estimates))
    reports = _outcome(lambda: oracle.privatize([0, 1, 3], rng), "rng")
    if reports is not None:
        assert reports.shape[0] == 3


def _outcome(call, *names):
    """Run ``call``; a ValueError must name one of ``names``. Returns the result or None."""
    try:
        return call()
    except ValueError as err:
        assert any(name in str(err) for name in names), str(err)
        return None
