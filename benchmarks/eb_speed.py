"""Speed of ``eb-npmle``, and its three NPMLE solvers side by side.

Two parts, one command each.

``speed`` (wordfreq by default: d = 42178, n = 1e6; ``--data zipf`` for Zipf 1.5 with
``--d`` items and ``--n`` users). Each repetition simulates a fresh OUE measurement
(eps = 1 by default) and times, in this process and in turn:

* ``np.sort`` of the raw estimates (the scale of "linear" work on this d),
* ``eb_npmle(m)``, everything included: the grid, the corrected counts, the likelihood
  matrix, the NPMLE (active-set SQP), the tilt and the posterior means,
* ``power-ns`` on the same measurement,
* ``oracle_bayes`` (reference),
* the first ``uncertainty.sample(0, n_draws)`` of the estimate (the parametric
  bootstrap's refits of the prior and the draws of the frequencies; lazy, paid only
  when intervals are asked for), unless ``--no-draws``.

The table (one row per repetition and task, with the load average at the start of the
repetition) goes to ``--out``/eb_speed.csv and a summary (min and median per task, and
ratios to ``np.sort`` and ``power-ns``) to eb_speed_summary.csv.

``solvers``: on one OUE measurement (eps = 1) of Zipf 1.5 for each ``--sizes`` d
(n = 1e6 for d = 1024, else ``--n``), the same likelihood matrix (grid, corrected
counts) is handed to every solver (active-set SQP, SQUAREM-accelerated EM stopped after
``--em-iter`` EM-map evaluations, cvxpy with Clarabel); the table gives wall time,
iterations, the relative KKT gap (``max_k S_k / d - 1``), the log-likelihood's shortfall
from the best, the atoms with weight, and the largest difference of the tilted
posterior means from the SQP's (in noise standard deviations). It goes to
``--out``/eb_solvers.csv.

Run ``python benchmarks/eb_speed.py speed`` (``--repeat 7`` by default) or
``python benchmarks/eb_speed.py solvers``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets
from bayesldp._io import write_csv
from bayesldp.empirical_bayes import (
    count_grid,
    count_likelihood,
    eb_npmle,
    npmle,
    oracle_bayes,
    tilted_posterior,
)
from bayesldp.empirical_bayes._likelihood import total_corrected_counts


def timed(func: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``func``; return its result and wall time."""
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (one sub-command per part)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part", required=True)
    speed = parts.add_parser("speed", help="time eb-npmle beside np.sort and power-ns")
    speed.add_argument("--data", choices=["wordfreq", "zipf"], default="wordfreq")
    speed.add_argument("--d", type=int, default=1024, help="items (--data zipf)")
    speed.add_argument("--n", type=int, default=1_000_000, help="users (--data zipf)")
    speed.add_argument("--repeat", type=int, default=7)
    speed.add_argument("--eps", type=float, default=1.0)
    speed.add_argument("--seed", type=int, default=0)
    speed.add_argument("--n-draws", type=int, default=1000, help="posterior draws timed")
    speed.add_argument("--no-draws", action="store_true", help="skip timing the draws")
    speed.add_argument("--out", type=Path, default=Path("benchmarks/results/eb"))
    solvers = parts.add_parser("solvers", help="the NPMLE solvers on the same problem")
    solvers.add_argument("--sizes", type=int, nargs="+", default=[200, 1024])
    solvers.add_argument("--n", type=int, default=20_000, help="users (d other than 1024)")
    solvers.add_argument("--em-iter", type=int, default=20_000)
    solvers.add_argument("--seed", type=int, default=2)
    solvers.add_argument("--out", type=Path, default=Path("benchmarks/results/eb"))
    return parser


