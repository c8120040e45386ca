"""Finding the experiments: the modules of ``bayesldp.experiments`` that declare one.

The package is imported here only, when an experiment is asked for: ``import bayesldp``
and the command line's other commands never load it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from bayesldp.runner._experiment import Experiment

#: The package whose modules declare the experiments (the repository's experiments/).
EXPERIMENTS_PACKAGE = "bayesldp.experiments"


@lru_cache(maxsize=4)
def find_experiments(package: str = EXPERIMENTS_PACKAGE) -> Mapping[str, Experiment]:
    """Every experiment of ``package``: its modules that define ``EXPERIMENT``.

    Modules without one (reports over saved results, examples) are skipped. An
    experiment is named after its module. Cached per package.

    Parameters
    ----------
    package : str, default ``"bayesldp.experiments"``
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
    """Return the experiment called ``name``, importing its module only.

    Parameters
    ----------
    name : str
        An experiment's name (its module's name in ``bayesldp.experiments``).

    Returns
    -------
    Experiment

    Raises
    ------
    ValueError
        No experiment has that name (the message lists them).
    """
    module_name = f"{EXPERIMENTS_PACKAGE}.{name}"
    if re.fullmatch(r"[a-z][a-z0-9_]*", name) and importlib.util.find_spec(module_name):
        experiment = getattr(importlib.import_module(module_name), "EXPERIMENT", None)
        if isinstance(experiment, Experiment) and experiment.name == name:
            return experiment
    experiments = find_experiments()
    raise ValueError(f"unknown experiment {name!r}; choose one of {', '.join(experiments)}")
