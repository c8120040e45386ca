"""Accuracy and interval calibration of the Bayesian methods over repeated runs.

Zipf s = 1.5, d = 1024, n = 1e6, epsilon = 1, OUE (the papers' setting). Each
repetition simulates the oracle once and applies every method; it records full-domain
MSE, 50% and 90% set-value MSE, top-10 MSE, and, for methods with posterior draws,
whether 90% credible intervals cover the truth for random 10% and 50% subsets and for
each of the top-10 values. Repetitions are written as separate files (atomically), so
an interrupted run resumes where it stopped.

Run ``python experiments/bayes_accuracy.py --reps 30``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.io import write_csv, write_json

METHODS = ("norm-sub", "norm-hyb", "power", "power-ns", "bayes-power", "bayes-consistent")
BAYES = {"bayes-power", "bayes-power-zi", "bayes-consistent"}
# Options that do not change a repetition's rows (the rest must match to resume).
_NOT_SETTING = {"reps", "reverse", "quiet", "out"}


def run_rep(args: argparse.Namespace, rep: int) -> list[dict]:
    """One repetition: rows of (rep, method, metric, value)."""
    data = datasets.zipf(args.s, args.d, args.n, rng=args.seed)
    truth = data.frequencies
    rng = np.random.default_rng([args.seed, rep])
    m = bayesldp.make_oracle(args.oracle, args.epsilon, args.d).simulate(data.counts, rng)
    query_seed = int(rng.integers(2**31))
    top10 = np.argsort(-truth, kind="stable")[:10]
    rows = []
    for method in args.methods:
        options = {}
        if method in BAYES:
            options = {"rng": rep, "draws": args.draws, "tune": args.tune}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = bayesldp.postprocess(m, method, **options)
        values = {
            "mse": metrics.mse(truth, est),
            "set_mse_50": metrics.set_value_mse(
                truth, est, 50, np.random.default_rng(query_seed), args.queries
            ),
            "set_mse_90": metrics.set_value_mse(
                truth, est, 90, np.random.default_rng(query_seed), args.queries
            ),
            "top10_mse": metrics.topk_mse(truth, est, 10),
        }
        if est.uncertainty is not None:
            qrng = np.random.default_rng(query_seed + 1)
            for pct in (10, 50):
                masks = metrics.random_subsets(args.d, pct, args.queries, qrng)
                hits = [
                    lo <= truth[mk].sum() <= hi
                    for mk in masks
                    for lo, hi in [est.interval(mk, 0.9)]
                ]
                values[f"cover90_set{pct}"] = float(np.mean(hits))
            hits = [lo <= truth[i] <= hi for i in top10 for lo, hi in [est.interval([i], 0.9)]]
            values["cover90_top10"] = float(np.mean(hits))
            values["r_hat_max"] = max(est.info["r_hat"].values())
            values["seconds"] = sum(v for k, v in est.info.items() if k.startswith("seconds"))
        for metric, value in values.items():
            rows.append({"rep": rep, "method": method, "metric": metric, "value": value,
                         "warnings": len(caught)})  # fmt: skip
    return rows


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run (or resume) the repetitions; write parts, the tidy table and a summary."""
    out = Path(args.out)
    parts = out / "parts"
    setting = {k: v for k, v in vars(args).items() if k not in _NOT_SETTING}
    setting["bayesldp"] = bayesldp.__version__
    recorded = out / "setting.json"
    if recorded.exists():
        before = json.loads(recorded.read_text())
        if before != json.loads(json.dumps(setting, default=str)):
            raise ValueError(
                f"{out} holds repetitions of another setting ({before}); use a new --out"
            )
    else:
        write_json(recorded, setting)
    order = range(args.reps - 1, -1, -1) if args.reverse else range(args.reps)
    for rep in tqdm(order, desc="repetitions", disable=args.quiet):
        part = parts / f"rep{rep:03d}.csv"
        if part.exists():
            continue
        write_csv(part, pd.DataFrame(run_rep(args, rep)))
    missing = [r for r in range(args.reps) if not (parts / f"rep{r:03d}.csv").exists()]
    if missing:
        raise RuntimeError(f"repetitions {missing} are still running elsewhere; rerun to finish")
    frame = pd.concat([pd.read_csv(parts / f"rep{r:03d}.csv") for r in range(args.reps)])
    write_csv(out / "results.csv", frame)
    summary = frame.pivot_table(index="method", columns="metric", values="value", aggfunc="mean")
    summary = summary.reindex([m for m in args.methods if m in summary.index])
    write_csv(out / "summary.csv", summary.reset_index())
    checks = check_targets(frame)
    if not checks.empty:
        write_csv(out / "targets.csv", checks)
    (out / "config.json").write_text(
        json.dumps({**vars(args), "bayesldp": bayesldp.__version__}, indent=2, default=str)
    )
    return summary


def check_targets(frame: pd.DataFrame) -> pd.DataFrame:
    """The issue's targets, one row each: means, paired wins over the runs, met or not.

    bayes-consistent against the better (lower mean) of norm-hyb and power-ns on
    full-domain, 50% and 90% set-value MSE; bayes-power against power on full-domain
    MSE; and 90% interval coverage of each Bayesian method within 85-95%.
    """
    wide = frame.pivot_table(index="rep", columns=["method", "metric"], values="value")
    methods = set(wide.columns.get_level_values(0))
    rows = []

    def compare(ours: str, rivals: list[str], metric: str) -> None:
        rivals = [r for r in rivals if r in methods]
        if ours not in methods or not rivals:
            return
        best = min(rivals, key=lambda r: wide[(r, metric)].mean())
        a, b = wide[(ours, metric)], wide[(best, metric)]
        rows.append({"target": f"{ours} <= {best} on {metric}", "ours": a.mean(),
                     "theirs": b.mean(), "ratio": a.mean() / b.mean(),
                     "paired_wins": int((a <= b).sum()), "runs": int(a.notna().sum()),
                     "met": bool(a.mean() <= b.mean())})  # fmt: skip

    for metric in ("mse", "set_mse_50", "set_mse_90"):
        compare("bayes-consistent", ["norm-hyb", "power-ns"], metric)
    compare("bayes-power", ["power"], "mse")
    for method in sorted(methods & BAYES):
        for column in ("cover90_set10", "cover90_set50", "cover90_top10"):
            if (method, column) in wide:
                value = wide[(method, column)].mean()
                rows.append({"target": f"{method} {column} in [0.85, 0.95]", "ours": value,
                             "runs": int(wide[(method, column)].notna().sum()),
                             "met": bool(0.85 <= value <= 0.95)})  # fmt: skip
    return pd.DataFrame(rows)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--s", type=float, default=1.5)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--oracle", default="OUE")
    parser.add_argument("--queries", type=int, default=100, help="random subsets per size")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="paper/results/bayes_accuracy")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--reverse", action="store_true", help="last repetition first (a second worker)"
    )
    return parser


if __name__ == "__main__":
    table = main(build_parser().parse_args())
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(table.to_string())
