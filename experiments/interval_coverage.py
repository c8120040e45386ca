"""Coverage of 90% intervals for every method, over repeated simulated runs.

For each dataset, epsilon and repetition the oracle (OUE by default) is simulated once
and every method is applied to the same measurement. For each method and each interval
kind it offers (``normal``, ``bootstrap``, ``percentile``, ``posterior``), the study
records how many of these intervals contain the true frequency:

- ``set10``, ``set50``: random sets of 10% and 50% of the domain
  (:func:`bayesldp.metrics.random_subsets`, ``--queries`` of each);
- ``top1`` .. ``top10``: each of the ten most frequent items (by true frequency);
- ``item``: ``--queries`` items drawn uniformly from the domain (mostly the tail, where
  clipped methods answer 0), split by whether the API warns for them (``flagged``).

Rows: metric ``STAT:KIND:QUERY`` with ``STAT`` one of ``covered``, ``n``, ``flagged``,
``covered_flagged`` (counts) and ``width`` (mean width), ``param`` the nominal coverage;
``bootstrap_seconds`` (time to compute the ``--replicates`` replicates) and
``vectorised`` per method. Bayesian (MCMC) methods run on the first ``--bayes-reps``
repetitions only.

The report, from the saved results only: ``summary.csv`` (coverage over all runs, mean
width, share flagged, per dataset, eps, method, kind and query), ``tables.md`` (one
Markdown table per dataset and eps, and coverage of each top-10 item) and
``figure.png`` (coverage per method, kind and query against the 85-95% band).

Seeding as in the study's first script: the cell (dataset, eps, rep) is seeded with
``SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``, whose three children
simulate the oracle, draw the query sets and seed the bootstrap.

Run ``bayesldp experiment interval_coverage``; ``--epsilon 0.5,1,2`` for more budgets;
``--queries``, ``--replicates``, ``--prob`` and ``--bayes-reps`` change the setting.
"""

from __future__ import annotations

import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp import intervals, metrics
from bayesldp._io import atomic_open, markdown_table
from bayesldp.datasets import Dataset
from bayesldp.intervals._sets import flagged_sets
from bayesldp.methods.registry import parse_method
from bayesldp.plotting import dataset_note, method_order, new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

DATASETS = ("zipf", "wordfreq", "us_cities")
#: Interval kinds, each with its marker.
KINDS = {"normal": "o", "bootstrap": "s", "percentile": "^", "posterior": "D"}
#: Query groups of the figure and tables (the top items pooled).
GROUPS = ("set10", "set50", "top10", "item")
STATS = ("covered", "n", "flagged", "covered_flagged", "width")


def cell_seed(task: Task) -> np.random.SeedSequence:
    """``SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``: the first scripts' rule."""
    return np.random.SeedSequence(
        [task.seed, zlib.crc32(task.dataset.encode()), round(1000 * task.epsilon), task.rep]
    )


def runnable_methods(task: Task) -> list[str]:
    """Return the task's methods, without the Bayesian ones past ``params["bayes_reps"]``."""
    reps = task.params["bayes_reps"]
    return [s for s in task.methods if task.rep < reps or not parse_method(s)[0].bayesian]


