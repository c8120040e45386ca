"""``bayesldp demo``: the table end to end, reproducibility, whole warnings, user errors."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp.cli import main
from bayesldp.runner import get_experiment
from bayesldp.runner._results import warnings_by_method

SMALL = ["--n", "20000", "--d", "64", "--quiet"]


def _one_line_error(capsys, argv, match):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("bayesldp")
    assert "error: " in err and match in err
    return err


def test_demo_small(tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--reps", "2", *SMALL, "--out", str(out)]) == 0
    results = pd.read_csv(out / "results.csv", keep_default_na=False, na_values=[""])
    methods = get_experiment("demo").grid.methods
    assert list(dict.fromkeys(results["method"])) == list(methods)
    assert set(results["rep"]) == {0, 1} and len(results) == 2 * 4 * len(methods)
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


def test_the_demo_prints_a_warning_whole(tmp_path, capsys, monkeypatch):
    """Ibu's advice (after a semicolon, past 110 characters) reaches the terminal."""
    monkeypatch.setenv("COLUMNS", "60")
    argv = ["demo", "--reps", "1", "--n", "2e5", "--d", "256", "--methods", "ibu", "--quiet"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "warning: ibu in 1 of 1 runs:" in out
    text = " ".join(out.split("runs:")[1].split("wrote")[0].split())
    assert text.startswith("ibu stopped after")
    assert text.endswith("(use 'mle' for the exact MLE, or raise max_iter)")
    assert "..." not in out
    saved = pd.read_csv(tmp_path / "results.csv")["warning"].dropna().unique()
    assert [" ".join(w.split()) for w in saved] == [text]


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--epsilon", "-1"], "epsilon"),
        (["--oracle", "XYZ"], "oracle"),
        (["--methods", "norm-sub,bogus"], "bogus"),
        (["--methods", ""], "methods: give at least one method"),  # ran the default set once
        (["--reps", "0"], "reps must be >= 1"),  # a KeyError once
        (["--d", "1"], "top-10"),  # failed on the top-10 query once
        (["--d", "2"], "top-10"),
        (["--n", "0"], "n must be"),
        (["--n", "2.5"], "--n: '2.5' is not an integer"),
        (["--import", "no_such_module_here"], "--import no_such_module_here"),
    ],
)
def test_demo_user_errors_are_one_line(argv, match, tmp_path, capsys):
    argv = ["demo", "--out", str(tmp_path), "--quiet", "--reps", "1", "--n", "1000", *argv]
    _one_line_error(capsys, argv, match)


def test_an_unwritable_out_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    _one_line_error(capsys, ["demo", "--out", str(blocker), "--quiet"], "cannot write")
