"""bayes-dirichlet and dirichlet_simplex: the density, the exact posterior, SBC, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.models.exact_posterior import ExactDirichletPosterior, normal_grid

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from tests.models.common import (  # noqa: E402
    NEEDS_NUMPYRO,
    SAMPLER,
    assert_matches_exact,
    assert_uniform_ranks,
    oracle_measurements,
    quiet,
    sbc_ranks,
    tiny,
)


@pytest.mark.parametrize(
    "alpha",
    [0.3, 0.02, np.array([0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 2.0, 2.0])],
    ids=["symmetric", "symmetric-small", "per-item"],
)
def test_dirichlet_simplex_density_is_the_dirichlet(alpha):
    """The sampled coordinates' log-density is scipy's Dirichlet plus the change of variables.

    Rebuilt in NumPy with a finite-difference Jacobian of each coordinate's map.
    """
    from bayesldp.models import _concentration, dirichlet

    m = oracle_measurements()["OUE"]
    d = m.domain_size
    hints = dirichlet.parametrization_hints(m)
    ref = int(np.argmax(hints["reference"]))
    alpha_vec = np.broadcast_to(alpha, d).astype(float)
    with pm.Model() as model:
        dirichlet.dirichlet_simplex("f", alpha, m)
    logp = model.compile_logp()
    # each item's sharpness: data, by the rule written out (kink_sharpness's docstring)
    a0 = math.exp(_concentration.concentration_start(m))
    need = (np.log(1 / (a0 * hints["width"])) - np.log(dirichlet.PEAK_LEAK)) / np.abs(hints["kink"])
    k = np.minimum(np.maximum(dirichlet.KINK_SHARPNESS, need), dirichlet.SHARPNESS_MAX)
    k = np.where(hints["start"] < 0, np.minimum(k, dirichlet.TAIL_SHARPNESS_MAX), k)
    k[ref] = dirichlet.KINK_SHARPNESS
    np.testing.assert_allclose(k, hints["sharpness"], rtol=1e-12)
    assert np.unique(k.round(6)).size > 1  # the items' sharpness differs in this case

    def y_of(u):
        soft = np.logaddexp(0.0, -k * (u - hints["kink"])) / (k * alpha_vec)
        y = hints["centre"] + hints["width"] * u - soft
        y[ref] = 0.0
        return y

    rng = np.random.default_rng(0)
    for _ in range(5):
        t = rng.normal(0.0, 2.0, d)
        u = t + hints["start"]
        y = y_of(u)
        f = np.exp(y - np.logaddexp.reduce(y))
        h = 1e-6
        slope = (y_of(u + h) - y_of(u - h)) / (2 * h)
        others = np.arange(d) != ref
        expected = (
            stats.dirichlet.logpdf(f, alpha_vec)
            + np.log(f).sum()  # the additive log-ratio map's Jacobian
            + np.log(slope[others]).sum()
            + stats.norm.logpdf(t[ref])  # the unused reference slot
        )
        assert logp({"f_t": t}) == pytest.approx(expected, rel=1e-7, abs=1e-6)


@pytest.mark.parametrize(
    "oracle_name, kind, sampler",
    [
        ("OUE", "binomial", SAMPLER),
        pytest.param("GRR", "multinomial", SAMPLER, marks=pytest.mark.slow),
        # NumPyro differentiates the model's JAX form itself (see the gradient test below)
        pytest.param("OUE", "binomial", "numpyro", marks=[NEEDS_NUMPYRO, pytest.mark.slow]),
        # the model's default: static HMC with a jittered length, its own kernel
        pytest.param("OUE", "binomial", "numpyro-hmc", marks=NEEDS_NUMPYRO),
    ],
)
def test_bayes_dirichlet_matches_exact_posterior(oracle_name, kind, sampler):
    m = tiny(oracle_name)
    x, log_w = normal_grid(0.0, 2.0, -10.0, 4.5, 80)
    exact = ExactDirichletPosterior(m, kind, [np.full(3, math.exp(v)) for v in x], log_w, 40)
    assert exact.hyper_weights[[0, -1]].max() < 1e-5  # the grid holds the posterior of log a
    est = quiet(models.bayes_dirichlet, m, draws=1000, tune=500, sampler=sampler, cores=1, rng=3)
    assert est.method == "bayes-dirichlet" and est.info["sampler"] == sampler
    # log a is loosely identified on three items, and where a is tiny the kink of
    # dirichlet_simplex is sharp: a few transitions in a thousand may diverge; the
    # posterior must still match the exact one.
    assert est.info["divergences"] <= 0.0025 * 2000
    assert_matches_exact(est, exact, [2])


@pytest.mark.parametrize(
    "sampler",
    [
        # 20 fits each: slow; the default suite checks the samplers against the exact
        # posterior (above)
        pytest.param(SAMPLER, marks=pytest.mark.slow),
        pytest.param("numpyro", marks=[NEEDS_NUMPYRO, pytest.mark.slow]),
    ],
)
def test_sbc_bayes_dirichlet_small(sampler):
    from bayesldp.models.dirichlet import prior_sampler

    rng = np.random.default_rng(7)
    ranks = sbc_ranks(
        models.bayes_dirichlet, prior_sampler((0.0, 2.0), 3), sims=20, d=3, n=200, rng=rng,
        draws=200, tune=200, chains=1, sampler=sampler,
    )  # fmt: skip
    assert_uniform_ranks(ranks)


def test_sbc_detects_a_wrong_posterior():
    # the check can fail: ranks of draws from a posterior that is too narrow pile up
    rng = np.random.default_rng(1)
    truth = rng.normal(size=(200, 3))
    draws = truth[:, None, :] * 0.0 + 0.3 * rng.normal(size=(200, 99, 3))
    ranks = (draws < truth[:, None, :]).sum(axis=1)
    with pytest.raises(AssertionError):
        assert_uniform_ranks(ranks)


def test_dirichlet_coordinates_refuse_a_non_measurement():
    from bayesldp.models import dirichlet

    with pytest.raises(ValueError, match=r"^m must be a bayesldp\.Measurement, got list"):
        dirichlet.parametrization_hints([1, 2, 3])
    with pm.Model(), pytest.raises(ValueError, match=r"^measurement must be a bayesldp"):
        dirichlet.dirichlet_simplex("f", 0.5, "counts")
