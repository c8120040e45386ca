"""Regression tests for the crashes and silent wrong answers an outside review found.

Each test names the finding it pins down; each failed on the code the review saw
(main at 924d6f8). Oracle-side findings (wire format, large epsilon, aggregate input)
are in tests/test_oracles.py; command-line findings in tests/test_cli.py.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import calibrate, datasets, metrics
from bayesldp import empirical_bayes as eb
from bayesldp.errors import ConvergenceWarning
from tests.helpers import toy_measurement, zipf_frequencies

# ---------------------------------------------------------------------------
# mle: "The function value at x=-n is NaN" whenever a support count is zero, and
# IndexError for GRR counts that are all zero or do not sum to n.


def _kkt_gap(m, f):
    """Largest violation of the binomial/multinomial MLE's KKT conditions (per user)."""
    kind = "multinomial" if m.oracle == "GRR" else "binomial"
    c = m.support_counts.astype(float)
    pi = m.q + (m.p - m.q) * f
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = np.where(c > 0, c / pi, 0.0)
        if kind == "binomial":
            grad -= np.where(c < m.n, (m.n - c) / (1 - pi), 0.0)
    grad *= (m.p - m.q) / m.n
    return grad.max() - f @ grad  # the duality gap: 0 at the MLE


def test_mle_with_zero_support_counts():
    rng = np.random.default_rng(3)
    data = datasets.zipf(1.5, 1024, 10_000, rng=0)
    m = bayesldp.OUE(8.0, 1024).simulate(data.counts, rng)
    assert (m.support_counts == 0).sum() > 10  # the review saw 36
    est = bayesldp.postprocess(m, "mle")
    assert est.is_consistent()
    assert _kkt_gap(m, est.frequencies) < 1e-12


@pytest.mark.parametrize("counts", [[1, 0, 0], [0, 0, 0], [1, 1, 1]])
def test_mle_with_one_user(counts):
    m = bayesldp.Measurement.from_support_counts(counts, 1, 0.5, 0.25, oracle="OUE")
    est = bayesldp.postprocess(m, "mle")
    assert est.is_consistent()
    assert _kkt_gap(m, est.frequencies) < 1e-12


def test_grr_counts_must_sum_to_n():
    with pytest.raises(ValueError, match="sum to n"):
        bayesldp.Measurement.from_support_counts([0, 0, 0], 5, 0.6, 0.2, oracle="GRR")
    with pytest.raises(ValueError, match="sum to n"):
        bayesldp.Measurement.from_support_counts([3, 1, 0], 5, 0.6, 0.2, oracle="GRR")
    m = bayesldp.Measurement.from_support_counts([4, 1, 0], 5, 0.6, 0.2, oracle="GRR")
    assert bayesldp.postprocess(m, "mle").is_consistent()


def test_mle_speed_against_sort():
    """The mle took 10x np.sort at d = 1e7; on the distinct counts it is a fraction of it."""
    rng = np.random.default_rng(5)
    d, n = 200_000, 2_000_000
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d, 1.1)), rng)
    best = {}
    for name in ("sort", "mle", "sort", "mle"):
        start = time.perf_counter()
        if name == "sort":
            np.sort(m.estimates)
        else:
            bayesldp.postprocess(m, "mle")
        best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
    assert best["mle"] < 3 * best["sort"] + 0.01, best


# ---------------------------------------------------------------------------
# ibu: "converged=True after 3 EM evaluations" returning the uniform distribution at
# d = 1e7, because the stopping rule (absolute change below 1e-10) was not scale-free.


