"""``bayesldp choose``: a measurement JSON in, a ranking out; bad input is exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import bayesldp
from bayesldp.cli import main
from tests.cli.test_common import HEAVY
from tests.helpers import zipf_frequencies

D = 24


@pytest.fixture(scope="module")
def measurement_file(tmp_path_factory):
    counts = np.random.default_rng(0).multinomial(10_000, zipf_frequencies(D))
    m = bayesldp.OUE(1.0, D).simulate(counts, np.random.default_rng(1))
    record = {"oracle": m.oracle, "epsilon": m.epsilon, "domain_size": D, "n": int(m.n),
              "p": m.p, "q": m.q, "support_counts": [int(c) for c in m.support_counts]}  # fmt: skip
    path = tmp_path_factory.mktemp("choose") / "measurement.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("query", ["full", "set:0.5", "top:3", "heavy:0.05"])
def test_prints_the_ranking_and_writes_csv(measurement_file, tmp_path, capsys, query):
    out = tmp_path / "ranking.csv"
    argv = ["choose", str(measurement_file), "--query", query, "--reps", "3", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    table = pd.read_csv(out)
    assert f"chosen: {table['method'].iloc[0]}" in text
    assert set(table["method"]) == set(bayesldp.choose.default_methods())


def test_groups_file_and_methods(measurement_file, tmp_path, capsys):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"a": [0, 1, 2], "b": list(range(3, D))}))
    argv = ["choose", str(measurement_file), "--query", f"groups:{groups}", "--reps", "2",
            "--methods", "norm-sub,power-ns"]  # fmt: skip
    assert main(argv) == 0
    assert "groups:2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("sets:0.5", "query"),
        ("set:abc", "query"),
        ("set:1.5", "fraction"),
        ("top:0", "k"),
        (f"top:{D + 1}", "k"),
        ("heavy:1", "threshold"),
        ("groups:/nonexistent.json", "query"),
    ],
)
def test_bad_queries_exit_2_with_one_line(measurement_file, capsys, query, name):
    with pytest.raises(SystemExit) as stop:
        main(["choose", str(measurement_file), "--query", query, "--reps", "2"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err


@pytest.mark.parametrize("content", ["{not json", json.dumps({"n": 3}), json.dumps([1, 2])])
def test_bad_measurement_files_exit_2(tmp_path, capsys, content):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as stop:
        main(["choose", str(path)])
    assert stop.value.code == 2
    assert "measurement" in capsys.readouterr().err


def test_bad_reps_exit_2(measurement_file, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["choose", str(measurement_file), "--reps", "0"])
    assert stop.value.code == 2
    assert "reps" in capsys.readouterr().err


def test_help_imports_no_numerical_package():
    code = (
        "import sys\nfrom bayesldp.cli import main\n"
        "try:\n    main(['choose', '--help'])\nexcept SystemExit:\n    pass\n"
        f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "loaded:"
