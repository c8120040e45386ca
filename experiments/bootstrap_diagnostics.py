"""Why bootstrap intervals of clipping methods undercover: two diagnostics on Zipf.

1. Worlds: coverage of 90% basic (``bootstrap``) and ``percentile`` intervals when the
   replicates are simulated from different worlds: the method's own estimate (``own``,
   the default), Calibrate's power-law posterior mean (``power``), and the true
   frequencies (``truth``, which no analyst has: the bootstrap's best case). Queries as
   in ``interval_coverage``: 100 random 10% and 50% sets, the top 10 items, 100 random
   items. Rows: metrics ``covered:WORLD:KIND:QUERY`` and ``n:WORLD:KIND:QUERY``.
2. Items: coverage of every single item's basic bootstrap interval (own world) against
   how many noise standard deviations above 0 the method answers it (the rule behind
   the RuntimeWarning, ``bayesldp.intervals.RELIABLE_SIGMAS``). Rows: metrics
   ``covered_z:BIN`` and ``n_z:BIN``, ``param`` the bin's lower edge.

The report, from the saved results only: ``worlds.csv`` and ``items_by_z.csv`` (the
summary, with the coverage pooled over the runs), ``tables.md`` and ``figure.png``
(coverage by world and query against the 85-95% band; coverage by answer / noise sd).

Zipf s = 1.5, d = 1024, n = 1e6, OUE, eps = 1, 10 runs. Seeding as in the first script:
repetition ``r`` is seeded with ``SeedSequence([seed, r])``, whose first two children
simulate the oracle and draw the queries; the third seeds the bootstrap replicates.

Run ``bayesldp experiment bootstrap_diagnostics``; ``--replicates`` changes B.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import intervals, metrics
from bayesldp._io import atomic_open, markdown_table, write_csv
from bayesldp.datasets import Dataset
from bayesldp.methods.registry import postprocess
from bayesldp.plotting import dataset_note, method_order, method_style, new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

METHODS = ("norm-sub", "norm-hyb", "mle", "base-pos", "power-ns")
BINS = [-np.inf, 1e-300, 1, 2, 4, 6, 8, np.inf]
LABELS = ["0", "(0, 1)", "[1, 2)", "[2, 4)", "[4, 6)", "[6, 8)", ">= 8"]
WORLDS = {"own": "o", "power": "s", "truth": "D"}
QUERIES = ("set10", "set50", "top10", "item")


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Coverage counts by world, and per-item coverage by z = answer / sd."""
    truth, d = dataset.frequencies, dataset.d
    sim, qry, bseq = seq.spawn(3)
    m = task.simulate(dataset, np.random.default_rng(sim))
    qrng = np.random.default_rng(qry)
    n_queries = min(task.params["queries"], d)
    top = np.lexsort((np.arange(d), -truth))[:10]
    items = qrng.choice(d, n_queries, replace=False)
    sets = {
        "set10": metrics.random_subsets(d, 10, n_queries, qrng),
        "set50": metrics.random_subsets(d, 50, n_queries, qrng),
        "top10": np.eye(d, dtype=bool)[top],
        "item": np.eye(d, dtype=bool)[items],
    }
    worlds = {"own": None, "power": postprocess(m, "power").frequencies, "truth": truth}
    boot_seed = int(bseq.generate_state(1)[0])
    sd = np.sqrt(m.variance())
    estimates, seconds, notes = apply_methods(m, task.methods, seq, true_counts=dataset.counts)
    rows: list[Row] = []
    for method, est in estimates.items():
        sec, note = seconds[method], notes[method]
        for world, freqs in worlds.items():
            boot = intervals.ParametricBootstrap(
                est, task.params["replicates"], boot_seed, world=freqs
            )
            for kind in ("bootstrap", "percentile"):
                for query, masks in sets.items():
                    lo, hi, _ = intervals.set_intervals(
                        est, masks, 0.9, kind, warn=False, bootstrap=boot
                    )
                    v = masks.astype(float) @ truth
                    covered = int(((lo <= v) & (v <= hi)).sum())
                    rows.append((method, f"covered:{world}:{kind}:{query}", 0.9, covered, sec,
                                 note))  # fmt: skip
                    rows.append((method, f"n:{world}:{kind}:{query}", 0.9, v.size, sec, note))
            if world == "own":
                lo, hi, _ = intervals.set_intervals(
                    est, np.eye(d, dtype=bool), 0.9, "bootstrap", warn=False, bootstrap=boot
                )
                z = est.frequencies / sd
                covered_items = (lo <= truth) & (truth <= hi)
                bins = np.asarray(pd.cut(z, BINS, right=False, labels=LABELS))
                for edge, label in zip(BINS, LABELS, strict=False):
                    inside = bins == label
                    edge = max(edge, 0.0)
                    hits = int(covered_items[inside].sum())
                    rows.append((method, f"covered_z:{label}", edge, hits, sec, note))
                    rows.append((method, f"n_z:{label}", edge, int(inside.sum()), sec, note))
    return rows


