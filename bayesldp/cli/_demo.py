"""``bayesldp demo``: every NumPy method on Zipf(1.5), d = 1024, n = 1e6, eps = 1, OUE.

It runs the ``demo`` experiment in this process and prints one table: each method's
mean full-domain, 50%-set and top-10 MSE, its sum and milliseconds, then the warnings
the methods raised, whole.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bayesldp.cli._common import (
    METHODS_HELP,
    ArgumentParser,
    add_import_option,
    import_modules,
    integer,
    items,
    number,
    wrapped,
)

DEMO_OUT = "bayesldp-demo"
#: Distinct warnings printed per method; the others are in results.csv.
SHOWN_WARNINGS = 2


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``demo`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser.
    """
    demo = commands.add_parser(
        "demo",
        help="every NumPy method on Zipf(1.5), d=1024, n=1e6, eps=1, OUE (--bayes: and the "
        "Bayesian models)",
        description="Run every NumPy post-processing method on the papers' default "
        "setting, print each one's errors, and write results.csv, summary.csv and "
        "figure.png.",
    )
    demo.add_argument("--epsilon", type=number, default=1.0, help="privacy budget (default 1)")
    demo.add_argument("--oracle", default="OUE", help="GRR, OUE, SUE, OLH, SS or HR (default OUE)")
    demo.add_argument("--reps", type=integer, default=5, help="repetitions (default 5)")
    demo.add_argument("--n", type=integer, default=1_000_000, help="users (default 1e6)")
    demo.add_argument("--d", type=integer, default=1024, help="domain size (default 1024)")
    demo.add_argument("--seed", type=integer, default=0, help="base seed (default 0)")
    demo.add_argument(
        "--methods", default=None, help=METHODS_HELP + " (default: every NumPy method)"
    )
    demo.add_argument(
        "--bayes",
        action="store_true",
        help="add the Bayesian models that take seconds per fit (PyMC); those that take "
        "minutes run only when named in --methods",
    )
    add_import_option(demo)
    demo.add_argument("--out", default=DEMO_OUT, help=f"output folder (default {DEMO_OUT})")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    return demo


def _table(results: Any) -> Any:
    """Per method (in the order run): mean of each query's error, sum and milliseconds."""
    wide = results.pivot_table(index="method", columns="metric", values="value", aggfunc="mean")
    wide["ms"] = results[results["metric"] == "mse"].groupby("method")["seconds"].mean() * 1e3
    return wide.reindex(list(dict.fromkeys(results["method"]))).reset_index()


def run(args: argparse.Namespace) -> int:
    """Run the demo as ``args`` asks; print its table and warnings.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_parser`.

    Returns
    -------
    int
        The exit code (0).
    """
    import_modules(args.imports)
    from tqdm import tqdm

    from bayesldp.plotting import dataset_note
    from bayesldp.runner import build_config, get_experiment, run
    from bayesldp.runner._results import warnings_by_method

    experiment = get_experiment("demo")
    spec = "zipf" if (args.d, args.n) == (1024, 1_000_000) else f"zipf:d={args.d},n={args.n}"
    config = build_config(
        experiment,
        methods=items(args.methods),
        bayes=args.bayes,
        datasets=(spec,),
        epsilons=(args.epsilon,),
        reps=args.reps,
        oracles=(args.oracle,),
        seed=args.seed,
    )
    folder = Path(args.out)
    p = config.params
    print(
        f"{dataset_note(spec)} (s = 1.5), d = {args.d:,}, n = {args.n:,}, "
        f"eps = {config.epsilons[0]:g}, {config.oracles[0]}, {config.reps} repetitions, "
        f"seed {config.seed}; {len(config.methods)} methods"
    )
    with tqdm(total=config.reps, desc="repetitions", unit="rep", disable=args.quiet) as bar:
        # the demo's folder is scratch: results of other settings are replaced
        result = run(experiment, config, folder, progress=bar.update, restart=True)
    set_label, top_label = f"{p['set_percent']:g}% set MSE", f"top-{p['top_k']} MSE"
    header = f"{'method':<16} {'full MSE':>10} {set_label:>12} {top_label:>11} {'sum':>7} {'ms':>8}"
    print(header)
    print("-" * len(header))
    for row in _table(result.results).itertuples():
        print(
            f"{row.method:<16} {row.mse:>10.3e} {row.set_mse:>12.3e} {row.topk_mse:>11.3e} "
            f"{row.sum:>7.4f} {row.ms:>8.2f}"
        )
    for row in warnings_by_method(result.results).itertuples():
        messages = row.messages.splitlines()
        print(f"warning: {row.method} in {row.tasks_warned} of {row.tasks} runs:")
        for message in messages[:SHOWN_WARNINGS]:
            print(wrapped(message))
        if len(messages) > SHOWN_WARNINGS:
            others = len(messages) - SHOWN_WARNINGS
            print(f"  ({others} more in the warning column of {folder / 'results.csv'})")
    print(f"wrote {folder / 'results.csv'}, {folder / 'summary.csv'} and {folder / 'figure.png'}")
    return 0
