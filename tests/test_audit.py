"""The empirical epsilon-LDP audit: statistics, oracles, broken oracles, stored layout, CLI."""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np
import pytest
from scipy import stats

import bayesldp
from bayesldp import audit
from bayesldp.audit import (
    AuditResult,
    audit_oracle,
    clopper_pearson,
    empirical_epsilon,
    position_event,
    support_event,
)
from bayesldp.cli import main
from benchmarks import audit_power as power

ALL = list(bayesldp.ORACLES)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
D = 5  # the review's setting (eps = 1, d = 5)
SAMPLES = 20_000


# ---------------------------------------------------------------------------
# Clopper-Pearson against scipy


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [1, 7, 50, 1000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.995])
def test_clopper_pearson_matches_scipy_binomtest(alternative, n, confidence):
    ks = np.unique(np.linspace(0, n, 9).round().astype(int))
    low, high = clopper_pearson(ks, n, confidence, alternative=alternative)
    for k, lo, hi in zip(ks, low, high, strict=True):
        ref = stats.binomtest(int(k), n, alternative=alternative).proportion_ci(
            confidence_level=confidence, method="exact"
        )
        assert lo == pytest.approx(ref.low, abs=1e-12)
        assert hi == pytest.approx(ref.high, abs=1e-12)
        # scalar form agrees with the vector form
        assert clopper_pearson(int(k), n, confidence, alternative=alternative) == (
            pytest.approx(lo, abs=1e-15),
            pytest.approx(hi, abs=1e-15),
        )


def test_clopper_pearson_one_sided_beta_quantiles():
    n, k, conf = 200, 13, 0.99
    low, _ = clopper_pearson(k, n, conf, alternative="greater")
    _, high = clopper_pearson(k, n, conf, alternative="less")
    assert low == pytest.approx(stats.beta.ppf(0.01, k, n - k + 1), rel=1e-12)
    assert high == pytest.approx(stats.beta.ppf(0.99, k + 1, n - k), rel=1e-12)
    assert clopper_pearson(0, n, conf)[0] == 0.0
    assert clopper_pearson(n, n, conf)[1] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"successes": 3, "trials": 0}, "trials"),
        ({"successes": 3, "trials": 2.0}, "trials"),
        ({"successes": 5, "trials": 4}, "successes"),
        ({"successes": 1.5, "trials": 4}, "successes"),
        ({"successes": 1, "trials": 4, "confidence": 1.0}, "confidence"),
        ({"successes": 1, "trials": 4, "confidence": True}, "confidence"),
        ({"successes": 1, "trials": 4, "alternative": "up"}, "alternative"),
    ],
)
def test_clopper_pearson_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        clopper_pearson(**kwargs)


# ---------------------------------------------------------------------------
# the held-out bound is what it says


def test_lower_bound_is_the_clopper_pearson_ratio_of_the_held_out_counts():
    res = audit_oracle(bayesldp.GRR(1.0, D), samples=SAMPLES, rng=3)
    n = res.holdout
    assert n == SAMPLES - SAMPLES // 2
    alpha = 1 - res.confidence
    y_a, y_b = res.counts
    low_a = stats.beta.ppf(alpha / 2, y_a, n - y_a + 1)
    up_b = stats.beta.ppf(1 - alpha / 2, y_b + 1, n - y_b)
    assert res.epsilon_lower == pytest.approx(max(0.0, math.log(low_a / up_b)), rel=1e-10)
    assert res.epsilon_hat == pytest.approx(math.log(y_a / y_b), rel=1e-12)
    # GRR's worst event is "report = a": p / q = e^eps, and it is the one selected
    assert res.event in ("bytes", "support")
    assert res.claimed_epsilon == 1.0 and res.contradicted is False and res.passed()


def test_result_is_reproducible_and_frozen():
    a = audit_oracle(bayesldp.OUE(1.0, 4), samples=4000, rng=7)
    b = audit_oracle(bayesldp.OUE(1.0, 4), samples=4000, rng=np.random.default_rng(7))
    assert a == b
    with pytest.raises(AttributeError):
        a.epsilon_lower = 0.0  # type: ignore[misc]
    assert isinstance(a, AuditResult)
    assert a.passed(10.0) and not a.passed(0.0)


