"""The dataset registry: :class:`Dataset`, :class:`DatasetSpec` and the spec parser.

A dataset is declared once, as a :class:`DatasetSpec` passed to :func:`register_dataset`;
:func:`get_dataset` builds it from a spec string such as ``"zipf:d=64,n=10000"`` and
every list of datasets (the command line's, the figures' notes) derives from the
registry. The built-in datasets are registered by :mod:`bayesldp.datasets`. Datasets of
other packages are registered through the ``bayesldp.datasets`` entry-point group: each
entry point names a module or a callable, which is imported (and called) once, on the
first lookup or listing, and registers its datasets with :func:`register_dataset`.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from bayesldp._validation import check_counts

#: The entry-point group whose entry points register datasets of other packages.
ENTRY_POINT_GROUP = "bayesldp.datasets"


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
        return tuple(inspect.signature(self.builder).parameters)


_DATASETS: dict[str, DatasetSpec] = {}
_plugins = {"loaded": False}


def register_dataset(spec: DatasetSpec | None = None, /, **fields: Any) -> DatasetSpec:
    """Add a dataset to the registry: ``register_dataset(name=..., builder=..., kind=...)``.

    Parameters
    ----------
    spec : DatasetSpec, optional
        A ready declaration; otherwise ``fields`` make one.
    **fields
        The declaration's fields: ``name`` (what specs use), ``builder`` (returns a
        :class:`Dataset`; its keyword arguments are the spec's options), ``kind``
        (``"synthetic"``, ``"real"`` or ``"file"``), ``note`` (what the data are, for
        figure titles), and optionally ``extra`` (the ``bayesldp[EXTRA]`` its packages
        come with) and ``path_argument`` (whether specs name a file first,
        ``"NAME:PATH"``).

    Returns
    -------
    DatasetSpec
        The declaration registered.

    Raises
    ------
    ValueError
        Both or neither of ``spec`` and ``fields``, a field that is missing or unknown, a
        bad ``kind``, or a name that is taken.
    """
    if spec is None:
        try:
            spec = DatasetSpec(**fields)
        except TypeError as err:
            raise ValueError(f"register_dataset: {err}") from None
    elif fields:
        raise ValueError("register_dataset takes a DatasetSpec or its fields, not both")
    if not isinstance(spec, DatasetSpec):
        raise ValueError(f"spec must be a DatasetSpec, got {type(spec).__name__}")
    if spec.name in _DATASETS:
        raise ValueError(f"dataset {spec.name!r} is already registered")
    _DATASETS[spec.name] = spec
    return spec


def _load_plugins() -> None:
    """Import (and call) every ``bayesldp.datasets`` entry point, once per process.

    A plugin that fails to load is skipped with a warning naming it: one broken package
    does not take the other datasets with it.
    """
    if _plugins["loaded"]:
        return
    _plugins["loaded"] = True  # first: a plugin may look datasets up while it registers
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = entry.load()
            if callable(target) and not isinstance(target, ModuleType):
                target()
        except Exception as err:  # a plugin's own error, whatever it is
            warnings.warn(
                f"dataset plugin {entry.name!r} ({entry.value}) failed to load: "
                f"{type(err).__name__}: {err}",
                RuntimeWarning,
                stacklevel=3,
            )


def _registered() -> dict[str, DatasetSpec]:
    """Return the registry, plugins included."""
    _load_plugins()
    return _DATASETS


def list_datasets() -> list[str]:
    """Names :func:`get_dataset` accepts (``fimi`` and ``csv`` take ``:PATH``)."""
    return [f"{k}:PATH" if s.path_argument else k for k, s in _registered().items()]


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
    if name not in _registered():
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(list_datasets())}")
    kwargs: dict[str, Any] = {}
    items = [i for i in (match["kw"] or "").split(",") if i]
    if _registered()[name].path_argument and items and "=" not in items[0]:
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
    entry = _registered()[name]
    if entry.path_argument and "path" not in options:
        raise ValueError(f"dataset {name!r} needs a file: use '{name}:PATH'")
    unknown = sorted(set(options) - set(entry.options()))
    if unknown:
        raise ValueError(
            f"dataset {name!r}: unknown option(s) {unknown}; accepted: {sorted(entry.options())}"
        )
    return entry.builder(**options)


def dataset_spec(spec: str) -> DatasetSpec:
    """Return the declaration of the dataset a spec names, e.g. ``"zipf:d=64"`` -> zipf's.

    Parameters
    ----------
    spec : str
        A dataset spec, as :func:`parse_dataset` reads it.

    Returns
    -------
    DatasetSpec

    Raises
    ------
    ValueError
        The spec does not parse or names no registered dataset.
    """
    return _registered()[parse_dataset(spec)[0]]
