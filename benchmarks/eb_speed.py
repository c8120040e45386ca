"""Speed of ``eb-npmle`` on wordfreq (d = 42178, n = 1e6), beside np.sort and power-ns.

Each repetition simulates a fresh OUE measurement (eps = 1 by default) of
``datasets.wordfreq_words()`` and times, in this process and in turn:

* ``np.sort`` of the raw estimates (the scale of "linear" work on this d),
* ``eb_npmle(m)``, everything included: the grid, the corrected counts, the likelihood
  matrix, the NPMLE (active-set SQP), the tilt and the posterior means (target < 1 s),
* ``power-ns`` on the same measurement,
* ``oracle_bayes`` (reference),
* the first ``uncertainty.sample(0, 1000)`` of the estimate (the parametric bootstrap's
  refits of the prior and 1000 draws of the 42178 frequencies; lazy, paid only when
  intervals are asked for), unless ``--no-draws``.

The table (one row per repetition and task, with the load average at the start of the
repetition) goes to ``--out``/eb_speed.csv and a summary (min and median per task, and
ratios to ``np.sort`` and ``power-ns``) to eb_speed_summary.csv.

Run ``python benchmarks/eb_speed.py`` (``--repeat 7`` by default).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets
from bayesldp import empirical_bayes as eb
from bayesldp.io import write_csv


def timed(func):
    """Run ``func``; return its result and wall time."""
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run the benchmark; print and save the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-draws", action="store_true", help="skip timing the draws")
    parser.add_argument("--out", default="benchmarks/results/eb")
    args = parser.parse_args(argv)

    data = datasets.wordfreq_words()
    oracle = bayesldp.OUE(epsilon=args.eps, domain_size=data.d)
    seeds = np.random.SeedSequence(args.seed).spawn(args.repeat)
    rows = []
    for rep, seq in enumerate(seeds):
        load = os.getloadavg()[0]
        m = oracle.simulate(data.counts, np.random.default_rng(seq))
        _, t_sort = timed(lambda m=m: np.sort(m.estimates))
        est, t_eb = timed(lambda m=m, rep=rep: eb.eb_npmle(m, rng=rep))
        _, t_pns = timed(lambda m=m: bayesldp.postprocess(m, "power-ns"))
        _, t_oracle = timed(lambda m=m: eb.oracle_bayes(m, true_counts=data.counts))
        tasks = {"np.sort": t_sort, "eb-npmle": t_eb, "power-ns": t_pns, "oracle-bayes": t_oracle}
        if not args.no_draws:
            _, tasks["eb-npmle draws (1000, bootstrap)"] = timed(
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
    out = Path(args.out)
    write_csv(out / "eb_speed.csv", frame)
    write_csv(out / "eb_speed_summary.csv", summary.reset_index())
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(summary.to_string())
    return frame


if __name__ == "__main__":
    main()
