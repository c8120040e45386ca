"""Vectorised R-hat and bulk ESS (models.diagnostics.rhat_ess) against ArviZ, element by element."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesldp.errors import ConvergenceWarning
from bayesldp.models.diagnostics import DIAGNOSTIC_CHUNK, convergence_info, rhat_ess


def arviz_rhat_ess(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ArviZ's rank R-hat and bulk ESS of draws (chain, draw, d)."""
    import arviz as az

    data = az.convert_to_dataset({"f": x})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.rhat(data)["f"].values, az.ess(data)["f"].values


def ar1(rng, phi: float, chains: int, draws: int, k: int) -> np.ndarray:
    x = np.zeros((chains, draws, k))
    noise = rng.normal(size=x.shape)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


# (chains, draws, autocorrelation): each branch of Geyer's sequences and of the shape rules
CASES = [
    (1, 4, 0.0),  # one chain: R-hat is NaN, ESS is not; the fewest draws allowed
    (2, 4, 0.5),  # 2 draws per split chain: no pair of autocorrelations is summed
    (2, 7, -0.5),  # odd draws: the middle draw is left out of the split
    (2, 100, -0.9),  # negative autocorrelation: ESS above the number of draws
    (2, 100, 0.95),  # slow mixing: the positive sequence is cut early
    (4, 33, 0.0),
    (2, 1000, 0.999),  # nearly stuck chains: ESS of a few
    (3, 8, 0.7),
]


@pytest.mark.parametrize(("chains", "draws", "phi"), CASES)
def test_rhat_ess_equal_arviz(chains, draws, phi):
    rng = np.random.default_rng(draws)
    x = ar1(rng, phi, chains, draws, 6)
    x[..., 1] = np.round(x[..., 1])  # ties share their average rank
    x[..., 2] = 3.0  # constant: R-hat NaN, ESS = all draws
    x[..., 3] += 2.0 * np.arange(chains)[:, None]  # chains that disagree
    x[0, 0, 4] = np.nan  # a non-finite draw: NaN for that element only
    rhat, ess = rhat_ess(x)
    rhat_ref, ess_ref = arviz_rhat_ess(x)
    np.testing.assert_allclose(rhat, rhat_ref, rtol=1e-9, equal_nan=True)
    np.testing.assert_allclose(ess, ess_ref, rtol=1e-9, equal_nan=True)
    assert np.isnan(rhat[4]) and np.isnan(ess[4]) and np.isfinite(ess[5])


def test_constant_folded_draws_keep_the_bulk_rhat():
    """Two values with the median between them: ArviZ keeps the bulk R-hat.

    The folded draws are then constant, their R-hat is NaN, and ArviZ's
    ``max(bulk, nan)`` returns the bulk one (found by Hypothesis).
    """
    x = np.array([[0, -1, -1, -1, -1, 0, 0, 0, -1, -1], [0, 0, 0, 0, -1, 0, -1, -1, -1, 0]])
    x = x[:, :, None].astype(float)
    rhat, _ = rhat_ess(x)
    assert np.isfinite(rhat[0])
    np.testing.assert_allclose(rhat, arviz_rhat_ess(x)[0], rtol=1e-9)


def test_chunks_and_shapes(monkeypatch):
    """Elements are diagnosed in blocks; the result keeps the elements' shape."""
    rng = np.random.default_rng(1)
    x = ar1(rng, 0.3, 2, 40, 12).reshape(2, 40, 3, 4)
    whole = rhat_ess(x)
    monkeypatch.setattr("bayesldp.models.diagnostics.DIAGNOSTIC_CHUNK", 5)
    blocks = rhat_ess(x)
    for a, b in zip(whole, blocks, strict=True):
        assert a.shape == (3, 4)
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert rhat_ess(x[:, :, 0, 0])[0].shape == ()
    assert DIAGNOSTIC_CHUNK >= 1


