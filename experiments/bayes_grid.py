"""Summarise a full-domain grid run with the Bayesian methods and the cvxpy backend.

Run after
``bayesldp experiment full_domain_mse --bayes --methods ...,cls@cvxpy,mle-apx@cvxpy --out DIR``::

    python experiments/bayes_grid.py --out DIR

Reads ``DIR/full_domain_mse/results.csv`` only and writes, next to it,

- ``bayes_pairs.csv``: for each (dataset, eps) and each pair of methods compared in
  paper/README.md, both mean MSEs, their ratio, and in how many runs the first was lower
  (runs are paired: every method sees the same measurement);
- ``bayes_methods.csv``: per (dataset, eps, method) the mean MSE, its rank among the
  methods, the median seconds per run, how many runs warned, and how many of those warnings
  were of divergent NUTS transitions.

It prints both as Markdown tables.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp._io import markdown_table, write_csv

#: (first, second): "is first better than second?" The cvxpy rows check that the exact
#: convex programs and the closed forms give the same estimates' errors.
PAIRS: tuple[tuple[str, str], ...] = (
    ("bayes-consistent", "power-ns"),
    ("bayes-consistent", "norm-hyb"),
    ("bayes-consistent", "norm-sub"),
    ("bayes-power", "power"),
    ("power-ns", "power"),
    ("cls@cvxpy", "cls"),
    ("mle-apx@cvxpy", "mle-apx"),
    ("mle", "mle-apx"),
)


#: The models' own warnings (convergence, posterior at a bound, sampling box, interpolation);
#: library notices captured alongside (PyTensor's BLAS, ArviZ's refactor) are not counted.
SAMPLER_WARNINGS = (
    "poor (?:NUTS|HMC) convergence|piles up at an end|edge of the sampling box|interpolation"
)


def _mse(results: pd.DataFrame) -> pd.DataFrame:
    mse = results[results["metric"] == "mse"]
    if mse.empty:
        raise ValueError("no 'mse' rows: is this a full_domain_mse results.csv?")
    return mse


def pairs(results: pd.DataFrame) -> pd.DataFrame:
    """Paired comparison of the methods in :data:`PAIRS` (those present) per dataset and eps."""
    mse = _mse(results)
    wide = mse.pivot_table(
        index=["dataset", "epsilon", "rep"], columns="method", values="value", aggfunc="first"
    )
    rows = []
    for (ds, eps), runs in wide.groupby(level=["dataset", "epsilon"]):
        for a, b in PAIRS:
            if a not in runs or b not in runs:
                continue
            both = runs[[a, b]].dropna()
            ma, mb = both[a].mean(), both[b].mean()
            rel = (both[a] - both[b]).abs() / both[b]
            rows.append(
                {
                    "dataset": ds,
                    "epsilon": eps,
                    "first": a,
                    "second": b,
                    "mse_first": ma,
                    "mse_second": mb,
                    "ratio": ma / mb,
                    "first_lower": int((both[a] < both[b]).sum()),
                    "runs": len(both),
                    "max_rel_diff": rel.max(),
                }
            )
    return pd.DataFrame(rows)


def methods(results: pd.DataFrame) -> pd.DataFrame:
    """Mean MSE, rank, median seconds and warnings per (dataset, eps, method)."""
    mse = _mse(results)
    warning = mse["warning"].fillna("").astype(str)
    mse = mse.assign(
        warned=warning.str.contains(SAMPLER_WARNINGS, regex=True),
        divergent=warning.str.contains("divergent transitions", regex=False),
    )
    table = (
        mse.groupby(["dataset", "epsilon", "method"])
        .agg(
            mse=("value", "mean"),
            runs=("value", "size"),
            median_seconds=("seconds", "median"),
            runs_warned=("warned", "sum"),
            runs_divergent=("divergent", "sum"),
        )
        .reset_index()
    )
    table["rank"] = table.groupby(["dataset", "epsilon"])["mse"].rank(method="min").astype(np.int64)
    return table.sort_values(["dataset", "epsilon", "rank"]).reset_index(drop=True)


def main(args: list[str] | None = None) -> int:
    """Write bayes_pairs.csv and bayes_methods.csv next to the grid's results.csv."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder given to `bayesldp experiment`")
    ns = parser.parse_args(args)
    folder = Path(ns.out) / "full_domain_mse"
    path = folder / "results.csv"
    if not path.exists():
        parser.error(f"{path} does not exist; run the grid first (see this script's docstring)")
    results = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
    paired = pairs(results)
    per_method = methods(results)
    write_csv(folder / "bayes_pairs.csv", paired)
    write_csv(folder / "bayes_methods.csv", per_method)
    print(markdown_table(paired))
    print()
    print(markdown_table(per_method))
    return 0


if __name__ == "__main__":
    sys.exit(main())
