"""Accuracy and interval calibration of the Bayesian methods over repeated runs.

Zipf s = 1.5, d = 1024, n = 1e6, epsilon = 1, OUE (the papers' setting). Each
repetition simulates the oracle once and applies every method; it records full-domain
MSE, 50% and 90% set-value MSE, top-10 MSE, and, for methods with posterior draws,
whether 90% credible intervals cover the truth for random 10% and 50% subsets and for
each of the top-10 values (``cover90_*``), with the largest r_hat and the sampling time
(and, for models fitted by :func:`bayesldp.models.fit`, the sampler that ran, as a
metric ``sampler:<name>`` of value 1).
On a dataset with fixed groupings (US cities: state, region, division) it also records
the MSE over each grouping's sets (``fixed_mse:<grouping>``), and methods that take
``groups`` (``bayes-hier``) get the main one (states).

The report, from the saved results only: ``summary.csv`` (mean of every metric per
method), ``targets.csv`` (the targets of paper/bayes.md: means, paired wins, met or
not), ``coverage.csv`` and ``coverage.png`` (coverage per method and query type against
the 85-95% band) and ``figure.png`` (a dot plot of the errors over the repetitions).

Seeding as in the first version of this study: repetition ``r`` simulates with
``default_rng([seed, r])`` and draws its query sets from the same generator.

Run ``bayesldp experiment bayes_accuracy``;
``--reps``, ``--draws``, ``--tune`` and ``--queries`` change the setting.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp import metrics
from bayesldp._io import write_csv
from bayesldp.datasets import Dataset
from bayesldp.experiments.fixed_set import main_grouping
from bayesldp.methods.registry import method_names, parse_method
from bayesldp.plotting import dot_plot, new_figure, save_figure
from bayesldp.runner import Config, Experiment, Grid, Row, Task, apply_methods

#: The comparison of paper/bayes.md: the best NumPy methods and the two Bayesian models.
METHODS = ("norm-sub", "norm-hyb", "power", "power-ns", "bayes-power", "bayes-consistent")
#: Coverage of 90% credible intervals, per query type.
COVERAGE = ("cover90_set10", "cover90_set50", "cover90_top10")
ERRORS = (
    ("mse", "full-domain MSE"),
    ("set_mse_50", "50% set MSE"),
    ("set_mse_90", "90% set MSE"),
    ("top10_mse", "top-10 MSE"),
)


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: every method's errors, and its interval coverage if Bayesian."""
    p = task.params
    truth = dataset.frequencies
    rng = np.random.default_rng(seq)
    m = task.simulate(dataset, rng)
    query_seed = int(rng.integers(2**31))
    top10 = np.argsort(-truth, kind="stable")[:10]
    options = method_options(task.methods, dataset, {"draws": p["draws"], "tune": p["tune"]})
    estimates, seconds, notes = apply_methods(
        m, task.methods, seq, options=options, true_counts=dataset.counts
    )
    rows: list[Row] = []
    for method, est in estimates.items():
        values = {
            "mse": metrics.mse(truth, est),
            "set_mse_50": metrics.set_value_mse(
                truth, est, 50, np.random.default_rng(query_seed), p["queries"]
            ),
            "set_mse_90": metrics.set_value_mse(
                truth, est, 90, np.random.default_rng(query_seed), p["queries"]
            ),
            "top10_mse": metrics.topk_mse(truth, est, 10),
        }
        for grouping, groups in sorted(dataset.groups.items()):
            sets = [np.asarray(idx) for idx in groups.values() if len(idx)]
            values[f"fixed_mse:{grouping}"] = float(
                np.mean([(est.subset(idx) - truth[idx].sum()) ** 2 for idx in sets])
            )
        if est.uncertainty is not None:
            qrng = np.random.default_rng(query_seed + 1)
            for pct in (10, 50):
                masks = metrics.random_subsets(dataset.d, pct, p["queries"], qrng)
                hits = [
                    lo <= truth[mk].sum() <= hi
                    for mk in masks
                    for lo, hi in [est.interval(mk, 0.9)]
                ]
                values[f"cover90_set{pct}"] = float(np.mean(hits))
            hits = [lo <= truth[i] <= hi for i in top10 for lo, hi in [est.interval([i], 0.9)]]
            values["cover90_top10"] = float(np.mean(hits))
            if "r_hat" in est.info:
                values["r_hat_max"] = max(est.info["r_hat"].values())
            if "sampler" in est.info:  # which sampler "auto" took (bayesldp.models.fit)
                values[f"sampler:{est.info['sampler']}"] = 1.0
        rows += [
            (method, metric, np.nan, float(v), seconds[method], notes[method])
            for metric, v in values.items()
        ]
    return rows


