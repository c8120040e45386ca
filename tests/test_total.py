"""Conditioning draws of the counts on their total (``bayesldp._total``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize

from bayesldp._total import condition_on_total


def test_without_clipping_it_is_gaussian_conditioning():
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, 50.0, size=200)
    var = rng.gamma(2.0, 10.0, size=200)
    var[:5] = 0.0
    n = x.sum() - 100.0
    out = condition_on_total(x, var, n)
    np.testing.assert_allclose(out, x - var / var.sum() * (x.sum() - n), rtol=1e-12)
    np.testing.assert_array_equal(out[:5], x[:5])


def test_clipping_is_the_variance_weighted_projection():
    """max(x - var * delta, 0) with delta by bisection; zero-variance items untouched."""
    rng = np.random.default_rng(0)
    x = rng.gamma(2.0, 50.0, size=200)
    var = rng.gamma(2.0, 10.0, size=200)
    var[:5] = 0.0
    n = 0.3 * x.sum()
    out = condition_on_total(x, var, n)

    def total(delta):
        return np.where(var > 0, np.maximum(x - var * delta, 0), x).sum() - n

    delta = optimize.brentq(total, 0, 1e6, xtol=1e-14)
    np.testing.assert_allclose(out, np.where(var > 0, np.maximum(x - var * delta, 0), x))
    assert out.min() >= 0 and out.sum() == pytest.approx(n, rel=1e-12)
    np.testing.assert_array_equal(out[:5], x[:5])


def test_rows_are_conditioned_independently():
    """A matrix of rows gives what each row gives alone (per-row variances too)."""
    rng = np.random.default_rng(1)
    x = rng.gamma(0.5, 40.0, size=(30, 50))
    x[rng.random(x.shape) < 0.3] = 0.0
    var = rng.gamma(1.0, 20.0, size=50)
    n = 600.0
    out = condition_on_total(x, var, n)
    for row, moved in zip(x, out, strict=True):
        np.testing.assert_allclose(moved, condition_on_total(row, var, n), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(out.sum(axis=1), n, rtol=1e-12)
    per_row = rng.gamma(1.0, 20.0, size=x.shape)
    out = condition_on_total(x, per_row, n)
    for row, v, moved in zip(x, per_row, out, strict=True):
        np.testing.assert_allclose(moved, condition_on_total(row, v, n), rtol=1e-12, atol=1e-9)


def test_the_mean_and_covariance_of_conditioned_gaussians():
    # Independent Gaussians conditioned on their sum: mean mu_v + v_v/V (n - sum mu) and
    # covariance diag(v) - v v^T / V. Large means keep clipping out of the picture.
    rng = np.random.default_rng(20201122)
    mu = np.array([4000.0, 2500.0, 1500.0, 1000.0, 800.0])
    var = np.array([900.0, 400.0, 2500.0, 100.0, 1600.0])
    n = 10_000
    x = mu + np.sqrt(var) * rng.standard_normal((200_000, mu.size))
    out = condition_on_total(x, var, n)
    np.testing.assert_allclose(out.sum(axis=1), n, rtol=1e-12)
    total_var = var.sum()
    mean = mu + var / total_var * (n - mu.sum())
    cov = np.diag(var) - np.outer(var, var) / total_var
    np.testing.assert_allclose(out.mean(axis=0), mean, atol=0.5)
    np.testing.assert_allclose(np.cov(out.T), cov, atol=0.03 * var.max())


def test_fallbacks_scale_or_share_equally():
    # the zero-variance items alone exceed the total: clipped and scaled
    x = np.array([8.0, 4.0, -1.0, 3.0])
    var = np.array([0.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(condition_on_total(x, var, 10.0), [16 / 3, 8 / 3, 0, 2.0])
    # no item has a variance: clipped and scaled
    np.testing.assert_allclose(condition_on_total(x, np.zeros(4), 5.0), [8 / 3, 4 / 3, 0, 1.0])
    # nothing positive and nothing to move: shared equally
    np.testing.assert_allclose(condition_on_total(np.zeros(4), np.zeros(4), 5.0), 1.25)
    # every row of a matrix takes its own route
    rows = np.array([[8.0, 4.0, -1.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    out = condition_on_total(rows, var, 10.0)
    np.testing.assert_allclose(out.sum(axis=1), 10.0)
    np.testing.assert_allclose(out[0], [16 / 3, 8 / 3, 0, 2.0])
    np.testing.assert_allclose(out[1], [1.0, 1.0, 3.0, 5.0])  # shift 6 shared 1:2
    np.testing.assert_allclose(out[2], [0.0, 0.0, 10 / 3, 20 / 3])


@settings(max_examples=60, deadline=None)
@given(
    x=hnp.arrays(np.float64, st.integers(1, 12), elements=st.floats(0, 1e6)),
    data=st.data(),
    total=st.floats(1e-3, 1e7),
)
def test_always_non_negative_and_on_the_total(x, data, total):
    var = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(0, 1e6)))
    out = condition_on_total(x, var, total)
    assert out.shape == x.shape
    assert out.min() >= 0
    # on the total to the rounding of the largest count moved
    assert out.sum() == pytest.approx(total, rel=1e-9, abs=1e-12 * x.sum())
