"""empirical_epsilon: the held-out bound, reports as bytes, custom events, bad input."""

from __future__ import annotations

import itertools
import math
import struct

import numpy as np
import pytest
from scipy import stats

import bayesldp
from bayesldp.audit import (
    AuditResult,
    audit_oracle,
    empirical_epsilon,
    support_event,
)
from benchmarks import audit_power as power

ALL = list(bayesldp.ORACLES)
D = 5  # a small domain: every pair of inputs is searched
SAMPLES = 20_000


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
    from bayesldp.aggregate import read_reports, write_reports_parquet

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
