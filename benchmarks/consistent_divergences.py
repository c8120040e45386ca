"""Divergences of bayes-consistent's NUTS over many seeds, at each target acceptance.

bayes-consistent samples two parameters, ``(s, log c)``, with PyMC's NUTS. Its log target
falls by hundreds of nats within a few whitened standard deviations of its ridge, and at
NUTS's usual target acceptance of 0.8 a rare trajectory diverges there, which the model
reports as poor convergence. This script fits the papers' setting (one Zipf 1.5 dataset,
``datasets.zipf(1.5, d, 10**6, rng=0)`` with d = 1024, and fresh OUE eps 1 noise from
each seed, as ``tests/test_consistent.py::test_bayes_consistent_at_the_papers_setting``)
once per seed and target, in one process, and reports each fit's divergences, worst
r_hat, smallest bulk ESS, sampling seconds and MSE, then the totals per target::

    python benchmarks/consistent_divergences.py --reps 48 --targets 0.8 0.9

writes ``benchmarks/results/consistent_divergences/<name>.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path


def fit_row(data, seed: int, target: float, draws: int, tune: int) -> dict:
    """Fit bayes-consistent to the seed's measurement of ``data`` at one target acceptance."""
    import numpy as np

    import bayesldp
    from bayesldp import metrics

    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(seed))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings are what is counted here
        est = bayesldp.postprocess(
            m, "bayes-consistent", rng=seed, target_accept=target, draws=draws, tune=tune
        )
    return {
        "seed": seed,
        "target_accept": target,
        "target_accept_applied": est.info["target_accept"],
        "d": data.d,
        "divergences": int(est.info["divergences"]),
        "r_hat_max": max(est.info["r_hat"].values()),
        "ess_bulk_min": min(est.info["ess_bulk"].values()),
        "seconds_sampling": est.info["seconds_sampling"],
        "seconds_fit": time.perf_counter() - start,
        "mse": metrics.mse(data.frequencies, est),
        "load_average_1min": os.getloadavg()[0],
    }


def main(args: argparse.Namespace):
    """Fit every seed at every target (targets alternate within a seed); write the table."""
    import pandas as pd

    from bayesldp import datasets
    from bayesldp.io import write_csv

    data = datasets.zipf(1.5, args.d, 10**6, rng=0)  # one dataset; the noise varies
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.reps):
        for target in args.targets:
            rows.append(fit_row(data, seed, target, args.draws, args.tune))
            print(json.dumps(rows[-1], default=float), flush=True)
    frame = pd.DataFrame(rows)
    totals = frame.groupby("target_accept").agg(
        fits=("seed", "size"),
        divergences=("divergences", "sum"),
        fits_with_divergences=("divergences", lambda x: int((x > 0).sum())),
        r_hat_max=("r_hat_max", "max"),
        ess_bulk_min_median=("ess_bulk_min", "median"),
        seconds_sampling_median=("seconds_sampling", "median"),
        mse_mean=("mse", "mean"),
    )
    print(totals.to_string())
    if args.out:
        write_csv(Path(args.out) / f"{args.name}.csv", frame)
    return frame


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=48, help="seeds, from --first-seed")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--targets", type=float, nargs="+", default=[0.8, 0.9])
    parser.add_argument("--d", type=int, default=1024, help="domain size")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--name", default="zipf")
    parser.add_argument("--out", default="benchmarks/results/consistent_divergences")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