def test_ibu_stopping_rule_is_scale_free():
    rng = np.random.default_rng(7)
    d, n = 100_000, 2_000_000
    m = bayesldp.GRR(4.0, d).simulate(rng.multinomial(n, zipf_frequencies(d, 1.5)), rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # must converge, not warn
        est = bayesldp.postprocess(m, "ibu")
    uniform = np.full(d, 1 / d)
    ref = bayesldp.postprocess(m, "mle").frequencies
    assert est.info["converged"]
    assert np.abs(est.frequencies - ref).max() < 1e-6
    assert metrics.mse(ref, est) < 1e-6 * metrics.mse(ref, uniform)


def test_ibu_warns_every_time_it_stops_short():
    rng = np.random.default_rng(8)
    m = bayesldp.OUE(1.0, 512).simulate(rng.multinomial(10**6, zipf_frequencies(512)), rng)
    for _ in range(2):
        with pytest.warns(ConvergenceWarning, match="not the MLE"):
            est = bayesldp.postprocess(m, "ibu", max_iter=5)
        assert not est.info["converged"]


@pytest.mark.parametrize("tol", [float("nan"), -1.0, 0.0, "1e-9", True])
def test_ibu_rejects_bad_tol(tol):
    m = toy_measurement([0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="tol"):
        bayesldp.postprocess(m, "ibu", tol=tol)


# ---------------------------------------------------------------------------
# norm-cut cut already-consistent estimates because "sum of positives <= 1" had no
# tolerance: an excess of 4e-16 removed an item.


def test_norm_cut_keeps_consistent_grr_estimates():
    oracle = bayesldp.GRR(0.2, 5)
    m = oracle.measurement([398, 417, 391, 389, 405], 2000)
    est = bayesldp.postprocess(m, "norm-cut")
    np.testing.assert_allclose(est.frequencies, np.maximum(m.estimates, 0))
    assert abs(est.total - 1) < 1e-12


# ---------------------------------------------------------------------------
# power summed only the counts within +-9 sigma of the observation: with a steep prior
# that is not Calibrate's posterior mean (385.8 counts where the full sum gives 1.0).


def test_power_window_includes_the_prior_mode():
    y, s, sigma_c, n = 460.8, 20.0, 37.8, 2000
    full = calibrate.posterior_mean_direct([y], s, sigma_c, n, full=True)[0]
    assert full == pytest.approx(1.0, abs=1e-3)
    assert calibrate.posterior_mean_direct([y], s, sigma_c, n)[0] == pytest.approx(full, rel=1e-9)
    ys = np.linspace(-100, 900, 2000)
    grid = calibrate.posterior_mean(ys, s, sigma_c, n)
    ref = calibrate.posterior_mean_direct(ys, s, sigma_c, n, full=True)
    assert np.abs(grid - ref).max() < 1e-5 * ref.max()


def test_power_with_a_noiseless_oracle_is_a_clear_error():
    m = bayesldp.Measurement.from_support_counts([3, 1, 0], 4, 1.0, 0.0)
    with pytest.raises(ValueError, match="noise"):
        bayesldp.postprocess(m, "power")


@pytest.mark.parametrize(("option", "value"), [("s_max", -1.0), ("s_max", "20"), ("s", "1")])
def test_power_rejects_bad_options(option, value):
    m = toy_measurement([0.5, 0.3, 0.1, 0.1])
    with pytest.raises(ValueError, match=option):
        bayesldp.postprocess(m, "power", **{option: value})


def test_power_s_max_has_one_default():
    import inspect

    from bayesldp import methods

    defaults = {
        inspect.signature(f).parameters["s_max"].default
        for f in (methods.power, methods.power_ns, calibrate.fit_exponent_mean)
    }
    defaults.add(inspect.signature(calibrate.fit_exponent_mle).parameters["s_max"].default)
    assert defaults == {calibrate.S_MAX}


# ---------------------------------------------------------------------------
# Measurement accepted estimates that disagree with its support counts.


def test_measurement_estimates_must_match_counts():
    with pytest.raises(ValueError, match="disagree"):
        bayesldp.Measurement(
            estimates=[0.9, 0.1], n=10, p=0.5, q=0.25, support_counts=[0, 0], oracle="OUE"
        )
    m = bayesldp.Measurement.from_support_counts([5, 3], 10, 0.5, 0.25)
    same = bayesldp.Measurement(m.estimates, 10, 0.5, 0.25, m.support_counts)
    np.testing.assert_array_equal(same.estimates, m.estimates)


# ---------------------------------------------------------------------------
# Silent garbage and wrong exception types: each is now a ValueError naming the argument.


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


def test_rng_seed_accepted_in_set_value_mse():
    """``rng=0`` raised AttributeError deep inside numpy; a seed is a valid rng."""
    f = zipf_frequencies(20)
    est = bayesldp.postprocess(toy_measurement(np.round(f, 3)), "base")
    a = metrics.set_value_mse(f, est, 50, 0, n_queries=5)
    b = metrics.set_value_mse(f, est, 50, np.random.default_rng(0), n_queries=5)
    assert a == b and math.isfinite(a)


def test_power_estimate_far_above_n_does_not_allocate_beyond_n():
    # eps = 0.001: the raw estimate of a single item was 2001 (6.3e9 users for n = 3.2e6);
    # the summation window started above n and power asked for 47 GiB.
    m = bayesldp.Measurement.from_support_counts(
        np.array([3162677]), 3162677, 0.5, 0.4997500000208333, oracle="OUE"
    )
    for method in ("power", "power-ns"):
        est = bayesldp.postprocess(m, method, s=1.0)
        assert np.isfinite(est.frequencies).all() and 0 <= est.frequencies[0] <= 1


def test_eb_npmle_all_zero_counts_still_sums_to_one():
    # every support count 0 (n = 1, HR): the NPMLE puts all its weight at count 0 and no
    # tilt of it reaches the total; the fallback is named in a warning
    m = bayesldp.Measurement.from_support_counts(np.array([0, 0]), 1, 0.7310585786300049, 0.5)
    with pytest.warns(RuntimeWarning, match="eb-npmle"):
        est = bayesldp.postprocess(m, "eb-npmle", rng=0)
    assert est.frequencies.min() >= 0 and abs(est.frequencies.sum() - 1) < 1e-12


def test_eb_npmle_one_item_no_support_and_raw_total():
    # Hypothesis (thorough profile): d = 1, n = 1, support count 0, correct_total=False:
    # every posterior mean is 0 and no tilt reaches n; the answer is the only one possible
    m = bayesldp.Measurement.from_support_counts(np.array([0]), 1, 0.7310585786300049, 0.5)
    with pytest.warns(RuntimeWarning, match="eb-npmle"):
        est = bayesldp.postprocess(m, "eb-npmle", correct_total=False, rng=0)
    np.testing.assert_array_equal(est.frequencies, [1.0])


def test_mse_of_huge_finite_errors_is_finite():
    # Hypothesis (thorough profile): an error of 1.34e154 overflowed in the square
    value = metrics.mse([0.0, 0.0], [0.0, 1.3407807929942597e154])
    # the exact value, (e/2) * e with e = 1.34e154, computed without overflow
    e = 1.3407807929942597e154
    assert np.isfinite(value) and value == pytest.approx((e / 2) * e, rel=1e-12)


def test_absurd_numbers_of_random_sets_are_refused():
    # Hypothesis (thorough profile): n_queries = 2**40 allocated (n_queries, d) keys
    with pytest.raises(ValueError, match="n_queries"):
        metrics.random_subsets(10, 50, 2**40, 0)


@pytest.mark.parametrize(
    "options",
    [{"grid_spacing": 1e-300}, {"grid_growth": 1e-300}, {"grid_spacing": 1e-6, "grid_window": 1e6}],
)
def test_eb_npmle_refuses_a_grid_of_millions_of_counts(options):
    # n = 10^7 with counts far apart and a tiny grid step: count_grid stepped one count
    # at a time over ~870,000 counts (eb-npmle took 16 s here, 13 s of it the grid, and
    # a 24 x 870,000 likelihood matrix; a large grid_window widens it to all n + 1
    # counts); now a ValueError naming the options, at once
    oracle = bayesldp.make_oracle("OUE", 1.0, 24)
    f = 1.0 / np.arange(1, 25) ** 1.5
    counts = np.random.default_rng(0).multinomial(10**7, f / f.sum())
    m = oracle.simulate(counts, np.random.default_rng(1))
    start = time.perf_counter()
    with pytest.raises(ValueError, match="grid_spacing or grid_growth, or lower grid_window"):
        bayesldp.postprocess(m, "eb-npmle", rng=0, **options)
    assert time.perf_counter() - start < 10
    # the default grid is far below the limit
    assert eb.count_grid(m).size < eb.MAX_GRID_POINTS / 20


def test_mse_beyond_the_largest_float_is_refused():
    # Hypothesis (thorough profile): errors [0, 0, 0, 0, 3.0e154]: the mean square,
    # 1.7977e308, exceeds the largest float even after scaling; inf was returned
    e = 2.9980769960612387e154
    assert (e / 5) * e > np.finfo(np.float64).max  # not representable
    with pytest.raises(ValueError, match="estimate"):
        metrics.mse([0, 0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0, e])
    # just below the limit it is still computed
    assert np.isfinite(metrics.mse([0, 0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0, e / 2]))


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


@pytest.mark.parametrize("values", [[], [0.5, float("nan")], [[0.5, 0.5]]])
def test_project_simplex_refuses_what_it_cannot_project(values):
    """An empty input was an IndexError deep inside; now a ValueError naming values."""
    from bayesldp.methods import project_simplex

    with pytest.raises(ValueError, match="values"):
        project_simplex(values)


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
