"""The shared pieces of every ``Uncertainty`` (bayesldp._draws) and their users.

``check_draw_range`` (the one check of ``sample(start, stop)``), ``row_generator`` (the
one per-row random stream) and ``cached_rows`` (the one row cache, limit
``ROW_CACHE_MAX_BYTES``), and the implementations that use them: ``StoredDraws``, the
parametric bootstrap and eb-npmle's posterior draws (the item-posterior draws of the
PyMC models are tested in tests/test_draws.py).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesldp
import bayesldp.intervals._bootstrap as bootstrap_module
from bayesldp import datasets, intervals
from bayesldp._draws import ROW_CACHE_MAX_BYTES, cached_rows, check_draw_range, row_generator
from bayesldp.empirical_bayes import eb_npmle
from bayesldp.empirical_bayes._posterior import PosteriorTable
from bayesldp.estimate import StoredDraws, Uncertainty

# reproducible property tests (the same cases on every run)
PROPERTY = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
ARGUMENT = st.one_of(
    st.integers(-3, 12), st.floats(), st.booleans(), st.none(), st.text(max_size=2)
)


class Counting:
    """A row generator that records the ranges it is asked for (row i = i + column / 10)."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.calls: list[tuple[int, int]] = []

    def __call__(self, start: int, stop: int) -> np.ndarray:
        self.calls.append((start, stop))
        return np.arange(start, stop)[:, None] + np.arange(self.d) / 10


# ---------------------------------------------------------------------------
# cached_rows


def test_cached_rows_generates_every_row_once():
    cache: dict = {}
    gen = Counting(4)
    first = cached_rows(cache, gen, 2, 5, 10, 4)
    second = cached_rows(cache, gen, 0, 10, 10, 4)
    third = cached_rows(cache, gen, 7, 7, 10, 4)
    assert gen.calls == [(0, 10)]  # the first query generated all rows; the others read them
    np.testing.assert_array_equal(first, gen(2, 5))
    np.testing.assert_array_equal(second, gen(0, 10))
    assert third.shape == (0, 4)
    assert np.shares_memory(first, cache["rows"])  # a view of the cache, not a copy


def test_cached_rows_are_read_only_cached_or_not(monkeypatch):
    cached = cached_rows({}, Counting(3), 1, 4, 6, 3)
    with pytest.raises(ValueError, match="read-only"):
        cached[0, 0] = -1.0
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    fresh = cached_rows({}, Counting(3), 1, 4, 6, 3)
    with pytest.raises(ValueError, match="read-only"):
        fresh[0, 0] = -1.0
    np.testing.assert_array_equal(cached, fresh)


def test_above_the_limit_only_the_rows_asked_for_are_generated(monkeypatch):
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    cache: dict = {}
    gen = Counting(4)
    cached_rows(cache, gen, 2, 5, 10, 4)
    cached_rows(cache, gen, 2, 5, 10, 4)
    assert gen.calls == [(2, 5), (2, 5)]
    assert cache == {}


def test_the_limit_is_in_bytes_of_the_whole_float64_array(monkeypatch):
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 10 * 4 * 8)
    at_limit, above = Counting(4), Counting(5)
    cached_rows({}, at_limit, 0, 1, 10, 4)
    cached_rows({}, above, 0, 1, 10, 5)
    assert at_limit.calls == [(0, 10)] and above.calls == [(0, 1)]
    assert 1000 * 42178 * 8 <= ROW_CACHE_MAX_BYTES  # the default keeps wordfreq's draws


def test_cached_rows_checks_the_range_before_generating():
    gen = Counting(2)
    with pytest.raises(ValueError, match="stop"):
        cached_rows({}, gen, 0, 11, 10, 2)
    assert gen.calls == []


# ---------------------------------------------------------------------------
# check_draw_range


