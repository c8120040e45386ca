"""The ``bayesldp`` command line: ``demo``, ``experiment`` and ``aggregate``.

User errors (bad options, datasets, methods, an unwritable ``--out``, an unreachable
scheduler) are one line on stderr, ``bayesldp: error: ...``, and exit code 2; Ctrl-C
stops a run with one line and exit code 130 (the same command resumes it); output cut
short by a closed stdout (``| head``) ends quietly with exit code 141. Everything
printed is printed here: the library returns data and logs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bayesldp import __version__

__all__ = [
    "DEMO_OUT",
    "EXPERIMENTS_OUT",
    "ArgumentParser",
    "Stopped",
    "add_run_arguments",
    "build_parser",
    "experiment_main",
    "main",
    "run_experiments",
]

logger = logging.getLogger("bayesldp")

DEMO_OUT = "bayesldp-demo"
EXPERIMENTS_OUT = "bayesldp-experiments"


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: MESSAGE`` on stderr, exit code 2."""

    def error(self, message: str):
        """Print ``PROG: error: MESSAGE`` on one line to stderr and exit with code 2.

        Parameters
        ----------
        message : str
            The error; its whitespace (newlines included) is collapsed to single spaces.
        """
        text = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {text}\n")


class Stopped(Exception):
    """Ctrl-C during a run: how far it got."""

    def __init__(self, done: int, total: int):
        super().__init__(done, total)
        self.done, self.total = done, total


def _note(text: str) -> None:
    """Print a one-line notice on stderr (stdout keeps the results)."""
    print(text, file=sys.stderr)


def _guarded(parser: ArgumentParser, func: Callable[[], int], verbose: bool = False) -> int:
    """Run ``func``: ValueError and missing packages are user errors (one line, exit 2)."""
    try:
        return func()
    except Stopped as stop:
        _note(
            f"{parser.prog}: stopped after {stop.done} of {stop.total} tasks; "
            "run the same command again to resume"
        )
        return 130
    except KeyboardInterrupt:
        _note(f"{parser.prog}: stopped")
        return 130
    except (ValueError, ImportError) as err:
        if verbose:
            raise
        parser.error(str(err) or type(err).__name__)
    return 2


# ---------------------------------------------------------------------------
# experiments


def _floats(text: str, name: str) -> tuple[float, ...] | None:
    values = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            values.append(float(item))
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not a number") from None
    return tuple(values) or None


def _option_type(default):
    if isinstance(default, bool):
        raise TypeError("boolean experiment options are not supported")
    return type(default) if isinstance(default, int | float) else str


def _escape(text: str) -> str:
    """Protect ``%`` in a help text from argparse's %-formatting (``50%`` -> ``50%%``)."""
    return text.replace("%", "%%")


def _minutes_methods() -> str:
    """Name the methods ``--bayes`` leaves out (``MethodSpec.minutes``), for help texts."""
    from bayesldp.methods.registry import method_names

    return ", ".join(method_names(minutes=True)) or "none"


def add_run_arguments(parser: argparse.ArgumentParser, experiment=None) -> None:
    """Add the runner's options (and ``experiment``'s own parameters) to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser to extend.
    experiment : Experiment, optional
        Adds one option per entry of its ``options``, with the default and quick values
        in the help.
    """
    parser.add_argument("--quick", action="store_true", help="a tiny grid (seconds)")
    parser.add_argument(
        "--out", default=EXPERIMENTS_OUT, help="output folder; results go to OUT/NAME/"
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        help="a Dask scheduler address; default: a LocalCluster of --workers processes "
        "(in this process if dask is not installed)",
    )
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (2)")
    parser.add_argument("--no-dask", action="store_true", help="run in this process")
    parser.add_argument(
        "--oracle", default="", help="oracle(s), comma-separated (default: the grid's)"
    )
    parser.add_argument(
        "--methods",
        default="",
        help="comma-separated method specs; 'name@cvxpy' for the cvxpy backend "
        "(default: the experiment's, usually the registry's default set)",
    )
    parser.add_argument(
        "--bayes",
        action="store_true",
        help="add the Bayesian methods that take seconds per fit (name the others, "
        f"{_minutes_methods()}, with --methods)",
    )
    parser.add_argument(
        "--datasets", default="", help="';'-separated dataset specs, e.g. 'zipf:n=10000;beta'"
    )
    parser.add_argument("--eps", default="", help="comma-separated epsilons")
    parser.add_argument("--reps", type=int, default=None, help="repetitions")
    parser.add_argument(
        "--seed", type=int, default=None, help="base seed (default: the grid's, usually 0)"
    )
    parser.add_argument("--restart", action="store_true", help="discard parts of another config")
    parser.add_argument("--plot-only", action="store_true", help="only re-plot saved results")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    if experiment is not None:
        for key, text in experiment.options.items():
            default = experiment.grid.params[key]
            parser.add_argument(
                "--" + key.replace("_", "-"),
                dest=key,
                type=_option_type(default),
                default=None,
                help=_escape(
                    f"{text} (default {default!r}; --quick: {experiment.quick.params[key]!r})"
                ),
            )


