"""Aggregate large files of user reports into a :class:`~bayesldp.Measurement` with Dask.

Reports are stored as Parquet files (one or many "part" files). Each file is one Dask
task: it is read batch by batch with ``pyarrow``, the oracle's vectorised
``support_counts`` runs on each batch, and the per-file counts are summed by a tree
reduction. Support counts are sums over users, so the result equals the direct numpy
aggregation of the same reports exactly (integer arithmetic, any order).

Report layout (one row per user; the writer stores it, with the oracle's name,
epsilon, domain size and ``g``/``k``, in the Parquet schema metadata):

======== ============================== ==============================================
Oracle   Columns                        Meaning
======== ============================== ==============================================
GRR      ``report`` (int32)             the perturbed value in ``0 .. d-1``
HR       ``report`` (int32)             the reported Hadamard column in ``0 .. K-1``
OLH      ``a``, ``b`` (int64),          the hash ``((a v + b) mod (2^31-1)) mod g`` and
         ``y`` (int32)                  the perturbed bucket
SS       ``report`` (fixed-size list    the ``k`` reported items
         of ``k`` int32)
OUE/SUE  ``report`` (fixed-size binary  the ``d`` bits packed 8 per byte, most
         of ``ceil(d/8)`` bytes)        significant bit first (``numpy.packbits``)
======== ============================== ==============================================

For files from elsewhere, OUE/SUE also accept a list column holding the indices of
the set bits, any integer type is accepted for integer columns, SS accepts a
variable-size list column whose lists all hold ``k`` items, and ``column`` names other
columns. Packed bits cost ``d/8`` bytes per user (128 bytes at ``d = 1024``); a
column per bit would be 1024 columns.

Dask and pyarrow come with the ``dask`` extra (``pip install 'bayesldp[dask]'``);
this module imports them only when called.
"""

from __future__ import annotations

import glob
import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bayesldp.measurement import Measurement
from bayesldp.oracles import GRR, HR, OLH, OUE, SS, SUE, FrequencyOracle

__all__ = [
    "METADATA_KEY",
    "aggregate_parquet",
    "oracle_from_files",
    "read_layout",
    "read_reports",
    "reports_to_table",
    "write_reports_parquet",
]

#: Key of the JSON layout description in the Parquet schema metadata.
METADATA_KEY = b"bayesldp.reports"
_LAYOUT_VERSION = 1
#: Rows read from Parquet per batch.
DEFAULT_BATCH = 1 << 20
_CELLS = 1 << 23  # bound on rows * d in a decoded block (bits, hashes)


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"the {module!r} package is needed to aggregate report files; "
            "install it with: pip install 'bayesldp[dask]'"
        ) from err


def _kind(oracle: FrequencyOracle) -> str:
    for cls, kind in ((OLH, "olh"), (SS, "ss"), (HR, "hr"), (GRR, "grr"), (OUE, "ue"), (SUE, "ue")):
        if isinstance(oracle, cls):
            return kind
    raise ValueError(f"oracle must be one of GRR, HR, OLH, SS, OUE, SUE, got {oracle!r}")


def _default_columns(oracle: FrequencyOracle) -> tuple[str, ...]:
    return ("a", "b", "y") if _kind(oracle) == "olh" else ("report",)


def _columns(oracle: FrequencyOracle, column: str | Sequence[str] | None) -> tuple[str, ...]:
    want = len(_default_columns(oracle))
    if column is None:
        return _default_columns(oracle)
    cols = (column,) if isinstance(column, str) else tuple(column)
    if len(cols) != want or not all(isinstance(c, str) for c in cols):
        raise ValueError(
            f"column must name {want} column(s) for {oracle.name} "
            f"(default {_default_columns(oracle)}), got {column!r}"
        )
    return cols


def _layout(oracle: FrequencyOracle) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "version": _LAYOUT_VERSION,
        "oracle": oracle.name,
        "epsilon": oracle.epsilon,
        "domain_size": oracle.domain_size,
    }
    if isinstance(oracle, OLH):
        meta["g"] = oracle.g
    if isinstance(oracle, SS):
        meta["k"] = oracle.k
    return meta


