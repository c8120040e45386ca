"""Family-wise error rate and recall of the heavy-hitter rules, over repeated runs.

For each dataset, epsilon and repetition the oracle (OUE) is simulated once. Rules:

- ``holm``: :meth:`bayesldp.Estimate.heavy_hitters` for a frequentist method (Holm's
  step-down procedure on one-sided normal tests of the raw estimates, level ``alpha``);
- ``bonferroni``: the same tests at ``alpha / d`` each (RAPPOR's decoder);
- ``METHOD >= t``: the plain rule of the papers (an item is heavy when its estimate is
  at least the threshold) for each of ``--methods`` (``base`` is OUE, ``oue-zero`` is
  Calibrate's OUE-Zero, ``power`` is OUE-Calibrate);
- ``posterior:METHOD`` for Bayesian methods given with ``--bayes`` (probability of
  exceeding the threshold above ``1 - alpha``), on the first ``--bayes-reps`` runs.

Each is scored with :func:`bayesldp.metrics.heavy_hitters` (precision, recall, F; true
heavy hitters are the items with frequency at least the threshold) and by whether it
declared any item whose frequency is at most the threshold (a family-wise error; its
mean over the runs is the FWER). One file per (dataset, epsilon, repetition) is written
atomically to ``OUT/parts``; a rerun resumes. Seeds come from
``numpy.random.SeedSequence([seed, crc32(dataset), round(1000 eps), rep])``.

Run ``python experiments/heavy_hitter_fwer.py --reps 30`` (results in
``paper/results/intervals/heavy_hitters``).
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
from bayesldp import datasets, metrics
from bayesldp.io import atomic_open, markdown_table, write_csv, write_json
from bayesldp.registry import get_method

logger = logging.getLogger("heavy_hitter_fwer")

DEFAULT_METHODS = ("base", "oue-zero", "power", "power-ns", "norm-sub", "norm-hyb", "mle")
_NOT_SETTING = {"reps", "out", "quiet", "bayes_reps"}


@cache
def load(name: str) -> datasets.Dataset:
    """Zipf (s 1.5, d 1024, n 1e6) or a registered dataset at its defaults."""
    if name == "zipf":
        return datasets.zipf(1.5, 1024, 1_000_000, rng=0)
    if name == "wordfreq":
        return datasets.wordfreq_words()
    if name == "us_cities":
        return datasets.us_cities()
    return datasets.get_dataset(name)


def score(truth: np.ndarray, declared: np.ndarray, threshold: float) -> dict:
    """Precision, recall, F (metrics.heavy_hitters) and family-wise errors of a declared set."""
    predicted = np.zeros(truth.size)
    predicted[declared] = 1.0  # at or above any threshold in (0, 1]
    s = metrics.heavy_hitters(truth, predicted, threshold)
    false = int(np.sum(truth[declared] <= threshold))
    return {"precision": s.precision, "recall": s.recall, "f_score": s.f_score,
            "n_true": s.n_true, "n_predicted": s.n_predicted, "false_positives": false,
            "family_error": int(false > 0)}  # fmt: skip


def run_rep(args: argparse.Namespace, dataset: str, eps: float, rep: int) -> list[dict]:
    """One repetition: every rule at every threshold."""
    data = load(dataset)
    truth = data.frequencies
    root = np.random.SeedSequence([args.seed, zlib.crc32(dataset.encode()), round(1000 * eps), rep])
    sim, fit = root.spawn(2)
    m = bayesldp.make_oracle(args.oracle, eps, data.d).simulate(
        data.counts, np.random.default_rng(sim)
    )
    rows = []

    def add(rule: str, t: float, declared: np.ndarray, seconds: float = np.nan) -> None:
        at = int(np.sum(truth == t))  # items exactly at the threshold (both null and heavy)
        rows.append({"dataset": dataset, "oracle": args.oracle, "epsilon": eps, "rep": rep,
                     "threshold": t, "alpha": args.alpha, "rule": rule, "seconds": seconds,
                     "at_threshold": at, **score(truth, declared, t)})  # fmt: skip

    base = bayesldp.postprocess(m, "base")
    for t in args.thresholds:
        start = time.perf_counter()
        hh = base.heavy_hitters(t, args.alpha)
        add("holm", t, hh.indices, time.perf_counter() - start)
        add("bonferroni", t, np.flatnonzero(hh.p_values <= args.alpha / data.d))
    for method in args.methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = bayesldp.postprocess(m, method)
        for t in args.thresholds:
            add(f"{method} >= t", t, np.flatnonzero(est.frequencies >= t))
    if rep < args.bayes_reps:
        for method in args.bayes:
            options = (
                {"rng": int(fit.generate_state(1)[0])} if get_method(method).accepts("rng") else {}
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = bayesldp.postprocess(m, method, **options)
            for t in args.thresholds:
                hh = est.heavy_hitters(t, args.alpha)
                add(f"posterior:{method}", t, hh.indices)
                add(f"{method} >= t", t, np.flatnonzero(est.frequencies >= t))
    return rows


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """FWER (share of runs with a family-wise error), mean precision, recall and F."""
    keys = ["dataset", "oracle", "epsilon", "threshold", "rule"]
    g = frame.groupby(keys, sort=False)
    out = g.agg(runs=("rep", "nunique"), fwer=("family_error", "mean"),
                precision=("precision", "mean"), recall=("recall", "mean"),
                f_score=("f_score", "mean"), n_true=("n_true", "mean"),
                n_predicted=("n_predicted", "mean"),
                false_positives=("false_positives", "mean"))  # fmt: skip
    return out.reset_index()


def tables(summary: pd.DataFrame) -> str:
    """Markdown tables, one per dataset and epsilon: each rule's FWER / recall / precision / F
    at every threshold."""
    parts = []
    for (dataset, eps), block in summary.groupby(["dataset", "epsilon"], sort=False):
        cells = block.assign(cell=[
            f"{r.fwer:.2f} / {r.recall:.2f} / {r.precision:.2f} / {r.f_score:.2f}"
            for r in block.itertuples()
        ])  # fmt: skip
        wide = cells.pivot_table(index="rule", columns="threshold", values="cell",
                                 aggfunc="first", sort=False)  # fmt: skip
        wide.columns = [f"t = {c:g}" for c in wide.columns]
        runs = int(block["runs"].min())
        true = block.groupby("threshold")["n_true"].first()
        note = ", ".join(f"{n:g} at t = {t:g}" for t, n in true.items())
        parts.append(f"### {dataset}, eps = {eps:g} ({runs} runs; true heavy hitters: {note})"
                     f"\n\nFWER / recall / precision / F\n\n"
                     f"{markdown_table(wide.reset_index())}\n")  # fmt: skip
    return "\n".join(parts)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--datasets", nargs="+", default=["zipf", "wordfreq"])
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.001, 0.002, 0.005, 0.01])
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS))
    ap.add_argument("--bayes", nargs="*", default=[], help="Bayesian methods to add")
    ap.add_argument("--bayes-reps", type=int, default=10)
    ap.add_argument("--oracle", default="OUE")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="paper/results/intervals/heavy_hitters")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run (or resume) every repetition, then write results.csv and summary.csv."""
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO)
    out = Path(args.out)
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
                part = out / "parts" / f"{dataset}_eps{eps:g}_rep{rep:03d}.csv"
                files.append(part)
                if not part.exists():
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
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.exit(0)
