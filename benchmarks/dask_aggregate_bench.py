"""Aggregating a large file of user reports with Dask (default: 1e8 GRR reports).

The script draws ``--n`` users' values from Zipf(``--zipf``) over ``--d`` items, chunk by
chunk (never all in memory), privatizes them with ``--oracle`` and writes the reports
as Parquet part files of ``--chunk-size`` rows (``bayesldp.aggregate.
write_reports_parquet``) into a temporary directory (``--dir``; removed afterwards
unless ``--keep``). It then aggregates them into a Measurement with
``aggregate_parquet`` on a ``LocalCluster`` (``--workers`` processes x
``--threads-per-worker``), ``--repeat`` times (the first run also imports pyarrow and
bayesldp in the workers; the first and the best times are reported), and, unless
``--no-baseline``, once more in this process without Dask (the same per-file code in a
loop), checks that both give identical support counts, and reports seconds and reports
per second. The files were just written, so they are read from the page cache.

Results: one row per run appended to ``<out>/dask_aggregate.csv`` and the run's
details in ``<out>/dask_aggregate_<oracle>_<n>.json`` (both written atomically).

Run ``python benchmarks/dask_aggregate_bench.py`` (1e8 GRR reports, 0.13 GB of Parquet;
free disk is checked first) or e.g. ``--oracle HR``, ``--oracle OUE --n 1e7``,
``--n 1e9 --chunk-size 1e7``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import aggregate
from bayesldp._io import write_csv, write_json

logger = logging.getLogger("dask_aggregate_bench")


def _count(text: str) -> int:
    value = float(text)
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(value)


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=_count, default=100_000_000, help="reports (1e8)")
    parser.add_argument("--oracle", default="GRR", help="GRR, HR, OLH, SS, OUE, SUE")
    parser.add_argument("--d", type=_count, default=1024, help="domain size")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--zipf", type=float, default=1.5, help="Zipf exponent of the data")
    parser.add_argument("--chunk-size", type=_count, default=1_000_000, help="rows per file")
    parser.add_argument("--workers", type=_count, default=2)
    parser.add_argument("--threads-per-worker", type=_count, default=1)
    parser.add_argument(
        "--repeat", type=_count, default=2, help="Dask runs (the first warms the workers)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the reports")
    parser.add_argument("--keep", action="store_true", help="keep the report files")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one-process run")
    parser.add_argument("--progress", action="store_true", help="progress bar while writing")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/dask"))
    return parser.parse_args(argv)


def _value_chunks(n: int, chunk: int, probs: np.ndarray, rng: np.random.Generator, true):
    cdf = np.cumsum(probs)
    cdf[-1] = 1.0
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        values = np.searchsorted(cdf, rng.random(size), side="right")
        true += np.bincount(values, minlength=probs.size)
        yield values


def _bytes_per_report_bound(oracle) -> int:
    """Return a generous upper bound on the Parquet bytes per report (before compression)."""
    return 2 * oracle.report_nbytes


def run(args: argparse.Namespace) -> dict:
    """Write the reports, aggregate them, and return the figures."""
    from distributed import Client, LocalCluster

    oracle = bayesldp.make_oracle(args.oracle, args.epsilon, args.d)
    rng = np.random.default_rng(args.seed)
    probs = np.arange(1, args.d + 1, dtype=float) ** (-args.zipf)
    probs /= probs.sum()
    base = args.dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    need = _bytes_per_report_bound(oracle) * args.n
    free = shutil.disk_usage(base).free
    if need > 0.8 * free:
        raise SystemExit(
            f"{args.n:.3g} {oracle.name} reports may need up to {need / 1e9:.1f} GB; "
            f"{base} has {free / 1e9:.1f} GB free"
        )
    workdir = Path(tempfile.mkdtemp(prefix="reports-", dir=base))
    true = np.zeros(args.d, dtype=np.int64)
    try:
        chunks = _value_chunks(args.n, args.chunk_size, probs, rng, true)
        if args.progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, total=-(-args.n // args.chunk_size), unit="file")
        t0 = time.perf_counter()
        files = aggregate.write_reports_parquet(
            oracle, chunks, rng, workdir, chunk_size=args.chunk_size
        )
        write_s = time.perf_counter() - t0
        disk = sum(f.stat().st_size for f in files)
        logger.info("wrote %d files, %.2f GB, in %.1f s", len(files), disk / 1e9, write_s)

        t0 = time.perf_counter()
        with (
            LocalCluster(
                n_workers=args.workers,
                threads_per_worker=args.threads_per_worker,
                processes=True,
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            startup_s = time.perf_counter() - t0
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                m = aggregate.aggregate_parquet(workdir, oracle, scheduler=client)
                times.append(time.perf_counter() - t0)
        dask_first_s, dask_s = times[0], min(times)
        logger.info("dask aggregation: %s s", ", ".join(f"{t:.2f}" for t in times))

        base_s = np.nan
        identical = None
        if not args.no_baseline:
            t0 = time.perf_counter()
            counts = np.zeros(args.d, dtype=np.int64)
            for f in files:
                c, _ = aggregate.file_counts(str(f), oracle)
                counts += c
            base_s = time.perf_counter() - t0
            identical = bool(np.array_equal(counts, m.support_counts))
            logger.info("one-process loop: %.2f s; identical counts: %s", base_s, identical)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    f_true = true / true.sum()
    z = np.abs(m.estimates - f_true) / np.sqrt(oracle.variance(f_true) / m.n)
    return {
        "oracle": oracle.name,
        "n": int(m.n),
        "d": args.d,
        "epsilon": args.epsilon,
        "files": len(files),
        "chunk_size": args.chunk_size,
        "disk_gb": disk / 1e9,
        "write_seconds": write_s,
        "cluster_startup_seconds": startup_s,
        "dask_first_seconds": dask_first_s,
        "dask_seconds": dask_s,
        "dask_repeats": args.repeat,
        "dask_reports_per_second": m.n / dask_s,
        "workers": args.workers,
        "threads_per_worker": args.threads_per_worker,
        "baseline_seconds": base_s,
        "baseline_reports_per_second": m.n / base_s if np.isfinite(base_s) else np.nan,
        "identical_counts": identical,
        "n_matches_users": bool(m.n == true.sum()),
        "max_abs_z": float(z.max()),
        "kept_files": str(workdir) if args.keep else "",
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "python": platform.python_version(),
        "bayesldp": bayesldp.__version__,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def main(argv=None) -> dict:
    """Run the benchmark and save its figures; returns the result row."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    import distributed  # noqa: F401  (it sets its loggers' levels when imported)

    logging.getLogger("distributed").setLevel(logging.WARNING)
    args = parse_args(argv)
    row = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / f"dask_aggregate_{row['oracle']}_{row['n']}.json", row)
    table = args.out / "dask_aggregate.csv"
    frame = pd.DataFrame([row])
    if table.exists():
        frame = pd.concat([pd.read_csv(table), frame], ignore_index=True)
    write_csv(table, frame)
    logger.info("%s", json.dumps(row, indent=1, default=str))
    return row


if __name__ == "__main__":
    main()
