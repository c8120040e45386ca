"""MLE-Apx (the long paper's Eq. 14, transcribed independently), the exact MLE and IBU."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.errors import ConvergenceWarning
from tests.helpers import toy_measurement, zipf_frequencies
from tests.methods.test_catalogue import CATALOGUE, run_quietly


def mle_apx_reference(c, n, p, q):
    """Eq. (14) of the long paper, item by item, exactly as printed."""
    d = len(c)
    d1 = set(range(d))
    while True:
        x = (sum(c[v] / n for v in d1) - len(d1) * q - (p - q)) / (
            (p - q) * (1 - p - q) + len(d1) * q * (1 - q)
        )
        f = [0.0] * d
        for v in d1:
            f[v] = (c[v] / n - q - q * (1 - q) * x) / (p - q + (p * (1 - p) - q * (1 - q)) * x)
        negative = {v for v in d1 if f[v] < 0}
        if not negative:
            return np.array(f)
        d1 -= negative


@pytest.mark.parametrize("oracle", ["GRR", "OUE", "SUE"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_mle_apx_follows_eq14(oracle, eps, rng):
    d = 64
    m = bayesldp.make_oracle(oracle, eps, d).simulate(
        rng.multinomial(20_000, zipf_frequencies(d)), rng
    )
    ref = mle_apx_reference(m.support_counts.tolist(), m.n, m.p, m.q)
    np.testing.assert_allclose(run_quietly(m, "mle-apx").frequencies, ref, atol=1e-12)


def test_mle_apx_is_stationary_point_of_eq13(rng):
    """On its support, the gradient of Eq. (13) is constant (a KKT point)."""
    d = 128
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10**5, zipf_frequencies(d)), rng)
    f = run_quietly(m, "mle-apx").frequencies
    a, p, q = m.support_counts / m.n, m.p, m.q
    e, g = q * (1 - q), (p - q) * (1 - p - q)
    r = a - q - (p - q) * f
    grad = (-2 * (p - q) * r * (e + g * f) - g * r**2) / (e + g * f) ** 2
    support = f > 0
    assert np.ptp(grad[support]) < 1e-9 * np.abs(grad[support]).max()
    assert np.all(grad[~support] >= grad[support].mean() - 1e-9)


def _loglik(m, f, kind):
    pi = m.q + (m.p - m.q) * f
    c = m.support_counts
    ll = np.sum(c * np.log(pi))
    if kind == "binomial":
        ll += np.sum((m.n - c) * np.log1p(-pi))
    return ll


@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_mle_beats_random_feasible_points(oracle, rng):
    d = 8
    m = bayesldp.make_oracle(oracle, 1.0, d).simulate(
        rng.multinomial(5000, zipf_frequencies(d)), rng
    )
    est = run_quietly(m, "mle")
    kind = est.info["likelihood"]
    assert kind == ("multinomial" if oracle == "GRR" else "binomial")
    best = _loglik(m, est.frequencies, kind)
    for f in rng.dirichlet(np.full(d, 0.5), size=5000):
        assert _loglik(m, f, kind) <= best + 1e-9
    # and small moves along the simplex do not improve it
    for _ in range(200):
        i, j = rng.choice(d, 2, replace=False)
        step = min(1e-4, est.frequencies[j])
        g = est.frequencies.copy()
        g[i] += step
        g[j] -= step
        assert _loglik(m, g, kind) <= best + 1e-9


@pytest.mark.parametrize("oracle", ["GRR", "OUE"])
def test_ibu_converges_to_mle(oracle, rng):
    d = 32
    m = bayesldp.make_oracle(oracle, 2.0, d).simulate(
        rng.multinomial(50_000, zipf_frequencies(d)), rng
    )
    a = run_quietly(m, "ibu", max_iter=50_000, tol=1e-12)
    b = run_quietly(m, "mle")
    kind = b.info["likelihood"]
    assert _loglik(m, a.frequencies, kind) == pytest.approx(
        _loglik(m, b.frequencies, kind), abs=1e-4
    )
    np.testing.assert_allclose(a.frequencies, b.frequencies, atol=2e-3)


def test_ibu_plain_em_is_monotone(rng):
    d = 16
    m = bayesldp.OUE(1.0, d).simulate(rng.multinomial(10_000, zipf_frequencies(d)), rng)
    lls = [
        _loglik(m, run_quietly(m, "ibu", max_iter=k, accelerate=False).frequencies, "binomial")
        for k in (1, 2, 5, 20, 100)
    ]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(lls))


def test_ibu_warns_when_not_converged(rng):
    m = toy_measurement(CATALOGUE["noisy"])
    with pytest.warns(RuntimeWarning, match="max_iter"):
        bayesldp.postprocess(m, "ibu", max_iter=3)


def test_multinomial_likelihood_needs_grr():
    with pytest.raises(ValueError, match="multinomial"):
        # p + (d - 1) q = 1/2 + 3/4 != 1: these counts cannot be multinomial.
        m = toy_measurement([0.5, 0.5, 0.0, 0.0])
        bayesldp.postprocess(m, "mle", likelihood="multinomial")


def test_multinomial_likelihood_needs_counts_summing_to_n():
    # GRR's p and q (p + (d-1) q = 1) on an oracle the library does not know, so the
    # Measurement itself does not insist on the sum: 60 + 30 + 20 = 110 reports from
    # 100 users cannot be one multinomial draw, and mle must not treat them as one.
    p = float(np.e / (np.e + 2))
    q = (1 - p) / 2
    m = bayesldp.Measurement.from_support_counts([60, 30, 20], 100, p, q, oracle="custom")
    with pytest.raises(ValueError, match="sum to 110, n=100"):
        bayesldp.postprocess(m, "mle", likelihood="multinomial")
    # the binomial marginals still apply
    binomial = bayesldp.postprocess(m, "mle", likelihood="binomial")
    assert binomial.frequencies.sum() == pytest.approx(1)
    # and the PyMC layer asks the same function
    from bayesldp.models.likelihood import resolve_kind

    with pytest.raises(ValueError, match="sum to 110, n=100"):
        resolve_kind(m, "multinomial")


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
