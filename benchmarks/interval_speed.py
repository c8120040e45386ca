"""Time ``Estimate.interval``: every method's default interval, its bootstrap, cached draws.

For each domain size in ``--d`` and each method in ``--methods`` (default: every
registered method that needs neither the truth nor minutes per fit, Bayesian ones
included), on Zipf 1.5 data (OUE, eps 1, n = 1e6), the script fits the method once and
reports:

* ``kind``, ``first_seconds``: the default (natural) interval and the time of the first
  query on the fitted estimate, a random 10% set (it generates posterior rows where the
  default is ``posterior``). Issue 36's target: every default interval under 2 s for d
  up to 50,000 (``meets_2s``: ``first_seconds`` and every later query under 2 s).
* ``set_seconds``, ``item_seconds``: mean seconds per later random 10% set and per
  single item.
* ``posterior_first_seconds`` (estimates that carry draws but whose default is not
  ``posterior``, e.g. eb-npmle): the first ``method="posterior"`` query, which generates
  the draws.
* ``set_seconds_uncached`` (methods whose draws are generated on demand): the same
  queries on a copy whose draws are regenerated at every query
  (``bayesldp._draws.ROW_CACHE_MAX_BYTES`` set to 0 while timed), and
  ``same_intervals``, whether both give the same intervals.
* ``bootstrap_seconds``, ``vectorised`` (non-Bayesian methods, ``--replicates`` > 0): the
  time to compute ``--replicates`` parametric bootstrap replicates, behind
  ``interval(method="bootstrap")``.

The load average is recorded with each row: on a shared machine timings are noisy.

    python benchmarks/interval_speed.py --d 1024 10000 50000 --replicates 0   # issue 36
    python benchmarks/interval_speed.py --d 64 --queries 2 --n-draws 100      # seconds
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
import warnings
from pathlib import Path

import numpy as np

#: Columns of the Markdown table written beside the CSV.
TABLE = ("method", "d", "kind", "fit_seconds", "first_seconds", "set_seconds", "item_seconds",
         "meets_2s", "posterior_first_seconds", "load")  # fmt: skip


def time_queries(est, masks, items, kind=None) -> tuple[float, float, float, float]:
    """Seconds of the first set interval, then the mean and largest per set and per item."""
    start = time.perf_counter()
    est.interval(masks[0], 0.9, method=kind)
    first = time.perf_counter() - start
    times = []
    for mask in masks[1:]:
        start = time.perf_counter()
        est.interval(mask, 0.9, method=kind)
        times.append(time.perf_counter() - start)
    for i in items:
        start = time.perf_counter()
        est.interval([int(i)], 0.9, method=kind)
        times.append(time.perf_counter() - start)
    n_sets = len(masks) - 1
    per_set = float(np.mean(times[:n_sets])) if n_sets else float("nan")
    per_item = float(np.mean(times[n_sets:])) if len(items) else float("nan")
    return first, per_set, per_item, float(max(times, default=0.0))


def default_methods() -> list[str]:
    """Every registered method that needs neither the true counts nor minutes per fit."""
    import bayesldp

    return list(bayesldp.method_names(needs_truth=False, minutes=False))


def main(args: argparse.Namespace):
    """Fit each method once per domain size, time its intervals (and bootstrap), write the table."""
    import pandas as pd

    if args.table_only:  # rewrite the Markdown table from the saved CSV
        from bayesldp._io import atomic_open, markdown_table

        table = pd.read_csv(Path(args.out) / f"{args.name}.csv")
        with atomic_open(Path(args.out) / f"{args.name}.md") as fh:
            fh.write(markdown_table(table[[c for c in TABLE if c in table]]) + "\n")
        return table
    rows: list[dict] = []
    for d in args.d:
        rows += time_domain(args, d, rows)
    return pd.DataFrame(rows)


def time_domain(args: argparse.Namespace, d: int, done: list) -> list[dict]:
    """Rows of one domain size (``done``: earlier rows, written with these after each)."""
    import pandas as pd

    import bayesldp
    import bayesldp._draws as draws_module
    from bayesldp import datasets, estimate, metrics
    from bayesldp._io import atomic_open, markdown_table, write_csv
    from bayesldp.intervals import ParametricBootstrap, available_intervals
    from bayesldp.methods.registry import get_method

    data = datasets.zipf(1.5, d, 1_000_000, rng=args.seed)
    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(args.seed))
    qrng = np.random.default_rng(args.seed + 1)
    masks = metrics.random_subsets(data.d, 10, args.queries + 1, qrng)
    items = qrng.choice(data.d, size=min(args.queries, data.d), replace=False)
    rows = []
    for method in args.methods or default_methods():
        spec = get_method(method)
        options = {"rng": args.seed} if spec.accepts("rng") else {}
        if args.n_draws is not None and spec.accepts("n_draws"):
            options["n_draws"] = args.n_draws
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            start = time.perf_counter()
            est = bayesldp.postprocess(m, method, **options)
            fit_seconds = time.perf_counter() - start
        first, set_s, item_s, slowest = time_queries(est, masks, items)
        row = {"method": method, "d": data.d, "queries": args.queries, "fit_seconds": fit_seconds,
               "kind": est.interval([0], 0.9).kind, "first_seconds": first,
               "set_seconds": set_s, "item_seconds": item_s,
               "meets_2s": bool(max(first, slowest) < 2.0)}  # fmt: skip
        unc = est.uncertainty
        if unc is not None:
            row["draws"] = unc.n_draws
        fresh_draws = dataclasses.is_dataclass(unc) and not isinstance(unc, estimate.StoredDraws)
        if fresh_draws and row["kind"] != "posterior" and "posterior" in available_intervals(est):
            fresh = dataclasses.replace(est, uncertainty=dataclasses.replace(unc))
            row["posterior_first_seconds"] = time_queries(fresh, masks[:1], [], "posterior")[0]
        if fresh_draws:
            # the same draws without a cache: a fresh object, with the limit at 0 while timed
            lazy = dataclasses.replace(est, uncertainty=dataclasses.replace(unc))
            kind = "posterior"
            limit = draws_module.ROW_CACHE_MAX_BYTES
            draws_module.ROW_CACHE_MAX_BYTES = 0
            try:
                timed = time_queries(lazy, masks[:3], items[:2], kind)
                row["set_seconds_uncached"], row["item_seconds_uncached"] = timed[1:3]
                same = [est.interval(mk, 0.9, method=kind) == lazy.interval(mk, 0.9, method=kind)
                        for mk in masks[:2]]  # fmt: skip
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
        table = pd.DataFrame(done + rows)
        write_csv(Path(args.out) / f"{args.name}.csv", table)
        with atomic_open(Path(args.out) / f"{args.name}.md") as fh:
            fh.write(markdown_table(table[[c for c in TABLE if c in table]]) + "\n")
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[1024], help="domain size(s)")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--methods", nargs="+", default=None, help="default: every method")
    parser.add_argument("--replicates", type=int, default=200, help="0: no bootstrap timing")
    parser.add_argument("--n-draws", type=int, default=None,
                        help="posterior draws of the methods that take n_draws "
                             "(default: each method's own)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/interval_speed")
    parser.add_argument("--name", default="interval_speed")
    parser.add_argument("--table-only", action="store_true",
                        help="only rewrite OUT/NAME.md from the saved OUT/NAME.csv")  # fmt: skip
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
