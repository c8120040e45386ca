"""Sums over the count cells at fixed points (``_node_sums``), splines on fixed nodes.

Every point's log evidence, posterior mean and variance against a direct sum over every
cell of the grid, for priors whose mass sits far from some points (where the windows
of cells must be widened to every cell); the splines against ``CubicSpline``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.special import logsumexp

from bayesldp.models import _counts, _node_sums, _spline


def direct_sums(grid, log_mass, sigma_c, points):
    """Log evidence, mean and variance at each point, summing every cell (no window)."""
    x = grid.x
    lw = log_mass[None, :] - (x[None, :] - points[:, None]) ** 2 / (2 * sigma_c**2)
    log_z = logsumexp(lw, axis=1)
    w = np.exp(lw - log_z[:, None])
    mean = w @ x
    var = (w * (x[None, :] - mean[:, None]) ** 2).sum(axis=1)
    return log_z - math.log(sigma_c) - _node_sums.LOG_SQRT_2PI, mean, var


@pytest.mark.parametrize(
    ("n", "sigma_c", "s", "c"),
    [
        (50_000, 429.0, 1.6, 30.0),  # the lowest points' windows miss mass: every cell
        (50_000, 429.0, 8.0, 0.01),  # nearly all mass at 0, far from most points
        (50_000, 429.0, 0.5, 50_000.0),  # nearly flat
        (3_000, 40.0, 4.0, 1.0),
        (1_000_000, 1919.0, 2.0, 1000.0),
    ],
)
def test_node_sums_match_every_cell(n, sigma_c, s, c):
    grid = _counts.CountGrid.build(n, sigma_c)
    log_mass = _counts.log_prior_mass(grid, s, c)
    # unsorted, repeated, below 0 (some windows hold no cell at all) and above n
    points = np.concatenate(
        [
            _counts.item_nodes(-8 * sigma_c, 0.4 * n, sigma_c)[::-1],
            [-30 * sigma_c, 15 * sigma_c, 15 * sigma_c, 0.0, n + 12 * sigma_c],
        ]
    )
    windows = _node_sums.NodeWindows.build(grid.x, sigma_c, points)
    log_ev, mean, var = windows.moments(log_mass)
    ref_log_ev, ref_mean, ref_var = direct_sums(grid, log_mass, sigma_c, points)
    np.testing.assert_allclose(log_ev, ref_log_ev, rtol=1e-13, atol=1e-10)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-11, atol=1e-9 * sigma_c)
    # E[x^2] - E[x]^2 loses digits when the mean is many standard deviations
    np.testing.assert_allclose(var, ref_var, rtol=1e-7)
    # the same again (the kernels kept from the first call), and through node_moments
    again = windows.moments(log_mass)
    np.testing.assert_array_equal(again[1], mean)
    fresh = _counts.node_moments(grid, log_mass, sigma_c, points)
    np.testing.assert_array_equal(fresh[0], log_ev)


def test_far_mass_is_summed():
    # A prior with its mass at 0 and a point 12 sigma up: the point's own window (from 2
    # sigma) misses the mass, and the posterior mean is near 0, not near the point.
    sigma_c = 429.0
    grid = _counts.CountGrid.build(50_000, sigma_c)
    log_mass = _counts.log_prior_mass(grid, 8.0, 0.01)
    points = np.array([12 * sigma_c])
    _, mean, _ = _node_sums.NodeWindows.build(grid.x, sigma_c, points).moments(log_mass)
    _, ref_mean, _ = direct_sums(grid, log_mass, sigma_c, points)
    assert ref_mean[0] < sigma_c
    assert mean[0] == pytest.approx(ref_mean[0], rel=1e-10)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 60])
def test_splines_match_cubic_spline(size):
    rng = np.random.default_rng(size)
    x = np.cumsum(rng.uniform(0.5, 2.0, size))
    y = np.stack([rng.normal(size=size), np.sin(x), 1e3 + x**2], axis=1)
    z = np.concatenate([np.linspace(x[0] - 1.0, x[-1] + 1.0, 400), x])
    splines = _spline.cubic_splines(x, y)
    assert len(splines) == 3
    for j, spline in enumerate(splines):
        ref = CubicSpline(x, y[:, j])(z)
        np.testing.assert_allclose(spline(z), ref, rtol=1e-12, atol=1e-12)
        assert spline(float(x[1])).shape == ()
