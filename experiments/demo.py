"""The demo: every NumPy post-processing method on the papers' default setting.

Zipf s = 1.5, d = 1024, n = 10^6, eps = 1, OUE, 5 repetitions: full-domain, 50%-set and
top-10 MSE of each method, drawn as a dot plot (every repetition, the mean, the range).
``bayesldp demo`` runs it (``--bayes`` adds the Bayesian models that take seconds, not
minutes, per fit); so does ``bayesldp experiment demo``, with the runner's options.

Seeding as in the first demo: repetition ``r`` uses child ``r`` of
``SeedSequence(seed)`` for the simulation and then the query sets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.methods.registry import method_names
from bayesldp.plotting import dataset_note, dot_plot
from bayesldp.runner import Config, Experiment, Grid, Row, Task, apply_methods
from bayesldp.runner._datasets import load_dataset

#: The demo's methods: every NumPy method usable on real data (no Bayesian model, no
#: reference that needs the truth).
METHODS = method_names(bayesian=False, needs_truth=False)
PARAMS = {"set_percent": 50.0, "n_queries": 10, "top_k": 10}


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: simulate, then every method's full-domain, set and top-k MSE."""
    p = task.params
    rng = np.random.default_rng(seq)
    m = task.simulate(dataset, rng)
    query_seed = rng.integers(2**63)
    est, sec, notes = apply_methods(m, task.methods, seq, true_counts=dataset.counts)
    f = dataset.frequencies
    rows: list[Row] = []
    for name, e in est.items():
        qrng = np.random.default_rng(query_seed)  # the same sets for every method
        values = (
            ("mse", np.nan, metrics.mse(f, e)),
            ("set_mse", p["set_percent"], metrics.set_value_mse(f, e, p["set_percent"], qrng,
                                                                 p["n_queries"])),
            ("topk_mse", float(p["top_k"]), metrics.topk_mse(f, e, p["top_k"])),
            ("sum", np.nan, e.total),
        )  # fmt: skip
        rows += [(name, k, param, float(v), sec[name], notes[name]) for k, param, v in values]
    return rows


def check(config: Config) -> None:
    """One setting (dataset, eps, oracle), with at least ``top_k`` items."""
    if len(config.datasets) * len(config.epsilons) * len(config.oracles) != 1:
        raise ValueError(
            "the demo runs one dataset, eps and oracle; use full_domain_mse for a grid"
        )
    d, k = load_dataset(config.datasets[0]).d, config.params["top_k"]
    if d < k:
        raise ValueError(f"d must be at least {k} for the demo's top-{k} query, got d = {d}")


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Dot plot: each method's runs, their mean and range, for the three queries."""
    first = results.iloc[0]
    pct = results.loc[results["metric"] == "set_mse", "param"]
    k = results.loc[results["metric"] == "topk_mse", "param"]
    panels = [
        ("mse", "full-domain MSE"),
        ("set_mse", f"{pct.iloc[0]:g}% set MSE" if len(pct) else "set MSE"),
        ("topk_mse", f"top-{k.iloc[0]:g} MSE" if len(k) else "top-k MSE"),
    ]
    title = (
        f"{dataset_note(first['dataset'], first['n'], first['d'])}; eps = {first['epsilon']:g}, "
        f"{first['oracle']}, {results['rep'].nunique()} repetitions"
    )
    return dot_plot(results, panels, folder / "figure.png", title=title)


EXPERIMENT = Experiment(
    name="demo",
    description="the demo: every NumPy method on Zipf(1.5), d=1024, n=1e6, eps=1, OUE",
    figure="the README's first command",
    task=task,
    grid=Grid(("zipf",), (1.0,), reps=5, methods=METHODS, params=PARAMS),
    quick=Grid(("zipf:d=256,n=100000",), (1.0,), reps=2, methods=METHODS, params=PARAMS),
    plot=plot,
    seed="spawn",
    group="demo",
    check=check,
)