def _check_layout(oracle: FrequencyOracle, schema, path: str) -> None:
    """Raise if the file says it holds reports of another oracle or parameter."""
    raw = (schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        return  # a file from elsewhere: trust the caller's oracle and columns
    meta = json.loads(raw)
    mine = _layout(oracle)
    for key in ("oracle", "domain_size", "g", "k"):
        if meta.get(key) != mine.get(key):
            raise ValueError(
                f"{path} holds reports of {meta.get('oracle')} with {key}={meta.get(key)!r}, "
                f"but the oracle has {key}={mine.get(key)!r}"
            )
    if not math.isclose(meta["epsilon"], oracle.epsilon, rel_tol=1e-12):
        raise ValueError(
            f"{path} holds reports made with epsilon={meta['epsilon']!r}, "
            f"but the oracle has epsilon={oracle.epsilon!r}"
        )


# ---------------------------------------------------------------------------
# encoding


def reports_to_table(oracle: FrequencyOracle, reports: np.ndarray):
    """Encode an oracle's reports as a :class:`pyarrow.Table` in the layout above."""
    pa = _require("pyarrow")
    kind = _kind(oracle)
    r = np.asarray(reports)
    if kind in ("grr", "hr"):
        arrays = {"report": pa.array(r.astype(np.int32).ravel())}
    elif kind == "olh":
        arrays = {
            "a": pa.array(r[:, 0].astype(np.int64)),
            "b": pa.array(r[:, 1].astype(np.int64)),
            "y": pa.array(r[:, 2].astype(np.int32)),
        }
    elif kind == "ss":
        flat = pa.array(np.ascontiguousarray(r, dtype=np.int32).ravel())
        arrays = {"report": pa.FixedSizeListArray.from_arrays(flat, oracle.k)}
    else:
        width = -(-oracle.domain_size // 8)
        packed = np.packbits(np.asarray(r, dtype=bool), axis=1)
        buf = pa.py_buffer(np.ascontiguousarray(packed).tobytes())
        arrays = {
            "report": pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(width), packed.shape[0], [None, buf]
            )
        }
    table = pa.table(arrays)
    return table.replace_schema_metadata({METADATA_KEY: json.dumps(_layout(oracle)).encode()})


def _int_column(arr, name: str) -> np.ndarray:
    if arr.null_count:
        raise ValueError(f"column {name!r} holds {arr.null_count} nulls")
    out = arr.to_numpy(zero_copy_only=False)
    if not np.issubdtype(out.dtype, np.integer):
        raise ValueError(f"column {name!r} must hold integers, got {arr.type}")
    return out.astype(np.int64, copy=False)


def _list_values(arr, name: str, size: int | None) -> np.ndarray:
    """Flattened values of a list column (checking every list has ``size`` items)."""
    pc = _require("pyarrow.compute")
    if arr.null_count:
        raise ValueError(f"column {name!r} holds {arr.null_count} nulls")
    if size is not None:
        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        if lengths.size and (lengths.min() != size or lengths.max() != size):
            raise ValueError(f"column {name!r}: every report must hold {size} items")
    return _int_column(arr.flatten(), name)


def _unpack(arr, name: str, d: int) -> np.ndarray:
    """Packed bit reports -> uint8 array (rows, bytes)."""
    pa = _require("pyarrow")
    width = -(-d // 8)
    if arr.null_count:
        raise ValueError(f"column {name!r} holds {arr.null_count} nulls")
    if arr.type != pa.binary(width):
        try:
            arr = arr.cast(pa.binary(width))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
            raise ValueError(
                f"column {name!r} must hold {width}-byte packed bits for d={d}, got {arr.type}"
            ) from err
    data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    start = arr.offset * width
    return data[start : start + len(arr) * width].reshape(-1, width)


def _batch_counts(oracle: FrequencyOracle, batch, columns: tuple[str, ...]) -> np.ndarray:
    """Support counts of one record batch."""
    pa = _require("pyarrow")
    kind = _kind(oracle)
    d = oracle.domain_size
    cols = [batch.column(c) for c in columns]
    if kind in ("grr", "hr"):
        reports = _int_column(cols[0], columns[0])
        if kind == "grr" and reports.size and (reports.min() < 0 or reports.max() >= d):
            raise ValueError(f"column {columns[0]!r}: GRR reports must lie in [0, {d})")
        return oracle.support_counts(reports)
    if kind == "olh":
        reports = np.stack([_int_column(c, n) for c, n in zip(cols, columns, strict=True)], 1)
        return oracle.support_counts(reports)
    if kind == "ss":
        flat = _list_values(cols[0], columns[0], oracle.k)
        return oracle.support_counts(flat.reshape(-1, oracle.k))
    # unary encoding
    if pa.types.is_list(cols[0].type) or pa.types.is_large_list(cols[0].type):
        idx = _list_values(cols[0], columns[0], None)
        if idx.size and (idx.min() < 0 or idx.max() >= d):
            raise ValueError(f"column {columns[0]!r}: set-bit indices must lie in [0, {d})")
        return np.bincount(idx, minlength=d).astype(np.int64)
    packed = _unpack(cols[0], columns[0], d)
    counts = np.zeros(d, dtype=np.int64)
    step = max(1, _CELLS // d)
    for start in range(0, packed.shape[0], step):
        bits = np.unpackbits(packed[start : start + step], axis=1, count=d)
        counts += oracle.support_counts(bits.view(bool))
    return counts


def _file_counts(
    path: str, oracle: FrequencyOracle, columns: tuple[str, ...], batch_size: int
) -> tuple[np.ndarray, int]:
    """Support counts and number of reports of one Parquet file (one Dask task)."""
    pq = _require("pyarrow.parquet")
    pf = pq.ParquetFile(path)
    _check_layout(oracle, pf.schema_arrow, path)
    missing = [c for c in columns if c not in pf.schema_arrow.names]
    if missing:
        raise ValueError(f"{path} has no column(s) {missing}; it has {pf.schema_arrow.names}")
    counts = np.zeros(oracle.domain_size, dtype=np.int64)
    n = 0
    for batch in pf.iter_batches(batch_size=batch_size, columns=list(columns)):
        counts += _batch_counts(oracle, batch, columns)
        n += batch.num_rows
    return counts, n


def _add(*parts: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    counts = parts[0][0].copy()
    for c, _ in parts[1:]:
        counts += c
    return counts, sum(n for _, n in parts)


# ---------------------------------------------------------------------------
# public functions


def _resolve_paths(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    if isinstance(paths_or_glob, str | os.PathLike):
        text = os.fspath(paths_or_glob)
        p = Path(text)
        if p.is_dir():
            found = sorted(str(x) for x in p.glob("*.parquet"))
            if not found:
                raise ValueError(f"directory {text!r} holds no *.parquet files")
            return found
        if any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text))
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
        out.append(os.fspath(item))
    return out


def _tree_sum(parts: list, split_every: int):
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
    batch_size: int = DEFAULT_BATCH,
    split_every: int = 8,
) -> Measurement:
    """Aggregate Parquet files of user reports into a Measurement, with Dask.

    Parameters
    ----------
    paths_or_glob : str, path or list of paths
        A directory (all its ``*.parquet`` files), a glob pattern, one file, or a list
        of files.
    oracle : FrequencyOracle
        The oracle the users ran (GRR, HR, OLH, SS, OUE or SUE). If the files carry
        bayesldp's layout metadata, its name, domain size, epsilon, ``g`` and ``k``
        must match.
    column : str or sequence of str, optional
        Report column(s); default ``"report"``, or ``("a", "b", "y")`` for OLH.
    scheduler : None, str or distributed.Client
        Passed to :func:`dask.compute`: ``None`` (Dask's default: the active
        distributed client if any, else threads), ``"synchronous"``, ``"threads"``,
        ``"processes"`` or a ``Client`` (e.g. of a ``LocalCluster``).
    batch_size : int
        Rows read per batch within a file (bounds each task's memory).
    split_every : int
        Fan-in of the tree reduction of per-file counts (>= 2).

    Returns
    -------
    Measurement
        ``oracle.measurement(counts, n)`` with ``n`` the number of reports (rows).

    Raises
    ------
    ValueError
        No files, a missing column, metadata of another oracle, invalid reports, or
        no reports at all.
    ImportError
        Without dask or pyarrow (install ``bayesldp[dask]``).
    """
    dask = _require("dask")
    _require("pyarrow.parquet")
    from dask import delayed

    _kind(oracle)
    columns = _columns(oracle, column)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an integer >= 2, got {split_every!r}")
    paths = _resolve_paths(paths_or_glob)
    pq = _require("pyarrow.parquet")
    _check_layout(oracle, pq.read_schema(paths[0]), paths[0])  # fail fast
    leaves = [delayed(_file_counts, pure=True)(p, oracle, columns, batch_size) for p in paths]
    total = _tree_sum(leaves, split_every)
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    ((counts, n),) = dask.compute(total, **kwargs)
    if n == 0:
        raise ValueError(f"the {len(paths)} report file(s) hold no reports")
    return oracle.measurement(counts, n)


def read_layout(paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike]) -> dict | None:
    """The layout metadata of the first report file (oracle, epsilon, d, g, k), or None.

    Files written by :func:`write_reports_parquet` carry it; files from elsewhere do not.
    """
    pq = _require("pyarrow.parquet")
    raw = (pq.read_schema(_resolve_paths(paths_or_glob)[0]).metadata or {}).get(METADATA_KEY)
    return None if raw is None else json.loads(raw)


def oracle_from_files(
    paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike],
    oracle: str | None = None,
    epsilon: float | None = None,
    domain_size: int | None = None,
) -> FrequencyOracle:
    """The oracle of the report files: given values first, then the files' metadata.

    Raises ValueError when a parameter is neither given nor in the metadata.
    """
    from bayesldp.oracles import ORACLES

    meta = read_layout(paths_or_glob) or {}
    name = oracle or meta.get("oracle")
    eps = epsilon if epsilon is not None else meta.get("epsilon")
    d = domain_size if domain_size is not None else meta.get("domain_size")
    missing = [k for k, v in (("oracle", name), ("epsilon", eps), ("d", d)) if v is None]
    if missing:
        raise ValueError(
            f"the report files carry no bayesldp layout metadata; give {', '.join(missing)}"
        )
    key = str(name).upper()
    if key not in ORACLES:
        raise ValueError(f"unknown oracle {name!r}; choose one of {', '.join(ORACLES)}")
    extra = {k: meta[k] for k in ("g", "k") if k in meta and meta.get("oracle") == key}
    return ORACLES[key](float(eps), int(d), **extra)


