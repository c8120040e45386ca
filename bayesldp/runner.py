"""The experiment runner: one machinery for every study in ``experiments/``.

An :class:`Experiment` is declared once, in one module of the ``bayesldp.experiments``
package (the repository's ``experiments/`` folder), as ``EXPERIMENT = Experiment(...)``:
its task (the metrics of one cell), its grids (the default one, which is the papers',
and a tiny ``quick`` one) and its plot. Everything else lives here:

1. :func:`build_config` turns an experiment and the user's overrides into a checked
   :class:`Config` (methods from :mod:`bayesldp.methods.registry`, datasets from
   :data:`bayesldp.datasets.DATASETS`);
2. :func:`make_tasks` expands its grid (oracle x dataset x eps x repetition) into
   :class:`Task` objects, each with its own :class:`numpy.random.SeedSequence`
   (:attr:`Experiment.seed`);
3. :func:`prepare` creates ``OUT/NAME/`` and returns the tasks whose part is missing or
   damaged; :func:`run_tasks` runs them in this process or on a Dask client and writes
   each one's tidy rows atomically to ``parts/<key>.csv`` with its row count and SHA-256
   in ``parts/<key>.json`` (a part that does not match its record is run again);
4. :func:`combine` joins the parts into ``results.csv`` and writes ``metadata.json``;
5. :func:`plot` draws the figures from ``results.csv`` only and writes ``summary.csv``.

:func:`run` does 3 to 5 for one experiment. Nothing here prints: progress goes to a
callback, messages to :mod:`logging`, and results are returned.

Seeding. A task's rows depend only on its :class:`~numpy.random.SeedSequence` (by default
``SeedSequence([seed, crc32("experiment|dataset|eps|rep")])``), never on scheduling.
Every method that accepts ``rng`` gets a Generator from :func:`method_seed`, a
sequence derived from the task's own by its spawn key, so adding or removing a method
changes no other random stream of the task.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import logging
import os
import pkgutil
import platform
import re
import signal
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from bayesldp import __version__
from bayesldp._validation import check_epsilon, check_int
from bayesldp.io import atomic_open, write_csv, write_json

logger = logging.getLogger(__name__)

__all__ = [
    "EXPERIMENTS_PACKAGE",
    "METHOD_STREAM",
    "MODES",
    "ROW_COLUMNS",
    "Config",
    "Experiment",
    "Grid",
    "Row",
    "RunResult",
    "Task",
    "apply_methods",
    "bayes_methods",
    "build_config",
    "check_methods",
    "close_client",
    "combine",
    "config_digest",
    "dask_available",
    "default_methods",
    "execute",
    "find_experiments",
    "get_experiment",
    "grid_seed",
    "is_real",
    "load_dataset",
    "make_client",
    "make_tasks",
    "method_rows",
    "method_seed",
    "part_is_valid",
    "plot",
    "prepare",
    "rep_seed",
    "reps_for",
    "run",
    "run_tasks",
    "saved_config",
    "simulate",
    "simulate_and_apply",
    "spawn_seed",
    "warnings_by_method",
    "write_part",
]

#: The package whose modules declare the experiments (the repository's experiments/).
EXPERIMENTS_PACKAGE = "bayesldp.experiments"

#: Grid modes: the papers' grid (``default``) and a tiny one for checks (``quick``).
MODES = ("default", "quick")

#: What a task returns per row: (method, metric, param, value, seconds, warning).
Row = tuple[str, str, float, float, float, str]
ROW_COLUMNS = ("method", "metric", "param", "value", "seconds", "warning")

#: The first element of a method's spawn key (see :func:`method_seed`): far above the
#: number of children any task spawns, so no ``seq.spawn`` child ever shares it.
METHOD_STREAM = 0x6D657468  # "meth"


# ---------------------------------------------------------------------------
# declarations


@dataclass(frozen=True)
class Grid:
    """One mode's grid of an experiment.

    Parameters
    ----------
    datasets : tuple of str
        Dataset specs (:func:`bayesldp.datasets.parse_dataset`); real ones whose
        packages are missing are skipped.
    epsilons : tuple of float
        Privacy budgets.
    reps : int
        Repetitions per (oracle, dataset, eps).
    methods : tuple of str, optional
        Method specs; by default the registry's default set (:func:`default_methods`).
    extra_methods : tuple of str
        Added to the default set (e.g. ``oue-zero`` for heavy hitters).
    oracles : tuple of str
        Frequency oracles.
    real_reps : int, optional
        Fewer repetitions for real datasets (applies when ``--reps`` is not given).
    seed : int
        The base seed.
    params : mapping
        The task's own parameters (query sizes, thresholds, sampler settings).
    """

    datasets: tuple[str, ...]
    epsilons: tuple[float, ...]
    reps: int
    methods: tuple[str, ...] | None = None
    extra_methods: tuple[str, ...] = ()
    oracles: tuple[str, ...] = ("OUE",)
    real_reps: int | None = None
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Freeze ``params``."""
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class Config:
    """One experiment's grid and options: everything a run depends on."""

    experiment: str
    datasets: tuple[str, ...]
    epsilons: tuple[float, ...]
    reps: int
    methods: tuple[str, ...]
    oracles: tuple[str, ...] = ("OUE",)
    seed: int = 0
    mode: str = "default"
    real_reps: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """One cell of the grid: (oracle, dataset, eps, repetition) of a configuration."""

    config: Config
    oracle: str
    dataset: str
    epsilon: float
    rep: int

    @property
    def experiment(self) -> str:
        """The experiment's name."""
        return self.config.experiment

    @property
    def methods(self) -> tuple[str, ...]:
        """Method specs applied to every measurement."""
        return self.config.methods

    @property
    def params(self) -> dict[str, Any]:
        """The experiment's own parameters."""
        return self.config.params

    @property
    def seed(self) -> int:
        """The configuration's base seed."""
        return self.config.seed

    @property
    def key(self) -> str:
        """The part's file name (without suffix): unique within a configuration."""
        safe = re.sub(r"[^\w.\-=]+", "_", self.dataset)
        return f"{safe}__{self.oracle}__eps{self.epsilon:g}__rep{self.rep:04d}"


