"""Property-based tests: every public entry point under generated hostile input.

Each call must either return a valid result (finite, the right shape, and keeping the
promises its method declares in the registry) or raise a ValueError whose message
names one of the arguments that were made hostile. Any other exception (TypeError,
IndexError, ZeroDivisionError, OverflowError, ...), a NaN or a broken promise fails.

Generated values: NaN, infinities, 0, negatives, huge numbers, bools, strings, None,
NumPy scalars, wrong shapes and lengths, empty arrays. ``HYPOTHESIS_PROFILE=thorough``
runs ten times as many cases (the default profile keeps the suite quick).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.errors import ConvergenceError
from bayesldp.methods.registry import get_method, method_names
from tests.helpers import toy_measurement

# The default profile is derandomized (the same cases on every run, so CI is
# reproducible); HYPOTHESIS_PROFILE=thorough searches 10x more cases at random.
settings.register_profile(
    "default",
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "thorough", parent=settings.get_profile("default"), max_examples=600, derandomize=False
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# ---------------------------------------------------------------------------
# strategies

NUMPY_SCALARS = [
    np.float64("nan"),
    np.float64("inf"),
    np.int64(3),
    np.int32(-2),
    np.float32(0.5),
    np.bool_(True),
    np.uint8(7),
    np.float64(1e308),
]
hostile_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(NUMPY_SCALARS),
    st.sampled_from([0, 1, 2, -1, 0.5, 1e-300, 1e300, -0.0, 10**6]),
    st.just([1, 2]),
)
small_number = st.one_of(
    st.integers(min_value=-3, max_value=50),
    st.floats(min_value=-5, max_value=100),
    st.sampled_from([float("nan"), float("inf"), -float("inf")]),
)
hostile_array = st.one_of(
    st.lists(small_number, max_size=8),
    st.lists(hostile_scalar, max_size=5),
    hnp.arrays(
        dtype=st.sampled_from([np.int64, np.float64, np.bool_, np.uint8, np.float32, np.int8]),
        shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6),
    ),
    st.just(np.array(["a", "b"])),
    st.just("12"),
)
ORACLES = sorted(bayesldp.ORACLES)
NUMPY_METHODS = method_names(bayesian=False, needs_truth=False)


@st.composite
def measurements(draw) -> bayesldp.Measurement:
    """Draw a valid but possibly extreme measurement from one of the oracles."""
    name = draw(st.sampled_from(ORACLES))
    d = draw(st.integers(min_value=2 if name == "SS" else 1, max_value=24))
    eps = draw(st.floats(min_value=1e-3, max_value=30.0))
    n = draw(st.one_of(st.just(1), st.integers(min_value=1, max_value=10**7)))
    oracle = bayesldp.make_oracle(name, eps, d)
    if name == "GRR":
        weights = np.asarray(draw(st.lists(st.floats(0, 1), min_size=d, max_size=d))) + 1e-9
        seed = draw(st.integers(0, 2**32 - 1))
        counts = np.random.default_rng(seed).multinomial(n, weights / weights.sum())
    else:
        counts = draw(st.lists(st.integers(0, n), min_size=d, max_size=d))
    return oracle.measurement(counts, n)


def outcome(call, names):
    """Run ``call``; a ValueError must name one of ``names``. Returns the result or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return call()
        except ValueError as err:
            message = str(err)
            assert any(name in message for name in names), (
                f"ValueError does not name any of {names}: {message}"
            )
            return None
        except ConvergenceError as err:
            # a clear, typed refusal: an iteration limit too small to converge
            assert "max_iter" in names or "tol" in names, f"unexpected {err!r}"
            return None


def check_estimate(est, m, method: str) -> None:
    """Check that the Estimate keeps the promises its method declares."""
    spec = get_method(method)
    f = est.frequencies
    assert f.shape == (m.domain_size,)
    assert np.all(np.isfinite(f))
    if spec.nonnegative:
        assert f.min() >= 0, (method, f)
    if spec.sums_to_one:
        assert abs(f.sum() - 1) <= 1e-9, (method, f.sum())


# ---------------------------------------------------------------------------
# Measurement


@given(counts=hostile_array, n=hostile_scalar, p=hostile_scalar, q=hostile_scalar)
def test_measurement_from_hostile_counts(counts, n, p, q):
    m = outcome(
        lambda: bayesldp.Measurement.from_support_counts(counts, n, p, q),
        ["counts", "n", "p", "q"],
    )
    if m is not None:
        assert np.all(np.isfinite(m.estimates)) and m.estimates.ndim == 1
        assert 0 <= m.q < m.p <= 1


# ---------------------------------------------------------------------------
# post-processing


@pytest.mark.parametrize("method", NUMPY_METHODS)
@given(m=measurements())
def test_every_method_on_extreme_valid_measurements(method, m):
    options = {"max_iter": 200} if method == "ibu" else {}
    est = outcome(lambda: bayesldp.postprocess(m, method, **options), ["measurement", "noise"])
    if est is not None:
        check_estimate(est, m, method)


