"""What an experiment declares: :class:`Experiment`, its :class:`Grid`, and the cells.

An :class:`Experiment` names its task (the rows of one cell), its two grids (the papers'
and a tiny ``quick`` one) and its plot. :func:`~bayesldp.runner.build_config` turns one
grid and the user's overrides into a checked :class:`Config`, whose cells are
:class:`Task` objects; a task's rows are :data:`Row` tuples.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from bayesldp.runner._seeding import SEEDINGS

#: Grid modes: the papers' grid (``default``) and a tiny one for checks (``quick``).
MODES = ("default", "quick")

#: What a task returns per row: (method, metric, param, value, seconds, warning).
Row = tuple[str, str, float, float, float, str]
ROW_COLUMNS = ("method", "metric", "param", "value", "seconds", "warning")


@dataclass(frozen=True)
class Grid:
    """One mode's grid of an experiment.

    Parameters
    ----------
    datasets : tuple of str
        Dataset specs (as :func:`bayesldp.datasets.get_dataset` reads them); real ones
        whose packages are missing are skipped.
    epsilons : tuple of float
        Privacy budgets.
    reps : int
        Repetitions per (oracle, dataset, eps).
    methods : tuple of str, optional
        Method specs; by default the registry's default set.
    extra_methods : tuple of str
        Added to the default set (e.g. ``oue-zero`` for heavy hitters).
    oracles : tuple of str
        Frequency oracles.
    real_reps : int, optional
        Fewer repetitions for real datasets (applies when ``reps`` is not overridden).
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
    """One experiment's grid and options: everything a run depends on.

    Parameters
    ----------
    experiment : str
        The experiment's name.
    datasets, epsilons, reps, methods, oracles, seed, real_reps, params
        The grid, as :class:`Grid` describes them, after the user's overrides.
    mode : {"default", "quick"}
        The grid it started from.
    """

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
    """One cell of the grid: (oracle, dataset, eps, repetition) of a configuration.

    Parameters
    ----------
    config : Config
        The configuration the cell belongs to.
    oracle : str
        The frequency oracle.
    dataset : str
        The dataset spec.
    epsilon : float
        The privacy budget.
    rep : int
        The repetition, from 0.
    """

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

    def simulate(self, dataset: Any, rng: np.random.Generator) -> Any:
        """Run one round of the cell's oracle (at its eps) on the dataset's true counts.

        Parameters
        ----------
        dataset : Dataset
            Gives the true ``counts`` and the domain size ``d``.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        Measurement
        """
        from bayesldp.oracles import make_oracle

        return make_oracle(self.oracle, self.epsilon, dataset.d).simulate(dataset.counts, rng)


TaskFunction = Callable[[Task, Any, np.random.SeedSequence], list[Row]]
PlotFunction = Callable[[pd.DataFrame, Path], pd.DataFrame]
SeedFunction = Callable[[Task], np.random.SeedSequence]


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
        task's :class:`~numpy.random.SeedSequence`; rows are :data:`Row` tuples
        ``(method, metric, param, value, seconds, warning)``.
    grid : Grid
        The default grid (the papers' setting).
    quick : Grid
        A tiny grid (seconds) for checks: ``--quick``.
    plot : callable
        ``plot(results, folder) -> summary``: draws ``folder/figure*.png`` from the saved
        results only and returns the summary table (written as ``summary.csv``).
    seed : {"grid", "rep", "spawn"} or callable, default "grid"
        How a task's :class:`~numpy.random.SeedSequence` is made from the base seed:
        ``"grid"`` is ``SeedSequence([seed, crc32("experiment|dataset|eps|rep")])``,
        ``"rep"`` is ``SeedSequence([seed, rep])`` and ``"spawn"`` is child ``rep`` of
        ``SeedSequence(seed)``; a callable ``seed(task) -> SeedSequence`` (its
        docstring's first line describes it in the metadata) for any other rule.
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
    seed: str | SeedFunction = "grid"
    group: str = "papers"
    options: Mapping[str, str] = field(default_factory=dict)
    independent_tasks: bool = True
    check: Callable[[Config], None] | None = None

    def __post_init__(self) -> None:
        """Check the name, the seeding and the options; freeze ``options``."""
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"name must be a lower-case identifier, got {self.name!r}")
        if isinstance(self.seed, str):
            if self.seed not in SEEDINGS:
                raise ValueError(
                    f"seed must be one of {', '.join(SEEDINGS)} or a function, got {self.seed!r}"
                )
            object.__setattr__(self, "seed", SEEDINGS[self.seed])
        elif not callable(self.seed):
            raise ValueError(f"seed must be one of {', '.join(SEEDINGS)} or a function")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        for key in self.options:
            if key not in self.grid.params:
                raise ValueError(f"option {key!r} of {self.name} is not in its grid's params")

    def seed_sequence(self, task: Task) -> np.random.SeedSequence:
        """Return the :class:`~numpy.random.SeedSequence` of one of this experiment's cells.

        Parameters
        ----------
        task : Task
            The cell.
        """
        seed = self.seed if callable(self.seed) else SEEDINGS[self.seed]
        return seed(task)

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
