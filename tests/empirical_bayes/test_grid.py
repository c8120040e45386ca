"""The grid of counts (``bayesldp.empirical_bayes._grid``)."""

from __future__ import annotations

import numpy as np
import pytest

from bayesldp.empirical_bayes import count_grid, eb_npmle
from bayesldp.empirical_bayes._grid import count_noise_sd
from tests.empirical_bayes.helpers import zipf_measurement


def test_grid_layout():
    _, m = zipf_measurement(d=200, n=100_000, seed=13)
    grid = count_grid(m, spacing=0.25, growth=0.02, window=8.0)
    assert grid[0] == 0 and np.all(grid == np.round(grid)) and np.all(np.diff(grid) > 0)
    # every count up to 1 / growth, relative steps capped at spacing * sd
    np.testing.assert_array_equal(grid[:51], np.arange(51))
    step = np.diff(grid)
    sd = count_noise_sd(m, grid[:-1])
    inside = step <= np.maximum(1, np.minimum(0.02 * grid[:-1], 0.25 * sd)) + 1e-9
    jumps = ~inside  # allowed only across stretches farther than the window from all data
    y = np.sort(m.estimates * m.n)
    for a, b in zip(grid[:-1][jumps], grid[1:][jumps], strict=True):
        mid = (a + b) / 2
        assert np.abs(y - mid).min() > 8 * count_noise_sd(m, mid) - (b - a) / 2
    # covers every count estimate within the window
    assert grid[-1] >= min(m.n, y[-1])


def test_grid_resolution():
    """Halving the grid's steps moves the estimates by a small fraction of the noise.

    Tolerances (in noise standard deviations of a count): root mean square 0.02 and
    largest 0.25 over the items. The largest change is on an item alone in its region
    of counts, whose estimate is the NPMLE atom next to it: a grid step of ``s/4`` puts
    that atom within ``s/8`` of the continuous NPMLE's.
    """
    _, m = zipf_measurement(d=400, n=200_000, seed=12)
    sc = m.sigma * m.n
    coarse = eb_npmle(m, uncertainty="plug-in")
    fine = eb_npmle(m, uncertainty="plug-in", grid_spacing=0.125, grid_growth=0.01)
    assert fine.info["grid_size"] > 1.7 * coarse.info["grid_size"]
    diff = (fine.frequencies - coarse.frequencies) * m.n / sc
    assert np.sqrt(np.mean(diff**2)) < 0.02
    assert np.abs(diff).max() < 0.25


@pytest.mark.parametrize("name", ["spacing", "growth", "window"])
@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), True, "1"])
def test_bad_grid_options_raise_naming_them(name, bad):
    _, m = zipf_measurement(d=20, n=2000)
    with pytest.raises(ValueError, match=name):
        count_grid(m, **{name: bad})
    with pytest.raises(ValueError, match="likelihood"):
        count_grid(m, likelihood="poisson")
