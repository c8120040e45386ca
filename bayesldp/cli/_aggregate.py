"""``bayesldp aggregate``: sum Parquet files of user reports into a Measurement, on Dask."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from bayesldp.cli._common import ArgumentParser, integer, measurement_record, number


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``aggregate`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser.
    """
    agg = commands.add_parser(
        "aggregate",
        help="aggregate Parquet files of user reports into a Measurement (JSON), on Dask",
        description="Aggregate Parquet report files (bayesldp.aggregate layout) into "
        "support counts, one Dask task per file. Load the result with "
        "Measurement.from_support_counts(counts, n, p, q).",
    )
    agg.add_argument("reports", help="a directory of *.parquet files, a glob, or one file")
    agg.add_argument(
        "--oracle", default=None, help="GRR, OUE, SUE, OLH, SS or HR (default: the files')"
    )
    agg.add_argument(
        "--epsilon", type=number, default=None, help="privacy budget (default: the files')"
    )
    agg.add_argument("--d", type=integer, default=None, help="domain size (default: the files')")
    agg.add_argument("--column", default="", help="report column(s), comma-separated")
    agg.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address, or synchronous/threads/processes; default: a LocalCluster",
    )
    agg.add_argument("--workers", type=integer, default=2, help="LocalCluster workers (default 2)")
    agg.add_argument("--no-dask", action="store_true", help="same as --scheduler synchronous")
    agg.add_argument(
        "--out", default="measurement.json", help="output JSON file (default measurement.json)"
    )
    return agg


def run(args: argparse.Namespace) -> int:
    """Aggregate the reports as ``args`` asks; write the Measurement's JSON and print a line.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_parser`.

    Returns
    -------
    int
        The exit code (0).
    """
    import numpy as np

    from bayesldp import aggregate
    from bayesldp._io import write_json
    from bayesldp.runner._dask import close_client, make_client

    # Absolute paths: the workers of an external scheduler run in other directories
    # (aggregate_parquet resolves the files again, to absolute paths, before sending them).
    reports = os.path.abspath(args.reports)
    oracle = aggregate.oracle_from_files(reports, args.oracle, args.epsilon, args.d)
    local = ("synchronous", "threads", "processes")
    scheduler = "synchronous" if args.no_dask else args.scheduler
    t0 = time.perf_counter()
    client = None if scheduler in local else make_client(scheduler, n_workers=args.workers)
    try:
        m = aggregate.aggregate_parquet(
            reports,
            oracle,
            column=args.column.split(",") if args.column else None,
            scheduler=scheduler if scheduler in local else client,
        )
    finally:
        close_client(client, own_cluster=scheduler is None)
    seconds = time.perf_counter() - t0
    write_json(args.out, measurement_record(m, oracle, reports=reports, seconds=seconds))
    top = np.argsort(-m.estimates, kind="stable")[:5]
    print(
        f"{m.n:,} {oracle.name} reports (eps {oracle.epsilon:g}, d {m.domain_size:,}) "
        f"aggregated in {seconds:.1f} s -> {args.out}"
    )
    print("largest estimates: " + ", ".join(f"{v}: {m.estimates[v]:.4g}" for v in top))
    return 0
