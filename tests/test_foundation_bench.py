"""The foundation benchmark script runs end to end with tiny arguments."""

from __future__ import annotations

from benchmarks import foundation_bench as bench


def test_foundation_bench_tiny(tmp_path):
    args = bench.build_parser().parse_args(
        [
            "--d-large", "2000", "--n-large", "20000", "--d-kosarak", "500",
            "--n-kosarak", "20000", "--check-items", "3", "--repeat", "1",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    frame = bench.main(args)
    assert set(bench.LINEAR_METHODS) <= set(frame["task"])
    assert (tmp_path / "foundation.csv").exists()
    gap = frame.loc[frame["task"] == "power max |fast - direct sum|", "seconds"].item()
    sigma = frame.loc[frame["task"] == "sigma (for scale)", "seconds"].item()
    assert gap < 1e-6 * sigma
