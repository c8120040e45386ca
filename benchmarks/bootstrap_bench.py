"""Time of the parametric bootstrap behind Estimate.interval: B = 200 replicates, d = 1024.

For every registered non-Bayesian method (NumPy backend) on the papers' setting (Zipf
s = 1.5, d = 1024, n = 1e6, OUE, eps = 1): the wall time of computing all replicates
(simulating the support counts and re-running the method), the minimum over
``--repeat`` fresh bootstraps (one for methods re-run replicate by replicate), whether
the re-run is vectorised, and, for comparison, one call of the method itself. The load
average before and after is recorded: on a shared machine timings are noisy.

Run ``python benchmarks/bootstrap_bench.py`` (results in
``benchmarks/results/bootstrap/bootstrap.csv``).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets, intervals
from bayesldp.io import write_csv
from bayesldp.methods.registry import method_names


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Time every method's bootstrap; write and return the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--methods", nargs="+", default=list(method_names(bayesian=False, needs_truth=False))
    )
    ap.add_argument("--out", default="benchmarks/results/bootstrap")
    args = ap.parse_args(argv)
    data = datasets.zipf(1.5, args.d, 1_000_000, rng=0)
    m = bayesldp.OUE(1.0, args.d).simulate(data.counts, np.random.default_rng(1))
    rows = []
    for method in args.methods:
        load_before = os.getloadavg()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            est = bayesldp.postprocess(m, method)
            single = time.perf_counter() - start
            times, vectorised = [], None
            for seed in range(args.repeat):
                boot = intervals.ParametricBootstrap(est, args.replicates, seed)
                start = time.perf_counter()
                boot.sample(0, 1)
                times.append(time.perf_counter() - start)
                vectorised = boot.info["vectorised"]
                if not vectorised:
                    break
        rows.append({"method": method, "d": args.d, "replicates": args.replicates,
                     "seconds": min(times), "runs": len(times), "vectorised": vectorised,
                     "single_call_seconds": single, "load_before": load_before,
                     "load_after": os.getloadavg()[0]})  # fmt: skip
        print(rows[-1], flush=True)
        frame = pd.DataFrame(rows)
        write_csv(Path(args.out) / "bootstrap.csv", frame)  # atomic: after every method
    return frame


if __name__ == "__main__":
    main()
