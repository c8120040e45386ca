"""Reproductions of the papers' experiments: registry, grid runner (Dask), plots.

Run them with ``bayesldp experiment NAME [--quick | --full]`` or the scripts in
``experiments/``; see :mod:`bayesldp.experiments.runner` for the storage layout.
"""

from bayesldp.experiments.registry import EXPERIMENTS, build_config
from bayesldp.experiments.runner import Config, Task, run

__all__ = ["EXPERIMENTS", "Config", "Task", "build_config", "run"]