TaskFunction = Callable[[Task, Any, np.random.SeedSequence], list[Row]]
PlotFunction = Callable[[pd.DataFrame, Path], pd.DataFrame]


def grid_seed(task: Task) -> np.random.SeedSequence:
    """``SeedSequence([seed, crc32("experiment|dataset|eps|rep")])``: the grid's rule.

    Parameters
    ----------
    task : Task
        The cell; its seed depends on the cell only, not on the rest of the grid.
    """
    tag = f"{task.experiment}|{task.dataset}|{task.epsilon!r}|{task.rep}"
    return np.random.SeedSequence([task.seed, zlib.crc32(tag.encode())])


def rep_seed(task: Task) -> np.random.SeedSequence:
    """``SeedSequence([seed, rep])``, i.e. ``default_rng([seed, rep])``.

    Parameters
    ----------
    task : Task
        The cell; only its base seed and repetition enter.
    """
    return np.random.SeedSequence([task.seed, task.rep])


def spawn_seed(task: Task) -> np.random.SeedSequence:
    """Child ``rep`` of ``SeedSequence(seed)``, i.e. ``SeedSequence(seed).spawn(reps)[rep]``.

    Parameters
    ----------
    task : Task
        The cell; only its base seed and repetition enter.
    """
    return np.random.SeedSequence(task.seed, spawn_key=(task.rep,))


