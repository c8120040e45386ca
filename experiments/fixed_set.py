"""Fixed-set queries against eps (NDSS Fig. 8).

us_cities: the papers' fixed sets (US states, census regions and divisions); Zipf has
none, so it gets a fixed random partition into 50 sets. Run ``bayesldp experiment
fixed_set``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp.datasets import Dataset
from bayesldp.experiments import EPS_PAPER, EPS_QUICK, REAL_REPS
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Experiment, Grid, Row, Task, simulate_and_apply

#: Fixed-set groupings in the order they are drawn, and how they are named.
GROUPINGS = {
    "state": "US states",
    "region": "US census regions",
    "division": "US census divisions",
    "random50": "random partition",
}
RANDOM_GROUPING = "random50"


def synthetic_groups(d: int, n_groups: int = 50) -> dict[str, np.ndarray]:
    """Return a fixed random partition of the domain into ``n_groups`` sets (seed 0)."""
    labels = np.random.default_rng(0).integers(0, n_groups, size=d)
    return {f"g{k}": np.flatnonzero(labels == k) for k in range(n_groups)}


def dataset_groups(dataset) -> dict[str, dict[str, np.ndarray]]:
    """Return the dataset's fixed sets (e.g. state, region), or a random partition if none."""
    if dataset.groups:
        return dataset.groups
    return {RANDOM_GROUPING: synthetic_groups(dataset.d)}


def main_grouping(groups: dict) -> str:
    """Return the grouping used when one is needed: ``state`` if there is one, else the first."""
    return "state" if "state" in groups else sorted(groups)[0]


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Mean squared error over each grouping's sets; ``param`` is the number of sets."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for grouping, groups in sorted(dataset_groups(dataset).items()):
        sets = [np.asarray(idx) for idx in groups.values() if len(idx)]
        vals = {
            m: float(np.mean([(e.subset(idx) - f[idx].sum()) ** 2 for idx in sets]))
            for m, e in est.items()
        }
        rows += [
            (m, f"fixed_mse:{grouping}", float(len(sets)), v, sec[m], notes[m])
            for m, v in vals.items()
        ]
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """One row per (dataset, grouping): US states, regions, divisions; Zipf's partition."""
    results = results.copy()
    grouping = results["metric"].str.split(":").str[1]
    order = {g: i for i, g in enumerate(GROUPINGS)}
    results["_order"] = grouping.map(lambda g: order.get(g, len(order)))
    sets = results["param"].map(lambda v: f" ({v:.0f} sets)" if np.isfinite(v) else "")
    results["row"] = results["dataset"] + ", " + grouping.map(lambda g: GROUPINGS.get(g, g)) + sets
    results = results.sort_values(["dataset", "_order"], kind="stable")
    results["metric"] = "fixed"
    return two_panel_rows(
        results, "fixed", "epsilon", folder / "figure.png", "fixed-set MSE", "epsilon",
        row_key="row",
    )  # fmt: skip


EXPERIMENT = Experiment(
    name="fixed_set",
    description="fixed-set queries vs eps (us_cities: states, census regions and divisions; "
    "Zipf: a random partition into 50 sets)",
    figure="NDSS Fig. 8",
    task=task,
    grid=Grid(("us_cities", "zipf"), EPS_PAPER, reps=30, real_reps=REAL_REPS),
    quick=Grid(("us_cities", "zipf"), EPS_QUICK, reps=2, real_reps=1),
    plot=plot,
)
