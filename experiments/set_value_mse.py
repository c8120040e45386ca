"""Random set-value MSE against the set size rho (long paper Fig. 5-6).

Sets of rho% of the items (10-90% and 1-10%), the same random sets for every method;
eps = 1. Run ``bayesldp experiment set_value_mse``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.experiments import REAL_REPS, SYNTHETIC
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, method_rows, simulate_and_apply


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Set-value MSE of every method for each rho (``param``), on shared random sets."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    query_seed = seq.spawn(2)[1]
    for rho in task.params["rhos"]:
        # the same random sets for every method
        vals = {
            m: metrics.set_value_mse(
                f, e, rho, np.random.default_rng(query_seed), task.params["n_queries"]
            )
            for m, e in est.items()
        }
        rows += method_rows("set_mse", float(rho), vals, sec, notes)
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Two rows per dataset: rho 10-90% and rho 1-10%."""
    results = results.copy()
    results["range"] = np.where(results["param"] >= 10, "rho 10-90%", "rho 1-10%")
    results["row"] = results["dataset"] + ", " + results["range"]
    results = results.sort_values(["dataset", "range"], ascending=[True, False])
    return two_panel_rows(
        results, "set_mse", "param", folder / "figure.png", "set-value MSE", "rho (%)",
        row_key="row",
    )  # fmt: skip


EXPERIMENT = Experiment(
    name="set_value_mse",
    description="random set-value MSE vs set size rho (10-90% and 1-10%), eps = 1",
    figure="long paper Fig. 5-6",
    task=task,
    grid=Grid(
        (*SYNTHETIC, "us_cities"),
        (1.0,),
        reps=30,
        real_reps=REAL_REPS,
        params={"rhos": tuple(range(10, 100, 10)) + tuple(range(1, 11)), "n_queries": 10},
    ),
    quick=Grid(
        SYNTHETIC,
        (1.0,),
        reps=2,
        real_reps=1,
        params={"rhos": (10, 50, 90, 1, 5), "n_queries": 5},
    ),
    plot=plot,
)
