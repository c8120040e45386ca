"""Coverage of 90% credible intervals of the Bayesian methods (subset sums, top-10).

Reads the repetitions of ``experiments/bayes_accuracy.py`` (running the missing ones
first, resumably) and reports, per method, how often the 90% interval covered the
truth for random 10% and 50% subsets and for the top-10 values; the target is 85-95%.
Writes ``coverage.csv`` and ``coverage.png``.

Run ``python experiments/bayes_calibration.py --reps 30``.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from bayesldp.io import write_csv
from bayesldp.plotting import save_figure

COLUMNS = ["cover90_set10", "cover90_set50", "cover90_top10"]


def _accuracy_module():
    path = Path(__file__).with_name("bayes_accuracy.py")
    spec = importlib.util.spec_from_file_location("bayes_accuracy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plot_coverage(table: pd.DataFrame, path: Path) -> None:
    """Bar chart of coverage per method and query type, with the 85-95% band."""
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    width = 0.8 / len(COLUMNS)
    for i, column in enumerate(COLUMNS):
        ax.bar([x + i * width for x in range(len(table))], table[column], width, label=column)
    ax.axhspan(0.85, 0.95, color="green", alpha=0.15, label="target 85-95%")
    ax.axhline(0.9, color="green", lw=1)
    ax.set_xticks([x + width for x in range(len(table))], table["method"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("coverage of 90% intervals")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path)


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run or resume the repetitions and summarise interval coverage."""
    accuracy = _accuracy_module()
    acc_args = accuracy.build_parser().parse_args(
        ["--reps", str(args.reps), "--out", args.out, "--d", str(args.d), "--n", str(args.n),
         "--draws", str(args.draws), "--tune", str(args.tune), "--quiet"]
        + (["--methods", *args.methods] if args.methods else [])
    )  # fmt: skip
    accuracy.main(acc_args)
    frame = pd.read_csv(Path(args.out) / "results.csv")
    cover = frame[frame["metric"].isin(COLUMNS)]
    table = cover.pivot_table(index="method", columns="metric", values="value", aggfunc="mean")
    table = table.reset_index()
    write_csv(Path(args.out) / "coverage.csv", table)
    plot_coverage(table, Path(args.out) / "coverage.png")
    return table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument(
        "--methods", nargs="+", default=None, help="default: bayes_accuracy.py's methods"
    )
    parser.add_argument("--out", default="paper/results/bayes_accuracy")
    return parser


if __name__ == "__main__":
    print(main(build_parser().parse_args()).to_string(index=False))
