"""Why bootstrap intervals of clipping methods undercover: two diagnostics on Zipf.

1. ``worlds``: coverage of 90% basic (``bootstrap``) and ``percentile`` intervals when the
   replicates are simulated from different worlds: the method's own estimate (the
   default), Calibrate's power-law posterior mean (``power``), and the true frequencies
   (``truth``, which no analyst has: the bootstrap's best case). Queries as in
   ``interval_coverage.py``: random 10% and 50% sets, the top 10 items, random items.
2. ``items``: coverage of every single item's interval against how many noise standard
   deviations above 0 the method answers it (the rule behind the RuntimeWarning,
   ``bayesldp.intervals.RELIABLE_SIGMAS``).

Zipf s = 1.5, d = 1024, n = 1e6, OUE, eps = 1. Seeds from
``numpy.random.SeedSequence([seed, rep])``. One file per repetition, written atomically.

Run ``python experiments/bootstrap_diagnostics.py --reps 10``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets, intervals, metrics
from bayesldp.io import atomic_open, markdown_table, write_csv

METHODS = ("norm-sub", "norm-hyb", "mle", "base-pos", "power-ns")
BINS = [-np.inf, 1e-300, 1, 2, 4, 6, 8, np.inf]
LABELS = ["0", "(0, 1)", "[1, 2)", "[2, 4)", "[4, 6)", "[6, 8)", ">= 8"]


def run_rep(args: argparse.Namespace, rep: int) -> tuple[list[dict], list[dict]]:
    """Coverage counts by world, and per-item coverage with the item's z = answer / sd."""
    data = datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    truth, d = data.frequencies, data.d
    sim, qry = np.random.SeedSequence([args.seed, rep]).spawn(2)
    m = bayesldp.OUE(args.eps, d).simulate(data.counts, np.random.default_rng(sim))
    qrng = np.random.default_rng(qry)
    top = np.lexsort((np.arange(d), -truth))[:10]
    items = qrng.choice(d, 100, replace=False)
    sets = {
        "set10": metrics.random_subsets(d, 10, 100, qrng),
        "set50": metrics.random_subsets(d, 50, 100, qrng),
        "top10": np.eye(d, dtype=bool)[top],
        "item": np.eye(d, dtype=bool)[items],
    }
    worlds = {"own": None, "power": bayesldp.postprocess(m, "power").frequencies, "truth": truth}
    sd = np.sqrt(m.variance())
    world_rows, item_rows = [], []
    for method in args.methods:
        est = bayesldp.postprocess(m, method)
        for world, freqs in worlds.items():
            boot = intervals.ParametricBootstrap(est, args.replicates, rep, world=freqs)
            for kind in ("bootstrap", "percentile"):
                for query, masks in sets.items():
                    lo, hi, _ = intervals.set_intervals(
                        est, masks, 0.9, kind, warn=False, bootstrap=boot
                    )
                    v = masks.astype(float) @ truth
                    world_rows.append({"rep": rep, "method": method, "world": world,
                                       "kind": kind, "query": query, "n": v.size,
                                       "covered": int(((lo <= v) & (v <= hi)).sum())})  # fmt: skip
            if world == "own":
                lo, hi, _ = intervals.set_intervals(
                    est, np.eye(d, dtype=bool), 0.9, "bootstrap", warn=False, bootstrap=boot
                )
                z = est.frequencies / sd
                covered = (lo <= truth) & (truth <= hi)
                bins = pd.cut(z, BINS, right=False, labels=LABELS)
                for b in LABELS:
                    inside = np.asarray(bins == b)
                    item_rows.append({"rep": rep, "method": method, "z": str(b),
                                      "n": int(inside.sum()),
                                      "covered": int(covered[inside].sum())})  # fmt: skip
    return world_rows, item_rows


def main(argv: list[str] | None = None) -> None:
    """Run (or resume) the repetitions; write both tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="paper/results/intervals/diagnostics")
    args = ap.parse_args(argv)
    out = Path(args.out)
    for rep in range(args.reps):
        a, b = out / "parts" / f"worlds{rep:03d}.csv", out / "parts" / f"items{rep:03d}.csv"
        if not (a.exists() and b.exists()):
            worlds, items = run_rep(args, rep)
            write_csv(a, pd.DataFrame(worlds))
            write_csv(b, pd.DataFrame(items))
    worlds = pd.concat(pd.read_csv(out / "parts" / f"worlds{r:03d}.csv") for r in range(args.reps))
    items = pd.concat(pd.read_csv(out / "parts" / f"items{r:03d}.csv") for r in range(args.reps))
    g = worlds.groupby(["method", "world", "kind", "query"], sort=False)[["covered", "n"]].sum()
    wide = (g["covered"] / g["n"]).unstack("query").reset_index()
    h = items.groupby(["method", "z"], sort=False)[["covered", "n"]].sum()
    h["coverage"] = h["covered"] / h["n"]
    by_z = h["coverage"].unstack("z")
    by_z = by_z[[c for c in LABELS if c in by_z]]
    counts = h["n"].unstack("z")[by_z.columns]
    write_csv(out / "worlds.csv", wide)
    write_csv(out / "items_by_z.csv", h.reset_index())
    with atomic_open(out / "tables.md") as fh:
        fh.write(f"## Coverage by bootstrap world ({args.reps} runs)\n\n{markdown_table(wide)}\n\n")
        fh.write("## Single items: coverage of the basic bootstrap by answer / noise sd\n\n")
        fh.write(markdown_table(by_z.reset_index()) + "\n\nItems per cell:\n\n")
        fh.write(markdown_table(counts.reset_index()) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.exit(0)
