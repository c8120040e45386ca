"""Empirical bias and variance of every method per rank (NDSS Fig. 4; Zipf, eps = 1).

Each task runs ``runs`` rounds and returns per-rank sums of errors and squared errors;
the plot pools the tasks (10 x 30 = 300 runs by default, the paper used 5000). Run
``bayesldp experiment bias_variance``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp.datasets import Dataset
from bayesldp.plotting import method_panels, method_style, new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, simulate_and_apply


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Run ``runs`` rounds in one task: per-rank sums of errors and squared errors."""
    f = dataset.frequencies
    order = np.lexsort((np.arange(f.size), -f))
    ranks = order[: task.params["ranks"]]
    sums: dict[str, np.ndarray] = {}
    sqs: dict[str, np.ndarray] = {}
    secs: dict[str, float] = {}
    runs = task.params["runs"]
    for child in seq.spawn(runs):
        est, sec, _ = simulate_and_apply(task, dataset, child)
        for m, e in est.items():
            err = np.asarray(e.frequencies)[ranks] - f[ranks]
            sums[m] = sums.get(m, 0) + err
            sqs[m] = sqs.get(m, 0) + err**2
            secs[m] = secs.get(m, 0.0) + sec[m]
    rows: list[Row] = []
    for m in sums:
        for r in range(ranks.size):
            rows.append((m, "sum_err", float(r + 1), float(sums[m][r]), secs[m], ""))
            rows.append((m, "sum_sq_err", float(r + 1), float(sqs[m][r]), secs[m], ""))
        rows.append((m, "runs", np.nan, float(runs), secs[m], ""))
    return rows


def bias_variance_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per-rank bias and variance from the tasks' sums."""
    runs = results[results["metric"] == "runs"].groupby("method")["value"].sum()
    sums = results[results["metric"].isin(["sum_err", "sum_sq_err"])]
    tot = sums.groupby(["method", "param", "metric"])["value"].sum().unstack("metric")
    tot = tot.reset_index()
    tot["runs"] = tot["method"].map(runs)
    tot["bias"] = tot["sum_err"] / tot["runs"]
    tot["variance"] = tot["sum_sq_err"] / tot["runs"] - tot["bias"] ** 2
    tot["mse"] = tot["sum_sq_err"] / tot["runs"]
    return tot.rename(columns={"param": "rank"})[
        ["method", "rank", "runs", "bias", "variance", "mse"]
    ]


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Bias (top) and variance (bottom) per rank, the papers' two panels."""
    table = bias_variance_table(results)
    fig, axes = new_figure(2)
    left, right = method_panels(table["method"].unique())
    for i, what in enumerate(("bias", "variance")):
        for j, methods in enumerate((left, right)):
            ax = axes[i, j]
            for m in methods:
                sub = table[table["method"] == m]
                style = {**method_style(m), "marker": None, "lw": 1}
                ax.plot(sub["rank"], sub[what], label=m, **style)
            ax.set_xscale("log")
            if what == "variance":
                ax.set_yscale("log")
                positive = table.loc[table["variance"] > 0, "variance"]
                if not positive.empty:  # methods that cut an item to 0 every run: 0
                    ax.set_ylim(bottom=max(positive.min(), positive.max() * 1e-6))
            else:
                ax.axhline(0, color="k", lw=0.5)
            ax.set_xlabel("rank of the value")
            ax.set_ylabel(what)
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return table


EXPERIMENT = Experiment(
    name="bias_variance",
    description="empirical bias and variance per rank (Zipf, eps = 1)",
    figure="NDSS Fig. 4",
    task=task,
    grid=Grid(("zipf",), (1.0,), reps=10, real_reps=10, params={"runs": 30, "ranks": 100}),
    quick=Grid(("zipf",), (1.0,), reps=2, real_reps=10, params={"runs": 5, "ranks": 100}),
    plot=plot,
)
