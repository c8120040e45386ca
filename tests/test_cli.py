"""The command line: the demo job end to end on a small setting, and its errors."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp.cli import main
from bayesldp.demo import DemoConfig

METHODS = DemoConfig.methods


def test_demo_small(tmp_path, capsys):
    out = tmp_path / "demo"
    code = main(["demo", "--reps", "2", "--n", "20000", "--d", "64", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    for method in METHODS:
        assert method in printed
    summary = pd.read_csv(out / "demo_summary.csv")
    assert list(summary["method"]) == list(METHODS)
    assert (out / "demo.png").stat().st_size > 10_000
    runs = pd.read_csv(out / "demo_runs.csv")
    assert len(runs) == 2 * len(METHODS)
    consistent = summary.set_index("method").loc[["norm-sub", "norm-hyb", "mle-apx"], "sum"]
    assert (consistent - 1).abs().max() < 1e-9


def test_demo_is_reproducible(tmp_path):
    args = [
        "demo",
        "--reps",
        "1",
        "--n",
        "5000",
        "--d",
        "16",
        "--quiet",
        "--methods",
        "norm-sub,power",
    ]
    main([*args, "--out", str(tmp_path / "a")])
    main([*args, "--out", str(tmp_path / "b")])
    a = pd.read_csv(tmp_path / "a" / "demo_runs.csv").drop(columns="seconds")
    b = pd.read_csv(tmp_path / "b" / "demo_runs.csv").drop(columns="seconds")
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--epsilon", "-1"],
        ["demo", "--oracle", "XYZ"],
        ["demo", "--methods", "norm-sub,bogus"],
    ],
)
def test_demo_bad_arguments(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--out", str(tmp_path), "--quiet", "--reps", "1", "--n", "100", "--d", "4"])
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err
