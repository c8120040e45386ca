"""Time of the convergence diagnostics behind every Bayesian fit: ours against ArviZ's.

``bayesldp.models.fit`` reports the worst R-hat and bulk ESS over every element of the
frequency vector. For draws of shape (chains, draws, d), independent standard normals
from ``default_rng(seed)``, this times ``bayesldp.models.sampling.rhat_ess`` (vectorised
over the elements) and ``arviz.rhat`` + ``arviz.ess`` (ArviZ's loop over the elements)
side by side, alternating, ``--repeat`` times each, and checks the numbers agree. The
load average before and after is recorded: timings on a shared machine are noisy.

Run ``python benchmarks/diagnostics_speed.py`` (results in
``benchmarks/results/diagnostics/diagnostics_speed.csv``; about 7 minutes at the default
sizes, most of it ArviZ at d = 42,178).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayesldp.io import write_csv
from bayesldp.models.sampling import rhat_ess


def arviz_rhat_ess(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ArviZ's rank R-hat and bulk ESS of draws (chain, draw, d)."""
    import arviz as az

    data = az.convert_to_dataset({"f": x})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.rhat(data)["f"].values, az.ess(data)["f"].values


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, nargs="+", default=[1024, 42178])
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/diagnostics")
    return ap


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Time both implementations per d; write and return the table."""
    rows = []
    for d in args.d:
        x = np.random.default_rng(args.seed).normal(size=(args.chains, args.draws, d))
        for rep in range(args.repeat):
            for name, func in (("bayesldp", rhat_ess), ("arviz", arviz_rhat_ess)):
                load = os.getloadavg()[0]
                start = time.perf_counter()
                rhat, ess = func(x)
                seconds = time.perf_counter() - start
                rows.append({"d": d, "rep": rep, "implementation": name, "seconds": seconds,
                             "max_r_hat": float(np.max(rhat)), "min_ess": float(np.min(ess)),
                             "load_before": load, "load_after": os.getloadavg()[0]})  # fmt: skip
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    for d, cell in table.groupby("d"):
        ours = cell[cell["implementation"] == "bayesldp"]
        theirs = cell[cell["implementation"] == "arviz"]
        if not np.allclose(ours[["max_r_hat", "min_ess"]].values,
                           theirs[["max_r_hat", "min_ess"]].values, rtol=1e-9):  # fmt: skip
            raise RuntimeError(f"d = {d}: bayesldp and ArviZ disagree")
        ratio = theirs["seconds"].min() / ours["seconds"].min()
        print(f"d = {d}: ArviZ / bayesldp = {ratio:.1f} (best of {args.repeat} each)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "diagnostics_speed.csv", table)
    return table


if __name__ == "__main__":
    main(build_parser().parse_args())
