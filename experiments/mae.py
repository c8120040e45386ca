"""Full-domain MAE against eps (long paper Fig. 10, appendix).

Run ``bayesldp experiment mae`` or ``python experiments/mae.py [--quick] [--out DIR]``.
"""

from __future__ import annotations

import sys

import numpy as np

from bayesldp import metrics
from bayesldp.experiments import EPS_PAPER, EPS_QUICK, REAL_REPS, SYNTHETIC
from bayesldp.plotting import plot_vs_eps
from bayesldp.runner import Experiment, Grid, Row, Task, method_rows, simulate_and_apply


def task(task: Task, dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Mean absolute error over all items of every method."""
    est, sec, notes = simulate_and_apply(task, dataset, seq)
    f = dataset.frequencies
    return method_rows("mae", np.nan, {m: metrics.mae(f, e) for m, e in est.items()}, sec, notes)


EXPERIMENT = Experiment(
    name="mae",
    description="full-domain MAE vs eps",
    figure="long paper Fig. 10 (appendix)",
    task=task,
    grid=Grid(SYNTHETIC, EPS_PAPER, reps=30, real_reps=REAL_REPS),
    quick=Grid(SYNTHETIC, EPS_QUICK, reps=2, real_reps=1),
    plot=plot_vs_eps("mae", "full-domain MAE"),
)


def main(argv: list[str] | None = None) -> int:
    """Run this experiment from the command line (``--help`` lists the options)."""
    from bayesldp.cli import experiment_main

    return experiment_main(EXPERIMENT, argv)


if __name__ == "__main__":
    # run the installed module's main, whose functions Dask workers can import by name
    from bayesldp.experiments.mae import main

    sys.exit(main())
