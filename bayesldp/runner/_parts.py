"""A run's folder: verified parts (one per task), the configuration stamp, resuming.

Each task's rows are written atomically to ``parts/<key>.csv``, then a record of their
row count, size and SHA-256 to ``parts/<key>.json``; a part that does not match its
record is run again. ``config.json`` stamps the configuration the parts belong to.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from bayesldp._io import atomic_open, write_json
from bayesldp.runner._config import config_digest, make_tasks
from bayesldp.runner._experiment import Config, Experiment, Task

logger = logging.getLogger(__name__)


def part_paths(folder: Path, key: str) -> tuple[Path, Path]:
    """Return the paths of part ``key``'s rows (CSV) and record (JSON) under ``folder``."""
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
    csv_path, record_path = part_paths(folder, key)
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
    csv_path, record_path = part_paths(folder, key)
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


def read_part(folder: Path, key: str) -> pd.DataFrame:
    """Read part ``key`` (already checked by :func:`part_is_valid`) as a DataFrame."""
    csv_path, record_path = part_paths(folder, key)
    frame = pd.read_csv(csv_path, keep_default_na=False, na_values=[""], low_memory=False)
    rows = json.loads(record_path.read_text())["rows"]
    if len(frame) != rows:  # the checksum matched, so this is a bug, not a damaged file
        raise ValueError(f"part {csv_path} has {len(frame)} rows, its record says {rows}")
    return frame


#: Written by :func:`prepare`: the configuration a folder's parts belong to.
STAMP = "config.json"


def check_writable(folder: Path) -> None:
    """Create ``folder``; ValueError (``out: cannot write to ...``) if nothing can be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ValueError(f"out: cannot write to {folder}: {reason}") from None


def read_stamp(folder: Path) -> dict | None:
    """Return the configuration stamp of ``folder`` (its ``config.json``), or None."""
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
    stamp = read_stamp(folder)
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
    check_writable(folder)
    parts = folder / "parts"
    parts.mkdir(exist_ok=True)
    digest = config_digest(experiment, config)
    stamp = read_stamp(folder)
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
        if any(p.exists() for p in part_paths(folder, task.key)):
            logger.warning("part %s is damaged or incomplete: running it again", task.key)
        todo.append(task)
    return todo