def method_options(specs, dataset, sampler: dict) -> dict[str, dict]:
    """Return the options per method spec: sampler settings and the dataset's grouping.

    The Bayesian methods get ``sampler``; methods that take ``groups`` (``bayes-hier``)
    get the dataset's main grouping (:func:`main_grouping`: states for US cities).
    """
    options: dict[str, dict] = {}
    for spec in specs:
        method, backend = parse_method(spec)
        opts = dict(sampler) if method.bayesian else {}
        if dataset.groups and method.accepts("groups", backend):
            opts["groups"] = dataset.groups[main_grouping(dataset.groups)]
        options[spec] = opts
    return options


def check(config: Config) -> None:
    """One setting (dataset, eps, oracle): the report pairs methods by repetition."""
    if len(config.datasets) * len(config.epsilons) * len(config.oracles) != 1:
        raise ValueError("bayes_accuracy runs one dataset, eps and oracle")


def check_targets(frame: pd.DataFrame) -> pd.DataFrame:
    """Tabulate the targets of paper/bayes.md, one row each: means, paired wins, met or not.

    bayes-consistent against the better (lower mean) of norm-hyb and power-ns on
    full-domain, 50% and 90% set-value MSE; bayes-power against power on full-domain
    MSE; and 90% interval coverage of each Bayesian method within 85-95%.
    """
    wide = frame.pivot_table(index="rep", columns=["method", "metric"], values="value")
    methods = set(wide.columns.get_level_values(0))
    rows = []

    def compare(ours: str, rivals: list[str], metric: str) -> None:
        rivals = [r for r in rivals if r in methods]
        if ours not in methods or not rivals:
            return
        best = min(rivals, key=lambda r: wide[(r, metric)].mean())
        a, b = wide[(ours, metric)], wide[(best, metric)]
        rows.append({"target": f"{ours} <= {best} on {metric}", "ours": a.mean(),
                     "theirs": b.mean(), "ratio": a.mean() / b.mean(),
                     "paired_wins": int((a <= b).sum()), "runs": int(a.notna().sum()),
                     "met": bool(a.mean() <= b.mean())})  # fmt: skip

    for metric in ("mse", "set_mse_50", "set_mse_90"):
        compare("bayes-consistent", ["norm-hyb", "power-ns"], metric)
    compare("bayes-power", ["power"], "mse")
    for method in sorted(methods & set(method_names(bayesian=True))):
        for column in COVERAGE:
            if (method, column) in wide:
                value = wide[(method, column)].mean()
                rows.append({"target": f"{method} {column} in [0.85, 0.95]", "ours": value,
                             "runs": int(wide[(method, column)].notna().sum()),
                             "met": bool(0.85 <= value <= 0.95)})  # fmt: skip
    return pd.DataFrame(rows)


def plot_coverage(table: pd.DataFrame, path: Path) -> None:
    """Bar chart of coverage per method and query type, with the 85-95% band."""
    fig, axes = new_figure(1, 1, width=7, row_height=4)
    ax = axes[0, 0]
    width = 0.8 / len(COVERAGE)
    for i, column in enumerate(COVERAGE):
        ax.bar([x + i * width for x in range(len(table))], table[column], width, label=column)
    ax.axhspan(0.85, 0.95, color="green", alpha=0.15, label="target 85-95%")
    ax.axhline(0.9, color="green", lw=1)
    ax.set_xticks([x + width for x in range(len(table))], table["method"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("coverage of 90% intervals")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Summary, targets, coverage table and plot, and the dot plot of the errors."""
    summary = results.pivot_table(index="method", columns="metric", values="value")
    summary = summary.reindex(list(dict.fromkeys(results["method"]))).reset_index()
    targets = check_targets(results)
    if not targets.empty:
        write_csv(folder / "targets.csv", targets)
    if set(COVERAGE) <= set(results["metric"]):
        cover = results[results["metric"].isin(COVERAGE)]
        table = cover.pivot_table(index="method", columns="metric", values="value").reset_index()
        write_csv(folder / "coverage.csv", table)
        plot_coverage(table, folder / "coverage.png")
    first = results.iloc[0]
    title = (
        f"{first['dataset']} (n = {first['n']:,}, d = {first['d']:,}), eps = "
        f"{first['epsilon']:g}, {first['oracle']}, {results['rep'].nunique()} repetitions"
    )
    dot_plot(results, ERRORS, folder / "figure.png", title=title)
    return summary


EXPERIMENT = Experiment(
    name="bayes_accuracy",
    description="accuracy and 90%-interval coverage of the Bayesian methods (paper/bayes.md)",
    figure="paper/bayes.md",
    task=task,
    grid=Grid(
        ("zipf",),
        (1.0,),
        reps=30,
        methods=METHODS,
        params={"queries": 100, "draws": 1000, "tune": 1000},
    ),
    quick=Grid(
        ("zipf:d=128,n=100000",),
        (1.0,),
        reps=2,
        methods=METHODS,
        params={"queries": 10, "draws": 100, "tune": 100},
    ),
    plot=plot,
    seed="rep",
    group="bayes",
    options={
        "queries": "random subsets per set size",
        "draws": "NUTS draws per chain",
        "tune": "NUTS tuning steps per chain",
    },
    check=check,
)
