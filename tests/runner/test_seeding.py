"""Seeding: the documented rules, independent of order; each method's own stream."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import zlib

import numpy as np
import pandas as pd
import pytest

from bayesldp.methods.registry import get_method, method_names, postprocess
from bayesldp.runner import Grid, Task, build_config, get_experiment, run
from bayesldp.runner._config import make_tasks
from bayesldp.runner._run import execute
from bayesldp.runner._seeding import METHOD_STREAM, method_seed
from tests.helpers import TINY_DATA, result_values, tiny_config


def test_grid_seeds_are_the_documented_rule_and_do_not_depend_on_order():
    config = tiny_config("full_domain_mse", methods=("base",), epsilons=(0.5, 1.0), reps=2)
    tasks = make_tasks(config)
    experiment = get_experiment("full_domain_mse")
    for t in tasks:
        tag = f"full_domain_mse|{TINY_DATA}|{t.epsilon!r}|{t.rep}".encode()
        assert experiment.seed_sequence(t).entropy == [0, zlib.crc32(tag)]
    forward = [execute(experiment, t)["value"].to_numpy() for t in tasks]
    backward = [execute(experiment, t)["value"].to_numpy() for t in reversed(tasks)][::-1]
    for a, b in zip(forward, backward, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(v) for v in forward}) == len(tasks)


@pytest.mark.parametrize(
    ("seed", "entropy", "spawn_key"), [("rep", [3, 1], ()), ("spawn", 3, (1,))]
)
def test_the_named_seedings_are_the_documented_rules(seed, entropy, spawn_key):
    experiment = get_experiment("full_domain_mse")
    named = dataclasses.replace(experiment, seed=seed)
    task = Task(build_config(named, "quick", seed=3), "OUE", "zipf", 1.0, 1)
    seq = named.seed_sequence(task)
    assert (seq.entropy, seq.spawn_key) == (entropy, spawn_key)
    with pytest.raises(ValueError, match="seed must be one of grid, rep, spawn"):
        dataclasses.replace(experiment, seed="clock")


def test_the_demo_seeds_as_the_first_demo_did():
    """Repetition r: child r of SeedSequence(seed) simulates, then draws the query seed."""
    from bayesldp.datasets import get_dataset
    from bayesldp.oracles import OUE

    demo = get_experiment("demo")
    config = build_config(demo, datasets=(TINY_DATA,), reps=2, methods=("norm-sub",))
    results = execute(demo, make_tasks(config)[1])
    data = get_dataset(TINY_DATA)
    rng = np.random.default_rng(np.random.SeedSequence(0).spawn(2)[1])
    est = postprocess(OUE(1.0, data.d).simulate(data.counts, rng), "norm-sub")
    mse = results.query("metric == 'mse'")["value"].item()
    assert mse == np.mean((est.frequencies - data.frequencies) ** 2)


def test_randomized_methods_get_their_own_reproducible_stream(tmp_path):
    """A method taking rng: same seed, same numbers; other streams untouched by it.

    In a subprocess: the test registers a method of its own.
    """
    code = """
import sys
import numpy as np
import bayesldp
from bayesldp.methods.registry import register_method
from bayesldp.runner import build_config, get_experiment, run

def noisy(m, *, rng=None):
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    f = m.estimates + rng.normal(0, 1e-3, m.estimates.size)
    return bayesldp.Estimate(f, "noisy-test", m)

register_method(name="noisy-test", target=noisy, summary="noise", default=False)
exp = get_experiment("full_domain_mse")
out = sys.argv[1]
for folder, methods in (("a", ("base", "noisy-test")), ("b", ("base", "noisy-test")),
                        ("c", ("base",))):
    config = build_config(exp, "quick", methods=methods, datasets=("zipf:d=48,n=20000",),
                          epsilons=(1.0,), reps=2)
    run(exp, config, f"{out}/{folder}")
"""
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=300)
    a, b, c = (result_values(pd.read_csv(tmp_path / f / "results.csv")) for f in "abc")
    pd.testing.assert_frame_equal(a, b)
    noisy = a.query("method == 'noisy-test' and metric == 'mse'")["value"]
    assert noisy.nunique() == 2  # the repetitions differ
    base = a[a["method"] == "base"].reset_index(drop=True)
    pd.testing.assert_frame_equal(base, c)  # adding the method changed no other stream


def test_every_randomized_method_takes_rng_so_the_runner_seeds_it():
    # bayes-power-zi took **options and so escaped MethodSpec.accepts("rng")
    assert all(get_method(m).accepts("rng") for m in method_names(bayesian=True))


def test_method_seed_is_derived_without_spawning():
    seq = np.random.SeedSequence([0, 7])
    child = method_seed(seq, "bayes-power")
    assert seq.n_children_spawned == 0
    assert child.entropy == seq.entropy and child.spawn_key[:-1] == (METHOD_STREAM,)
    assert method_seed(seq, "bayes-power").generate_state(4).tolist() == (
        child.generate_state(4).tolist()
    )
    other = method_seed(seq, "bayes-consistent").generate_state(4)
    assert other.tolist() != child.generate_state(4).tolist()
    spawned = [s.generate_state(4).tolist() for s in np.random.SeedSequence([0, 7]).spawn(50)]
    assert child.generate_state(4).tolist() not in spawned


@pytest.mark.slow
def test_a_bayesian_method_in_the_grid_is_reproducible(tmp_path):
    experiment = get_experiment("full_domain_mse")
    config = tiny_config("full_domain_mse", methods=("bayes-power",), reps=1)
    a, b = (run(experiment, config, tmp_path / f).results for f in "ab")
    pd.testing.assert_frame_equal(result_values(a), result_values(b))


def test_a_grid_freezes_its_parameters():
    grid = Grid(("zipf",), (1.0,), reps=1, params={"k": 1})
    with pytest.raises(TypeError):
        grid.params["k"] = 2  # type: ignore[index]
