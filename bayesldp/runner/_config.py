"""Configuring a run: an experiment's grid with the user's overrides, checked, and its tasks.

:func:`build_config` checks everything a run would fail on before any work starts;
:func:`make_tasks` expands the configuration into its cells in a fixed order, and
:func:`config_digest` hashes what changes a task's rows (so a folder's parts are reused
only for the configuration that made them).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from bayesldp._validation import check_epsilon, check_int
from bayesldp.runner._datasets import dataset_error, is_real, load_dataset
from bayesldp.runner._experiment import Config, Experiment, Task
from bayesldp.runner._methods import bayes_methods, check_methods, default_methods

logger = logging.getLogger(__name__)


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
        Overrides of the grid (``params`` updates the grid's parameters); None keeps
        the grid's. An empty sequence is an error, not the grid's default.
    bayes : bool
        Add the registry's Bayesian methods that take seconds per fit (not those that
        take minutes; ``methods`` may name any method).

    Returns
    -------
    Config

    Raises
    ------
    ValueError
        Anything the run would fail on: an unknown method, oracle or parameter, a
        dataset that does not load (given explicitly), eps <= 0, reps < 1, an empty
        list of methods, datasets, epsilons or oracles. Real datasets
        of the grid whose packages are missing are left out (logged); compare
        ``config.datasets`` with the grid's to tell the user.
    """
    from bayesldp.oracles import make_oracle

    grid = experiment.grid_for(mode)
    if methods is not None:
        chosen = tuple(methods)
    else:
        defaults = grid.methods if grid.methods is not None else default_methods()
        chosen = tuple(defaults) + tuple(grid.extra_methods)
    if bayes:
        chosen += tuple(m for m in bayes_methods() if m not in chosen)
    chosen = check_methods(chosen)
    oracles = tuple(grid.oracles) if oracles is None else tuple(str(o).upper() for o in oracles)
    _nonempty(oracles, "oracle")
    for o in oracles:
        make_oracle(o, 1.0, 2)  # ValueError naming the choices
    eps = tuple(check_epsilon(e) for e in (grid.epsilons if epsilons is None else epsilons))
    _nonempty(eps, "epsilon")
    n_reps = check_int(reps, "reps", minimum=1) if reps is not None else grid.reps
    seed = grid.seed if seed is None else check_int(seed, "seed", minimum=0)
    merged = dict(grid.params)
    for key, value in (params or {}).items():
        if key not in merged:
            raise ValueError(f"{experiment.name} has no parameter {key!r}")
        merged[key] = value
    if datasets is not None:
        ds = tuple(datasets)
        _nonempty(ds, "dataset")
        for spec in ds:
            try:
                load_dataset(spec)
            except (ValueError, ImportError, OSError) as err:
                raise ValueError(dataset_error(spec, err)) from None
    else:
        found = []
        for spec in grid.datasets:
            try:
                load_dataset(spec)
            except ImportError as err:
                logger.info("%s", dataset_error(spec, err))
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


def _nonempty(values: tuple, name: str) -> None:
    """ValueError ``NAMEs: give at least one NAME`` for an empty override."""
    if not values:
        raise ValueError(f"{name}s: give at least one {name}")


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