@pytest.mark.parametrize(
    "bad",
    [np.zeros(10), [[True, False, True, False]], [["a", "b", "c", "d"]], [[1.0, [2.0]]], None],
)
def test_bad_draws_are_a_value_error_naming_them(bad):
    with pytest.raises(ValueError, match="draws"):
        rhat_ess(bad)


@settings(max_examples=40, deadline=None)
@given(
    chains=st.integers(1, 3),
    draws=st.integers(4, 40),
    phi=st.floats(-0.95, 0.99),
    levels=st.sampled_from([None, 2, 5]),
    seed=st.integers(0, 2**16),
)
def test_rhat_ess_equal_arviz_property(chains, draws, phi, levels, seed):
    """Any shape, autocorrelation and number of distinct values: ArviZ's numbers."""
    x = ar1(np.random.default_rng(seed), phi, chains, draws, 3)
    if levels is not None:
        x = np.round(x * levels / (np.abs(x).max() + 1e-12))
    rhat, ess = rhat_ess(x)
    rhat_ref, ess_ref = arviz_rhat_ess(x)
    np.testing.assert_allclose(rhat, rhat_ref, rtol=1e-9, equal_nan=True)
    np.testing.assert_allclose(ess, ess_ref, rtol=1e-9, equal_nan=True)


def diagnose(x: np.ndarray, divergences: int = 0) -> dict:
    """Return the rule's verdict on draws ``x`` (chain, draw, k) of a vector and a scalar."""
    import arviz as az

    diverging = np.zeros(x.shape[:2], dtype=bool)
    diverging.flat[:divergences] = True
    idata = az.from_dict(posterior={"f": x, "s": x[..., 0]}, sample_stats={"diverging": diverging})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = convergence_info(idata, ["f", "s"])
    assert [str(w.message) for w in caught if w.category is ConvergenceWarning] == info["warnings"]
    return info


def test_the_rule_is_silent_where_the_largest_rhat_passes_one_point_01_by_chance():
    # 2 chains x 1000 draws, autocorrelation 0.5 (ESS ~ 660), 2000 elements: the largest
    # R-hat passes 1.01 by chance, the multiplicity-aware limit does not fire
    rng = np.random.default_rng(0)
    x = ar1(rng, 0.5, 2, 1000, 2000)
    info = diagnose(x)
    assert info["r_hat"]["f"] > 1.01
    assert info["warnings"] == [] and info["r_hat_limit"]["f"] > info["r_hat"]["f"]


def test_the_rule_fires_on_a_stuck_element_a_shared_drift_few_draws_and_divergences():
    rng = np.random.default_rng(1)
    x = ar1(rng, 0.5, 2, 1000, 500)
    stuck = x.copy()
    stuck[1, :, 7] += 3.0  # one element: the chains sit in different modes
    assert any("r_hat(f) =" in w for w in diagnose(stuck)["warnings"])
    shifted = x + np.array([0.0, 0.5])[:, None, None]  # every element follows one location
    assert any("drift together" in w for w in diagnose(shifted)["warnings"])
    few = diagnose(ar1(rng, 0.5, 2, 40, 500))["warnings"]
    assert any("ess_bulk(s) =" in w for w in few) and any("median" in w for w in few)
    diverged = diagnose(x, divergences=3)
    assert diverged["divergences"] == 3
    assert any("dirichlet_simplex" in w for w in diverged["warnings"])


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 4), st.integers(1, 500), st.floats(0.0, 0.6), st.integers(0, 2**16))
def test_rhat_limit_is_at_least_the_usual_one_and_grows_with_the_elements(chains, k, phi, seed):
    from bayesldp.models.diagnostics import RHAT_MAX, rhat_limit

    ess = np.random.default_rng(seed).uniform(50, 4000, size=3)
    one, many = rhat_limit(1, ess, chains, 1000), rhat_limit(k, ess, chains, 1000)
    assert np.all(one >= RHAT_MAX) and np.all(many >= one)
