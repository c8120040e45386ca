"""Leapfrog's acceptance on an ideal target: a standard Gaussian of dimension d.

NUTS in the coordinates of :func:`bayesldp.models.dirichlet.dirichlet_simplex` would
see a standard Gaussian if every item's posterior were Gaussian and the mass matrix
exact. This script measures the Metropolis acceptance ``min(1, exp(-dH))`` of one
leapfrog trajectory of integration time about pi (the length after which NUTS's
U-turn criterion stops on a Gaussian: ``ceil(pi / h)`` steps of size ``h``), started
from an exact draw of the target and of the momentum, for each domain size and step.
Comparing it with the step NUTS adapts on a real measurement (``bayes_layer_speed.py``,
column ``step_size``) tells whether the step is set by the dimension itself or by the
items whose posterior is not Gaussian.

    python benchmarks/leapfrog_gaussian.py
    python benchmarks/leapfrog_gaussian.py --dims 1024 42178 --steps 0.1 0.2 0.3 --reps 200
"""

from __future__ import annotations

import argparse
import math

import numpy as np

if __package__:  # imported as benchmarks.leapfrog_gaussian
    from benchmarks.results_table import add_output_arguments, report, write_rows
else:  # run as a script: its folder is on sys.path
    from results_table import add_output_arguments, report, write_rows


def acceptance(d: int, h: float, reps: int, rng: np.random.Generator) -> dict:
    """Mean and quantiles of the acceptance of ``reps`` trajectories of time ~pi."""
    steps = math.ceil(math.pi / h)
    q = rng.standard_normal((reps, d))
    p = rng.standard_normal((reps, d))
    start = 0.5 * (np.einsum("ij,ij->i", q, q) + np.einsum("ij,ij->i", p, p))
    p -= 0.5 * h * q  # the potential is q'q / 2, so its gradient is q
    for i in range(steps):
        q += h * p
        p -= (h if i < steps - 1 else 0.5 * h) * q
    energy_error = 0.5 * (np.einsum("ij,ij->i", q, q) + np.einsum("ij,ij->i", p, p)) - start
    accept = np.exp(-np.maximum(energy_error, 0.0))
    return {
        "d": d,
        "step": h,
        "leapfrog_steps": steps,
        "reps": reps,
        "mean_acceptance": float(accept.mean()),
        "acceptance_q10": float(np.quantile(accept, 0.1)),
        "mean_energy_error": float(energy_error.mean()),
    }


def main(args: argparse.Namespace) -> list[dict]:
    """Measure every (d, step) pair; print a JSON row each and write the table."""
    rng = np.random.default_rng(args.seed)
    rows = []
    for d in args.dims:
        for h in args.steps:
            report(acceptance(d, h, args.reps, rng), rows)
    write_rows(rows, args)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", nargs="+", type=int, default=[1024, 4096, 16384, 42178])
    parser.add_argument("--steps", nargs="+", type=float, default=[0.09, 0.12, 0.15, 0.2, 0.3, 0.4])
    parser.add_argument("--reps", type=int, default=200, help="trajectories per case")
    parser.add_argument("--seed", type=int, default=0)
    add_output_arguments(parser, "leapfrog_gaussian")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
