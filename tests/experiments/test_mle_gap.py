"""MLE-Apx, CLS and the exact MLE: the study's stream and its checks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesldp.experiments import mle_gap
from bayesldp.methods.registry import postprocess
from bayesldp.runner import build_config, get_experiment, run
from bayesldp.runner._config import make_tasks
from bayesldp.runner._run import execute


def test_mle_gap_replays_one_sequential_stream():
    """Each task starts where the first version's single loop over cells had got to."""
    from bayesldp.datasets import uniform, zipf
    from bayesldp.oracles import make_oracle

    experiment = get_experiment("mle_gap")
    specs = ("zipf:d=16,n=3000", "uniform:d=16,n=3000")
    config = build_config(experiment, "quick", datasets=specs, epsilons=(0.5, 1.0), reps=2,
                          oracles=("OUE", "GRR"), methods=("cls", "mle"))  # fmt: skip
    rng = np.random.default_rng(13)  # the old script's loop: oracle, eps, data, rep
    expected = {}
    for oracle in ("OUE", "GRR"):
        for eps in (0.5, 1.0):
            for spec in specs:
                for rep in range(2):
                    law = zipf if spec.startswith("zipf") else uniform
                    counts = law(d=16, n=3000, rng=rng).counts
                    m = make_oracle(oracle, eps, 16).simulate(counts, rng)
                    est = postprocess(m, "cls").frequencies
                    expected[(oracle, eps, spec, rep)] = np.mean((est - counts / 3000) ** 2)
    for task in reversed(make_tasks(config)):
        rows = execute(experiment, task).query("method == 'cls' and metric == 'mse'")
        key = (task.oracle, task.epsilon, task.dataset, task.rep)
        assert rows["value"].item() == expected[key]


def test_mle_gap_checks_the_closed_form_mle_against_cvxpy(tmp_path):
    config = build_config(get_experiment("mle_gap"), "quick", reps=2)
    summary = run(get_experiment("mle_gap"), config, tmp_path).summary
    assert {"mle-apx", "cls", "mle", "ibu"} <= set(summary["method"])
    assert set(summary["dataset"]) == {"zipf:d=64,n=20000", "uniform:d=64,n=20000"}
    assert (summary["mse"] > 0).all()
    assert (summary.loc[summary["method"] == "mle", "cvxpy_mle_max_abs_diff"] < 1e-6).all()
    assert "| OUE | 1 | zipf:d=64,n=20000 |" in (tmp_path / "mle_gap.md").read_text()
    runs = mle_gap.runs_table(pd.read_csv(tmp_path / "results.csv"))
    assert len(runs) == 2 * 2 * 2 * len(config.methods)
