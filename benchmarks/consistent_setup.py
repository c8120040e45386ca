"""Setup time of ``bayes-consistent``: the interpolant of its log target, old code beside new.

Before NUTS runs, ``bayes-consistent`` finds the mode of the log target of
``(s, log c)``, the region holding the posterior and a Chebyshev interpolant of the
exact log target there (``seconds_likelihood`` in the estimate's info). This script
times that step (``prepare``) on Zipf(1.5) data, OUE epsilon 1 (d = 64: n = 50,000;
d = 1024: n = 10^6; data seed 0, oracle seed 1), each case in a fresh process, and with
``--baseline REF`` also with the code of git revision ``REF``, back to back. It then
reports how far the two codes' results are apart, as the largest relative
differences:

- ``node_rel``: the exact node values (log evidence, posterior mean and variance at
  every node) of a few fixed priors, steep ones included;
- ``target_rel``: the log target at those priors;
- ``coef_rel``: the interpolant's coefficients (relative to the largest), and
  ``mode_rel`` the mode it was whitened around;
- with ``--fit``, ``postprocess(m, "bayes-consistent", rng=2)`` whole: ``means_rel`` of
  the posterior means (``means_max_z``: the largest difference in Monte Carlo standard
  errors, ``frequencies_mcse``), ``draws_rel`` of the draws of ``(s, log c)`` and
  ``freq_draws_rel`` of the first frequency draws. ``--perturb 1e-13`` also fits the
  current code's interpolant with its coefficients scaled by ``1 + 1e-13``: NUTS's
  trajectories amplify any change, so draws repeat only for bit-identical
  coefficients.

Wall and CPU seconds are both recorded (``cpu_*``: this process's CPU time, less
sensitive to other work on a shared machine), with ``uptime``'s 1-minute load average
before and after every case: compare figures measured together.

``python benchmarks/consistent_setup.py --baseline main --fit --perturb 1e-13``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__:  # imported as benchmarks.consistent_setup
    from benchmarks.bayes_speed import export_code
else:  # run as a script: its folder is on sys.path
    from bayes_speed import export_code

ROOT = Path(__file__).resolve().parents[1]
#: d -> users of the cases (Zipf 1.5, OUE epsilon 1).
CASES = {64: 50_000, 1024: 1_000_000}
#: Timings compared between the codes (the baseline's over the current code's).
TIMES = ("seconds_prepare", "cpu_seconds_prepare", "cpu_ms_log_target", "seconds_likelihood")
#: Priors (s, c) at which node values and the log target are compared.
PRIORS = ((1.2, 1.0), (1.5, 30.0), (2.0, 1000.0), (4.0, 0.05), (7.5, 20_000.0))


def run_case(d: int, n: int, fit: bool, out: str, perturb: float = 0.0, repeats: int = 20) -> dict:
    """Time ``prepare`` (and ``postprocess`` with ``fit``) here; save the results to ``out``.

    With ``perturb``, the fit samples the interpolant whose coefficients are scaled by
    ``1 + perturb``.
    """
    import bayesldp
    from bayesldp import datasets
    from bayesldp.models.consistent._exact_total import log_target
    from bayesldp.models.consistent._region import prepare

    data = datasets.zipf(s=1.5, d=d, n=n, rng=0)
    m = bayesldp.OUE(epsilon=1.0, domain_size=data.d).simulate(data.counts, rng=1)
    start, cpu = time.perf_counter(), time.process_time()
    spec = prepare(m)
    row = {"d": d, "n": n, "seconds_prepare": time.perf_counter() - start}
    row["cpu_seconds_prepare"] = time.process_time() - cpu
    row["code_path"] = str(Path(bayesldp.__file__).parent.parent)
    problem = spec.problem
    saved = {"coef": spec.fit.coef, "mode": spec.mode, "box": np.asarray(spec.box)}
    nodes, targets = [], []
    for s, c in PRIORS:
        mom = problem.moments(s, c)
        nodes.append(np.stack([mom.node_log_ev, mom.node_mean, mom.node_var]))
        targets.append(log_target(problem, s, np.log(c)))
    saved["nodes"], saved["targets"] = np.stack(nodes), np.array(targets)
    cpu = time.process_time()
    for _ in range(repeats):
        log_target(problem, float(spec.mode[0]), float(spec.mode[1]))
    row["cpu_ms_log_target"] = 1e3 * (time.process_time() - cpu) / repeats
    row["chebyshev_degree"] = spec.fit.coef.shape[0]
    if fit:
        if perturb:
            from bayesldp.models.consistent import _scale_model

            moved = dataclasses.replace(spec.fit, coef=spec.fit.coef * (1.0 + perturb))
            variant = dataclasses.replace(spec, fit=moved)
            _scale_model.prepare = lambda *args, **kwargs: variant
        est = bayesldp.postprocess(m, "bayes-consistent", rng=2)
        row["seconds_likelihood"] = est.info["seconds_likelihood"]
        row["seconds_sampling"] = est.info["seconds_sampling"]
        post = est.inference_data.posterior
        saved["means"] = est.frequencies
        saved["means_mcse"] = est.info["frequencies_mcse"]
        saved["draws"] = np.stack([post["s"].values.ravel(), post["log_c"].values.ravel()])
        saved["freq_draws"] = est.uncertainty.sample(0, 20)
    np.savez(out, **saved)
    return row


def _child(d: int, fit: bool, out: Path, code: Path | None, perturb: float) -> dict:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    case = {"d": d, "n": CASES[d], "fit": fit, "out": str(out), "perturb": perturb}
    script = str(Path(__file__).resolve())
    load = os.getloadavg()[0]
    result = subprocess.run(
        [sys.executable, script, "--case", json.dumps(case)],
        capture_output=True, text=True, env=env, cwd=str(code or ROOT),
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row.update({"load_average_1min": load, "load_average_after": os.getloadavg()[0]})
    return row


def _rel(new: np.ndarray, old: np.ndarray, scale: float | None = None) -> float:
    """Largest ``|new - old| / |old|`` (or over ``scale``), 0 where both are 0."""
    new, old = np.asarray(new, float), np.asarray(old, float)
    den = np.abs(old) if scale is None else np.full(old.shape, scale)
    diff = np.abs(new - old)
    return float(np.max(np.where(diff == 0, 0.0, diff / np.where(den == 0, 1.0, den))))


def compare(new: dict, old: dict) -> dict:
    """Largest relative differences between two cases' saved results."""
    out = {"same_degree": new["coef"].shape == old["coef"].shape}
    out["node_rel"] = _rel(new["nodes"], old["nodes"])
    out["target_rel"] = _rel(new["targets"], old["targets"])
    out["mode_rel"] = _rel(new["mode"], old["mode"])
    if out["same_degree"]:
        out["coef_rel"] = _rel(new["coef"], old["coef"], float(np.abs(old["coef"]).max()))
    for key in ("means", "draws", "freq_draws"):
        if key in new and key in old:
            out[f"{key}_rel"] = _rel(new[key], old[key])
    if "means" in new and "means" in old:
        # the means' difference in Monte Carlo standard errors (of the two fits together)
        se = np.hypot(new["means_mcse"], old["means_mcse"])
        out["means_max_z"] = float(np.max(np.abs(new["means"] - old["means"]) / se))
    return out


