"""Arguments and driver shared by ``bayesldp experiment`` and the scripts in experiments/."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bayesldp.experiments.registry import EXPERIMENTS, build_config
from bayesldp.registry import method_names


def add_arguments(parser: argparse.ArgumentParser, with_name: bool = True) -> None:
    """Add the experiment options to ``parser``."""
    if with_name:
        parser.add_argument(
            "name", help="experiment name, 'all' for every one, or 'list' to list them"
        )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="tiny grid (seconds)")
    mode.add_argument("--full", action="store_true", help="the papers' settings (default)")
    parser.add_argument("--out", default="bayesldp-experiments", help="output folder")
    parser.add_argument(
        "--scheduler",
        default=None,
        help="Dask scheduler address; 'synchronous' runs in this process; default: a LocalCluster",
    )
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    parser.add_argument("--no-dask", action="store_true", help="same as --scheduler synchronous")
    parser.add_argument("--oracle", default="OUE", help="frequency oracle (default OUE)")
    parser.add_argument(
        "--methods",
        default="",
        help="comma-separated methods; 'name@cvxpy' for the cvxpy backend, "
        "'oue-zero' = base-cut with alpha 0.05 (default: all numpy methods but ibu)",
    )
    parser.add_argument(
        "--bayes",
        action="store_true",
        help=f"add the Bayesian methods ({', '.join(method_names(bayesian=True))})",
    )
    parser.add_argument("--datasets", default="", help="comma-separated; e.g. 'zipf:n=10000;beta'")
    parser.add_argument("--eps", default="", help="comma-separated epsilons")
    parser.add_argument("--reps", type=int, default=None, help="repetitions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--restart", action="store_true", help="discard parts of another config")
    parser.add_argument("--plot-only", action="store_true", help="only re-plot saved results")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _configs(names, args):
    from bayesldp.experiments.runner import check_methods, default_methods

    mode = "quick" if args.quick else "full" if args.full else "default"
    methods = tuple(m for m in args.methods.split(",") if m) or None
    if args.bayes:
        methods = (methods or default_methods()) + method_names(bayesian=True)
    if methods:
        check_methods(methods)
    # datasets are separated by ';' (a dataset's own options use ',')
    datasets = tuple(d for d in args.datasets.split(";") if d) or None
    eps = tuple(float(e) for e in args.eps.split(",") if e) or None
    return [
        build_config(
            n,
            mode,
            methods=methods,
            datasets=datasets,
            epsilons=eps,
            reps=args.reps,
            oracle=args.oracle,
            seed=args.seed,
        )
        for n in names
    ]


def run_from_args(args: argparse.Namespace, names: list[str] | None = None) -> int:
    """Run the named experiments (or list them); returns an exit code."""
    from tqdm import tqdm

    from bayesldp.experiments.plots import plot
    from bayesldp.experiments.runner import (
        close_client,
        combine,
        make_client,
        prepare,
        run_tasks,
        saved_config,
    )

    if names is None:
        if args.name == "list":
            for e in EXPERIMENTS.values():
                print(f"{e.name:<16} {e.description}  [{e.figure}]")
            return 0
        names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    for n in names:
        if n not in EXPERIMENTS:
            raise ValueError(f"name: unknown experiment {n!r}; try 'bayesldp experiment list'")
    out = Path(args.out)
    configs = _configs(names, args)
    if args.plot_only:
        # combine the parts that exist (e.g. of a run still going or stopped), then plot;
        # the grid is the one the folder was run with, not this command line's defaults
        for config in configs:
            folder = out / config.experiment
            if not (folder / "parts").is_dir():
                continue
            config = saved_config(folder) or config
            results = combine(config, folder)
            plot(config.experiment, folder)
            print(f"{config.experiment}: {len(results)} rows, plotted {folder / 'figure.png'}")
        return 0
    pending = [prepare(c, out, restart=args.restart) for c in configs]
    todo = sum(len(tasks) for _, tasks in pending)
    scheduler = "synchronous" if args.no_dask else args.scheduler
    t0 = time.perf_counter()
    client = make_client(scheduler, n_workers=args.workers) if todo else None
    try:
        # every experiment's tasks go to the cluster at once (no idle workers between
        # experiments); each part is written as it lands, so a rerun resumes
        # interleaved by repetition, so a stopped run has a few repetitions of every
        # experiment rather than all of the first ones
        tasks = sorted(
            ((folder, task) for folder, ts in pending for task in ts),
            key=lambda pair: pair[1].rep,
        )
        with tqdm(total=todo, desc="tasks", unit="task", disable=args.quiet) as bar:
            run_tasks(tasks, client=client, progress=bar.update)
    finally:
        close_client(client, own_cluster=scheduler is None)
    for config in configs:
        results = combine(config, out / config.experiment, elapsed=time.perf_counter() - t0)
        plot(config.experiment, out / config.experiment)
        print(
            f"{config.experiment}: {len(results)} rows -> "
            f"{out / config.experiment / 'results.csv'}, figure.png"
        )
    print(f"done in {time.perf_counter() - t0:.1f} s ({todo} tasks run)")
    return 0


def script_main(name: str, argv: list[str] | None = None) -> int:
    """``main`` of a script in experiments/: the same options, the name fixed."""
    parser = argparse.ArgumentParser(description=EXPERIMENTS[name].description)
    add_arguments(parser, with_name=False)
    args = parser.parse_args(argv)
    return run_from_args(args, names=[name])
