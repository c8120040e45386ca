"""Output helpers: atomic writes and Markdown tables (bayesldp._io)."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp._io import atomic_open, markdown_table, write_csv, write_json


def test_markdown_table_rounds_floats_and_keeps_the_rest():
    frame = pd.DataFrame(
        {"method": ["norm-sub", "power"], "mse": [4.8123e-7, 0.123456], "runs": [30, 7]}
    )
    assert markdown_table(frame).splitlines() == [
        "| method | mse | runs |",
        "|---|---|---|",
        "| norm-sub | 4.81e-07 | 30 |",
        "| power | 0.123 | 7 |",
    ]


def test_an_interrupted_write_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "deep" / "results.json"
    write_json(path, {"b": 1, "a": [1, 2]})
    before = path.read_text()
    assert before.index('"a"') < before.index('"b"')  # sorted keys
    with pytest.raises(RuntimeError), atomic_open(path) as fh:
        fh.write("half")
        raise RuntimeError("stopped")
    assert path.read_text() == before
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary left
    write_csv(tmp_path / "t.csv", pd.DataFrame({"x": [1]}))
    assert (tmp_path / "t.csv").read_text() == "x\n1\n"
