"""benchmarks/eb_speed.py runs end to end with tiny arguments (both parts)."""

from __future__ import annotations

from benchmarks import eb_speed


def test_speed_part_tiny(tmp_path):
    frame = eb_speed.main(
        ["speed", "--data", "zipf", "--d", "40", "--n", "4000", "--repeat", "1",
         "--n-draws", "4", "--out", str(tmp_path)]
    )  # fmt: skip
    assert set(frame["task"]) >= {"np.sort", "eb-npmle", "power-ns", "oracle-bayes"}
    assert (frame["seconds"] > 0).all()
    assert (tmp_path / "eb_speed.csv").exists() and (tmp_path / "eb_speed_summary.csv").exists()


def test_solvers_part_tiny(tmp_path):
    frame = eb_speed.main(
        ["solvers", "--sizes", "30", "--n", "3000", "--em-iter", "200", "--out", str(tmp_path)]
    )
    assert list(frame["solver"]) == ["sqp", "em", "cvxpy (Clarabel)"]
    assert (frame["loglik_shortfall"] >= 0).all()
    assert frame.loc[frame["solver"] == "sqp", "max_mean_diff_sd"].item() == 0
    assert (tmp_path / "eb_solvers.csv").exists()
