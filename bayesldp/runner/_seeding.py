"""Seeding: a task's :class:`~numpy.random.SeedSequence`, and each method's own stream.

A task's rows depend only on its sequence, never on scheduling. Three rules make a
task's sequence from the grid's base seed (an :class:`~bayesldp.runner.Experiment`
names one by its key in :data:`SEEDINGS`); every method that accepts ``rng`` gets a
Generator from :func:`method_seed`, a sequence derived from the task's own by its
spawn key, so adding or removing a method changes no other random stream of the task.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Protocol

import numpy as np

#: The first element of a method's spawn key (see :func:`method_seed`): far above the
#: number of children any task spawns, so no ``seq.spawn`` child ever shares it.
METHOD_STREAM = 0x6D657468  # "meth"


class Cell(Protocol):
    """What a seeding rule reads of a task (:class:`~bayesldp.runner.Task` has it)."""

    @property
    def experiment(self) -> str:
        """The experiment's name."""
        ...

    @property
    def dataset(self) -> str:
        """The dataset spec."""
        ...

    @property
    def epsilon(self) -> float:
        """The privacy budget."""
        ...

    @property
    def rep(self) -> int:
        """The repetition."""
        ...

    @property
    def seed(self) -> int:
        """The base seed."""
        ...


def grid_seed(task: Cell) -> np.random.SeedSequence:
    """``SeedSequence([seed, crc32("experiment|dataset|eps|rep")])``: the grid's rule.

    Parameters
    ----------
    task : Task
        The cell; its seed depends on the cell only, not on the rest of the grid.
    """
    tag = f"{task.experiment}|{task.dataset}|{task.epsilon!r}|{task.rep}"
    return np.random.SeedSequence([task.seed, zlib.crc32(tag.encode())])


def rep_seed(task: Cell) -> np.random.SeedSequence:
    """``SeedSequence([seed, rep])``, i.e. ``default_rng([seed, rep])``.

    Parameters
    ----------
    task : Task
        The cell; only its base seed and repetition enter.
    """
    return np.random.SeedSequence([task.seed, task.rep])


def spawn_seed(task: Cell) -> np.random.SeedSequence:
    """Child ``rep`` of ``SeedSequence(seed)``, i.e. ``SeedSequence(seed).spawn(reps)[rep]``.

    Parameters
    ----------
    task : Task
        The cell; only its base seed and repetition enter.
    """
    return np.random.SeedSequence(task.seed, spawn_key=(task.rep,))


#: The seeding rules by the name an Experiment gives (``Experiment(seed="rep")``).
SEEDINGS: dict[str, Callable[[Cell], np.random.SeedSequence]] = {
    "grid": grid_seed,
    "rep": rep_seed,
    "spawn": spawn_seed,
}


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
