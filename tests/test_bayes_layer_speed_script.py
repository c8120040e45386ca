"""The composable layer's speed benchmarks run end to end with tiny arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pymc")

ROOT = Path(__file__).resolve().parents[1]


def run_script(name: str, *args: str) -> dict:
    """Run ``benchmarks/<name>`` in a subprocess; return the JSON row it prints last."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / name), *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_bayes_layer_speed_one_case_tiny():
    row = run_script(
        "bayes_layer_speed.py", "--run", "zipf", "--d", "12", "--draws", "30", "--tune", "30",
        "--seed", "2",
    )  # fmt: skip
    assert row["d"] == 12 and row["draws"] == 30 and row["method"] == "bayes-dirichlet"
    # both chains' draws: at least one leapfrog step per draw, at most 2^10 - 1
    assert 2 * 30 <= row["leapfrog_draws"] <= 2 * 30 * 1023
    assert row["leapfrog_warmup"] is None or row["leapfrog_warmup"] >= 2 * 30
    assert row["seconds_total"] >= row["seconds_fit"] >= row["seconds_sampling"] > 0
    if row["sampler"] == "nutpie":  # a fresh process compiles the model
        assert row["seconds_sampling"] > row["seconds_compile"] > 0
    else:
        assert row["seconds_compile"] is None
    assert abs(row["sum"] - 1.0) < 1e-9
    # the tuned step and tree depth, and the five worst-mixing items, worst first
    assert row["step_size"] > 0 and 0 <= row["tree_depth"] <= 10
    worst = [int(v) for v in row["worst_items"].split()]
    r_hat = [float(v) for v in row["worst_r_hat"].split()]
    assert len(worst) == len(set(worst)) == 5 and all(0 <= v < 12 for v in worst)
    assert r_hat == sorted(r_hat, reverse=True)
    assert 0 <= row["items_r_hat_over_1_05"] <= 12
    assert len(row["worst_z_estimate"].split()) == len(row["worst_z_true"].split()) == 5


def test_gradient_cost_tiny():
    row = run_script(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "2", "--seconds",
        "0.05", "--out", "",
    )  # fmt: skip
    assert row["case"] == "zipf" and row["d"] == 12 and row["rounds"] == 2
    assert 0 < row["ms_per_evaluation"] <= row["ms_median"]
    assert row["calls_per_round"] >= 5 and row["compile_seconds"] > 0


def test_bayes_layer_speed_forwards_sampler_kwargs_and_a_fixed_concentration(tmp_path):
    # through main(), so the options must reach the per-case process
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "bayes_layer_speed.py"), "--cases", "zipf",
        "--d", "12", "--draws", "20", "--tune", "20", "--sampler-kwargs", '{"maxdepth": 2}',
        "--concentration", "0.5", "--out", str(tmp_path), "--name", "tiny",
    ]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    row = json.loads(result.stdout.strip().splitlines()[-1])
    assert row["method"] == "bayes-dirichlet, a fixed" and row["concentration"] == 0.5
    assert json.loads(row["sampler_kwargs"]) == {"maxdepth": 2}
    if row["sampler"] == "nutpie":  # a depth cap of 2: at most 3 steps per draw
        assert row["tree_depth"] <= 2 and row["leapfrog_draws"] <= 2 * 20 * 3
    assert (tmp_path / "tiny.csv").exists()
