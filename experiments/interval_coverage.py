"""Coverage of 90% intervals for every method, over repeated simulated runs.

For each dataset, epsilon and repetition the oracle (OUE by default) is simulated once
and every method is applied to the same measurement. For each method and each interval
kind it offers (``normal``, ``bootstrap``, ``percentile``, ``posterior``), the script
records how many of these intervals contain the true frequency:

- ``set10``, ``set50``: random sets of 10% and 50% of the domain
  (:func:`bayesldp.metrics.random_subsets`, ``--queries`` of each);
- ``top1`` .. ``top10``: each of the ten most frequent items (by true frequency);
- ``item``: ``--queries`` items drawn uniformly from the domain (mostly the tail, where
  clipped methods answer 0), split by whether the API warns for them (``flagged``).

One file per (dataset, epsilon, repetition) is written atomically to ``OUT/parts``, so an
interrupted run resumes; ``OUT/results.csv`` and ``OUT/summary.csv`` are then rebuilt
from the parts. Seeds come from ``numpy.random.SeedSequence([seed, crc32(dataset),
round(1000 eps), rep])``.

Run ``python experiments/interval_coverage.py --reps 30 --out paper/results/intervals/coverage``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
import zlib
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets, intervals, metrics
from bayesldp.io import atomic_open, markdown_table, write_csv, write_json
from bayesldp.registry import get_method, method_names

logger = logging.getLogger("interval_coverage")

#: Every NumPy method with a vectorised bootstrap (ibu is re-run one replicate at a time).
DEFAULT_METHODS = tuple(m for m in method_names(bayesian=False) if m != "ibu")
DATASETS = ("zipf", "wordfreq", "us_cities")
_NOT_SETTING = {"reps", "out", "quiet", "bayes_reps"}


@cache
def load(name: str) -> datasets.Dataset:
    """The dataset at the setting of the task (Zipf s 1.5, d 1024, n 1e6; real data)."""
    if name == "zipf":
        return datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    if name == "wordfreq":
        return datasets.wordfreq_words()
    if name == "us_cities":
        return datasets.us_cities()
    return datasets.get_dataset(name)


def seeds(seed: int, dataset: str, eps: float, rep: int) -> list[np.random.SeedSequence]:
    """Independent streams for the simulation, the queries and the bootstrap."""
    root = np.random.SeedSequence([seed, zlib.crc32(dataset.encode()), round(1000 * eps), rep])
    return root.spawn(3)


def queries(d: int, truth: np.ndarray, n_queries: int, rng) -> dict[str, np.ndarray]:
    """Boolean masks of every query set, by query type."""
    out = {
        "set10": metrics.random_subsets(d, 10, n_queries, rng),
        "set50": metrics.random_subsets(d, 50, n_queries, rng),
    }
    top = np.lexsort((np.arange(d), -truth))[:10]
    for rank, item in enumerate(top, start=1):
        mask = np.zeros((1, d), dtype=bool)
        mask[0, item] = True
        out[f"top{rank}"] = mask
    items = rng.choice(d, size=min(n_queries, d), replace=False)
    singles = np.zeros((items.size, d), dtype=bool)
    singles[np.arange(items.size), items] = True
    out["item"] = singles
    return out


def run_rep(args: argparse.Namespace, dataset: str, eps: float, rep: int) -> list[dict]:
    """One repetition: coverage counts for every method, interval kind and query type."""
    data = load(dataset)
    truth = data.frequencies
    sim, qseq, bseq = seeds(args.seed, dataset, eps, rep)
    oracle = bayesldp.make_oracle(args.oracle, eps, data.d)
    m = oracle.simulate(data.counts, np.random.default_rng(sim))
    sets = queries(data.d, truth, args.queries, np.random.default_rng(qseq))
    boot_seed = int(bseq.generate_state(1)[0])
    methods = list(args.methods)
    if args.bayes and rep < args.bayes_reps:
        methods += args.bayes
    rows = []
    for method in methods:
        spec = get_method(method)
        options = {"rng": boot_seed} if spec.accepts("rng") else {}
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = bayesldp.postprocess(m, method, **options)
        fit_seconds = time.perf_counter() - start
        boot = None
        if "bootstrap" in intervals.available_intervals(est):
            boot = est.bootstrap(args.replicates, rng=boot_seed)
            start = time.perf_counter()
            boot.sample(0, 1)  # compute (and cache) every replicate, timed
            boot_seconds = time.perf_counter() - start
        names = list(sets)
        stacked = np.concatenate([sets[q] for q in names])
        bounds = np.cumsum([0] + [sets[q].shape[0] for q in names])
        value = stacked.astype(np.float64) @ truth
        for kind in intervals.available_intervals(est):
            lo, hi, used = intervals.set_intervals(
                est, stacked, args.prob, kind, warn=False, bootstrap=boot
            )
            covered = (lo <= value) & (value <= hi)
            note = intervals.flagged_sets(est, stacked, used)
            for i, query in enumerate(names):
                sl = slice(bounds[i], bounds[i + 1])
                rows.append({
                    "dataset": dataset, "oracle": args.oracle, "epsilon": eps, "rep": rep,
                    "method": method, "kind": used, "query": query, "n": int(sl.stop - sl.start),
                    "covered": int(covered[sl].sum()), "width": float(np.mean(hi[sl] - lo[sl])),
                    "flagged": int(note[sl].sum()),
                    "covered_flagged": int(covered[sl][note[sl]].sum()),
                    "fit_seconds": fit_seconds,
                    "bootstrap_seconds": boot_seconds if boot is not None else np.nan,
                    "vectorised": boot.info["vectorised"] if boot is not None else None,
                })  # fmt: skip
    return rows


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage (covered / n over all runs), mean width, flagged share, per cell."""
    keys = ["dataset", "oracle", "epsilon", "method", "kind", "query"]
    g = frame.groupby(keys, sort=False)
    out = g[["n", "covered", "flagged", "covered_flagged"]].sum()
    out["runs"] = g["rep"].nunique()
    out["coverage"] = out["covered"] / out["n"]
    unflagged = out["n"] - out["flagged"]
    out["coverage_unflagged"] = (out["covered"] - out["covered_flagged"]) / unflagged.where(
        unflagged > 0
    )
    out["width"] = g["width"].mean()
    out["bootstrap_seconds"] = g["bootstrap_seconds"].mean()
    return out.reset_index()


