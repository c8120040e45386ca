"""Plots drawn from saved results only (no computation here)."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from bayesldp.io import atomic_open  # noqa: E402


def save_figure(fig, path: str | os.PathLike) -> None:
    """Save ``fig`` atomically (format from the suffix) and close it."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format=fmt, dpi=120)
    plt.close(fig)


def plot_demo(summary: pd.DataFrame, path: str | os.PathLike, title: str = "") -> None:
    """Bar chart of full-domain, set-value and top-k MSE per method (log scale)."""
    panels = [("mse", "full-domain MSE"), ("set_mse", "50% set MSE"), ("topk_mse", "top-10 MSE")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=False)
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
