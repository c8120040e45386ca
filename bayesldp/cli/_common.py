"""What every command shares: the parser, option types, user errors, output and logging.

User errors (bad options, datasets, methods, an unwritable ``--out``, an unreachable
scheduler) are one line on stderr, ``PROG: error: ...``, and exit code 2; Ctrl-C stops a
run with one line and exit code 130; output cut short by a closed stdout (``| head``)
ends quietly with exit code 141. This module imports nothing heavy: ``bayesldp
--version`` and ``--help`` load no numerical package.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

#: Help texts of the options that several commands share.
METHODS_HELP = (
    "comma-separated method specs, any registered method (plugins included); "
    "'NAME@cvxpy' for the cvxpy backend"
)
IMPORT_HELP = (
    "import MODULE first (repeatable): a module of yours whose register_method or "
    "register_dataset calls add methods or datasets (the current directory is searched)"
)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors and whole option names only (no ``--eps`` for ``--epsilon``).

    Parameters
    ----------
    *args, **kwargs
        As :class:`argparse.ArgumentParser` takes them; ``allow_abbrev`` is False.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` on one line to stderr and exit with code 2.

        Parameters
        ----------
        message : str
            The error; its whitespace (newlines included) is collapsed to single spaces.
        """
        text = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {text}\n")


class Stopped(Exception):
    """Ctrl-C during a run: how far it got.

    Parameters
    ----------
    done, total : int
        Tasks finished, and tasks the run had to do.
    """

    def __init__(self, done: int, total: int) -> None:
        super().__init__(done, total)
        self.done, self.total = done, total


def integer(text: str) -> int:
    """Read an integer option: ``1000000``, ``1_000_000`` or an integer-valued ``1e6``.

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    int

    Raises
    ------
    argparse.ArgumentTypeError
        Not a whole number.
    """
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
    return int(value)


def number(text: str) -> float:
    """Read a number option (``0.5``, ``1e-3``).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    float

    Raises
    ------
    argparse.ArgumentTypeError
        Not a number.
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def items(text: str | None, separator: str = ",") -> tuple[str, ...] | None:
    """Split a list option: None when it was not given, else its non-empty items.

    Parameters
    ----------
    text : str or None
        The option's value.
    separator : str
        Between the items (``;`` for datasets, whose own options use ``,``).
    """
    if text is None:
        return None
    return tuple(item.strip() for item in text.split(separator) if item.strip())


def numbers(text: str | None, name: str) -> tuple[float, ...] | None:
    """Split a comma-separated list of numbers (None when it was not given).

    Parameters
    ----------
    text : str or None
        The option's value.
    name : str
        The option's name, for the error.

    Raises
    ------
    ValueError
        An item is not a number.
    """
    values = items(text)
    if values is None:
        return None
    out = []
    for item in values:
        try:
            out.append(float(item))
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not a number") from None
    return tuple(out)


#: The fields of a measurement file (``bayesldp aggregate`` writes them, ``choose`` reads them).
MEASUREMENT_FIELDS = ("support_counts", "n", "p", "q", "oracle", "epsilon")


def measurement_record(m: Any, oracle: Any, **extra: Any) -> dict[str, Any]:
    """Return the JSON record of a measurement file (``bayesldp aggregate --out``).

    Parameters
    ----------
    m : Measurement
        The aggregated measurement.
    oracle : FrequencyOracle
        The oracle that produced it.
    **extra
        Further fields (e.g. where the reports came from, how long it took).

    Returns
    -------
    dict
        The fields of :data:`MEASUREMENT_FIELDS`, ``domain_size`` and ``extra``.
    """
    return {
        "oracle": oracle.name,
        "epsilon": oracle.epsilon,
        "domain_size": m.domain_size,
        "n": int(m.n),
        "p": m.p,
        "q": m.q,
        "support_counts": [int(c) for c in m.support_counts],
        **extra,
    }


def read_measurement(path: str) -> Any:
    """Load a measurement JSON file written by ``bayesldp aggregate``.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    Measurement

    Raises
    ------
    ValueError
        An unreadable file, or one without the fields of a measurement.
    """
    import json

    from bayesldp.measurement import Measurement

    try:
        with open(path) as fh:
            record = json.load(fh)
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"measurement: cannot read {path!r}: {err}") from None
    if not isinstance(record, dict) or any(k not in record for k in MEASUREMENT_FIELDS):
        raise ValueError(f"measurement: {path!r} lacks one of {', '.join(MEASUREMENT_FIELDS)}")
    return Measurement.from_support_counts(
        record["support_counts"],
        record["n"],
        record["p"],
        record["q"],
        oracle=record["oracle"],
        epsilon=record["epsilon"],
    )


def escape(text: str) -> str:
    """Protect ``%`` in a help text from argparse's %-formatting (``50%`` -> ``50%%``).

    Parameters
    ----------
    text : str
        A help text.
    """
    return text.replace("%", "%%")


def add_import_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--import MODULE`` (repeatable) to a command that takes methods or datasets.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    """
    parser.add_argument(
        "--import", dest="imports", metavar="MODULE", action="append", default=[],
        help=IMPORT_HELP,
    )  # fmt: skip


