"""Figures from saved results only, in the papers' layout (two panels per row).

Left panel: base, base-pos, post-pos, norm, norm-mul, norm-sub. Right panel: norm-sub,
mle-apx, base-cut, norm-cut, norm-hyb, power, power-ns and the extra anchors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp.io import write_csv
from bayesldp.plotting import save_figure

# Fixed-set groupings in the order they are drawn, and how they are named.
GROUPINGS = {
    "state": "US states",
    "region": "US census regions",
    "division": "US census divisions",
    "random50": "random partition",
}


def method_style(method: str) -> dict:
    """Line keyword arguments for ``method``: stable colour and marker, dashed for cvxpy.

    Colours follow the registration order of :mod:`bayesldp.registry`: the first ten
    methods in tab10 with circles, the next eight in Dark2 with squares, a spec's own
    ``color`` where it has one; ``NAME@cvxpy`` draws like ``NAME`` with a dashed line and
    open markers, so agreement shows as overlap.
    """
    from matplotlib import colormaps

    from bayesldp.registry import get_method, method_names

    base, _, backend = method.partition("@")
    names = method_names()
    try:
        fixed = get_method(base).color
    except ValueError:
        fixed = None
    index = names.index(base) if base in names else -1
    if fixed is not None:
        color, marker = fixed, "D"
    elif 0 <= index < 10:
        color, marker = colormaps["tab10"](index), "o"
    elif 10 <= index < 18:
        color, marker = colormaps["Dark2"](index - 10), "s"
    else:  # an unlisted method: a stable slot from its name
        color, marker = colormaps["tab20b"](sum(map(ord, base)) % 20), "^"
    style = {"color": color, "marker": marker, "ms": 3.5, "lw": 1.2}
    if backend:
        style.update(ls="--", mfc="none", ms=7, lw=1.0)
    return style


def _panels(methods) -> tuple[list[str], list[str]]:
    """The papers' panels: baselines left, the rest right, each in registry order."""
    from bayesldp.registry import method_names

    methods = list(dict.fromkeys(methods))
    left_names = method_names(panel="left") + method_names(panel="both")
    right_names = method_names(panel="both") + method_names(panel="right")
    registered = [m for m in method_names() if m in methods]
    left = [m for m in registered if m in left_names]
    right = [m for m in registered if m in right_names]
    right += [m for m in methods if m not in registered]
    return left, right


def _figure(rows: int):
    # a bare Figure (no pyplot): nothing global to close, any backend
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.4 * rows))
    axes = fig.subplots(rows, 2, squeeze=False)
    return fig, axes


def _lines(ax, frame, x, methods, logy=True, logx=False):
    for m in methods:
        sub = frame[frame["method"] == m].sort_values(x)
        if sub.empty:
            continue
        ax.plot(sub[x], sub["value"], label=m, **method_style(m))
    if logy:
        ax.set_yscale("log")
    if logx:
        ax.set_xscale("log")
    ax.grid(alpha=0.3)


def dataset_note(dataset: str, n=None, d=None) -> str:
    """``"wordfreq: real: ... ; n = 1,000,000, d = 42,178"`` for a panel title."""
    from bayesldp.datasets import DATASETS, parse_dataset

    try:
        name = parse_dataset(dataset)[0]
        parts = [DATASETS[name].note]
    except ValueError:
        parts = [dataset]
    if n is not None and d is not None:
        parts.append(f"n = {int(n):,}, d = {int(d):,}")
    return "; ".join(parts)


def _row_notes(results: pd.DataFrame, row_key: str) -> dict[str, str]:
    """Per row of panels: the dataset's note when the row holds one dataset."""
    if not {"dataset", "n", "d"} <= set(results.columns):
        return {}
    notes = {}
    for key, g in results.groupby(row_key, sort=False):
        cells = g[["dataset", "n", "d"]].drop_duplicates()
        if len(cells) == 1:
            ds, n, d = cells.iloc[0]
            notes[key] = dataset_note(ds, n, d)
        elif g["dataset"].nunique() == 1:
            notes[key] = dataset_note(g["dataset"].iloc[0])
    return notes


