"""Running an experiment: progress, no printing, the results' files and their warnings."""

from __future__ import annotations

import json

import pandas as pd

from bayesldp.runner import get_experiment, run
from bayesldp.runner._results import warnings_by_method
from tests.helpers import tiny_config


def test_the_library_prints_nothing_and_reports_progress(tmp_path, capsys):
    ticks = []
    result = run(get_experiment("mae"), tiny_config("mae", reps=2), tmp_path, progress=ticks.append)
    assert ticks == [1, 1] and result.tasks_run == 2
    assert result.figures == [tmp_path / "figure.png"]
    assert capsys.readouterr() == ("", "")
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["tasks"] == meta["tasks_done"] == 2
    assert meta["seeding"].startswith("``SeedSequence([seed, crc32(")


def test_warnings_are_kept_whole_and_counted_per_method():
    long = "ibu stopped after 20000 EM steps with 3.93e-08 nats per user still to gain; " * 3
    results = pd.DataFrame(
        {
            "dataset": ["z"] * 6,
            "epsilon": [1.0] * 6,
            "rep": [0, 0, 1, 1, 2, 2],
            "method": ["ibu", "base"] * 3,
            "warning": [long, "", f"{long}\nanother one", "", "", ""],
        }
    )
    table = warnings_by_method(results).set_index("method")
    assert list(table.index) == ["ibu"]
    assert table.loc["ibu", "tasks_warned"] == 2 and table.loc["ibu", "tasks"] == 3
    assert table.loc["ibu", "messages"].splitlines() == [long, "another one"]