# ---------------------------------------------------------------------------
# correct oracles pass, broken ones are flagged


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("name", ALL)
def test_correct_oracles_pass_and_the_audit_is_tight(name, eps):
    res = audit_oracle(bayesldp.make_oracle(name, eps, D), samples=SAMPLES, rng=11)
    assert res.passed() and not res.contradicted, res.summary()
    assert res.epsilon_lower <= eps
    # tight: every pure oracle has an event of ratio exactly e^eps, and the audit finds it.
    # With 10,000 held-out users per input the log-ratio of the selected event has a
    # standard error of about 0.03-0.06, and the 99% bound sits ~2.3 of them lower:
    # a correct, tight audit is within 0.3 of eps (0.1 eps at large eps, where the
    # selected event under b is rare).
    assert abs(res.epsilon_hat - eps) < 0.3, res.summary()
    assert res.epsilon_lower > eps - max(0.3, 0.1 * eps), res.summary()


@pytest.mark.parametrize("eps", [0.5, 4.0])
@pytest.mark.parametrize("name", ALL)
def test_inflated_epsilon_is_detected(name, eps):
    cheat = power.inflated_oracle(name, eps, D, factor=2.0)
    assert cheat.epsilon == eps
    res = audit_oracle(cheat, samples=SAMPLES, rng=5)
    assert res.contradicted and not res.passed(), res.summary()
    assert res.epsilon_lower > eps


@pytest.mark.parametrize("eps", EPSILONS)
def test_ordered_subset_selection_is_detected(eps):
    """The old SS (own item in slot 0): its set is eps-LDP, its transmitted list is not."""
    leaky = power.OrderedSS(eps, D, k=2)
    res = audit_oracle(leaky, samples=SAMPLES, rng=5)
    assert res.contradicted, res.summary()
    assert res.counts[1] == 0  # an output impossible under b: infinite likelihood ratio
    assert res.epsilon_hat == math.inf
    # the same reports, sorted (the set), pass
    fixed = empirical_epsilon(
        lambda v, r: np.sort(leaky.privatize(v, r), axis=1),
        range(D),
        samples=SAMPLES,
        rng=5,
        event=[None, support_event(leaky)],
        epsilon=eps,
    )
    assert not fixed.contradicted, fixed.summary()


def test_order_leak_found_at_large_domain_by_the_position_event():
    """At d = 40 the raw outputs barely repeat; the slots of a and b still show the leak."""
    leaky = power.OrderedSS(1.0, 40, k=4)
    res = audit_oracle(leaky, inputs=[0, 1, 2], samples=SAMPLES, rng=1)
    assert res.contradicted and res.event == "position", res.summary()


# ---------------------------------------------------------------------------
# reports as bytes


def test_sequence_of_bytes_equals_array_form():
    oracle = bayesldp.SS(0.5, D)
    as_array = empirical_epsilon(oracle.privatize, range(D), samples=6000, rng=2)
    as_bytes = empirical_epsilon(
        lambda v, r: [row.tobytes() for row in oracle.privatize(v, r)],
        range(D),
        samples=6000,
        rng=2,
    )
    assert (as_array.epsilon_lower, as_array.counts, as_array.pair, as_array.output) == (
        as_bytes.epsilon_lower,
        as_bytes.counts,
        as_bytes.pair,
        as_bytes.output,
    )


def test_dtype_is_part_of_the_report():
    """Same values, but input 0 is sent as int32 and the others as int64: not LDP."""
    grr = bayesldp.GRR(1.0, 3)

    def privatize(values, rng):
        out = grr.privatize(values, rng)
        return out.astype(np.int32) if values[0] == 0 else out

    res = empirical_epsilon(privatize, range(3), samples=4000, rng=0, epsilon=1.0)
    assert res.contradicted and res.epsilon_hat == math.inf


def test_custom_event_and_description():
    oue = bayesldp.OUE(1.0, 16)

    def bits(reports, a, b):
        return np.unpackbits(reports, axis=1, count=16)[:, [a, b]]

    res = empirical_epsilon(oue.privatize, [0, 5, 9], samples=SAMPLES, rng=0, event=bits)
    assert res.event == "bits"
    assert res.output in (b"\x01\x00", b"\x00\x01")
    assert 0.75 < res.epsilon_lower <= 1.0
    # the raw 16-bit outputs alone have much less power (each has a small probability)
    raw = empirical_epsilon(oue.privatize, [0, 5, 9], samples=SAMPLES, rng=0)
    assert raw.epsilon_lower < res.epsilon_lower