def _summary(results: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    sub = results[results["metric"] == metric]
    # rows keep the order in which they first appear (plots sort their rows first)
    return sub.groupby([*by, "method"], as_index=False, sort=False)["value"].mean()


def _two_panel_rows(
    results: pd.DataFrame,
    metric: str,
    x: str,
    path: Path,
    ylabel: str,
    xlabel: str,
    logy=True,
    logx=False,
    row_key="dataset",
    title="",
) -> pd.DataFrame:
    summary = _summary(results, metric, [row_key, x])
    keys = list(dict.fromkeys(summary[row_key]))
    notes = _row_notes(results[results["metric"] == metric], row_key)
    fig, axes = _figure(max(1, len(keys)))
    left, right = _panels(summary["method"].unique())
    for i, key in enumerate(keys):
        frame = summary[summary[row_key] == key]
        for j, methods in enumerate((left, right)):
            ax = axes[i, j]
            _lines(ax, frame, x, methods, logy=logy, logx=logx)
            note = notes.get(key)
            ax.set_title(f"{key}\n{note}" if note else f"{key}", fontsize=9)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7, ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)
    return summary


def _plot_vs_eps(metric, ylabel):
    def plot(results, folder):
        return _two_panel_rows(results, metric, "epsilon", folder / "figure.png", ylabel, "epsilon")

    return plot


def _plot_set(results, folder):
    results = results.copy()
    results["range"] = np.where(results["param"] >= 10, "rho 10-90%", "rho 1-10%")
    results["row"] = results["dataset"] + ", " + results["range"]
    results = results.sort_values(["dataset", "range"], ascending=[True, False])
    return _two_panel_rows(
        results,
        "set_mse",
        "param",
        folder / "figure.png",
        "set-value MSE",
        "rho (%)",
        row_key="row",
    )


def _plot_fixed(results, folder):
    """One row per (dataset, grouping): US states, regions, divisions; Zipf's partition."""
    results = results.copy()
    grouping = results["metric"].str.split(":").str[1]
    order = {g: i for i, g in enumerate(GROUPINGS)}
    results["_order"] = grouping.map(lambda g: order.get(g, len(order)))
    sets = results["param"].map(lambda v: f" ({v:.0f} sets)" if np.isfinite(v) else "")
    results["row"] = results["dataset"] + ", " + grouping.map(lambda g: GROUPINGS.get(g, g)) + sets
    results = results.sort_values(["dataset", "_order"], kind="stable")
    results["metric"] = "fixed"
    return _two_panel_rows(
        results,
        "fixed",
        "epsilon",
        folder / "figure.png",
        "fixed-set MSE",
        "epsilon",
        row_key="row",
    )


def _plot_topk(results, folder):
    k_eps = results[(results["metric"] == "topk_mse") & (results["epsilon"] == 1.0)].copy()
    k_eps["row"] = k_eps["dataset"] + ", eps = 1"
    a = _two_panel_rows(
        k_eps,
        "topk_mse",
        "param",
        folder / "figure_vs_k.png",
        "top-k MSE",
        "k",
        row_key="row",
    )
    k10 = results[(results["metric"] == "topk_mse") & (results["param"] == 10)].copy()
    k10["row"] = k10["dataset"] + ", k = 10"
    b = _two_panel_rows(
        k10,
        "topk_mse",
        "epsilon",
        folder / "figure.png",
        "top-10 MSE",
        "epsilon",
        row_key="row",
    )
    return pd.concat([a.assign(view="vs_k"), b.assign(view="vs_eps")], ignore_index=True)


def bias_variance_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per-rank bias and variance from the chunks' sums."""
    runs = results[results["metric"] == "runs"].groupby("method")["value"].sum()
    sums = results[results["metric"].isin(["sum_err", "sum_sq_err"])]
    tot = sums.groupby(["method", "param", "metric"])["value"].sum().unstack("metric")
    tot = tot.reset_index()
    tot["runs"] = tot["method"].map(runs)
    tot["bias"] = tot["sum_err"] / tot["runs"]
    tot["variance"] = tot["sum_sq_err"] / tot["runs"] - tot["bias"] ** 2
    tot["mse"] = tot["sum_sq_err"] / tot["runs"]
    return tot.rename(columns={"param": "rank"})[
        ["method", "rank", "runs", "bias", "variance", "mse"]
    ]


