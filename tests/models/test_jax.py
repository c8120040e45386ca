"""What fit asks before a JAX sampler: devices, JAX forms, NumPyro's chains and warm-up cap."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from tests.models.common import (  # noqa: E402
    NEEDS_NUMPYRO,
    assert_uniform_ranks,
    quiet,
    sbc_ranks,
    tiny,
)


@pytest.mark.parametrize(
    "oracle_name, which",
    [
        ("OUE", "dirichlet"),
        ("GRR", "hier"),
        ("GRR", "dirichlet"),
        ("OUE", "hier"),
    ],
)
def test_jax_log_density_and_gradient_match_pytensor(oracle_name, which):
    # NumPyro runs the model's log-density compiled to JAX and differentiates it with
    # JAX. The reference item's kink used to sit at -1000: JAX's softplus then overflowed
    # in a branch it does not take, the gradient was NaN (0 * inf) and every NumPyro
    # transition diverged, while PyTensor's gradient was right.
    jax = pytest.importorskip("jax")
    from pymc.sampling.jax import get_jaxified_logp

    from bayesldp.models import dirichlet, hierarchical

    m = tiny(oracle_name)
    if which == "dirichlet":
        model = dirichlet.build_dirichlet_model(m)
    else:
        model = hierarchical.build_hier_model(m, groups={"pair": [0, 1], "single": [2]})
    logp_jax = get_jaxified_logp(model)
    grad_jax = jax.grad(lambda xs: logp_jax(xs))
    # PyTensor's Python implementations: four evaluations need no compiled C code
    logp = model.compile_logp(mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    rng = np.random.default_rng(0)
    start = model.initial_point()
    moved = [{k: v + rng.normal(size=np.shape(v)) for k, v in start.items()} for _ in range(3)]
    for point in [start, *moved]:
        x = [point[v.name] for v in model.value_vars]
        assert float(logp_jax(x)) == pytest.approx(float(logp(point)), rel=1e-10)
        grad = np.concatenate([np.ravel(np.asarray(g)) for g in grad_jax(x)])
        expected = dlogp(point)  # rounding differs: compare on the gradient's own scale
        np.testing.assert_allclose(grad, expected, atol=1e-8 * max(1.0, np.abs(expected).max()))


@NEEDS_NUMPYRO
def test_jax_gets_one_device_per_chain_before_it_starts():
    # PyMC's JAX module asks for 100 host devices, which made NumPyro 1.6x slower on
    # wordfreq than two; fit sets the count before JAX starts and leaves it after
    from bayesldp.models._jax import devices_for_chains

    code = (
        "import os; from bayesldp.models._jax import devices_for_chains as f;"
        "n = f(3);"
        "import jax, pymc.sampling.jax;"  # sets XLA_FLAGS to 100 devices, as pm.sample does
        "print(n, len(jax.devices()), f(5), max(3, os.cpu_count()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, running, later, wanted = out.stdout.split()
    assert first == running == later == wanted
    with pytest.raises(ValueError, match="chains"):
        devices_for_chains(0)


@NEEDS_NUMPYRO
def test_auto_skips_numpyro_for_a_model_jax_cannot_run(monkeypatch):
    # erfcx (the normal log-CDF's op) has no JAX form without TensorFlow Probability:
    # "auto" must take the next sampler, and asking for NumPyro must fail
    import pytensor.tensor

    from bayesldp.models import fitting
    from bayesldp.models._jax import can_run

    m = tiny("OUE")
    with pm.Model() as plain:
        f = pm.Dirichlet("f", np.ones(3))
        models.ldp_likelihood("counts", f, m)
    with pm.Model() as model:
        f = pm.Dirichlet("f", np.ones(3))
        pm.Potential("extra", -pytensor.tensor.sum(pytensor.tensor.erfcx(f)))
        models.ldp_likelihood("counts", f, m)
    assert can_run(plain) and not can_run(model)
    # the next installed sampler that is not a JAX one (PyMC's here: no numba compile)
    monkeypatch.setattr(fitting, "available_samplers", lambda: ("numpyro", "pymc"))
    est = quiet(models.fit, model, m, draws=50, tune=50, cores=1, rng=1)
    assert est.info["sampler"] == "pymc"
    for sampler in ("numpyro",):
        with pytest.raises(NotImplementedError, match="erfcx"):
            quiet(models.fit, model, m, draws=50, tune=50, sampler=sampler, rng=1)
    with pytest.raises(ValueError, match="model"):
        can_run("not a model")
    with pytest.raises(ValueError, match="chains"):
        can_run(plain, chains=True)


def test_numpyro_chain_method_keeps_parallel_chains_within_the_memory():
    from bayesldp.models._jax import PARALLEL_CHAIN_BYTES, parallel_chain_growth
    from bayesldp.models._jax import chain_method as numpyro_chain_method

    gb = 10**9
    # bayes-dirichlet on wordfreq, 1000 + 1000: ~14 GB of growth expected (14.5 GB peak
    # measured), which fits in 24 GB but not in 16
    assert numpyro_chain_method(42_179, 1000, 1000, 2, available=24 * gb) == "parallel"
    assert numpyro_chain_method(42_179, 1000, 1000, 2, available=16 * gb) == "sequential"
    assert numpyro_chain_method(1025, 1000, 1000, 2, available=2 * gb) == "parallel"
    assert numpyro_chain_method(1025, 1000, 1000, 1, available=100 * gb) == "sequential"
    # the boundary: expected growth against 75% of the available memory
    expected = PARALLEL_CHAIN_BYTES * 1000**2 * 200
    assert parallel_chain_growth(1000, 100, 100) == expected
    assert numpyro_chain_method(1000, 100, 100, 2, available=int(expected / 0.75) + 1) == (
        "parallel"
    )
    assert numpyro_chain_method(1000, 100, 100, 2, available=int(expected / 0.76)) == "sequential"
    for bad in (True, -1, 1.5, "2", None):
        with pytest.raises(ValueError, match="cores"):
            numpyro_chain_method(10, 10, 10, bad, available=gb)
    with pytest.raises(ValueError, match="available"):
        numpyro_chain_method(10, 10, 10, 2, available=-1)
    with pytest.raises(ValueError, match="free"):
        numpyro_chain_method(np.bool_(True), 10, 10, 2, available=gb)
    for name, args in (("draws", (10, -1, 10)), ("tune", (10, 10, True)), ("free", (1.5, 1, 1))):
        with pytest.raises(ValueError, match=name):
            parallel_chain_growth(*args)


@given(
    free=st.integers(0, 10**6),
    iterations=st.integers(0, 10**4),
    cores=st.integers(1, 64),
    available=st.integers(0, 2**40),
    more=st.integers(0, 2**40),
)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_numpyro_chain_method_is_monotone_in_memory(free, iterations, cores, available, more):
    # more memory never turns parallel chains into sequential ones
    from bayesldp.models._jax import chain_method as numpyro_chain_method

    first = numpyro_chain_method(free, iterations, 0, cores, available=available)
    assert first in ("parallel", "sequential")
    if first == "parallel":
        assert numpyro_chain_method(free, iterations, 0, cores, available=available + more) == (
            "parallel"
        )
    if cores == 1:
        assert first == "sequential"


@NEEDS_NUMPYRO
def test_numpyro_chains_run_in_sequence_when_memory_is_short(monkeypatch, caplog):
    # the chain method is chosen from the memory and said in the log (fit records it:
    # the warm-up test below), and the user's own choice is kept
    from bayesldp.models import _jax
    from bayesldp.models.fitting import sample_options

    m = tiny("OUE")
    with pm.Model() as model:
        f = pm.Dirichlet("f", np.ones(3))
        models.ldp_likelihood("counts", f, m)
    settings = models.SamplerSettings(draws=30, tune=30)
    assert sample_options(model, "numpyro", settings, cores=2)[1]["chain_method"] == "parallel"
    monkeypatch.setattr(_jax, "available_memory", lambda: 0)
    with caplog.at_level("WARNING", logger="bayesldp.models.fitting"):
        options, record = sample_options(model, "numpyro", settings, cores=2)
    assert record["chain_method"] == "sequential"
    assert options["nuts_sampler_kwargs"]["chain_method"] == "sequential"
    assert "one after the other" in caplog.text
    kwargs = {"nuts_sampler_kwargs": {"chain_method": "parallel"}}
    own = models.SamplerSettings(sampler_kwargs=kwargs)
    options, record = sample_options(model, "numpyro", own, cores=2)
    assert record["chain_method"] == "parallel"
    assert options["nuts_sampler_kwargs"]["chain_method"] == "parallel"
    assert sample_options(model, "pymc", own, cores=2)[1]["chain_method"] is None


def test_with_warmup_tree_depth_caps_the_warmup_only():
    # NumPyro's max_tree_depth=(warm-up, draws); the caller's options are not changed,
    # and a cap the caller set is kept
    from bayesldp.models._jax import NUMPYRO_MAX_TREE_DEPTH, with_warmup_tree_depth

    options = {"target_accept": 0.9, "nuts_sampler_kwargs": {"chain_method": "sequential"}}
    out, applied = with_warmup_tree_depth(options, 5)
    assert applied == 5 and out["target_accept"] == 0.9
    assert out["nuts_sampler_kwargs"] == {
        "chain_method": "sequential",
        "nuts_kwargs": {"max_tree_depth": (5, NUMPYRO_MAX_TREE_DEPTH)},
    }
    assert options == {"target_accept": 0.9, "nuts_sampler_kwargs": {"chain_method": "sequential"}}
    own = {"nuts_sampler_kwargs": {"nuts_kwargs": {"max_tree_depth": 8}}}
    assert with_warmup_tree_depth(own, 5) == (own, None)
    for bad in (0, -1, 2.5, True, "5", None, np.float64("nan")):
        with pytest.raises(ValueError, match="warmup_tree_depth"):
            with_warmup_tree_depth({}, bad)


@pytest.fixture
def nuts_depth_caps(monkeypatch):
    """Record the ``max_tree_depth`` each NumPyro NUTS kernel is built with, in order."""
    numpyro_infer = pytest.importorskip("numpyro.infer")
    seen = []

    class RecordingNUTS(numpyro_infer.NUTS):
        def __init__(self, *args, **kwargs):
            seen.append(kwargs.get("max_tree_depth"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(numpyro_infer, "NUTS", RecordingNUTS)
    return seen


@NEEDS_NUMPYRO
@pytest.mark.slow  # an option's effect, checked through sample_options in the default suite
def test_fit_caps_numpyro_warmup_trees_and_not_the_draws(nuts_depth_caps, monkeypatch):
    # fit hands NumPyro's NUTS the (warm-up, draws) caps, records the one applied, and
    # the draws still build trees deeper than the warm-up's cap; and it empties JAX's
    # caches after a fit only when told to
    import jax

    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(1))
    m = tiny("OUE")
    with pm.Model() as model:
        f = pm.Dirichlet("f", np.ones(3))
        models.ldp_likelihood("counts", f, m)
    run = {"draws": 30, "tune": 30, "sampler": "numpyro", "rng": 1}
    est = quiet(models.fit, model, m, warmup_tree_depth=1, **run)
    assert nuts_depth_caps[-1] == (1, 10) and est.info["warmup_tree_depth"] == 1
    assert est.info["chain_method"] in ("parallel", "sequential")
    assert est.inference_data.sample_stats["tree_depth"].values.max() > 1
    assert cleared == []
    est = quiet(models.fit, model, m, clear_jax_caches=True, **run)
    assert nuts_depth_caps[-1] is None and est.info["warmup_tree_depth"] is None
    assert cleared == [1]
    # the other samplers have no warm-up cap: run as without it, recorded as not applied
    est = quiet(models.fit, model, m, draws=30, tune=30, sampler="pymc", cores=1, rng=1,
                warmup_tree_depth=3)  # fmt: skip
    assert est.info["warmup_tree_depth"] is None
    with pytest.raises(ValueError, match="warmup_tree_depth"):
        models.fit(model, m, warmup_tree_depth=0, **run)


@NEEDS_NUMPYRO
@pytest.mark.slow  # two more JAX compilations; fit's own cap is tested just above
def test_ready_made_models_cap_numpyro_warmup_trees_on_request(nuts_depth_caps):
    # the ready-made models: uncapped by default, the cap on request
    m = tiny("OUE")
    est = quiet(models.bayes_dirichlet, m, draws=30, tune=30, sampler="numpyro", rng=1)
    assert nuts_depth_caps[-1] is None and est.info["warmup_tree_depth"] is None
    est = quiet(models.bayes_hier, m, draws=30, tune=30, sampler="numpyro", rng=1,
                warmup_tree_depth=5)  # fmt: skip
    assert nuts_depth_caps[-1] == (5, 10) and est.info["warmup_tree_depth"] == 5


@pytest.mark.slow
@NEEDS_NUMPYRO
def test_sbc_bayes_dirichlet_numpyro_with_shallow_warmup_trees():
    # capping NUTS's trees during warm-up changes how NumPyro adapts, not what it
    # samples: calibrated even at a cap of 2 (3 steps), far below the 5 measured in
    # paper/bayes.md
    from bayesldp.models.dirichlet import prior_sampler

    rng = np.random.default_rng(9)
    ranks = sbc_ranks(
        models.bayes_dirichlet, prior_sampler((0.0, 2.0), 4), sims=40, d=4, n=300, rng=rng,
        draws=500, tune=500, sampler="numpyro", warmup_tree_depth=2,
    )  # fmt: skip
    assert_uniform_ranks(ranks, bins=10)
