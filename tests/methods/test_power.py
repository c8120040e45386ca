"""Power and PowerNS (Calibrate's posterior mean) against direct sums."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
import bayesldp.methods._calibrate as calibrate
from bayesldp.methods import project_simplex
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import run_quietly


def test_power_fast_equals_direct_sum(rng):
    """The interpolated posterior mean equals a direct sum over every count 1..n."""
    d, n = 3000, 20_000
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d, 1.2)), rng)
    est = run_quietly(m, "power", s=1.3)
    y = m.estimates * n
    sigma_c = m.sigma * n
    idx = rng.choice(d, 60, replace=False)
    ref = calibrate.posterior_mean_direct(y[idx], 1.3, sigma_c, n, full=True) / n
    np.testing.assert_allclose(est.frequencies[idx], ref, rtol=1e-7, atol=1e-12)


def test_power_fit_mean_matches_observed_mean(rng):
    d, n = 1024, 10**6
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d)), rng)
    est = run_quietly(m, "power")
    assert calibrate.prior_mean(est.info["s"], n) == pytest.approx(m.estimates.mean() * n, rel=1e-8)


def test_power_sum_matches_direct():
    for a in (-0.5, 0.0, 0.5, 1.0, 1.5, 3.0):
        for n in (10, 5000, 123_457):
            direct = np.sum(np.arange(1, n + 1, dtype=float) ** (-a))
            assert calibrate.power_sum(a, n) == pytest.approx(direct, rel=1e-12)


def test_power_ns_is_norm_sub_of_power(rng):
    d = 256
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    pw = run_quietly(m, "power").frequencies
    np.testing.assert_allclose(
        run_quietly(m, "power-ns").frequencies, project_simplex(pw), atol=1e-12
    )


def test_power_mle_fit_close_to_truth(rng):
    """On data drawn from the power-law prior itself, the MLE fit recovers s."""
    d, n, s_true = 4000, 10**6, 1.8
    x = np.arange(1, n + 1, dtype=float)
    w = x ** (-s_true)
    counts = rng.choice(n, size=d, p=w / w.sum()) + 1
    n_total = int(counts.sum())
    oracle = bayesldp.OUE(2.0, d)
    m = oracle.measurement(
        rng.binomial(counts, oracle.p) + rng.binomial(n_total - counts, oracle.q), n_total
    )
    s_hat = calibrate.fit_exponent_mle(m.estimates * n_total, m.sigma * n_total, n_total)
    assert abs(s_hat - s_true) < 0.1


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


def test_power_estimate_far_above_n_does_not_allocate_beyond_n():
    # eps = 0.001: the raw estimate of a single item was 2001 (6.3e9 users for n = 3.2e6);
    # the summation window started above n and power asked for 47 GiB.
    m = bayesldp.Measurement.from_support_counts(
        np.array([3162677]), 3162677, 0.5, 0.4997500000208333, oracle="OUE"
    )
    for method in ("power", "power-ns"):
        est = bayesldp.postprocess(m, method, s=1.0)
        assert np.isfinite(est.frequencies).all() and 0 <= est.frequencies[0] <= 1