def _options(method: str) -> list[str]:
    return list(get_method(method).options())


@pytest.mark.parametrize(
    ("method", "option"),
    [(m, o) for m in NUMPY_METHODS for o in _options(m)],
)
@given(m=measurements(), value=hostile_scalar)
def test_every_option_under_hostile_values(method, option, m, value):
    extra = {"max_iter": 200} if method == "ibu" and option != "max_iter" else {}
    est = outcome(lambda: bayesldp.postprocess(m, method, **{option: value}, **extra), [option])
    if est is not None:
        check_estimate(est, m, method)


@given(m=measurements(), method=st.one_of(hostile_scalar, st.text(max_size=12)))
def test_unknown_method_names(m, method):
    assume(method not in bayesldp.METHODS)
    assert outcome(lambda: bayesldp.postprocess(m, method), ["method"]) is None


@given(measurement=hostile_array)
def test_postprocess_refuses_non_measurements(measurement):
    assert outcome(lambda: bayesldp.postprocess(measurement, "norm-sub"), ["measurement"]) is None


# ---------------------------------------------------------------------------
# Estimate queries


@given(m=measurements(), indices=hostile_array, k=hostile_scalar, prob=hostile_scalar)
def test_estimate_queries(m, indices, k, prob):
    est = bayesldp.postprocess(m, "norm-sub")
    value = outcome(lambda: est.subset(indices), ["indices"])
    if value is not None:
        assert np.isfinite(value)
    top = outcome(lambda: est.top_k(k), ["k"])
    if top is not None:
        assert len(top[0]) == int(k)
    outcome(lambda: est.interval([0], prob=prob), ["prob", "posterior draws"])


@given(m=measurements(), start=hostile_scalar, stop=hostile_scalar)
def test_draw_ranges(m, start, stop):
    """``Uncertainty.sample(start, stop)``: rows in range, or a ValueError naming one."""
    est = bayesldp.postprocess(m, "norm-sub")
    draws = bayesldp.estimate.StoredDraws(np.zeros((5, m.domain_size)))
    for unc in (draws, est.bootstrap(5, rng=0)):
        rows = outcome(lambda unc=unc: unc.sample(start, stop), ["start", "stop"])
        if rows is not None:
            assert rows.shape == (int(stop) - int(start), m.domain_size)
            assert not rows.flags.writeable


# ---------------------------------------------------------------------------
# metrics


@given(true=hostile_array, estimate=hostile_array)
def test_metrics_on_hostile_vectors(true, estimate):
    for metric in (metrics.mse, metrics.mae):
        value = outcome(lambda metric=metric: metric(true, estimate), ["true", "estimate"])
        if value is not None:
            assert np.isfinite(value) and value >= 0


@given(
    m=measurements(),
    percent=hostile_scalar,
    rng=hostile_scalar,
    n_queries=hostile_scalar,
    k=hostile_scalar,
    threshold=hostile_scalar,
)
def test_metrics_options(m, percent, rng, n_queries, k, threshold):
    est = bayesldp.postprocess(m, "norm-sub")
    truth = np.full(m.domain_size, 1 / m.domain_size)
    value = outcome(
        lambda: metrics.set_value_mse(truth, est, percent, rng, n_queries),
        ["percent", "rng", "n_queries"],
    )
    if value is not None:
        assert np.isfinite(value)
    value = outcome(lambda: metrics.topk_mse(truth, est, k), ["k"])
    if value is not None:
        assert np.isfinite(value)
    score = outcome(lambda: metrics.heavy_hitters(truth, est, threshold), ["threshold"])
    if score is not None:
        assert 0 <= score.precision <= 1 and 0 <= score.recall <= 1


# ---------------------------------------------------------------------------
# datasets


@given(s=hostile_scalar, d=hostile_scalar, n=hostile_scalar, rng=hostile_scalar)
def test_synthetic_datasets(s, d, n, rng):
    assume(not (isinstance(d, int) and d > 10**5) and not (isinstance(n, int) and n > 10**7))
    data = outcome(lambda: datasets.zipf(s=s, d=d, n=n, rng=rng), ["s", "d", "n", "rng"])
    if data is not None:
        assert data.counts.sum() == data.n == n and data.d == d
    data = outcome(lambda: datasets.beta(a=s, b=2.0, d=d, n=n, rng=rng), ["a", "d", "n", "rng"])
    if data is not None:
        assert data.counts.sum() == n


@given(spec=st.one_of(hostile_scalar, st.text(max_size=20), st.from_regex(r"zipf:\w+=\w*")))
def test_dataset_specs(spec):
    assume(not (isinstance(spec, str) and spec.startswith(("wordfreq", "us_cities"))))
    data = outcome(
        lambda: datasets.get_dataset(spec), ["dataset", "path", "s", "d", "n", "rng", "a", "b"]
    )
    if data is not None:
        assert data.n >= 1