def read_reports(
    paths_or_glob: str | os.PathLike | Iterable[str | os.PathLike],
    oracle: FrequencyOracle,
) -> np.ndarray:
    """Read report files written by :func:`write_reports_parquet` back into memory.

    For small data and tests: returns the reports in the oracle's own array layout
    (as :meth:`~bayesldp.FrequencyOracle.privatize` makes them), files in name order.
    """
    pq = _require("pyarrow.parquet")
    kind = _kind(oracle)
    parts = []
    for path in _resolve_paths(paths_or_glob):
        table = pq.read_table(path)
        _check_layout(oracle, table.schema, path)
        if kind in ("grr", "hr"):
            parts.append(_int_column(table.column("report").combine_chunks(), "report"))
        elif kind == "olh":
            cols = [_int_column(table.column(c).combine_chunks(), c) for c in ("a", "b", "y")]
            parts.append(np.stack(cols, axis=1))
        elif kind == "ss":
            flat = _list_values(table.column("report").combine_chunks(), "report", oracle.k)
            parts.append(flat.reshape(-1, oracle.k))
        else:
            packed = _unpack(table.column("report").combine_chunks(), "report", oracle.domain_size)
            parts.append(np.unpackbits(packed, axis=1, count=oracle.domain_size).astype(bool))
    return np.concatenate(parts)


