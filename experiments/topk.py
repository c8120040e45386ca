"""Top-k MSE against k (eps = 1) and against eps (k = 10) (long paper Fig. 7-8).

Run ``bayesldp experiment topk``;
``figure.png`` is top-10 MSE against eps, ``figure_vs_k.png`` top-k MSE against k.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.experiments import EPS_PAPER, EPS_QUICK, REAL, REAL_REPS, SYNTHETIC
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, method_rows, simulate_and_apply

KS = (2, 4, 8, 10, 16, 32)


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """MSE of the k truly largest items (``param`` = k) of every method."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for k in task.params["ks"]:
        if k <= dataset.d:
            vals = {m: metrics.topk_mse(f, e, k) for m, e in est.items()}
            rows += method_rows("topk_mse", float(k), vals, sec, notes)
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Top-k MSE against k at eps = 1, and top-10 MSE against eps."""
    k_eps = results[(results["metric"] == "topk_mse") & (results["epsilon"] == 1.0)].copy()
    k_eps["row"] = k_eps["dataset"] + ", eps = 1"
    a = two_panel_rows(
        k_eps, "topk_mse", "param", folder / "figure_vs_k.png", "top-k MSE", "k", row_key="row"
    )
    k10 = results[(results["metric"] == "topk_mse") & (results["param"] == 10)].copy()
    k10["row"] = k10["dataset"] + ", k = 10"
    b = two_panel_rows(
        k10, "topk_mse", "epsilon", folder / "figure.png", "top-10 MSE", "epsilon", row_key="row"
    )
    return pd.concat([a.assign(view="vs_k"), b.assign(view="vs_eps")], ignore_index=True)


EXPERIMENT = Experiment(
    name="topk",
    description="top-k MSE vs k (eps = 1) and vs eps (k = 10)",
    figure="long paper Fig. 7-8",
    task=task,
    grid=Grid(SYNTHETIC + REAL, EPS_PAPER, reps=30, real_reps=REAL_REPS, params={"ks": KS}),
    quick=Grid(SYNTHETIC, EPS_QUICK, reps=2, real_reps=1, params={"ks": KS}),
    plot=plot,
)
