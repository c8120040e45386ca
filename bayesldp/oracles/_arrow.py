"""The Arrow form of reports: encoding, decoding and the oracle recorded in the schema.

Every oracle's reports have an Arrow layout (one row per user; see
:mod:`bayesldp.oracles`), and the table's schema metadata records the oracle's
:meth:`~bayesldp.FrequencyOracle.parameters` as JSON under :data:`ARROW_METADATA_KEY`.
:class:`ArrowCodec` gives every oracle ``to_arrow`` and ``from_arrow`` from the two
per-oracle hooks ``_arrow_arrays`` and ``_from_arrow_arrays``. pyarrow comes with the
``dask`` extra and is imported only when called.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

#: Schema metadata key under which an Arrow table of reports records its oracle.
ARROW_METADATA_KEY = b"bayesldp.reports"
#: Version of the Arrow layout written; files of layout version 1 (the oracle's name
#: recorded under ``oracle``) are still read.
ARROW_LAYOUT_VERSION = 2


def import_pyarrow() -> Any:
    """Return the ``pyarrow`` module, or an ImportError saying how to install it."""
    try:
        import pyarrow
    except ImportError as err:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(
            "pyarrow is needed for the Arrow/Parquet form of reports; "
            "install it with: pip install 'bayesldp[dask]'"
        ) from err
    return pyarrow


def read_arrow_parameters(schema: Any) -> dict[str, Any] | None:
    """Return the oracle parameters recorded in an Arrow schema's metadata, or None.

    Parameters
    ----------
    schema : pyarrow.Schema
        Schema of a table or Parquet file of reports.

    Returns
    -------
    dict or None
        ``name``, ``epsilon``, ``domain_size`` and the oracle's own parameters (files of
        layout version 1 called ``name`` ``oracle``); None if the schema has no
        :data:`ARROW_METADATA_KEY` entry.

    Raises
    ------
    ValueError
        The entry is not a JSON object.
    """
    raw = (schema.metadata or {}).get(ARROW_METADATA_KEY)
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError as err:
        raise ValueError(f"unreadable bayesldp metadata in the schema: {err}") from None
    if not isinstance(meta, dict):
        raise ValueError("unreadable bayesldp metadata in the schema: not a JSON object")
    meta = dict(meta)
    if "name" not in meta and "oracle" in meta:
        meta["name"] = meta.pop("oracle")
    meta.pop("version", None)
    return meta


def arrow_column(data: Any, name: str) -> Any:
    """Column ``name`` of a Table or RecordBatch as one Array, without nulls.

    Parameters
    ----------
    data : pyarrow.Table or pyarrow.RecordBatch
        The reports.
    name : str
        The column.

    Raises
    ------
    ValueError
        No such column, or it holds nulls.
    """
    if name not in data.schema.names:
        raise ValueError(f"no column {name!r}; the columns are {data.schema.names}")
    col = data.column(name)
    if hasattr(col, "combine_chunks"):
        col = col.combine_chunks()
    if col.null_count:
        raise ValueError(f"column {name!r} holds {col.null_count} nulls")
    return col


def arrow_integers(
    arr: Any, name: str, low: int, high: int, dtype: np.dtype | type[np.integer]
) -> np.ndarray:
    """Return an integer Arrow array as ``dtype``, every value in ``[low, high)``.

    Parameters
    ----------
    arr : pyarrow.Array
        Integers of any Arrow integer type.
    name : str
        The column's name, for error messages.
    low, high : int
        The allowed range.
    dtype : numpy.dtype
        The dtype returned.

    Raises
    ------
    ValueError
        Not an integer column, or a value outside the range.
    """
    pa = import_pyarrow()
    if not pa.types.is_integer(arr.type):
        raise ValueError(f"column {name!r} must hold integers, got {arr.type}")
    values = arr.to_numpy(zero_copy_only=False)
    if values.size and (values.min() < low or values.max() >= high):
        raise ValueError(
            f"column {name!r}: values must lie in [{low}, {high}); "
            f"got range [{values.min()}, {values.max()}]"
        )
    return values.astype(dtype, copy=False)


class ArrowCodec(ABC):
    """The Arrow form of an oracle's reports, from two per-oracle hooks.

    A subclass (every :class:`~bayesldp.FrequencyOracle`) provides ``name``,
    ``parameter_names``, :meth:`parameters`, ``check_reports``, ``arrow_columns`` and
    the hooks :meth:`_arrow_arrays` and :meth:`_from_arrow_arrays`.
    """

    name: ClassVar[str]
    parameter_names: ClassVar[tuple[str, ...]]
    #: default Arrow column name(s) of the reports
    arrow_columns: ClassVar[tuple[str, ...]] = ("report",)
    epsilon: float

    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """Return the oracle's name and parameters."""

    @abstractmethod
    def check_reports(self, reports: Any, name: str = "reports") -> np.ndarray:
        """Return ``reports`` if they are exactly this oracle's wire format, else raise."""

    def arrow_metadata(self) -> dict[bytes, bytes]:
        """Return schema metadata recording this oracle (see :func:`read_arrow_parameters`)."""
        meta = {"version": ARROW_LAYOUT_VERSION, **self.parameters()}
        return {ARROW_METADATA_KEY: json.dumps(meta).encode()}

    def check_parameters(self, meta: dict[str, Any] | None, source: str = "the table") -> None:
        """Raise ValueError if recorded parameters (``meta``) are not this oracle's.

        ``None`` (nothing recorded, e.g. a file written elsewhere) passes.

        Parameters
        ----------
        meta : dict or None
            Parameters as :func:`read_arrow_parameters` returns them. Name, domain size and
            the oracle's own parameters must be equal, epsilon equal to a relative 1e-12.
        source : str, default "the table"
            What to call the reports' origin in the error message (e.g. a file path).

        Raises
        ------
        ValueError
            A recorded parameter differs from the oracle's.
        """
        if meta is None:
            return
        mine = self.parameters()
        for key in ("name", "domain_size", *self.parameter_names):
            if meta.get(key) != mine[key]:
                raise ValueError(
                    f"{source} holds reports of oracle {meta.get('name')} with "
                    f"{key}={meta.get(key)!r}, but the oracle has {key}={mine[key]!r}"
                )
        theirs = meta.get("epsilon")
        if not isinstance(theirs, int | float) or not math.isclose(
            theirs, self.epsilon, rel_tol=1e-12
        ):
            raise ValueError(
                f"{source} holds reports made with epsilon={theirs!r}, "
                f"but the oracle has epsilon={self.epsilon!r}"
            )

    def arrow_column_names(self, columns: str | Sequence[str] | None = None) -> tuple[str, ...]:
        """Return the report column names: ``columns`` if given (checked), else the defaults.

        Parameters
        ----------
        columns : str or sequence of str, optional
            One name per column of :attr:`arrow_columns` (a single str for a one-column
            layout); None for the defaults.

        Raises
        ------
        ValueError
            Not as many names as the layout has columns, or a name that is not a str.
        """
        if columns is None:
            return self.arrow_columns
        cols = (columns,) if isinstance(columns, str) else tuple(columns)
        if len(cols) != len(self.arrow_columns) or not all(isinstance(c, str) for c in cols):
            raise ValueError(
                f"columns must name {len(self.arrow_columns)} column(s) for {self.name} "
                f"(default {self.arrow_columns}), got {columns!r}"
            )
        return cols

    def to_arrow(self, reports: Any) -> Any:
        """Encode reports (wire format, checked) as a :class:`pyarrow.Table`.

        The table's schema metadata records :meth:`parameters`.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in this oracle's wire format (checked).

        Returns
        -------
        pyarrow.Table
            One row per user, with the columns :attr:`arrow_columns`.
        """
        pa = import_pyarrow()
        r = self.check_reports(reports)
        table = pa.table(dict(zip(self.arrow_columns, self._arrow_arrays(r, pa), strict=True)))
        return table.replace_schema_metadata(self.arrow_metadata())

    def from_arrow(self, data: Any, columns: str | Sequence[str] | None = None) -> np.ndarray:
        """Decode a :class:`pyarrow.Table` or ``RecordBatch`` of reports into the wire format.

        Parameters
        ----------
        data : pyarrow.Table or pyarrow.RecordBatch
            Reports; if its schema records bayesldp parameters they must be this
            oracle's.
        columns : str or sequence of str, optional
            Report column(s), by default :attr:`arrow_columns`.

        Returns
        -------
        numpy.ndarray
            The reports, checked by ``check_reports``.

        Raises
        ------
        ValueError
            A missing column, nulls, a wrong type or a value outside the format.
        """
        pa = import_pyarrow()
        cols = self.arrow_column_names(columns)
        self.check_parameters(read_arrow_parameters(data.schema))
        arrays = [arrow_column(data, c) for c in cols]
        reports = self._from_arrow_arrays(arrays, cols, pa)
        return self.check_reports(reports, name=f"column(s) {', '.join(map(repr, cols))}")

    @abstractmethod
    def _arrow_arrays(self, r: np.ndarray, pa: Any) -> list:
        """Arrow arrays of checked reports, one per column of :attr:`arrow_columns`."""

    @abstractmethod
    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa: Any) -> np.ndarray:
        """Return reports (wire format, not yet checked) from the columns' Arrow arrays."""
