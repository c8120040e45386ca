"""Where the composable layer's benchmark scripts write their tables, and the options.

Also the environment the timing scripts give a case's child process
(:func:`child_environment`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Folder of the composable layer's benchmark tables.
DEFAULT_OUT = "benchmarks/results/bayes_layer"


def add_output_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """Add ``--out`` (a folder, '' to write nothing) and ``--name`` (the table's name)."""
    parser.add_argument("--out", default=DEFAULT_OUT, help="'' to skip")
    parser.add_argument("--name", default=name)


def write_rows(rows: list[dict], args: argparse.Namespace) -> None:
    """Write ``rows`` to ``OUT/NAME.csv`` atomically, unless ``--out`` is ''."""
    if not args.out:
        return
    import pandas as pd

    from bayesldp._io import write_csv

    write_csv(Path(args.out) / f"{args.name}.csv", pd.DataFrame(rows))


def report(row: dict, rows: list[dict]) -> None:
    """Print ``row`` as one JSON line (the scripts' output, read by their tests) and keep it."""
    print(json.dumps(row, default=float), flush=True)
    rows.append(row)


@contextlib.contextmanager
def child_environment(cold: bool) -> Iterator[dict[str, str]]:
    """Yield a copy of this process's environment for a case run in a child process.

    With ``cold``, PyTensor's caches (its C modules, its numba cache and so nutpie's
    callbacks) live in a temporary directory that starts empty and is removed after, as
    on a new machine.
    """
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as compiledir:
        if cold:
            env["PYTENSOR_FLAGS"] = f"base_compiledir={compiledir}"
        yield env
