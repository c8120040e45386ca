r"""Solve time and agreement of the cvxpy formulations against the closed forms.

For each domain size ``d`` (Zipf(1.5) data, ``n = --n`` users, OUE at ``--eps``) and
each method (``cls``, ``mle-apx``, ``mle``), at the default settings (``--configs
default``: default solver and tolerances, polishing on) and/or at tightened tolerances
with other solvers (``--configs tight``), records the wall time of
``postprocess(m, method, backend="cvxpy", ...)`` (problem construction, cvxpy
compilation, solve and polishing, the minimum over ``--repeat`` runs), the solver's own
solve time and status, the largest absolute difference of the returned frequencies to
the closed form of :mod:`bayesldp.methods` (timed as well), the largest change made by
polishing (``polish_distance``: how far the solver's own answer was), the largest KKT
residual of the returned point and its distance from the simplex. A configuration that
took more than
``--budget`` seconds at one size is not run at the larger sizes (a ``skipped`` row),
and every solve is stopped by the solver's own time limit ``--time-limit`` (recorded
with the status the solver reports, e.g. ``user_limit``).

Run::

    python benchmarks/convex_bench.py --sizes 100 1000 10000 100000 \
        --out benchmarks/results/convex

Writes ``convex_bench.csv`` (tidy: d, method, solver, tol, status, solver_status,
seconds, solver_seconds, polish_seconds, max_abs_diff, polish_distance, kkt_max,
min_frequency, sum_error, closed_form_seconds) and ``convex_bench.png`` (log-log time
against d), the plot drawn from the saved CSV.
"""

from __future__ import annotations

import argparse
import logging
import platform
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import bayesldp
from bayesldp import convex, datasets, methods
from bayesldp._io import write_csv, write_json
from bayesldp.convex._solve import DEFAULT_SOLVERS
from bayesldp.plotting import save_figure

logger = logging.getLogger("convex_bench")

#: (method, solver, tol, max_iter) configurations; ``None`` is the default.
CONFIGS = {
    "default": [
        ("cls", None, None, None),
        ("mle-apx", None, None, None),
        ("mle", None, None, None),
    ],
    "tight": [
        ("cls", "CLARABEL", 1e-10, None),
        ("cls", "OSQP", 1e-9, 200_000),
        ("mle-apx", "CLARABEL", 1e-10, None),
        ("mle-apx", "SCS", 1e-10, 200_000),
        ("mle", "SCS", 1e-10, 200_000),
        ("mle", "SCS", 1e-7, 200_000),
    ],
}
CLOSED = {"cls": methods.cls, "mle-apx": methods.mle_apx, "mle": methods.mle}


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--n", type=int, default=1_000_000, help="number of users")
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1, help="runs per timing (minimum)")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="skip larger sizes after a run longer than this (s)")  # fmt: skip
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="solver time limit per solve (s); a run hitting it is recorded "
                             "with its status")  # fmt: skip
    parser.add_argument("--seed", type=int, default=2020)
    parser.add_argument("--configs", choices=["default", "tight", "all"], default="default",
                        help="default settings, tightened tolerances, or both")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/convex"))
    return parser


def time_limit(solver: str, seconds: float | None) -> dict | None:
    """Return the solver's own time-limit option (a run that hits it raises, and is recorded)."""
    if seconds is None:
        return None
    key = {"SCS": "time_limit_secs", "CLARABEL": "time_limit", "OSQP": "time_limit"}[solver]
    return {key: float(seconds)}


def timed(func, repeat: int, *fargs, **fkwargs):
    """Minimum wall time of ``repeat`` calls ``func(*fargs, **fkwargs)``, and its result."""
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func(*fargs, **fkwargs)
        seconds = time.perf_counter() - start
        if seconds < best:
            best, result = seconds, out
    return best, result


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run the benchmark; save and return one row per (d, method, solver)."""
    rng = np.random.default_rng(args.seed)
    configs = (
        CONFIGS["default"] + CONFIGS["tight"] if args.configs == "all" else CONFIGS[args.configs]
    )
    rows, over_budget = [], set()
    for d in sorted(args.sizes):
        data = datasets.zipf(1.5, d, args.n, rng=rng)
        m = bayesldp.OUE(args.eps, d).simulate(data.counts, rng)
        closed = {}
        for name, func in CLOSED.items():
            seconds, est = timed(func, max(args.repeat, 3), m)
            closed[name] = seconds, est.frequencies
        for method, solver_option, tol, max_iter in configs:
            solver = solver_option or DEFAULT_SOLVERS[method]
            row = {"d": d, "n": args.n, "eps": args.eps, "method": method, "solver": solver,
                   "tol": "default" if tol is None else tol,
                   "closed_form_seconds": closed[method][0]}  # fmt: skip
            if (method, solver, tol) in over_budget:
                rows.append({**row, "status": "skipped (over budget at a smaller d)"})
                continue
            logger.info("d=%d %s %s", d, method, solver)
            options = {"backend": "cvxpy", "solver": solver_option, "tol": tol,
                       "max_iter": max_iter,
                       "solver_options": time_limit(solver, args.time_limit)}  # fmt: skip
            start = time.perf_counter()
            try:
                seconds, est = timed(bayesldp.postprocess, args.repeat, m, method, **options)
            except convex.SolverFailedError as exc:
                elapsed = time.perf_counter() - start
                rows.append({**row, "status": exc.status, "failed_after_seconds": elapsed})
                if elapsed > args.budget:
                    over_budget.add((method, solver, tol))
                continue
            if seconds > args.budget:
                over_budget.add((method, solver, tol))
            info = est.info
            rows.append({
                **row,
                "status": info["status"],
                "solver_status": info["solver_status"],
                "seconds": seconds,
                "solver_seconds": info["solve_time"],
                "polish_seconds": info["polish_time"],
                "iterations": info["iterations"],
                "max_abs_diff": float(np.abs(est.frequencies - closed[method][1]).max()),
                "polish_distance": info["polish"]["distance"],
                "moved": len(info["polish"]["moved"]),
                "kkt_max": max(info["kkt_residuals"].values()),
                "min_frequency": info["min_frequency"],
                "sum_error": info["sum_error"],
            })  # fmt: skip
    frame = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / "convex_bench.csv", frame)
    write_json(args.out / "convex_bench.json", {
        "args": {k: str(v) for k, v in vars(args).items()},
        "machine": platform.platform(), "processor": platform.processor(),
        "python": platform.python_version(), "cvxpy": cp.__version__,
    })  # fmt: skip
    plot(pd.read_csv(args.out / "convex_bench.csv"), args.out / "convex_bench.png")
    return frame


def plot(frame: pd.DataFrame, path: Path) -> None:
    """Log-log wall time against d, one line per (method, solver) and closed form."""
    fig = Figure(figsize=(7, 5))
    ax = fig.subplots()
    done = frame.dropna(subset=["seconds"])
    for (method, solver, tol), group in done.groupby(["method", "solver", "tol"]):
        ax.plot(group["d"], group["seconds"], marker="o",
                label=f"{method} cvxpy/{solver} tol {tol}")  # fmt: skip
    closed = frame.groupby(["method", "d"], as_index=False)["closed_form_seconds"].min()
    for method, group in closed.groupby("method"):
        ax.plot(group["d"], group["closed_form_seconds"], ls="--", marker="x",
                label=f"{method} closed form")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("domain size d")
    ax.set_ylabel("wall time (s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    main(build_parser().parse_args())
