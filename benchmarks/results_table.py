"""Where the composable layer's benchmark scripts write their tables, and the options."""

from __future__ import annotations

import argparse
import json
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

    from bayesldp.io import write_csv

    write_csv(Path(args.out) / f"{args.name}.csv", pd.DataFrame(rows))


def report(row: dict, rows: list[dict]) -> None:
    """Print ``row`` as one JSON line (the scripts' output, read by their tests) and keep it."""
    print(json.dumps(row, default=float), flush=True)
    rows.append(row)