def _plot_bv(results, folder):
    table = bias_variance_table(results)
    fig, axes = _figure(2)
    left, right = _panels(table["method"].unique())
    for i, what in enumerate(("bias", "variance")):
        for j, methods in enumerate((left, right)):
            ax = axes[i, j]
            for m in methods:
                sub = table[table["method"] == m]
                style = {**method_style(m), "marker": None, "lw": 1}
                ax.plot(sub["rank"], sub[what], label=m, **style)
            ax.set_xscale("log")
            if what == "variance":
                ax.set_yscale("log")
                positive = table.loc[table["variance"] > 0, "variance"]
                if not positive.empty:  # methods that cut an item to 0 every run: 0
                    ax.set_ylim(bottom=max(positive.min(), positive.max() * 1e-6))
            else:
                ax.axhline(0, color="k", lw=0.5)
            ax.set_xlabel("rank of the value")
            ax.set_ylabel(what)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, folder / "figure.png")
    return table


def _plot_nprime(results, folder):
    sub = results[results["metric"] == "n_prime"].copy()
    sub["param"] = sub["n"].astype(float)
    sub["ratio"] = "n'"
    return _two_panel_rows(
        sub,
        "n_prime",
        "param",
        folder / "figure.png",
        "n' (users for Base)",
        "n",
        logx=True,
        row_key="ratio",
    )


def _plot_hh(results, folder):
    out = []
    for metric in ("f_score", "precision", "recall"):
        sub = results[(results["metric"] == metric) & (results["epsilon"] == 1.0)].copy()
        sub["row"] = sub["dataset"] + f", {metric}, eps = 1"
        s = _two_panel_rows(
            sub,
            metric,
            "param",
            folder / f"figure_{metric}_vs_threshold.png",
            metric,
            "threshold",
            logy=False,
            logx=True,
            row_key="row",
        )
        out.append(s.assign(view=f"{metric}_vs_threshold"))
    thresholds = sorted(results["param"].dropna().unique())
    t0 = 0.005 if 0.005 in thresholds else thresholds[len(thresholds) // 2]
    sub = results[np.isclose(results["param"], t0)].copy()
    sub["row"] = sub["dataset"] + ", " + sub["metric"] + f", threshold {t0:g}"
    s = _two_panel_rows(
        sub[sub["metric"] == "f_score"],
        "f_score",
        "epsilon",
        folder / "figure.png",
        "F-score",
        "epsilon",
        logy=False,
        row_key="row",
    )
    out.append(s.assign(view="f_score_vs_eps"))
    return pd.concat(out, ignore_index=True)


def choice_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, eps, query, fit): the method chosen on synthetic data vs the best.

    ``regret`` is the true error of the chosen method over the best method's true
    error (1 when the choice is right), averaged over repetitions.
    """
    rows = []
    for (ds, eps, rep, query), g in results.groupby(["dataset", "epsilon", "rep", "metric"]):
        true = g[g["param"] == 0].set_index("method")["value"]
        best = true.idxmin()
        for code, fit in ((1.0, "norm-sub"), (2.0, "power-ns")):
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


def _plot_choose(results, folder):
    table = choice_table(results)
    summary = table.groupby(["dataset", "query", "fit", "epsilon"], as_index=False).agg(
        match=("match", "mean"),
        regret=("regret", "mean"),
        regret_power_ns=("regret_power_ns", "mean"),
        chosen=("chosen", lambda s: s.value_counts().index[0]),
        best=("best", lambda s: s.value_counts().index[0]),
    )
    fig, axes = _figure(1)
    for j, fit in enumerate(("norm-sub", "power-ns")):
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


PLOTS = {
    "full_domain_mse": _plot_vs_eps("mse", "full-domain MSE"),
    "mae": _plot_vs_eps("mae", "full-domain MAE"),
    "set_value_mse": _plot_set,
    "fixed_set": _plot_fixed,
    "topk": _plot_topk,
    "bias_variance": _plot_bv,
    "n_prime": _plot_nprime,
    "heavy_hitters": _plot_hh,
    "choose_method": _plot_choose,
}


def plot(name: str, folder: str | Path) -> pd.DataFrame:
    """Plot experiment ``name`` from ``folder/results.csv``; writes ``summary.csv`` too."""
    folder = Path(folder)
    results = pd.read_csv(
        folder / "results.csv", keep_default_na=False, na_values=[""], low_memory=False
    )
    summary = PLOTS[name](results, folder)
    write_csv(folder / "summary.csv", summary)
    return summary
