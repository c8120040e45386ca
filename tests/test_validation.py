"""Bad input gets a clear ValueError naming the argument; nothing is silently clipped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesldp
from bayesldp import Measurement
from bayesldp._validation import check_keywords, require
from tests.helpers import toy_measurement


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "abc", None])
@pytest.mark.parametrize("name", list(bayesldp.ORACLES))
def test_bad_epsilon(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        bayesldp.make_oracle(name, eps, 8)


@pytest.mark.parametrize("d", [0, -3, 2.5, True, "8"])
def test_bad_domain_size(d):
    with pytest.raises(ValueError, match="domain_size"):
        bayesldp.OUE(1.0, d)


def test_unknown_oracle():
    with pytest.raises(ValueError, match="unknown oracle"):
        bayesldp.make_oracle("RAPPOR2", 1.0, 8)


@pytest.mark.parametrize(
    ("counts", "match"),
    [
        ([1, -2, 3], "non-negative"),
        ([1.5, 2, 3], "integers"),
        ([1, float("nan"), 3], "finite"),
        ([[1, 2], [3, 4]], "one-dimensional"),
        ([], "empty"),
        (["a", "b"], "integers"),
    ],
)
def test_bad_support_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        Measurement.from_support_counts(counts, 10, 0.5, 0.25)


def test_counts_exceeding_n_and_bad_pq():
    with pytest.raises(ValueError, match="exceed"):
        Measurement.from_support_counts([5, 20], 10, 0.5, 0.25)
    with pytest.raises(ValueError, match="p must exceed q"):
        Measurement.from_support_counts([5, 2], 10, 0.25, 0.5)
    with pytest.raises(ValueError, match="n must be"):
        Measurement.from_support_counts([5, 2], 0, 0.5, 0.25)
    with pytest.raises(ValueError, match="q must"):
        Measurement.from_support_counts([5, 2], 10, 0.5, -0.1)


def test_nan_estimates_rejected():
    with pytest.raises(ValueError, match="estimates"):
        Measurement(np.array([0.5, np.nan]), 10, 0.5, 0.25, np.array([5, 2]))


def test_estimates_and_counts_length_mismatch():
    with pytest.raises(ValueError, match="domain size"):
        Measurement(np.array([0.5, 0.5, 0.0]), 10, 0.5, 0.25, np.array([5, 2]))


def test_measurement_is_immutable():
    m = toy_measurement([0.5, 0.5])
    with pytest.raises(ValueError):
        m.estimates[0] = 3.0
    with pytest.raises(AttributeError):
        m.n = 3


@pytest.mark.parametrize("name", list(bayesldp.ORACLES))
def test_simulate_bad_counts(name):
    oracle = bayesldp.make_oracle(name, 1.0, 4)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="domain size"):
        oracle.simulate([1, 2, 3], rng)  # shorter than the domain
    with pytest.raises(ValueError, match="domain size"):
        oracle.simulate([1, 2, 3, 4, 5], rng)  # longer
    with pytest.raises(ValueError, match="non-negative"):
        oracle.simulate([1, -2, 3, 4], rng)
    with pytest.raises(ValueError, match="integers"):
        oracle.simulate([1, 2.5, 3, 4], rng)
    with pytest.raises(ValueError, match="at least one user"):
        oracle.simulate([0, 0, 0, 0], rng)
    with pytest.raises(ValueError, match="rng"):
        oracle.simulate([1, 2, 3, 4], "42")  # a Generator or an integer seed only


@pytest.mark.parametrize("name", list(bayesldp.ORACLES))
def test_privatize_bad_values(name):
    oracle = bayesldp.make_oracle(name, 1.0, 4)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="values"):
        oracle.privatize([0, 4], rng)
    with pytest.raises(ValueError, match="values"):
        oracle.privatize([0, -1], rng)
    with pytest.raises(ValueError, match="values"):
        oracle.privatize([0.5], rng)


def test_unknown_method_and_option_and_backend():
    m = toy_measurement([0.5, 0.5])
    with pytest.raises(ValueError, match="unknown method"):
        bayesldp.postprocess(m, "norm-magic")
    with pytest.raises(ValueError, match="unknown option"):
        bayesldp.postprocess(m, "norm-sub", alpha=2)
    with pytest.raises(ValueError, match="backend"):
        bayesldp.postprocess(m, "cls", backend="gurobi")
    with pytest.raises(ValueError, match="Measurement"):
        bayesldp.postprocess(np.array([0.5, 0.5]), "norm-sub")
    with pytest.raises(ValueError, match="alpha"):
        bayesldp.postprocess(m, "base-cut", alpha=float("nan"))
    with pytest.raises(ValueError, match="likelihood"):
        bayesldp.postprocess(m, "mle", likelihood="poisson")
    with pytest.raises(ValueError, match="fit"):
        bayesldp.postprocess(m, "power", fit="median")
    with pytest.raises(ValueError, match="s must"):
        bayesldp.postprocess(m, "power", s=-1.0)


def test_query_arguments_checked():
    est = bayesldp.postprocess(toy_measurement([0.5, 0.3, 0.2]), "norm-sub")
    with pytest.raises(ValueError, match="k must"):
        est.top_k(0)
    with pytest.raises(ValueError, match="k must"):
        est.top_k(4)
    with pytest.raises(ValueError, match="out of range"):
        est.subset([0, 3])
    with pytest.raises(ValueError, match="repeat"):
        est.subset([0, 0])
    with pytest.raises(ValueError, match="mask"):
        est.subset(np.array([True, False]))
    with pytest.raises(ValueError, match="prob"):
        est.interval([0], prob=1.5)
    with pytest.raises(ValueError, match="prob"):
        est.interval([0], prob=True)
    with pytest.raises(ValueError, match="method"):
        est.interval([0], method="magic")
    with pytest.raises(ValueError, match="out of range"):
        est.interval([3])
    with pytest.raises(ValueError, match="posterior"):
        est.interval([0], method="posterior")  # norm-sub carries no posterior draws


RESERVED = ("draws", "seed")


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    value=st.one_of(
        st.none(),
        st.dictionaries(
            st.one_of(st.text(max_size=6), st.sampled_from(RESERVED), st.integers()),
            st.one_of(st.integers(), st.floats(), st.none()),
            max_size=4,
        ),
        st.lists(st.tuples(st.text(max_size=3), st.integers()), max_size=2),
        st.integers(),
        st.text(max_size=4),
    )
)
def test_check_keywords_returns_a_clean_dict_or_names_the_argument(value):
    # the sampler_kwargs policy: a mapping of argument names, none of them reserved
    try:
        out = check_keywords(value, "sampler_kwargs", RESERVED)
    except ValueError as err:
        assert "sampler_kwargs" in str(err)
        assert value is not None
        bad_keys = isinstance(value, dict) and any(
            not isinstance(k, str) or not k.isidentifier() or k in RESERVED for k in value
        )
        assert bad_keys or not isinstance(value, dict)
        return
    assert out == (value or {}) and isinstance(out, dict) and out is not value
    assert all(k.isidentifier() and k not in RESERVED for k in out)


def test_check_frequencies_names_the_argument():
    from bayesldp._validation import check_frequencies

    np.testing.assert_array_equal(check_frequencies([0, 0.5, 1]), [0.0, 0.5, 1.0])
    assert check_frequencies(np.float32(0.25)).shape == ()
    for bad in ([float("nan")], [1.5], [-1e-3], [True], "abc", [[0.1], [0.2, 0.3]], None):
        with pytest.raises(ValueError, match="freqs"):
            check_frequencies(bad, "freqs")


def test_require_names_a_missing_argument_and_says_why():
    require(0, "true_counts")  # any value but None is present
    require([], "true_counts")
    with pytest.raises(ValueError, match=r"^true_counts is required: a reference needs it$"):
        require(None, "true_counts", "a reference needs it")
    with pytest.raises(ValueError, match=r"^x is required$"):
        require(None, "x")
