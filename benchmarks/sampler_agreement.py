"""Do the samplers agree? log a of bayes-dirichlet under each sampler, with its error.

Every sampler of :func:`bayesldp.models.fit` targets the same posterior, so the
posterior mean of the Dirichlet's log-concentration must agree between them to Monte
Carlo error; a sampler that is off by many standard errors is biased. This is how the
momentum-tied length of the first jittered-HMC kernel was found (paper/bayes.md,
"Jittered static HMC in fit"). Each row: a sampler, a seed and ``--sampler-kwargs``, the
posterior mean, sd and Monte Carlo standard error of ``log_a`` (ArviZ), each chain's
mean, and the seconds. ``--repeat-fits N`` instead fits bayes-hier N times at d = 4 (as
the SBC tests do) and reports the process's resident memory every 10 fits::

    python benchmarks/sampler_agreement.py --samplers numpyro numpyro-hmc nutpie pymc
    python benchmarks/sampler_agreement.py --samplers numpyro-hmc --sampler-kwargs '{"jitter": 0.0}'
    python benchmarks/sampler_agreement.py --repeat-fits 40 --samplers numpyro-hmc numpyro
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

if __package__:  # imported as benchmarks.sampler_agreement
    from benchmarks import results_table
    from benchmarks.chain_memory import resident_gb
    from benchmarks.speed_cases import CASES, case_measurement
else:  # run as a script: its folder is on sys.path
    import results_table
    from chain_memory import resident_gb
    from speed_cases import CASES, case_measurement


def agreement(case, d, sampler, seed, draws, tune, sampler_kwargs) -> dict:
    """Fit bayes-dirichlet's model once; return log a's posterior summary."""
    import arviz as az
    import numpy as np

    from bayesldp import models
    from bayesldp.models import dirichlet

    data, m = case_measurement(case, 0, d)
    model = dirichlet.build_dirichlet_model(m)
    begin = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = models.fit(
            model, m, draws=draws, tune=tune, sampler=sampler, random_seed=seed,
            sampler_kwargs=sampler_kwargs,
        )  # fmt: skip
    idata = est.inference_data
    log_a = idata.posterior["log_a"]
    return {
        "case": case, "d": data.d, "sampler": sampler, "seed": seed,
        "sampler_kwargs": json.dumps(sampler_kwargs or {}), "draws": draws, "tune": tune,
        "log_a_mean": float(log_a.mean()), "log_a_sd": float(log_a.std()),
        "log_a_mcse": float(az.mcse(idata, var_names=["log_a"])["log_a"]),
        "chain_means": " ".join(f"{v:.4f}" for v in np.asarray(log_a.mean("draw"))),
        "divergences": est.info["divergences"], "seconds": time.perf_counter() - begin,
    }  # fmt: skip


def repeated_fits(sampler: str, fits: int, clear: bool) -> list[dict]:
    """Fit bayes-hier ``fits`` times at d = 4; a row of resident memory every 10 fits."""
    import numpy as np

    import bayesldp
    from bayesldp import models
    from bayesldp.models.hierarchical import build_hier_model

    oracle = bayesldp.OUE(1.0, 4)
    rng = np.random.default_rng(0)
    rows = []
    begin = time.perf_counter()
    model = None
    for i in range(fits):
        m = oracle.simulate(rng.multinomial(300, [0.4, 0.3, 0.2, 0.1]), rng)
        if model is None:
            model = build_hier_model(m, {"a": [0, 1], "b": [2, 3]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            models.fit(
                model, m, draws=200, tune=200, sampler=sampler, random_seed=i,
                clear_jax_caches=clear,
            )  # fmt: skip
        if (i + 1) % 10 == 0 or i + 1 == fits:
            rows.append({
                "sampler": sampler, "clear_jax_caches": clear, "fits": i + 1,
                "resident_gb": resident_gb(), "seconds": time.perf_counter() - begin,
            })  # fmt: skip
    return rows


def main(args: argparse.Namespace) -> list[dict]:
    """Run each sampler (and seed) in a fresh process; print and write the rows."""
    rows: list[dict] = []
    runs = []
    if args.repeat_fits:
        for sampler in args.samplers:
            for clear in (False, True):
                runs.append(["--run-memory", sampler, "--clear", str(int(clear))])
    else:
        for sampler in args.samplers:
            for seed in args.seeds:
                runs.append(["--run", sampler, "--seed", str(seed)])
    common = ["--case", args.case, "--draws", str(args.draws), "--tune", str(args.tune),
              "--repeat-fits", str(args.repeat_fits)]  # fmt: skip
    if args.d is not None:
        common += ["--d", str(args.d)]
    if args.sampler_kwargs is not None:
        common += ["--sampler-kwargs", json.dumps(args.sampler_kwargs)]
    for run in runs:
        load = os.getloadavg()[0]
        cmd = [sys.executable, __file__, *run, *common]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(run)} failed:\n{result.stderr[-3000:]}")
        for line in result.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                row.update(load_before=load, load_after=os.getloadavg()[0])
                results_table.report(row, rows)
    results_table.write_rows(rows, args)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="zipf", choices=CASES)
    parser.add_argument("--d", type=int, help="domain size (zipf, wordfreq)")
    parser.add_argument("--samplers", nargs="+", default=["numpyro", "numpyro-hmc"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[11])
    parser.add_argument("--draws", type=int, default=3000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--sampler-kwargs", type=json.loads, help="JSON dict for fit")
    parser.add_argument(
        "--repeat-fits", type=int, default=0,
        help="fit bayes-hier this many times per process and report its memory",
    )  # fmt: skip
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--run-memory", help=argparse.SUPPRESS)
    parser.add_argument("--clear", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=11, help=argparse.SUPPRESS)
    results_table.add_output_arguments(parser, "sampler_agreement")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.run is not None:
        row = agreement(
            parsed.case, parsed.d, parsed.run, parsed.seed, parsed.draws, parsed.tune,
            parsed.sampler_kwargs,
        )  # fmt: skip
        print(json.dumps(row, default=float))
    elif parsed.run_memory is not None:
        for row in repeated_fits(parsed.run_memory, parsed.repeat_fits, bool(parsed.clear)):
            print(json.dumps(row, default=float), flush=True)
    else:
        main(parsed)
