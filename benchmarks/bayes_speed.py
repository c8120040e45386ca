"""Wall time, effective samples per second and peak memory of the Bayesian models.

Each case runs in a fresh Python process, so the time includes importing PyMC and
compiling the model. Cases (``--sizes``): Zipf(1.5), d = 1024, n = 1e6; Zipf(1.1),
d = 42178, n = 1e6; Zipf(1.1), d = 10^6, n = 10^7; ``--dataset wordfreq`` takes the
42,178 most frequent English words (n = 1e6) instead of the synthetic Zipf data;
epsilon = 1, OUE.

``--samplers`` runs every case once per sampler (``sampler=`` of the model), side by
side, and reports ``ess_per_second``: the worst element's bulk ESS (of the frequency
vector for the models of it, of the exponent ``s`` for bayes-power and
bayes-consistent) divided by the sampling time (compilation included), and
``ess_per_second_total`` against the whole process's time. A sampler the current code
does not offer runs with the code of ``--baseline REF`` only.

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

The issue's targets in one command: ``python benchmarks/bayes_speed.py --targets``
times, each in a fresh process from an empty PyTensor compile directory (JAX keeps no
cache between processes), the README's five-line model at d = 1024 (target 60 s, no
divergences) beside the same prior written with ``pm.Dirichlet``; every ready-made
model at d = 1024 (30 s) and d = 42,178 (3 min); and ``bayesldp demo --bayes`` (3 min).
``--quick`` runs the d = 1024 cases only. The table (``benchmarks/results/bayes_speed/
targets.csv``, printed) has each case's seconds beside its target and the 1-minute load
average before and after it: the machine is shared, so read the load with the time.
``--compare-hmc --seeds 0 1 2`` fits bayes-dirichlet and bayes-hier with NumPyro's NUTS
and with the jittered static HMC seed by seed (``nuts_vs_hmc.csv``).

``python benchmarks/bayes_speed.py --methods bayes-power bayes-power-zi bayes-consistent
--sizes 1024 42178 --cold``; ``python benchmarks/bayes_speed.py --methods bayes-dirichlet
--sizes 1024 --samplers numpyro nutpie pymc --cold`` compares the samplers;
``--case 1024 --method bayes-power`` runs one case here.
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

#: The README's own five-line model (``dirichlet_simplex``) and the same prior written
#: with ``pm.Dirichlet`` (the README's model before), run as ``--methods`` names.
README_MODELS = ("readme-model", "readme-pm-dirichlet")
#: The ready-made models.
READY_MADE = ("bayes-dirichlet", "bayes-hier", "bayes-power", "bayes-power-zi", "bayes-consistent")
#: The issue's targets in seconds: (case, d) -> target; ``demo-bayes`` is
#: ``bayesldp demo --bayes``.
TARGETS = {
    **{("readme-model", 1024): 60.0},
    **{(m, 1024): 30.0 for m in READY_MADE},
    **{(m, 42178): 180.0 for m in READY_MADE},
    ("demo-bayes", 1024): 180.0,
}


def _library(est, sampler: str | None) -> str | None:
    """Return the library that drew ``est``'s posterior (ArviZ's attribute), if recorded."""
    posterior = getattr(getattr(est, "inference_data", None), "posterior", None)
    return getattr(posterior, "attrs", {}).get("inference_library", sampler)


def readme_model(m, method: str, seed: int, options: dict):
    """Fit the README's model (or its ``pm.Dirichlet`` form) to ``m``."""
    import numpy as np
    import pymc as pm

    import bayesldp.models as bm

    with pm.Model() as model:
        a = pm.Exponential("a", 1.0)
        if method == "readme-model":
            f = bm.dirichlet_simplex("f", a, m)
        else:
            f = pm.Dirichlet("f", a * np.ones(m.domain_size))
        bm.ldp_likelihood("counts", f, m)
    return bm.fit(model, m, rng=seed, **options)


