"""``bayesldp choose``: which post-processing method for the query you will publish."""

from __future__ import annotations

import argparse
from typing import Any

from bayesldp.cli._common import ArgumentParser, integer, items, read_measurement

QUERY_HELP = (
    "what you will publish: full, set:FRACTION (sums over random sets of that fraction of "
    "the items), top:K, heavy:THRESHOLD, or groups:FILE (a JSON list of item-index lists, "
    "or an object of them); default full"
)


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``choose`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser.
    """
    choose = commands.add_parser(
        "choose",
        help="rank the post-processing methods for a query on a measurement (JSON)",
        description="Simulate the collection on synthetic truths fitted to the measurement "
        "(as written by 'bayesldp aggregate'), rank the methods by their error on the "
        "query, and print the ranking and the chosen method (bayesldp.choose_method).",
    )
    choose.add_argument("measurement", help="a measurement JSON file from 'bayesldp aggregate'")
    choose.add_argument("--query", default="full", help=QUERY_HELP)
    choose.add_argument(
        "--methods", default=None, help="comma-separated method names (default: the library's)"
    )
    choose.add_argument(
        "--reps", type=integer, default=50, help="simulated collections per fit (default 50)"
    )
    choose.add_argument("--seed", type=integer, default=0, help="random seed (default 0)")
    choose.add_argument("--out", default=None, help="write the ranking to this CSV file")
    return choose


def parse_query_text(text: str) -> Any:
    """Turn ``full``, ``set:F``, ``top:K``, ``heavy:T`` or ``groups:FILE`` into a query.

    Parameters
    ----------
    text : str
        The ``--query`` option.

    Returns
    -------
    str, tuple or list
        As :func:`bayesldp.choose_method` takes it (its values are checked there).

    Raises
    ------
    ValueError
        Naming ``query``: an unknown kind, or a value that is not a number.
    """
    import json

    kind, _, value = text.strip().partition(":")
    if kind == "full" and not value:
        return "full"
    if kind == "groups" and value:
        try:
            with open(value) as fh:
                groups = json.load(fh)
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"query: cannot read the groups file {value!r}: {err}") from None
        return groups
    try:
        if kind == "top":
            return ("top", int(value))
        if kind in ("set", "heavy"):
            return (kind, float(value))
    except ValueError:
        raise ValueError(f"query: {text!r} needs a number after '{kind}:'") from None
    raise ValueError(
        f"query: unknown {text!r}; give full, set:FRACTION, top:K, heavy:THRESHOLD or groups:FILE"
    )


def run(args: argparse.Namespace) -> int:
    """Rank the methods as ``args`` asks; print the ranking, write it if asked.

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
    from bayesldp.choose import choose_method

    m = read_measurement(args.measurement)
    query = parse_query_text(args.query)
    methods = items(args.methods)
    choice = choose_method(m, query, methods=methods, reps=args.reps, rng=args.seed)
    table = choice.ranking[["method", "score", "error", "spread"]]
    print(
        f"{m.oracle} (eps {m.epsilon:g}, d {m.domain_size:,}, n {m.n:,}), query "
        f"{choice.query}, {choice.reps} simulated collections per fit"
    )
    print(f"{'method':<12} {'score':>8} {'error':>12} {'spread':>10}")
    for row in table.itertuples(index=False):
        print(f"{row.method:<12} {row.score:>8.3f} {row.error:>12.4g} {row.spread:>10.2g}")
    print(f"chosen: {choice.chosen}")
    if choice.note:
        print(f"note: {choice.note}")
    if args.out:
        write_csv(args.out, choice.ranking)
        print(f"ranking -> {args.out}")
    return 0
