"""Family-wise error rate and recall of the heavy-hitter rules, over repeated runs.

For each dataset, epsilon and repetition the oracle (OUE) is simulated once and every
method is applied to it. Rules (the ``method`` column of the results):

- ``holm``: :meth:`bayesldp.Estimate.heavy_hitters` for a frequentist method (Holm's
  step-down procedure on one-sided normal tests of the raw estimates, level ``alpha``);
- ``bonferroni``: the same tests at ``alpha / d`` each (RAPPOR's decoder);
- ``METHOD`` (``METHOD >= t`` in the tables): the plain rule of the papers, an item is
  heavy when the method's estimate is at least the threshold (``base`` is OUE,
  ``oue-zero`` is Calibrate's OUE-Zero, ``power`` is OUE-Calibrate);
- ``posterior:METHOD`` for methods with posterior draws (``--bayes``, ``eb-npmle``):
  probability of exceeding the threshold above ``1 - alpha``. Bayesian (MCMC) methods
  run on the first ``--bayes-reps`` repetitions only.

Each rule is scored at every threshold (``param``) with
:func:`bayesldp.metrics.heavy_hitters` (precision, recall, F; true heavy hitters are the
items with frequency at least the threshold) and by whether it declared any item whose
frequency is at most the threshold (``family_error``; its mean over the runs is the
FWER). ``false_positives`` counts such items, ``at_threshold`` the items exactly at it.

The report, from the saved results only: ``summary.csv`` (FWER, mean precision, recall
and F per dataset, epsilon, threshold and rule), ``tables.md`` (one Markdown table per
dataset and epsilon) and ``figure.png`` (FWER and recall against the threshold, one row
per dataset and epsilon, with the level alpha).

Seeding as in the study's first script: the cell (dataset, eps, rep) is seeded with
``SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``, whose first child
simulates the oracle.

Run ``bayesldp experiment heavy_hitter_fwer``; ``--alpha`` and ``--bayes-reps`` change the
setting.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp._io import atomic_open, markdown_table
from bayesldp.datasets import Dataset
from bayesldp.experiments.interval_coverage import cell_seed, runnable_methods
from bayesldp.methods.registry import postprocess
from bayesldp.plotting import dataset_note, method_style, new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

#: The first script's methods: OUE, Calibrate's two, and the papers' best projections.
METHODS = ("base", "oue-zero", "power", "power-ns", "norm-sub", "norm-hyb", "mle")
THRESHOLDS = (0.001, 0.002, 0.005, 0.01)
#: The rules with a guaranteed family-wise error rate, drawn in black and grey.
TESTS = {"holm": {"color": "black", "marker": "o"}, "bonferroni": {"color": "grey", "marker": "x"}}


def score(truth: np.ndarray, declared: np.ndarray, threshold: float) -> dict[str, float]:
    """Precision, recall, F (metrics.heavy_hitters) and family-wise errors of a declared set."""
    predicted = np.zeros(truth.size)
    predicted[declared] = 1.0  # at or above any threshold in (0, 1]
    s = metrics.heavy_hitters(truth, predicted, threshold)
    false = int(np.sum(truth[declared] <= threshold))
    return {"precision": s.precision, "recall": s.recall, "f_score": s.f_score,
            "n_true": s.n_true, "n_predicted": s.n_predicted, "false_positives": false,
            "family_error": int(false > 0)}  # fmt: skip


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: every rule at every threshold."""
    p = task.params
    truth = dataset.frequencies
    sim, _ = seq.spawn(2)  # the first script's (simulation, fit) streams
    m = task.simulate(dataset, np.random.default_rng(sim))
    methods = runnable_methods(task)
    estimates, seconds, notes = apply_methods(m, methods, seq, true_counts=dataset.counts)
    alpha = float(p["alpha"])
    rows: list[Row] = []

    def add(rule: str, t: float, declared, sec: float = np.nan, note: str = "", test=True):
        values = {**score(truth, declared, t), "at_threshold": int(np.sum(truth == t))}
        if test:
            values["alpha"] = alpha
        rows.extend((rule, k, float(t), float(v), sec, note) for k, v in values.items())

    base = estimates["base"] if "base" in estimates else postprocess(m, "base")
    for t in p["thresholds"]:
        start = time.perf_counter()
        hh = base.heavy_hitters(t, alpha)
        add("holm", t, hh.indices, time.perf_counter() - start)
        add("bonferroni", t, np.flatnonzero(hh.p_values <= alpha / dataset.d))
    for method, est in estimates.items():
        for t in p["thresholds"]:
            declared = np.flatnonzero(est.frequencies >= t)
            add(method, t, declared, seconds[method], notes[method], test=False)
        if est.uncertainty is None:
            continue
        for t in p["thresholds"]:
            hh = est.heavy_hitters(t, alpha)
            if hh.rule == "posterior":
                add(f"posterior:{method}", t, hh.indices, seconds[method], notes[method])
    return rows


