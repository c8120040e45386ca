"""Figures drawn from saved results only (no computation here).

Shared by the experiments in ``experiments/``: the papers' layout (rows of two panels,
baselines left and the rest right), method styles derived from the method registry,
and the dot plot of the demo. Figures are built with :class:`matplotlib.figure.Figure`
directly, without pyplot, so plotting never changes the user's backend or opens a
window; matplotlib is imported on first use.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp._io import atomic_open

__all__ = [
    "dataset_note",
    "dot_plot",
    "method_order",
    "method_panels",
    "method_style",
    "new_figure",
    "plan_figure",
    "save_figure",
    "two_panel_rows",
]


def save_figure(fig: Any, path: str | os.PathLike) -> None:
    """Save ``fig`` atomically, in the format its suffix names.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, saved at 120 dpi.
    path : str or os.PathLike
        Destination; without a suffix the format is PNG.
    """
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, dpi=120)


def new_figure(
    rows: int, cols: int = 2, width: float = 11, row_height: float = 3.4
) -> tuple[Any, np.ndarray]:
    """Return a bare Figure (no pyplot: nothing global to close) and its ``rows x cols`` axes.

    Parameters
    ----------
    rows : int
        Rows of panels.
    cols : int, default 2
        Panels per row.
    width : float, default 11
        Figure width in inches.
    row_height : float, default 3.4
        Height of one row in inches.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray
        Shape ``(rows, cols)`` (never squeezed).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, row_height * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def method_style(method: str) -> dict[str, Any]:
    """Line keyword arguments for ``method``: stable colour and marker, dashed for cvxpy.

    Colours follow the registration order of :mod:`bayesldp.methods.registry`: the first ten
    methods in tab10 with circles, the next eight in Dark2 with squares, a spec's own
    ``color`` where it has one; ``NAME@cvxpy`` draws like ``NAME`` with a dashed line and
    open markers, so agreement shows as overlap. Names outside the registry get a stable
    slot from their characters.

    Parameters
    ----------
    method : str
        A method name, optionally with ``@backend``.

    Returns
    -------
    dict
        Keyword arguments for ``Axes.plot``.
    """
    from matplotlib import colormaps

    from bayesldp.methods.registry import get_method, method_names

    base, _, backend = method.partition("@")
    names = method_names()
    try:
        fixed = get_method(base).color
    except ValueError:
        fixed = None
    index = names.index(base) if base in names else -1
    color: str | tuple[float, float, float, float]
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


def method_order(methods: Sequence[str]) -> list[str]:
    """``methods`` in registry order (backends after their method), others after them.

    Parameters
    ----------
    methods : sequence of str
        Method names, optionally with ``@backend``; duplicates are dropped.
    """
    from bayesldp.methods.registry import method_names

    methods = list(dict.fromkeys(methods))
    rank = {name: i for i, name in enumerate(method_names())}

    def key(m: str) -> tuple[bool, int, str, int]:
        base, _, backend = m.partition("@")
        return (base not in rank, rank.get(base, 0), backend, methods.index(m))

    return sorted(methods, key=key)


