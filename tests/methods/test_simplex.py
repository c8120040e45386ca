"""Norm-Sub and CLS: the Euclidean projection onto the simplex, against independent references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayesldp.methods import project_simplex
from bayesldp.methods._simplex import project_rows
from tests.helpers import toy_measurement
from tests.methods.test_catalogue import CATALOGUE, run_quietly


def michelot_projection(x: np.ndarray, total: float = 1.0) -> tuple[np.ndarray, float]:
    """Michelot's active-set iteration: an algorithm independent of the sort-based one.

    Each pass sets delta so the active items sum to ``total`` and drops the items pushed
    to zero; delta only grows, so dropped items never return.
    """
    active = x
    while True:
        delta = (total - active.sum()) / active.size
        keep = active > -delta
        if keep.all():
            return np.maximum(x + delta, 0.0), float(delta)
        active = active[keep]


def brute_force_projection(x: np.ndarray) -> np.ndarray:
    """Projection by enumerating every support set and checking the KKT conditions."""
    d = x.size
    for size in range(1, d + 1):
        for support in itertools.combinations(range(d), size):
            s = list(support)
            delta = (1 - x[s].sum()) / size
            inside = x[s] + delta
            outside = np.delete(x, s) + delta
            if inside.min() > 0 and (outside.size == 0 or outside.max() <= 1e-15):
                f = np.zeros(d)
                f[s] = inside
                return f
    raise AssertionError("no KKT point found")


@pytest.mark.parametrize("case", [c for c in CATALOGUE if c != "d=1"])
def test_norm_sub_is_projection_brute_force(case):
    m = toy_measurement(CATALOGUE[case])
    ref = brute_force_projection(m.estimates)
    np.testing.assert_allclose(run_quietly(m, "norm-sub").frequencies, ref, atol=1e-12)
    np.testing.assert_allclose(run_quietly(m, "cls").frequencies, ref, atol=1e-12)


def test_norm_sub_equals_michelot_projection_random(rng):
    for d in (2, 10, 1000, 50_000):
        x = rng.normal(0, 0.05, d) + rng.dirichlet(np.full(d, 0.3))
        f1, delta = michelot_projection(x, 1.0)
        f2 = project_simplex(x, 1.0)
        np.testing.assert_allclose(f1, f2, atol=1e-12)
        rows, theta = project_rows(x[None, :], 1.0)
        np.testing.assert_array_equal(rows[0], f2)
        assert -theta[0] == pytest.approx(delta, abs=1e-12)


def test_norm_sub_is_closest_point_on_simplex(rng):
    """No random point of the simplex is closer to f~ than the projection."""
    m = toy_measurement(CATALOGUE["noisy"])
    f = run_quietly(m, "norm-sub").frequencies
    best = np.sum((f - m.estimates) ** 2)
    others = rng.dirichlet(np.ones(m.domain_size), size=20_000)
    assert np.all(np.sum((others - m.estimates) ** 2, axis=1) >= best - 1e-15)


def test_project_rows_with_a_zero_total_and_inactive_entries():
    x = np.array([[0.3, -0.2, 0.5], [0.4, 0.1, 0.2]])
    out, theta = project_rows(
        x, np.array([0.0, 0.5]), active=np.array([[1, 1, 0], [1, 1, 1]], bool)
    )
    np.testing.assert_array_equal(out[0], 0.0)
    assert theta[0] == 0.3  # a total of 0: the largest active entry
    assert out[1].sum() == pytest.approx(0.5)
    np.testing.assert_allclose(out[1], project_simplex(x[1], 0.5), atol=1e-15)


@pytest.mark.parametrize("values", [[], [0.5, float("nan")], [[0.5, 0.5]]])
def test_project_simplex_refuses_what_it_cannot_project(values):
    """An empty input was an IndexError deep inside; now a ValueError naming values."""
    from bayesldp.methods import project_simplex

    with pytest.raises(ValueError, match="values"):
        project_simplex(values)
