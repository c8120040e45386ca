"""Speed figures of the foundation (issue 2), written to a CSV and a JSON summary.

Measures, each as the minimum over ``--repeat`` runs in this process:

* every O(d) / O(d log d) method on d = 1e6 (target: < 0.5 s each), and Norm-Sub
  against a plain ``np.sort`` of the same array (target: within 3x);
* ``OUE.simulate`` for n = 1e6, d = 42178 (target: < 1 s);
* ``power`` on d = 42178, n = 1e6 (target: < 2 s; the paper reports > 4 hours), and the
  largest gap between its posterior means and a direct sum over every count 1..n on a
  small case.

Run ``python benchmarks/foundation_bench.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
import bayesldp.methods._calibrate as calibrate
from bayesldp import datasets
from bayesldp.io import write_csv, write_json

LINEAR_METHODS = (
    "base", "base-pos", "post-pos", "base-cut", "norm", "norm-mul", "norm-sub",
    "norm-cut", "norm-hyb", "mle-apx", "cls", "mle",
)  # fmt: skip


def best_time(func: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run the benchmark; return and save one row per measurement."""
    rng = np.random.default_rng(args.seed)
    rows = []

    # 1. Linear-time methods on a large domain.
    d_big = args.d_large
    data = datasets.zipf(1.1, d_big, args.n_large, rng=rng)
    m = bayesldp.OUE(1.0, d_big).simulate(data.counts, rng)
    sort_time = best_time(lambda: np.sort(m.estimates), args.repeat)
    rows.append({"task": "np.sort", "d": d_big, "n": m.n, "seconds": sort_time, "target": ""})
    for method in LINEAR_METHODS:
        t = best_time(lambda method=method: bayesldp.postprocess(m, method), args.repeat)
        rows.append({"task": method, "d": d_big, "n": m.n, "seconds": t, "target": "< 0.5 s"})
    norm_sub = next(r["seconds"] for r in rows if r["task"] == "norm-sub")
    rows.append({"task": "norm-sub / np.sort", "d": d_big, "n": m.n,
                 "seconds": norm_sub / sort_time, "target": "< 3"})  # fmt: skip

    # 2. Exact OUE simulation at Kosarak scale.
    d_k, n_k = args.d_kosarak, args.n_kosarak
    kosarak_like = datasets.zipf(1.1, d_k, n_k, rng=rng)
    oue = bayesldp.OUE(1.0, d_k)
    t = best_time(lambda: oue.simulate(kosarak_like.counts, rng), args.repeat)
    rows.append({"task": "OUE.simulate", "d": d_k, "n": n_k, "seconds": t, "target": "< 1 s"})

    # 3. Power at Kosarak scale, and its agreement with a direct sum.
    mk = oue.simulate(kosarak_like.counts, rng)
    t = best_time(lambda: bayesldp.postprocess(mk, "power"), max(1, args.repeat // 2))
    rows.append({"task": "power", "d": d_k, "n": n_k, "seconds": t, "target": "< 2 s"})
    t = best_time(lambda: bayesldp.postprocess(mk, "power-ns"), max(1, args.repeat // 2))
    rows.append({"task": "power-ns", "d": d_k, "n": n_k, "seconds": t, "target": "< 2 s"})
    est = bayesldp.postprocess(mk, "power")
    idx = rng.choice(d_k, args.check_items, replace=False)
    y, sigma_c = mk.estimates[idx] * n_k, mk.sigma * n_k
    direct = calibrate.posterior_mean_direct(y, est.info["s"], sigma_c, n_k, full=True) / n_k
    gap = float(np.abs(est.frequencies[idx] - direct).max())
    rows.append({"task": "power max |fast - direct sum|", "d": d_k, "n": n_k,
                 "seconds": gap, "target": "<< sigma"})  # fmt: skip
    rows.append({"task": "sigma (for scale)", "d": d_k, "n": n_k, "seconds": mk.sigma,
                 "target": ""})  # fmt: skip

    frame = pd.DataFrame(rows)
    out = Path(args.out)
    write_csv(out / "foundation.csv", frame)
    write_json(
        out / "foundation.json",
        {
            "config": vars(args),
            "versions": {"bayesldp": bayesldp.__version__, "numpy": np.__version__},
            "machine": {"processor": platform.processor(), "python": platform.python_version()},
        },
    )
    return frame


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-large", type=int, default=1_000_000)
    parser.add_argument("--n-large", type=int, default=10_000_000)
    parser.add_argument("--d-kosarak", type=int, default=42_178)
    parser.add_argument("--n-kosarak", type=int, default=1_000_000)
    parser.add_argument("--check-items", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/foundation")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.quick:
        parsed.d_large, parsed.n_large, parsed.d_kosarak = 10_000, 100_000, 2000
        parsed.n_kosarak, parsed.check_items, parsed.repeat = 50_000, 3, 1
    result = main(parsed)
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(result.to_string(index=False))
