"""Datasets from files a user brings: FIMI transactions and CSV columns.

:func:`load_fimi` reads FIMI ``.dat`` transaction files (Kosarak, POS, Retail: one user
per transaction, holding one of its items); :func:`load_csv` reads one value per user
from a column of a CSV file.
"""

from __future__ import annotations

import warnings
from itertools import chain, islice
from pathlib import Path

import numpy as np

from bayesldp._validation import check_int, check_rng
from bayesldp.datasets._common import (
    check_fraction,
    existing_file,
    rng_text,
    sample_without_replacement,
)
from bayesldp.datasets._registry import Dataset

_FIMI_CHUNK = 1 << 16  # lines parsed per step


def _parse_ints(tokens: list[bytes], lines: list[bytes], first_line: int, path: Path) -> np.ndarray:
    try:
        return np.fromiter(map(int, tokens), dtype=np.int64, count=len(tokens))
    except (ValueError, OverflowError):
        for k, line in enumerate(lines):
            for tok in line.split():
                try:
                    int(tok)
                except ValueError:
                    raise ValueError(
                        f"{path}: line {first_line + k}: token {tok.decode(errors='replace')!r} "
                        "is not an integer item id (FIMI .dat files hold space-separated "
                        "integers, one transaction per line)"
                    ) from None
        raise


def load_fimi(
    path: str | Path,
    rng: np.random.Generator | int = 0,
    min_support: int = 0,
) -> Dataset:
    """Load a FIMI ``.dat`` transaction file: one user per transaction, one item each.

    FIMI files (Kosarak, POS, Retail, ... from the Frequent Itemset Mining
    Implementations repository) hold one transaction per line as space-separated
    integer item ids. As in the papers, each transaction is one user, who holds one
    item drawn uniformly from the transaction's items.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.dat`` file. It is read in chunks of 65,536 lines; memory is one int64
        per item occurrence (64 MB for Kosarak's 8 million).
    rng : numpy.random.Generator or int
        Generator or seed for the per-transaction draws.
    min_support : int
        Items occurring in fewer than ``min_support`` transactions are removed from
        the domain before drawing; transactions left empty are dropped (their number
        is reported in ``source``). 0 keeps everything.

    Returns
    -------
    Dataset
        Items are the distinct item ids in the file (with enough support) sorted
        numerically, mapped to ``0 .. d-1``; ``labels`` are the original ids. Items
        that no user drew stay in the domain with count 0.

    Notes
    -----
    Blank lines are skipped (not users). An item repeated within a transaction is
    counted once per occurrence, both for support and for the draw.
    """
    p = existing_file(path)
    min_support = check_int(min_support, "min_support", minimum=0)
    gen = check_rng(rng)
    token_parts: list[np.ndarray] = []
    length_parts: list[np.ndarray] = []
    line_no = 1
    with p.open("rb") as fh:
        while lines := list(islice(fh, _FIMI_CHUNK)):
            split = [line.split() for line in lines]
            length_parts.append(np.fromiter(map(len, split), dtype=np.int64, count=len(split)))
            token_parts.append(_parse_ints(list(chain.from_iterable(split)), lines, line_no, p))
            line_no += len(lines)
    lengths = np.concatenate(length_parts)
    tokens = np.concatenate(token_parts)
    blank = int((lengths == 0).sum())
    lengths = lengths[lengths > 0]
    if lengths.size == 0:
        raise ValueError(f"path {str(p)!r} holds no transactions (only blank lines)")
    items, inverse, support = np.unique(tokens, return_inverse=True, return_counts=True)
    dropped = 0
    if min_support > 0:
        keep_item = support >= min_support
        if not keep_item.any():
            raise ValueError(
                f"min_support={min_support} removes every item (max support {support.max()})"
            )
        keep_tok = keep_item[inverse]
        starts = np.cumsum(lengths) - lengths
        lengths = np.add.reduceat(keep_tok.astype(np.int64), starts)
        dropped = int((lengths == 0).sum())
        lengths = lengths[lengths > 0]
        new_index = np.cumsum(keep_item) - 1
        inverse = new_index[inverse[keep_tok]]
        items = items[keep_item]
    starts = np.cumsum(lengths) - lengths
    chosen = inverse[starts + gen.integers(0, lengths)]
    counts = np.bincount(chosen, minlength=items.size)
    source = (
        f"FIMI file {p.name}: {lengths.size:,} transactions"
        + (f" ({blank} blank lines skipped)" if blank else "")
        + (f", {dropped:,} emptied by min_support={min_support} dropped" if dropped else "")
        + f", {tokens.size:,} item occurrences; one item drawn uniformly per transaction "
        f"({rng_text(rng)})"
    )
    return Dataset(f"fimi:{p.stem}", counts, source, labels=tuple(str(int(i)) for i in items))


