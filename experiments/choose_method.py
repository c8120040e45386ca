"""Choosing a method for the query you will publish: :func:`bayesldp.choose_method`'s regret.

Each cell simulates one collection on the true data, measures every candidate's error
on the true frequencies for each query (full domain, random 50% and 10% sets by their
exact expected loss, the dataset's fixed groupings, the top 10), and runs the library's
choice (:func:`bayesldp.choose.simulated_losses` and :func:`bayesldp.choose.rank_losses`,
the two halves of :func:`bayesldp.choose_method`, so that the simulated collections are
shared by the queries) over its default candidates. Empirical Bayes (``eb-npmle``) is
measured on the true data as a fixed policy and counts for the best method, but is not a
candidate of the choice (it has no row function: re-running it on every simulated
collection costs more than all the other candidates together). The regret of a run is
the chosen method's true error over the best measured method's true error; the same is
reported for the papers' procedure with one synthetic truth (the winner under the
norm-sub fit or under the power-ns fit alone) and for every fixed policy (always the same
method). Run ``bayesldp experiment choose_method``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp.choose import (
    FITS,
    POSTERIOR_DRAW,
    default_methods,
    parse_query,
    query_loss,
    rank_losses,
    simulated_losses,
    unusable_methods,
)
from bayesldp.datasets import Dataset
from bayesldp.experiments.fixed_set import dataset_groups
from bayesldp.methods.registry import get_method
from bayesldp.plotting import new_figure, save_figure
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

#: The candidates of the choice: the library's default set.
CANDIDATES: tuple[str, ...] = default_methods()
#: Measured on the true data: the candidates and empirical Bayes (a strong fixed policy).
METHODS: tuple[str, ...] = (*CANDIDATES, "eb-npmle")
#: The synthetic truths the study simulates: the library's and eb-npmle's posterior draw.
STUDY_FITS: tuple[str, ...] = (*FITS, *POSTERIOR_DRAW)
#: ``param`` codes of the rows: the true error, the library's choice, the single-fit
#: choices (the papers' procedure on one synthetic truth).
TRUE, CHOICE = 0.0, 1.0
FIT_CODES = {fit: 2.0 + i for i, fit in enumerate(STUDY_FITS)}
#: ``param`` code of a candidate left out of the choice (:func:`unusable_methods`).
LEFT_OUT = 5.0
#: ``param`` codes of each fit's mean simulated loss per method (for other rules).
LOSS_CODES = {fit: 10.0 + i for i, fit in enumerate(STUDY_FITS)}


def queries(dataset: Dataset) -> dict[str, object]:
    """Return the study's queries by label: full, random sets, each fixed grouping, top 10."""
    out: dict[str, object] = {"full": "full", "set0.5": ("set", 0.5), "set0.1": ("set", 0.1)}
    for name, groups in sorted(dataset_groups(dataset).items()):
        out[f"fixed:{name}"] = [np.asarray(g) for g in groups.values() if len(g)]
    out["top10"] = ("top", min(10, dataset.d))
    return out


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Measure true errors (param 0), the choice (param 1) and each single fit's choice (2, 3)."""
    sim_seq, choose_seq = seq.spawn(2)
    m = task.simulate(dataset, np.random.default_rng(sim_seq))
    names = task.methods
    est, sec, notes = apply_methods(m, names, seq, true_counts=dataset.counts)
    labels = queries(dataset)
    parsed = [parse_query(q, m.domain_size) for q in labels.values()]
    rows: list[Row] = []
    for label, q in zip(labels, parsed, strict=True):
        for name in names:
            e = est[name]
            basis = e.query_basis if e.query_basis is not None else e.frequencies
            rule = get_method(name).query_rule
            loss = float(query_loss(q, basis, dataset.frequencies, rule, 0)[0])
            rows.append((name, label, TRUE, loss, sec[name], notes[name]))
    candidates = [name for name in names if name in CANDIDATES]
    losses, _ = simulated_losses(
        m,
        parsed,
        candidates,
        reps=task.params["synthetic_reps"],
        rng=np.random.default_rng(choose_seq),
        fits=STUDY_FITS,
    )
    left_out = unusable_methods(m, candidates, est)
    kept = [i for i, name in enumerate(candidates) if name not in left_out]
    kept = kept or list(range(len(candidates)))
    for j, label in enumerate(labels):
        kept_losses = {fit: v[j][kept] for fit, v in losses.items()}
        kept_names = [candidates[i] for i in kept]
        # the library's choice ranks on its own fits; the posterior draw is a what-if
        table, _ = rank_losses({f: v for f, v in kept_losses.items() if f in FITS}, kept_names)
        _, winners = rank_losses(kept_losses, kept_names)
        for name in left_out:
            rows.append((name, label, LEFT_OUT, np.nan, np.nan, ""))
        rows.append((str(table["method"].iloc[0]), label, CHOICE, float(table["score"].iloc[0]),
                     np.nan, ""))  # fmt: skip
        for fit, winner in winners.items():
            rows.append((winner, label, FIT_CODES[fit], np.nan, np.nan, ""))
        for fit, v in losses.items():
            for name, mean in zip(candidates, v[j].mean(axis=1), strict=True):
                rows.append((name, label, LOSS_CODES[fit], float(mean), np.nan, ""))
    return rows


