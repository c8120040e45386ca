"""The command line: the demo end to end, user errors (one line, exit 2), Ctrl-C, no Dask."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from bayesldp.cli import main
from bayesldp.experiments import demo
from bayesldp.runner import warnings_by_method

METHODS = demo.METHODS
SMALL = ["--n", "20000", "--d", "64", "--quiet"]


def test_demo_small(tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--reps", "2", *SMALL, "--out", str(out)]) == 0
    results = pd.read_csv(out / "results.csv", keep_default_na=False, na_values=[""])
    assert list(dict.fromkeys(results["method"])) == list(METHODS)
    assert set(results["rep"]) == {0, 1} and len(results) == 2 * 4 * len(METHODS)
    sums = results[results["metric"] == "sum"].groupby("method")["value"].mean()
    assert (out / "figure.png").stat().st_size > 10_000
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["metric"]) == {"mse", "set_mse", "topk_mse"}
    assert (summary["count"] == 2).all() and (summary["min"] <= summary["mean"]).all()
    assert (sums[["norm-sub", "norm-hyb", "mle-apx"]] - 1).abs().max() < 1e-9


def test_demo_is_reproducible_and_reports_warnings_per_method(tmp_path):
    args = ["demo", "--reps", "1", "--n", "5000", "--d", "16", "--quiet"]
    args += ["--methods", "norm-sub,power,ibu"]
    main([*args, "--out", str(tmp_path / "a")])
    main([*args, "--out", str(tmp_path / "b")])
    a, b = (
        pd.read_csv(tmp_path / f / "results.csv").drop(columns=["seconds", "task_seconds"])
        for f in "ab"
    )
    pd.testing.assert_frame_equal(a, b)
    # another setting in the same folder replaces the demo's results
    assert main([*args, "--epsilon", "2", "--out", str(tmp_path / "a")]) == 0
    assert set(pd.read_csv(tmp_path / "a" / "results.csv")["epsilon"]) == {2.0}
    warned = warnings_by_method(pd.read_csv(tmp_path / "a" / "results.csv"))
    assert set(warned["method"]) <= {"ibu"}
    assert (warned["tasks_warned"] <= warned["tasks"]).all()


def _one_line_error(capsys, argv, match):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("bayesldp")
    assert "error: " in err and match in err
    return err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--epsilon", "-1"], "epsilon"),
        (["--oracle", "XYZ"], "oracle"),
        (["--methods", "norm-sub,bogus"], "bogus"),
        (["--reps", "0"], "reps must be >= 1"),  # a KeyError once
        (["--d", "1"], "top-10"),  # failed on the top-10 query once
        (["--d", "2"], "top-10"),
        (["--n", "0"], "n must be"),
    ],
)
def test_demo_user_errors_are_one_line(argv, match, tmp_path, capsys):
    argv = ["demo", "--out", str(tmp_path), "--quiet", "--reps", "1", "--n", "1000", *argv]
    _one_line_error(capsys, argv, match)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--datasets", "zipf:n=abc"], "n must be an integer"),
        (["--datasets", "zipf:bogus=1"], "bogus"),
        (["--datasets", "nodata"], "unknown dataset"),
        (["--eps", "1,abc"], "eps"),
        (["--reps", "0"], "reps"),
        (["--workers", "0"], "workers must be >= 1"),  # hung forever once
        (["--methods", "nope"], "nope"),
        (["--full"], "--full"),  # removed: the default grid is the papers'
    ],
)
def test_experiment_user_errors_are_one_line(argv, match, tmp_path, capsys):
    argv = ["experiment", "mae", "--quick", "--quiet", "--out", str(tmp_path), *argv]
    _one_line_error(capsys, argv, match)


def test_an_unwritable_out_is_found_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    argv = ["experiment", "mae", "--quick", "--no-dask", "--out", str(blocker / "out")]
    start = time.perf_counter()
    _one_line_error(capsys, argv, "cannot write")
    assert time.perf_counter() - start < 10
    _one_line_error(capsys, ["demo", "--out", str(blocker), "--quiet"], "cannot write")


def test_an_unknown_experiment_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "nope"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_an_unreachable_scheduler_is_one_line_after_a_short_timeout(tmp_path, capsys):
    pytest.importorskip("distributed")
    argv = ["experiment", "mae", "--quick", "--out", str(tmp_path)]
    start = time.perf_counter()
    _one_line_error(capsys, [*argv, "--scheduler", "tcp://127.0.0.1:1"], "cannot connect")
    assert time.perf_counter() - start < 30


def _sigint_after_parts(tmp_path, extra: list[str]) -> subprocess.CompletedProcess:
    """Start a long grid, press Ctrl-C (the whole process group) once parts appear."""
    argv = [sys.executable, "-m", "bayesldp.cli", "experiment", "mae", "--reps", "30", "--eps", "1"]
    argv += ["--datasets", "zipf:d=2000,n=100000", "--out", str(tmp_path), "--quiet", *extra]
    # A job started in the background by a non-interactive shell (`cmd &`, as CI runners
    # and nohup scripts do) inherits SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler: the grid ran to the end and exited 0. Ctrl-C reaches a
    # foreground program with SIGINT at its default, so the child gets that.
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    start = time.perf_counter()
    while len(glob.glob(str(tmp_path / "mae" / "parts" / "*.json"))) < 2:
        assert proc.poll() is None and time.perf_counter() - start < 120
        time.sleep(0.05)
    assert proc.poll() is None, "the grid finished before the signal: lengthen it"
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


# Both are opt-in (slow). Their one earlier failure (the grid ran to the end, exit 0)
# came from a background run that ignored SIGINT, which the child now resets.
@pytest.mark.slow
@pytest.mark.parametrize("where", ["in-process", "dask"])
def test_ctrl_c_stops_with_one_line_and_the_same_command_resumes(where, tmp_path):
    extra = ["--no-dask"] if where == "in-process" else ["--workers", "1"]
    if where == "dask":
        pytest.importorskip("distributed")
    stopped = _sigint_after_parts(tmp_path, extra)
    assert stopped.returncode == 130
    lines = stopped.stderr.splitlines()
    assert len(lines) == 1 and "stopped" in lines[0] and "resume" in lines[0], stopped.stderr
    parts = len(glob.glob(str(tmp_path / "mae" / "parts" / "*.json")))
    assert 2 <= parts < 30
    argv = ["experiment", "mae", "--reps", "30", "--eps", "1", "--datasets", "zipf:d=2000,n=100000"]
    assert main([*argv, "--out", str(tmp_path), "--quiet", "--no-dask"]) == 0
    results = pd.read_csv(tmp_path / "mae" / "results.csv")
    assert len(results) == 30 * len(set(results["method"])) and set(results["rep"]) == set(
        range(30)
    )


def test_without_dask_the_runner_works_in_process_and_says_so(tmp_path, capsys, monkeypatch):
    from bayesldp import runner

    monkeypatch.setattr(runner, "dask_available", lambda: False)  # no dask extra
    argv = ["experiment", "mae", "--quick", "--quiet", "--reps", "1", "--eps", "1"]
    argv += ["--datasets", "zipf:d=32,n=5000", "--methods", "base"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "in this process" in err
    assert np.isfinite(pd.read_csv(tmp_path / "a" / "mae" / "results.csv")["value"]).all()
    # an explicit scheduler cannot be reached without dask: a one-line error
    argv += ["--out", str(tmp_path / "b"), "--scheduler", "tcp://127.0.0.1:1"]
    _one_line_error(capsys, argv, "dask is not installed")


def _help_commands():
    from bayesldp.runner import find_experiments

    top = [[], ["demo"], ["experiment"], ["aggregate"], ["audit"], ["experiment", "all"]]
    return top + [["experiment", name] for name in find_experiments()]


@pytest.mark.parametrize("argv", _help_commands(), ids=lambda a: " ".join(a) or "bayesldp")
def test_every_help_text_renders(argv, capsys):
    """``--help`` works for every command and experiment (a ``%`` in a text once broke it)."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


def _cli(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "bayesldp.cli", *args]


def test_a_stdout_closed_after_the_first_line_ends_quietly(tmp_path):
    """``bayesldp demo ... | head -1``: exit 141, no traceback on stderr."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the first line arrives at once
    argv = _cli(["demo", "--n", "2000", "--d", "16", "--reps", "1", "--methods", "base"])
    proc = subprocess.Popen(
        [*argv, "--quiet", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert b"d = 16" in proc.stdout.readline()
    proc.stdout.close()  # the table that follows the first line has no reader
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("buffered", [True, False])
def test_experiment_list_into_a_closed_pipe_ends_quietly(buffered):
    """No reader at all: the list's writes (or the flush at exit when buffered) fail."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONUNBUFFERED": "" if buffered else "1"}
    try:
        proc = subprocess.run(
            _cli(["experiment", "list"]), stdout=write, stderr=subprocess.PIPE, env=env
        )
    finally:
        os.close(write)
    assert proc.returncode == 141, proc.stderr.decode()
    assert proc.stderr == b""
