"""The ``bayesldp`` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from bayesldp import __version__

logger = logging.getLogger("bayesldp")


def _demo(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bayesldp.demo import DemoConfig, run_demo, summarise
    from bayesldp.io import write_csv
    from bayesldp.methods import METHODS
    from bayesldp.plotting import plot_demo

    methods = tuple(args.methods.split(",")) if args.methods else METHODS
    config = DemoConfig(
        epsilon=args.epsilon,
        oracle=args.oracle,
        reps=args.reps,
        seed=args.seed,
        n=args.n,
        d=args.d,
        methods=methods,
    )
    out = Path(args.out)
    print(
        f"Zipf(s={config.s}) d={config.d} n={config.n:,} eps={config.epsilon} "
        f"oracle={config.oracle}, {config.reps} repetitions, seed {config.seed}"
    )
    with tqdm(total=config.reps, desc="repetitions", unit="rep", disable=args.quiet) as bar:
        results = run_demo(config, progress=bar.update)
    summary = summarise(results, methods)
    write_csv(out / "demo_runs.csv", results)
    write_csv(out / "demo_summary.csv", summary)
    plot_demo(
        summary,
        out / "demo.png",
        title=f"Zipf 1.5, d={config.d}, n={config.n:,}, eps={config.epsilon}, {config.oracle}",
    )
    header = (
        f"{'method':<10} {'full MSE':>10} {'50% set MSE':>12} {'top-10 MSE':>11} "
        f"{'sum':>7} {'ms':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in summary.itertuples():
        print(
            f"{row.method:<10} {row.mse:>10.3e} {row.set_mse:>12.3e} {row.topk_mse:>11.3e} "
            f"{row.sum:>7.4f} {row.seconds * 1e3:>8.2f}"
        )
    warned = results.loc[results["warning"] != "", ["method", "warning"]].drop_duplicates("method")
    for row in warned.itertuples():
        print(f"warning ({row.method}): {row.warning}")
    print(f"wrote {out / 'demo_summary.csv'}, {out / 'demo_runs.csv'} and {out / 'demo.png'}")
    return 0


def _experiment(args: argparse.Namespace) -> int:
    from bayesldp.experiments.command import run_from_args

    return run_from_args(args)


def _aggregate(args: argparse.Namespace) -> int:
    import time

    from bayesldp import dask_aggregate
    from bayesldp.experiments.runner import close_client, make_client
    from bayesldp.io import write_json

    oracle = dask_aggregate.oracle_from_files(args.reports, args.oracle, args.epsilon, args.d)
    local = ("synchronous", "threads", "processes")
    scheduler = "synchronous" if args.no_dask else args.scheduler
    t0 = time.perf_counter()
    client = None if scheduler in local else make_client(scheduler, n_workers=args.workers)
    try:
        m = dask_aggregate.aggregate_parquet(
            args.reports,
            oracle,
            column=args.column.split(",") if args.column else None,
            scheduler=scheduler if scheduler in local else client,
        )
    finally:
        close_client(client, own_cluster=scheduler is None)
    seconds = time.perf_counter() - t0
    record = {
        "oracle": oracle.name,
        "epsilon": oracle.epsilon,
        "domain_size": m.domain_size,
        "n": int(m.n),
        "p": m.p,
        "q": m.q,
        "support_counts": [int(c) for c in m.support_counts],
        "reports": str(args.reports),
        "seconds": seconds,
    }
    write_json(args.out, record)
    top = np.argsort(-m.estimates, kind="stable")[:5]
    print(
        f"{m.n:,} {oracle.name} reports (eps {oracle.epsilon:g}, d {m.domain_size:,}) "
        f"aggregated in {seconds:.1f} s -> {args.out}"
    )
    print("largest estimates: " + ", ".join(f"{v}: {m.estimates[v]:.4g}" for v in top))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bayesldp._validation import check_float, check_int
    from bayesldp.audit import audit_oracle, default_inputs
    from bayesldp.oracles import make_oracle

    def number(option: str, kind: type):
        text = getattr(args, option.replace("-", "_"))
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"--{option} must be a number, got {text!r}") from None

    try:  # user errors: one line on stderr, exit code 2
        oracle = make_oracle(args.oracle, number("epsilon", float), number("domain-size", int))
        inputs = default_inputs(oracle.domain_size)
        samples = check_int(number("samples", int), "--samples", minimum=2)
        confidence = check_float(
            number("confidence", float),
            "--confidence",
            minimum=0,
            maximum=1,
            strict_minimum=True,
            strict_maximum=True,
        )
        seed = check_int(number("seed", int), "--seed", minimum=0)
    except ValueError as err:
        print(f"bayesldp audit: error: {err}", file=sys.stderr)
        return 2
    desc = f"audit {oracle.name} eps={oracle.epsilon:g} d={oracle.domain_size}"
    with tqdm(total=inputs.size, desc=desc, unit="input", file=sys.stderr) as bar:
        result = audit_oracle(
            oracle,
            inputs=inputs,
            samples=samples,
            confidence=confidence,
            rng=seed,
            progress=bar.update,
        )
    print(f"{oracle.name} (eps {oracle.epsilon:g}, d {oracle.domain_size}): {result.summary()}")
    return 1 if result.contradicted else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = argparse.ArgumentParser(prog="bayesldp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"bayesldp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="every method on Zipf(1.5), d=1024, n=1e6, eps=1, OUE")
    demo.add_argument("--epsilon", type=float, default=1.0)
    demo.add_argument("--oracle", default="OUE", help="GRR, OUE, SUE, OLH, SS or HR")
    demo.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    demo.add_argument("--n", type=int, default=1_000_000, help="users (default 1e6)")
    demo.add_argument("--d", type=int, default=1024, help="domain size (default 1024)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--methods", default="", help="comma-separated subset of methods")
    demo.add_argument("--out", default="bayesldp-demo", help="output folder")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_demo)

    from bayesldp.experiments.command import add_arguments

    experiment = sub.add_parser(
        "experiment", help="reproduce a paper figure (NAME, 'all' or 'list'); runs on Dask"
    )
    add_arguments(experiment)
    experiment.set_defaults(func=_experiment)

    agg = sub.add_parser(
        "aggregate",
        help="aggregate Parquet files of user reports into a Measurement (JSON), on Dask",
        description="Aggregate Parquet report files (bayesldp.dask_aggregate layout) into "
        "support counts, one Dask task per file. Load the result with "
        "Measurement.from_support_counts(counts, n, p, q).",
    )
    agg.add_argument("reports", help="a directory of *.parquet files, a glob, or one file")
    agg.add_argument(
        "--oracle", default=None, help="GRR, OUE, SUE, OLH, SS or HR (default: the files')"
    )
    agg.add_argument("--epsilon", type=float, default=None, help="(default: the files')")
    agg.add_argument("--d", type=int, default=None, help="domain size (default: the files')")
    agg.add_argument("--column", default="", help="report column(s), comma-separated")
    agg.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address, or synchronous/threads/processes; default: a LocalCluster",
    )
    agg.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    agg.add_argument("--no-dask", action="store_true", help="same as --scheduler synchronous")
    agg.add_argument("--out", default="measurement.json", help="output JSON file")
    agg.set_defaults(func=_aggregate)

    audit = sub.add_parser(
        "audit",
        help="empirical epsilon-LDP audit of an oracle's reports (exit 1 if eps is violated)",
        description="Privatize many users holding each of a few values and bound the "
        "oracle's epsilon from below (Clopper-Pearson, sample splitting). Exit code 0: "
        "the claimed epsilon is not contradicted; 1: the lower bound exceeds it; 2: bad "
        "arguments.",
    )
    audit.add_argument("oracle", help="GRR, OUE, SUE, OLH, SS or HR")
    audit.add_argument("--epsilon", required=True, help="the claimed epsilon (> 0)")
    audit.add_argument("--domain-size", required=True, help="domain size d (>= 2; small)")
    audit.add_argument("--samples", default="200000", help="users per input (default 200000)")
    audit.add_argument("--confidence", default="0.99", help="of the lower bound (default 0.99)")
    audit.add_argument("--seed", default="0", help="random seed (default 0)")
    audit.set_defaults(func=_audit)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesldp`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.func(args)
    except ValueError as err:
        parser.error(str(err))
    return 2


if __name__ == "__main__":
    sys.exit(main())