@pytest.mark.parametrize("name", ALL)
def test_support_event_matches_support_counts(name, rng):
    oracle = bayesldp.make_oracle(name, 1.0, 6)
    reports = oracle.privatize(rng.integers(0, 6, 300), rng)
    ev = support_event(oracle)
    fast = ev.supports(reports, range(6))
    slow = np.stack([oracle.support_counts(reports[i : i + 1]) > 0 for i in range(300)])
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(ev(reports, 2, 4), slow[:, [2, 4]].astype(np.uint8))


def test_position_event():
    r = np.array([[3, 1], [1, 3], [0, 2], [2, 3]])
    keys = position_event()(r, 1, 3)
    np.testing.assert_array_equal(keys, [[1, 0], [0, 1], [-1, -1], [-1, 1]])


# ---------------------------------------------------------------------------
# input validation


def _grr(values, rng):
    return bayesldp.GRR(1.0, 3).privatize(values, rng)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"privatize": 3}, "privatize"),
        ({"inputs": [1]}, "inputs"),
        ({"inputs": [1, 1]}, "inputs"),
        ({"inputs": [[0, 1]]}, "inputs"),
        ({"inputs": [0.0, 1.0]}, "inputs"),
        ({"inputs": [True, False]}, "inputs"),
        ({"samples": 1}, "samples"),
        ({"samples": 100.0}, "samples"),
        ({"samples": True}, "samples"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0}, "confidence"),
        ({"confidence": "0.9"}, "confidence"),
        ({"rng": "seed"}, "rng"),
        ({"rng": -1}, "rng"),
        ({"event": 5}, "event"),
        ({"event": []}, "event"),
        ({"event": [None, 4]}, "event"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": "1"}, "epsilon"),
        ({"progress": 1}, "progress"),
        ({"privatize": lambda v, r: np.zeros((len(v) + 1, 2))}, "privatize"),
        ({"privatize": lambda v, r: np.empty(len(v), dtype=object)}, "privatize"),
        ({"privatize": lambda v, r: [str(x) for x in v]}, "privatize"),
        ({"privatize": lambda v, r: {"reports": v}}, "privatize"),
        ({"event": lambda rep, a, b: [1, 2]}, "event"),
    ],
)
def test_empirical_epsilon_bad_input(kwargs, name):
    args = {"privatize": _grr, "inputs": [0, 1, 2], "samples": 10, **kwargs}
    with pytest.raises(ValueError, match=name):
        empirical_epsilon(args.pop("privatize"), args.pop("inputs"), **args)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"oracle": "GRR"}, "oracle"),
        ({"inputs": [0, 7]}, "inputs"),
        ({"inputs": [0, 1, 1]}, "inputs"),
        ({"samples": 0}, "samples"),
    ],
)
def test_audit_oracle_bad_input(kwargs, name):
    args = {"oracle": bayesldp.GRR(1.0, 4), **kwargs}
    with pytest.raises(ValueError, match=name):
        audit_oracle(args.pop("oracle"), **args)


def test_default_inputs():
    np.testing.assert_array_equal(audit.default_inputs(5), np.arange(5))
    big = audit.default_inputs(1000)
    assert big.size == 8 and big[0] == 0 and big[-1] == 999
    with pytest.raises(ValueError, match="domain_size"):
        audit.default_inputs(1)


# ---------------------------------------------------------------------------
# the stored layout (Parquet rows as bytes)


def _encode(value) -> bytes:
    """Self-delimiting bytes of one Arrow value (as_py), whatever its type."""
    if value is None:
        return b"N"
    if isinstance(value, bytes):
        return b"B" + struct.pack("<I", len(value)) + value
    if isinstance(value, str):
        return b"S" + _encode(value.encode())
    if isinstance(value, bool):
        return b"T" if value else b"F"
    if isinstance(value, int):
        return b"I" + value.to_bytes(16, "little", signed=True)
    if isinstance(value, float):
        return b"D" + struct.pack("<d", value)
    if isinstance(value, list | tuple):
        return b"L" + struct.pack("<I", len(value)) + b"".join(_encode(v) for v in value)
    if isinstance(value, dict):
        return b"M" + b"".join(_encode(k) + _encode(v) for k, v in value.items())
    raise TypeError(f"cannot encode {type(value).__name__}")


