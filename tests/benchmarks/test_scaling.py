"""The scaling benchmark script, on a tiny grid."""

from __future__ import annotations

import bayesldp


def test_scaling_script_tiny(tmp_path):
    from benchmarks import scaling

    args = scaling.build_parser().parse_args(
        ["--domains", "100", "300", "--min-users", "2000", "--reps", "1",
         "--ibu-iters", "50", "--slow-max-d", "200", "--out", str(tmp_path)]
    )  # fmt: skip
    frame = scaling.main(args)
    assert set(frame["method"]) == set(bayesldp.method_names(bayesian=False, needs_truth=False))
    slow = frame["method"].isin(scaling.SLOW_METHODS) & (frame["d"] == 300)
    assert frame.loc[slow, "skipped"].all() and frame.loc[slow, "seconds"].isna().all()
    assert (frame.loc[~frame["skipped"], "seconds"] > 0).all()
    assert (tmp_path / "scaling.csv").exists() and (tmp_path / "scaling.png").exists()
