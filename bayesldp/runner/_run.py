"""Running tasks, in this process or on Dask, and :func:`run`, one experiment end to end.

Nothing here prints: progress goes to a callback, messages to :mod:`logging`, and
results are returned.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bayesldp import __version__
from bayesldp.runner._config import make_tasks
from bayesldp.runner._datasets import load_dataset
from bayesldp.runner._experiment import ROW_COLUMNS, Config, Experiment, Task
from bayesldp.runner._parts import prepare, write_part
from bayesldp.runner._results import combine, draw_figures

logger = logging.getLogger(__name__)


def execute(experiment: Experiment, task: Task, imports: Sequence[str] = ()) -> pd.DataFrame:
    """Run one task (in any process): its tidy rows with the cell's columns.

    Parameters
    ----------
    experiment : Experiment
        Whose ``task`` and ``seed`` are used.
    task : Task
        The cell to run.
    imports : sequence of str
        Modules to import first (once per process), e.g. a user's module that
        registers methods or datasets: a Dask worker has not imported them.

    Returns
    -------
    pandas.DataFrame
        The task's rows, with the cell, the seed's entropy, the seconds taken and the
        package version as columns.
    """
    for module in imports:
        importlib.import_module(module)
    dataset = load_dataset(task.dataset)
    seq = experiment.seed_sequence(task)
    t0 = time.perf_counter()
    rows = experiment.task(task, dataset, seq)
    frame = pd.DataFrame(rows, columns=list(ROW_COLUMNS))
    frame.insert(0, "experiment", task.experiment)
    frame.insert(1, "dataset", task.dataset)
    frame.insert(2, "n", dataset.n)
    frame.insert(3, "d", dataset.d)
    frame.insert(4, "oracle", task.oracle)
    frame.insert(5, "epsilon", task.epsilon)
    frame.insert(6, "rep", task.rep)
    frame.insert(7, "seed", task.seed)
    frame["seed_entropy"] = str(seq.entropy)
    frame["task_seconds"] = time.perf_counter() - t0
    frame["bayesldp_version"] = __version__
    return frame


def run_tasks(
    jobs: Sequence[tuple[Experiment, Path, Task]],
    client: Any = None,
    progress: Callable[[int], Any] | None = None,
    imports: Sequence[str] = (),
) -> int:
    """Run (experiment, folder, task) jobs, writing each part as soon as it is done.

    Parameters
    ----------
    jobs : sequence of (Experiment, Path, Task)
        What to run and where its part goes.
    client : dask.distributed.Client, optional
        Run on it; by default in this process, in order.
    progress : callable, optional
        Called with 1 after each part is written.
    imports : sequence of str
        Modules each task imports first (:func:`execute`).

    Returns
    -------
    int
        Tasks run. An exception in a task (or Ctrl-C) stops the run; the parts written
        so far stay, so running the same jobs again resumes.
    """
    if client is None:
        for experiment, folder, task in jobs:
            write_part(folder, task.key, execute(experiment, task, imports))
            if progress:
                progress(1)
        return len(jobs)
    from dask.distributed import as_completed

    futures = client.map(
        execute,
        [e for e, _, _ in jobs],
        [t for _, _, t in jobs],
        [tuple(imports)] * len(jobs),
        pure=False,
    )
    where = {f.key: job for f, job in zip(futures, jobs, strict=True)}
    count = 0
    for future in as_completed(futures):
        frame = future.result()
        _, folder, task = where[future.key]
        write_part(folder, task.key, frame)
        future.release()
        count += 1
        if progress:
            progress(1)
    return count


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` did: where, how much, and the combined results and summary."""

    experiment: str
    folder: Path
    tasks: int
    tasks_run: int
    seconds: float
    results: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def figures(self) -> list[Path]:
        """The figures in the folder."""
        return sorted(self.folder.glob("*.png"))


def run(
    experiment: Experiment,
    config: Config,
    folder: str | os.PathLike,
    client: Any = None,
    progress: Callable[[int], Any] | None = None,
    restart: bool = False,
    draw: bool = True,
) -> RunResult:
    """Run (or resume) one experiment in ``folder``; combine, and plot unless ``draw=False``.

    Parameters
    ----------
    experiment : Experiment
        The experiment to run.
    config : Config
        Its configuration.
    folder : str or os.PathLike
        The run's folder; valid parts already there are kept (:func:`prepare`).
    client : dask.distributed.Client, optional
        Run the tasks on it; by default in this process, in order.
    progress : callable, optional
        Called with 1 after each part is written.
    restart : bool, default False
        Remove the parts of another configuration instead of refusing the folder.
    draw : bool, default True
        Draw the figures and write ``summary.csv``.

    Returns
    -------
    RunResult
        Where, how many tasks, the combined results and the summary.
    """
    folder = Path(folder)
    t0 = time.perf_counter()
    todo = prepare(experiment, config, folder, restart=restart)
    logger.info("%s: %d tasks to run", config.experiment, len(todo))
    ran = run_tasks([(experiment, folder, t) for t in todo], client=client, progress=progress)
    elapsed = time.perf_counter() - t0
    results = combine(experiment, config, folder, elapsed=elapsed)
    summary = draw_figures(experiment, folder) if draw else None
    return RunResult(
        experiment.name, folder, len(make_tasks(config)), ran, elapsed, results, summary
    )
