"""``bayesldp plan``: a table printed, CSV and figure written; bad input is exit 2."""

from __future__ import annotations

import subprocess
import sys
import time

import pandas as pd
import pytest

import bayesldp
from bayesldp.cli import main
from tests.cli.test_common import HEAVY

SMALL = ["--d", "32", "--epsilon", "1", "--methods", "base,norm-sub", "--reps", "3"]


def test_prints_a_table_and_writes_csv_and_figure(tmp_path, capsys):
    argv = ["plan", *SMALL, "--target-mse", "1e-3", "--query", "top:3", "--zipf", "1.5",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "plan.csv")
    assert list(table["oracle"]) == list(bayesldp.ORACLES)
    for name in bayesldp.ORACLES:
        assert f"\n{name} " in text
    assert "query top:3, prior zipf:1.5" in text
    assert (tmp_path / "plan.png").stat().st_size > 0
    assert len(pd.read_csv(tmp_path / "curve.csv")) >= len(table)


def test_pilot_file_gives_the_domain_and_oracle_restricts(tmp_path, capsys):
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("50, 20\n10 5 5 0 0 10\n")
    argv = ["plan", "--epsilon", "2", "--pilot", str(pilot), "--users", "1e4", "--oracle",
            "GRR,OUE", "--methods", "base", "--reps", "2", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    table = pd.read_csv(tmp_path / "plan.csv")
    assert list(table["oracle"]) == ["GRR", "OUE"]
    assert "d 8," in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        (["--query", "top:99", "--users", "100"], "query"),
        (["--query", "set:0", "--users", "100"], "query"),
        (["--query", "mean", "--users", "100"], "query"),
        (["--target-mse", "-1"], "target"),
        (["--users", "0"], "users"),
        ([], "users or target"),
        (["--oracle", "ABC", "--users", "100"], "oracles"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, extra, name):
    with pytest.raises(SystemExit) as stop:
        main(["plan", *SMALL, *extra, "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err, err


def test_bad_pilot_file_exits_2(tmp_path, capsys):
    pilot = tmp_path / "pilot.txt"
    pilot.write_text("1 2 x\n")
    with pytest.raises(SystemExit) as stop:
        main(["plan", "--epsilon", "1", "--pilot", str(pilot), "--users", "10"])
    assert stop.value.code == 2
    assert "pilot" in capsys.readouterr().err


def test_help_is_quick_and_imports_no_numerical_package():
    code = (
        "import sys\nfrom bayesldp.cli import main\n"
        "try:\n    main(['plan', '--help'])\nexcept SystemExit:\n    pass\n"
        f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "loaded:"
    assert elapsed < 5.0  # under 1 s on an idle machine; generous for a loaded one