def other_rules(g: pd.DataFrame) -> dict[str, str]:
    """Methods other rules would pick from the fits' mean simulated losses (what-ifs).

    ``geometric``: the smallest geometric mean of the loss ratios over the fits;
    ``minimax``: the smallest largest ratio; ``pooled``: the smallest mean loss;
    ``all-candidates``: the library's rule with no candidate left out by
    :func:`unusable_methods` (the earlier choice); ``with-posterior-draw``: the library's
    rule with ``eb-npmle``'s posterior draw as a third synthetic truth.
    """
    table = g[g["param"].isin(list(LOSS_CODES.values()))].pivot_table(
        index="method", columns="param", values="value"
    )
    if table.empty:
        return {}
    own = table[[LOSS_CODES[f] for f in FITS if LOSS_CODES[f] in table]]
    ratios = own / own.min(axis=0)
    out = {
        "geometric": str(np.log(ratios).mean(axis=1).idxmin()),
        "minimax": str(ratios.max(axis=1).idxmin()),
        "pooled": str(own.mean(axis=1).idxmin()),
    }
    # the earlier rule (every candidate kept) and the choice with eb-npmle's posterior
    # draw as a third truth, on the same simulations (a fit's draws do not depend on the
    # fits after it)
    own = [LOSS_CODES[f] for f in FITS if LOSS_CODES[f] in table]
    left_out = set(g.loc[g["param"] == LEFT_OUT, "method"])
    usable = [m for m in table.index if m not in left_out] or list(table.index)
    if own:
        sub = table[own]
        out["all-candidates"] = str((sub / sub.min(axis=0)).mean(axis=1).idxmin())
    sub = table.loc[usable]
    out["with-posterior-draw"] = str((sub / sub.min(axis=0)).mean(axis=1).idxmin())
    return out