def wide(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, oracle, eps, rep, threshold, rule), one column per metric."""
    keys = ["dataset", "oracle", "epsilon", "rep", "param", "method"]
    out = results.pivot_table(index=keys, columns="metric", values="value", sort=False)
    out = out.reset_index().rename(columns={"param": "threshold", "method": "rule"})
    out.columns.name = None
    return out


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """FWER (share of runs with a family-wise error), mean precision, recall and F."""
    keys = ["dataset", "oracle", "epsilon", "threshold", "rule"]
    g = frame.groupby(keys, sort=False)
    out = g.agg(runs=("rep", "nunique"), fwer=("family_error", "mean"),
                precision=("precision", "mean"), recall=("recall", "mean"),
                f_score=("f_score", "mean"), n_true=("n_true", "mean"),
                n_predicted=("n_predicted", "mean"),
                false_positives=("false_positives", "mean"))  # fmt: skip
    return out.reset_index()


def rule_label(rule: str) -> str:
    """``holm``, ``bonferroni``, ``posterior:METHOD`` as they are; ``METHOD >= t``."""
    return rule if rule in TESTS or rule.startswith("posterior:") else f"{rule} >= t"


def tables(summary: pd.DataFrame) -> str:
    """Format Markdown tables, one per dataset and epsilon.

    Each table gives each rule's FWER / recall / precision / F at every threshold.
    """
    parts = []
    for (dataset, eps), block in summary.groupby(["dataset", "epsilon"], sort=False):
        cells = block.assign(rule=block["rule"].map(rule_label), cell=[
            f"{r.fwer:.2f} / {r.recall:.2f} / {r.precision:.2f} / {r.f_score:.2f}"
            for r in block.itertuples()
        ])  # fmt: skip
        table = cells.pivot_table(index="rule", columns="threshold", values="cell",
                                  aggfunc="first", sort=False)  # fmt: skip
        table.columns = [f"t = {c:g}" for c in table.columns]
        runs = int(block["runs"].min())
        true = block.groupby("threshold")["n_true"].first()
        note = ", ".join(f"{n:g} at t = {t:g}" for t, n in true.items())
        parts.append(f"### {dataset}, eps = {eps:g} ({runs} runs; true heavy hitters: {note})"
                     f"\n\nFWER / recall / precision / F\n\n"
                     f"{markdown_table(table.reset_index())}\n")  # fmt: skip
    return "\n".join(parts)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """FWER and recall against the threshold per rule; summary.csv and tables.md."""
    frame = wide(results)
    summary = summarise(frame)
    with atomic_open(folder / "tables.md") as fh:
        fh.write(tables(summary))
    alpha = results.loc[results["metric"] == "alpha", "value"]
    cells = list(summary.groupby(["dataset", "epsilon"], sort=False))
    fig, axes = new_figure(len(cells), 2, width=11, row_height=3.6)
    for row, ((dataset, eps), block) in enumerate(cells):
        first = results[results["dataset"] == dataset].iloc[0]
        for ax, column, label in ((axes[row, 0], "fwer", "FWER"),
                                  (axes[row, 1], "recall", "recall")):  # fmt: skip
            for rule, g in block.groupby("rule", sort=False):
                style = dict(method_style(rule), **TESTS.get(rule, {}))
                ax.plot(g["threshold"], g[column], label=rule_label(rule), **style)
            if column == "fwer" and len(alpha):
                ax.axhline(alpha.iloc[0], color="green", lw=1, ls="--",
                           label=f"alpha = {alpha.iloc[0]:g}")  # fmt: skip
            ax.set_xscale("log")
            ax.set_ylim(-0.03, 1.03)
            ax.set_xlabel("threshold t")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            runs = int(block["runs"].min())
            ax.set_title(f"{dataset_note(dataset, first['n'], first['d'])}\n"
                         f"eps = {eps:g}, {first['oracle']}, {runs} runs", fontsize=8)  # fmt: skip
        axes[row, 1].legend(fontsize=7, loc="lower right", ncol=2)
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return summary


EXPERIMENT = Experiment(
    name="heavy_hitter_fwer",
    description="FWER, recall and precision of Holm heavy hitters vs thresholding rules",
    figure="paper/intervals.md",
    task=task,
    grid=Grid(
        ("zipf", "wordfreq"),
        (1.0, 4.0),
        reps=30,
        methods=METHODS,
        params={"thresholds": THRESHOLDS, "alpha": 0.05, "bayes_reps": 10},
    ),
    quick=Grid(
        ("zipf:d=128,n=100000",),
        (1.0, 4.0),
        reps=2,
        methods=METHODS,
        params={"thresholds": THRESHOLDS, "alpha": 0.05, "bayes_reps": 1},
    ),
    plot=plot,
    seed=cell_seed,
    group="intervals",
    options={
        "alpha": "family-wise error level of the tests",
        "bayes_reps": "repetitions that run the Bayesian (MCMC) methods",
    },
)
