"""Accuracy and interval coverage of ``eb-npmle`` against ``oracle-bayes``, power-ns and norm-sub.

For each dataset (Zipf s = 1.5, d = 1024, n = 1e6; wordfreq, d = 42178, n = 1e6; US
cities, d = 976, n = 1.53e6), each epsilon and each repetition, one OUE measurement is
simulated and every method is applied to it:

* ``eb-npmle`` (``--n-draws`` posterior draws from ``--n-boot`` bootstrap refits), and,
  with ``--variants 1``, two variants that support claims about it:
  ``eb-npmle-gaussian`` (Gaussian likelihood with the count-dependent variance) and
  ``eb-npmle-raw-total`` (no correction of the known total noise; its tilt can be
  infeasible, recorded as ``failed``);
* ``oracle-bayes`` (the true count histogram as the prior: a reference, not a method);
* ``power-ns`` and ``norm-sub``;
* ``bayes-consistent`` (PyMC, slow) on the first ``--bayes-reps`` repetitions only.

Metrics: full-domain MSE; the same over all but the 10 largest items (``mse_rest``);
50% and 90% set-value MSE (``--queries`` random sets each, the same sets for every
method); top-10 MSE; ``seconds`` (the runner's column). For every estimate with
posterior draws (``eb-npmle``, its plug-in draws ``eb-npmle-plugin``, ``oracle-bayes``,
``bayes-consistent``): whether equal-tailed 90% intervals cover the truth, for
``--coverage-sets`` random 10% and 50% subsets and for each of the 10 largest items
(``cover90_set10``, ``cover90_set50``, ``cover90_top10``, as in ``bayes_accuracy``), and
the seconds the draws took. For ``eb-npmle``: its grid and support sizes, the KKT gap,
iterations and the tilt.

The report, from the saved results only: ``summary.csv`` (mean, sd and count of every
metric per dataset, eps and method), ``targets.csv`` (per dataset and eps: mean MSEs,
ratios of eb-npmle to each rival, paired wins, set-value ratios, the variants),
``coverage.csv``, ``summary.md`` (both as Markdown), ``figure.png`` (a dot plot of the
errors, one row per dataset and eps) and ``coverage.png`` (coverage bars against the
85-95% band).

Seeding as in the study's first script: the measurement of (dataset, eps, rep) comes
from the first child of ``SeedSequence(seed, spawn_key=(crc32(dataset), round(1000 *
eps), rep))``, the query sets from the second.

Run ``bayesldp experiment eb_accuracy``.
"""

from __future__ import annotations

import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp import empirical_bayes, intervals, metrics
from bayesldp._io import atomic_open, markdown_table, write_csv
from bayesldp.datasets import Dataset
from bayesldp.experiments.interval_coverage import runnable_methods
from bayesldp.methods.registry import parse_method
from bayesldp.plotting import dataset_note, method_order, method_style, new_figure, save_figure
from bayesldp.runner import Config, Experiment, Grid, Row, Task, apply_methods
from bayesldp.runner._seeding import method_seed

METHODS = ("eb-npmle", "oracle-bayes", "power-ns", "norm-sub", "bayes-consistent")
#: The rivals eb-npmle is compared with in targets.csv.
RIVALS = ("oracle-bayes", "power-ns", "norm-sub", "bayes-consistent")
VARIANTS = ("eb-npmle-gaussian", "eb-npmle-raw-total")
COVERAGE = ("cover90_set10", "cover90_set50", "cover90_top10")
ERRORS = (
    ("mse", "full-domain MSE"),
    ("set_mse_50", "50% set MSE"),
    ("set_mse_90", "90% set MSE"),
    ("top10_mse", "top-10 MSE"),
)
INFO = ("grid_size", "support_size", "tilt_shift_sigma", "gap", "iterations")


def cell_seed(task: Task) -> np.random.SeedSequence:
    """``SeedSequence(seed, spawn_key=(crc32(dataset), round(1000 eps), rep))``."""
    key = (zlib.crc32(task.dataset.encode()), round(task.epsilon * 1000), task.rep)
    return np.random.SeedSequence(task.seed, spawn_key=key)


