"""Choosing a method on a synthetic dataset fitted to the estimate (NDSS Fig. 9).

The estimate is made consistent (Norm-Sub or PowerNS), a synthetic dataset with the
same n and fixed sets is drawn from it, the collection is simulated on it
``synthetic_reps`` times, and each method's error is measured against the synthetic
truth; the method with the lowest synthetic error is compared with the best method on
the true data. Run ``bayesldp experiment choose_method``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.experiments import SYNTHETIC
from bayesldp.experiments.fixed_set import dataset_groups, main_grouping
from bayesldp.methods.registry import postprocess
from bayesldp.plotting import new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

#: Consistent methods whose estimate the synthetic dataset is drawn from (param codes).
FITS = ((1.0, "norm-sub"), (2.0, "power-ns"))


def query_errors(dataset, est, rng_seed) -> dict[str, dict[str, float]]:
    """Errors of each method on the query types used to choose a method."""
    f = dataset.frequencies
    out: dict[str, dict[str, float]] = {"full": {}, "set50": {}, "set5": {}, "top10": {}}
    groups = dataset_groups(dataset)
    sets = [np.asarray(i) for i in groups[main_grouping(groups)].values() if len(i)]
    out["fixed"] = {}
    for m, e in est.items():
        out["full"][m] = metrics.mse(f, e)
        out["set50"][m] = metrics.set_value_mse(f, e, 50, np.random.default_rng(rng_seed), 10)
        out["set5"][m] = metrics.set_value_mse(f, e, 5, np.random.default_rng(rng_seed), 10)
        out["top10"][m] = metrics.topk_mse(f, e, min(10, f.size))
        out["fixed"][m] = float(np.mean([(e.subset(i) - f[i].sum()) ** 2 for i in sets]))
    return out


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Errors on the true data (param 0) and on each synthetic fit (param 1, 2)."""
    seeds = seq.spawn(3 + 2 * task.params["synthetic_reps"])
    rng = np.random.default_rng(seeds[0])
    m = task.simulate(dataset, rng)
    est, sec, notes = apply_methods(m, task.methods, seq, true_counts=dataset.counts)
    rows: list[Row] = []
    for query, vals in query_errors(dataset, est, seeds[1]).items():
        rows += [(k, f"{query}", 0.0, v, sec[k], notes[k]) for k, v in vals.items()]
    fit_rng = np.random.default_rng(seeds[2])
    for code, fit in FITS:
        probs = np.clip(np.asarray(postprocess(m, fit).frequencies, dtype=float), 0, None)
        probs = probs / probs.sum()
        synth = Dataset(
            f"synthetic-{fit}",
            fit_rng.multinomial(dataset.n, probs),
            f"fitted to {fit}",
            groups=dataset_groups(dataset),
        )
        acc: dict[str, dict[str, float]] = {}
        reps = task.params["synthetic_reps"]
        start = 3 + (int(code) - 1) * reps
        for child in seeds[start : start + reps]:
            r = np.random.default_rng(child)
            sm = task.simulate(synth, r)
            sest, _, _ = apply_methods(sm, task.methods, child)
            for query, vals in query_errors(synth, sest, child).items():
                for k, v in vals.items():
                    acc.setdefault(query, {}).setdefault(k, 0.0)
                    acc[query][k] += v / reps
        for query, vals in acc.items():
            rows += [(k, query, code, v, np.nan, "") for k, v in vals.items()]
    return rows


def choice_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, eps, query, fit): the method chosen on synthetic data vs the best.

    ``regret`` is the true error of the chosen method over the best method's true
    error (1 when the choice is right), averaged over repetitions.
    """
    rows = []
    for (ds, eps, rep, query), g in results.groupby(["dataset", "epsilon", "rep", "metric"]):
        true = g[g["param"] == 0].set_index("method")["value"]
        best = true.idxmin()
        for code, fit in FITS:
            syn = g[g["param"] == code].set_index("method")["value"]
            if syn.empty:
                continue
            chosen = syn.idxmin()
            rows.append(
                {
                    "dataset": ds,
                    "epsilon": eps,
                    "rep": rep,
                    "query": query,
                    "fit": fit,
                    "best": best,
                    "chosen": chosen,
                    "match": chosen == best,
                    "regret": true[chosen] / true[best],
                    "regret_power_ns": true.get("power-ns", np.nan) / true[best],
                }
            )
    return pd.DataFrame(rows)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Regret of the choice made on each fit (bars) and of always using PowerNS (dots)."""
    table = choice_table(results)
    summary = table.groupby(["dataset", "query", "fit", "epsilon"], as_index=False).agg(
        match=("match", "mean"),
        regret=("regret", "mean"),
        regret_power_ns=("regret_power_ns", "mean"),
        chosen=("chosen", lambda s: s.value_counts().index[0]),
        best=("best", lambda s: s.value_counts().index[0]),
    )
    fig, axes = new_figure(1)
    for j, (_, fit) in enumerate(FITS):
        ax = axes[0, j]
        sub = summary[summary["fit"] == fit]
        labels = sub["dataset"] + "/" + sub["query"] + "/" + sub["epsilon"].map("{:g}".format)
        ax.barh(labels, sub["regret"], label="chosen on synthetic")
        ax.scatter(sub["regret_power_ns"], labels, color="k", s=8, zorder=3, label="power-ns")
        ax.set_xlim(left=1.0)
        ax.set_xlabel("true error / best method's true error")
        ax.set_title(f"synthetic data fitted with {fit}", fontsize=9)
        ax.tick_params(axis="y", labelsize=6)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return summary


EXPERIMENT = Experiment(
    name="choose_method",
    description="choosing a method with a synthetic dataset fitted to the estimate",
    figure="NDSS Fig. 9",
    task=task,
    # each task fits and simulates 2 x synthetic_reps synthetic datasets
    grid=Grid(
        (*SYNTHETIC, "us_cities"),
        (0.5, 1.0, 2.0),
        reps=10,
        real_reps=10,
        params={"synthetic_reps": 3},
    ),
    quick=Grid(("zipf",), (1.0,), reps=1, real_reps=10, params={"synthetic_reps": 1}),
    plot=plot,
)
