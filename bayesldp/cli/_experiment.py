"""``bayesldp experiment NAME``: run (or resume, or re-plot) a study of bayesldp.experiments.

``NAME`` is an experiment's name, ``all`` (the papers' figures) or ``list``. The
experiments are imported only here, when one is asked for; each one's parser is built
for it alone, with its own parameters as options.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bayesldp.cli._common import (
    METHODS_HELP,
    ArgumentParser,
    Stopped,
    add_import_option,
    escape,
    import_modules,
    integer,
    items,
    note,
    number,
    numbers,
)

EXPERIMENTS_OUT = "bayesldp-experiments"


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``experiment`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser; the options after ``NAME`` are read by the experiment's
        own parser (``bayesldp experiment NAME --help``).
    """
    parser = commands.add_parser(
        "experiment",
        help="reproduce a paper figure or run a study (NAME, 'all' or 'list'); on Dask",
        description="Run an experiment of bayesldp.experiments (the repository's "
        "experiments/ folder): NAME runs one ('bayesldp experiment NAME --help' shows its "
        "options), 'all' runs the papers' figures, 'list' lists the experiments.",
    )
    parser.add_argument("name", metavar="NAME", help="an experiment, 'all' or 'list'")
    parser.add_argument(
        "options",
        nargs=argparse.REMAINDER,
        metavar="...",
        help="the experiment's options (see 'bayesldp experiment NAME --help')",
    )
    return parser


def _option_type(default: Any) -> Any:
    """Return the argparse type of an experiment parameter, from its default value."""
    if isinstance(default, bool):
        raise TypeError("boolean experiment options are not supported")
    if isinstance(default, int):
        return integer
    return number if isinstance(default, float) else str


def run_parser(prog: str, description: str, experiment: Any = None) -> ArgumentParser:
    """Build the parser of the runner's options (and ``experiment``'s own parameters).

    Parameters
    ----------
    prog : str
        The command, e.g. ``"bayesldp experiment mae"``.
    description : str
        What it runs.
    experiment : Experiment, optional
        Adds one option per entry of its ``options``, with the default and quick values
        in the help.

    Returns
    -------
    ArgumentParser
    """
    parser = ArgumentParser(prog=prog, description=escape(description))
    parser.add_argument("--quick", action="store_true", help="a tiny grid (seconds)")
    parser.add_argument(
        "--out", default=EXPERIMENTS_OUT,
        help=f"output folder; results go to OUT/NAME/ (default {EXPERIMENTS_OUT})",
    )  # fmt: skip
    parser.add_argument(
        "--scheduler",
        default=None,
        help="a Dask scheduler address; default: a LocalCluster of --workers processes "
        "(in this process if dask is not installed)",
    )
    parser.add_argument(
        "--workers", type=integer, default=2, help="LocalCluster workers (default 2)"
    )
    parser.add_argument("--no-dask", action="store_true", help="run in this process")
    parser.add_argument(
        "--oracle", default=None, help="oracle(s), comma-separated (default: the grid's)"
    )
    parser.add_argument(
        "--methods", default=None,
        help=METHODS_HELP + " (default: the experiment's, usually the registry's default set)",
    )  # fmt: skip
    parser.add_argument(
        "--bayes",
        action="store_true",
        help="add the Bayesian methods that take seconds per fit; those that take minutes "
        "run only when named in --methods",
    )
    parser.add_argument(
        "--datasets",
        default=None,
        help="';'-separated dataset specs, e.g. 'zipf:n=10000;beta' (default: the grid's)",
    )
    add_import_option(parser)
    parser.add_argument(
        "--epsilon", default=None,
        help="privacy budget(s), comma-separated, e.g. 0.5,1,2 (default: the grid's)",
    )  # fmt: skip
    parser.add_argument(
        "--reps", type=integer, default=None, help="repetitions (default: the grid's)"
    )
    parser.add_argument(
        "--seed", type=integer, default=None, help="base seed (default: the grid's, usually 0)"
    )
    parser.add_argument(
        "--restart", action="store_true", help="discard the parts of another configuration"
    )
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
                help=escape(
                    f"{text} (default {default!r}; --quick: {experiment.quick.params[key]!r})"
                ),
            )
    return parser


def _config(experiment: Any, args: argparse.Namespace) -> Any:
    """Return the checked configuration the options ask for."""
    from bayesldp.runner import build_config

    params = {k: getattr(args, k) for k in experiment.options if getattr(args, k, None) is not None}
    return build_config(
        experiment,
        "quick" if args.quick else "default",
        methods=items(args.methods),
        bayes=args.bayes,
        # datasets are separated by ';' (a dataset's own options use ',')
        datasets=items(args.datasets, ";"),
        epsilons=numbers(args.epsilon, "epsilon"),
        reps=args.reps,
        oracles=items(args.oracle),
        seed=args.seed,
        params=params,
    )


def _executor(args: argparse.Namespace, pending: int) -> Any:
    """Return the Dask client to run on (None: this process)."""
    from bayesldp.runner._dask import dask_available, make_client

    if args.no_dask or args.scheduler == "synchronous" or pending == 0:
        return None
    if args.scheduler is None and not dask_available():
        note(
            "dask is not installed: running in this process "
            "(pip install 'bayesldp[dask]' for parallel workers)"
        )
        return None
    return make_client(args.scheduler, n_workers=args.workers)