def coverage(est, truth: np.ndarray, masks10, masks50, top, prob: float = 0.9) -> dict:
    """Share of equal-tailed posterior intervals covering the truth, per query type."""
    d = truth.size
    out = {}
    for name, masks in (("cover90_set10", masks10), ("cover90_set50", masks50),
                        ("cover90_top10", np.eye(d, dtype=bool)[top])):  # fmt: skip
        lo, hi, _ = intervals.set_intervals(est, masks, prob, "posterior", warn=False)
        value = masks.astype(np.float64) @ truth
        out[name] = float(np.mean((lo <= value) & (value <= hi)))
    return out


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition of one cell: errors, coverage and eb-npmle's diagnostics."""
    p = task.params
    truth, d = dataset.frequencies, dataset.d
    m_seq, q_seq = seq.spawn(2)
    m = task.simulate(dataset, np.random.default_rng(m_seq))
    query_seed = int(np.random.default_rng(q_seq).integers(2**62))
    top = np.lexsort((np.arange(d), -truth))[:10]
    rest = np.setdiff1d(np.arange(d), top)
    options = {}
    for spec in task.methods:
        name = parse_method(spec)[0].name
        if name == "eb-npmle":
            options[spec] = {"n_draws": p["n_draws"], "n_boot": p["n_boot"]}
        elif name == "oracle-bayes":
            options[spec] = {"n_draws": p["n_draws"]}
    estimates, seconds, notes = apply_methods(
        m, runnable_methods(task), seq, options=options, true_counts=dataset.counts
    )

    def rng(name: str) -> np.random.Generator:
        return np.random.default_rng(method_seed(seq, name))

    extra: dict = {}
    if "eb-npmle" in estimates and p["variants"]:
        settings: dict[str, dict[str, Any]] = {
            "eb-npmle-gaussian": {"likelihood": "gaussian"},
            "eb-npmle-raw-total": {"correct_total": False},
        }
        for variant, kwargs in settings.items():
            start = time.perf_counter()
            try:
                extra[variant] = empirical_bayes.eb_npmle(
                    m, uncertainty="plug-in", rng=rng(variant), **kwargs
                )
            except RuntimeError as err:  # the tilt to the total can be infeasible
                extra[variant] = err
            seconds[variant], notes[variant] = time.perf_counter() - start, ""
    rows: list[Row] = []
    if p["coverage_sets"]:
        crng = np.random.default_rng(query_seed + 1)
        masks10 = metrics.random_subsets(d, 10, p["coverage_sets"], crng)
        masks50 = metrics.random_subsets(d, 50, p["coverage_sets"], crng)
    plugin: dict[str, float] = {}
    for method, est in {**estimates, **extra}.items():
        values: dict[str, float] = {}
        if method in VARIANTS:
            values["failed"] = float(isinstance(est, RuntimeError))
            if values["failed"]:
                rows.append((method, "failed", np.nan, 1.0, seconds[method], str(est)))
                continue
        f = est.frequencies
        values["mse"] = metrics.mse(truth, est)
        values["mse_rest"] = np.mean((f[rest] - truth[rest]) ** 2) * rest.size / d
        values["top10_mse"] = metrics.topk_mse(truth, est, 10)
        for pct in (50, 90):
            qrng = np.random.default_rng(query_seed)
            values[f"set_mse_{pct}"] = metrics.set_value_mse(truth, est, pct, qrng, p["queries"])
        has_draws = "posterior" in intervals.available_intervals(est)
        if p["coverage_sets"] and has_draws and method not in VARIANTS:
            start = time.perf_counter()
            values.update(coverage(est, truth, masks10, masks50, top))
            values["seconds_draws"] = time.perf_counter() - start
            if method == "eb-npmle":
                plug = empirical_bayes.eb_npmle(
                    m, uncertainty="plug-in", n_draws=p["n_draws"], rng=rng("eb-npmle-plugin")
                )
                plugin = coverage(plug, truth, masks10, masks50, top)
        if method == "eb-npmle":
            values.update({key: est.info[key] for key in INFO})
        rows += [(method, k, np.nan, float(v), seconds[method], notes[method])
                 for k, v in values.items()]  # fmt: skip
        if plugin:
            rows += [("eb-npmle-plugin", k, np.nan, v, seconds[method], notes[method])
                     for k, v in plugin.items()]  # fmt: skip
            plugin = {}
    return rows


