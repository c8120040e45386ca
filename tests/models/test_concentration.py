"""The Dirichlet models' concentration: its start, its prior, its moment estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import bayesldp

pm = pytest.importorskip("pymc")

from tests.models.common import (  # noqa: E402
    oracle_measurements,
)


def test_concentration_start_recovers_a_dirichlet_concentration():
    # Brute force: frequencies drawn from Dirichlet(a), measured by OUE with many users;
    # the moment estimate is where the chains start, so a factor of 2 is close enough.
    from bayesldp.models import _concentration

    rng = np.random.default_rng(3)
    for a in (0.01, 0.1, 1.0):
        f = _concentration.dirichlet_draws(np.full((1, 2000), a), rng)[0]
        n = 10**7
        m = bayesldp.OUE(2.0, f.size).simulate(rng.multinomial(n, f), rng)
        start = _concentration.concentration_start(m)
        assert abs(start - math.log(a)) < math.log(2), (a, math.exp(start))
    # a uniform domain has no excess concentration: the start is the top of its range
    m = bayesldp.OUE(2.0, 50).simulate(np.full(50, 10**5), rng)
    assert _concentration.concentration_start(m) == _concentration.LOG_START_RANGE[1]
    # everything on one item: the bottom of the range
    m = bayesldp.OUE(8.0, 50).simulate(np.r_[10**7, np.zeros(49, dtype=int)], rng)
    assert _concentration.concentration_start(m) == _concentration.LOG_START_RANGE[0]


def test_log_concentration_starts_at_the_moment_estimate_and_keeps_its_prior():
    from bayesldp.models import _concentration, dirichlet

    ms = oracle_measurements(d=6, n=500)
    model = dirichlet.build_dirichlet_model(ms["OUE"], concentration_prior=(0.5, 1.5))
    point = model.initial_point()
    assert point["log_a_offset"] == 0.0
    start = float(model["log_a_start"].get_value())
    assert start == pytest.approx(_concentration.concentration_start(ms["OUE"]))
    _concentration.set_concentration_start(model, "log_a", ms["SUE"])
    assert float(model["log_a_start"].get_value()) == _concentration.concentration_start(ms["SUE"])
    # the prior of log a is N(0.5, 1.5^2) whatever the start (the offset's logp, moved;
    # PyMC's normal log-density differs from scipy's by a constant ~1e-8)
    logp = model.compile_logp(vars=[model["log_a_offset"]])
    new_start = float(model["log_a_start"].get_value())
    for offset in (-2.0, 0.0, 1.3):
        value = float(logp({**point, "log_a_offset": np.array(offset)}))
        assert value == pytest.approx(stats.norm.logpdf(new_start + offset, 0.5, 1.5), abs=1e-7)


@settings(deadline=None, max_examples=60)
@given(
    counts=st.lists(st.integers(0, 10**6), min_size=2, max_size=40),
    eps=st.floats(0.1, 8.0),
    seed=st.integers(0, 2**16),
)
def test_concentration_start_is_finite_and_in_range(counts, eps, seed):
    from bayesldp.models import _concentration

    true = np.array(counts)
    if true.sum() == 0:
        true[0] = 1
    m = bayesldp.OUE(eps, true.size).simulate(true, np.random.default_rng(seed))
    low, high = _concentration.LOG_START_RANGE
    assert low <= _concentration.concentration_start(m) <= high