@pytest.mark.parametrize(
    "start, stop, name",
    [
        (-1, 3, "start must be >= 0"),
        (11, 11, "start must be <= 10"),
        (0, 11, "stop must be <= 10"),
        (5, 3, "stop must be >= 5"),
        (True, 3, "start must be an integer"),
        (0, 2.0, "stop must be an integer"),
        ("0", 2, "start must be an integer"),
        (0, None, "stop must be an integer"),
        (np.bool_(False), 1, "start must be an integer"),
    ],
)
def test_check_draw_range_names_the_argument(start, stop, name):
    with pytest.raises(ValueError, match=name):
        check_draw_range(start, stop, 10)


def test_check_draw_range_returns_python_ints():
    out = check_draw_range(np.int64(2), np.int32(10), 10)
    assert out == (2, 10) and all(type(v) is int for v in out)
    assert check_draw_range(0, 0, 0) == (0, 0)


@PROPERTY
@given(
    start=st.integers(min_value=-5, max_value=40),
    stop=st.integers(min_value=-5, max_value=40),
    n_draws=st.integers(min_value=0, max_value=30),
)
def test_check_draw_range_accepts_exactly_the_valid_ranges(start, stop, n_draws):
    valid = 0 <= start <= stop <= n_draws
    try:
        out = check_draw_range(start, stop, n_draws)
    except ValueError as err:
        assert not valid, err
        assert str(err).startswith(("start ", "stop ")), err
    else:
        assert valid and out == (start, stop)


@PROPERTY
@given(start=ARGUMENT, stop=ARGUMENT)
def test_every_implementation_checks_the_range_the_same_way(start, stop, eb_estimates):
    """StoredDraws and the generated draws accept and refuse the same ranges, same message."""
    draws = [StoredDraws(np.zeros((10, 3))), *(e.uncertainty for e in eb_estimates.values())]
    draws.append(eb_estimates["plug-in"].bootstrap(10, rng=0))
    outcomes = []
    for unc in draws:
        assert unc.n_draws == 10
        try:
            outcomes.append(unc.sample(start, stop).shape[0])
        except ValueError as err:
            outcomes.append(str(err))
    assert len(set(outcomes)) == 1, outcomes
    try:
        expected = check_draw_range(start, stop, 10)
    except ValueError as err:
        assert outcomes[0] == str(err)
    else:
        assert outcomes[0] == expected[1] - expected[0]


# ---------------------------------------------------------------------------
# row_generator: the same streams as the three copies it replaces


def test_row_generator_streams_are_unchanged():
    # values of the former models.draws.row_generator(2024, 7) and
    # empirical_bayes._row_generator(2024, 0, 3) / (2024, 1, 7) (commit 4f092dc)
    assert row_generator(2024, 7).random(3).tolist() == [
        0.2822917608210648,
        0.9195807427523072,
        0.36366004736483815,
    ]
    assert row_generator(2024, 0, 3).random(3).tolist() == [
        0.5789322879212039,
        0.6067833489673788,
        0.8297489494491664,
    ]
    assert row_generator(2024, 1, 7).random(3).tolist() == [
        0.1514449478448896,
        0.407699177909712,
        0.4020697578644785,
    ]
    # and the parametric bootstrap's former default_rng(SeedSequence(seed, spawn_key=(i,)))
    old = np.random.default_rng(np.random.SeedSequence(2024, spawn_key=(7,)))
    assert (
        row_generator(2024, 7).integers(2**62, size=4).tolist()
        == old.integers(2**62, size=4).tolist()
    )


# ---------------------------------------------------------------------------
# The implementations


@pytest.fixture(scope="module")
def eb_estimates():
    data = datasets.zipf(1.5, 40, 20_000, rng=0)
    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            kind: eb_npmle(m, uncertainty=kind, n_draws=10, n_boot=2, rng=3)
            for kind in ("plug-in", "bootstrap")
        }


def _fresh(est):
    """Return the same draws in a new object, with an empty cache."""
    return dataclasses.replace(est.uncertainty)


