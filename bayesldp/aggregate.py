"""Aggregating files of user reports into a :class:`~bayesldp.Measurement`, with Dask.

Reports are stored as Parquet files (one or many "part" files). Each file is one Dask
task: it is read batch by batch with ``pyarrow``, each batch is decoded by the oracle
(:meth:`~bayesldp.FrequencyOracle.from_arrow`) and counted by its
:meth:`~bayesldp.FrequencyOracle.support_counts`, and the per-file counts are summed
by a tree reduction. Support counts are sums over users, so the result equals the
direct numpy aggregation of the same reports exactly (integer arithmetic, any order).

The layout of the files is the oracle's own (see :mod:`bayesldp.oracles`: the wire
format of each oracle and its Arrow form, with the oracle's parameters in the schema
metadata): this module knows no oracle by name. Files from elsewhere are read too
(any integer column type; OUE/SUE as a list column of set-bit indices; SS as
variable-size lists of ``k`` increasing items; ``column`` names other columns).

Dask and pyarrow come with the ``dask`` extra (``pip install 'bayesldp[dask]'``);
this module imports them only when called.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import bayesldp.oracles._blocks as oracle_blocks
from bayesldp._validation import check_int, check_rng
from bayesldp.measurement import Measurement
from bayesldp.oracles import FrequencyOracle, make_oracle
from bayesldp.oracles._arrow import read_arrow_parameters

__all__ = [
    "aggregate_parquet",
    "oracle_from_files",
    "read_reports",
    "write_reports_parquet",
]


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"the {module!r} package is needed to aggregate report files; "
            "install it with: pip install 'bayesldp[dask]'"
        ) from err


def _check_oracle(oracle: Any) -> FrequencyOracle:
    if not isinstance(oracle, FrequencyOracle):
        raise ValueError(f"oracle must be a bayesldp FrequencyOracle, got {oracle!r}")
    return oracle


def reports_to_table(oracle: FrequencyOracle, reports: np.ndarray) -> Any:
    """Encode an oracle's reports as a :class:`pyarrow.Table` (``oracle.to_arrow``).

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle that made the reports.
    reports : numpy.ndarray
        Reports in its wire format (checked).
    """
    _require("pyarrow")
    return _check_oracle(oracle).to_arrow(reports)


def _batch_rows(oracle: FrequencyOracle, batch_size: int | None) -> int:
    """Rows per batch: given, or enough rows for one block of report values."""
    if batch_size is None:
        return oracle_blocks.rows_per_block(math.prod(oracle.report_shape))
    return batch_size


def _open(path: str) -> Any:
    """Open a ``pyarrow.parquet.ParquetFile``; an unreadable file is a ValueError naming it."""
    pa = _require("pyarrow")
    pq = _require("pyarrow.parquet")
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as err:
        raise ValueError(f"{path}: not a readable Parquet file ({err})") from err


def file_counts(
    path: str,
    oracle: FrequencyOracle,
    columns: str | Sequence[str] | None = None,
    batch_size: int | None = None,
) -> tuple[np.ndarray, int]:
    """Support counts and number of reports of one Parquet file (one Dask task).

    Parameters
    ----------
    path : str
        A Parquet file written with ``oracle``'s wire format.
    oracle : FrequencyOracle
        The oracle whose parameters the file must carry.
    columns : str or sequence of str, optional
        Report column(s); default ``oracle.arrow_columns``.
    batch_size : int, optional
        Rows per batch read; by default enough rows for one block of report values
        (``2**21``).

    Returns
    -------
    tuple of (numpy.ndarray, int)
        The ``int64`` support counts and the number of reports.
    """
    pa = _require("pyarrow")
    columns = oracle.arrow_column_names(columns)
    pf = _open(path)
    oracle.check_parameters(read_arrow_parameters(pf.schema_arrow), source=path)
    missing = [c for c in columns if c not in pf.schema_arrow.names]
    if missing:
        raise ValueError(f"{path} has no column(s) {missing}; it has {pf.schema_arrow.names}")
    counts = np.zeros(oracle.domain_size, dtype=np.int64)
    n = 0
    try:
        rows = _batch_rows(oracle, batch_size)
        for batch in pf.iter_batches(batch_size=rows, columns=list(columns)):
            counts += oracle.support_counts(oracle.from_arrow(batch, columns))
            n += batch.num_rows
    except (pa.ArrowException, OSError) as err:
        raise ValueError(f"{path}: not a readable Parquet file ({err})") from err
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    return counts, n


def _add(*parts: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    counts = parts[0][0].copy()
    for c, _ in parts[1:]:
        counts += c
    return counts, sum(n for _, n in parts)


# ---------------------------------------------------------------------------
# public functions


def _resolve_paths(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """Absolute paths of the report files (workers may run in another directory)."""
    if isinstance(paths_or_glob, str | os.PathLike):
        text = os.fspath(paths_or_glob)
        p = Path(text)
        if p.is_dir():
            found = sorted(os.path.abspath(x) for x in p.glob("*.parquet"))
            if not found:
                raise ValueError(f"directory {text!r} holds no *.parquet files")
            return found
        if any(ch in text for ch in "*?["):
            found = sorted(os.path.abspath(x) for x in glob.glob(text))
            if not found:
                raise ValueError(f"no file matches {text!r}")
            return found
        items: list[str | os.PathLike] = [text]
    else:
        items = list(paths_or_glob)
        if not items:
            raise ValueError("paths_or_glob is an empty list")
    out = []
    for item in items:
        if not Path(item).is_file():
            raise ValueError(f"report file {os.fspath(item)!r} does not exist")
        out.append(os.path.abspath(os.fspath(item)))
    return out


def _tree_sum(parts: list, split_every: int) -> Any:
    from dask import delayed

    while len(parts) > 1:
        parts = [
            delayed(_add, pure=True)(*parts[i : i + split_every])
            for i in range(0, len(parts), split_every)
        ]
    return parts[0]


def aggregate_parquet(
    paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike],
    oracle: FrequencyOracle,
    column: str | Sequence[str] | None = None,
    scheduler: Any = None,
    *,
    batch_size: int | None = None,
    split_every: int = 8,
) -> Measurement:
    """Aggregate Parquet files of user reports into a Measurement, with Dask.

    Parameters
    ----------
    paths_or_glob : str, path or list of paths
        A directory (all its ``*.parquet`` files), a glob pattern, one file, or a list
        of files.
    oracle : FrequencyOracle
        The oracle the users ran. If the files record bayesldp parameters, they must
        be the oracle's (name, domain size, epsilon and its own parameters).
    column : str or sequence of str, optional
        Report column(s); default ``oracle.arrow_columns``.
    scheduler : None, str or distributed.Client
        Passed to :func:`dask.compute`: ``None`` (Dask's default: the active
        distributed client if any, else threads), ``"synchronous"``, ``"threads"``,
        ``"processes"`` or a ``Client`` (e.g. of a ``LocalCluster``).
    batch_size : int, optional
        Rows read per batch within a file (bounds each task's memory); by default
        enough rows for ``2**21`` report values (e.g. 8192 OUE reports at
        ``d = 1024``, 2^20 GRR reports).
    split_every : int
        Fan-in of the tree reduction of per-file counts (>= 2).

    Returns
    -------
    Measurement
        ``oracle.measurement(counts, n)`` with ``n`` the number of reports (rows).

    Raises
    ------
    ValueError
        No files, an unreadable file, a missing column, metadata of another oracle,
        invalid reports, or no reports at all (file errors name the file).
    ImportError
        Without dask or pyarrow (install ``bayesldp[dask]``).
    """
    dask = _require("dask")
    _require("pyarrow.parquet")
    from dask import delayed

    _check_oracle(oracle)
    columns = oracle.arrow_column_names(column)
    if batch_size is not None:
        batch_size = check_int(batch_size, "batch_size", minimum=1)
    split_every = check_int(split_every, "split_every", minimum=2)
    paths = _resolve_paths(paths_or_glob)
    oracle.check_parameters(read_arrow_parameters(_open(paths[0]).schema_arrow), paths[0])
    leaves = [delayed(file_counts, pure=True)(p, oracle, columns, batch_size) for p in paths]
    total = _tree_sum(leaves, split_every)
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    ((counts, n),) = dask.compute(total, **kwargs)
    if n == 0:
        raise ValueError(f"the {len(paths)} report file(s) hold no reports")
    return oracle.measurement(counts, n)


def read_layout(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> dict | None:
    """Return the oracle parameters recorded in the first report file, or None.

    A dict with ``name``, ``epsilon``, ``domain_size`` and the oracle's own parameters
    (as the oracles record them in the schema metadata); files from elsewhere have
    none.

    Parameters
    ----------
    paths_or_glob : str, path or list of paths
        A directory (all its ``*.parquet`` files), a glob pattern, one file, or a list
        of files; only the first (in name order for a directory or pattern) is read.
    """
    path = _resolve_paths(paths_or_glob)[0]
    schema = _open(path).schema_arrow
    try:
        return read_arrow_parameters(schema)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def oracle_from_files(
    paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike],
    oracle: str | None = None,
    epsilon: float | None = None,
    domain_size: int | None = None,
) -> FrequencyOracle:
    """Return the oracle of the report files: given values first, then the files' metadata.

    The oracle's own parameters (``g``, ``k``) come from the metadata when it records
    the same oracle. Raises ValueError when a parameter is neither given nor recorded.

    Parameters
    ----------
    paths_or_glob : str, path or list of paths
        The report files, as in :func:`read_layout`.
    oracle : str, optional
        Oracle name (e.g. ``"OLH"``); by default the recorded one.
    epsilon : float, optional
        Privacy budget; by default the recorded one.
    domain_size : int, optional
        Number of items; by default the recorded one.
    """
    meta = read_layout(paths_or_glob) or {}
    name = oracle or meta.get("name")
    eps = epsilon if epsilon is not None else meta.get("epsilon")
    d = domain_size if domain_size is not None else meta.get("domain_size")
    missing = [k for k, v in (("oracle", name), ("epsilon", eps), ("d", d)) if v is None]
    if missing:
        raise ValueError(
            f"the report files carry no bayesldp layout metadata; give {', '.join(missing)}"
        )
    assert eps is not None and d is not None  # checked just above
    same = str(meta.get("name", "")).upper() == str(name).upper()
    extra = {k: v for k, v in meta.items() if same and k not in ("name", "epsilon", "domain_size")}
    return make_oracle(str(name), float(eps), int(d), **extra)


def read_reports(
    paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike],
    oracle: FrequencyOracle,
) -> np.ndarray:
    """Read report files back into memory, in the oracle's wire format.

    For small data and tests: the reports as :meth:`~bayesldp.FrequencyOracle.privatize`
    makes them, files in name order.

    Parameters
    ----------
    paths_or_glob : str, path or list of paths
        A directory (all its ``*.parquet`` files, in name order), a glob pattern (in
        name order), one file, or a list of files (in the order given).
    oracle : FrequencyOracle
        The oracle the users ran; recorded parameters must match it.

    Raises
    ------
    ValueError
        A file is not readable Parquet or does not hold this oracle's reports.
    """
    pa = _require("pyarrow")
    _check_oracle(oracle)
    parts = []
    for path in _resolve_paths(paths_or_glob):
        pf = _open(path)
        try:
            parts.append(oracle.from_arrow(pf.read()))
        except (pa.ArrowException, OSError) as err:
            raise ValueError(f"{path}: not a readable Parquet file ({err})") from err
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from err
    return np.concatenate(parts)


def write_reports_parquet(
    oracle: FrequencyOracle,
    values: np.ndarray | Iterable[np.ndarray],
    rng: np.random.Generator | int,
    path: str | os.PathLike,
    chunk_size: int = 1_000_000,
    *,
    compression: str = "zstd",
    overwrite: bool = False,
) -> list[Path]:
    """Privatize users' values chunk by chunk and write the reports as Parquet part files.

    Parameters
    ----------
    oracle : FrequencyOracle
        Any oracle (its reports are written in its own Arrow layout).
    values : array of int or iterable of arrays
        Users' true values in ``0 .. d-1``: one array (split into ``chunk_size``
        pieces) or an iterable of arrays (each split likewise), so that 1e8 users
        never need to be in memory at once.
    rng : numpy.random.Generator or int
        Randomness of the privatization (a Generator, or a seed for one). Chunks are
        privatized in order; each file holds what one ``oracle.privatize`` call on its
        chunk returns (it is made and written in row groups of whole privatize blocks,
        to bound memory).
    path : str or path
        Output directory; files are ``part-00000.parquet``, ``part-00001.parquet``, ...
        each written atomically.
    chunk_size : int
        Reports per file.
    compression : str
        Parquet compression codec.
    overwrite : bool
        If False (default), a directory already holding ``*.parquet`` files is an
        error; if True, its ``part-*.parquet`` files are removed first.

    Returns
    -------
    list of pathlib.Path
        The files written, in order.
    """
    pq = _require("pyarrow.parquet")
    from bayesldp._io import atomic_open

    _check_oracle(oracle)
    gen = check_rng(rng)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"path {str(out)!r} is a file, not a directory")
    out.mkdir(parents=True, exist_ok=True)
    existing = sorted(out.glob("*.parquet"))
    if existing:
        if not overwrite:
            raise ValueError(
                f"directory {str(out)!r} already holds {len(existing)} Parquet files "
                "(pass overwrite=True to replace its part files)"
            )
        for old in out.glob("part-*.parquet"):
            old.unlink()
    if isinstance(values, np.ndarray | list | tuple):
        values = [np.asarray(values)]
    # A file is written in row groups of whole privatize blocks (about 8 block sizes of
    # bytes of reports each), so a chunk's reports are never all in memory, and the
    # file holds exactly what one privatize call on the chunk would return.
    block = oracle.block_rows
    cells = oracle_blocks.CHUNK_CELLS
    piece = block * max(1, (8 * cells) // max(1, block * oracle.report_nbytes))
    written: list[Path] = []
    for arr in values:
        arr = np.asarray(arr)
        for start in range(0, arr.shape[0], chunk_size):
            chunk = arr[start : start + chunk_size]
            target = out / f"part-{len(written):05d}.parquet"
            with atomic_open(target, "wb") as fh:
                writer = None
                for lo in range(0, chunk.shape[0], piece):
                    table = oracle.to_arrow(oracle.privatize(chunk[lo : lo + piece], gen))
                    if writer is None:
                        writer = pq.ParquetWriter(fh, table.schema, compression=compression)
                    writer.write_table(table)
                assert writer is not None  # the chunk is not empty
                writer.close()
            written.append(target)
    if not written:
        raise ValueError("values holds no users")
    return written
