"""The NPMLE solvers side by side: active-set SQP, SQUAREM-accelerated EM and cvxpy.

On one OUE measurement (eps = 1) of Zipf s = 1.5 for each ``--sizes`` d (n = 1e6 for
d = 1024, else ``--n``), the same likelihood matrix (grid, corrected counts) is handed
to every solver; the table gives wall time, iterations, the relative KKT gap
(``max_k S_k / d - 1``), the log-likelihood's shortfall from the best, the atoms with
weight, and the largest difference of the tilted posterior means from the SQP's (in
noise standard deviations). EM is stopped after ``--em-iter`` EM-map evaluations.

Run ``python benchmarks/eb_solvers.py`` (writes ``--out``/eb_solvers.csv).
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
from bayesldp import datasets
from bayesldp import empirical_bayes as eb
from bayesldp.io import write_csv


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Run the comparison; print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1024])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--em-iter", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/results/eb")
    args = parser.parse_args(argv)
    rows = []
    for d in args.sizes:
        n = 1_000_000 if d == 1024 else args.n
        data = datasets.zipf(1.5, d, n, rng=args.seed)
        m = bayesldp.OUE(epsilon=1.0, domain_size=d).simulate(
            data.counts, np.random.default_rng(args.seed)
        )
        grid = eb.count_grid(m)
        lik = eb.count_likelihood(m, grid, counts=eb.total_corrected_counts(m))
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
                fits[label] = eb.npmle(lik, **kwargs)
            seconds = time.perf_counter() - start
            rows.append({"d": d, "n": n, "grid": grid.size, "solver": label,
                         "seconds": seconds, "load_average": load})  # fmt: skip
        best = max(f.loglik for f in fits.values())
        ref = eb.tilted_posterior(lik, fits["sqp"].weights, float(n)).item_means()
        sc = m.sigma * n
        for row, fit in zip(rows[-3:], fits.values(), strict=True):
            means = eb.tilted_posterior(lik, fit.weights, float(n)).item_means()
            row.update(
                iterations=fit.iterations,
                gap=fit.gap,
                loglik_shortfall=best - fit.loglik,
                atoms_with_weight=int((fit.weights > 0).sum()),
                atoms_above_1e_8=int((fit.weights > 1e-8).sum()),
                max_mean_diff_sd=float(np.abs(means - ref).max() / sc),
            )
    frame = pd.DataFrame(rows)
    write_csv(Path(args.out) / "eb_solvers.csv", frame)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(frame.to_string(float_format="{:.3g}".format))
    return frame


if __name__ == "__main__":
    main()
