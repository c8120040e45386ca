"""Post-processing time of every bayesldp method as the domain size d grows (log-log plot).

For each d in ``--domains`` (default 1e3 .. 1e6) the script draws Zipf(``--zipf``) data
for n = max(10 d, 1e6) users, simulates OUE exactly, and times ``postprocess`` for every
non-Bayesian method (best of ``--reps``). The iterative methods are the slow ones:
``ibu`` (EM) runs with ``max_iter=--ibu-iters`` and, like ``power``/``power-ns``
(Calibrate's sum over counts), is skipped above ``--slow-max-d`` (default 1e6, i.e. all
run). Skipped cells are written with ``seconds`` empty and ``skipped=True`` so nothing
silently disappears. Writes ``scaling.csv`` and ``scaling.png`` to ``--out`` (default
``benchmarks/results/scaling``).

``--targets`` adds the foundation's speed targets to ``targets.csv``: Norm-Sub against a
plain ``np.sort`` at the largest d (target: within 3x), ``OUE.simulate`` at
``--simulate-d`` items and ``--simulate-n`` users (target: < 1 s at d = 42178, n = 1e6),
``power`` and ``power-ns`` there (target: < 2 s), and the largest gap between power's
posterior means and a direct sum over every count 1..n on ``--check-items`` items.

Run ``python benchmarks/scaling.py --targets``; ``--quick`` for d = 1e3, 1e4 only.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import bayesldp
import bayesldp.methods._calibrate as calibrate
from bayesldp import datasets
from bayesldp._io import write_csv
from bayesldp.plotting import save_figure

SLOW_METHODS = ("ibu", "power", "power-ns")


def _best_time(func, reps: int) -> float:
    best = np.inf
    for _ in range(reps):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def scaling_table(args: argparse.Namespace) -> pd.DataFrame:
    """Time every method at every domain size; one row per (method, d)."""
    rows = []
    rng = np.random.default_rng(args.seed)
    methods = args.methods or list(bayesldp.method_names(bayesian=False, needs_truth=False))
    for d in args.domains:
        n = max(10 * d, args.min_users)
        data = datasets.zipf(args.zipf, d, n, rng=rng)
        m = bayesldp.OUE(args.epsilon, d).simulate(data.counts, rng)
        for method in methods:
            row = {"method": method, "d": d, "n": n, "seconds": np.nan, "skipped": False}
            if method in SLOW_METHODS and d > args.slow_max_d:
                row["skipped"] = True
                rows.append(row)
                continue
            options = {"max_iter": args.ibu_iters} if method == "ibu" else {}
            reps = 1 if method in SLOW_METHODS else args.reps
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                row["seconds"] = _best_time(
                    lambda m=m, method=method, options=options: bayesldp.postprocess(
                        m, method, **options
                    ),
                    reps,
                )
            rows.append(row)
    return pd.DataFrame(rows)


def targets_table(args: argparse.Namespace) -> pd.DataFrame:
    """Time the foundation's speed targets: sort reference, simulation, power and its accuracy."""
    rng = np.random.default_rng(args.seed)
    rows = []
    d = max(args.domains)
    n = max(10 * d, args.min_users)
    m = bayesldp.OUE(args.epsilon, d).simulate(datasets.zipf(args.zipf, d, n, rng=rng).counts, rng)
    sort = _best_time(lambda: np.sort(m.estimates), args.reps)
    norm_sub = _best_time(lambda: bayesldp.postprocess(m, "norm-sub"), args.reps)
    rows += [{"task": "np.sort", "d": d, "n": n, "value": sort, "target": ""},
             {"task": "norm-sub / np.sort", "d": d, "n": n, "value": norm_sub / sort,
              "target": "< 3"}]  # fmt: skip
    d, n = args.simulate_d, args.simulate_n
    oue = bayesldp.OUE(1.0, d)
    counts = datasets.zipf(1.1, d, n, rng=rng).counts
    seconds = _best_time(lambda: oue.simulate(counts, rng), args.reps)
    rows.append({"task": "OUE.simulate", "d": d, "n": n, "value": seconds, "target": "< 1 s"})
    m = oue.simulate(counts, rng)
    for method in ("power", "power-ns"):
        seconds = _best_time(lambda method=method: bayesldp.postprocess(m, method), 1)
        rows.append({"task": method, "d": d, "n": n, "value": seconds, "target": "< 2 s"})
    est = bayesldp.postprocess(m, "power")
    idx = rng.choice(d, min(d, args.check_items), replace=False)
    y, sigma_c = m.estimates[idx] * n, m.sigma * n
    direct = calibrate.posterior_mean_direct(y, est.info["s"], sigma_c, n, full=True) / n
    gap = float(np.abs(est.frequencies[idx] - direct).max())
    rows.append({"task": "power max |fast - direct sum|", "d": d, "n": n, "value": gap,
                 "target": "<< sigma"})  # fmt: skip
    rows.append({"task": "sigma (for scale)", "d": d, "n": n, "value": m.sigma, "target": ""})
    return pd.DataFrame(rows)


def plot_scaling(frame: pd.DataFrame, path: Path) -> None:
    """Log-log plot of time against d, one line per method (from the saved table)."""
    fig = Figure(figsize=(7, 5))
    ax = fig.subplots()
    done = frame[~frame["skipped"].astype(bool)]
    for method, group in done.groupby("method", sort=False):
        ax.plot(group["d"], group["seconds"], marker="o", label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("domain size d")
    ax.set_ylabel("post-processing time (s, best of reps)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, path)


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run the scaling benchmark and write ``scaling.csv`` and ``scaling.png``."""
    if args.quick:
        args.domains = [1000, 10_000]
    out = Path(args.out)
    frame = scaling_table(args)
    write_csv(out / "scaling.csv", frame)
    plot_scaling(pd.read_csv(out / "scaling.csv"), out / "scaling.png")
    if args.targets:
        write_csv(out / "targets.csv", targets_table(args))
    return frame


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, nargs="+",
                        default=[1000, 10_000, 100_000, 1_000_000])  # fmt: skip
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--min-users", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ibu-iters", type=int, default=2000)
    parser.add_argument("--slow-max-d", type=int, default=1_000_000,
                        help="skip ibu/power/power-ns above this d")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", action="store_true", help="also the speed targets")
    parser.add_argument("--simulate-d", type=int, default=42_178)
    parser.add_argument("--simulate-n", type=int, default=1_000_000)
    parser.add_argument("--check-items", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="benchmarks/results/scaling")
    return parser


if __name__ == "__main__":
    result = main(build_parser().parse_args())
    with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
        print(result.pivot(index="method", columns="d", values="seconds").to_string())