def choice_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per run and query: the regret of the choice, of each single fit and of each method.

    Columns ``regret`` (the library's choice), ``regret[FIT]`` (the papers' procedure on
    that fit alone), ``rule[NAME]`` (:func:`other_rules`) and ``always[METHOD]`` (the
    fixed policy), each the true error of the method picked over the best method's true
    error.
    """
    rows = []
    for (ds, eps, rep, query), g in results.groupby(["dataset", "epsilon", "rep", "metric"]):
        true = g[g["param"] == TRUE].set_index("method")["value"]
        best = float(true.min())
        chosen = g.loc[g["param"] == CHOICE, "method"]
        if chosen.empty or not best > 0:
            continue
        row = {"dataset": ds, "epsilon": eps, "rep": rep, "query": query,
               "best": true.idxmin(), "chosen": chosen.iloc[0],
               "regret": true[chosen.iloc[0]] / best}  # fmt: skip
        for fit, code in FIT_CODES.items():
            winner = g.loc[g["param"] == code, "method"]
            # a degenerate fit has no winner: the papers' procedure then uses the other
            row[f"regret[{fit}]"] = true[winner.iloc[0]] / best if len(winner) else np.nan
        for rule, pick in other_rules(g).items():
            row[f"rule[{rule}]"] = true[pick] / best
        for method, value in true.items():
            row[f"always[{method}]"] = value / best
            row[f"error[{method}]"] = value
        row["error"] = true[chosen.iloc[0]]
        rows.append(row)
    return pd.DataFrame(rows)


def hindsight_policies(summary: pd.DataFrame) -> dict[str, float]:
    """Mean regret over cells of two policies that know the truth.

    ``hindsight[best method per cell]`` uses, in every cell, the one method whose mean
    regret in that cell is smallest (``eb-npmle`` included); ``hindsight[best candidate
    per cell]`` the same among the choice's candidates. Neither can be run (each looks at
    the true errors). No policy that uses one method per cell does better on average than
    the first; a rule whose pick changes from run to run, as the choice's does, could beat
    it only by predicting which method's error is small by chance in that run.
    """
    always = [c for c in summary.columns if c.startswith("always[")]
    candidates = [f"always[{m}]" for m in CANDIDATES if f"always[{m}]" in summary]
    return {
        "hindsight[best method per cell]": float(summary[always].min(axis=1).mean()),
        "hindsight[best candidate per cell]": float(summary[candidates].min(axis=1).mean()),
    }


def _markdown(frame: pd.DataFrame) -> str:
    """Return a Markdown table of ``frame`` (numbers to 3 decimals)."""
    cells = frame.map(lambda v: f"{v:.3f}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(r) + " |" for r in cells.astype(str).values.tolist()]
    return "\n".join(lines) + "\n"


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Mean regret per cell (bars: the choice; dots: the best fixed policy of that cell).

    Also writes ``overall.csv`` (the mean over all cells of the choice, each single fit,
    each other rule and each fixed policy, of the hindsight policies, of the choice's ratio
    of mean errors and of its mean per-run ratio to the method best on average in the cell)
    and ``report.md`` (the tables in Markdown).
    """
    table = choice_table(results)
    cols = [c for c in table.columns if c.startswith(("regret", "rule[", "always["))]
    summary = table.groupby(["dataset", "query", "epsilon"], as_index=False).agg(
        runs=("rep", "size"), **{c: (c, "mean") for c in cols}
    )
    overall = summary[cols].mean().rename("mean regret over cells").to_frame()
    overall.index.name = "policy"
    overall = overall.sort_values("mean regret over cells").reset_index()
    single = [f"regret[{f}]" for f in STUDY_FITS]
    cell_cols = ["dataset", "query", "epsilon", "runs", "regret", *single]
    always = [c for c in cols if c.startswith("always[")]
    best_fixed = summary[always].min(axis=1)
    # the ratio of mean errors: the choice's mean true error over the mean true error of
    # the method best on average in the cell (robust where per-run errors near 0 make the
    # per-run ratio heavy-tailed, e.g. a handful of large fixed groups)
    errors = table.groupby(["dataset", "query", "epsilon"], as_index=False)[
        ["error", *[c for c in table.columns if c.startswith("error[")]]
    ].mean()
    method_errors = errors[[c for c in errors.columns if c.startswith("error[")]]
    summary["mean_error_ratio"] = errors["error"] / method_errors.min(axis=1)
    # the per-run ratio to the method best on average in the cell (not to each run's best)
    cell_best = errors[["dataset", "query", "epsilon"]].assign(
        cell_best=method_errors.idxmin(axis=1)
    )
    merged = table.merge(cell_best, on=["dataset", "query", "epsilon"])
    merged["ratio"] = merged["error"] / merged.apply(lambda r: r[r["cell_best"]], axis=1)
    summary["ratio_to_cell_best"] = (
        merged.groupby(["dataset", "query", "epsilon"])["ratio"].mean().to_numpy()
    )
    cells = summary[cell_cols].assign(
        best_fixed=best_fixed,
        best_fixed_policy=summary[always].idxmin(axis=1),
        mean_error_ratio=summary["mean_error_ratio"],
        ratio_to_cell_best=summary["ratio_to_cell_best"],
    )
    extra = {**hindsight_policies(summary),
             "mean_error_ratio (choice)": summary["mean_error_ratio"].mean(),
             "ratio_to_cell_best (choice)": summary["ratio_to_cell_best"].mean()}  # fmt: skip
    overall = pd.concat(
        [overall, pd.DataFrame({"policy": list(extra), "mean regret over cells": extra.values()})],
        ignore_index=True,
    )
    overall.to_csv(folder / "overall.csv", index=False)
    shown = ["regret", "rule[all-candidates]", "rule[with-posterior-draw]", *single,
             "always[power-ns]", "always[eb-npmle]"]  # fmt: skip
    by_query = (
        summary.assign(mean_error_ratio=summary["mean_error_ratio"])
        .groupby("query", as_index=False)[[c for c in shown if c in summary] + ["mean_error_ratio"]]
        .mean()
    )
    (folder / "report.md").write_text(
        "## Overall (mean over cells)\n\n"
        + _markdown(overall)
        + "\n## By query (mean over datasets and epsilons)\n\n"
        + _markdown(by_query)
        + "\n## Every cell\n\n"
        + _markdown(cells)
    )
    fig, axes = new_figure(1)
    ax = axes[0, 0]
    labels = (
        summary["dataset"] + "/" + summary["query"] + "/" + summary["epsilon"].map("{:g}".format)
    )
    ax.barh(labels, summary["regret"], label="choose_method")
    ax.scatter(best_fixed, labels, color="k", s=8, zorder=3, label="best fixed policy")
    ax.set_xlim(left=1.0)
    ax.set_xlabel("true error / best method's true error (mean over runs)")
    ax.tick_params(axis="y", labelsize=5)
    ax.legend(fontsize=7)
    ax2 = axes[0, 1]
    ax2.barh(overall["policy"], overall["mean regret over cells"])
    ax2.set_xscale("log")
    ax2.set_xlabel("mean regret over all cells")
    ax2.tick_params(axis="y", labelsize=6)
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return summary


EXPERIMENT = Experiment(
    name="choose_method",
    description="regret of bayesldp.choose_method against every fixed method",
    figure="NDSS Fig. 9",
    task=task,
    grid=Grid(
        ("zipf", "us_cities", "wordfreq"),
        (0.5, 1.0, 2.0),
        reps=30,
        methods=METHODS,
        params={"synthetic_reps": 50},
    ),
    quick=Grid(("zipf",), (1.0,), reps=1, methods=METHODS, params={"synthetic_reps": 2}),
    plot=plot,
    options={"synthetic_reps": "simulated collections per synthetic truth"},
)
