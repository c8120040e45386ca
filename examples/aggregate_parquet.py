"""
Aggregating a folder of Parquet report files with Dask
======================================================

In a deployment the server does not hold its users' reports in one array: they arrive
in batches and are stored, one file per batch. :mod:`bayesldp.aggregate` keeps the
reports in the oracle's own wire format, as Parquet files that also record the oracle
and its parameters, and turns a folder of them into a :class:`bayesldp.Measurement`
with one Dask task per file. Support counts are sums over users, so the result is
exactly the aggregation of the same reports in memory, whatever the number of files,
workers or the order in which they finish.

This example plays both sides. The users privatize their values with OUE and their
reports are written, 50,000 to a file, into a temporary folder
(:func:`~bayesldp.aggregate.write_reports_parquet`). The server reads which oracle
made them from the files alone (:func:`~bayesldp.aggregate.oracle_from_files`), sums
their support counts on a local Dask cluster
(:func:`~bayesldp.aggregate.aggregate_parquet`), checks the result against an
in-memory aggregation, and post-processes it.
"""

# %%
# The users' side: privatize and write
# ------------------------------------
# The true values are drawn from a Zipf law over ``d`` items (the papers' synthetic
# dataset, at a smaller ``n``). In ``main`` below,
# ``write_reports_parquet(oracle, values, rng, folder, chunk_size=batch)`` privatizes
# them batch by batch: each file holds what one ``privatize`` call on a batch returns,
# in OUE's layout (``d`` bits per user, packed 8 to a byte).

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.aggregate import (
    aggregate_parquet,
    oracle_from_files,
    read_reports,
    write_reports_parquet,
)

# %%
# The server's side: aggregate with Dask
# --------------------------------------
# ``aggregate_parquet`` accepts any Dask scheduler. A ``distributed`` ``LocalCluster``
# stands in here for a real one (give its ``Client``, or the address of a running
# scheduler, in the same place); ``processes=False`` keeps its workers in this process.


def aggregate(folder, scheduler):
    """Rebuild the oracle from the files' metadata and aggregate them with Dask.

    Parameters
    ----------
    folder : pathlib.Path
        The report files.
    scheduler : {"local-cluster", "threads", "synchronous"}
        Where the per-file tasks run.

    Returns
    -------
    tuple of (bayesldp.FrequencyOracle, bayesldp.Measurement)
    """
    oracle = oracle_from_files(folder)
    if scheduler != "local-cluster":
        return oracle, aggregate_parquet(folder, oracle, scheduler=scheduler)
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        return oracle, aggregate_parquet(folder, oracle, scheduler=client)


# %%
# The figure
# ----------


def plot(true_freq, raw, consistent):
    """Draw the largest items' frequencies and every item's error.

    Parameters
    ----------
    true_freq : numpy.ndarray
        The true frequencies.
    raw, consistent : bayesldp.Estimate
        The unbiased estimates and the post-processed ones.

    Returns
    -------
    matplotlib.figure.Figure
    """
    order = np.argsort(-true_freq)
    top = order[:30]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    ranks = np.arange(1, top.size + 1)
    left.plot(ranks, true_freq[top], "k-", label="true")
    left.plot(ranks, raw.frequencies[top], "o", ms=4, label="raw (base)")
    left.plot(ranks, consistent.frequencies[top], "s", ms=4, mfc="none", label="norm-sub")
    left.set_yscale("log")
    left.set_xlabel("rank of the item")
    left.set_ylabel("frequency")
    left.set_title("The 30 largest items")
    left.legend()
    for est, label in ((raw, "raw (base)"), (consistent, "norm-sub")):
        err = np.abs(est.frequencies - true_freq)[order]
        right.plot(np.arange(1, err.size + 1), err, ".", ms=2, label=label)
    right.set_xscale("log")
    right.set_yscale("symlog", linthresh=1e-5)
    right.set_ylim(bottom=0)
    right.set_xlabel("rank of the item")
    right.set_ylabel("absolute error")
    right.set_title("Every item: norm-sub zeroes most of the tail")
    right.legend(markerscale=4)
    return fig


def main(args):
    """Write the reports, aggregate them with Dask, check, post-process and plot.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    counts = datasets.zipf(s=args.s, d=args.d, n=args.n, rng=rng).counts
    values = rng.permutation(np.repeat(np.arange(args.d), counts))  # one value per user
    oracle = bayesldp.make_oracle(args.oracle, args.epsilon, args.d)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "reports"
        files = write_reports_parquet(oracle, values, rng, folder, chunk_size=args.batch)
        size = sum(f.stat().st_size for f in files)
        print(f"{len(files)} files, {args.n} reports, {size / 1e6:.1f} MB of Parquet")
        found, m = aggregate(folder, args.scheduler)
        print(f"oracle from the files' metadata: {found!r}")
        in_memory = found.aggregate(read_reports(folder, found))
        same = np.array_equal(m.support_counts, in_memory.support_counts)
        print(f"Dask counts equal the in-memory aggregation: {same}")
    true_freq = np.bincount(values, minlength=args.d) / args.n
    raw = bayesldp.postprocess(m, "base")
    consistent = bayesldp.postprocess(m, "norm-sub")
    for est in (raw, consistent):
        mse = metrics.mse(true_freq, est)
        print(f"{est.method:>9}: full-domain MSE {mse:.3g}, sum {est.frequencies.sum():.4f}")
    plot(true_freq, raw, consistent)
    plt.show()


def parse_args(argv=None):
    """Parse the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; default ``sys.argv[1:]``.

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description="Aggregate Parquet report files with Dask.")
    parser.add_argument("--oracle", default="OUE", choices=list(bayesldp.ORACLES))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--d", type=int, default=1024, help="number of items")
    parser.add_argument("--n", type=int, default=200_000, help="number of users")
    parser.add_argument("--s", type=float, default=1.5, help="Zipf exponent")
    parser.add_argument("--batch", type=int, default=50_000, help="reports per file")
    parser.add_argument(
        "--scheduler",
        default="local-cluster",
        choices=["local-cluster", "threads", "synchronous"],
        help="where the per-file tasks run",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# Results
# -------
# The counts summed by Dask equal the in-memory ones exactly. The raw estimates are
# unbiased but scatter around zero on the long tail; norm-sub, the projection that
# keeps the estimates non-negative and summing to one, sets most of that tail to zero
# and lowers the full-domain error.

if __name__ == "__main__":
    main(parse_args())
