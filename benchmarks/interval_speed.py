"""Time ``Estimate.interval`` of the Bayesian methods, with and without cached draws.

bayes-consistent and bayes-power draw each item from its tabulated posterior on demand
(``bayesldp.models._item_draws.ItemPosteriorDraws``), eb-npmle from its discrete
posteriors (:class:`bayesldp.empirical_bayes.BootstrapPosteriorDraws`); below
``bayesldp.estimate.ROW_CACHE_MAX_BYTES`` the rows are generated once and kept
(:func:`bayesldp.estimate.cached_rows`). This script fits each method once (Zipf 1.5,
OUE, eps 1, n = 1e6), then times intervals for random 10% subsets and for single items,
first on the fitted Estimate (cache as configured) and then on a copy whose draws are
regenerated at every query (cache off), side by side in one process. Methods whose
draws are held in memory (bayes-dirichlet's MCMC draws) have no uncached column. The
first query is included in the mean (it generates the rows, and for eb-npmle fits the
bootstrap replicates of the prior).

    python benchmarks/interval_speed.py                       # d = 1024, 20 queries
    python benchmarks/interval_speed.py --d 64 --queries 2    # seconds
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


def main(args: argparse.Namespace):
    """Fit each method once, time its intervals with and without the cache, write the table."""
    import pandas as pd

    import bayesldp
    from bayesldp import datasets, estimate, metrics
    from bayesldp.io import write_csv

    data = datasets.zipf(1.5, args.d, 1_000_000, rng=args.seed)
    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(args.seed))
    qrng = np.random.default_rng(args.seed + 1)
    masks = metrics.random_subsets(data.d, 10, args.queries, qrng)
    items = qrng.choice(data.d, size=args.queries, replace=False)
    rows = []
    for method in args.methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = bayesldp.postprocess(m, method, rng=args.seed)
        unc = est.uncertainty
        lazy = None
        if dataclasses.is_dataclass(unc) and not isinstance(unc, estimate.StoredDraws):
            # the same draws without a cache: a fresh object, with the limit at 0 while timed
            lazy = dataclasses.replace(est, uncertainty=dataclasses.replace(unc))
        set_s, item_s = time_queries(est, masks, items)
        row = {"method": method, "d": data.d, "draws": unc.n_draws, "queries": args.queries,
               "set_seconds": set_s, "item_seconds": item_s}  # fmt: skip
        if lazy is not None:
            limit = estimate.ROW_CACHE_MAX_BYTES
            estimate.ROW_CACHE_MAX_BYTES = 0
            try:
                row["set_seconds_uncached"], row["item_seconds_uncached"] = time_queries(
                    lazy, masks, items
                )
            finally:
                estimate.ROW_CACHE_MAX_BYTES = limit
            same = [est.interval(mk, 0.9) == lazy.interval(mk, 0.9) for mk in masks[:2]]
            row["same_intervals"] = all(same)
        row["load"] = os.getloadavg()[0]
        rows.append(row)
        print(row, flush=True)
    frame = pd.DataFrame(rows)
    write_csv(Path(args.out) / f"{args.name}.csv", frame)
    return frame


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument(
        "--methods", nargs="+", default=["bayes-consistent", "bayes-dirichlet", "eb-npmle"]
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/interval_speed")
    parser.add_argument("--name", default="interval_speed")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
