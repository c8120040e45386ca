"""n': the users Base would need for each method's MSE, against n (NDSS Fig. 5).

n' = n x MSE_Base(n) / MSE_method with Base's analytic MSE (NDSS Eq. 5), so Base's own
n' is n (a check of Eq. 5 and of the simulation). Zipf, eps = 1. Run ``bayesldp
experiment n_prime``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.measurement import support_count_variance
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods


def base_mse_analytic(dataset, p: float, q: float) -> float:
    """Mean variance of the unbiased estimate (the NDSS paper's Eq. 5 for Base)."""
    f = dataset.frequencies
    var = support_count_variance(1, p, q, f) / (dataset.n * (p - q) ** 2)
    return float(np.mean(var))


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Every method's MSE and n' = n * MSE_Base(n) / MSE_method.

    Base's (analytic) MSE is proportional to 1/n, so Base with n' users reaches the
    method's empirical MSE with n users.
    """
    rng = np.random.default_rng(seq.spawn(1)[0])
    m = task.simulate(dataset, rng)
    est, sec, notes = apply_methods(m, task.methods, seq, true_counts=dataset.counts)
    f = dataset.frequencies
    analytic = base_mse_analytic(dataset, m.p, m.q)
    rows: list[Row] = []
    for name, e in est.items():
        err = metrics.mse(f, e)
        rows.append((name, "mse", np.nan, err, sec[name], notes[name]))
        rows.append((name, "n_prime", np.nan, dataset.n * analytic / err, sec[name], ""))
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Plot n' against n, log-log."""
    sub = results[results["metric"] == "n_prime"].copy()
    sub["param"] = sub["n"].astype(float)
    sub["ratio"] = "n'"
    return two_panel_rows(
        sub, "n_prime", "param", folder / "figure.png", "n' (users for Base)", "n",
        logx=True, row_key="ratio",
    )  # fmt: skip


def _zipfs(*ns: int) -> tuple[str, ...]:
    return tuple(f"zipf:n={n}" for n in ns)


EXPERIMENT = Experiment(
    name="n_prime",
    description="n': users Base needs for the same MSE, vs n (Zipf, eps = 1)",
    figure="NDSS Fig. 5",
    task=task,
    grid=Grid(
        _zipfs(30_000, 100_000, 300_000, 1_000_000, 3_000_000), (1.0,), reps=30, real_reps=30
    ),
    quick=Grid(_zipfs(100_000, 1_000_000), (1.0,), reps=2, real_reps=30),
    plot=plot,
)
