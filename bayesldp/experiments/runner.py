"""Run an experiment's grid (dataset x eps x repetition) and store tidy, resumable results.

Each task of the grid simulates one round of a frequency oracle, post-processes the
measurement with every method and returns tidy rows (one per method, metric and
parameter). A task's rows are written atomically to ``OUT/NAME/parts/<key>.csv`` as soon
as it finishes, so an interrupted run resumes by skipping the parts that exist. The
parts are then combined into ``OUT/NAME/results.csv`` with ``OUT/NAME/metadata.json``
(configuration, seeds, versions). Plots are made from ``results.csv`` only
(:mod:`bayesldp.experiments.plots`).

Seeds come from :class:`numpy.random.SeedSequence` over (base seed, experiment,
dataset, eps, repetition), so results do not depend on scheduling.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import re
import time
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp import __version__
from bayesldp.io import write_csv, write_json

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# method specs


def check_methods(specs: Iterable[str]) -> tuple[str, ...]:
    """Check that every method spec (``name`` or ``name@backend``) is registered."""
    from bayesldp.registry import parse_method

    specs = tuple(specs)
    for spec in specs:
        try:
            parse_method(spec)
        except ValueError as err:
            raise ValueError(f"methods: {err}") from None
    return specs


def default_methods(bayes: bool = False) -> tuple[str, ...]:
    """The registry's default methods; plus the Bayesian ones if asked."""
    from bayesldp.registry import method_names

    out = method_names(default=True)
    if bayes:
        out += method_names(bayesian=True)
    return out


def apply_methods(m, specs: Iterable[str]) -> tuple[dict, dict, dict]:
    """Post-process ``m`` with each spec; returns (estimates, seconds, warnings)."""
    from bayesldp.registry import postprocess

    estimates, seconds, notes = {}, {}, {}
    for spec in specs:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            estimates[spec] = postprocess(m, spec)
            seconds[spec] = time.perf_counter() - t0
        notes[spec] = "; ".join(sorted({str(w.message)[:120] for w in caught}))
    return estimates, seconds, notes


# ---------------------------------------------------------------------------
# datasets


@lru_cache(maxsize=16)
def load_dataset(spec: str):
    """Load a dataset by spec (cached per process, so each worker loads it once).

    Synthetic datasets are drawn with their builders' fixed default seed, so the true
    data are the same across repetitions, as in the papers.
    """
    from bayesldp.datasets import get_dataset

    return get_dataset(spec)


def dataset_available(spec: str) -> bool:
    """Whether ``spec`` loads here (real-data loaders may not be installed)."""
    try:
        load_dataset(spec)
    except (ValueError, ImportError, ModuleNotFoundError, OSError) as err:
        logger.warning("dataset %s unavailable: %s", spec, err)
        return False
    return True


# ---------------------------------------------------------------------------
# configuration and tasks