def targets_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, eps): mean MSEs, eb-npmle's ratios and paired wins against each rival."""
    wide = results.pivot_table(
        index=["dataset", "epsilon", "rep"], columns=["method", "metric"], values="value"
    )
    rows: list[dict[str, Any]] = []
    if ("eb-npmle", "mse") not in wide:
        return pd.DataFrame(rows)
    for (name, eps), cell in wide.groupby(level=[0, 1], sort=False):
        row = {"dataset": name, "epsilon": eps, "reps": len(cell)}
        ebm = cell[("eb-npmle", "mse")]
        row["eb-npmle"] = ebm.mean()
        for other in RIVALS:
            if (other, "mse") not in cell or cell[(other, "mse")].isna().all():
                continue
            col = cell[(other, "mse")]
            both = col.notna()
            row[other] = col.mean()
            row[f"eb/{other}"] = ebm[both].mean() / col[both].mean()
            row[f"eb lower ({other})"] = f"{int((ebm[both] < col[both]).sum())}/{int(both.sum())}"
        if ("oracle-bayes", "mse_rest") in cell:
            row["eb/oracle, all but top 10"] = (
                cell[("eb-npmle", "mse_rest")].mean() / cell[("oracle-bayes", "mse_rest")].mean()
            )
        for pct in (50, 90):
            if ("power-ns", f"set_mse_{pct}") in cell:
                a, b = cell[("eb-npmle", f"set_mse_{pct}")], cell[("power-ns", f"set_mse_{pct}")]
                row[f"set {pct}%: eb/power-ns"] = a.mean() / b.mean()
        for variant in VARIANTS:
            if (variant, "mse") in cell:
                ok = cell[(variant, "mse")].notna()
                row[f"{variant}/eb"] = cell[(variant, "mse")][ok].mean() / ebm[ok].mean()
            if (variant, "failed") in cell:
                row[f"{variant} failed"] = int(cell[(variant, "failed")].fillna(0).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def summary_markdown(targets: pd.DataFrame, cover: pd.DataFrame) -> str:
    """Format the targets (3 digits, ratios 3 decimals) and the coverage table as Markdown."""
    table = targets.copy()
    for col in table.columns:
        if table[col].dtype.kind == "f" and col != "epsilon":
            is_ratio = "/" in col
            table[col] = table[col].map(lambda v, r=is_ratio: f"{v:.3f}" if r else f"{v:.3g}")
    return (
        "## Full-domain MSE (means over repetitions) and ratios\n\n"
        f"{markdown_table(table)}\n\n## Coverage of 90% intervals\n\n{markdown_table(cover)}\n"
    )


def cells_of(results: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Return the (dataset, eps) cells in the order they come."""
    return list(results.groupby(["dataset", "epsilon"], sort=False))


def title_of(cell: pd.DataFrame) -> str:
    """Return a cell's dataset, eps, oracle and number of runs."""
    first = cell.iloc[0]
    note = dataset_note(first["dataset"], first["n"], first["d"])
    return f"{note}\neps = {first['epsilon']:g}, {first['oracle']}, {cell['rep'].nunique()} runs"


def dot_rows(results: pd.DataFrame, path: Path) -> None:
    """Draw the errors as a dot plot: a row per (dataset, eps), a panel per error."""
    from matplotlib.ticker import NullFormatter

    cells = cells_of(results[results["metric"].isin([m for m, _ in ERRORS])])
    methods = method_order(results.loc[results["metric"] == "mse", "method"].unique())
    fig, axes = new_figure(len(cells), len(ERRORS), width=18, row_height=1.3 + 0.3 * len(methods))
    for row, (_, cell) in enumerate(cells):
        for ax, (metric, label) in zip(axes[row], ERRORS, strict=True):
            sub = cell[cell["metric"] == metric]
            means = sub.groupby("method")["value"].mean()
            for y, method in enumerate(methods):
                values = sub.loc[sub["method"] == method, "value"]
                if values.empty:
                    continue
                color = method_style(method)["color"]
                edge = "black" if method == means.idxmin() else color
                ax.plot([values.min(), values.max()], [y, y], color=color, lw=1, alpha=0.6)
                ax.plot(values, np.full(len(values), y), "|", color=color, ms=8, alpha=0.8)
                ax.plot(values.mean(), y, "o", color=color, mec=edge, mew=1.8, ms=7)
            ax.set_yticks(range(len(methods)), methods, fontsize=7)
            ax.set_ylim(len(methods) - 0.5, -0.5)
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(f"{label} (lower is better)")
            ax.set_title(title_of(cell), fontsize=8)
            ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle("| one run, o mean (black edge: lowest), line: range over the runs", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


def coverage_bars(results: pd.DataFrame, path: Path) -> None:
    """Coverage per method and query type, a panel per (dataset, eps), with the 85-95% band."""
    cells = cells_of(results[results["metric"].isin(COVERAGE)])
    cols = min(3, len(cells))
    rows = -(-len(cells) // cols)
    fig, axes = new_figure(rows, cols, width=5.5 * cols, row_height=3.6)
    for ax, (_, cell) in zip(axes.flat, cells, strict=False):
        table = cell.pivot_table(index="method", columns="metric", values="value")
        table = table.reindex(method_order(table.index))
        width = 0.8 / len(COVERAGE)
        for i, column in enumerate(COVERAGE):
            if column in table:
                x = np.arange(len(table)) + i * width
                ax.bar(x, table[column], width, label=column)
        ax.axhspan(0.85, 0.95, color="green", alpha=0.15, label="target 85-95%")
        ax.axhline(0.9, color="green", lw=1)
        ax.set_xticks(np.arange(len(table)) + width, table.index, fontsize=7, rotation=15)
        ax.set_ylim(0, 1)
        ax.set_ylabel("coverage of 90% intervals")
        ax.set_title(title_of(cell), fontsize=8)
    for ax in list(axes.flat)[len(cells) :]:
        ax.set_visible(False)
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    save_figure(fig, path)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Summary, targets, coverage (tables and bars), summary.md and the errors' dot plot."""
    keys = ["dataset", "epsilon", "method", "metric"]
    summary = results.groupby(keys, sort=False)["value"].agg(["mean", "std", "count"])
    summary = summary.reset_index()
    targets = targets_table(results)
    write_csv(folder / "targets.csv", targets)
    cov = summary[summary["metric"].isin(COVERAGE)]
    cover = cov.pivot_table(
        index=["dataset", "epsilon", "method"], columns="metric", values="mean", sort=False
    ).reset_index()
    cover.columns.name = None
    write_csv(folder / "coverage.csv", cover)
    with atomic_open(folder / "summary.md") as fh:
        fh.write(summary_markdown(targets, cover))
    if not cover.empty:
        coverage_bars(results, folder / "coverage.png")
    dot_rows(results, folder / "figure.png")
    return summary


def check(config: Config) -> None:
    """Methods are registry specs; the variants are options of eb-npmle (``--variants``)."""
    if config.params["n_boot"] < 1 or config.params["n_draws"] < 2:
        raise ValueError("eb_accuracy needs n_boot >= 1 and n_draws >= 2")


EXPERIMENT = Experiment(
    name="eb_accuracy",
    description="eb-npmle vs oracle-bayes, power-ns, norm-sub, bayes-consistent: MSE, coverage",
    figure="empirical Bayes study (eb-npmle)",
    task=task,
    grid=Grid(
        ("zipf", "wordfreq", "us_cities"),
        (0.5, 1.0, 2.0),
        reps=30,
        methods=METHODS,
        params={
            "queries": 100,
            "coverage_sets": 50,
            "n_draws": 1000,
            "n_boot": 40,
            "bayes_reps": 10,
            "variants": 1,
        },
    ),
    quick=Grid(
        ("zipf:d=128,n=100000",),
        (1.0,),
        reps=2,
        methods=METHODS[:4],
        params={
            "queries": 10,
            "coverage_sets": 10,
            "n_draws": 200,
            "n_boot": 5,
            "bayes_reps": 0,
            "variants": 1,
        },
    ),
    plot=plot,
    seed=cell_seed,
    group="eb",
    options={
        "queries": "random sets per set size for the set-value MSE",
        "coverage_sets": "random 10%/50% sets for coverage (0 skips coverage)",
        "n_draws": "posterior draws of eb-npmle and oracle-bayes",
        "n_boot": "bootstrap refits behind eb-npmle's draws",
        "bayes_reps": "repetitions that run the Bayesian (MCMC) methods",
        "variants": "1: also eb-npmle-gaussian and eb-npmle-raw-total; 0: not",
    },
    check=check,
)