@dataclass(frozen=True)
class Experiment:
    """A study: its task, its grids and its plot. Declare one per module of experiments/.

    Parameters
    ----------
    name : str
        The module's name; ``bayesldp experiment NAME`` runs it.
    description : str
        One line for ``bayesldp experiment list`` and ``--help``.
    figure : str
        What it reproduces, e.g. ``"long paper Fig. 3-4"``.
    task : callable
        ``task(task, dataset, seq) -> rows``: simulate, post-process, measure one cell.
        ``dataset`` is the loaded :class:`~bayesldp.datasets.Dataset`, ``seq`` the
        task's :class:`~numpy.random.SeedSequence`; rows are
        ``(method, metric, param, value, seconds, warning)``.
    grid : Grid
        The default grid (the papers' setting).
    quick : Grid
        A tiny grid (seconds) for checks: ``--quick``.
    plot : callable
        ``plot(results, folder) -> summary``: draws ``folder/figure*.png`` from the saved
        results only and returns the summary table (written as ``summary.csv``).
    seed : callable
        ``seed(task) -> SeedSequence``; :func:`grid_seed` unless the study's original
        script seeded otherwise (:func:`rep_seed`, :func:`spawn_seed`).
    group : str
        ``"papers"`` for the papers' figures (what ``bayesldp experiment all`` runs),
        else a label such as ``"demo"``, ``"bayes"`` or ``"convex"``.
    options : mapping of str to str
        Parameters (keys of ``grid.params``) settable on the command line, with help.
    independent_tasks : bool
        Whether a task's rows depend on its own cell only. ``False`` when a task's random
        stream depends on the whole grid (a sequential stream): then any change of the
        grid is a new configuration and no part is reused.
    check : callable, optional
        ``check(config)`` raises ValueError for configurations the task cannot run.
    """

    name: str
    description: str
    figure: str
    task: TaskFunction
    grid: Grid
    quick: Grid
    plot: PlotFunction
    seed: Callable[[Task], np.random.SeedSequence] = grid_seed
    group: str = "papers"
    options: Mapping[str, str] = field(default_factory=dict)
    independent_tasks: bool = True
    check: Callable[[Config], None] | None = None

    def __post_init__(self) -> None:
        """Check the name and the options, and freeze ``options``."""
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"name must be a lower-case identifier, got {self.name!r}")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        for key in self.options:
            if key not in self.grid.params:
                raise ValueError(f"option {key!r} of {self.name} is not in its grid's params")

    def grid_for(self, mode: str) -> Grid:
        """Return the grid of ``mode`` (``"default"`` or ``"quick"``).

        Parameters
        ----------
        mode : {"default", "quick"}
            ``"quick"`` for :attr:`quick`, ``"default"`` for :attr:`grid`.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        return self.quick if mode == "quick" else self.grid


@lru_cache(maxsize=4)
def find_experiments(package: str = EXPERIMENTS_PACKAGE) -> Mapping[str, Experiment]:
    """Every experiment of ``package``: its modules that define ``EXPERIMENT``.

    Modules without one (reports over saved results, examples) are skipped. An
    experiment is named after its module. Cached per package.

    Parameters
    ----------
    package : str, default ``EXPERIMENTS_PACKAGE``
        Dotted name of the package to search (modules starting with ``_`` are skipped).

    Returns
    -------
    mapping of str to Experiment
        Read-only, by name, in module-name order.

    Raises
    ------
    ValueError
        A module's experiment is not named after the module.
    """
    pkg = importlib.import_module(package)
    found: dict[str, Experiment] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        experiment = getattr(module, "EXPERIMENT", None)
        if not isinstance(experiment, Experiment):
            continue
        if experiment.name != info.name:
            raise ValueError(
                f"{package}.{info.name} declares experiment {experiment.name!r}: "
                "an experiment is named after its module"
            )
        found[experiment.name] = experiment
    return MappingProxyType(found)


def get_experiment(name: str) -> Experiment:
    """Return the experiment called ``name``; ValueError listing them if there is none.

    Parameters
    ----------
    name : str
        An experiment's name (its module's name in :data:`EXPERIMENTS_PACKAGE`).
    """
    experiments = find_experiments()
    if name not in experiments:
        raise ValueError(f"unknown experiment {name!r}; choose one of {', '.join(experiments)}")
    return experiments[name]


# ---------------------------------------------------------------------------
# methods, datasets, oracles


def default_methods(bayes: bool = False) -> tuple[str, ...]:
    """Return the registry's default methods; plus :func:`bayes_methods` if asked.

    Parameters
    ----------
    bayes : bool
        Add the Bayesian methods of :func:`bayes_methods`.

    Returns
    -------
    tuple of str
        Method names in registration order.
    """
    from bayesldp.methods.registry import method_names

    out = method_names(default=True)
    if bayes:
        out += bayes_methods()
    return out


def bayes_methods() -> tuple[str, ...]:
    """Return the Bayesian methods ``--bayes`` adds: those that take seconds, not minutes.

    A method declared with ``MethodSpec.minutes`` (``bayes-dirichlet``, ``bayes-hier``:
    minutes per fit at d = 1024) is left out; name it (``--methods``) to run it.
    """
    from bayesldp.methods.registry import method_names

    return method_names(bayesian=True, minutes=False)


def check_methods(specs: Iterable[str]) -> tuple[str, ...]:
    """Check every method spec (``name`` or ``name@backend``) against the registry.

    Parameters
    ----------
    specs : iterable of str
        Method specs; at least one, none given twice.

    Returns
    -------
    tuple of str
        ``specs``, unchanged.

    Raises
    ------
    ValueError
        No spec, an unknown method or backend, or a spec given twice.
    """
    from bayesldp.methods.registry import parse_method

    specs = tuple(specs)
    if not specs:
        raise ValueError("methods: give at least one method")
    for spec in specs:
        try:
            parse_method(spec)
        except ValueError as err:
            raise ValueError(f"methods: {err}") from None
    if len(set(specs)) != len(specs):
        raise ValueError(f"methods: a method is given twice in {','.join(specs)}")
    return specs


def method_seed(seq: np.random.SeedSequence, method: str) -> np.random.SeedSequence:
    """Return the seed of ``method``'s own random stream within a task.

    ``SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (METHOD_STREAM,
    crc32(method)))``: derived from the task's sequence without spawning from it, so the
    task's other streams (simulation, query sets: ``seq.spawn`` children) are the same
    whichever methods run, and keyed by the method's name rather than its position, so
    adding a method changes no other method's numbers.

    Parameters
    ----------
    seq : numpy.random.SeedSequence
        The task's sequence (left unchanged).
    method : str
        The method spec, e.g. ``"ibu"`` or ``"mle@cvxpy"``.
    """
    key = (*seq.spawn_key, METHOD_STREAM, zlib.crc32(method.encode()))
    return np.random.SeedSequence(seq.entropy, spawn_key=key, pool_size=seq.pool_size)


def apply_methods(
    m,
    specs: Iterable[str],
    seq: np.random.SeedSequence,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    true_counts: np.ndarray | None = None,
) -> tuple[dict, dict, dict]:
    """Post-process ``m`` with each method spec.

    Parameters
    ----------
    m : Measurement
        The oracle's output.
    specs : iterable of str
        Method specs (``name`` or ``name@backend``).
    seq : numpy.random.SeedSequence
        The task's sequence: a method that accepts ``rng`` gets
        ``default_rng(method_seed(seq, spec))``.
    options : mapping, optional
        Options per spec, e.g. ``{"ibu": {"max_iter": 10**5}}``.
    true_counts : numpy.ndarray, optional
        The dataset's true counts, given to reference methods that need the truth
        (``MethodSpec.needs_truth``, e.g. ``oracle-bayes``); such a method without them
        is a ValueError.

    Returns
    -------
    estimates, seconds, warnings : dict
        Per spec: the Estimate, the seconds it took, and the text of the warnings it
        raised (``"; "``-joined, each cut at 120 characters; empty if none).
    """
    from bayesldp.methods.registry import parse_method, postprocess

    estimates, seconds, notes = {}, {}, {}
    for spec in specs:
        method, backend = parse_method(spec)
        opts = dict((options or {}).get(spec, {}))
        if "rng" not in opts and method.accepts("rng", backend):
            opts["rng"] = np.random.default_rng(method_seed(seq, spec))
        if method.needs_truth:
            if true_counts is None:
                raise ValueError(f"method {spec!r} is a reference that needs the true counts")
            opts.setdefault("true_counts", true_counts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            estimates[spec] = postprocess(m, spec, **opts)
            seconds[spec] = time.perf_counter() - t0
        notes[spec] = "; ".join(sorted({str(w.message)[:120] for w in caught}))
    return estimates, seconds, notes


@lru_cache(maxsize=16)
def load_dataset(spec: str):
    """Load a dataset by spec (cached per process, so each worker loads it once).

    Synthetic datasets are drawn with their builders' fixed default seed, so the true
    data are the same in every repetition, as in the papers.

    Parameters
    ----------
    spec : str
        A dataset spec, as :func:`bayesldp.datasets.get_dataset` reads it.

    Returns
    -------
    Dataset
    """
    from bayesldp.datasets import get_dataset

    return get_dataset(spec)


def is_real(dataset: str) -> bool:
    """Whether a dataset spec names real (not synthetic) data.

    Parameters
    ----------
    dataset : str
        A dataset spec, as :func:`bayesldp.datasets.parse_dataset` reads it.
    """
    from bayesldp.datasets import DATASETS, parse_dataset

    return DATASETS[parse_dataset(dataset)[0]].kind != "synthetic"


def simulate(dataset, oracle: str, epsilon: float, rng: np.random.Generator):
    """One round of the oracle on the dataset's true counts.

    Parameters
    ----------
    dataset : Dataset
        Gives the true ``counts`` and the domain size ``d``.
    oracle : str
        Oracle name (:func:`bayesldp.oracles.make_oracle`).
    epsilon : float
        Privacy budget.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    Measurement
    """
    from bayesldp.oracles import make_oracle

    return make_oracle(oracle, epsilon, dataset.d).simulate(dataset.counts, rng)


def _dataset_error(spec: str, err: BaseException) -> str:
    if isinstance(err, ImportError):
        from bayesldp.datasets import DATASETS, parse_dataset

        extra = DATASETS[parse_dataset(spec)[0]].extra
        hint = f" (pip install 'bayesldp[{extra}]')" if extra else ""
        return f"dataset {spec!r} needs a package that is not installed{hint}"
    text = str(err)
    return text if text.startswith("dataset") else f"dataset {spec!r}: {text}"


# ---------------------------------------------------------------------------
# configuration


def build_config(
    experiment: Experiment,
    mode: str = "default",
    *,
    methods: Sequence[str] | None = None,
    bayes: bool = False,
    datasets: Sequence[str] | None = None,
    epsilons: Sequence[float] | None = None,
    reps: int | None = None,
    oracles: Sequence[str] | None = None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
) -> Config:
    """Return the checked configuration of ``experiment`` in ``mode`` with optional overrides.

    Parameters
    ----------
    experiment : Experiment
        What to run.
    mode : {"default", "quick"}
        The papers' grid or the tiny one.
    methods, datasets, epsilons, reps, oracles, seed, params
        Overrides of the grid (``params`` updates the grid's parameters).
    bayes : bool
        Add the Bayesian methods of :func:`bayes_methods` (not those that take minutes
        per fit; ``methods`` may name any method).

    Returns
    -------
    Config

    Raises
    ------
    ValueError
        Anything the run would fail on: an unknown method, oracle or parameter, a
        dataset that does not load (given explicitly), eps <= 0, reps < 1. Real datasets
        of the grid whose packages are missing are left out (logged); compare
        ``config.datasets`` with the grid's to tell the user.
    """
    from bayesldp.datasets import parse_dataset
    from bayesldp.oracles import make_oracle

    grid = experiment.grid_for(mode)
    chosen = (
        tuple(methods)
        if methods
        else (grid.methods if grid.methods is not None else default_methods())
        + tuple(grid.extra_methods)
    )
    if bayes:
        chosen += tuple(m for m in bayes_methods() if m not in chosen)
    chosen = check_methods(chosen)
    if oracles:
        oracles = tuple(str(o).upper() for o in oracles)
    else:
        oracles = tuple(grid.oracles)
    for o in oracles:
        make_oracle(o, 1.0, 2)  # ValueError naming the choices
    eps = tuple(check_epsilon(e) for e in (epsilons or grid.epsilons))
    n_reps = check_int(reps, "reps", minimum=1) if reps is not None else grid.reps
    seed = grid.seed if seed is None else check_int(seed, "seed", minimum=0)
    merged = dict(grid.params)
    for key, value in (params or {}).items():
        if key not in merged:
            raise ValueError(f"{experiment.name} has no parameter {key!r}")
        merged[key] = value
    if datasets:
        ds = tuple(datasets)
        for spec in ds:
            try:
                parse_dataset(spec)
                load_dataset(spec)
            except (ValueError, ImportError, OSError) as err:
                raise ValueError(_dataset_error(spec, err)) from None
    else:
        found = []
        for spec in grid.datasets:
            try:
                load_dataset(spec)
            except ImportError as err:
                logger.info("%s", _dataset_error(spec, err))
                continue
            found.append(spec)
        ds = tuple(found)
        if not ds:
            raise ValueError(f"{experiment.name}: none of its datasets can be loaded here")
    real_reps = None
    if reps is None and grid.real_reps is not None and grid.real_reps < n_reps:
        if any(is_real(d) for d in ds):
            real_reps = grid.real_reps
    config = Config(
        experiment=experiment.name,
        datasets=ds,
        epsilons=eps,
        reps=n_reps,
        methods=chosen,
        oracles=oracles,
        seed=seed,
        mode=mode,
        real_reps=real_reps,
        params=merged,
    )
    if experiment.check is not None:
        experiment.check(config)
    return config


def config_digest(experiment: Experiment, config: Config) -> str:
    """Hash of everything that changes a task's rows.

    With independent tasks the grid's extent (datasets, eps, oracles, repetitions) is
    left out: a part is keyed by its cell and its seed depends on the cell only, so a
    grid can grow and keep the parts it has.

    Parameters
    ----------
    experiment : Experiment
        Decides, through ``independent_tasks``, whether the grid's extent enters.
    config : Config
        The run's configuration (its ``mode`` never enters).

    Returns
    -------
    str
        The first 16 hexadecimal digits of a SHA-256.
    """
    data = asdict(config)
    data.pop("mode")
    if experiment.independent_tasks:
        for key in ("datasets", "epsilons", "oracles", "reps", "real_reps"):
            data.pop(key)
    blob = json.dumps(data, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def reps_for(config: Config, dataset: str) -> int:
    """Repetitions of one dataset: ``config.real_reps`` caps the real ones.

    Parameters
    ----------
    config : Config
        Gives ``reps`` and ``real_reps``.
    dataset : str
        A dataset spec.
    """
    if config.real_reps and is_real(dataset):
        return min(config.reps, config.real_reps)
    return config.reps


def make_tasks(config: Config) -> list[Task]:
    """Return the grid's tasks in a fixed order (oracle, dataset, eps, repetition).

    Parameters
    ----------
    config : Config
        The grid (real datasets get at most ``real_reps`` repetitions).
    """
    return [
        Task(config, oracle, ds, float(eps), rep)
        for oracle in config.oracles
        for ds in config.datasets
        for eps in config.epsilons
        for rep in range(reps_for(config, ds))
    ]


# ---------------------------------------------------------------------------
# one task


def execute(experiment: Experiment, task: Task) -> pd.DataFrame:
    """Run one task (in any process): its tidy rows with the cell's columns.

    Parameters
    ----------
    experiment : Experiment
        Whose ``task`` and ``seed`` are used.
    task : Task
        The cell to run.

    Returns
    -------
    pandas.DataFrame
        The task's rows, with the cell, the seed's entropy, the seconds taken and the
        package version as columns.
    """
    dataset = load_dataset(task.dataset)
    seq = experiment.seed(task)
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


# ---------------------------------------------------------------------------
# parts: atomic, verified


def _part_paths(folder: Path, key: str) -> tuple[Path, Path]:
    parts = Path(folder) / "parts"
    return parts / f"{key}.csv", parts / f"{key}.json"


def write_part(folder: Path, key: str, frame: pd.DataFrame) -> None:
    """Write a task's rows atomically, then its record (row count, size, SHA-256).

    Parameters
    ----------
    folder : pathlib.Path
        The run's folder (the part goes under ``parts/``).
    key : str
        The task's :attr:`Task.key`.
    frame : pandas.DataFrame
        The task's rows, written as CSV.
    """
    data = frame.to_csv(index=False).encode()
    csv_path, record_path = _part_paths(folder, key)
    with atomic_open(csv_path, "wb") as fh:
        fh.write(data)
    record = {"rows": len(frame), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    write_json(record_path, record)


def part_is_valid(folder: Path, key: str) -> bool:
    """Whether part ``key`` exists and matches its record (size and SHA-256).

    Parameters
    ----------
    folder : pathlib.Path
        The run's folder.
    key : str
        The task's :attr:`Task.key`.
    """
    csv_path, record_path = _part_paths(folder, key)
    try:
        record = json.loads(record_path.read_text())
        data = csv_path.read_bytes()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("bytes") == len(data)
        and record.get("sha256") == hashlib.sha256(data).hexdigest()
    )


def _read_part(folder: Path, key: str) -> pd.DataFrame:
    csv_path, record_path = _part_paths(folder, key)
    frame = pd.read_csv(csv_path, keep_default_na=False, na_values=[""], low_memory=False)
    rows = json.loads(record_path.read_text())["rows"]
    if len(frame) != rows:  # the checksum matched, so this is a bug, not a damaged file
        raise ValueError(f"part {csv_path} has {len(frame)} rows, its record says {rows}")
    return frame


# ---------------------------------------------------------------------------
# preparing, combining, plotting

STAMP = "config.json"  # written by prepare: the configuration a folder's parts belong to


def _check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ValueError(f"out: cannot write to {folder}: {reason}") from None


def _read_stamp(folder: Path) -> dict | None:
    stamp = Path(folder) / STAMP
    try:
        return json.loads(stamp.read_text()) if stamp.exists() else None
    except ValueError:
        return None


def saved_config(folder: Path) -> Config | None:
    """Return the configuration ``folder`` was last run with (its ``config.json``), or None.

    None also when the stamp was written by another version of the runner.

    Parameters
    ----------
    folder : pathlib.Path
        The run's folder.
    """
    stamp = _read_stamp(folder)
    if stamp is None:
        return None
    try:
        data = dict(stamp["config"])
        for key in ("datasets", "epsilons", "methods", "oracles"):
            data[key] = tuple(data[key])
        return Config(**data)
    except (KeyError, TypeError):
        return None  # written by another version of the runner


def prepare(
    experiment: Experiment, config: Config, folder: Path, restart: bool = False
) -> list[Task]:
    """Create ``folder`` (checking that it is writable); return the tasks still to run.

    A task is done when its part matches its record; a missing, truncated or otherwise
    damaged part is run again (logged). A folder made with another configuration is
    refused (ValueError) unless ``restart``, which removes its parts.

    Parameters
    ----------
    experiment : Experiment
        The experiment run.
    config : Config
        Its configuration; recorded in ``folder/config.json``.
    folder : pathlib.Path
        The run's folder.
    restart : bool, default False
        Remove the parts of another configuration instead of refusing the folder.

    Returns
    -------
    list of Task
        In :func:`make_tasks` order.
    """
    folder = Path(folder)
    _check_writable(folder)
    parts = folder / "parts"
    parts.mkdir(exist_ok=True)
    digest = config_digest(experiment, config)
    stamp = _read_stamp(folder)
    if stamp is not None and stamp.get("digest") != digest:
        if not restart:
            raise ValueError(
                f"out: {folder} holds results of another configuration of {config.experiment}; "
                "use another --out or --restart"
            )
        for f in parts.iterdir():
            if f.suffix in (".csv", ".json"):
                f.unlink()
    write_json(folder / STAMP, {"digest": digest, "config": asdict(config)})
    todo = []
    for task in make_tasks(config):
        if part_is_valid(folder, task.key):
            continue
        if any(p.exists() for p in _part_paths(folder, task.key)):
            logger.warning("part %s is damaged or incomplete: running it again", task.key)
        todo.append(task)
    return todo


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "bayesldp": __version__}
    for pkg in ("numpy", "scipy", "pandas", "dask", "distributed", "cvxpy", "pymc", "matplotlib"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def combine(
    experiment: Experiment, config: Config, folder: Path, elapsed: float | None = None
) -> pd.DataFrame:
    """Join the valid parts of ``config`` into ``results.csv``; write ``metadata.json``.

    Parts that are missing (a run still going or stopped) are left out and counted in
    the metadata (``tasks`` against ``tasks_done``).

    Parameters
    ----------
    experiment : Experiment
        The experiment run.
    config : Config
        Its configuration; decides which parts belong to it.
    folder : pathlib.Path
        The run's folder.
    elapsed : float, optional
        Wall seconds of the last run, recorded in the metadata.

    Returns
    -------
    pandas.DataFrame
        The joined results, in the order of the parts' names.

    Raises
    ------
    ValueError
        No part of this configuration is valid.
    """
    folder = Path(folder)
    tasks = make_tasks(config)
    # in the order of the parts' names (dataset, oracle, eps, repetition), as the first
    # runner combined them: figures list their rows in the order the rows come
    done = sorted((t for t in tasks if part_is_valid(folder, t.key)), key=lambda t: t.key)
    if not done:
        raise ValueError(f"out: no results of this configuration under {folder}")
    results = pd.concat([_read_part(folder, t.key) for t in done], ignore_index=True)
    write_csv(folder / "results.csv", results)
    seed_doc = (experiment.seed.__doc__ or experiment.seed.__name__).strip().splitlines()[0]
    meta = {
        "experiment": experiment.name,
        "description": experiment.description,
        "figure": experiment.figure,
        "config": asdict(config),
        "digest": config_digest(experiment, config),
        "tasks": len(tasks),
        "tasks_done": len(done),
        "versions": _versions(),
        "seeding": seed_doc,
        "method_seeding": "methods that accept rng get default_rng(SeedSequence(entropy, "
        f"spawn_key=task spawn_key + ({METHOD_STREAM}, crc32(method))))",
        "datasets": {ds: str(load_dataset(ds)) for ds in config.datasets},
        "wall_seconds_last_run": elapsed,
    }
    write_json(folder / "metadata.json", meta)
    return results


def plot(experiment: Experiment, folder: Path) -> pd.DataFrame:
    """Draw ``experiment``'s figures from ``folder/results.csv``; write ``summary.csv``.

    Parameters
    ----------
    experiment : Experiment
        Whose ``plot`` draws the figures.
    folder : pathlib.Path
        The run's folder.

    Returns
    -------
    pandas.DataFrame
        The summary table.
    """
    folder = Path(folder)
    results = pd.read_csv(
        folder / "results.csv", keep_default_na=False, na_values=[""], low_memory=False
    )
    summary = experiment.plot(results, folder)
    write_csv(folder / "summary.csv", summary)
    return summary


# ---------------------------------------------------------------------------
# executing: in this process or on Dask


def dask_available() -> bool:
    """Whether dask.distributed can be imported (the ``dask`` extra)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def make_client(scheduler: str | None = None, n_workers: int = 2, timeout: float = 5.0):
    """Start a Dask client: a LocalCluster when ``scheduler`` is None, else connect to it.

    Parameters
    ----------
    scheduler : str, optional
        A scheduler address; ``"synchronous"`` returns None (tasks run in this process).
    n_workers : int
        Single-threaded worker processes of the LocalCluster.
    timeout : float
        Seconds to wait for a scheduler at ``scheduler``.

    Raises
    ------
    ValueError
        ``n_workers < 1``, dask not installed, or a scheduler that cannot be reached.
    """
    if scheduler == "synchronous":
        return None
    n_workers = check_int(n_workers, "workers", minimum=1)
    if not dask_available():
        raise ValueError("dask is not installed: pip install 'bayesldp[dask]', or use --no-dask")
    from dask.distributed import Client, LocalCluster

    if not logger.isEnabledFor(logging.DEBUG):
        # distributed logs every scheduler/worker start and stop at INFO
        logging.getLogger("distributed").setLevel(logging.WARNING)
    if scheduler:
        try:
            return Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ValueError(
                f"scheduler: cannot connect to {scheduler} within {timeout:g} s ({reason})"
            ) from None
    import dask

    # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in workers, which makes glibc
    # return freed memory to the OS at once; the methods' large temporaries then
    # page-fault on every call and tasks run ~4x slower (measured). Keep glibc's default.
    # Worker processes are started with SIGINT ignored (the disposition survives their
    # exec, and Python keeps it): Ctrl-C in a terminal reaches the whole process group,
    # and this process, not every worker, should handle it (the workers are stopped when
    # the cluster closes), so a stopped run does not print a traceback per worker.
    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}),
        _sigint_ignored(),
    ):
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            # the workers' own warnings (e.g. a task cancelled by Ctrl-C) only with -v
            silence_logs=logging.WARNING if logger.isEnabledFor(logging.DEBUG) else logging.ERROR,
        )
    return Client(cluster)


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore SIGINT in this block (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def close_client(client, own_cluster: bool = True) -> None:
    """Close a client from :func:`make_client` (and its LocalCluster if it made one).

    Parameters
    ----------
    client : dask.distributed.Client or None
        The client; None (the synchronous scheduler) does nothing.
    own_cluster : bool, default True
        Close the client's cluster too (False when connected to an outside scheduler).
    """
    if client is None:
        return
    cluster = client.cluster
    # a worker slow to stop (a busy machine) is killed with a warning: not the user's concern
    nanny = logging.getLogger("distributed.nanny")
    level = nanny.level
    if not logger.isEnabledFor(logging.DEBUG):
        nanny.setLevel(logging.ERROR)
    try:
        client.close()
        if own_cluster and cluster is not None:
            cluster.close()
    finally:
        nanny.setLevel(level)


def run_tasks(
    jobs: Sequence[tuple[Experiment, Path, Task]],
    client=None,
    progress: Callable[[int], Any] | None = None,
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

    Returns
    -------
    int
        Tasks run. An exception in a task (or Ctrl-C) stops the run; the parts written
        so far stay, so running the same jobs again resumes.
    """
    if client is None:
        for experiment, folder, task in jobs:
            write_part(folder, task.key, execute(experiment, task))
            if progress:
                progress(1)
        return len(jobs)
    from dask.distributed import as_completed

    futures = client.map(execute, [e for e, _, _ in jobs], [t for _, _, t in jobs], pure=False)
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
    client=None,
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
    """
    folder = Path(folder)
    t0 = time.perf_counter()
    todo = prepare(experiment, config, folder, restart=restart)
    logger.info("%s: %d tasks to run", config.experiment, len(todo))
    ran = run_tasks([(experiment, folder, t) for t in todo], client=client, progress=progress)
    elapsed = time.perf_counter() - t0
    results = combine(experiment, config, folder, elapsed=elapsed)
    summary = plot(experiment, folder) if draw else None
    return RunResult(
        experiment.name, folder, len(make_tasks(config)), ran, elapsed, results, summary
    )


# ---------------------------------------------------------------------------
# helpers for task functions


def simulate_and_apply(task: Task, dataset, seq: np.random.SeedSequence):
    """Simulate the task's oracle once (with ``seq``'s first child) and apply every method.

    Returns ``(estimates, seconds, warnings)`` as :func:`apply_methods` does.

    Parameters
    ----------
    task : Task
        Gives the oracle, epsilon and methods.
    dataset : Dataset
        The loaded dataset; its true counts also go to methods that need them.
    seq : numpy.random.SeedSequence
        The task's sequence; the simulation uses the next child it spawns (the first,
        when nothing was spawned from it before).
    """
    rng = np.random.default_rng(seq.spawn(1)[0])
    m = simulate(dataset, task.oracle, task.epsilon, rng)
    return apply_methods(m, task.methods, seq, true_counts=dataset.counts)


def method_rows(
    metric: str, param: float, values: Mapping[str, float], seconds: Mapping, notes: Mapping
) -> list[Row]:
    """Rows ``(method, metric, param, value, seconds, warning)``, one per method of ``values``.

    Parameters
    ----------
    metric : str
        The metric's name.
    param : float
        The metric's parameter (e.g. a set size or ``k``; NaN when it has none).
    values : mapping of str to float
        The metric's value per method.
    seconds, notes : mapping
        Per method: the seconds it took and its warnings' text (as
        :func:`apply_methods` returns them).
    """
    return [(m, metric, param, float(v), seconds[m], notes[m]) for m, v in values.items()]


def warnings_by_method(results: pd.DataFrame) -> pd.DataFrame:
    """Per method that warned: in how many of its tasks, and the distinct messages.

    Parameters
    ----------
    results : pandas.DataFrame
        Tidy rows as :func:`combine` returns them (``method``, ``warning`` and the cell's
        columns).

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``tasks_warned``, ``tasks`` and ``messages`` (``"; "``-joined).
    """
    cells = [c for c in ("oracle", "dataset", "epsilon", "rep") if c in results]
    rows = results.drop_duplicates([*cells, "method"])
    tasks = rows.groupby("method", sort=False).size()
    text = results["warning"]
    warned = results[text.notna() & (text != "")].drop_duplicates([*cells, "method", "warning"])
    out = []
    for method, g in warned.groupby("method", sort=False):
        messages = "; ".join(dict.fromkeys("; ".join(g["warning"]).split("; ")))
        out.append(
            {
                "method": method,
                "tasks_warned": len(g.drop_duplicates(cells)),
                "tasks": int(tasks[method]),
                "messages": messages,
            }
        )
    return pd.DataFrame(out, columns=["method", "tasks_warned", "tasks", "messages"])
