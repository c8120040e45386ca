"""Plots drawn from saved results only (no computation here).

Figures are built with :class:`matplotlib.figure.Figure` directly, without pyplot, so
plotting never changes the user's backend or opens a window.
"""

from __future__ import annotations

import os

import pandas as pd
from matplotlib.figure import Figure

from bayesldp.io import atomic_open


def save_figure(fig, path: str | os.PathLike) -> None:
    """Save ``fig`` atomically, in the format its suffix names."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, dpi=120)


def plot_demo(summary: pd.DataFrame, path: str | os.PathLike, title: str = "") -> None:
    """Bar chart of full-domain, set-value and top-k MSE per method (log scale)."""
    panels = [("mse", "full-domain MSE"), ("set_mse", "50% set MSE"), ("topk_mse", "top-10 MSE")]
    fig = Figure(figsize=(15, 4.8))
    axes = fig.subplots(1, 3)
    for ax, (column, label) in zip(axes, panels, strict=True):
        values = summary[column].to_numpy()
        best = values.argmin()
        colors = ["tab:green" if i == best else "tab:blue" for i in range(len(values))]
        ax.barh(summary["method"], values, color=colors)
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.invert_yaxis()
        ax.grid(axis="x", which="both", alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)
