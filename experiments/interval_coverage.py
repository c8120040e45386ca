"""Coverage of every method's default 90% interval, over repeated simulated runs (issue 36).

For each dataset, epsilon and repetition the oracle (OUE by default) is simulated once
and every method is applied to the same measurement. Each method's default interval
(``Estimate.interval(..., method=None)``; ``--kinds`` adds other kinds) is asked for
every query, and the study records how many contain the true frequency of the set.

Queries chosen independently of the data (the promise an interval makes), drawn from
the cell's own seed, the same for every method:

- ``item``: ``--items`` items drawn uniformly from the domain;
- ``set10``, ``set50``: ``--sets`` random sets of 10% and 50% of the domain
  (:func:`bayesldp.metrics.random_subsets`);
- ``group:NAME``: every set of a fixed grouping, the dataset's own where it has them
  (us_cities: ``state``, ``division``, ``region``), else ``block50`` (50 contiguous
  blocks of item indices) and ``random50`` (a fixed random partition into 50 sets,
  :func:`bayesldp.experiments.fixed_set.synthetic_groups`).

A different promise, measured and reported apart: ``top10_est``, each of the 10 items
the method itself ranks highest (its published top 10, chosen from the data). An
interval made for a set named in advance does not promise coverage for items selected
because their estimates are large; the top 10 by the truth is not measured.

Rows: metric ``STAT:KIND:QUERY`` with ``STAT`` one of ``covered``, ``n`` (counts),
``outside`` (intervals whose note says the method's own answer lies outside) and
``width`` (mean width); ``param`` is the nominal coverage. Bayesian (MCMC) methods run
on the first ``--bayes-reps`` repetitions only.

The report, from the saved results only: ``summary.csv`` (per dataset, eps, method,
kind and query: coverage over every (run, query) pair, its Monte Carlo standard error
from the spread of the per-run coverages, mean width, share with the answer outside),
``tables.md`` (every cell, and the cells outside the 85-95% band) and ``figure.png``
(coverage per method and query against the band).

Seeding as in the study's first script: the cell (dataset, eps, rep) is seeded with
``SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``, whose children simulate
the oracle and draw the queries.

Run ``bayesldp experiment interval_coverage`` (every method of the default set and
``eb-npmle``, zipf, us_cities and wordfreq, eps 0.5, 1 and 2, 30 runs); the Bayesian
models on a reduced grid with e.g. ``--methods bayes-power,bayes-consistent --datasets
"zipf;us_cities" --epsilon 1 --reps 10``.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp import intervals, metrics
from bayesldp._io import atomic_open, markdown_table
from bayesldp.datasets import Dataset
from bayesldp.experiments.fixed_set import synthetic_groups
from bayesldp.methods.registry import parse_method
from bayesldp.plotting import dataset_note, method_order, new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

DATASETS = ("zipf", "us_cities", "wordfreq")
EPSILONS = (0.5, 1.0, 2.0)
#: Queries chosen independently of the data, in table order (``group:*`` after them).
INDEPENDENT = ("item", "set10", "set50")
#: The data-selected query: the method's own top 10 (a different promise).
SELECTED = "top10_est"
#: Markers of the query types in the figure.
MARKERS = {"item": "o", "set10": "s", "set50": "^", "group": "D", SELECTED: "x"}
STATS = ("covered", "n", "outside", "width")
#: Half-width of the acceptance band around the nominal coverage.
BAND = 0.05


def cell_seed(task: Task) -> np.random.SeedSequence:
    """``SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``: the first scripts' rule."""
    return np.random.SeedSequence(
        [task.seed, zlib.crc32(task.dataset.encode()), round(1000 * task.epsilon), task.rep]
    )


def runnable_methods(task: Task) -> list[str]:
    """Return the task's methods, without the Bayesian ones past ``params["bayes_reps"]``."""
    reps = task.params["bayes_reps"]
    return [s for s in task.methods if task.rep < reps or not parse_method(s)[0].bayesian]


def _partition_masks(labels: np.ndarray, n_groups: int) -> np.ndarray:
    masks = labels[None, :] == np.arange(n_groups)[:, None]
    return masks[masks.any(axis=1)]


