"""benchmarks/convex_bench.py runs end to end with tiny arguments."""

from __future__ import annotations

from tests.convex.references import ATOL


def test_convex_bench_tiny(tmp_path):
    from benchmarks import convex_bench as bench

    args = bench.build_parser().parse_args(
        ["--sizes", "50", "200", "--repeat", "1", "--out", str(tmp_path)]
    )
    frame = bench.main(args)
    assert set(frame["method"]) == {"cls", "mle-apx", "mle"}
    assert set(frame["d"]) == {50, 200}
    assert (frame["max_abs_diff"] < ATOL).all()
    assert (tmp_path / "convex_bench.csv").exists()
    assert (tmp_path / "convex_bench.png").exists()