def _config(experiment, args: argparse.Namespace, datasets: Sequence[str] | None = None):
    from bayesldp.runner import build_config

    params = {k: getattr(args, k) for k in experiment.options if getattr(args, k, None) is not None}
    return build_config(
        experiment,
        "quick" if args.quick else "default",
        methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()) or None,
        bayes=args.bayes,
        # datasets are separated by ';' (a dataset's own options use ',')
        datasets=datasets or tuple(d.strip() for d in args.datasets.split(";") if d.strip()),
        epsilons=_floats(args.eps, "eps"),
        reps=args.reps,
        oracles=tuple(o.strip() for o in args.oracle.split(",") if o.strip()) or None,
        seed=args.seed,
        params=params,
    )


def _executor(args: argparse.Namespace, pending: int):
    """Return the Dask client to run on (None: this process) and whether this command made it."""
    from bayesldp.runner import dask_available, make_client

    if args.no_dask or args.scheduler == "synchronous" or pending == 0:
        return None
    if args.scheduler is None and not dask_available():
        _note(
            "dask is not installed: running in this process "
            "(pip install 'bayesldp[dask]' for parallel workers)"
        )
        return None
    return make_client(args.scheduler, n_workers=args.workers)


def _close_quietly(client, own_cluster: bool) -> None:
    """Close a client after Ctrl-C without Dask's shutdown tracebacks."""
    from bayesldp.runner import close_client

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    with contextlib.suppress(BaseException):
        close_client(client, own_cluster=own_cluster)


def run_experiments(
    experiments: Sequence, args: argparse.Namespace, folders: Sequence[Path] | None = None
) -> int:
    """Run (or resume, or re-plot) ``experiments`` as the command line asked; print.

    Parameters
    ----------
    experiments : sequence of Experiment
        The experiments to run, in this order.
    args : argparse.Namespace
        The options of :func:`add_run_arguments`.
    folders : sequence of pathlib.Path, optional
        One output folder per experiment; by default ``args.out / NAME``.

    Returns
    -------
    int
        The exit code (0).
    """
    from tqdm import tqdm

    from bayesldp._validation import check_int
    from bayesldp.runner import (
        close_client,
        combine,
        make_tasks,
        plot,
        prepare,
        run_tasks,
        saved_config,
    )

    check_int(args.workers, "workers", minimum=1)
    out = Path(args.out)
    folders = list(folders or [out / e.name for e in experiments])
    if args.plot_only:
        for experiment, folder in zip(experiments, folders, strict=True):
            if not folder.is_dir():
                _note(f"{experiment.name}: nothing saved in {folder}")
                continue
            config = saved_config(folder) or _config(experiment, args)
            try:
                combine(experiment, config, folder)
            except ValueError:
                if not (folder / "results.csv").exists():
                    raise
            plot(experiment, folder)
            print(f"{experiment.name}: plotted {', '.join(_figures(folder))} in {folder}")
        return 0
    configs = [_config(e, args) for e in experiments]
    skipped = sorted(
        {d for e, c in zip(experiments, configs, strict=True) for d in
         e.grid_for(c.mode).datasets if d not in c.datasets and not args.datasets}
    )  # fmt: skip
    if skipped:
        from bayesldp.datasets import DATASETS, parse_dataset

        extras = sorted({DATASETS[parse_dataset(d)[0]].extra or "data" for d in skipped})
        install = ", ".join(f"'bayesldp[{e}]'" for e in extras)
        _note(f"skipped {', '.join(skipped)}: not installed here (pip install {install})")
    pending = []
    for experiment, config, folder in zip(experiments, configs, folders, strict=True):
        todo = prepare(experiment, config, folder, restart=args.restart)
        pending += [(experiment, folder, task) for task in todo]
    # interleaved by repetition, so a stopped run has a few repetitions of every
    # experiment rather than all of the first ones
    pending.sort(key=lambda job: job[2].rep)
    t0 = time.perf_counter()
    client = _executor(args, len(pending))
    own_cluster = args.scheduler is None
    done = [0]

    def advance(k: int) -> None:
        done[0] += k
        bar.update(k)

    with tqdm(total=len(pending), desc="tasks", unit="task", disable=args.quiet) as bar:
        try:
            run_tasks(pending, client=client, progress=advance)
        except KeyboardInterrupt:
            bar.close()
            _close_quietly(client, own_cluster)
            raise Stopped(done[0], len(pending)) from None
        except (ValueError, ImportError) as err:
            # raised by a task, not by the command line: show the traceback
            _close_quietly(client, own_cluster)
            raise RuntimeError(f"a task failed after {done[0]} of {len(pending)}: {err}") from err
        except BaseException:
            _close_quietly(client, own_cluster)
            raise
    close_client(client, own_cluster=own_cluster)
    elapsed = time.perf_counter() - t0
    ran: dict[Path, int] = {}
    for _, folder, _task in pending:
        ran[folder] = ran.get(folder, 0) + 1
    for experiment, config, folder in zip(experiments, configs, folders, strict=True):
        results = combine(experiment, config, folder, elapsed=elapsed)
        plot(experiment, folder)
        total = len(make_tasks(config))
        print(
            f"{experiment.name}: {len(results)} rows -> {folder / 'results.csv'}, "
            f"{', '.join(_figures(folder))} ({ran.get(folder, 0)} tasks run, "
            f"{total - ran.get(folder, 0)} resumed)"
        )
    print(f"done in {time.perf_counter() - t0:.1f} s ({len(pending)} tasks run)")
    return 0


