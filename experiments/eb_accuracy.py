"""Accuracy and interval coverage of ``eb-npmle`` against ``oracle-bayes``, power-ns and norm-sub.

For each dataset (Zipf s = 1.5, d = 1024, n = 1e6; wordfreq, d = 42178, n = 1e6; US
cities, d = 976, n = 1.53e6), each epsilon and each repetition, one OUE measurement is
simulated and every method is applied to it:

* ``eb-npmle`` (the default settings), and two variants that support claims in
  ``paper/eb.md``: ``eb-npmle-gaussian`` (Gaussian likelihood with the count-dependent
  variance) and ``eb-npmle-raw-total`` (no correction of the known total noise);
* ``oracle-bayes`` (the true count histogram as the prior: a reference, not a method);
* ``power-ns`` and ``norm-sub``;
* ``bayes-consistent`` (PyMC, slow) on the first ``--bayes-reps`` repetitions only.

Metrics: full-domain MSE; the same over all but the 10 largest items (``mse_rest``);
50% and 90% set-value MSE (``--queries`` random sets each, the same sets for every
method); top-10 MSE; seconds. For ``eb-npmle`` (parametric-bootstrap draws), its
plug-in draws (``eb-npmle-plugin``) and ``oracle-bayes``: whether equal-tailed 90%
intervals cover the truth, for ``--coverage-sets`` random 10% and 50% subsets and for
each of the 10 largest items.

Seeds: the measurement of (dataset, epsilon, repetition) comes from
``SeedSequence(seed, spawn_key=(crc32(dataset), round(1000 * epsilon), rep))``, so a
cell's data do not depend on which other cells run. Each repetition's rows are written
atomically to ``OUT/parts/`` (``bayes-consistent``'s to a file of their own), so an
interrupted run resumes where it stopped; the summary tables are rebuilt from all parts.

Run ``python experiments/eb_accuracy.py --reps 30 --out paper/results/eb``.
"""

from __future__ import annotations

import argparse
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

import bayesldp
from bayesldp import datasets, metrics
from bayesldp import empirical_bayes as eb
from bayesldp.io import markdown_table, write_csv

DATASETS = {
    "zipf": lambda: datasets.zipf(1.5, 1024, 1_000_000, rng=0),
    "wordfreq": datasets.wordfreq_words,
    "us_cities": datasets.us_cities,
}
METHODS = (
    "eb-npmle",
    "oracle-bayes",
    "power-ns",
    "norm-sub",
    "eb-npmle-gaussian",
    "eb-npmle-raw-total",
)
COVERAGE = ("eb-npmle", "eb-npmle-plugin", "oracle-bayes")


def cell_seed(seed: int, dataset: str, eps: float, rep: int) -> np.random.SeedSequence:
    """The seed of one repetition of one (dataset, epsilon) cell."""
    return np.random.SeedSequence(
        seed, spawn_key=(zlib.crc32(dataset.encode()), round(eps * 1000), rep)
    )


def _estimate(method: str, m, data, rep: int, args: argparse.Namespace):
    if method == "eb-npmle":
        return eb.eb_npmle(m, n_draws=args.n_draws, n_boot=args.n_boot, rng=rep)
    if method == "eb-npmle-gaussian":
        return eb.eb_npmle(m, likelihood="gaussian", uncertainty="plug-in", rng=rep)
    if method == "eb-npmle-raw-total":
        return eb.eb_npmle(m, correct_total=False, uncertainty="plug-in", rng=rep)
    if method == "oracle-bayes":
        return eb.oracle_bayes(m, true_counts=data.counts, n_draws=args.n_draws, rng=rep)
    if method == "bayes-consistent":
        return bayesldp.postprocess(m, method, random_seed=rep)
    return bayesldp.postprocess(m, method)


def _coverage(est, truth, masks10, masks50, top, prob=0.9) -> dict[str, float]:
    draws = est.uncertainty.sample(0, est.uncertainty.n_draws)
    q = [(1 - prob) / 2, (1 + prob) / 2]
    out = {}
    for name, masks in (("cover_10pct", masks10), ("cover_50pct", masks50)):
        hits = []
        for mask in masks:
            lo, hi = np.quantile(draws[:, mask].sum(axis=1), q)
            hits.append(lo <= truth[mask].sum() <= hi)
        out[name] = float(np.mean(hits))
    lo, hi = np.quantile(draws[:, top], q, axis=0)
    out["cover_top10"] = float(np.mean((lo <= truth[top]) & (truth[top] <= hi)))
    return out