def _stored(oracle, folder):
    """Privatize, then return the rows the Parquet writer stored, each as its values' bytes.

    Also returns a lookup from those bytes to what the server decodes from the row
    (its support vector), a fixed function of the stored row.
    """
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from bayesldp.dask_aggregate import read_reports, write_reports_parquet

    calls = itertools.count()
    decoded: dict[bytes, np.ndarray] = {}
    full = support_event(oracle)

    def privatize(values, rng):
        out = folder / f"call{next(calls)}"
        files = write_reports_parquet(oracle, values, rng, out, chunk_size=values.size)
        table = pa.concat_tables([pq.read_table(f) for f in files])
        columns = [table.column(c).to_pylist() for c in table.column_names]
        rows = [b"".join(_encode(col[i]) for col in columns) for i in range(table.num_rows)]
        supports = full.supports(read_reports(files, oracle), range(oracle.domain_size))
        for row, sup in zip(rows, supports, strict=True):
            decoded.setdefault(row, sup)
        return rows

    def server_support(rows, a, b):
        return np.array([decoded[r][[a, b]] for r in rows], dtype=np.uint8)

    return privatize, server_support


@pytest.mark.parametrize("name", ALL)
def test_stored_parquet_rows_pass(name, tmp_path):
    eps, d = 1.0, 4
    oracle = bayesldp.make_oracle(name, eps, d)
    privatize, server_support = _stored(oracle, tmp_path)
    res = empirical_epsilon(
        privatize,
        range(d),
        samples=8000,
        rng=2,
        event=[None, server_support],
        epsilon=eps,
    )
    assert not res.contradicted, res.summary()
    assert res.epsilon_lower > 0.5, res.summary()  # the audit had power


def test_stored_parquet_rows_of_the_ordered_ss_fail(tmp_path):
    leaky = power.OrderedSS(1.0, 4, k=2)
    privatize, _ = _stored(leaky, tmp_path)
    res = empirical_epsilon(privatize, range(4), samples=4000, rng=2, epsilon=1.0)
    assert res.contradicted and res.counts[1] == 0, res.summary()


# ---------------------------------------------------------------------------
# command line


def _cheat_grr():
    class CheatGRR(bayesldp.GRR):
        def privatize(self, values, rng):
            return bayesldp.GRR(2 * self.epsilon, self.domain_size).privatize(values, rng)

    return CheatGRR


def test_cli_audit_passes(capsys):
    code = main(["audit", "--oracle", "oue", "--epsilon", "1", "--d", "3", "--samples", "6000"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.count("\n") == 1 and "consistent with eps = 1" in out
    assert "eps_hat" in out and "lower bound" in out
    assert "3/3" in err  # the progress bar, on stderr


def test_cli_audit_flags_a_violation(capsys, monkeypatch):
    monkeypatch.setitem(bayesldp.ORACLES, "GRR", _cheat_grr())
    code = main(["audit", "--oracle", "GRR", "--epsilon", "1", "--d", "3", "--samples", "6000"])
    out, _ = capsys.readouterr()
    assert code == 1 and "VIOLATES eps = 1" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--oracle", "XYZ", "--epsilon", "1", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "0", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "-1", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "abc", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "1"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--samples", "1"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--confidence", "1.5"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--seed", "-3"],
    ],
)
def test_cli_audit_user_errors(argv, capsys):
    with pytest.raises(SystemExit) as stop:  # every command: one line, exit code 2
        main(["audit", *argv])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "error" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------
# false alarms and power over many seeds


@pytest.mark.slow
def test_false_alarm_rate_over_many_seeds():
    """At confidence 0.99 at most 1% of audits of a correct oracle may flag it."""
    seeds = 10
    flagged = total = 0
    for name, eps in itertools.product(ALL, EPSILONS):
        oracle = bayesldp.make_oracle(name, eps, D)
        for seed in range(seeds):
            res = audit_oracle(oracle, samples=10_000, rng=1000 + seed)
            flagged += bool(res.contradicted)
            total += 1
    # P(Binomial(240, 0.01) > 7) < 0.5%: more than 7 would contradict the guarantee
    assert flagged <= stats.binom.ppf(0.995, total, 0.01), (flagged, total)


@pytest.mark.slow
def test_power_over_many_seeds():
    seeds = 10
    for name, eps in itertools.product(ALL, EPSILONS):
        cheat = power.inflated_oracle(name, eps, D, factor=2.0)
        hits = sum(
            bool(audit_oracle(cheat, samples=10_000, rng=seed).contradicted)
            for seed in range(seeds)
        )
        assert hits == seeds, (name, eps, hits)
