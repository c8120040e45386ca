"""fit: pymc.sample with each sampler, settings, reproducibility, refits and errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import bayesldp

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from tests.models.common import (  # noqa: E402
    RUN,
    oracle_measurements,
    quiet,
    tiny,
)


def test_same_seed_same_result(oue_fit, oue_fit_other_seed):
    m, est = oue_fit
    again = quiet(models.bayes_dirichlet, m, draws=300, tune=300, **RUN, rng=5)
    np.testing.assert_array_equal(est.frequencies, again.frequencies)
    other = oue_fit_other_seed
    assert not np.array_equal(est.frequencies, other.frequencies)


def test_estimate_carries_posterior(oue_fit):
    _, est = oue_fit
    assert est.is_consistent()
    assert est.uncertainty.n_draws == 600
    draws = est.uncertainty.sample(0, 600)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(est.frequencies, draws.mean(axis=0))
    lo, hi = est.interval([0, 1], 0.9, method="posterior")
    assert lo <= est.subset([0, 1]) <= hi
    idx, _ = est.top_k(2)
    assert list(idx) == [0, 1]
    assert est.info["inference_data"] is est.inference_data
    assert {"r_hat", "ess_bulk", "divergences", "sampler"} <= set(est.info)
    assert {"log_a", "f"} <= set(est.info["r_hat"])


def test_refit_on_new_measurement_uses_its_data(oue_fit):
    # the cached model must see the swapped-in counts
    m, est = oue_fit
    reversed_m = bayesldp.Measurement.from_support_counts(
        m.support_counts[::-1], m.n, m.p, m.q, oracle="OUE"
    )
    other = quiet(models.bayes_dirichlet, reversed_m, draws=300, tune=300, **RUN, rng=5)
    assert other.top_k(1)[0][0] == 2 and est.top_k(1)[0][0] == 0
    np.testing.assert_allclose(other.frequencies[::-1], est.frequencies, atol=0.03)


def test_custom_model_fit_with_pymc_sampler():
    # the README's user model, fitted by PyMC's own NUTS (small settings)
    m = tiny("GRR")
    with pm.Model(coords={"item": range(m.domain_size)}) as model:
        a = pm.Exponential("a", 1.0)
        f = pm.Dirichlet("f", a * np.ones(m.domain_size), dims="item")
        models.ldp_likelihood("counts", f, m)
    est = quiet(models.fit, model, m, draws=200, tune=200, sampler="pymc", rng=1, cores=1)
    assert est.info["sampler"] == "pymc" and est.info["likelihoods"] == {"counts": "multinomial"}
    assert est.is_consistent()
    again = quiet(models.fit, model, m, draws=200, tune=200, sampler="pymc", rng=1, cores=1)
    np.testing.assert_array_equal(est.frequencies, again.frequencies)


def test_sampler_kwargs_reach_the_sampler(oue_fit):
    # a tree-depth cap of 2 allows at most 3 leapfrog steps per draw; the default
    # lets the tiny model's trees grow past that, so the cap is visibly applied
    m, est = oue_fit
    model = est.info["model"]
    capped = quiet(
        models.fit, model, m, draws=100, tune=100, **RUN, rng=3,
        sampler_kwargs={"max_treedepth": 2},
    )  # fmt: skip
    assert dict(capped.info["settings"].sampler_kwargs) == {"max_treedepth": 2}
    assert capped.inference_data.sample_stats["n_steps"].values.max() <= 3
    assert est.inference_data.sample_stats["n_steps"].values.max() > 3
    step = {}
    for accept in (0.8, 0.99):
        fitted = quiet(models.fit, model, m, draws=50, tune=100, **RUN, rng=3, target_accept=accept)
        assert fitted.info["settings"].target_accept == accept
        step[accept] = fitted.inference_data.sample_stats["step_size"].values.mean()
    assert step[0.99] < 0.7 * step[0.8]


def test_settings_object_is_validated_once_and_shared():
    # one frozen object: fit and every ready-made model take it, keywords replace fields
    assert models.available_samplers()[0] == "numpyro" and "pymc" in models.available_samplers()
    settings = models.SamplerSettings(draws=50, tune=50, sampler="pymc", cores=1)
    assert models.SamplerSettings(draws=50) == models.SamplerSettings(draws=np.int64(50))
    with pytest.raises(AttributeError):
        settings.draws = 10  # type: ignore[misc]
    m = tiny("OUE")
    fits = [
        quiet(fitter, m, settings=settings, rng=1, chains=1)
        for fitter in (models.bayes_dirichlet, models.bayes_power)
    ]
    for est in fits:
        assert est.info["settings"] == dataclasses.replace(settings, chains=1)
    for bad, name in [
        ({"draws": 0}, "draws"), ({"tune": -1}, "tune"), ({"chains": True}, "chains"),
        ({"sampler": "stan"}, "sampler"), ({"target_accept": 1.0}, "target_accept"),
        ({"cores": 0}, "cores"), ({"threads": 1.5}, "threads"),
        ({"progressbar": 1}, "progressbar"), ({"warmup_tree_depth": 0}, "warmup_tree_depth"),
        ({"sampler_kwargs": {"quiet": True}}, "sampler_kwargs"),
        ({"clear_jax_caches": 1}, "clear_jax_caches"),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=name):
            models.SamplerSettings(**bad)
        with pytest.raises(ValueError, match=name):
            models.bayes_consistent(m, **bad)
    with pytest.raises(ValueError, match="unknown option steps"):
        models.bayes_hier(m, steps=3)
    with pytest.raises(ValueError, match="settings"):
        models.fit(fits[0].info["model"], m, settings={"draws": 10})


def test_bad_input_names_the_argument(oue_fit):
    m, est = oue_fit
    cases = [
        ({"draws": 0}, "draws"),
        ({"tune": -1}, "tune"),
        ({"chains": 1.5}, "chains"),
        ({"rng": "seed"}, "rng"),
        ({"sampler": "stan"}, "sampler"),
        ({"kind": "poisson"}, "kind"),
        ({"concentration_prior": (0.0, -1.0)}, "concentration_prior"),
        ({"warmup_tree_depth": 0}, "warmup_tree_depth"),
        ({"warmup_tree_depth": 4.5}, "warmup_tree_depth"),
    ]
    for options, name in cases:
        with pytest.raises(ValueError, match=name):
            models.bayes_dirichlet(m, **options)
    with pytest.raises(ValueError, match="groups"):
        models.bayes_hier(m, groups={"a": [0, 1]})
    with pytest.raises(ValueError, match="groups"):
        models.bayes_hier(m, groups={"a": [0, 1, 2], "b": [2]})
    with pytest.raises(ValueError, match="spread_prior"):
        models.bayes_hier(m, spread_prior=0.0)
    with pytest.raises(ValueError, match="warmup_tree_depth"):
        models.bayes_hier(m, warmup_tree_depth=True)
    with pytest.raises(ValueError, match="m must be"):
        models.bayes_dirichlet(m.estimates)
    with pm.Model() as empty:
        pm.Normal("x")
    with pytest.raises(ValueError, match="no ldp_likelihood"):
        models.fit(empty, m)
    with pytest.raises(ValueError, match="var_name"):
        models.fit(est.info["model"], m, var_name="g")
    with pytest.raises(ValueError, match="rng"):
        models.fit(est.info["model"], m, rng="x")
    with pytest.raises(ValueError, match="measurement"):
        models.fit(est.info["model"], m.estimates)
    for bad, match in [
        ([("maxdepth", 3)], "sampler_kwargs must be a dict"),
        ({3: 1}, "sampler_kwargs keys"),
        ({"draws": 10}, "sampler_kwargs cannot set draws"),
        ({"random_seed": 1, "chains": 4}, "cannot set chains, random_seed"),
    ]:
        with pytest.raises(ValueError, match=match):
            models.fit(est.info["model"], m, sampler="pymc", sampler_kwargs=bad)


def test_single_threaded_restores_environment(monkeypatch):
    from bayesldp.models.fitting import single_threaded

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with single_threaded(1):
        import os

        assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "7" and "OMP_NUM_THREADS" not in os.environ


def test_fit_moves_measurement_dependent_coordinates_of_any_model():
    # a user's model with dirichlet_simplex and log_concentration, built on one
    # measurement: fitting it to another must move the coordinates and the start with the
    # counts (through the follower registry fit runs), or it samples in stale coordinates
    from bayesldp.models import _concentration, dirichlet, likelihood

    ms = oracle_measurements(d=6, n=500)
    m1, m2 = ms["OUE"], ms["SUE"]
    with pm.Model() as model:
        log_a = _concentration.log_concentration("log_a", (0.0, 2.0), m1)
        f = dirichlet.dirichlet_simplex("f", pm.math.exp(log_a), m1)
        models.ldp_likelihood("counts", f, m1)
    likelihood.move_followers(model, m2)
    hints = dirichlet.parametrization_hints(m2)
    for key, value in hints.items():
        np.testing.assert_array_equal(model[f"f_{key}"].get_value(), value)
    assert float(model["log_a_start"].get_value()) == _concentration.concentration_start(m2)
    # and fit does it: a refit on m1 puts m1's coordinates back
    quiet(models.fit, model, m1, draws=20, tune=20, chains=1, **RUN, rng=0)
    np.testing.assert_array_equal(
        model["f_centre"].get_value(), dirichlet.parametrization_hints(m1)["centre"]
    )
    assert float(model["log_a_start"].get_value()) == _concentration.concentration_start(m1)
    with pytest.raises(ValueError, match=r"^update must be callable"):
        likelihood.follow_measurement(model, "x", 3)
