"""A run's results: the parts joined into ``results.csv``, the figures, the warnings.

:func:`combine` joins the valid parts of a configuration into ``results.csv`` and writes
``metadata.json``; :func:`draw_figures` draws an experiment's figures from
``results.csv`` only and writes ``summary.csv``; :func:`warnings_by_method` summarises
the warnings the methods raised.
"""

from __future__ import annotations

import platform
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from bayesldp import __version__
from bayesldp._io import write_csv, write_json
from bayesldp.runner._config import config_digest, make_tasks
from bayesldp.runner._datasets import load_dataset
from bayesldp.runner._experiment import Config, Experiment
from bayesldp.runner._methods import WARNING_SEPARATOR
from bayesldp.runner._parts import part_is_valid, read_part
from bayesldp.runner._seeding import METHOD_STREAM, SEEDINGS


def _versions() -> dict[str, str]:
    """Return the versions of Python, bayesldp and the packages the results depend on."""
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
    results = pd.concat([read_part(folder, t.key) for t in done], ignore_index=True)
    write_csv(folder / "results.csv", results)
    seeding = experiment.seed if callable(experiment.seed) else SEEDINGS[experiment.seed]
    seed_doc = (seeding.__doc__ or seeding.__name__).strip().splitlines()[0]
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


def draw_figures(experiment: Experiment, folder: Path) -> pd.DataFrame:
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
        Columns ``method``, ``tasks_warned``, ``tasks`` and ``messages``: the distinct
        warnings, whole, one per line, in the order they first appear.
    """
    cells = [c for c in ("oracle", "dataset", "epsilon", "rep") if c in results]
    rows = results.drop_duplicates([*cells, "method"])
    tasks = rows.groupby("method", sort=False).size()
    text = results["warning"]
    warned = results[text.notna() & (text != "")].drop_duplicates([*cells, "method", "warning"])
    out = []
    for method, g in warned.groupby("method", sort=False):
        lines = WARNING_SEPARATOR.join(g["warning"]).split(WARNING_SEPARATOR)
        messages = WARNING_SEPARATOR.join(dict.fromkeys(lines))
        out.append(
            {
                "method": method,
                "tasks_warned": len(g.drop_duplicates(cells)),
                "tasks": int(tasks[method]),
                "messages": messages,
            }
        )
    return pd.DataFrame(out, columns=["method", "tasks_warned", "tasks", "messages"])
