"""Time ``Estimate.interval``: every method's default interval, its bootstrap, cached draws.

For each method in ``--methods`` (default: every registered method that needs neither
the truth nor minutes per fit, Bayesian ones included), on Zipf 1.5 data (OUE, eps 1,
n = 1e6, domain ``--d``), the script fits the method once and reports:

* ``kind``, ``set_seconds``, ``item_seconds``: the default (natural) interval, mean
  seconds per random 10% set and per single item, the first query included (it
  generates posterior rows, or eb-npmle's bootstrap replicates of the prior). Issue 36's
  target: every default interval under 2 s for d up to 50,000.
* ``set_seconds_uncached`` (methods whose draws are generated on demand: bayes-power,
  bayes-consistent, eb-npmle): the same queries on a copy whose draws are regenerated at
  every query (``bayesldp._draws.ROW_CACHE_MAX_BYTES`` set to 0 while timed), and
  ``same_intervals``, whether both give the same intervals.
* ``bootstrap_seconds``, ``vectorised`` (non-Bayesian methods, ``--replicates`` > 0): the
  time to compute ``--replicates`` parametric bootstrap replicates (simulating the
  support counts and re-running the method through its row function, or one replicate
  at a time), behind ``interval(method="bootstrap")``.

The load average is recorded with each row: on a shared machine timings are noisy.

    python benchmarks/interval_speed.py                            # d = 1024
    python benchmarks/interval_speed.py --d 50000 --replicates 0   # the 2 s target
    python benchmarks/interval_speed.py --d 64 --queries 2         # seconds
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
import warnings
from pathlib import Path

import numpy as np


def time_queries(est, masks, items) -> tuple[float, float]:
    """Mean seconds per subset interval and per single-item interval (the first included)."""
    start = time.perf_counter()
    for mask in masks:
        est.interval(mask, 0.9)
    per_set = (time.perf_counter() - start) / len(masks)
    start = time.perf_counter()
    for i in items:
        est.interval([int(i)], 0.9)
    return per_set, (time.perf_counter() - start) / len(items)


def default_methods() -> list[str]:
    """Every registered method that needs neither the true counts nor minutes per fit."""
    import bayesldp

    return list(bayesldp.method_names(needs_truth=False, minutes=False))


def main(args: argparse.Namespace):
    """Fit each method once, time its intervals (and bootstrap), write the table."""
    import pandas as pd

    import bayesldp
    import bayesldp._draws as draws_module
    from bayesldp import datasets, estimate, metrics
    from bayesldp._io import write_csv
    from bayesldp.intervals import ParametricBootstrap
    from bayesldp.methods.registry import get_method

    data = datasets.zipf(1.5, args.d, 1_000_000, rng=args.seed)
    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(args.seed))
    qrng = np.random.default_rng(args.seed + 1)
    masks = metrics.random_subsets(data.d, 10, args.queries, qrng)
    items = qrng.choice(data.d, size=args.queries, replace=False)
    rows = []
    for method in args.methods or default_methods():
        spec = get_method(method)
        options = {"rng": args.seed} if spec.accepts("rng") else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            start = time.perf_counter()
            est = bayesldp.postprocess(m, method, **options)
            fit_seconds = time.perf_counter() - start
        set_s, item_s = time_queries(est, masks, items)
        row = {"method": method, "d": data.d, "queries": args.queries, "fit_seconds": fit_seconds,
               "kind": est.interval([0], 0.9).kind, "set_seconds": set_s,
               "item_seconds": item_s}  # fmt: skip
        unc = est.uncertainty
        if unc is not None:
            row["draws"] = unc.n_draws
        if dataclasses.is_dataclass(unc) and not isinstance(unc, estimate.StoredDraws):
            # the same draws without a cache: a fresh object, with the limit at 0 while timed
            lazy = dataclasses.replace(est, uncertainty=dataclasses.replace(unc))
            limit = draws_module.ROW_CACHE_MAX_BYTES
            draws_module.ROW_CACHE_MAX_BYTES = 0
            try:
                row["set_seconds_uncached"], row["item_seconds_uncached"] = time_queries(
                    lazy, masks, items
                )
                same = [est.interval(mk, 0.9) == lazy.interval(mk, 0.9) for mk in masks[:2]]
            finally:
                draws_module.ROW_CACHE_MAX_BYTES = limit
            row["same_intervals"] = all(same)
        if args.replicates > 0 and not spec.bayesian and unc is None:
            boot = ParametricBootstrap(est, args.replicates, args.seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                start = time.perf_counter()
                boot.sample(0, 1)  # computes (and caches) every replicate
            row["bootstrap_seconds"] = time.perf_counter() - start
            row["vectorised"] = bool(boot.info["vectorised"])
        row["load"] = os.getloadavg()[0]
        rows.append(row)
        print(row, flush=True)
        write_csv(Path(args.out) / f"{args.name}.csv", pd.DataFrame(rows))  # after every method
    return pd.DataFrame(rows)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--methods", nargs="+", default=None, help="default: every method")
    parser.add_argument("--replicates", type=int, default=200, help="0: no bootstrap timing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/interval_speed")
    parser.add_argument("--name", default="interval_speed")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