def measurement(d: int, seed: int, n: int | None = None, dataset: str = "zipf"):
    """Return ``(data, measurement)`` of a case: :data:`CASES`' data, OUE epsilon 1."""
    import numpy as np

    import bayesldp
    from bayesldp import datasets

    s, default_n = CASES.get(d, (1.5, 1_000_000))
    n = default_n if n is None else n
    if dataset == "wordfreq":
        data = datasets.wordfreq_words(d=d, n=n, rng=seed)
    else:
        data = datasets.zipf(s, d, n, rng=seed)
    return data, bayesldp.OUE(1.0, d).simulate(data.counts, np.random.default_rng(seed))


def run_case(
    d: int,
    method: str,
    seed: int,
    n: int | None = None,
    draws: int = 1000,
    tune: int = 1000,
    interval: bool = False,
    sampler: str | None = None,
    dataset: str = "zipf",
    threads: str = "1",
) -> dict:
    """Time one case in this process; return the measurements."""
    start = time.perf_counter()

    import bayesldp
    from bayesldp import metrics

    data, m = measurement(d, seed, n, dataset)
    ready = time.perf_counter()
    options = {"draws": draws, "tune": tune}
    if sampler is not None:
        options["sampler"] = sampler
    if threads == "default":
        options["threads"] = None
    if method in README_MODELS:
        est = readme_model(m, method, seed, options)
    else:
        est = bayesldp.postprocess(m, method, rng=seed, **options)
    done = time.perf_counter()
    watched = "f" if "f" in est.info["ess_bulk"] else "s"
    ess = est.info["ess_bulk"][watched]
    row = {
        "method": method,
        "dataset": dataset,
        "sampler": est.info.get("sampler") or _library(est, sampler),
        "d": d,
        "n": n,
        "seconds_total": done - start,
        "seconds_postprocess": done - ready,
        **{k: v for k, v in est.info.items() if k.startswith("seconds")},
        "ess_variable": watched,
        "ess_bulk_worst": ess,
        "r_hat_worst": est.info["r_hat"][watched],
        "ess_per_second": ess / est.info["seconds_sampling"],
        "ess_per_second_total": ess / (done - start),
        "divergences": est.info["divergences"],
        "warnings": " | ".join(est.info.get("warnings", [])),
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


def export_code(ref: str, where: Path) -> Path:
    """Export the code of git revision ``ref`` to ``where``, importable as ``bayesldp``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "bayesldp" / "models").symlink_to(where / "models")
    return where


def _demo(args, code: str, baseline: Path | None) -> dict:
    """Time ``bayesldp demo --bayes`` in a fresh process (the README's first command)."""
    load = os.getloadavg()[0]
    with results_table.child_environment(args.cold) as env, tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "bayesldp.cli", "demo", "--bayes", "--quiet", "--out", out]
        if baseline is not None:
            env["PYTHONPATH"] = str(baseline)
        start = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=out)
        wall = time.perf_counter() - start
    row = {"method": "demo-bayes", "d": 1024, "sampler": "default", "code": code,
           "seconds_process": wall, "seconds_total": wall, "cold_cache": bool(args.cold),
           "load_average_1min": load, "load_average_after": os.getloadavg()[0]}  # fmt: skip
    if result.returncode != 0:
        row["error"] = _error_line(result)
    return row


def _error_line(result: subprocess.CompletedProcess) -> str:
    """Return the failed child's last line of stderr, or how it ended if it printed none."""
    lines = result.stderr.strip().splitlines()
    if lines:
        return lines[-1][:300]
    if result.returncode < 0:  # e.g. -9: the kernel's out-of-memory killer
        return f"killed by signal {-result.returncode}, nothing on stderr"
    return f"exit code {result.returncode}, nothing on stderr"