def _figures(folder: Path) -> list[str]:
    return [p.name for p in sorted(folder.glob("*.png"))] or ["no figure"]


def _list_experiments() -> int:
    from bayesldp.runner import find_experiments

    found = find_experiments().values()
    name_width = max(len(e.name) for e in found)
    group_width = max(len(e.group) for e in found)
    for e in found:
        print(f"{e.name:<{name_width}} {e.group:<{group_width}} {e.description}  [{e.figure}]")
    return 0


def experiment_main(experiment, argv: Sequence[str] | None = None) -> int:
    """Serve as ``main`` of a module of experiments/: the runner's options for one experiment.

    Dask workers import an experiment's functions by module name, so a module run as a
    script calls the ``main`` of its installed self (``bayesldp.experiments.NAME``), not
    its ``__main__`` copy (see ``experiments/full_domain_mse.py``).

    Parameters
    ----------
    experiment : Experiment
        The module's experiment.
    argv : sequence of str, optional
        The command-line arguments; by default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code.
    """

    def run() -> int:
        parser = ArgumentParser(
            prog=f"{experiment.name}.py",
            description=f"{experiment.description} [{experiment.figure}]",
        )
        parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
        add_run_arguments(parser, experiment)
        args = parser.parse_args(argv)
        _setup_logging(args.verbose)
        return _guarded(parser, lambda: run_experiments([experiment], args), args.verbose)

    return _closed_stdout_quiet(run)


def _experiment(args: argparse.Namespace) -> int:
    from bayesldp.runner import find_experiments

    if args.name == "list":
        return _list_experiments()
    experiments = find_experiments()
    if args.name == "all":
        chosen = [e for e in experiments.values() if e.group == "papers"]
    else:
        chosen = [experiments[args.name]]
    return run_experiments(chosen, args)


# ---------------------------------------------------------------------------
# demo


def _demo_table(results):
    """Per method (in the order run): mean of each query's error, sum and milliseconds."""
    wide = results.pivot_table(index="method", columns="metric", values="value", aggfunc="mean")
    wide["ms"] = results[results["metric"] == "mse"].groupby("method")["seconds"].mean() * 1e3
    return wide.reindex(list(dict.fromkeys(results["method"]))).reset_index()


def _demo(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bayesldp.plotting import dataset_note
    from bayesldp.runner import build_config, get_experiment, run, warnings_by_method

    experiment = get_experiment("demo")
    spec = "zipf" if (args.d, args.n) == (1024, 1_000_000) else f"zipf:d={args.d},n={args.n}"
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip()) or None
    config = build_config(
        experiment,
        methods=methods,
        bayes=args.bayes,
        datasets=(spec,),
        epsilons=(args.epsilon,),
        reps=args.reps,
        oracles=(args.oracle,),
        seed=args.seed,
    )
    folder = Path(args.out)
    p = config.params
    print(
        f"{dataset_note(spec)} (s = 1.5), d = {args.d:,}, n = {args.n:,}, "
        f"eps = {config.epsilons[0]:g}, {config.oracles[0]}, {config.reps} repetitions, "
        f"seed {config.seed}; {len(config.methods)} methods"
    )
    with tqdm(total=config.reps, desc="repetitions", unit="rep", disable=args.quiet) as bar:
        # the demo's folder is scratch: results of other settings are replaced
        result = run(experiment, config, folder, progress=bar.update, restart=True)
    set_label, top_label = f"{p['set_percent']:g}% set MSE", f"top-{p['top_k']} MSE"
    header = f"{'method':<16} {'full MSE':>10} {set_label:>12} {top_label:>11} {'sum':>7} {'ms':>8}"
    print(header)
    print("-" * len(header))
    for row in _demo_table(result.results).itertuples():
        print(
            f"{row.method:<16} {row.mse:>10.3e} {row.set_mse:>12.3e} {row.topk_mse:>11.3e} "
            f"{row.sum:>7.4f} {row.ms:>8.2f}"
        )
    for row in warnings_by_method(result.results).itertuples():
        message = row.messages if len(row.messages) <= 110 else row.messages[:107] + "..."
        print(f"warning: {row.method} in {row.tasks_warned} of {row.tasks} runs: {message}")
    print(f"wrote {folder / 'results.csv'}, {folder / 'summary.csv'} and {folder / 'figure.png'}")
    return 0