def method_panels(methods: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split methods into the papers' panels: baselines left, the rest right, in registry order.

    Parameters
    ----------
    methods : iterable of str
        Method names. Registered ones go by their ``panel`` (``"both"`` in each);
        unregistered ones (including ``NAME@backend``) go right, in the order given.

    Returns
    -------
    left, right : list of str
    """
    from bayesldp.methods.registry import method_names

    methods = list(dict.fromkeys(methods))
    left_names = method_names(panel="left") + method_names(panel="both")
    right_names = method_names(panel="both") + method_names(panel="right")
    registered = [m for m in method_names() if m in methods]
    left = [m for m in registered if m in left_names]
    right = [m for m in registered if m in right_names]
    right += [m for m in methods if m not in registered]
    return left, right


def _draw_lines(
    ax: Any,
    frame: pd.DataFrame,
    x: str,
    methods: Iterable[str],
    logy: bool = True,
    logx: bool = False,
) -> None:
    """One line per method of ``frame``'s mean ``value`` against column ``x``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    frame : pandas.DataFrame
        With columns ``method``, ``value`` and ``x``.
    x : str
        Column for the horizontal axis.
    methods : iterable of str
        Methods to draw, in this order; those absent from ``frame`` are skipped.
    logy : bool, default True
        Logarithmic vertical axis.
    logx : bool, default False
        Logarithmic horizontal axis.
    """
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


def dataset_note(dataset: str, n: int | None = None, d: int | None = None) -> str:
    """``"real: English word frequencies (wordfreq); n = 1,000,000, d = 42,178"``.

    Parameters
    ----------
    dataset : str
        A dataset spec (as :func:`bayesldp.datasets.get_dataset` reads it); an unknown
        one is shown as it is.
    n, d : int, optional
        Number of users and items; shown only when both are given.
    """
    from bayesldp.datasets._registry import dataset_spec

    try:
        parts = [dataset_spec(dataset).note]
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


def _mean(results: pd.DataFrame, metric: str, by: list[str]) -> pd.DataFrame:
    sub = results[results["metric"] == metric]
    # rows keep the order in which they first appear (plots sort their rows first)
    return sub.groupby([*by, "method"], as_index=False, sort=False)["value"].mean()


def two_panel_rows(
    results: pd.DataFrame,
    metric: str,
    x: str,
    path: Path,
    ylabel: str,
    xlabel: str,
    logy: bool = True,
    logx: bool = False,
    row_key: str = "dataset",
    title: str = "",
) -> pd.DataFrame:
    """Draw the papers' layout: a row of two panels per value of ``row_key``.

    Left: the baselines (registry ``panel="left"``); right: the rest. Each line is a
    method's mean ``value`` of ``metric`` against ``x``. Returns those means.

    Parameters
    ----------
    results : pandas.DataFrame
        Long results with columns ``metric``, ``method``, ``value``, ``x`` and
        ``row_key`` (and ``dataset``, ``n``, ``d`` for the panel titles' notes).
    metric : str
        The metric plotted.
    x : str
        Column for the horizontal axis.
    path : pathlib.Path
        Where the figure is saved (:func:`save_figure`).
    ylabel, xlabel : str
        Axis labels.
    logy : bool, default True
        Logarithmic vertical axis.
    logx : bool, default False
        Logarithmic horizontal axis.
    row_key : str, default "dataset"
        Column whose values get a row of panels each.
    title : str, default ""
        Figure title (none when empty).

    Returns
    -------
    pandas.DataFrame
        Mean ``value`` by ``row_key``, ``x`` and ``method``.
    """
    summary = _mean(results, metric, [row_key, x])
    keys = list(dict.fromkeys(summary[row_key]))
    notes = _row_notes(results[results["metric"] == metric], row_key)
    fig, axes = new_figure(max(1, len(keys)))
    left, right = method_panels(summary["method"].unique())
    for i, key in enumerate(keys):
        frame = summary[summary[row_key] == key]
        for j, methods in enumerate((left, right)):
            ax = axes[i, j]
            _draw_lines(ax, frame, x, methods, logy=logy, logx=logx)
            note = notes.get(key)
            ax.set_title(f"{key}\n{note}" if note else f"{key}", fontsize=9)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)
    return summary


def dot_plot(
    results: pd.DataFrame,
    panels: Sequence[tuple[str, str]],
    path: str | os.PathLike,
    title: str = "",
    logx: bool = True,
) -> pd.DataFrame:
    """One panel per metric: every method's runs as dots, their mean, and their range.

    Parameters
    ----------
    results : pandas.DataFrame
        Tidy rows (``method``, ``metric``, ``value``), one per run and metric.
    panels : sequence of (metric, label)
        The metrics to draw, left to right.
    path : path
        Where the figure goes.
    title : str
        The figure's title.
    logx : bool
        Log scale for the values (errors spanning orders of magnitude); the position of
        a dot, not the length of a bar, carries the value, so a log axis is faithful.

    Returns
    -------
    pandas.DataFrame
        Per (metric, method): mean, standard error, min, max and the number of runs.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    panels = [(m, label) for m, label in panels if (results["metric"] == m).any()]
    methods = method_order(results["method"].unique())
    fig = Figure(figsize=(5 * max(1, len(panels)), 1.9 + 0.3 * len(methods)), layout="constrained")
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    stats = []
    for ax, (metric, label) in zip(axes, panels, strict=False):
        sub = results[results["metric"] == metric]
        table = sub.groupby("method")["value"].agg(["mean", "std", "min", "max", "count"])
        table = table.reindex([m for m in methods if m in table.index])
        table["se"] = table["std"] / np.sqrt(table["count"])
        best = table["mean"].idxmin()
        for y, (method, row) in enumerate(table.iterrows()):
            style = method_style(method)
            values = sub.loc[sub["method"] == method, "value"]
            ax.plot([row["min"], row["max"]], [y, y], color=style["color"], lw=1, alpha=0.6)
            ax.plot(values, np.full(len(values), y), "|", color=style["color"], ms=8, alpha=0.8)
            edge = "black" if method == best else style["color"]
            ax.plot(row["mean"], y, "o", color=style["color"], mec=edge, mew=1.8, ms=7)
        ax.set_yticks(range(len(table)), table.index)
        ax.set_ylim(len(table) - 0.5, -0.5)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(label + " (lower is better)")
        ax.grid(axis="x", which="both", alpha=0.3)
        stats.append(table.reset_index().assign(metric=metric))
    runs = int(results.groupby(["metric", "method"]).size().max()) if len(results) else 0
    handles = [
        Line2D([], [], marker="o", ls="", color="grey", ms=7, label=f"mean of {runs} runs"),
        Line2D([], [], marker="|", ls="", color="grey", ms=8, mew=1.5, label="one run"),
        Line2D([], [], color="grey", lw=1, label="range over the runs"),
        Line2D([], [], marker="o", ls="", color="white", mec="black", mew=1.8, ms=7,
               label="lowest mean"),
    ]  # fmt: skip
    if title:
        fig.suptitle(title, fontsize=10)
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    save_figure(fig, path)
    out = pd.concat(stats, ignore_index=True) if stats else pd.DataFrame()
    return out[["metric", "method", "mean", "se", "min", "max", "count"]] if stats else out


def plan_figure(table: pd.DataFrame) -> Any:
    """Draw a plan: expected error against users, for each oracle.

    The raw estimates' error (dashed, exactly proportional to ``1/n``) and the simulated
    error after the recommended post-processing (solid, one marker per simulated user
    count, from ``table.attrs["curve"]``), with the target error when the plan had one.

    Parameters
    ----------
    table : pandas.DataFrame
        As :func:`bayesldp.plan` returns it.

    Returns
    -------
    matplotlib.figure.Figure
        One panel, both axes logarithmic.
    """
    from bayesldp.oracles import ORACLES

    fig, axes = new_figure(1, 1, width=6.5, row_height=4.2)
    ax = axes[0, 0]
    curve = table.attrs.get("curve", pd.DataFrame(columns=["oracle", "users", "post_mse"]))
    users = pd.concat([table["users"], curve["users"]]).astype(float)
    span = np.geomspace(users.min() / 2, users.max() * 2, 50)
    colours = {name: f"C{i % 10}" for i, name in enumerate(ORACLES)}
    for oracle, rows in table.groupby("oracle", sort=False):
        colour = colours.get(str(oracle), "k")
        per_user = float((rows["raw_mse"] * rows["users"]).iloc[0])
        ax.plot(span, per_user / span, ls="--", lw=1, color=colour)
        points = curve[curve["oracle"] == oracle].sort_values("users")
        ax.plot(points["users"], points["post_mse"], "o-", ms=3, color=colour,
                label=f"{oracle} ({int(rows['report_bits'].iloc[0])} bits)")  # fmt: skip
    if "target" in table:
        ax.axhline(float(table["target"].iloc[0]), color="k", lw=0.8, ls=":", label="target")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("users")
    ax.set_ylabel(f"expected squared error ({table.attrs.get('query', 'query')})")
    title = "dashed: raw estimates; solid: recommended post-processing (simulated)"
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