def fixed_groupings(dataset: Dataset) -> dict[str, np.ndarray]:
    """Boolean masks of each fixed grouping's sets, by grouping name (empty sets dropped).

    The dataset's own groupings (us_cities: state, division, region); otherwise
    ``block50`` (50 contiguous blocks of item indices) and ``random50`` (a fixed random
    partition into 50 sets). Fixed before any data is seen.
    """
    d = dataset.d
    if dataset.groups:
        out = {}
        for name, groups in sorted(dataset.groups.items()):
            masks = np.zeros((len(groups), d), dtype=bool)
            for row, idx in enumerate(groups.values()):
                masks[row, np.asarray(idx, dtype=np.int64)] = True
            out[name] = masks[masks.any(axis=1)]
        return out
    n_groups = min(50, d)
    blocks = np.arange(d) * n_groups // d
    random = np.zeros(d, dtype=np.int64)
    for k, idx in enumerate(synthetic_groups(d, n_groups).values()):
        random[idx] = k
    return {
        "block50": _partition_masks(blocks, n_groups),
        "random50": _partition_masks(random, n_groups),
    }


def queries(dataset: Dataset, n_items: int, n_sets: int, rng) -> dict[str, np.ndarray]:
    """Boolean masks of every data-independent query, by query name (see the module notes)."""
    d = dataset.d
    items = rng.choice(d, size=min(n_items, d), replace=False)
    singles = np.zeros((items.size, d), dtype=bool)
    singles[np.arange(items.size), items] = True
    out = {
        "item": singles,
        "set10": metrics.random_subsets(d, 10, n_sets, rng),
        "set50": metrics.random_subsets(d, 50, n_sets, rng),
    }
    out.update({f"group:{k}": v for k, v in fixed_groupings(dataset).items()})
    return out


def top_by_estimate(frequencies: np.ndarray, k: int = 10) -> np.ndarray:
    """Masks of the ``k`` items an estimate ranks highest (ties to the lower index)."""
    d = frequencies.size
    top = np.lexsort((np.arange(d), -frequencies))[: min(k, d)]
    masks = np.zeros((top.size, d), dtype=bool)
    masks[np.arange(top.size), top] = True
    return masks


def answers(estimate: Any, masks: np.ndarray) -> np.ndarray:
    """Return the estimate's own answer to each set (``post-pos``: the raw sum clipped at 0)."""
    weights = masks.astype(np.float64)
    if estimate.query_basis is not None:
        return np.maximum(weights @ estimate.query_basis, 0.0)
    return weights @ estimate.frequencies


def kinds_of(estimate: Any, asked: str) -> list[str | None]:
    """Interval kinds to measure: ``None`` (the default) and each available kind asked for."""
    out: list[str | None] = []
    available = intervals.available_intervals(estimate)
    for kind in (k.strip() for k in asked.split(",") if k.strip()):
        choice = None if kind == "default" else kind
        if (choice is None or choice in available) and choice not in out:
            out.append(choice)
    return out


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: coverage counts for every method, interval kind and query."""
    p = task.params
    truth = dataset.frequencies
    sim, qseq = seq.spawn(2)
    m = task.simulate(dataset, np.random.default_rng(sim))
    sets = queries(dataset, p["items"], p["sets"], np.random.default_rng(qseq))
    estimates, seconds, notes = apply_methods(
        m, runnable_methods(task), seq, true_counts=dataset.counts
    )
    prob = float(p["prob"])
    rows: list[Row] = []
    for method, est in estimates.items():
        sec, note = seconds[method], notes[method]
        method_sets = {**sets, SELECTED: top_by_estimate(est.frequencies)}
        names = list(method_sets)
        stacked = np.concatenate([method_sets[q] for q in names])
        bounds = np.cumsum([0] + [method_sets[q].shape[0] for q in names])
        value = stacked.astype(np.float64) @ truth
        answer = answers(est, stacked)
        for kind in kinds_of(est, p["kinds"]):
            lo, hi, used = intervals.set_intervals(est, stacked, prob, kind, warn=False)
            covered = (lo <= value) & (value <= hi)
            tol = 1e-12 * np.maximum(1.0, np.abs(answer))
            outside = (answer < lo - tol) | (answer > hi + tol)
            label = "default" if kind is None else used
            for i, query in enumerate(names):
                sl = slice(bounds[i], bounds[i + 1])
                stats = {
                    "covered": covered[sl].sum(),
                    "n": sl.stop - sl.start,
                    "outside": outside[sl].sum(),
                    "width": np.mean(hi[sl] - lo[sl]),
                }
                rows += [(method, f"{stat}:{label}={used}:{query}", prob, float(v), sec, note)
                         for stat, v in stats.items()]  # fmt: skip
    return rows


def counts(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, oracle, eps, rep, method, kind, query): the counts and width.

    ``kind`` is ``default=KIND`` for the default interval (``KIND`` the kind it is),
    else ``KIND=KIND``.
    """
    sub = results[results["metric"].str.count(":") >= 2]
    parts = sub["metric"].str.split(":", n=2, expand=True)
    sub = sub.assign(stat=parts[0], kind=parts[1], query=parts[2])
    keys = ["dataset", "oracle", "epsilon", "rep", "method", "kind", "query"]
    out = sub.pivot_table(index=keys, columns="stat", values="value", sort=False).reset_index()
    out.columns.name = None
    return out