def _run(
    args, d: int, method: str, sampler: str | None, threads: str, code: str,
    baseline: Path | None,
) -> dict:  # fmt: skip
    if method == "demo-bayes":
        return _demo(args, code, baseline)
    script = str(Path(__file__).resolve())  # the baseline's code runs this script's case
    load = os.getloadavg()[0]
    with results_table.child_environment(args.cold) as env:
        if baseline is not None:
            env["PYTHONPATH"] = str(baseline)
        case = {"d": d, "method": method, "seed": args.seed, "threads": threads,
                "interval": args.interval, "n": args.n, "sampler": sampler,
                "dataset": args.dataset, "draws": args.draws, "tune": args.tune}  # fmt: skip
        cmd = [sys.executable, "-c", _CHILD, script, json.dumps(case)]
        start = time.perf_counter()
        # the child's working directory comes first on its path: the baseline's own folder
        cwd = str(baseline if baseline is not None else ROOT)
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
        wall = time.perf_counter() - start
    if result.returncode != 0:
        return {"method": method, "d": d, "sampler": sampler, "code": code, "threads": threads,
                "error": _error_line(result)}  # fmt: skip
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row.update(
        {"code": code, "threads": threads, "seconds_process": wall, "cold_cache": bool(args.cold),
         "ess_per_second_process": row["ess_bulk_worst"] / wall,
         "load_average_1min": load, "load_average_after": os.getloadavg()[0]}
    )  # fmt: skip
    return row


# The child imports the benchmark module by path and runs one case.
_CHILD = """
import importlib.util, json, os, sys
path, case = sys.argv[1], json.loads(sys.argv[2])
sys.path.append(os.path.dirname(path))  # its sibling modules, as when run as a script
spec = importlib.util.spec_from_file_location("bayes_speed_case", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if not case["n"]:
    case["n"] = None
row = mod.run_case(**case)
print(json.dumps(row, default=float))
"""


def _current_samplers() -> tuple[str, ...]:
    """Return the samplers this code's models take by name."""
    from bayesldp.models._settings import OTHER_SAMPLERS, SAMPLERS

    return (*SAMPLERS, *OTHER_SAMPLERS)


def plan(args: argparse.Namespace) -> list[tuple[str, int, str | None, int]]:
    """Return the cases (method, d, sampler, seed) of ``--targets`` / ``--quick``."""
    cases: list[tuple[str, int, str | None, int]] = [("readme-model", 1024, None, args.seed)]
    cases += [(m, 1024, None, args.seed) for m in READY_MADE]
    if args.quick:
        return cases
    cases += [("readme-pm-dirichlet", 1024, None, args.seed)]  # the README's model before
    cases += [(m, 42178, None, args.seed) for m in READY_MADE]
    cases += [("demo-bayes", 1024, None, args.seed)]
    return cases


def hmc_plan(args: argparse.Namespace) -> list[tuple[str, int, str | None, int]]:
    """Return the cases of ``--compare-hmc``: NUTS against the jittered HMC, seed by seed."""
    return [
        (method, d, sampler, seed)
        for seed in args.seeds
        for method in ("bayes-dirichlet", "bayes-hier")
        for d in args.sizes
        for sampler in ("numpyro", "numpyro-hmc")
    ]


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the printable table: each case's seconds beside its target, with the load."""
    frame = frame.copy()
    if "error" not in frame:
        frame["error"] = None
    cases = zip(frame["method"], frame["d"], strict=True)
    frame["target_s"] = [TARGETS.get((m, d)) for m, d in cases]
    divergences = frame["divergences"] if "divergences" in frame else pd.Series(0, frame.index)
    meets = (frame["seconds_process"] < frame["target_s"]) & (divergences.fillna(0) == 0)
    frame["meets"] = [m if t == t else None for m, t in zip(meets, frame["target_s"], strict=True)]
    columns = [
        "method", "d", "sampler", "seed", "seconds_process", "target_s", "meets",
        "seconds_sampling", "divergences", "r_hat_worst", "ess_bulk_worst", "ess_per_second",
        "mse", "load_average_1min", "load_average_after", "warnings", "error",
    ]  # fmt: skip
    return frame[[c for c in columns if c in frame]]


def run_plan(args: argparse.Namespace, cases, name: str) -> pd.DataFrame:
    """Run ``cases`` one fresh process each; write and return the table."""
    rows = []
    for method, d, sampler, seed in cases:
        args.seed = seed
        rows.append(_run(args, d, method, sampler, args.threads, "current", None))
        rows[-1]["seed"] = seed
        print(json.dumps(rows[-1], default=float), flush=True)
        frame = table(pd.DataFrame(rows))
        frame["cpu_count"] = os.cpu_count()
        frame["cold_cache"] = bool(args.cold)
        write_csv(Path(args.out) / f"{name}{args.suffix}.csv", frame)
    return frame