def import_modules(modules: Sequence[str]) -> None:
    """Import the modules of ``--import``, with the current directory on ``sys.path``.

    Parameters
    ----------
    modules : sequence of str
        Dotted module names.

    Raises
    ------
    ValueError
        A module cannot be imported (the message names it and why).
    """
    if not modules:
        return
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as err:  # whatever the user's module raises
            reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
            raise ValueError(f"--import {name}: {reason}") from None


def note(text: str) -> None:
    """Print a notice on stderr (stdout keeps the results).

    Parameters
    ----------
    text : str
        The notice.
    """
    print(text, file=sys.stderr)


def wrapped(text: str, indent: str = "  ") -> str:
    """Wrap a long message to the terminal's width, every word kept, lines indented.

    Parameters
    ----------
    text : str
        The message (its own line breaks are kept).
    indent : str
        Put before every line.
    """
    width = max(40, min(100, _terminal_width()))
    lines = []
    for line in text.splitlines() or [""]:
        lines += textwrap.wrap(
            line, width, initial_indent=indent, subsequent_indent=indent,
            break_long_words=False, break_on_hyphens=False,
        ) or [indent]  # fmt: skip
    return "\n".join(lines)


def _terminal_width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


def guarded(prog: str, func: Callable[[], int], verbose: bool = False) -> int:
    """Run ``func``: ValueError and missing packages are user errors (one line, exit 2).

    Parameters
    ----------
    prog : str
        The program's name, to start the error line with.
    func : callable
        The command; returns the exit code.
    verbose : bool
        Raise the user error instead (its traceback), for ``-v``.

    Returns
    -------
    int
        ``func``'s exit code, or 130 after Ctrl-C.

    Raises
    ------
    SystemExit
        With code 2 after a user error, which is printed on one line.
    """
    try:
        return func()
    except Stopped as stop:
        note(
            f"{prog}: stopped after {stop.done} of {stop.total} tasks; "
            "run the same command again to resume"
        )
        return 130
    except KeyboardInterrupt:
        note(f"{prog}: stopped")
        return 130
    except (ValueError, ImportError) as err:
        if verbose:
            raise
        text = " ".join((str(err) or type(err).__name__).split())
        note(f"{prog}: error: {text}")
        raise SystemExit(2) from None


def setup_logging(verbose: bool) -> None:
    """Log warnings (debug messages with ``-v``) to stderr.

    Parameters
    ----------
    verbose : bool
        Log debug messages too.
    """
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def closed_stdout_quiet(func: Callable[[], int]) -> int:
    """Run ``func``; if stdout is closed early (``| head``), exit 141 without a traceback.

    The standard recipe: stdout is flushed here, so that a closed pipe shows up inside
    the ``try``, and then pointed at ``os.devnull`` so that the interpreter's own flush
    at exit does not fail again. 141 is the shell's code for a process ended by SIGPIPE.

    Parameters
    ----------
    func : callable
        The command; returns the exit code.

    Returns
    -------
    int
        The exit code.
    """
    try:
        code = func()
        sys.stdout.flush()
        return code
    except SystemExit:  # argparse's --help, --version and errors: flush before exiting
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _discard_stdout()
            return 141
        raise
    except BrokenPipeError:
        _discard_stdout()
        return 141


def _discard_stdout() -> None:
    """Point stdout's file descriptor at ``os.devnull`` (nothing more reaches the pipe)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
