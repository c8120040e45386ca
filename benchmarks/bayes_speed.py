"""Wall time and peak memory of the Bayesian models (NUTS included) at the papers' scales.

Each case runs in a fresh Python process, so the time includes importing PyMC and
compiling the model. Cases: Zipf(1.5), d = 1024, n = 1e6; Zipf(1.1), d = 42178, n = 1e6;
Zipf(1.1), d = 10^6, n = 10^7; epsilon = 1, OUE.

Options that put figures side by side in one run (the machine is shared: compare ratios
measured together, never figures from different runs):

- ``--cold``: every case gets a fresh, empty PyTensor compile directory
  (``PYTENSOR_FLAGS=base_compiledir=<temp dir>``), as on a new machine.
- ``--threads both``: each case once with the models' one BLAS/OpenMP thread per chain
  (the default) and once with the libraries' default thread pools.
- ``--baseline REF``: each case also with the code of git revision ``REF`` (exported to a
  temporary folder), e.g. the commit before a change.

Peak memory is the process's maximum resident set size. ``--interval`` also times one
single-item credible interval (its draws are generated on demand).

``python benchmarks/bayes_speed.py --methods bayes-power bayes-power-zi bayes-consistent
--sizes 1024 42178 --cold``; ``--case 1024 --method bayes-power`` runs one case here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from bayesldp._io import write_csv

if __package__:  # imported as benchmarks.bayes_speed
    from benchmarks import results_table
else:  # run as a script: its folder is on sys.path
    import results_table

CASES = {1024: (1.5, 1_000_000), 42178: (1.1, 1_000_000), 1_000_000: (1.1, 10_000_000)}
ROOT = Path(__file__).resolve().parents[1]


def run_case(
    d: int,
    method: str,
    seed: int,
    n: int | None = None,
    draws: int = 1000,
    tune: int = 1000,
    interval: bool = False,
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
    row = {
        "method": method,
        "d": d,
        "n": n,
        "seconds_total": done - start,
        "seconds_postprocess": done - ready,
        **{k: v for k, v in est.info.items() if k.startswith("seconds")},
        "r_hat_s": est.info["r_hat"]["s"],
        "ess_bulk_s": est.info["ess_bulk"]["s"],
        "mse": metrics.mse(data.frequencies, est),
        "peak_rss_mb_fit": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if interval:
        t0 = time.perf_counter()
        est.interval([0], 0.9)
        row["seconds_interval"] = time.perf_counter() - t0
    if d <= 100_000:
        row["mse_power"] = metrics.mse(data.frequencies, bayesldp.postprocess(m, "power"))
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def _export(ref: str, where: Path) -> Path:
    """Export the code of git revision ``ref`` to ``where``, importable as ``bayesldp``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "bayesldp" / "models").symlink_to(where / "models")
    return where


def _run(args, d: int, method: str, threads: str, code: str, baseline: Path | None) -> dict:
    script = str(Path(__file__).resolve())
    if baseline is not None:
        script = str(baseline / "benchmarks" / "bayes_speed.py")
        if not Path(script).exists():
            script = str(Path(__file__).resolve())
    with results_table.child_environment(args.cold) as env:
        if baseline is not None:
            env["PYTHONPATH"] = str(baseline)
        cmd = [sys.executable, "-c", _CHILD, script, str(d), method, str(args.seed), threads,
               str(int(args.interval)), str(args.n or 0)]  # fmt: skip
        start = time.perf_counter()
        # the child's working directory comes first on its path: the baseline's own folder
        cwd = str(baseline if baseline is not None else ROOT)
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
        wall = time.perf_counter() - start
    if result.returncode != 0:
        return {"method": method, "d": d, "code": code, "threads": threads,
                "error": result.stderr.strip().splitlines()[-1][:300]}  # fmt: skip
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row.update(
        {"code": code, "threads": threads, "seconds_process": wall, "cold_cache": bool(args.cold),
         "load_average_1min": os.getloadavg()[0]}
    )  # fmt: skip
    return row


# The child imports the benchmark module by path (so a baseline's own copy is used
# when it has one), sets the thread policy and runs one case.
_CHILD = """
import importlib.util, json, os, sys
path, d, method, seed, threads, interval, n = sys.argv[1:8]
sys.path.append(os.path.dirname(path))  # its sibling modules, as when run as a script
if threads == "default":
    try:
        import bayesldp.models.sampling as sampling
        sampling.FIT_THREADS = None
    except Exception:
        pass
spec = importlib.util.spec_from_file_location("bayes_speed_case", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
takes = "interval" in mod.run_case.__code__.co_varnames
kwargs = {"interval": True} if interval == "1" and takes else {}
if int(n):
    kwargs["n"] = int(n)
row = mod.run_case(int(d), method, int(seed), **kwargs)
print(json.dumps(row, default=float))
"""


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run every case in a fresh process and write the table."""
    rows = []
    thread_modes = ["1", "default"] if args.threads == "both" else [args.threads]
    with tempfile.TemporaryDirectory() as tmp:
        baseline = _export(args.baseline, Path(tmp)) if args.baseline else None
        for method in args.methods:
            for d in args.sizes:
                for threads in thread_modes:
                    rows.append(_run(args, d, method, threads, "current", None))
                    print(json.dumps(rows[-1], default=float), flush=True)
                    if baseline is not None:
                        rows.append(_run(args, d, method, threads, args.baseline, baseline))
                        print(json.dumps(rows[-1], default=float), flush=True)
    frame = pd.DataFrame(rows)
    frame["cpu_count"] = os.cpu_count()
    frame["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    name = "_".join(args.methods) if len(args.methods) < 3 else "all"
    write_csv(Path(args.out) / f"bayes_speed_{name}{args.suffix}.csv", frame)
    return frame


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 42178])
    parser.add_argument("--methods", nargs="+", default=["bayes-power"])
    parser.add_argument("--method", help="with --case: the method to run")
    parser.add_argument("--case", type=int, help="run one case here and print JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--n",
        type=int,
        help="users per case (default: the case's own; small d with n <= "
        "2000 puts bayes-consistent on its exact route)",
    )
    parser.add_argument("--cold", action="store_true", help="empty PyTensor cache per case")
    parser.add_argument("--threads", choices=["1", "default", "both"], default="1")
    parser.add_argument("--baseline", help="git revision to run beside the current code")
    parser.add_argument("--interval", action="store_true", help="also time one interval")
    parser.add_argument("--suffix", default="", help="appended to the output file's name")
    parser.add_argument("--out", default="benchmarks/results/bayes")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.case is not None:
        method = parsed.method or parsed.methods[0]
        print(json.dumps(run_case(parsed.case, method, parsed.seed, n=parsed.n), default=float))
    else:
        with pd.option_context("display.width", 250, "display.float_format", "{:.4g}".format):
            print(main(parsed).to_string(index=False))