def write_reports_parquet(
    oracle: FrequencyOracle,
    values: np.ndarray | Iterable[np.ndarray],
    rng: np.random.Generator,
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
        GRR, HR, OLH, SS, OUE or SUE.
    values : array of int or iterable of arrays
        Users' true values in ``0 .. d-1``: one array (split into ``chunk_size``
        pieces) or an iterable of arrays (each split likewise), so that 1e8 users
        never need to be in memory at once.
    rng : numpy.random.Generator
        Randomness of the privatization. Chunks are privatized in order, each with
        one ``oracle.privatize`` call (OUE/SUE/SS/OLH chunks of more than
        ``2**23 / d`` rows are privatized in blocks of that many rows, to bound memory).
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
    from bayesldp.io import atomic_open

    kind = _kind(oracle)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
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
    block = chunk_size if kind in ("grr", "hr") else max(1, _CELLS // oracle.domain_size)
    written: list[Path] = []
    for arr in values:
        arr = np.asarray(arr)
        for start in range(0, arr.shape[0], chunk_size):
            chunk = arr[start : start + chunk_size]
            reports = np.concatenate(
                [
                    oracle.privatize(chunk[i : i + block], rng)
                    for i in range(0, chunk.shape[0], block)
                ]
            )
            target = out / f"part-{len(written):05d}.parquet"
            with atomic_open(target, "wb") as fh:
                pq.write_table(reports_to_table(oracle, reports), fh, compression=compression)
            written.append(target)
    if not written:
        raise ValueError("values holds no users")
    return written