def main(args: argparse.Namespace) -> list[dict]:
    """Run every case with the current code (and the baseline's); print and return rows."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = None
        if args.baseline:
            (Path(tmp) / "code").mkdir()
            base = export_code(args.baseline, Path(tmp) / "code")
        for d in args.sizes:
            runs = [("current", None, 0.0)]
            if base is not None:
                runs.append((args.baseline, base, 0.0))
            if args.perturb:
                runs.append((f"current, coefficients x (1 + {args.perturb:g})", None, args.perturb))
            saved, timed = {}, {}
            for k, (code, where, perturb) in enumerate(runs):
                out = Path(tmp) / f"run{k}_{d}.npz"
                row = {"code": code, **_child(d, args.fit, out, where, perturb)}
                saved[code], timed[code] = dict(np.load(out)), row
                rows.append(row)
                print(json.dumps(row), flush=True)
            for code, _, _ in runs[1:]:
                row = {
                    "code": f"{code} / current",
                    "d": d,
                    **compare(saved["current"], saved[code]),
                }
                if code == args.baseline:
                    for key in TIMES:
                        if key in timed["current"]:
                            row[key] = timed[code][key] / timed["current"][key]
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted(CASES), choices=CASES)
    parser.add_argument("--baseline", help="git revision to run beside the current code")
    parser.add_argument("--fit", action="store_true", help="also run postprocess whole")
    parser.add_argument(
        "--perturb",
        type=float,
        default=0.0,
        help="with --fit, also fit the current code's interpolant with its coefficients "
        "scaled by 1 + PERTURB (how far rounding-sized changes move the draws)",
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.case:
        print(json.dumps(run_case(**json.loads(parsed.case))))
    else:
        main(parsed)
