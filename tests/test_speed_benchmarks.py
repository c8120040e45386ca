"""The speed benchmarks of the main path run end to end with tiny arguments.

``benchmarks/scaling.py`` without ``--targets`` is tested in tests/test_benchmarks.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks import interval_speed, scaling


def test_scaling_targets_tiny(tmp_path):
    args = scaling.build_parser().parse_args(
        ["--domains", "200", "--min-users", "2000", "--reps", "1", "--methods", "norm-sub",
         "--targets", "--simulate-d", "300", "--simulate-n", "20000", "--check-items", "3",
         "--out", str(tmp_path)]
    )  # fmt: skip
    scaling.main(args)
    targets = pd.read_csv(tmp_path / "targets.csv").set_index("task")["value"]
    assert {"norm-sub / np.sort", "OUE.simulate", "power", "power-ns"} <= set(targets.index)
    assert targets["power max |fast - direct sum|"] < 1e-6 * targets["sigma (for scale)"]


def test_interval_speed_tiny(tmp_path):
    args = interval_speed.build_parser().parse_args(
        ["--d", "32", "40", "--queries", "2", "--replicates", "10", "--methods", "base",
         "norm-sub", "ibu", "eb-npmle", "--n-draws", "100", "--out", str(tmp_path)]
    )  # fmt: skip
    frame = interval_speed.main(args)
    assert list(frame["method"]) == ["base", "norm-sub", "ibu", "eb-npmle"] * 2
    assert list(frame["d"]) == [32] * 4 + [40] * 4
    assert set(frame["kind"]) == {"normal"}
    assert frame["vectorised"].iloc[:3].all() and (frame["bootstrap_seconds"].iloc[:3] > 0).all()
    eb = frame[frame["method"] == "eb-npmle"]
    assert (eb["posterior_first_seconds"] > 0).all() and eb["same_intervals"].all()
    assert (eb["draws"] == 100).all()  # --n-draws reached the method
    assert (frame["first_seconds"] > 0).all() and frame["meets_2s"].dtype == bool
    assert (tmp_path / "interval_speed.csv").exists()
    table = (tmp_path / "interval_speed.md").read_text()
    assert table.count("| eb-npmle |") == 2 and "first_seconds" in table
    args.table_only = True
    assert interval_speed.main(args).shape == frame.shape


def test_choose_speed_tiny(tmp_path):
    from benchmarks import choose_speed

    args = choose_speed.build_parser().parse_args(
        ["--dataset", "zipf:d=64", "--reps", "2", "--queries", "full", "top:3", "--out",
         str(tmp_path)]
    )  # fmt: skip
    frame = choose_speed.main(args)
    assert list(frame["query"]) == ["full", "top:3"] and (frame["seconds"] > 0).all()
    steps = pd.read_csv(tmp_path / "choose_speed_steps.csv")
    assert "power-ns" in set(steps["method"])


def test_consistent_setup_tiny():
    from benchmarks import consistent_setup

    rows = consistent_setup.main(consistent_setup.build_parser().parse_args(["--sizes", "64"]))
    assert [(row["code"], row["d"]) for row in rows] == [("current", 64)]
    assert rows[0]["seconds_prepare"] > 0 and rows[0]["cpu_ms_log_target"] > 0
    assert rows[0]["chebyshev_degree"] in (16, 24, 32)


def test_consistent_setup_compare_reports_the_largest_relative_difference():
    from benchmarks.consistent_setup import compare

    old = {"coef": np.ones((3, 3)), "nodes": np.array([1.0, 2.0]), "targets": np.array([4.0]),
           "mode": np.array([1.0, 1.0])}  # fmt: skip
    new = {**old, "nodes": np.array([1.0, 2.2]), "coef": np.full((3, 3), 1.5)}
    out = compare(new, old)
    assert out["same_degree"] and out["target_rel"] == 0.0 and out["mode_rel"] == 0.0
    assert np.isclose(out["node_rel"], 0.1) and np.isclose(out["coef_rel"], 0.5)
    assert compare({**new, "coef": np.ones((4, 4))}, old)["same_degree"] is False