def markdown(path: Path) -> str:
    """Return the targets table at ``path`` as Markdown (the rows ``paper/bayes.md`` shows)."""
    frame = pd.read_csv(path)
    lines = [
        "| case | d | sampler | seconds | target | divergences | worst R-hat | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in frame.itertuples():
        target = "" if pd.isna(row.target_s) else f"{row.target_s:.0f} s"
        div = "" if pd.isna(getattr(row, "divergences", float("nan"))) else f"{row.divergences:.0f}"
        rhat = getattr(row, "r_hat_worst", float("nan"))
        rhat = "" if pd.isna(rhat) else f"{rhat:.3f}"
        sampler = "" if pd.isna(row.sampler) else row.sampler
        lines.append(
            f"| {row.method} | {row.d} | {sampler} | {row.seconds_process:.1f} | {target} | "
            f"{div} | {rhat} | {row.load_average_1min:.1f}, {row.load_average_after:.1f} |"
        )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run every case in a fresh process and write the table."""
    if args.markdown:
        print(markdown(Path(args.markdown)))
        raise SystemExit(0)
    if args.quick or args.targets:
        args.cold = True
        return run_plan(args, plan(args), "targets_quick" if args.quick else "targets")
    if args.compare_hmc:
        return run_plan(args, hmc_plan(args), "nuts_vs_hmc")
    rows = []
    thread_modes = ["1", "default"] if args.threads == "both" else [args.threads]
    samplers = args.samplers or [None]
    offered = _current_samplers()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = export_code(args.baseline, Path(tmp)) if args.baseline else None
        for method in args.methods:
            for d in args.sizes:
                for sampler in samplers:
                    for threads in thread_modes:
                        # a named sampler runs with the code that offers it (the current
                        # code first); without one, both codes run
                        runs = []
                        if sampler is None or sampler in offered:
                            runs.append(("current", None))
                        if baseline is not None and (sampler is None or sampler not in offered):
                            runs.append((args.baseline, baseline))
                        for code, where in runs:
                            rows.append(_run(args, d, method, sampler, threads, code, where))
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
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024])
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
    parser.add_argument(
        "--samplers", nargs="+", help="run each case once per sampler (the models' sampler=)"
    )
    parser.add_argument("--dataset", choices=["zipf", "wordfreq"], default="zipf")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain")
    parser.add_argument("--tune", type=int, default=1000, help="warm-up iterations per chain")
    parser.add_argument("--cold", action="store_true", help="empty PyTensor cache per case")
    parser.add_argument("--threads", choices=["1", "default", "both"], default="1")
    parser.add_argument(
        "--baseline",
        help="git revision to run beside the current code (alone for samplers it lacks)",
    )
    parser.add_argument("--interval", action="store_true", help="also time one interval")
    parser.add_argument("--suffix", default="", help="appended to the output file's name")
    parser.add_argument("--out", default="benchmarks/results/bayes_speed")
    parser.add_argument(
        "--targets",
        action="store_true",
        help="every timing target of the Bayesian route, from an empty cache, each beside "
        "its target and the alternative it replaced",
    )
    parser.add_argument(
        "--quick", action="store_true", help="--targets at d = 1024 only (the README's "
        "model and every ready-made model)"
    )  # fmt: skip
    parser.add_argument(
        "--compare-hmc",
        action="store_true",
        help="bayes-dirichlet and bayes-hier with NumPyro's NUTS and the jittered HMC, "
        "seed by seed (--seeds, --sizes)",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--markdown", help="print a targets CSV as a Markdown table, and stop")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.case is not None:
        method = parsed.method or parsed.methods[0]
        sampler = parsed.samplers[0] if parsed.samplers else None
        row = run_case(
            parsed.case, method, parsed.seed, n=parsed.n, draws=parsed.draws, tune=parsed.tune,
            sampler=sampler, dataset=parsed.dataset,
        )  # fmt: skip
        print(json.dumps(row, default=float))
    else:
        with pd.option_context("display.width", 250, "display.float_format", "{:.4g}".format):
            print(main(parsed).to_string(index=False))
