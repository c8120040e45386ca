"""The user-side benchmark runs with tiny arguments."""

from __future__ import annotations

import pytest

import bayesldp

ALL = list(bayesldp.ORACLES)


TINY_BENCH = ["--domains", "64", "--users", "3000", "--subsample", "20", "--repeat", "1"]
TINY_BENCH += ["--previous-users", "3000", "--grr-d", "1000", "--grr-n", "20000"]


@pytest.mark.slow  # a benchmark script, not the library
def test_user_side_benchmark_runs_with_tiny_arguments(tmp_path):
    from benchmarks import user_side as bench

    result = bench.main([*TINY_BENCH, "--libraries", "--out", str(tmp_path)])
    ratios = result["ratios"].set_index("oracle")
    assert set(ratios.index) == set(ALL)
    assert (ratios["over_raw_random_bytes"] > 0).all()
    for name in ("user_side.csv", "ratios.csv", "run.json"):
        assert (tmp_path / name).exists()


@pytest.mark.slow
def test_user_side_benchmark_with_the_other_libraries(tmp_path):
    from benchmarks import user_side as bench

    frame = bench.main([*TINY_BENCH, "--out", str(tmp_path)])["user_side"]
    assert {"pure-LDP", "multi-freq-ldpy"} <= set(frame["library"])
