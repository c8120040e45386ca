"""Heavy-hitter precision, recall and F against the threshold and eps (Calibrate Fig. 5-8).

A heavy hitter is an item whose true frequency is at least the threshold; methods
report the items whose estimate is. ``oue-zero`` (Base-Cut with alpha = 0.05,
Calibrate's baseline) runs beside the default methods. Run ``bayesldp experiment
heavy_hitters``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.experiments import EPS_QUICK, REAL_REPS
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, simulate_and_apply


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Precision, recall and F of every method at each threshold (``param``)."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for t in task.params["thresholds"]:
        for m, e in est.items():
            score = metrics.heavy_hitters(f, e, t)
            rows.append((m, "precision", float(t), score.precision, sec[m], notes[m]))
            rows.append((m, "recall", float(t), score.recall, sec[m], ""))
            rows.append((m, "f_score", float(t), score.f_score, sec[m], ""))
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """F, precision and recall against the threshold (eps = 1); F against eps."""
    out = []
    for metric in ("f_score", "precision", "recall"):
        sub = results[(results["metric"] == metric) & (results["epsilon"] == 1.0)].copy()
        sub["row"] = sub["dataset"] + f", {metric}, eps = 1"
        s = two_panel_rows(
            sub, metric, "param", folder / f"figure_{metric}_vs_threshold.png", metric,
            "threshold", logy=False, logx=True, row_key="row",
        )  # fmt: skip
        out.append(s.assign(view=f"{metric}_vs_threshold"))
    thresholds = sorted(results["param"].dropna().unique())
    t0 = 0.005 if 0.005 in thresholds else thresholds[len(thresholds) // 2]
    sub = results[np.isclose(results["param"], t0)].copy()
    sub["row"] = sub["dataset"] + ", " + sub["metric"] + f", threshold {t0:g}"
    s = two_panel_rows(
        sub[sub["metric"] == "f_score"], "f_score", "epsilon", folder / "figure.png",
        "F-score", "epsilon", logy=False, row_key="row",
    )  # fmt: skip
    out.append(s.assign(view="f_score_vs_eps"))
    return pd.concat(out, ignore_index=True)


EXPERIMENT = Experiment(
    name="heavy_hitters",
    description="heavy-hitter precision/recall/F vs threshold and vs eps (Calibrate)",
    figure="Calibrate Fig. 5-8",
    task=task,
    grid=Grid(
        ("zipf", "wordfreq"),
        (0.5, 1.0, 2.0, 3.0, 4.0, 5.0),
        reps=30,
        real_reps=REAL_REPS,
        extra_methods=("oue-zero",),
        params={"thresholds": (0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02)},
    ),
    quick=Grid(
        ("zipf",),
        EPS_QUICK,
        reps=2,
        real_reps=1,
        extra_methods=("oue-zero",),
        params={"thresholds": (0.001, 0.002, 0.005, 0.01)},
    ),
    plot=plot,
)
