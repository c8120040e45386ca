"""``bayesldp experiment``: the command as a subprocess on Dask, options, errors, re-plots."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from bayesldp.cli import main
from bayesldp.runner import build_config, get_experiment, run
from tests.helpers import FEW_METHODS, TINY_DATA, result_values


def _one_line_error(capsys, argv, match):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("bayesldp")
    assert "error: " in err and match in err
    return err


def test_the_command_runs_an_experiment_on_dask_as_in_process(tmp_path):
    """``bayesldp experiment`` in a subprocess sends its tasks to Dask workers.

    The workers replay mle_gap's sequential stream and give the in-process numbers.
    """
    pytest.importorskip("distributed")
    args = ["experiment", "mle_gap", "--quick", "--quiet", "--workers", "1", "--reps", "2"]
    args += ["--oracle", "GRR", "--methods", "cls,mle", "--out", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "bayesldp.cli", *args], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "mle_gap: " in proc.stdout and "(4 tasks run, 0 resumed)" in proc.stdout
    experiment = get_experiment("mle_gap")
    config = build_config(experiment, "quick", reps=2, oracles=("GRR",), methods=("cls", "mle"))
    local = run(experiment, config, tmp_path / "local").results
    dist = pd.read_csv(tmp_path / "mle_gap" / "results.csv")
    pd.testing.assert_frame_equal(result_values(local), result_values(dist))


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--datasets", "zipf:n=abc"], "n must be an integer"),
        (["--datasets", "zipf:bogus=1"], "bogus"),
        (["--datasets", "nodata"], "unknown dataset"),
        (["--datasets", ""], "datasets: give at least one dataset"),
        (["--epsilon", "1,abc"], "epsilon"),
        (["--epsilon", ""], "epsilons: give at least one epsilon"),
        (["--oracle", ""], "oracles: give at least one oracle"),
        (["--reps", "0"], "reps"),
        (["--workers", "0"], "workers must be >= 1"),  # hung forever once
        (["--methods", "nope"], "nope"),
        (["--methods", ""], "methods: give at least one method"),  # ran the default set once
        (["--eps", "1"], "--eps"),  # one spelling: --epsilon
        (["--full"], "--full"),  # removed: the default grid is the papers'
    ],
)
def test_experiment_user_errors_are_one_line(argv, match, tmp_path, capsys):
    argv = ["experiment", "mae", "--quick", "--quiet", "--out", str(tmp_path), *argv]
    _one_line_error(capsys, argv, match)


def test_an_unknown_experiment_is_one_line(capsys):
    _one_line_error(capsys, ["experiment", "nope"], "unknown experiment 'nope'")


def test_an_unwritable_out_is_found_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    argv = ["experiment", "mae", "--quick", "--no-dask", "--out", str(blocker / "out")]
    _one_line_error(capsys, argv, "cannot write")


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys):
    pytest.importorskip("distributed")
    argv = ["experiment", "mae", "--quick", "--out", str(tmp_path)]
    _one_line_error(capsys, [*argv, "--scheduler", "tcp://127.0.0.1:1"], "cannot connect")


def test_without_dask_the_runner_works_in_process_and_says_so(tmp_path, capsys, monkeypatch):
    # no dask extra
    monkeypatch.setattr("bayesldp.runner._dask.dask_available", lambda: False)
    argv = ["experiment", "mae", "--quick", "--quiet", "--reps", "1", "--epsilon", "1"]
    argv += ["--datasets", "zipf:d=32,n=5000", "--methods", "base"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "in this process" in err
    assert np.isfinite(pd.read_csv(tmp_path / "a" / "mae" / "results.csv")["value"]).all()
    # an explicit scheduler cannot be reached without dask: a one-line error
    argv += ["--out", str(tmp_path / "b"), "--scheduler", "tcp://127.0.0.1:1"]
    _one_line_error(capsys, argv, "dask is not installed")


def test_list_and_plot_only(tmp_path, capsys):
    assert main(["experiment", "list"]) == 0
    assert "full_domain_mse" in capsys.readouterr().out
    args = ["--quick", "--no-dask", "--quiet", "--reps", "1", "--epsilon", "1", "--datasets",
            TINY_DATA, "--methods", ",".join(FEW_METHODS), "--out", str(tmp_path)]  # fmt: skip
    assert main(["experiment", "topk", *args]) == 0
    (tmp_path / "topk" / "figure.png").unlink()
    assert main(["experiment", "topk", *args, "--plot-only"]) == 0
    assert (tmp_path / "topk" / "figure.png").exists()


def test_plot_only_uses_the_grid_the_folder_was_run_with(tmp_path):
    """--plot-only without grid options keeps every saved part."""
    grid = ["--methods", "base,norm-sub", "--epsilon", "0.7,3", "--datasets", "zipf:d=16,n=5000"]
    args = ["--no-dask", "--quiet", "--reps", "1", "--out", str(tmp_path)]
    assert main(["experiment", "mae", *args, *grid]) == 0
    before = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert main(["experiment", "mae", "--out", str(tmp_path), "--plot-only"]) == 0
    after = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert len(after) == len(before)
    assert set(after["epsilon"]) == {0.7, 3.0}
    assert set(after["method"]) == {"base", "norm-sub"}


def test_an_experiment_parameter_is_an_option(tmp_path):
    argv = ["experiment", "mle_gap", "--quick", "--no-dask", "--quiet", "--reps", "1"]
    argv += ["--oracle", "OUE", "--ibu-max-iter", "1e3", "--out", str(tmp_path)]
    assert main(argv) == 0
    config = pd.read_json(tmp_path / "mle_gap" / "config.json", typ="series")["config"]
    assert config["params"]["ibu_max_iter"] == 1000