@dataclass(frozen=True)
class Config:
    """One experiment's grid and options (what :func:`run` needs)."""

    experiment: str
    datasets: tuple[str, ...]
    epsilons: tuple[float, ...]
    reps: int
    methods: tuple[str, ...]
    oracle: str = "OUE"
    seed: int = 0
    mode: str = "default"
    params: dict[str, Any] = field(default_factory=dict)

    def digest(self) -> str:
        """Hash of everything that changes a task's rows.

        Datasets, epsilons and repetitions are left out: a part is keyed by them and
        its seed depends only on them, so a grid can grow and keep the parts it has.
        """
        data = asdict(self)
        for key in ("mode", "datasets", "epsilons", "reps"):
            data.pop(key)
        data["params"] = {k: v for k, v in data["params"].items() if k != "real_reps"}
        blob = json.dumps(data, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class Task:
    """One cell of the grid."""

    experiment: str
    dataset: str
    epsilon: float
    rep: int
    oracle: str
    methods: tuple[str, ...]
    seed: int
    params: dict[str, Any]

    @property
    def key(self) -> str:
        safe = re.sub(r"[^\w.\-=]+", "_", self.dataset)
        return f"{safe}__eps{self.epsilon:g}__rep{self.rep:04d}"

    def seed_sequence(self) -> np.random.SeedSequence:
        tag = f"{self.experiment}|{self.dataset}|{self.epsilon!r}|{self.rep}"
        return np.random.SeedSequence([self.seed, zlib.crc32(tag.encode())])


def make_tasks(config: Config) -> list[Task]:
    """The grid's tasks in a fixed order."""
    return [
        Task(
            config.experiment,
            ds,
            float(eps),
            rep,
            config.oracle,
            config.methods,
            config.seed,
            config.params,
        )
        for ds in config.datasets
        for eps in config.epsilons
        for rep in range(reps_for(config, ds))
    ]


def is_real(dataset: str) -> bool:
    """Whether a dataset spec names real (not synthetic) data."""
    from bayesldp.datasets import DATASETS, parse_dataset

    return DATASETS[parse_dataset(dataset)[0]].kind != "synthetic"


def reps_for(config: Config, dataset: str) -> int:
    """Repetitions for one dataset: ``params["real_reps"]`` caps the real ones."""
    cap = config.params.get("real_reps")
    if cap and is_real(dataset):
        return min(config.reps, int(cap))
    return config.reps


def simulate(dataset, oracle: str, epsilon: float, rng: np.random.Generator):
    """One round of the oracle on the dataset's true counts."""
    from bayesldp.oracles import make_oracle

    return make_oracle(oracle, epsilon, dataset.d).simulate(dataset.counts, rng)


def execute(task: Task) -> pd.DataFrame:
    """Run one task (importable by Dask workers): tidy rows of the task's metrics."""
    from bayesldp.experiments.registry import EXPERIMENTS

    spec = EXPERIMENTS[task.experiment]
    dataset = load_dataset(task.dataset)
    seq = task.seed_sequence()
    t0 = time.perf_counter()
    rows = spec.task(task, dataset, seq)
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


ROW_COLUMNS = ("method", "metric", "param", "value", "seconds", "warning")


# ---------------------------------------------------------------------------
# running


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "bayesldp": __version__}
    for pkg in ("numpy", "scipy", "pandas", "dask", "distributed", "cvxpy", "matplotlib"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


STAMP = "config.json"  # written by prepare: the configuration a folder's parts belong to


def prepare(config: Config, out: Path, restart: bool = False) -> tuple[Path, list[Task]]:
    """Create ``out/NAME``; return its folder and the tasks not yet done.

    A folder made with a different configuration is refused (ValueError) unless
    ``restart``, which removes its parts.
    """
    folder = Path(out) / config.experiment
    parts = folder / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    stamp = _read_stamp(folder)
    if stamp is not None and stamp.get("digest") != config.digest():
        if not restart:
            raise ValueError(
                f"out: {folder} holds results of another configuration; "
                "use another --out or --restart"
            )
        for f in parts.glob("*.csv"):
            f.unlink()
    write_json(folder / STAMP, {"digest": config.digest(), "config": asdict(config)})
    tasks = [t for t in make_tasks(config) if not (parts / f"{t.key}.csv").exists()]
    return folder, tasks


def _read_stamp(folder: Path) -> dict | None:
    """The ``config.json`` that :func:`prepare` wrote in ``folder`` (digest and config)."""
    stamp = Path(folder) / STAMP
    return json.loads(stamp.read_text()) if stamp.exists() else None


def saved_config(folder: Path) -> Config | None:
    """The configuration ``folder`` was last run with (its ``config.json``), or None."""
    stamp = _read_stamp(folder)
    if stamp is None:
        return None
    data = stamp["config"]
    for key in ("datasets", "epsilons", "methods"):
        data[key] = tuple(data[key])
    return Config(**data)


def combine(config: Config, folder: Path, elapsed: float | None = None) -> pd.DataFrame:
    """Combine the parts into ``results.csv`` and write ``metadata.json``."""
    wanted = {t.key for t in make_tasks(config)}
    files = sorted(f for f in (folder / "parts").glob("*.csv") if f.stem in wanted)
    if not files:
        raise ValueError(f"out: no results of this configuration under {folder}")
    frames = [pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in files]
    results = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_csv(folder / "results.csv", results)
    meta = {
        "config": asdict(config),
        "digest": config.digest(),
        "tasks": len(wanted),
        "tasks_done": len(files),
        "versions": _versions(),
        "seeding": "SeedSequence([seed, crc32('experiment|dataset|eps|rep')])",
        "datasets": {ds: str(load_dataset(ds)) for ds in config.datasets},
        "wall_seconds_last_run": elapsed,
    }
    write_json(folder / "metadata.json", meta)
    return results


def make_client(scheduler: str | None, n_workers: int = 2):
    """A Dask client: a LocalCluster when ``scheduler`` is None, else connect to it.

    ``"synchronous"`` returns None: tasks run in this process.
    """
    if scheduler == "synchronous":
        return None
    from dask.distributed import Client, LocalCluster

    if not logger.isEnabledFor(logging.DEBUG):
        # distributed logs every scheduler/worker start and stop at INFO
        logging.getLogger("distributed").setLevel(logging.WARNING)
    if scheduler:
        return Client(scheduler)
    import dask

    # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in workers, which makes glibc
    # return freed memory to the OS at once; the methods' large temporaries then
    # page-fault on every call and tasks run ~4x slower (measured). Keep glibc's default.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.WARNING,
        )
    return Client(cluster)


def close_client(client, own_cluster: bool = True) -> None:
    """Close a client from :func:`make_client` (and its LocalCluster if it made one)."""
    if client is None:
        return
    cluster = client.cluster
    client.close()
    if own_cluster and cluster is not None:
        cluster.close()


def run_tasks(
    tasks: list[tuple[Path, Task]],
    client=None,
    progress: Callable[[int], Any] | None = None,
) -> None:
    """Run (folder, task) pairs (on ``client`` if given), writing each part atomically."""
    if client is None:
        for folder, task in tasks:
            write_csv(folder / "parts" / f"{task.key}.csv", execute(task))
            if progress:
                progress(1)
        return
    from dask.distributed import as_completed

    futures = client.map(execute, [t for _, t in tasks], pure=False)
    where = {f.key: pair for f, pair in zip(futures, tasks, strict=True)}
    for future in as_completed(futures):
        frame = future.result()
        folder, task = where[future.key]
        write_csv(folder / "parts" / f"{task.key}.csv", frame)
        future.release()
        if progress:
            progress(1)


def run(
    config: Config,
    out: str | Path,
    client=None,
    progress: Callable[[int], Any] | None = None,
    restart: bool = False,
) -> pd.DataFrame:
    """Run (or resume) an experiment and return its combined tidy results."""
    t0 = time.perf_counter()
    folder, tasks = prepare(config, Path(out), restart=restart)
    logger.info("%s: %d tasks to run", config.experiment, len(tasks))
    run_tasks([(folder, t) for t in tasks], client=client, progress=progress)
    return combine(config, folder, elapsed=time.perf_counter() - t0)