def tables(summary: pd.DataFrame) -> str:
    """Markdown tables: coverage by method and interval kind, one table per dataset.

    Columns: random 10% and 50% sets, the top 10 items pooled, random single items
    (all, and those the API does not warn for), the mean width of the set intervals,
    and the number of runs.
    """
    parts = []
    for (dataset, eps), block in summary.groupby(["dataset", "epsilon"], sort=False):
        pooled = block.assign(query=block["query"].where(~block["query"].str.startswith("top"),
                                                         "top10"))  # fmt: skip
        g = pooled.groupby(["method", "kind", "query"], sort=False)[
            ["covered", "n", "flagged", "covered_flagged"]
        ].sum()
        cov = (g["covered"] / g["n"]).unstack("query")
        unflag = ((g["covered"] - g["covered_flagged"]) / (g["n"] - g["flagged"])).unstack()
        share = (g["flagged"] / g["n"]).unstack()
        width = block.groupby(["method", "kind", "query"], sort=False)["width"].mean().unstack()
        runs = block.groupby(["method", "kind"], sort=False)["runs"].max()
        table = pd.DataFrame({
            "set10": cov["set10"], "set50": cov["set50"], "top10": cov["top10"],
            "item": cov["item"], "item, not warned": unflag["item"],
            "items warned": share["item"], "sets warned": share["set10"],
            "width set10": width["set10"], "width set50": width["set50"], "runs": runs,
        }).reset_index()  # fmt: skip
        parts.append(f"### {dataset}, eps = {eps:g}\n\n{markdown_table(table)}\n")
        ranks = block[block["query"].str.startswith("top")]
        per_rank = ranks.pivot_table(index=["method", "kind"], columns="query", values="coverage",
                                     sort=False)  # fmt: skip
        per_rank = per_rank[[f"top{r}" for r in range(1, 11) if f"top{r}" in per_rank]]
        parts.append(f"Each of the top 10 items ({dataset}, eps = {eps:g}):\n\n"
                     f"{markdown_table(per_rank.reset_index())}\n")  # fmt: skip
    return "\n".join(parts)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS))
    ap.add_argument("--bayes", nargs="*", default=[], help="Bayesian methods to add")
    ap.add_argument("--bayes-reps", type=int, default=10, help="repetitions with --bayes")
    ap.add_argument("--oracle", default="OUE")
    ap.add_argument("--queries", type=int, default=100, help="random sets per size")
    ap.add_argument("--replicates", type=int, default=200, help="bootstrap replicates")
    ap.add_argument("--prob", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="paper/results/intervals/coverage")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run (or resume) every repetition, then write results.csv and summary.csv."""
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO)
    out = Path(args.out)
    parts = out / "parts"
    setting = {k: v for k, v in vars(args).items() if k not in _NOT_SETTING}
    recorded = out / "setting.json"
    if recorded.exists():
        before = json.loads(recorded.read_text())
        if before != json.loads(json.dumps(setting)):
            raise ValueError(f"{out} holds runs of another setting ({before}); use a new --out")
    else:
        write_json(recorded, setting)
    files = []
    for dataset in args.datasets:
        for eps in args.eps:
            for rep in range(args.reps):
                part = parts / f"{dataset}_eps{eps:g}_rep{rep:03d}.csv"
                files.append(part)
                if part.exists():
                    continue
                start = time.perf_counter()
                write_csv(part, pd.DataFrame(run_rep(args, dataset, eps, rep)))
                logger.info("%s eps=%g rep %d: %.1f s", dataset, eps, rep,
                            time.perf_counter() - start)  # fmt: skip
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    write_csv(out / "results.csv", frame)
    summary = summarise(frame)
    write_csv(out / "summary.csv", summary)
    with atomic_open(out / "tables.md") as fh:
        fh.write(tables(summary))
    versions = {"bayesldp": bayesldp.__version__, "numpy": np.__version__}
    write_json(out / "versions.json", versions)
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.exit(0)