def worlds_table(results: pd.DataFrame) -> pd.DataFrame:
    """Coverage pooled over the runs, per (method, world, kind) and query."""
    sub = results[results["metric"].str.count(":") == 3]
    parts = sub["metric"].str.split(":", expand=True)
    sub = sub.assign(stat=parts[0], world=parts[1], kind=parts[2], query=parts[3])
    g = sub.pivot_table(index=["method", "world", "kind", "query"], columns="stat",
                        values="value", aggfunc="sum", sort=False)  # fmt: skip
    wide = (g["covered"] / g["n"]).unstack("query")
    return wide[[q for q in QUERIES if q in wide]].reset_index()


def items_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (method, z bin): items, covered and coverage pooled over the runs."""
    sub = results[results["metric"].str.contains("_z:")]
    parts = sub["metric"].str.split(":", n=1, expand=True)
    sub = sub.assign(stat=parts[0], z=parts[1])
    h = sub.pivot_table(index=["method", "z"], columns="stat", values="value", aggfunc="sum",
                        sort=False)  # fmt: skip
    h = h.rename(columns={"covered_z": "covered", "n_z": "n"})[["covered", "n"]]
    h["coverage"] = h["covered"] / h["n"].where(h["n"] > 0)
    h.columns.name = None
    return h.reset_index()


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Coverage by world (dots against the band) and by answer / noise sd; tables.md."""
    runs = results["rep"].nunique()
    wide = worlds_table(results)
    h = items_table(results)
    write_csv(folder / "worlds.csv", wide)
    write_csv(folder / "items_by_z.csv", h)
    by_z = h.pivot_table(index="method", columns="z", values="coverage", sort=False)
    by_z = by_z[[c for c in LABELS if c in by_z]]
    counts = h.pivot_table(index="method", columns="z", values="n", sort=False)[by_z.columns]
    with atomic_open(folder / "tables.md") as fh:
        fh.write(f"## Coverage by bootstrap world ({runs} runs)\n\n{markdown_table(wide)}\n\n")
        fh.write("## Single items: coverage of the basic bootstrap by answer / noise sd\n\n")
        fh.write(markdown_table(by_z.reset_index()) + "\n\nItems per cell:\n\n")
        fh.write(markdown_table(counts.reset_index()) + "\n")
    methods = method_order(wide["method"].unique())
    first = results.iloc[0]
    note = (f"{dataset_note(first['dataset'], first['n'], first['d'])}; eps = "
            f"{first['epsilon']:g}, {first['oracle']}, {runs} runs")  # fmt: skip
    fig, axes = new_figure(1, len(QUERIES) + 1, width=22, row_height=1.8 + 0.45 * len(methods))
    for ax, query in zip(axes[0], QUERIES, strict=False):
        ax.axvspan(0.85, 0.95, color="green", alpha=0.15)
        ax.axvline(0.9, color="green", lw=1)
        for world, marker in WORLDS.items():
            for kind, offset, fill in (("bootstrap", -0.15, None), ("percentile", 0.15, "none")):
                sub = wide[(wide["world"] == world) & (wide["kind"] == kind)]
                sub = sub.set_index("method").reindex(methods)
                ax.plot(sub[query], np.arange(len(methods)) + offset, marker, ls="", ms=6,
                        mfc=fill, label=f"{kind}, world {world}",
                        color={"own": "C0", "power": "C1", "truth": "C2"}[world])  # fmt: skip
        ax.set_yticks(range(len(methods)), methods, fontsize=8)
        ax.set_ylim(len(methods) - 0.5, -0.5)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"coverage of 90% intervals, {query}")
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].legend(fontsize=6, loc="lower left")
    ax = axes[0, -1]
    for method in methods:
        if method in by_z.index:
            ax.plot(range(by_z.shape[1]), by_z.loc[method], label=method, **method_style(method))
    ax.axhspan(0.85, 0.95, color="green", alpha=0.15)
    ax.set_xticks(range(by_z.shape[1]), by_z.columns, fontsize=7)
    ax.set_xlabel("item's answer / noise sd")
    ax.set_ylabel("coverage, basic bootstrap")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.suptitle(f"bootstrap coverage by world (filled: basic, open: percentile); {note}")
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return wide


EXPERIMENT = Experiment(
    name="bootstrap_diagnostics",
    description="why bootstrap intervals of clipping methods undercover: worlds, answer/sd",
    figure="paper/intervals.md (bootstrap warning)",
    task=task,
    grid=Grid(
        ("zipf",), (1.0,), reps=10, methods=METHODS, params={"replicates": 200, "queries": 100}
    ),
    quick=Grid(
        ("zipf:d=128,n=100000",),
        (1.0,),
        reps=2,
        methods=METHODS,
        params={"replicates": 50, "queries": 20},
    ),
    plot=plot,
    seed="rep",
    group="intervals",
    options={"replicates": "parametric bootstrap replicates", "queries": "random sets and items"},
)