def run_rep(args, name: str, data, eps: float, rep: int, methods) -> list[dict]:
    """One repetition of one cell: tidy rows (dataset, epsilon, rep, method, metric, value)."""
    truth = data.frequencies
    seq = cell_seed(args.seed, name, eps, rep)
    m_seq, q_seq = seq.spawn(2)
    m = bayesldp.OUE(epsilon=eps, domain_size=data.d).simulate(
        data.counts, np.random.default_rng(m_seq)
    )
    query_seed = int(np.random.default_rng(q_seq).integers(2**62))
    top = np.lexsort((np.arange(data.d), -truth))[:10]
    rest = np.setdiff1d(np.arange(data.d), top)
    rows = []

    def add(method, metric, value):
        rows.append(
            {"dataset": name, "d": data.d, "n": data.n, "epsilon": eps, "rep": rep,
             "method": method, "metric": metric, "value": float(value)}
        )  # fmt: skip

    for method in methods:
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                est = _estimate(method, m, data, rep, args)
            except RuntimeError:
                if method == "eb-npmle":
                    raise
                add(method, "failed", 1)  # eb-npmle-raw-total: the tilt can be infeasible
                continue
        add(method, "seconds", time.perf_counter() - start)
        add(method, "warnings", len(caught))
        f = est.frequencies
        add(method, "mse", metrics.mse(truth, est))
        add(method, "mse_rest", np.mean((f[rest] - truth[rest]) ** 2) * rest.size / data.d)
        add(method, "top10_mse", metrics.topk_mse(truth, est, 10))
        for pct in (50, 90):
            qrng = np.random.default_rng(query_seed)
            add(
                method, f"set_mse_{pct}", metrics.set_value_mse(truth, est, pct, qrng, args.queries)
            )
        if args.coverage_sets and method in ("eb-npmle", "oracle-bayes"):
            crng = np.random.default_rng(query_seed + 1)
            masks10 = metrics.random_subsets(data.d, 10, args.coverage_sets, crng)
            masks50 = metrics.random_subsets(data.d, 50, args.coverage_sets, crng)
            start = time.perf_counter()
            for metric, value in _coverage(est, truth, masks10, masks50, top).items():
                add(method, metric, value)
            add(method, "seconds_draws", time.perf_counter() - start)
            if method == "eb-npmle":
                plug = eb.eb_npmle(m, uncertainty="plug-in", n_draws=args.n_draws, rng=rep)
                for metric, value in _coverage(plug, truth, masks10, masks50, top).items():
                    add("eb-npmle-plugin", metric, value)
        if method == "eb-npmle":
            for key in ("grid_size", "support_size", "tilt_shift_sigma", "gap", "iterations"):
                add(method, key, est.info[key])
    return rows


