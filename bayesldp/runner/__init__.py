"""The experiment runner: one machinery for every study in ``bayesldp.experiments``.

An :class:`Experiment` is declared once, in one module of the ``bayesldp.experiments``
package (the repository's ``experiments/`` folder), as ``EXPERIMENT = Experiment(...)``:
its task (the rows of one cell, built with :func:`simulate_and_apply`,
:func:`apply_methods` and :func:`method_rows`), its grids (the default one, which is the
papers', and a tiny ``quick`` one) and its plot (:mod:`bayesldp.plotting`). The runner
does the rest:

1. :func:`build_config` turns an experiment and the user's overrides into a checked
   :class:`Config`, whose cells are :class:`Task` objects (oracle x dataset x eps x
   repetition), each with its own :class:`numpy.random.SeedSequence`;
2. :func:`run` creates ``OUT/NAME/``, runs the tasks whose part is missing or damaged
   (in this process or on a Dask client), writes each one's rows atomically to a
   verified part, joins them into ``results.csv`` with ``metadata.json``, and draws the
   figures from ``results.csv`` only, with ``summary.csv``.

:func:`find_experiments` and :func:`get_experiment` find the declared experiments;
``bayesldp experiment NAME`` runs one from the command line. Nothing here prints:
progress goes to a callback, messages to :mod:`logging`, and results are returned.

Seeding. A task's rows depend only on its sequence (by default
``SeedSequence([seed, crc32("experiment|dataset|eps|rep")])``), never on scheduling.
Every method that accepts ``rng`` gets a Generator of its own, derived from the task's
sequence and keyed by the method's name, so adding or removing a method changes no
other random stream of the task.

The modules, one job each: ``_experiment`` (the declarations), ``_seeding``,
``_discovery``, ``_methods`` (methods in a task), ``_datasets`` (loading, cached),
``_config`` (overrides, checks, the cells), ``_parts`` (the run's folder, resuming),
``_dask`` (the cluster's lifecycle), ``_results`` (results.csv, figures, warnings)
and ``_run``.
"""

from bayesldp.runner._config import build_config
from bayesldp.runner._discovery import find_experiments, get_experiment
from bayesldp.runner._experiment import Config, Experiment, Grid, Row, Task
from bayesldp.runner._methods import apply_methods, method_rows, simulate_and_apply
from bayesldp.runner._run import run

__all__ = [
    "Config",
    "Experiment",
    "Grid",
    "Row",
    "Task",
    "apply_methods",
    "build_config",
    "find_experiments",
    "get_experiment",
    "method_rows",
    "run",
    "simulate_and_apply",
]