def summarise(frame: pd.DataFrame, prob: float = 0.9) -> pd.DataFrame:
    """Coverage per cell over every (run, query) pair, and its Monte Carlo standard error.

    The standard error is the spread of the per-run coverages over the square root of
    the number of runs (the queries of one run share its noise, so they are not
    independent); with one run, the binomial standard error. ``in_band`` says whether
    the coverage lies within ``prob`` +- :data:`BAND`.
    """
    keys = ["dataset", "oracle", "epsilon", "method", "kind", "query"]
    frame = frame.assign(run_coverage=frame["covered"] / frame["n"])
    g = frame.groupby(keys, sort=False)
    out = g[["n", "covered", "outside"]].sum()
    out["runs"] = g["rep"].nunique()
    out["coverage"] = out["covered"] / out["n"]
    spread = g["run_coverage"].std(ddof=1) / np.sqrt(out["runs"])
    binomial = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["n"])
    out["se"] = spread.where(out["runs"] > 1, binomial)
    out["outside_share"] = out["outside"] / out["n"]
    out["width"] = g["width"].mean()
    out = out.reset_index()
    out["selected"] = out["query"] == SELECTED
    out["in_band"] = (out["coverage"] - prob).abs() <= BAND + 1e-12
    return out


def _query_order(queries) -> list[str]:
    groups = sorted(q for q in queries if q.startswith("group:"))
    return (
        [q for q in INDEPENDENT if q in queries]
        + groups
        + ([SELECTED] if SELECTED in queries else [])
    )