def queries(d: int, truth: np.ndarray, n_queries: int, rng) -> dict[str, np.ndarray]:
    """Boolean masks of every query set, by query type."""
    out = {
        "set10": metrics.random_subsets(d, 10, n_queries, rng),
        "set50": metrics.random_subsets(d, 50, n_queries, rng),
    }
    top = np.lexsort((np.arange(d), -truth))[:10]
    for rank, item in enumerate(top, start=1):
        mask = np.zeros((1, d), dtype=bool)
        mask[0, item] = True
        out[f"top{rank}"] = mask
    items = rng.choice(d, size=min(n_queries, d), replace=False)
    singles = np.zeros((items.size, d), dtype=bool)
    singles[np.arange(items.size), items] = True
    out["item"] = singles
    return out


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: coverage counts for every method, interval kind and query type."""
    p = task.params
    truth = dataset.frequencies
    sim, qseq, bseq = seq.spawn(3)
    m = task.simulate(dataset, np.random.default_rng(sim))
    sets = queries(dataset.d, truth, p["queries"], np.random.default_rng(qseq))
    boot_seed = int(bseq.generate_state(1)[0])
    estimates, seconds, notes = apply_methods(
        m, runnable_methods(task), seq, true_counts=dataset.counts
    )
    names = list(sets)
    stacked = np.concatenate([sets[q] for q in names])
    bounds = np.cumsum([0] + [sets[q].shape[0] for q in names])
    value = stacked.astype(np.float64) @ truth
    prob = float(p["prob"])
    rows: list[Row] = []
    for method, est in estimates.items():
        sec, note = seconds[method], notes[method]
        kinds = intervals.available_intervals(est)
        boot = None
        if "bootstrap" in kinds:
            boot = est.bootstrap(p["replicates"], rng=boot_seed)
            start = time.perf_counter()
            boot.sample(0, 1)  # compute (and cache) every replicate, timed
            rows.append((method, "bootstrap_seconds", np.nan, time.perf_counter() - start,
                         sec, note))  # fmt: skip
            rows.append((method, "vectorised", np.nan, float(bool(boot.info["vectorised"])),
                         sec, note))  # fmt: skip
        for kind in kinds:
            lo, hi, used = intervals.set_intervals(
                est, stacked, prob, kind, warn=False, bootstrap=boot
            )
            covered = (lo <= value) & (value <= hi)
            flagged = flagged_sets(est, stacked, used)
            for i, query in enumerate(names):
                sl = slice(bounds[i], bounds[i + 1])
                stats = {
                    "covered": covered[sl].sum(),
                    "n": sl.stop - sl.start,
                    "flagged": flagged[sl].sum(),
                    "covered_flagged": covered[sl][flagged[sl]].sum(),
                    "width": np.mean(hi[sl] - lo[sl]),
                }
                rows += [(method, f"{stat}:{used}:{query}", prob, float(v), sec, note)
                         for stat, v in stats.items()]  # fmt: skip
    return rows


def counts(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, oracle, eps, rep, method, kind, query): the counts and width."""
    sub = results[results["metric"].str.count(":") == 2]
    parts = sub["metric"].str.split(":", expand=True)
    sub = sub.assign(stat=parts[0], kind=parts[1], query=parts[2])
    keys = ["dataset", "oracle", "epsilon", "rep", "method", "kind", "query"]
    out = sub.pivot_table(index=keys, columns="stat", values="value", sort=False).reset_index()
    out.columns.name = None
    seconds = results[results["metric"] == "bootstrap_seconds"]
    seconds = seconds[["dataset", "oracle", "epsilon", "rep", "method", "value"]]
    seconds = seconds.rename(columns={"value": "bootstrap_seconds"})
    return out.merge(seconds, how="left", on=["dataset", "oracle", "epsilon", "rep", "method"])


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage (covered / n over all runs), mean width, flagged share, per cell."""
    keys = ["dataset", "oracle", "epsilon", "method", "kind", "query"]
    g = frame.groupby(keys, sort=False)
    out = g[["n", "covered", "flagged", "covered_flagged"]].sum()
    out["runs"] = g["rep"].nunique()
    out["coverage"] = out["covered"] / out["n"]
    unflagged = out["n"] - out["flagged"]
    out["coverage_unflagged"] = (out["covered"] - out["covered_flagged"]) / unflagged.where(
        unflagged > 0
    )
    out["width"] = g["width"].mean()
    out["bootstrap_seconds"] = g["bootstrap_seconds"].mean()
    return out.reset_index()


def pooled(summary: pd.DataFrame) -> pd.DataFrame:
    """Coverage per (dataset, eps, method, kind) and query group: the top 10 pooled."""
    block = summary.assign(
        query=summary["query"].where(~summary["query"].str.startswith("top"), "top10")
    )
    keys = ["dataset", "epsilon", "method", "kind", "query"]
    g = block.groupby(keys, sort=False)[["covered", "n", "flagged", "covered_flagged"]].sum()
    g["coverage"] = g["covered"] / g["n"]
    return g.reset_index()


def tables(summary: pd.DataFrame) -> str:
    """Markdown tables: coverage by method and interval kind, one table per dataset.

    Columns: random 10% and 50% sets, the top 10 items pooled, random single items
    (all, and those the API does not warn for), the mean width of the set intervals,
    and the number of runs.
    """
    parts = []
    for (dataset, eps), block in summary.groupby(["dataset", "epsilon"], sort=False):
        pool = block.assign(query=block["query"].where(~block["query"].str.startswith("top"),
                                                       "top10"))  # fmt: skip
        g = pool.groupby(["method", "kind", "query"], sort=False)[
            ["covered", "n", "flagged", "covered_flagged"]
        ].sum()
        cov = (g["covered"] / g["n"]).unstack("query")
        unflag = ((g["covered"] - g["covered_flagged"]) / (g["n"] - g["flagged"])).unstack()
        share = (g["flagged"] / g["n"]).unstack()
        width = block.groupby(["method", "kind", "query"], sort=False)["width"].mean().unstack()
        runs = block.groupby(["method", "kind"], sort=False)["runs"].max()
        table = pd.DataFrame({
            "set10": cov["set10"], "set50": cov["set50"], "top10": cov["top10"],
            "item": cov["item"], "item, not warned": unflag["item"],
            "items warned": share["item"], "sets warned": share["set10"],
            "width set10": width["set10"], "width set50": width["set50"], "runs": runs,
        }).reset_index()  # fmt: skip
        parts.append(f"### {dataset}, eps = {eps:g}\n\n{markdown_table(table)}\n")
        ranks = block[block["query"].str.startswith("top")]
        per_rank = ranks.pivot_table(index=["method", "kind"], columns="query", values="coverage",
                                     sort=False)  # fmt: skip
        per_rank = per_rank[[f"top{r}" for r in range(1, 11) if f"top{r}" in per_rank]]
        parts.append(f"Each of the top 10 items ({dataset}, eps = {eps:g}):\n\n"
                     f"{markdown_table(per_rank.reset_index())}\n")  # fmt: skip
    return "\n".join(parts)


def coverage_rows(ax, table: pd.DataFrame, prob: float, title: str) -> None:
    """Coverage of each method (a row) and interval kind (a marker) against the band.

    ``table`` has columns ``method``, ``kind`` and ``coverage``.
    """
    methods = method_order(table["method"].unique())
    ax.axvspan(prob - 0.05, prob + 0.05, color="green", alpha=0.15)
    ax.axvline(prob, color="green", lw=1)
    for kind, marker in KINDS.items():
        sub = table[table["kind"] == kind].set_index("method")
        if sub.empty:
            continue
        ys = [y for y, m in enumerate(methods) if m in sub.index]
        xs = [sub.loc[m, "coverage"] for m in methods if m in sub.index]
        ax.plot(xs, ys, marker, ls="", ms=6, mfc="none", mew=1.5, label=kind)
    ax.set_yticks(range(len(methods)), methods, fontsize=7)
    ax.set_ylim(len(methods) - 0.5, -0.5)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("coverage")
    ax.set_title(title, fontsize=8)
    ax.grid(axis="x", alpha=0.3)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Coverage per method, kind and query group against the band; summary and tables.md."""
    summary = summarise(counts(results))
    with atomic_open(folder / "tables.md") as fh:
        fh.write(tables(summary))
    table = pooled(summary)
    prob = float(results.loc[results["metric"].str.startswith("covered:"), "param"].iloc[0])
    cells = list(table.groupby(["dataset", "epsilon"], sort=False))
    n_methods = table["method"].nunique()
    fig, axes = new_figure(len(cells), len(GROUPS), width=16, row_height=1.2 + 0.3 * n_methods)
    for row, ((dataset, eps), block) in enumerate(cells):
        first = results[results["dataset"] == dataset].iloc[0]
        runs = results.loc[results["dataset"] == dataset, "rep"].nunique()
        note = dataset_note(dataset, first["n"], first["d"])
        for ax, group in zip(axes[row], GROUPS, strict=True):
            title = f"{note}; eps = {eps:g}, {first['oracle']}, {runs} runs\n{group}"
            coverage_rows(ax, block[block["query"] == group], prob, title)
    handles: dict[str, Any] = {}
    for ax in axes.flat:
        handles.update(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    fig.legend(list(handles.values()), list(handles), loc="upper right", ncol=len(handles),
               fontsize=8, title="interval kind")  # fmt: skip
    fig.suptitle(f"coverage of {prob:.0%} intervals (band: {prob - 0.05:.0%}-{prob + 0.05:.0%})",
                 x=0.3)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    save_figure(fig, folder / "figure.png")
    return summary


EXPERIMENT = Experiment(
    name="interval_coverage",
    description="coverage of 90% intervals per method and interval kind (sets, top 10, items)",
    figure="README 'Intervals and heavy hitters'",
    task=task,
    grid=Grid(
        DATASETS,
        (1.0,),
        reps=30,
        extra_methods=("oue-zero",),
        params={"queries": 100, "replicates": 200, "prob": 0.9, "bayes_reps": 10},
    ),
    quick=Grid(
        ("zipf:d=128,n=100000",),
        (1.0,),
        reps=2,
        methods=("base", "norm", "norm-sub", "norm-hyb", "power-ns", "oue-zero"),
        params={"queries": 10, "replicates": 50, "prob": 0.9, "bayes_reps": 1},
    ),
    plot=plot,
    seed=cell_seed,
    group="intervals",
    options={
        "queries": "random sets per size, and random single items",
        "replicates": "parametric bootstrap replicates",
        "prob": "nominal coverage of the intervals",
        "bayes_reps": "repetitions that run the Bayesian (MCMC) methods",
    },
)