@pytest.mark.parametrize("kind", ["plug-in", "bootstrap"])
def test_eb_draws_are_generated_once_and_cached(kind, eb_estimates, monkeypatch):
    unc = _fresh(eb_estimates[kind])
    calls = []
    draw = PosteriorTable.draw

    def counting(self, rng, n):
        calls.append(1)
        return draw(self, rng, n)

    monkeypatch.setattr(PosteriorTable, "draw", counting)
    rows = unc.sample(2, 5)
    assert len(calls) == 10  # every row, once
    np.testing.assert_array_equal(unc.sample(0, 10)[2:5], rows)
    assert len(calls) == 10  # the second query regenerated nothing
    with pytest.raises(ValueError, match="read-only"):
        rows[0, 0] = 1.0
    # without the cache: the rows asked for, at every query, with the same values
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    lazy = _fresh(eb_estimates[kind])
    calls.clear()
    np.testing.assert_array_equal(lazy.sample(2, 5), rows)
    np.testing.assert_array_equal(lazy.sample(2, 5), rows)
    assert len(calls) == 6
    assert not lazy.sample(2, 5).flags.writeable


def test_eb_plug_in_rows_are_the_former_rows(eb_estimates):
    """Row i is the posterior table's draw from SeedSequence(seed, spawn_key=(i,)), as before."""
    unc = eb_estimates["plug-in"].uncertainty
    for i in (0, 7):
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(unc.seed, spawn_key=(i,))))
        np.testing.assert_array_equal(unc.sample(i, i + 1)[0], unc.table.draw(gen, unc.n))


@pytest.mark.parametrize("kind", ["plug-in", "bootstrap"])
def test_eb_intervals_are_the_same_cached_or_not(kind, eb_estimates, monkeypatch):
    est = eb_estimates[kind]
    sets = [np.arange(10), np.array([0]), np.arange(5, 40)]
    cached = [est.interval(s, 0.9, method="posterior") for s in sets]
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    lazy = dataclasses.replace(est, uncertainty=_fresh(est))
    assert [tuple(lazy.interval(s, 0.9, method="posterior")) for s in sets] == [
        tuple(c) for c in cached
    ]


def test_parametric_bootstrap_caches_through_cached_rows(monkeypatch):
    m = bayesldp.OUE(1.0, 30).simulate(np.arange(30) * 10 + 5, np.random.default_rng(1))
    est = bayesldp.postprocess(m, "norm-sub")
    calls = []
    simulate = bootstrap_module.bootstrap_counts

    def counting(*args):
        calls.append(1)
        return simulate(*args)

    monkeypatch.setattr(bootstrap_module, "bootstrap_counts", counting)
    boot = intervals.ParametricBootstrap(est, 20, rng=4)
    rows = boot.sample(3, 6)
    boot.sample(0, 20)
    assert len(calls) == 20 and boot.info["seconds"] > 0
    with pytest.raises(ValueError, match="read-only"):
        rows[0, 0] = 1.0
    monkeypatch.setattr("bayesldp._draws.ROW_CACHE_MAX_BYTES", 0)
    lazy = intervals.ParametricBootstrap(est, 20, rng=4)
    calls.clear()
    np.testing.assert_array_equal(lazy.sample(3, 6), rows)
    assert len(calls) == 3 and lazy.info["seconds"] is None  # nothing cached, nothing timed
    assert not lazy.sample(3, 6).flags.writeable
    # replicate i is simulated from SeedSequence(seed, spawn_key=(i,)), as before
    old = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(5,)))
    expected = simulate(m, boot.counts_fitted, old)
    np.testing.assert_array_equal(boot.counts(5, 6)[0], expected)


def test_stored_draws_are_a_read_only_view():
    values = np.arange(12.0).reshape(4, 3)
    unc = StoredDraws(values)
    assert isinstance(unc, Uncertainty)
    rows = unc.sample(1, 3)
    assert np.shares_memory(rows, values) and not rows.flags.writeable
    values[1, 0] = -1.0  # the owner's array stays writable
    assert rows[0, 0] == -1.0