def _close_quietly(client: Any, own_cluster: bool) -> None:
    """Close a client after Ctrl-C or a failed task without Dask's shutdown tracebacks."""
    import contextlib
    import logging

    from bayesldp.runner._dask import close_client

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    with contextlib.suppress(BaseException):
        close_client(client, own_cluster=own_cluster)


def _figures(folder: Path) -> list[str]:
    return [p.name for p in sorted(folder.glob("*.png"))] or ["no figure"]


def run_experiments(
    experiments: Sequence[Any], args: argparse.Namespace, folders: Sequence[Path] | None = None
) -> int:
    """Run (or resume, or re-plot) ``experiments`` as the command line asked; print.

    Parameters
    ----------
    experiments : sequence of Experiment
        The experiments to run, in this order.
    args : argparse.Namespace
        The options of :func:`run_parser`.
    folders : sequence of pathlib.Path, optional
        One output folder per experiment; by default ``args.out / NAME``.

    Returns
    -------
    int
        The exit code (0).

    Raises
    ------
    Stopped
        Ctrl-C: how many tasks were done.
    """
    from tqdm import tqdm

    from bayesldp._validation import check_int
    from bayesldp.runner._config import make_tasks
    from bayesldp.runner._dask import close_client
    from bayesldp.runner._datasets import install_hint
    from bayesldp.runner._parts import prepare, saved_config
    from bayesldp.runner._results import combine, draw_figures
    from bayesldp.runner._run import run_tasks

    check_int(args.workers, "workers", minimum=1)
    out = Path(args.out)
    folders = list(folders or [out / e.name for e in experiments])
    if args.plot_only:
        for experiment, folder in zip(experiments, folders, strict=True):
            if not folder.is_dir():
                note(f"{experiment.name}: nothing saved in {folder}")
                continue
            config = saved_config(folder) or _config(experiment, args)
            try:
                combine(experiment, config, folder)
            except ValueError:
                if not (folder / "results.csv").exists():
                    raise
            draw_figures(experiment, folder)
            print(f"{experiment.name}: plotted {', '.join(_figures(folder))} in {folder}")
        return 0
    configs = [_config(e, args) for e in experiments]
    skipped = sorted(
        {d for e, c in zip(experiments, configs, strict=True) for d in
         e.grid_for(c.mode).datasets if d not in c.datasets and args.datasets is None}
    )  # fmt: skip
    if skipped:
        note(f"skipped {', '.join(skipped)}: not installed here ({install_hint(skipped)})")
    pending = []
    for experiment, config, folder in zip(experiments, configs, folders, strict=True):
        todo = prepare(experiment, config, folder, restart=args.restart)
        pending += [(experiment, folder, task) for task in todo]
    # interleaved by repetition, so a stopped run has a few repetitions of every
    # experiment rather than all of the first ones
    pending.sort(key=lambda job: job[2].rep)
    t0 = time.perf_counter()
    try:
        client = _executor(args, len(pending))
    except KeyboardInterrupt:  # while the cluster was starting: nothing ran yet
        raise Stopped(0, len(pending)) from None
    own_cluster = args.scheduler is None
    done = [0]

    with tqdm(total=len(pending), desc="tasks", unit="task", disable=args.quiet) as bar:

        def advance(k: int) -> None:
            done[0] += k
            bar.update(k)

        try:
            run_tasks(pending, client=client, progress=advance, imports=args.imports)
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
        draw_figures(experiment, folder)
        total = len(make_tasks(config))
        print(
            f"{experiment.name}: {len(results)} rows -> {folder / 'results.csv'}, "
            f"{', '.join(_figures(folder))} ({ran.get(folder, 0)} tasks run, "
            f"{total - ran.get(folder, 0)} resumed)"
        )
    print(f"done in {time.perf_counter() - t0:.1f} s ({len(pending)} tasks run)")
    return 0


def _list_experiments() -> int:
    """Print one line per experiment: name, group, description and figure."""
    from bayesldp.runner import find_experiments

    found = find_experiments().values()
    name_width = max(len(e.name) for e in found)
    group_width = max(len(e.group) for e in found)
    for e in found:
        print(f"{e.name:<{name_width}} {e.group:<{group_width}} {e.description}  [{e.figure}]")
    return 0


def run(args: argparse.Namespace) -> int:
    """List the experiments, or run the one (or all) ``args.name`` names.

    The modules of ``--import`` are imported first, before the experiments are.

    Parameters
    ----------
    args : argparse.Namespace
        ``name`` and the remaining ``options``, which the experiment's own parser reads.

    Returns
    -------
    int
        The exit code (0).

    Raises
    ------
    SystemExit
        Bad options (code 2), or ``--help`` (code 0).
    """
    prog = "bayesldp experiment"
    if args.name == "list":
        if args.options:
            ArgumentParser(prog=f"{prog} list").error(
                f"unrecognized arguments: {' '.join(args.options)}"
            )
        return _list_experiments()
    first = ArgumentParser(prog=prog, add_help=False)
    add_import_option(first)
    import_modules(first.parse_known_args(args.options)[0].imports)

    from bayesldp.runner import find_experiments, get_experiment

    if args.name == "all":
        chosen = [e for e in find_experiments().values() if e.group == "papers"]
        parser = run_parser(f"{prog} all", "Run every figure of the papers.")
    else:
        try:
            experiment = get_experiment(args.name)
        except ValueError as err:
            ArgumentParser(prog=prog).error(str(err))
        chosen = [experiment]
        parser = run_parser(
            f"{prog} {experiment.name}",
            f"{experiment.description} [{experiment.figure}]",
            experiment,
        )
    return run_experiments(chosen, parser.parse_args(args.options))