# ---------------------------------------------------------------------------
# oracles


@given(
    name=st.one_of(st.sampled_from(ORACLES), hostile_scalar), eps=hostile_scalar, d=hostile_scalar
)
def test_make_oracle(name, eps, d):
    assume(not (isinstance(d, int | np.integer) and d > 10**6))
    oracle = outcome(
        lambda: bayesldp.make_oracle(name, eps, d), ["oracle", "epsilon", "domain_size"]
    )
    if oracle is not None:
        assert 0 <= oracle.q < oracle.p <= 1


@given(
    name=st.sampled_from(ORACLES),
    values=hostile_array,
    true_counts=hostile_array,
    seed=st.integers(0, 2**32 - 1),
)
def test_oracle_user_and_server_sides(name, values, true_counts, seed):
    oracle = bayesldp.make_oracle(name, 1.0, 6)
    rng = np.random.default_rng(seed)
    reports = outcome(lambda: oracle.privatize(values, rng), ["values"])
    if reports is not None and len(reports):
        m = oracle.aggregate(reports)
        assert m.n == len(reports)
    m = outcome(lambda: oracle.simulate(true_counts, rng), ["true_counts"])
    if m is not None:
        assert np.all(np.isfinite(m.estimates))


@given(name=st.sampled_from(ORACLES), reports=hostile_array)
def test_oracle_aggregate_hostile_reports(name, reports):
    oracle = bayesldp.make_oracle(name, 1.0, 6)
    m = outcome(lambda: oracle.aggregate(reports), ["reports"])
    if m is not None:
        assert np.all(np.isfinite(m.estimates)) and m.domain_size == 6


def _post(method, **options):
    return bayesldp.postprocess(toy_measurement([0.5, 0.5]), method, **options)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: datasets.zipf(d=8.5), "d"),
        (lambda: datasets.zipf(s="1.5"), "s"),
        (lambda: datasets.beta(n=2.5), "n"),
        (lambda: datasets.zipf(n=True), "n"),
        (lambda: metrics.heavy_hitters([0.5, 0.5], [0.5, 0.5], threshold=-1), "threshold"),
        (lambda: metrics.random_subsets(10, "50", 3, 0), "percent"),
        (lambda: _post("mle-apx", max_iter="x"), "max_iter"),
        (lambda: _post("ibu", max_iter=True), "max_iter"),
        (lambda: _post("base-cut", alpha=True), "alpha"),
        (lambda: _post("base").interval([0], prob="0.9"), "prob"),
        (lambda: bayesldp.OUE("1", 8), "epsilon"),
        (lambda: bayesldp.OUE(True, 8), "epsilon"),
        (lambda: bayesldp.Measurement.from_support_counts([1, 2], 10.0, 0.5, 0.25), "n"),
        (lambda: bayesldp.Measurement.from_support_counts([1, 2], 10, "0.5", 0.25), "p"),
        (lambda: metrics.mse([True, False], [0.5, 0.5]), "true"),
    ],
)  # fmt: skip
def test_bad_input_is_a_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: bayesldp.metrics.mse([0.5, 0.5, 0.0], [False, 0.5, 0.5]), "estimate"),
        (lambda: bayesldp.OUE(1.0, 4).privatize([0, True, 2], np.random.default_rng(0)), "values"),
        (lambda: bayesldp.metrics.mse((0.1, True), [0.5, 0.5]), "true"),
        (lambda: bayesldp.metrics.mse([0.5, 0.5], [np.array([True]), [0.5]]), "estimate"),
    ],
    ids=["estimate", "values", "true", "bool array in a list"],
)
def test_a_bool_among_numbers_is_refused(call, name):
    """A bool in a list of numbers is a ValueError naming the argument.

    NumPy reads [False, 0.5] as floats (found by the thorough Hypothesis profile).
    """
    with pytest.raises(ValueError, match=name):
        call()


def test_draw_ranges_and_likelihood_kinds_are_checked():
    """Out-of-range draw ranges and unknown likelihood kinds were silently accepted."""
    from bayesldp.estimate import StoredDraws
    from bayesldp.intervals import ParametricBootstrap
    from bayesldp.models._checks import replicate_counts

    with pytest.raises(ValueError, match="stop must be <= 3"):
        StoredDraws(np.zeros((3, 2))).sample(2, 5)
    m = bayesldp.OUE(1.0, 4).simulate(np.array([10, 5, 3, 2]), np.random.default_rng(0))
    boot = ParametricBootstrap(bayesldp.postprocess(m, "norm-sub"), 4, 0)
    with pytest.raises(ValueError, match="start"):
        boot.counts(-1, 2)
    with pytest.raises(ValueError, match="kind"):
        replicate_counts("poisson", np.full(4, 0.25), 20, m.p, m.q, np.random.default_rng(0))
