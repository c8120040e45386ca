"""The ``bayesldp`` parser, its commands, and :func:`main`, the console script."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bayesldp import __version__
from bayesldp.cli._aggregate import add_parser as add_aggregate
from bayesldp.cli._aggregate import run as run_aggregate
from bayesldp.cli._audit import add_parser as add_audit
from bayesldp.cli._audit import run as run_audit
from bayesldp.cli._choose import add_parser as add_choose
from bayesldp.cli._choose import run as run_choose
from bayesldp.cli._common import ArgumentParser, closed_stdout_quiet, guarded, setup_logging
from bayesldp.cli._demo import add_parser as add_demo
from bayesldp.cli._demo import run as run_demo
from bayesldp.cli._experiment import add_parser as add_experiment
from bayesldp.cli._experiment import run as run_experiment
from bayesldp.cli._plan import add_parser as add_plan
from bayesldp.cli._plan import run as run_plan

#: The commands, in the order ``bayesldp --help`` lists them: how each adds its parser
#: to the subcommands, and how it runs.
COMMANDS: dict[str, tuple[Callable[[Any], ArgumentParser], Callable[[Any], int]]] = {
    "demo": (add_demo, run_demo),
    "experiment": (add_experiment, run_experiment),
    "aggregate": (add_aggregate, run_aggregate),
    "audit": (add_audit, run_audit),
    "choose": (add_choose, run_choose),
    "plan": (add_plan, run_plan),
}
DESCRIPTION = (
    "Post-processing of local differential privacy frequency estimates: run the demo, "
    "an experiment (a paper figure or a study), an aggregation of report files, or an "
    "epsilon-LDP audit of an oracle, a method choice or a collection plan. "
    "'bayesldp COMMAND --help' shows a command's options. "
    "Exit codes: 0 done, 1 audit violated, 2 user error, 130 stopped by Ctrl-C (run the "
    "same command again to resume), 141 output closed early."
)


def build_parser() -> ArgumentParser:
    """Build the ``bayesldp`` parser and its commands' parsers."""
    parser = ArgumentParser(prog="bayesldp", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"bayesldp {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log debug messages; tracebacks of errors"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parser, run in COMMANDS.values():
        add_parser(commands).set_defaults(run=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesldp`` console script.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0, 1 when an audit finds epsilon violated, 130 after Ctrl-C, 141
        when stdout was closed early (``bayesldp experiment list | head -2``).

    Raises
    ------
    SystemExit
        Code 2 after a user error (printed on one line), 0 after ``--help`` or
        ``--version``.
    """

    def run() -> int:
        args = build_parser().parse_args(argv)
        setup_logging(args.verbose)
        return guarded("bayesldp", lambda: args.run(args), args.verbose)

    return closed_stdout_quiet(run)
