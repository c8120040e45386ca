"""Full-domain MSE against eps (long paper Fig. 3-4; NDSS Fig. 3).

This module is the whole experiment, and the template for a new one: the task (the rows
of one cell of the grid), the grids (the papers' and a tiny ``--quick`` one) and the plot
(drawn from the saved results only), declared as ``EXPERIMENT``. The runner
(:mod:`bayesldp.runner`) does the rest: seeding, Dask or in-process execution, verified
parts, resume, ``results.csv``, ``metadata.json``, ``summary.csv``; ``bayesldp
experiment`` finds it by scanning ``bayesldp.experiments``.

Run ``bayesldp experiment full_domain_mse`` (``--quick`` for a tiny grid, ``--help`` for
the options); results, summary and figure go to ``OUT/full_domain_mse/``.
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


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """MSE over all items, and the estimate's sum, of every method."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    rows = method_rows("mse", np.nan, {m: metrics.mse(f, e) for m, e in est.items()}, sec, notes)
    rows += method_rows("sum", np.nan, {m: e.total for m, e in est.items()}, sec, notes)
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Full-domain MSE against eps: a row of two panels per dataset."""
    return two_panel_rows(
        results, "mse", "epsilon", folder / "figure.png", "full-domain MSE", "epsilon"
    )


EXPERIMENT = Experiment(
    name="full_domain_mse",
    description="full-domain MSE vs eps",
    figure="long paper Fig. 3-4; NDSS Fig. 3",
    task=task,
    grid=Grid(SYNTHETIC + REAL, EPS_PAPER, reps=30, real_reps=REAL_REPS),
    quick=Grid((*SYNTHETIC, "wordfreq"), EPS_QUICK, reps=2, real_reps=1),
    plot=plot,
)