def speed(args: argparse.Namespace) -> pd.DataFrame:
    """Time eb-npmle and its neighbours; save the table and its summary."""
    if args.data == "wordfreq":
        data = datasets.wordfreq_words()
    else:
        data = datasets.zipf(1.5, args.d, args.n, rng=args.seed)
    oracle = bayesldp.OUE(epsilon=args.eps, domain_size=data.d)
    seeds = np.random.SeedSequence(args.seed).spawn(args.repeat)
    rows = []
    for rep, seq in enumerate(seeds):
        load = os.getloadavg()[0]
        m = oracle.simulate(data.counts, np.random.default_rng(seq))
        _, t_sort = timed(lambda m=m: np.sort(m.estimates))
        est, t_eb = timed(lambda m=m, rep=rep: eb_npmle(m, n_draws=args.n_draws, rng=rep))
        _, t_pns = timed(lambda m=m: bayesldp.postprocess(m, "power-ns"))
        _, t_oracle = timed(lambda m=m: oracle_bayes(m, true_counts=data.counts))
        tasks = {"np.sort": t_sort, "eb-npmle": t_eb, "power-ns": t_pns, "oracle-bayes": t_oracle}
        if not args.no_draws:
            _, tasks[f"eb-npmle draws ({args.n_draws}, bootstrap)"] = timed(
                lambda est=est: est.uncertainty.sample(0, est.uncertainty.n_draws)
            )
        for task, seconds in tasks.items():
            rows.append(
                {
                    "rep": rep,
                    "task": task,
                    "seconds": seconds,
                    "d": data.d,
                    "n": m.n,
                    "epsilon": args.eps,
                    "load_average": load,
                    "grid_size": est.info["grid_size"],
                    "likelihood_rows": est.info["likelihood_rows"],
                    "support_size": est.info["support_size"],
                    "solver_iterations": est.info["iterations"],
                    "seconds_solver": est.info["seconds_solver"],
                }
            )
        print(
            f"rep {rep}: load {load:.2f}, " + ", ".join(f"{k} {v:.4f} s" for k, v in tasks.items()),
            flush=True,
        )
    frame = pd.DataFrame(rows)
    summary = frame.groupby("task", sort=False)["seconds"].agg(["min", "median", "max"])
    summary["median_over_np_sort"] = summary["median"] / summary.loc["np.sort", "median"]
    summary["median_over_power_ns"] = summary["median"] / summary.loc["power-ns", "median"]
    summary["load_average_median"] = float(frame["load_average"].median())
    summary["machine"] = f"{platform.machine()} {os.cpu_count()} cpus"
    write_csv(args.out / "eb_speed.csv", frame)
    write_csv(args.out / "eb_speed_summary.csv", summary.reset_index())
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(summary.to_string())
    return frame


def solvers(args: argparse.Namespace) -> pd.DataFrame:
    """Compare the NPMLE solvers on the same likelihood matrix; save the table."""
    rows = []
    for d in args.sizes:
        n = 1_000_000 if d == 1024 else args.n
        data = datasets.zipf(1.5, d, n, rng=args.seed)
        m = bayesldp.OUE(epsilon=1.0, domain_size=d).simulate(
            data.counts, np.random.default_rng(args.seed)
        )
        grid = count_grid(m)
        lik = count_likelihood(m, grid, counts=total_corrected_counts(m))
        fits = {}
        for label, kwargs in (
            ("sqp", {}),
            ("em", {"solver": "em", "max_iter": args.em_iter}),
            ("cvxpy (Clarabel)", {"solver": "cvxpy", "tol": 1e-10}),
        ):
            load = os.getloadavg()[0]
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                fits[label] = npmle(lik, **kwargs)
            seconds = time.perf_counter() - start
            rows.append({"d": d, "n": n, "grid": grid.size, "solver": label,
                         "seconds": seconds, "load_average": load})  # fmt: skip
        best = max(f.loglik for f in fits.values())
        ref = tilted_posterior(lik, fits["sqp"].weights, float(n)).item_means()
        sc = m.sigma * n
        for row, fit in zip(rows[-3:], fits.values(), strict=True):
            means = tilted_posterior(lik, fit.weights, float(n)).item_means()
            row.update(
                iterations=fit.iterations,
                gap=fit.gap,
                loglik_shortfall=best - fit.loglik,
                atoms_with_weight=int((fit.weights > 0).sum()),
                atoms_above_1e_8=int((fit.weights > 1e-8).sum()),
                max_mean_diff_sd=float(np.abs(means - ref).max() / sc),
            )
    frame = pd.DataFrame(rows)
    write_csv(args.out / "eb_solvers.csv", frame)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(frame.to_string(float_format="{:.3g}".format))
    return frame


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run the part named on the command line; print, save and return its table."""
    args = build_parser().parse_args(argv)
    return speed(args) if args.part == "speed" else solvers(args)


if __name__ == "__main__":
    main()
