"""``bayesldp plan``: which oracle, and how many users, for the error a query accepts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bayesldp.cli._common import ArgumentParser, integer, items, number

#: Default output folder of ``bayesldp plan``.
PLAN_OUT = "bayesldp-plan"


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``plan`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser.
    """
    plan = commands.add_parser(
        "plan",
        help="before collecting: each oracle's error, report size and users needed",
        description="For each oracle: the exact expected error of the raw estimates for "
        "the query, the bits a user sends, the error after the recommended post-processing "
        "(simulated on a prior: uniform, Zipf or a pilot histogram) and, with a target, the "
        "users each needs (bayesldp.plan). Prints a table; writes plan.csv, curve.csv (every "
        "simulated point) and a figure of error against users (plan.png) to --out.",
    )
    plan.add_argument("--d", type=integer, default=None, help="domain size (default: --pilot's)")
    plan.add_argument("--epsilon", type=number, required=True, help="privacy budget (> 0)")
    plan.add_argument(
        "--target-mse", type=number, default=None, help="the squared error the answer may have"
    )
    plan.add_argument("--users", type=integer, default=None, help="users to evaluate errors at")
    plan.add_argument(
        "--query",
        default="full",
        help="full (every item), set:FRACTION (sums over random sets of that fraction of the "
        "items) or top:K (the K most frequent items); default full",
    )
    prior = plan.add_mutually_exclusive_group()
    prior.add_argument("--zipf", type=number, default=None, help="prior: Zipf exponent")
    prior.add_argument(
        "--pilot", default=None, help="prior: a file of d counts (whitespace or comma separated)"
    )
    plan.add_argument(
        "--oracle", default=None, help="comma-separated oracle names (default: every one)"
    )
    plan.add_argument(
        "--methods",
        default=None,
        help="comma-separated candidate methods (default: the fast default ones)",
    )
    plan.add_argument(
        "--reps", type=integer, default=20, help="simulated collections per user count (default 20)"
    )
    plan.add_argument("--seed", type=integer, default=0, help="random seed (default 0)")
    plan.add_argument("--out", default=PLAN_OUT, help=f"output folder (default {PLAN_OUT})")
    return plan


def read_pilot(path: str) -> Any:
    """Read a pilot histogram: numbers separated by whitespace, commas or new lines.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    numpy.ndarray
        The counts, one per item.

    Raises
    ------
    ValueError
        Naming ``pilot``: an unreadable file or a token that is not a number.
    """
    import numpy as np

    try:
        with open(path) as fh:
            tokens = fh.read().replace(",", " ").split()
    except OSError as err:
        raise ValueError(f"pilot: cannot read {path!r}: {err}") from None
    try:
        return np.array([float(t) for t in tokens])
    except ValueError:
        raise ValueError(f"pilot: {path!r} must hold numbers only") from None


def run(args: argparse.Namespace) -> int:
    """Plan as ``args`` asks; print the table, write the CSV and the figure.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_parser`.

    Returns
    -------
    int
        The exit code (0).
    """
    from bayesldp._io import write_csv
    from bayesldp.planning import plan
    from bayesldp.plotting import plan_figure, save_figure

    prior: Any = args.zipf
    d = args.d
    if args.pilot is not None:
        prior = read_pilot(args.pilot)
        d = prior.size if d is None else d
    if d is None:
        raise ValueError("d: give --d (or --pilot, whose length is the domain size)")
    table = plan(
        d,
        args.epsilon,
        users=args.users,
        target=args.target_mse,
        query=args.query,
        prior=prior,
        oracles=items(args.oracle),
        methods=items(args.methods),
        reps=args.reps,
        rng=args.seed,
    )
    a = table.attrs
    print(
        f"d {a['domain_size']:,}, eps {a['epsilon']:g}, query {a['query']}, prior {a['prior']}, "
        f"{a['reps']} simulated collections per user count"
    )
    print(_format(table))
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(folder / "plan.csv", table)
    write_csv(folder / "curve.csv", a["curve"])
    save_figure(plan_figure(table), folder / "plan.png")
    print(f"wrote {folder / 'plan.csv'}, {folder / 'curve.csv'} and {folder / 'plan.png'}")
    return 0


def _format(table: Any) -> str:
    """Return the table as fixed-width text: the columns a reader compares."""
    head = (
        f"{'oracle':<7} {'bits':>6} {'users':>12} {'raw MSE':>10} {'method':<10} {'post MSE':>10}"
    )
    needs = "target" in table
    if needs:
        head += f" {'raw users':>12} {'post users':>12}"
    lines = [head, "-" * len(head)]
    for row in table.itertuples(index=False):
        line = (
            f"{row.oracle:<7} {row.report_bits:>6} {row.users:>12,} {row.raw_mse:>10.3e} "
            f"{row.method:<10} {row.post_mse:>10.3e}"
        )
        if needs:
            line += f" {row.raw_users_needed:>12,} {row.post_users_needed:>12,}"
        lines.append(line)
    return "\n".join(lines)