def load_csv(
    path: str | Path,
    column: str | int | None = None,
    rng: np.random.Generator | int | None = None,
    *,
    header: bool = True,
    delimiter: str = ",",
    sample_fraction: float = 1.0,
) -> Dataset:
    """Load a CSV file holding one value per user (one row per user).

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.
    column : str or int, optional
        Column name (needs ``header=True``) or 0-based position. Required when the
        file has more than one column.
    rng : numpy.random.Generator or int, optional
        Generator or seed; needed only when ``sample_fraction < 1``.
    header : bool
        Whether the first row holds column names (default True). Set False for a
        bare list of values.
    delimiter : str
        Field separator.
    sample_fraction : float
        Keep a simple random sample (without replacement) of this fraction of rows,
        as the papers kept 1% of IPUMS.

    Returns
    -------
    Dataset
        Items are the distinct values, sorted (numerically if every value is a
        number, else as text), mapped to ``0 .. d-1``; ``labels`` are the values.

    Notes
    -----
    Empty cells (and pandas' default NA strings such as ``NA``) are not users; they are
    dropped with a warning.
    """
    import pandas as pd

    p = existing_file(path)
    frac = check_fraction(sample_fraction, "sample_fraction")
    if frac < 1 and rng is None:
        raise ValueError("rng must be given (a Generator or seed) when sample_fraction < 1")
    if not isinstance(header, bool):
        raise ValueError(f"header must be True or False, got {header!r}")
    if isinstance(column, str) and not header:
        raise ValueError(f"column={column!r} is a name, which needs header=True")
    if (column is not None and not isinstance(column, str | int)) or isinstance(column, bool):
        raise ValueError(f"column must be a name, a position or None, got {column!r}")
    try:
        frame = pd.read_csv(
            p, sep=delimiter, header=0 if header else None, dtype=str, keep_default_na=True
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"path {str(p)!r} holds no data") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"path {str(p)!r} is not a readable CSV: {err}") from None
    cols = list(frame.columns)
    if column is None:
        if len(cols) != 1:
            raise ValueError(
                f"{p.name} has {len(cols)} columns {cols[:10]}; choose one with column="
            )
        series = frame.iloc[:, 0]
    elif isinstance(column, int):
        if not -len(cols) <= column < len(cols):
            raise ValueError(f"column={column} is out of range for {len(cols)} columns")
        series = frame.iloc[:, column]
    else:
        if column not in cols:
            raise ValueError(f"column={column!r} is not among the columns {cols[:20]}")
        series = frame[column]
    series = series.str.strip()
    missing = int((series.isna() | (series == "")).sum())
    values = series[series.notna() & (series != "")]
    if missing:
        warnings.warn(f"{p.name}: {missing} empty/NA values dropped (not users)", stacklevel=2)
    if values.empty:
        raise ValueError(f"path {str(p)!r} holds no values in the chosen column")
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.notna().all():
        uniq, codes = np.unique(numeric.to_numpy(dtype=np.float64), return_inverse=True)
        labels = tuple(str(int(u)) if float(u).is_integer() else repr(float(u)) for u in uniq)
    else:
        uniq, codes = np.unique(values.to_numpy(dtype=str), return_inverse=True)
        labels = tuple(str(u) for u in uniq)
    counts = np.bincount(codes.ravel(), minlength=len(labels))
    note = ""
    if frac < 1:
        counts = sample_without_replacement(counts, frac, check_rng(rng))
        note = f"; {frac:g} of the {values.size:,} rows sampled without replacement"
        note += f" ({rng_text(rng)})"
    source = f"CSV file {p.name}, column {series.name!r}: {values.size:,} values{note}"
    return Dataset(f"csv:{p.stem}", counts, source, labels=labels)