def _aggregate(args: argparse.Namespace) -> int:
    import time

    from bayesldp import dask_aggregate
    from bayesldp.io import write_json
    from bayesldp.runner import close_client, make_client

    # Absolute paths: the workers of an external scheduler run in other directories
    # (aggregate_parquet resolves the files again, to absolute paths, before sending them).
    reports = os.path.abspath(args.reports)
    oracle = dask_aggregate.oracle_from_files(reports, args.oracle, args.epsilon, args.d)
    local = ("synchronous", "threads", "processes")
    scheduler = "synchronous" if args.no_dask else args.scheduler
    t0 = time.perf_counter()
    client = None if scheduler in local else make_client(scheduler, n_workers=args.workers)
    try:
        m = dask_aggregate.aggregate_parquet(
            reports,
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
        "reports": reports,
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


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


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


def build_parser() -> ArgumentParser:
    """Build the argument parser (exposed for documentation and tests)."""
    from bayesldp.oracles import ORACLES
    from bayesldp.runner import find_experiments

    parser = ArgumentParser(prog="bayesldp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"bayesldp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo",
        help="every NumPy method on Zipf(1.5), d=1024, n=1e6, eps=1, OUE (--bayes: and the "
        "Bayesian models)",
    )
    demo.add_argument("--epsilon", type=float, default=1.0)
    demo.add_argument("--oracle", default="OUE", help="GRR, OUE, SUE, OLH, SS or HR")
    demo.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    demo.add_argument("--n", type=int, default=1_000_000, help="users (default 1e6)")
    demo.add_argument("--d", type=int, default=1024, help="domain size (default 1024)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument(
        "--methods", default="", help="comma-separated methods (any registered method)"
    )
    demo.add_argument(
        "--bayes",
        action="store_true",
        help="add the Bayesian models that take seconds per fit (PyMC; name "
        f"{_minutes_methods()}, minutes each, with --methods)",
    )
    demo.add_argument("--out", default=DEMO_OUT, help=f"output folder (default {DEMO_OUT})")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_demo)

    experiment = sub.add_parser(
        "experiment",
        help="reproduce a paper figure or run a study (NAME, 'all' or 'list'); on Dask",
        description="Run an experiment of bayesldp.experiments (the repository's "
        "experiments/ folder): 'all' runs the papers' figures, 'list' lists them all.",
    )
    names = experiment.add_subparsers(dest="name", required=True, metavar="NAME")
    names.add_parser("list", help="list the experiments")
    every = names.add_parser("all", help="every figure of the papers")
    add_run_arguments(every)
    for e in find_experiments().values():
        one = names.add_parser(e.name, help=_escape(e.description), description=f"{e.description} "
                               f"[{e.figure}]")  # fmt: skip
        add_run_arguments(one, e)
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
    audit.add_argument("oracle", help=", ".join(ORACLES))
    audit.add_argument("--epsilon", required=True, help="the claimed epsilon (> 0)")
    audit.add_argument("--domain-size", required=True, help="domain size d (>= 2; small)")
    audit.add_argument("--samples", default="200000", help="users per input (default 200000)")
    audit.add_argument("--confidence", default="0.99", help="of the lower bound (default 0.99)")
    audit.add_argument("--seed", default="0", help="random seed (default 0)")
    audit.set_defaults(func=_audit)
    return parser


def _closed_stdout_quiet(func: Callable[[], int]) -> int:
    """Run ``func``; if stdout is closed early (``| head``), exit 141 without a traceback.

    The standard recipe: stdout is flushed here, so that a closed pipe shows up inside
    the ``try``, and then pointed at ``os.devnull`` so that the interpreter's own flush
    at exit does not fail again. 141 is the shell's code for a process ended by SIGPIPE.
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesldp`` console script.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0, 2 for a user error, 130 after Ctrl-C, 141 when stdout was
        closed early (``bayesldp experiment list | head -2``).
    """

    def run() -> int:
        parser = build_parser()
        args = parser.parse_args(argv)
        _setup_logging(args.verbose)
        return _guarded(parser, lambda: args.func(args), args.verbose)

    return _closed_stdout_quiet(run)


if __name__ == "__main__":
    sys.exit(main())
