"""The jittered static-HMC sampler ("numpyro-hmc") of bayesldp.models.fit.

Its posterior is checked against exact quadrature and by simulation-based calibration in
tests/models/test_dirichlet.py; here: the length really is redrawn and capped, the starts,
the InferenceData it returns, its options and its errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp

pm = pytest.importorskip("pymc")
pytest.importorskip("numpyro")

from bayesldp import models  # noqa: E402
from bayesldp.models import _jax_hmc as jax_hmc  # noqa: E402


def quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return func(*args, **kwargs)


@pytest.fixture(scope="module")
def tiny_model():
    oracle = bayesldp.oracles.make_oracle("OUE", 2.0, 3)
    m = oracle.simulate([210, 75, 15], np.random.default_rng(0))
    with pm.Model(coords={"item": range(3)}) as model:
        f = pm.Dirichlet("f", np.ones(3), dims="item")
        models.ldp_likelihood("counts", f, m)
    return model, m


def draws_steps(est):
    return est.inference_data.sample_stats["n_steps"].values


@pytest.mark.slow  # the jitter; the default suite checks the sampler against the exact posterior
def test_the_length_is_redrawn_each_iteration(tiny_model):
    # after warm-up the step size is fixed, so the steps per iteration, ceil(L u / eps),
    # vary only through the drawn length u: constant without jitter, spread with it
    model, m = tiny_model
    run = {"draws": 200, "tune": 200, "sampler": "numpyro-hmc", "rng": 2}
    fixed = quiet(models.fit, model, m, sampler_kwargs={"jitter": 0.0}, **run)
    jittered = quiet(models.fit, model, m, **run)
    for est in (fixed, jittered):
        step = est.inference_data.sample_stats["step_size"].values
        assert np.all(step == step[:, :1])  # fixed within each chain after warm-up
    assert np.all(draws_steps(fixed) == draws_steps(fixed)[:, :1])
    steps = draws_steps(jittered)
    assert all(len(np.unique(chain)) >= 3 for chain in steps)
    # lengths in [1.5, 4.5]: the steps' range is about 3 to 1 within each chain
    ratio = steps.max(axis=1) / steps.min(axis=1)
    assert np.all((ratio > 1.8) & (ratio < 3.6)), ratio


def test_max_steps_caps_every_iteration(tiny_model):
    model, m = tiny_model
    est = quiet(
        models.fit, model, m, draws=50, tune=100, sampler="numpyro-hmc", rng=1,
        sampler_kwargs={"max_steps": 2, "trajectory_length": 50.0},
    )  # fmt: skip
    assert draws_steps(est).max() <= 2 and draws_steps(est).min() >= 1


def test_inference_data_has_the_model_variables_and_stats(tiny_model):
    model, m = tiny_model
    est = quiet(models.fit, model, m, draws=40, tune=40, sampler="numpyro-hmc", rng=3)
    idata = est.inference_data
    assert set(idata.posterior.data_vars) == {"f"}  # the simplex's coordinates are left out
    assert idata.posterior["f"].dims == ("chain", "draw", "item")
    assert idata.posterior["f"].shape == (2, 40, 3)
    np.testing.assert_allclose(idata.posterior["f"].values.sum(axis=-1), 1.0, atol=1e-12)
    assert set(idata.sample_stats.data_vars) == set(jax_hmc.STATS.values())
    lp = idata.sample_stats["lp"].values
    # lp is the model's log-density at each draw, in the sampler's (unconstrained)
    # coordinates, Jacobian included
    import pytensor.tensor as pt

    logp = model.compile_logp()
    transform = model.rvs_to_transforms[model["f"]]
    raw = idata.posterior["f"].values[0, :5]
    expected = [logp({"f_simplex__": transform.forward(pt.as_tensor(x)).eval()}) for x in raw]
    np.testing.assert_allclose(lp[0, :5], expected, rtol=1e-8)
    np.testing.assert_array_equal(idata.observed_data["counts"].values, m.support_counts)
    assert est.info["sampler"] == "numpyro-hmc" and est.info["chain_method"] == "parallel"


def test_same_seed_same_draws(tiny_model):
    model, m = tiny_model
    run = {"draws": 30, "tune": 30, "sampler": "numpyro-hmc"}
    a = quiet(models.fit, model, m, rng=5, **run)
    b = quiet(models.fit, model, m, rng=5, **run)
    c = quiet(models.fit, model, m, rng=6, **run)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    assert not np.array_equal(a.frequencies, c.frequencies)


def test_chains_start_apart_at_finite_points(tiny_model):
    model, _ = tiny_model
    from pymc.sampling.jax import get_jaxified_logp

    potential = get_jaxified_logp(model, negative_logp=False)
    starts = jax_hmc.initial_points(model, 3, np.random.default_rng(0), potential)
    assert len(starts) == 1 and starts[0].shape == (3, 2)
    assert len({tuple(row) for row in starts[0]}) == 3
    # a model whose density is infinite everywhere has no start
    with pytest.raises(ValueError, match="finite"):
        jax_hmc.initial_points(model, 1, np.random.default_rng(0), lambda values: np.inf)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"jitter": 1.0}, "jitter"),
        ({"jitter": -0.1}, "jitter"),
        ({"jitter": True}, "jitter"),
        ({"trajectory_length": 0.0}, "trajectory_length"),
        ({"trajectory_length": float("nan")}, "trajectory_length"),
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 2.0}, "max_steps"),
        ({"target_accept": 1.0}, "target_accept"),
        ({"chain_method": "threads"}, "chain_method"),
        ({"max_tree_depth": 5}, "cannot set max_tree_depth"),
        ({"draws": 5}, "cannot set draws"),
    ],
)
def test_bad_options_are_refused(tiny_model, options, match):
    model, m = tiny_model
    with pytest.raises(ValueError, match=match):
        models.fit(
            model, m, draws=5, tune=5, sampler="numpyro-hmc", rng=1,
            sampler_kwargs=options,
        )  # fmt: skip


@pytest.mark.slow  # one more compilation for a setting recorded as not applied
def test_warmup_tree_depth_is_not_applied(tiny_model):
    # a NUTS-only setting: recorded as not applied, as for nutpie and PyMC
    model, m = tiny_model
    est = quiet(
        models.fit, model, m, draws=20, tune=20, sampler="numpyro-hmc", rng=1,
        warmup_tree_depth=3,
    )  # fmt: skip
    assert est.info["warmup_tree_depth"] is None


SCALES = np.array([0.3, 1.0, 3.0])


def gaussian_draws(kernel, seed=0, draws=20_000):
    """Draws of the kernel from N(0, diag(SCALES^2)) (one chain, after 1000 warm-up)."""
    import jax
    from numpyro.infer import MCMC

    mcmc = MCMC(kernel, num_warmup=1000, num_samples=draws, num_chains=1, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), init_params=(np.zeros(3),))
    return np.asarray(mcmc.get_samples()[0])


def gaussian_potential(z):
    return 0.5 * ((z[0] / SCALES) ** 2).sum()


def assert_standard_moments(x):
    """Means and sds of the draws against N(0, SCALES^2), to 4 Monte Carlo errors."""
    import arviz as az

    def ess(y):
        return np.array([float(az.ess(y[None, :, i])) for i in range(y.shape[1])])

    np.testing.assert_array_less(np.abs(x.mean(axis=0)), 4 * SCALES / np.sqrt(ess(x)))
    # the sd's relative error is sqrt(1 / (2 ESS)), with the ESS of the squares
    np.testing.assert_array_less(np.abs(x.std(axis=0) / SCALES - 1), 4 / np.sqrt(2 * ess(x**2)))


def test_jittered_kernel_samples_a_gaussian():
    assert_standard_moments(gaussian_draws(jax_hmc.jittered_hmc_kernel(gaussian_potential)))


@pytest.mark.slow  # a check of the check above
def test_the_moment_check_fails_when_the_length_follows_the_momentum():
    # the check above can fail: a length drawn from the key HMC draws the momentum from
    # (JAX's split(key, 3)[1] is fold_in(key, 1)) ties the two, and the chain is biased
    # (the smallest coordinate's mean -0.12, 0.4 sd; the kernel once did this)
    import jax
    from numpyro.infer import HMC

    class TiedLength(HMC):
        def sample(self, state, model_args, model_kwargs):
            u = jax.random.uniform(jax.random.fold_in(state.rng_key, 1), minval=0.5, maxval=1.5)
            state = state._replace(trajectory_length=3.0 * u)
            return super().sample(state, model_args, model_kwargs)

    with pytest.raises(AssertionError):
        assert_standard_moments(
            gaussian_draws(TiedLength(potential_fn=gaussian_potential, trajectory_length=3.0))
        )


@pytest.mark.slow  # a subprocess that compiles and samples a model
def test_profile_script_reports_each_factor_of_the_cost():
    from tests.helpers import run_script_rows

    rows = run_script_rows(
        "bayes_hmc_profile.py", "--d", "64", "--tune", "100", "--draws", "20", "--repeats", "2"
    )
    row = rows[-1]
    assert row["grad_ms"] > 0 and row["grad_ms_2chains"] > 0
    assert len(row["steps_warmup_per_50"]) == 2
    assert sum(row["steps_warmup_per_50"]) >= row["steps_warmup_total"]  # per block: the most
    assert row["steps_draws_total"] >= 20 and len(row["step_size_adapted"]) == 2
    assert row["ess_bulk_worst_free"] > 0 and row["r_hat_worst_free"] > 0.9


@pytest.mark.parametrize("budget", [4 * 3, 10**9], ids=["batches", "all-at-once"])
def test_transform_draws_matches_vmap_in_batches(monkeypatch, budget):
    # a batch of 4 draws of width 3 (14 draws: a remainder of 2), or every draw at once
    import jax
    import jax.numpy as jnp

    def transform(x, y):
        return [jnp.exp(x) / jnp.sum(jnp.exp(x)), x * y, jnp.sum(x) + y]

    rng = np.random.default_rng(0)
    raw = [jnp.asarray(rng.normal(size=(2, 7, 3))), jnp.asarray(rng.normal(size=(2, 7)))]
    monkeypatch.setattr(jax_hmc, "TRANSFORM_BATCH_NUMBERS", budget)
    got = jax_hmc.transform_draws(transform, raw)
    expected = jax.vmap(jax.vmap(transform))(*raw)
    assert [g.shape for g in got] == [(2, 7, 3), (2, 7, 3), (2, 7)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12)