def tables(summary: pd.DataFrame, prob: float = 0.9) -> str:
    """Markdown: every cell (coverage +- its standard error), then the cells outside the band.

    One row per (dataset, eps, method, interval kind); one column per query, the
    data-selected ``top10_est`` last, after a bar.
    """
    order = _query_order(summary["query"].unique())
    cell = summary.assign(text=[f"{c:.3f} ± {s:.3f}" for c, s in
                                zip(summary["coverage"], summary["se"], strict=True)])  # fmt: skip
    wide = cell.pivot_table(index=["dataset", "epsilon", "method", "kind"], columns="query",
                            values="text", aggfunc="first", sort=False)  # fmt: skip
    wide = wide[[q for q in order if q in wide]]
    runs = cell.groupby(["dataset", "epsilon", "method", "kind"], sort=False)["runs"].max()
    wide["runs"] = runs.astype(int)
    wide = wide.rename(columns={SELECTED: "top10 by estimate (data-selected)"})
    parts = [f"### Coverage of {prob:.0%} intervals (± Monte Carlo standard error)\n",
             markdown_table(wide.reset_index().fillna("")), ""]  # fmt: skip
    indep = summary[~summary["selected"]]
    miss = indep[~indep["in_band"]]
    parts.append(
        f"### Data-independent cells outside {prob - BAND:.0%}-{prob + BAND:.0%}: "
        f"{len(miss)} of {len(indep)}\n"
    )
    if len(miss):
        cols = ["dataset", "epsilon", "method", "kind", "query", "coverage", "se", "runs"]
        miss = miss.assign(beyond_2se=(miss["coverage"] - prob).abs() > 2 * miss["se"])
        parts.append(
            "`beyond_2se`: the nominal level lies more than two standard errors away (a miss "
            "the runs resolve; otherwise within Monte Carlo error).\n"
        )
        parts.append(markdown_table(miss[[*cols, "beyond_2se"]].round(4)))
    ranges = indep.groupby(["method", "kind"], sort=False)["coverage"].agg(["min", "max"])
    sel = summary[summary["selected"]].groupby(["method", "kind"], sort=False)["coverage"]
    ranges["top10_est min"], ranges["top10_est max"] = sel.min(), sel.max()
    outside = summary.groupby(["method", "kind"], sort=False)["outside_share"].max()
    ranges["answer outside (max share)"] = outside
    parts += ["", "### Coverage range per method (data-independent cells; top 10 by estimate)\n",
              markdown_table(ranges.reset_index().round(3)), ""]  # fmt: skip
    return "\n".join(parts)


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Coverage per method and query against the band; ``summary.csv`` and ``tables.md``."""
    prob = float(results.loc[results["metric"].str.startswith("covered:"), "param"].iloc[0])
    summary = summarise(counts(results), prob)
    with atomic_open(folder / "tables.md") as fh:
        fh.write(tables(summary, prob))
    cells = list(summary.groupby(["dataset", "epsilon"], sort=False))
    blocks = summary.assign(label=summary["method"] + " " + summary["kind"].str.split("=").str[0])
    n_rows = blocks["label"].nunique()
    cols = min(3, len(cells))
    rows_n = -(-len(cells) // cols)
    fig, axes = new_figure(rows_n, cols, width=5.5 * cols, row_height=max(2.8, 1.2 + 0.28 * n_rows))
    for ax, ((dataset, eps), _) in zip(axes.flat, cells, strict=False):
        block = blocks[(blocks["dataset"] == dataset) & (blocks["epsilon"] == eps)]
        labels = [f"{m} {k}" for m in method_order(block["method"].unique())
                  for k in sorted(block.loc[block["method"] == m, "label"].str.split(" ").str[1]
                                  .unique())]  # fmt: skip
        ys = {label: y for y, label in enumerate(labels)}
        ax.axvspan(prob - BAND, prob + BAND, color="green", alpha=0.15)
        ax.axvline(prob, color="green", lw=1)
        for kind, marker in MARKERS.items():
            sub = block[block["query"].str.split(":").str[0] == kind]
            ax.plot(sub["coverage"], sub["label"].map(ys), marker, ls="", ms=5, mfc="none",
                    mew=1.2, label=kind if kind != SELECTED else "top 10 by estimate")  # fmt: skip
        first = results[results["dataset"] == dataset].iloc[0]
        runs = int(block["runs"].max())
        ax.set_yticks(range(len(labels)), labels, fontsize=6)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("coverage")
        ax.set_title(f"{dataset_note(dataset, first['n'], first['d'])}\neps = {eps:g}, "
                     f"{first['oracle']}, {runs} runs", fontsize=7)  # fmt: skip
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(cells) :]:
        ax.set_visible(False)
    handles: dict[str, Any] = {}
    for ax in axes.flat:
        handles.update(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    fig.legend(list(handles.values()), list(handles), loc="upper right", ncol=len(handles),
               fontsize=7, title="query")  # fmt: skip
    fig.suptitle(f"coverage of the default {prob:.0%} interval "
                 f"(band: {prob - BAND:.0%}-{prob + BAND:.0%})", x=0.3)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / fig.get_figheight()))
    save_figure(fig, folder / "figure.png")
    return summary


EXPERIMENT = Experiment(
    name="interval_coverage",
    description="coverage of every method's default 90% interval (items, random sets, fixed "
    "groupings; top 10 by estimate apart)",
    figure="paper/intervals.md: calibrated default intervals",
    task=task,
    grid=Grid(
        DATASETS,
        EPSILONS,
        reps=30,
        extra_methods=("eb-npmle",),
        params={"items": 100, "sets": 50, "prob": 0.9, "bayes_reps": 10, "kinds": "default"},
    ),
    quick=Grid(
        ("zipf:d=128,n=100000", "us_cities"),
        (1.0,),
        reps=2,
        methods=("base", "post-pos", "norm-sub", "power-ns", "eb-npmle"),
        params={"items": 10, "sets": 5, "prob": 0.9, "bayes_reps": 1, "kinds": "default"},
    ),
    plot=plot,
    seed=cell_seed,
    group="intervals",
    options={
        "items": "random single items per run",
        "sets": "random sets per size (10% and 50% of the domain) per run",
        "prob": "nominal coverage of the intervals",
        "bayes_reps": "repetitions that run the Bayesian (MCMC) methods",
        "kinds": "interval kinds to measure, comma-separated: 'default' (each method's "
        "own) and any of normal, bootstrap, percentile, posterior",
    },
)
