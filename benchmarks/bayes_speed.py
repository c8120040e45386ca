"""Wall time of ``bayes-power`` (including NUTS sampling) at the papers' scales.

Each case runs in a fresh Python process, so the time includes importing PyMC and
compiling the model (PyTensor's on-disk cache may be warm from earlier runs; the first
run on a new machine compiles from scratch). Cases: Zipf(1.5), d = 1024, n = 1e6 and
Zipf(1.1), d = 42178, n = 1e6; epsilon = 1, OUE.

Run ``python benchmarks/bayes_speed.py``; one case: ``--case 1024``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from bayesldp.io import write_csv

CASES = {1024: (1.5, 1_000_000), 42178: (1.1, 1_000_000)}


def run_case(
    d: int, method: str, seed: int, n: int | None = None, draws: int = 1000, tune: int = 1000
) -> dict:
    """Time one case in this process; return the measurements."""
    start = time.perf_counter()
    import numpy as np

    import bayesldp
    from bayesldp import datasets, metrics

    s, default_n = CASES.get(d, (1.5, 1_000_000))
    n = default_n if n is None else n
    data = datasets.zipf(s, d, n, rng=seed)
    m = bayesldp.OUE(1.0, d).simulate(data.counts, np.random.default_rng(seed))
    ready = time.perf_counter()
    est = bayesldp.postprocess(m, method, rng=seed, draws=draws, tune=tune)
    done = time.perf_counter()
    power = bayesldp.postprocess(m, "power")
    return {
        "method": method,
        "d": d,
        "n": n,
        "seconds_total": done - start,
        "seconds_postprocess": done - ready,
        **{k: v for k, v in est.info.items() if k.startswith("seconds")},
        "r_hat_s": est.info["r_hat"]["s"],
        "ess_bulk_s": est.info["ess_bulk"]["s"],
        "mse": metrics.mse(data.frequencies, est),
        "mse_power": metrics.mse(data.frequencies, power),
    }


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run every case in a fresh process and write the table."""
    rows = []
    for d in args.sizes:
        cmd = [sys.executable, __file__, "--case", str(d), "--method", args.method]
        result = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(result.stdout.strip().splitlines()[-1]))
    frame = pd.DataFrame(rows)
    frame["load_average_1min"] = os.getloadavg()[0]
    frame["cpu_count"] = os.cpu_count()
    frame["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    write_csv(Path(args.out) / f"bayes_speed_{args.method}.csv", frame)
    return frame


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(CASES))
    parser.add_argument("--method", default="bayes-power")
    parser.add_argument("--case", type=int, help="run one case here and print JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/bayes")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.case is not None:
        print(json.dumps(run_case(parsed.case, parsed.method, parsed.seed), default=float))
    else:
        with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
            print(main(parsed).to_string(index=False))
