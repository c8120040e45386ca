"""Full-domain MAE against eps (long paper Fig. 10, appendix).

Run ``bayesldp experiment mae``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.experiments import EPS_PAPER, EPS_QUICK, REAL_REPS, SYNTHETIC
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, method_rows, simulate_and_apply


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Mean absolute error over all items of every method."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    return method_rows("mae", np.nan, {m: metrics.mae(f, e) for m, e in est.items()}, sec, notes)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Full-domain MAE against eps: a row of two panels per dataset."""
    return two_panel_rows(
        results, "mae", "epsilon", folder / "figure.png", "full-domain MAE", "epsilon"
    )


EXPERIMENT = Experiment(
    name="mae",
    description="full-domain MAE vs eps",
    figure="long paper Fig. 10 (appendix)",
    task=task,
    grid=Grid(SYNTHETIC, EPS_PAPER, reps=30, real_reps=REAL_REPS),
    quick=Grid(SYNTHETIC, EPS_QUICK, reps=2, real_reps=1),
    plot=plot,
)