def summarise(frame: pd.DataFrame, out: Path) -> pd.DataFrame:
    """Write runs.csv, summary.csv, targets.csv, coverage.csv and summary.md."""
    write_csv(out / "runs.csv", frame)
    keys = ["dataset", "epsilon", "method", "metric"]
    summary = frame.groupby(keys)["value"].agg(["mean", "std", "count"]).reset_index()
    write_csv(out / "summary.csv", summary)
    wide = frame.pivot_table(
        index=["dataset", "epsilon", "rep"], columns=["method", "metric"], values="value"
    )
    rows = []
    for (name, eps), cell in wide.groupby(level=[0, 1]):
        row = {"dataset": name, "epsilon": eps, "reps": len(cell)}
        ebm = cell[("eb-npmle", "mse")]
        row["eb-npmle"] = ebm.mean()
        for other in ("oracle-bayes", "power-ns", "norm-sub", "bayes-consistent"):
            if (other, "mse") not in cell or cell[(other, "mse")].isna().all():
                continue
            col = cell[(other, "mse")]
            both = col.notna()
            row[other] = col.mean()
            row[f"eb/{other}"] = ebm[both].mean() / col[both].mean()
            row[f"eb lower ({other})"] = f"{int((ebm[both] < col[both]).sum())}/{int(both.sum())}"
        row["eb/oracle, all but top 10"] = (
            cell[("eb-npmle", "mse_rest")].mean() / cell[("oracle-bayes", "mse_rest")].mean()
        )
        for pct in (50, 90):
            a, b = cell[("eb-npmle", f"set_mse_{pct}")], cell[("power-ns", f"set_mse_{pct}")]
            row[f"set {pct}%: eb/power-ns"] = a.mean() / b.mean()
        for variant in ("eb-npmle-gaussian", "eb-npmle-raw-total"):
            if (variant, "mse") in cell:
                ok = cell[(variant, "mse")].notna()
                row[f"{variant}/eb"] = cell[(variant, "mse")][ok].mean() / ebm[ok].mean()
            if (variant, "failed") in cell:
                row[f"{variant} failed"] = int(cell[(variant, "failed")].fillna(0).sum())
        rows.append(row)
    targets = pd.DataFrame(rows)
    write_csv(out / "targets.csv", targets)
    cov = summary[summary["metric"].str.startswith("cover_")]
    coverage = cov.pivot_table(
        index=["dataset", "epsilon", "method"], columns="metric", values="mean"
    ).reset_index()
    write_csv(out / "coverage.csv", coverage)
    table = targets.copy()
    for col in table.columns:
        if table[col].dtype.kind == "f" and col not in ("epsilon",):
            is_ratio = "/" in col
            table[col] = table[col].map(lambda v, r=is_ratio: f"{v:.3f}" if r else f"{v:.3g}")
    with open(out / "summary.md.tmp", "w") as fh:
        fh.write("## Full-domain MSE (means over repetitions) and ratios\n\n")
        fh.write(markdown_table(table) + "\n\n## Coverage of 90% intervals\n\n")
        fh.write(markdown_table(coverage) + "\n")
    (out / "summary.md.tmp").replace(out / "summary.md")
    return targets


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--out", default="paper/results/eb")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=int, default=100, help="random sets per set size")
    parser.add_argument("--coverage-sets", type=int, default=50, help="0 skips coverage")
    parser.add_argument("--n-draws", type=int, default=1000)
    parser.add_argument("--n-boot", type=int, default=40)
    parser.add_argument("--bayes-reps", type=int, default=0, help="bayes-consistent runs per cell")
    parser.add_argument(
        "--bayes-only", action="store_true", help="only the bayes-consistent runs (--bayes-reps)"
    )
    parser.add_argument("--summary-only", action="store_true", help="only rebuild the tables")
    parser.add_argument("--quiet", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run (or resume) the study and write its tables; return the targets table."""
    args = build_parser().parse_args(argv)
    out = Path(args.out)
    parts = out / "parts"
    jobs = [
        (name, eps, rep) for name in args.datasets for eps in args.eps for rep in range(args.reps)
    ]
    if not args.summary_only:
        loaded: dict[str, object] = {}
        for name, eps, rep in tqdm(jobs, desc="repetitions", disable=args.quiet):
            stem = f"{name}_eps{eps:g}_rep{rep:03d}"
            todo = []
            if not args.bayes_only and not (parts / f"{stem}.csv").exists():
                todo.append((parts / f"{stem}.csv", METHODS))
            if rep < args.bayes_reps and not (parts / f"{stem}_bayes.csv").exists():
                todo.append((parts / f"{stem}_bayes.csv", ("bayes-consistent",)))
            for path, methods in todo:
                if name not in loaded:
                    loaded[name] = DATASETS[name]()
                rows = run_rep(args, name, loaded[name], eps, rep, methods)
                write_csv(path, pd.DataFrame(rows))
    files = sorted(parts.glob("*.csv"))
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    frame = frame[frame["dataset"].isin(args.datasets) & frame["epsilon"].isin(args.eps)]
    frame = frame[frame["rep"] < args.reps]
    targets = summarise(frame, out)
    if not args.quiet:
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(targets.to_string(float_format="{:.4g}".format))
    return targets


if __name__ == "__main__":
    main()
