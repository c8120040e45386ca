r"""Pure LDP frequency oracles: GRR, OUE, SUE (basic RAPPOR), OLH, SS and HR.

Every oracle offers the user side (:meth:`~FrequencyOracle.privatize`), the aggregator
side (:meth:`~FrequencyOracle.support_counts`, :meth:`~FrequencyOracle.aggregate`), a
whole simulated round from true counts (:meth:`~FrequencyOracle.simulate`) and its
wire format, in memory and as Arrow (:meth:`~FrequencyOracle.to_arrow`,
:meth:`~FrequencyOracle.from_arrow`). All of it is vectorised and works block by block
(at most :data:`CHUNK_CELLS` user-item cells at a time), so memory beyond the reports
themselves does not grow with the number of users. Randomness always comes from a
:class:`numpy.random.Generator` passed in.

All six are *pure* oracles (Wang et al., USENIX Security 2017): a user holding ``v``
supports ``v`` with probability ``p`` and supports any other item with probability
``q``, so :class:`~bayesldp.Measurement` and every post-processing method apply.

Wire format
-----------
``privatize(values, rng)`` returns exactly the messages users send, one row per user;
``support_counts`` and ``aggregate`` accept exactly this format (dtype, shape and value
range are checked; anything else is a ``ValueError`` naming ``reports``).

======== ===================================== =========================================
Oracle   Array (``n`` users)                   Meaning
======== ===================================== =========================================
GRR      ``(n,)``, smallest unsigned dtype     the reported item in ``0 .. d-1``
         holding ``d - 1``
HR       ``(n,)``, smallest unsigned dtype     the reported Hadamard column in
         holding ``K - 1``                     ``0 .. K-1``
OUE/SUE  ``(n, ceil(d/8))`` ``uint8``          the ``d`` bits packed 8 per byte in
                                               ``numpy.packbits`` order: item ``j`` is
                                               bit ``7 - j % 8`` of byte ``j // 8``;
                                               padding bits are 0
SS       ``(n, k)``, smallest unsigned dtype   the ``k`` reported items, strictly
         holding ``d - 1``                     increasing (a set: the order is fixed)
OLH      ``(n, 3)`` ``uint32``                 ``a`` in ``[1, P)``, ``b`` in ``[0, P)``
                                               and the bucket ``y`` in ``[0, g)``, for
                                               the hash ``((a v + b) mod P) mod g``,
                                               ``P = 2^31 - 1``
======== ===================================== =========================================

The dtype depends only on the oracle's parameters, never on the data. As Arrow (one
row per user; the oracle's :meth:`~FrequencyOracle.parameters` as JSON under the
schema metadata key :data:`ARROW_METADATA_KEY`): GRR and HR a ``report`` column of
that unsigned type; OUE/SUE ``report`` as ``fixed_size_binary(ceil(d/8))``; SS
``report`` as ``fixed_size_list<uint>[k]``; OLH three ``uint32`` columns ``a``, ``b``,
``y``. :meth:`~FrequencyOracle.from_arrow` also reads reports written elsewhere: any
integer column type, OUE/SUE as a list column of the indices of the set bits, SS as
variable-size lists that all hold ``k`` increasing items. pyarrow comes with the
``dask`` extra and is imported only there.

Exactness
---------
``privatize`` draws exactly the mechanism: every coin uses the exact float64 value of
its probability (:mod:`bayesldp.exact_random`: 64-bit comparisons resolved digit block
by digit block, packed bits from 8 random bits per bit with exact tie resolution,
uniform integers from numpy's unbiased bounded sampler, uniform subsets by exact
rejection). ``p`` and ``q`` are finite and accurate for any finite epsilon
(:func:`exp_ratios`: the textbook forms while :math:`e^\varepsilon` is finite, e.g.
:math:`p = e^\varepsilon / (e^\varepsilon + d - 1)`, then
:math:`p = 1 / (1 + (d-1) e^{-\varepsilon})`); at epsilon 710 or 1000 they round to
1 and 0 and every oracle still works.
"""

from __future__ import annotations

import json
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from bayesldp._validation import (
    as_array,
    check_counts,
    check_domain_size,
    check_epsilon,
    check_int,
    check_values,
)
from bayesldp.exact_random import bernoulli, bernoulli_packed, subsets
from bayesldp.measurement import COUNTS_SUM_TO_N, Measurement, support_count_variance

__all__ = [
    "ARROW_METADATA_KEY",
    "CHUNK_CELLS",
    "GRR",
    "HR",
    "OLH",
    "ORACLES",
    "OUE",
    "SS",
    "SUE",
    "FrequencyOracle",
    "exp_ratios",
    "make_oracle",
    "oracle_class",
    "read_arrow_parameters",
    "register_oracle",
    "rows_per_block",
    "unsigned_dtype",
]

#: Bound on the user-item cells handled at once (rows * cells per row) by every
#: block-wise loop: privatizing, counting, simulating, decoding and writing reports.
CHUNK_CELLS = 1 << 21
#: Schema metadata key under which an Arrow table of reports records its oracle.
ARROW_METADATA_KEY = b"bayesldp.reports"
#: Version of the Arrow layout (1: before the oracles owned it; files of version 1
#: are still read).
ARROW_LAYOUT_VERSION = 2

#: The registered oracles by name (filled by :func:`register_oracle`).
ORACLES: dict[str, type[FrequencyOracle]] = {}


def rows_per_block(cells_per_row: int) -> int:
    """Rows handled at once so that a block touches at most :data:`CHUNK_CELLS` cells.

    Parameters
    ----------
    cells_per_row : int
        User-item cells in one row (values below 1 count as 1).

    Returns
    -------
    int
        ``CHUNK_CELLS // cells_per_row``, at least 1.
    """
    return max(1, CHUNK_CELLS // max(1, int(cells_per_row)))


def _blocks(total: int, rows: int) -> Iterator[slice]:
    for start in range(0, total, rows):
        yield slice(start, min(start + rows, total))


def _units_in_range(counts: np.ndarray, ends: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Item of each unit ``start .. stop-1`` when item ``i`` has ``counts[i]`` units in turn.

    ``ends = cumsum(counts)``; the result is ``np.repeat(arange(d), counts)[start:stop]``
    without building the whole repetition.
    """
    first = int(np.searchsorted(ends, start, side="right"))
    last = int(np.searchsorted(ends, stop - 1, side="right"))
    upper = np.minimum(ends[first : last + 1], stop)
    lower = np.maximum(ends[first : last + 1] - counts[first : last + 1], start)
    return np.repeat(np.arange(first, last + 1), upper - lower)


#: Largest x with a finite math.exp(x) (about 709.78).
_EXP_LIMIT = math.log(sys.float_info.max)


def exp_ratios(x: float, a: float, b: float) -> tuple[float, float]:
    """Return ``(a e^x / (a e^x + b), 1 / (a e^x + b))`` for ``a >= 1``, ``b >= 0``, finite x.

    While ``a e^x`` is finite the textbook forms are used (so results are identical to
    earlier versions); beyond, the same quantities as ``1 / (1 + b e^-x / a)`` and
    ``(e^-x / a) / (1 + b e^-x / a)``, which cannot overflow. Both are within 2 ulps of
    the exact values (checked against 60-digit arithmetic).

    Parameters
    ----------
    x : float
        The exponent, finite (an oracle's epsilon, or a fraction of it).
    a : float
        Factor of ``e^x``, at least 1 (not checked).
    b : float
        Added constant, at least 0 (not checked).

    Returns
    -------
    tuple of float
        ``a e^x / (a e^x + b)`` and ``1 / (a e^x + b)``.
    """
    if x < _EXP_LIMIT - math.log(a) - 1.0:
        e = a * math.exp(x)
        return e / (e + b), 1.0 / (e + b)
    m = math.exp(-x) / a
    return 1.0 / (1.0 + b * m), m / (1.0 + b * m)


def unsigned_dtype(max_value: int) -> np.dtype:
    """Return the smallest unsigned integer dtype holding ``0 .. max_value``.

    Parameters
    ----------
    max_value : int
        Largest value the dtype must hold.

    Raises
    ------
    ValueError
        ``max_value`` does not fit in 64 bits.
    """
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"{max_value} does not fit in 64 bits")


def _binomial_counts(
    x: np.ndarray, n: int, p: float, q: float, rng: np.random.Generator
) -> np.ndarray:
    """``Binomial(x_v, p) + Binomial(n - x_v, q)`` for every item: independent supports."""
    return rng.binomial(x, p) + rng.binomial(n - x, q)


def _require_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )
    return rng


def _pyarrow():
    try:
        import pyarrow
    except ImportError as err:  # pragma: no cover - exercised in a subprocess test
        raise ImportError(
            "pyarrow is needed for the Arrow/Parquet form of reports; "
            "install it with: pip install 'bayesldp[dask]'"
        ) from err
    return pyarrow


def register_oracle(cls: type[FrequencyOracle]) -> type[FrequencyOracle]:
    """Class decorator adding a :class:`FrequencyOracle` subclass to :data:`ORACLES`.

    The class's ``name`` is its key and ``parameter_names`` lists the keyword
    parameters its constructor accepts beyond ``epsilon`` and ``domain_size``.

    Parameters
    ----------
    cls : type
        A :class:`FrequencyOracle` subclass whose ``name`` is not registered yet.

    Returns
    -------
    type
        ``cls`` itself.

    Raises
    ------
    ValueError
        ``cls`` is not a FrequencyOracle subclass, or its name is already taken (names
        are compared ignoring case, as :func:`oracle_class` looks them up).
    """
    if not (isinstance(cls, type) and issubclass(cls, FrequencyOracle)):
        raise ValueError(f"only FrequencyOracle subclasses can be registered, got {cls!r}")
    if any(key.upper() == cls.name.upper() for key in ORACLES):
        raise ValueError(f"an oracle named {cls.name!r} is already registered")
    ORACLES[cls.name] = cls
    if cls.counts_sum_to_n:  # Measurement checks it (it cannot import this module)
        COUNTS_SUM_TO_N.add(cls.name.upper())
    return cls


def oracle_class(name: str, default: type[FrequencyOracle] | None = None) -> type[FrequencyOracle]:
    """Return the registered oracle class called ``name`` (case-insensitive).

    Facts about an oracle (its likelihood, how its counts are simulated, the variance
    of a set's summed counts) are class attributes and class methods, so they are asked
    of the class: ``oracle_class(m.oracle, FrequencyOracle).likelihood_kind``.

    Parameters
    ----------
    name : str
        A registered name: ``"GRR"``, ``"OUE"``, ``"SUE"``, ``"OLH"``, ``"SS"``,
        ``"HR"`` or one added with :func:`register_oracle`.
    default : type, optional
        Returned for a name no oracle is registered under (e.g. a Measurement's
        ``"custom"``: pass :class:`FrequencyOracle` for its generic facts); by default
        such a name is an error.

    Returns
    -------
    type
        The :class:`FrequencyOracle` subclass (or ``default``).

    Raises
    ------
    ValueError
        Unknown ``name`` and no ``default``.

    Examples
    --------
    >>> oracle_class("grr").likelihood_kind
    'multinomial'
    """
    key = str(name).upper()
    for registered, cls in ORACLES.items():
        if registered.upper() == key:
            return cls
    if default is not None:
        return default
    raise ValueError(f"unknown oracle {name!r}; name must be one of {', '.join(ORACLES)}")


def make_oracle(name: str, epsilon: float, domain_size: int, **params: Any) -> FrequencyOracle:
    """Build a registered oracle by name (case-insensitive).

    Parameters
    ----------
    name : str
        ``"GRR"``, ``"OUE"``, ``"SUE"``, ``"OLH"``, ``"SS"`` or ``"HR"``.
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items.
    **params
        The oracle's own parameters: ``g`` (OLH), ``k`` (SS).

    Returns
    -------
    FrequencyOracle

    Raises
    ------
    ValueError
        Unknown oracle or a parameter the oracle does not accept (both named).

    Examples
    --------
    >>> make_oracle("olh", 1.0, 1024, g=5).g
    5
    """
    cls = oracle_class(name)
    unknown = sorted(set(params) - set(cls.parameter_names))
    if unknown:
        accepts = ", ".join(cls.parameter_names) or "no other parameter"
        raise ValueError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for oracle {cls.name}; "
            f"it accepts epsilon, domain_size and {accepts}"
        )
    return cls(epsilon, domain_size, **params)


def read_arrow_parameters(schema) -> dict[str, Any] | None:
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


def _arrow_column(data, name: str):
    """Column ``name`` of a Table or RecordBatch as one Array, without nulls."""
    if name not in data.schema.names:
        raise ValueError(f"no column {name!r}; the columns are {data.schema.names}")
    col = data.column(name)
    if hasattr(col, "combine_chunks"):
        col = col.combine_chunks()
    if col.null_count:
        raise ValueError(f"column {name!r} holds {col.null_count} nulls")
    return col


def _arrow_integers(
    arr, name: str, low: int, high: int, dtype: np.dtype | type[np.integer]
) -> np.ndarray:
    """Return an integer Arrow array as ``dtype``, every value in ``[low, high)``."""
    pa = _pyarrow()
    if not pa.types.is_integer(arr.type):
        raise ValueError(f"column {name!r} must hold integers, got {arr.type}")
    values = arr.to_numpy(zero_copy_only=False)
    if values.size and (values.min() < low or values.max() >= high):
        raise ValueError(
            f"column {name!r}: values must lie in [{low}, {high}); "
            f"got range [{values.min()}, {values.max()}]"
        )
    return values.astype(dtype, copy=False)


class FrequencyOracle(ABC):
    """Common interface of the pure frequency oracles.

    Parameters
    ----------
    epsilon : float
        Privacy budget, finite and > 0.
    domain_size : int
        Number of items ``d``; values are indices ``0 .. d-1``.

    Notes
    -----
    Subclasses are registered with :func:`register_oracle`; they define ``name``,
    ``parameter_names``, ``p``, ``q``, the wire format (``report_dtype``,
    ``report_shape``, ``_privatize_block``, ``_check_values``, ``_block_counts``) and
    its Arrow form (``_arrow_arrays``, ``_from_arrow_arrays``).

    What post-processing needs to know about the oracle is declared here once, with
    defaults for any pure oracle whose reports support items independently, and
    overridden where an oracle differs: ``likelihood_kind``, ``counts_sum_to_n``,
    :meth:`count_sum_variances` (exact variance of a set's summed support counts) and
    :meth:`bootstrap_counts` with its ``bootstrap_simulation`` label. Callers ask the
    class of a Measurement's oracle through :func:`oracle_class`.
    """

    name: ClassVar[str] = "FO"
    #: keyword parameters of the constructor beyond epsilon and domain_size
    parameter_names: ClassVar[tuple[str, ...]] = ()
    #: default Arrow column name(s) of the reports
    arrow_columns: ClassVar[tuple[str, ...]] = ("report",)
    #: whether :meth:`simulate` is exact by default without per-user work
    exact_counts_simulation: ClassVar[bool] = True
    #: the support-count likelihood ``"auto"`` means: ``"multinomial"`` when every report
    #: supports exactly one item (cell probabilities ``p + (d-1) q = 1``), else
    #: ``"binomial"`` (each count's exact marginal)
    likelihood_kind: ClassVar[str] = "binomial"
    #: every report supports exactly one item, so the support counts sum to ``n``
    #: (:class:`~bayesldp.Measurement` refuses counts that do not)
    counts_sum_to_n: ClassVar[bool] = False
    #: how exact :meth:`bootstrap_counts` is (recorded in a bootstrap's ``info``)
    bootstrap_simulation: ClassVar[str] = "binomial marginals"

    def __init__(self, epsilon: float, domain_size: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.domain_size = check_domain_size(domain_size)

    def parameters(self) -> dict[str, Any]:
        """Return the oracle's name and parameters.

        ``make_oracle(**oracle.parameters())`` rebuilds the oracle.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "epsilon": self.epsilon,
            "domain_size": self.domain_size,
        }
        for key in self.parameter_names:
            out[key] = getattr(self, key)
        return out

    def __repr__(self) -> str:
        """Return ``Name(epsilon=..., domain_size=..., ...)`` from :meth:`parameters`."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items() if k != "name")
        return f"{type(self).__name__}({args})"

    @property
    @abstractmethod
    def p(self) -> float:
        """Probability that a user's report supports the user's own value."""

    @property
    @abstractmethod
    def q(self) -> float:
        """Probability that a user's report supports a given other value."""

    def variance(self, frequencies) -> np.ndarray:
        """Exact variance of each unbiased estimate for ``n = 1``; divide by ``n``.

        Parameters
        ----------
        frequencies : array_like
            True frequencies :math:`f_v`.

        Returns
        -------
        numpy.ndarray
            :math:`(q(1-q) + f_v (p-q)(1-p-q)) / (p-q)^2`.
        """
        f = np.asarray(frequencies, dtype=float)
        return support_count_variance(1, self.p, self.q, f) / (self.p - self.q) ** 2

    def approx_variance(self, n: int = 1) -> float:
        """Return the papers' uniform approximation :math:`q(1-q) / (n (p-q)^2)`.

        Parameters
        ----------
        n : int, default 1
            Number of users; the default gives the variance per user.

        Returns
        -------
        float
            Approximate variance of a frequency estimate (a proportion, not a count).
        """
        return self.q * (1 - self.q) / (n * (self.p - self.q) ** 2)

    def measurement(self, support_counts, n: int) -> Measurement:
        """Wrap support counts from ``n`` users of this oracle as a Measurement.

        Parameters
        ----------
        support_counts : array_like of int
            Support count of each item, length ``d``, each in ``[0, n]``.
        n : int
            Number of users who reported.

        Returns
        -------
        Measurement
            With this oracle's ``p``, ``q``, name and epsilon.
        """
        return Measurement.from_support_counts(
            support_counts, n, self.p, self.q, oracle=self.name, epsilon=self.epsilon
        )

    # -- facts for post-processing ---------------------------------------------------

    @classmethod
    def count_sum_variances(
        cls, m: Measurement, masks: np.ndarray, frequencies: np.ndarray, x_set: np.ndarray
    ) -> np.ndarray:
        r"""Exact variance of each set's summed support counts, for users fixed.

        The default treats supports as independent across items given the users'
        values: :math:`a\,n\,q(1-q) + x_S\,(p-q)(1-p-q)` for a set of ``a`` items
        held by :math:`x_S` users (:func:`~bayesldp.measurement.support_count_variance`;
        exact for OUE and SUE). Oracles whose supports are dependent override the
        formula, ``_count_sum_variances(m, a, masks, frequencies, x_set)`` with ``a``
        the set sizes as floats. An empty set has variance 0. See
        :func:`bayesldp.intervals.subset_count_variances`, which checks the arguments.

        Parameters
        ----------
        m : Measurement
            Gives ``n``, ``p``, ``q`` and ``d``.
        masks : numpy.ndarray of bool
            The sets, shape ``(Q, d)``.
        frequencies : numpy.ndarray
            Frequency of each item (only oracles with item-dependent covariances use it).
        x_set : numpy.ndarray
            Users holding an item of each set, length ``Q``.

        Returns
        -------
        numpy.ndarray
            One variance per set.
        """
        a = masks.sum(axis=1).astype(np.float64)
        return np.where(a > 0, cls._count_sum_variances(m, a, masks, frequencies, x_set), 0.0)

    @classmethod
    def _count_sum_variances(cls, m, a, masks, frequencies, x_set) -> np.ndarray:
        """Supports independent across items (see :meth:`count_sum_variances`)."""
        return support_count_variance(m.n, m.p, m.q, x_set, items=a)

    @classmethod
    def bootstrap_counts(
        cls, m: Measurement, x: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        r"""One parametric-bootstrap replicate of support counts for user counts ``x``.

        The default draws :math:`\mathrm{Bin}(x_v, p) + \mathrm{Bin}(n - x_v, q)`: the
        exact joint law when supports are independent across items (OUE, SUE), else
        each count's exact marginal (``bootstrap_simulation`` says which).

        Parameters
        ----------
        m : Measurement
            Gives ``n``, ``p`` and ``q``.
        x : numpy.ndarray of int
            True user counts of the ``d`` items, summing to ``n`` (not checked).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        numpy.ndarray of int
            Support count of each item.
        """
        return _binomial_counts(x, m.n, m.p, m.q, rng)

    # -- wire format -----------------------------------------------------------------

    @property
    @abstractmethod
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports (fixed by the oracle's parameters)."""

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one user's report (``()`` for one integer)."""
        return ()

    @property
    def report_nbytes(self) -> int:
        """Bytes of one user's report on the wire."""
        return int(self.report_dtype.itemsize * math.prod(self.report_shape))

    @property
    def block_rows(self) -> int:
        """Users privatized per block (from :data:`CHUNK_CELLS`).

        ``privatize(values, rng)`` equals the concatenation of ``privatize`` calls on
        consecutive pieces of ``values`` whose lengths are multiples of this (the same
        blocks draw the same random numbers in the same order).
        """
        return rows_per_block(self._privatize_cells)

    # Cells one user costs when privatizing and when counting (they set block sizes).
    # A user-item cell of the bit-based oracles takes 1-4 bytes of scratch; a user of
    # the one-integer oracles (GRR, HR, OLH) takes about 40 bytes, so counts as 16.
    @property
    def _privatize_cells(self) -> int:
        return 16

    @property
    def _count_cells(self) -> int:
        return 1

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        """Perturb each user's value (the user side), block by block.

        Parameters
        ----------
        values : array_like of int
            One value in ``[0, d)`` per user.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        numpy.ndarray
            The reports as transmitted: shape ``(n, *report_shape)``, dtype
            ``report_dtype`` (see the module docstring).
        """
        rng = _require_generator(rng)
        arr = as_array(values, "values")
        check_values(arr[:0] if arr.ndim == 1 else arr, self.domain_size)  # shape, dtype
        out = np.empty((arr.size, *self.report_shape), dtype=self.report_dtype)
        for sl in _blocks(arr.size, self.block_rows):
            # values are converted block by block: no copy of all of them
            self._privatize_block(check_values(arr[sl], self.domain_size), rng, out[sl])
        return out

    @abstractmethod
    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        """Write the reports of users holding ``v`` into ``out``."""

    def check_reports(self, reports, name: str = "reports") -> np.ndarray:
        """Return ``reports`` if they are exactly this oracle's wire format, else raise.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports as :meth:`privatize` returns them.
        name : str
            What to call them in error messages.

        Raises
        ------
        ValueError
            Another dtype or shape, or a value outside the format's range.
        """
        r = as_array(reports, name)
        want = (r.shape[0] if r.ndim else 0, *self.report_shape)
        if r.dtype != self.report_dtype or r.ndim != len(want) or r.shape != want:
            raise ValueError(
                f"{name} must be a {self.report_dtype} array of shape "
                f"(n{''.join(f', {s}' for s in self.report_shape)}) for {self!r}, "
                f"got {r.dtype} of shape {r.shape}"
            )
        for sl in _blocks(r.shape[0], rows_per_block(math.prod(self.report_shape))):
            self._check_values(r[sl], name)
        return r

    @abstractmethod
    def _check_values(self, r: np.ndarray, name: str) -> None:
        """Raise ValueError naming ``name`` if a value is outside the format's range."""

    def support_counts(self, reports) -> np.ndarray:
        """Count, for every item, how many reports support it.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in this oracle's wire format (checked).

        Returns
        -------
        numpy.ndarray
            ``int64`` counts of length ``d``.
        """
        r = self.check_reports(reports)
        counts = np.zeros(self.domain_size, dtype=np.int64)
        for sl in _blocks(r.shape[0], rows_per_block(self._count_cells)):
            counts += self._block_counts(r[sl])
        return counts

    @abstractmethod
    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        """Support counts of a block of checked reports."""

    def supports(self, reports, items) -> np.ndarray:
        """Which of ``items`` each report supports.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in this oracle's wire format (checked).
        items : array_like of int
            Items in ``[0, d)``.

        Returns
        -------
        numpy.ndarray
            Boolean array of shape ``(n, len(items))``; row sums over all items are the
            per-report contributions to :meth:`support_counts`.
        """
        r = self.check_reports(reports)
        idx = check_values(items, self.domain_size, "items").astype(np.int64)
        return self._supports(r, idx)

    @abstractmethod
    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Boolean ``(n, len(items))`` support matrix of checked reports."""

    def aggregate(self, reports) -> Measurement:
        """Aggregate user reports (wire format) into a :class:`~bayesldp.Measurement`.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports of at least one user in this oracle's wire format (checked).

        Returns
        -------
        Measurement
        """
        r = self.check_reports(reports)
        if r.shape[0] == 0:
            raise ValueError("reports must hold at least one user's report")
        return self.measurement(self.support_counts(r), int(r.shape[0]))

    # -- simulation ------------------------------------------------------------------

    def simulate(self, true_counts, rng: np.random.Generator, *, exact: bool = True) -> Measurement:
        """Run a whole round: users with these true counts report, the server aggregates.

        Parameters
        ----------
        true_counts : array_like of int
            Number of users holding each item (length ``d``).
        rng : numpy.random.Generator
            Source of randomness.
        exact : bool, default True
            For GRR, OUE and SUE the support counts are drawn exactly from their joint
            distribution without per-user work, and this flag has no effect. For OLH,
            SS and HR, ``exact=True`` privatizes every user (block by block);
            ``exact=False`` draws each count as
            ``Binomial(x_v, p) + Binomial(n - x_v, q)``: the exact marginal of each
            count, ignoring the (weak) dependence between items.

        Returns
        -------
        Measurement
        """
        rng = _require_generator(rng)
        x = check_counts(true_counts, "true_counts", length=self.domain_size)
        n = int(x.sum())
        if n == 0:
            raise ValueError("true_counts must sum to at least one user")
        if self.exact_counts_simulation or not exact:
            counts = self._simulate_counts(x, rng)
        else:
            # Users report independently, so they can be taken in item order.
            counts = np.zeros(self.domain_size, dtype=np.int64)
            ends = np.cumsum(x)
            rows = rows_per_block(max(self._privatize_cells, self._count_cells))
            for sl in _blocks(n, rows):
                values = _units_in_range(x, ends, sl.start, sl.stop)
                counts += self.support_counts(self.privatize(values, rng))
        return self.measurement(counts, n)

    def _simulate_counts(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Independent-bit draw ``Binomial(x_v, p) + Binomial(n - x_v, q)``."""
        return _binomial_counts(x, int(x.sum()), self.p, self.q, rng)

    # -- Arrow -----------------------------------------------------------------------

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

    def to_arrow(self, reports):
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
        pa = _pyarrow()
        r = self.check_reports(reports)
        table = pa.table(dict(zip(self.arrow_columns, self._arrow_arrays(r, pa), strict=True)))
        return table.replace_schema_metadata(self.arrow_metadata())

    def from_arrow(self, data, columns: str | Sequence[str] | None = None) -> np.ndarray:
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
            The reports, checked by :meth:`check_reports`.

        Raises
        ------
        ValueError
            A missing column, nulls, a wrong type or a value outside the format.
        """
        pa = _pyarrow()
        cols = self.arrow_column_names(columns)
        self.check_parameters(read_arrow_parameters(data.schema))
        arrays = [_arrow_column(data, c) for c in cols]
        reports = self._from_arrow_arrays(arrays, cols, pa)
        return self.check_reports(reports, name=f"column(s) {', '.join(map(repr, cols))}")

    @abstractmethod
    def _arrow_arrays(self, r: np.ndarray, pa) -> list:
        """Arrow arrays of checked reports, one per column of :attr:`arrow_columns`."""

    @abstractmethod
    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa) -> np.ndarray:
        """Return reports (wire format, not yet checked) from the columns' Arrow arrays."""


class _OneInteger(FrequencyOracle):
    """Reports of one unsigned integer below ``self._report_bound`` per user."""

    @property
    def _report_bound(self) -> int:
        return self.domain_size

    @property
    def report_dtype(self) -> np.dtype:
        return unsigned_dtype(self._report_bound - 1)

    def _check_values(self, r: np.ndarray, name: str) -> None:
        if r.max() >= self._report_bound:
            raise ValueError(
                f"{name} must lie in [0, {self._report_bound}) for {self.name}; "
                f"got maximum {r.max()}"
            )

    def _arrow_arrays(self, r, pa):
        return [pa.array(r)]

    def _from_arrow_arrays(self, arrays, names, pa):
        return _arrow_integers(arrays[0], names[0], 0, self._report_bound, self.report_dtype)


def _bincount(r: np.ndarray, length: int) -> np.ndarray:
    if r.dtype == np.uint64:
        r = r.astype(np.intp)
    return np.bincount(r.reshape(-1), minlength=length).astype(np.int64, copy=False)


@register_oracle
class GRR(_OneInteger):
    r"""Generalized randomized response (direct encoding).

    A user reports the true value with probability :math:`p = e^\varepsilon /
    (e^\varepsilon + d - 1)` and each other value with probability
    :math:`q = 1 / (e^\varepsilon + d - 1)`. Reports: one unsigned integer per user
    (the smallest dtype holding ``d - 1``).
    """

    name = "GRR"
    likelihood_kind = "multinomial"
    counts_sum_to_n = True
    bootstrap_simulation = "exact (GRR mixture form)"

    @classmethod
    def _count_sum_variances(cls, m, a, masks, frequencies, x_set) -> np.ndarray:
        r"""One item per report: :math:`x_S \pi_1(1-\pi_1) + (n - x_S) \pi_0(1-\pi_0)`.

        A user supports the set with probability :math:`\pi_1 = p + (a-1)q` if it holds
        an item of the set, else :math:`\pi_0 = a q`.
        """
        n, p, q = m.n, m.p, m.q
        pin, pout = p + (a - 1) * q, a * q
        return x_set * pin * (1 - pin) + (n - x_set) * pout * (1 - pout)

    @classmethod
    def bootstrap_counts(
        cls, m: Measurement, x: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        r"""One replicate of GRR's support counts for user counts ``x``, exactly.

        A user reports its own value with probability :math:`p - q` and otherwise a
        value uniform over all ``d`` (the same law, since :math:`p = (p - q) + q` and
        :math:`q = 0 + q`), so the counts are :math:`\mathrm{Bin}(x_v, p-q)` plus one
        multinomial of the rest over ``d`` cells.

        Parameters
        ----------
        m, x, rng
            As in :meth:`FrequencyOracle.bootstrap_counts`.
        """
        own = rng.binomial(x, m.p - m.q)
        return own + rng.multinomial(m.n - int(own.sum()), np.full(x.size, 1.0 / x.size))

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + d - 1)` of the true value."""
        return exp_ratios(self.epsilon, 1.0, self.domain_size - 1)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^\varepsilon + d - 1)` of reporting a given other value."""
        return exp_ratios(self.epsilon, 1.0, self.domain_size - 1)[1]

    def _privatize_block(self, v, rng, out) -> None:
        d = self.domain_size
        if d == 1:
            out[:] = 0
            return
        keep = bernoulli(self.p, v.size, rng)
        other = rng.integers(0, d - 1, size=v.size, dtype=np.int64)
        other += other >= v  # uniform over the d - 1 other values
        np.copyto(out, np.where(keep, v, other), casting="unsafe")

    def _supports(self, r, items):
        return r.reshape(-1)[:, None] == items[None, :]

    def _block_counts(self, r):
        return _bincount(r, self.domain_size)

    def _simulate_counts(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Exact: keepers stay; each liar from v lands uniformly on the d - 1 others.
        # Liars are taken CHUNK_CELLS at a time (their origins found by bisection).
        d = self.domain_size
        kept = rng.binomial(x, self.p)
        if d == 1:
            return kept
        counts = kept
        liars = x - kept
        ends = np.cumsum(liars)
        for sl in _blocks(int(ends[-1]), CHUNK_CELLS):
            origin = _units_in_range(liars, ends, sl.start, sl.stop)
            dest = rng.integers(0, d - 1, size=origin.size, dtype=np.int64)
            dest += dest >= origin
            if d <= 4 * origin.size:
                counts += np.bincount(dest, minlength=d)
            else:  # a length-d bincount per block would cost more than the block
                np.add.at(counts, dest, 1)
        return counts


class _UnaryEncoding(FrequencyOracle):
    """Unary encoding: each user reports ``d`` bits, packed 8 per byte.

    Bit ``v`` is 1 with probability ``p`` for the user's own value and ``q`` for every
    other value, independently. Reports: ``uint8`` of shape ``(n, ceil(d/8))`` in
    ``numpy.packbits`` order (item ``j`` is bit ``7 - j % 8`` of byte ``j // 8``);
    padding bits are 0. ``numpy.unpackbits(reports, axis=1, count=d)`` gives the bits.
    """

    bootstrap_simulation = "exact"  # the bits are independent: the binomials are exact

    @property
    def report_dtype(self) -> np.dtype:
        return np.dtype(np.uint8)

    @property
    def report_shape(self) -> tuple[int, ...]:
        return (-(-self.domain_size // 8),)

    @property
    def _pad_mask(self) -> int:
        """Bits of the last byte that hold items (the rest are padding)."""
        used = self.domain_size - 8 * (self.report_shape[0] - 1)
        return (0xFF << (8 - used)) & 0xFF

    @property
    def _privatize_cells(self) -> int:
        return self.domain_size

    @property
    def _count_cells(self) -> int:
        return self.domain_size

    def _privatize_block(self, v, rng, out) -> None:
        rows, width = out.shape
        out[:] = bernoulli_packed(self.q, rows * width, rng).reshape(rows, width)
        out[:, -1] &= self._pad_mask
        own = bernoulli(self.p, rows, rng)
        byte = v >> 3
        bit = (0x80 >> (v & 7)).astype(np.uint8)
        idx = np.arange(rows)
        cur = out[idx, byte]
        out[idx, byte] = np.where(own, cur | bit, cur & ~bit)

    def _check_values(self, r, name) -> None:
        pad = self._pad_mask
        if pad != 0xFF and np.any(r[:, -1] & (~pad & 0xFF)):
            raise ValueError(f"{name}: padding bits beyond item {self.domain_size - 1} must be 0")

    def _supports(self, r, items):
        byte = r[:, items >> 3]
        return (byte & (0x80 >> (items & 7)).astype(np.uint8)[None, :]) != 0

    def _block_counts(self, r):
        bits = np.unpackbits(r, axis=1, count=self.domain_size)
        return bits.sum(axis=0, dtype=np.int64)

    def _arrow_arrays(self, r, pa):
        width = self.report_shape[0]
        buf = pa.py_buffer(np.ascontiguousarray(r))
        return [pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), r.shape[0], [None, buf])]

    def _from_arrow_arrays(self, arrays, names, pa):
        arr, name = arrays[0], names[0]
        d, width = self.domain_size, self.report_shape[0]
        if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            return self._pack_indices(arr, name, pa)
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

    def _pack_indices(self, arr, name, pa) -> np.ndarray:
        """Convert a list column of set-bit indices (files from elsewhere) to packed bits."""
        d, width = self.domain_size, self.report_shape[0]
        import pyarrow.compute as pc

        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        idx = _arrow_integers(arr.flatten(), name, 0, d, np.int64)
        out = np.empty((len(arr), width), dtype=np.uint8)
        ends = np.cumsum(lengths)
        for sl in _blocks(len(arr), rows_per_block(d)):
            lo = int(ends[sl.start - 1]) if sl.start else 0
            hi = int(ends[sl.stop - 1])
            rows = np.repeat(np.arange(sl.stop - sl.start), lengths[sl])
            bits = np.zeros((sl.stop - sl.start, d), dtype=bool)
            bits[rows, idx[lo:hi]] = True
            if np.count_nonzero(bits) != hi - lo:
                raise ValueError(f"column {name!r}: a report lists an item twice")
            out[sl] = np.packbits(bits, axis=1)
        return out


@register_oracle
class OUE(_UnaryEncoding):
    r"""Optimized unary encoding: :math:`p = 1/2`, :math:`q = 1/(e^\varepsilon + 1)`.

    Reports: the ``d`` bits packed, ``uint8`` of shape ``(n, ceil(d/8))``.
    """

    name = "OUE"

    @property
    def p(self) -> float:
        """Probability 1/2 that the bit of the user's own value is 1."""
        return 0.5

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^\varepsilon + 1)` that the bit of another item is 1."""
        return exp_ratios(self.epsilon, 1.0, 1.0)[1]


@register_oracle
class SUE(_UnaryEncoding):
    r"""Symmetric unary encoding (basic RAPPOR).

    :math:`p = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`, :math:`q = 1 - p`.
    Reports: the ``d`` bits packed, ``uint8`` of shape ``(n, ceil(d/8))``.
    """

    name = "SUE"

    @property
    def p(self) -> float:
        r"""Probability :math:`e^{\varepsilon/2}/(e^{\varepsilon/2}+1)` that the own bit is 1."""
        return exp_ratios(self.epsilon / 2, 1.0, 1.0)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^{\varepsilon/2} + 1)` that the bit of another item is 1."""
        return exp_ratios(self.epsilon / 2, 1.0, 1.0)[1]


#: The Mersenne prime of OLH's hash family.
_MERSENNE = (1 << 31) - 1


@register_oracle
class OLH(FrequencyOracle):
    r"""Optimized local hashing.

    Each user draws a hash :math:`h(v) = ((a v + b) \bmod P) \bmod g` from a
    universal family (``a`` uniform in ``[1, P)``, ``b`` in ``[0, P)``,
    :math:`P = 2^{31} - 1`, :math:`g = \operatorname{round}(e^\varepsilon + 1)`),
    hashes the value, and perturbs the hash with GRR over ``g`` buckets. Reports:
    ``uint32`` of shape ``(n, 3)``, the columns ``a``, ``b`` and the bucket ``y``.

    :math:`p = e^\varepsilon / (e^\varepsilon + g - 1)`, and ``q`` is the exact
    support probability of another item under this family,
    :math:`q = c p + (1 - c)(1 - p)/(g - 1)` with ``c`` the probability that two items
    collide (:attr:`collision_probability`, :math:`1/g - O(1/P)`; the papers' ideal
    hash has :math:`c = 1/g` and so :math:`q = 1/g`).

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items, at most ``P`` (the family separates only ``P`` items).
    g : int, optional
        Number of buckets, ``2 <= g <= P``. By default
        ``round(e^epsilon + 1)``, capped at :attr:`max_default_g` (from epsilon 11.1
        on): beyond that OLH's variance, about ``1/g``, is far below GRR's anyway.

    Notes
    -----
    Aggregation costs ``O(n d)`` hash evaluations, done in blocks.
    """

    name = "OLH"
    parameter_names = ("g",)
    arrow_columns = ("a", "b", "y")
    exact_counts_simulation = False
    #: the prime of the hash family (a class attribute so that tests can enumerate it)
    prime: ClassVar[int] = _MERSENNE
    #: cap on the default number of buckets
    max_default_g: ClassVar[int] = 1 << 16

    def __init__(self, epsilon: float, domain_size: int, g: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        if self.domain_size > self.prime:
            raise ValueError(
                f"domain_size must be at most {self.prime} for OLH (the hash family "
                f"separates only that many items), got {self.domain_size}"
            )
        if g is None:
            if self.epsilon >= math.log(self.max_default_g):
                g = self.max_default_g
            else:
                g = min(self.max_default_g, max(2, round(math.exp(self.epsilon) + 1)))
        self.g = check_int(g, "g", minimum=2, maximum=self.prime)

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + g - 1)` of the true bucket."""
        return exp_ratios(self.epsilon, 1.0, self.g - 1)[0]

    @property
    def collision_probability(self) -> float:
        r"""Probability that two distinct items share a bucket under a random hash.

        For ``u != v`` the map ``(a, b) -> (a u + b, a v + b) mod P`` is a bijection
        onto the pairs of distinct residues, so ``c`` counts the pairs ``r != s`` with
        ``r = s (mod g)``: with ``n_j`` residues in class ``j``,
        :math:`c = \sum_j n_j (n_j - 1) / (P (P - 1))`.
        """
        per, extra = divmod(self.prime, self.g)
        pairs = extra * (per + 1) * per + (self.g - extra) * per * (per - 1)
        return float(Fraction(pairs, self.prime * (self.prime - 1)))

    @property
    def q(self) -> float:
        r"""Probability :math:`c p + (1 - c)(1 - p)/(g - 1)` of supporting another item."""
        other = exp_ratios(self.epsilon, 1.0, self.g - 1)[1]  # (1 - p) / (g - 1)
        c = self.collision_probability
        return c * self.p + (1.0 - c) * other

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, ``uint32``."""
        return np.dtype(np.uint32)

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one report, ``(3,)``: the columns ``a``, ``b`` and ``y``."""
        return (3,)

    @property
    def _count_cells(self) -> int:
        return self.domain_size

    def hash(self, a, b, values) -> np.ndarray:
        """Bucket of ``values`` under the hashes ``(a, b)`` (broadcasting).

        Parameters
        ----------
        a, b : array_like of int
            Hash coefficients, ``a`` in ``[1, P)`` and ``b`` in ``[0, P)`` (not checked).
        values : array_like of int
            Items to hash; broadcast against ``a`` and ``b``.

        Returns
        -------
        numpy.ndarray of int64
            ``((a v + b) mod P) mod g``, in ``[0, g)``.
        """
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        return ((a * np.asarray(values, dtype=np.int64) + b) % self.prime) % self.g

    def _privatize_block(self, v, rng, out) -> None:
        a = rng.integers(1, self.prime, size=v.size, dtype=np.int64)
        b = rng.integers(0, self.prime, size=v.size, dtype=np.int64)
        h = self.hash(a, b, v)
        keep = bernoulli(self.p, v.size, rng)
        other = rng.integers(0, self.g - 1, size=v.size, dtype=np.int64)
        other += other >= h
        out[:, 0] = a
        out[:, 1] = b
        out[:, 2] = np.where(keep, h, other)

    def _check_values(self, r, name) -> None:
        for col, (label, low, high) in enumerate(
            (("a", 1, self.prime), ("b", 0, self.prime), ("y", 0, self.g))
        ):
            lo, hi = r[:, col].min(), r[:, col].max()
            if lo < low or hi >= high:
                raise ValueError(
                    f"{name}: OLH column {col} ({label}) must lie in [{low}, {high}); "
                    f"got range [{lo}, {hi}]"
                )

    def _supports(self, r, items):
        r = r.astype(np.int64)
        return self.hash(r[:, :1], r[:, 1:2], items[None, :]) == r[:, 2:3]

    def _block_counts(self, r):
        r = r.astype(np.int64)
        h = np.multiply.outer(r[:, 0], np.arange(self.domain_size, dtype=np.int64))
        h += r[:, 1:2]
        np.remainder(h, self.prime, out=h)
        np.remainder(h, self.g, out=h)
        return np.count_nonzero(h == r[:, 2:3], axis=0).astype(np.int64)

    def _arrow_arrays(self, r, pa):
        return [pa.array(np.ascontiguousarray(r[:, i])) for i in range(3)]

    def _from_arrow_arrays(self, arrays, names, pa):
        bounds = ((1, self.prime), (0, self.prime), (0, self.g))
        cols = [
            _arrow_integers(arr, name, low, high, np.uint32)
            for arr, name, (low, high) in zip(arrays, names, bounds, strict=True)
        ]
        return np.stack(cols, axis=1)


def _hypergeometric_moments(population: int, successes: int, draws: int) -> tuple[float, float]:
    """Mean and second moment of a hypergeometric count."""
    if draws <= 0 or successes <= 0:
        return 0.0, 0.0
    share = successes / population
    mean = draws * share
    var = 0.0
    if population > 1:
        var = draws * share * (1 - share) * (population - draws) / (population - 1)
    return mean, var + mean * mean


def _mixed_hypergeometric_variance(
    d: int, k: int, p: float, shift: int, successes: np.ndarray
) -> np.ndarray:
    """Variance of SS's count of set items in one report (see SS._count_sum_variances)."""
    out = np.empty(successes.size)
    for i, a in enumerate(successes):
        m1, s1 = _hypergeometric_moments(d - 1, int(a), k - 1)
        m0, s0 = _hypergeometric_moments(d - 1, int(a), k)
        e1 = p * (m1 + shift) + (1 - p) * m0
        e2 = p * (s1 + 2 * shift * m1 + shift * shift) + (1 - p) * s0
        out[i] = e2 - e1 * e1
    return out


@register_oracle
class SS(FrequencyOracle):
    r"""Subset selection (Ye and Barg; Wang et al. 2016).

    Each user reports a subset of ``k`` items. With probability :math:`p = k
    e^\varepsilon / (k e^\varepsilon + d - k)` the subset holds the user's value plus
    ``k - 1`` others chosen uniformly; otherwise it holds ``k`` items chosen uniformly
    from the others. Then :math:`q = p (k-1)/(d-1) + (1-p) k / (d-1)`. Reports: the
    ``k`` items in increasing order (the order carries no information), shape
    ``(n, k)``, the smallest unsigned dtype holding ``d - 1``.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items, at least 2.
    k : int, optional
        Subset size in ``[1, d - 1]``; by default ``max(1, round(d / (e^eps + 1)))``.

    Notes
    -----
    Subsets are drawn exactly (:func:`bayesldp.exact_random.subsets`): for small
    ``k`` (``k (k-1) <= d - 1``) by rejection of sorted iid draws, ``O(k log k)`` per
    user; otherwise from a Bernoulli mask completed by rejection, ``O(d)`` per user.
    """

    name = "SS"
    parameter_names = ("k",)
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int, k: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        d = self.domain_size
        if d < 2:
            raise ValueError("domain_size must be at least 2 for SS")
        if k is None:  # round(d / (e^eps + 1))
            k = max(1, round(d * exp_ratios(self.epsilon, 1.0, 1.0)[1]))
        self.k = check_int(k, "k", minimum=1, maximum=d - 1)
        self._method = "reject" if self.k * (self.k - 1) <= d - 1 else "mask"

    @property
    def p(self) -> float:
        r"""Probability :math:`k e^\varepsilon / (k e^\varepsilon + d - k)` of the true value."""
        return exp_ratios(self.epsilon, self.k, self.domain_size - self.k)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`p (k-1)/(d-1) + (1-p) k/(d-1)` of holding a given other item."""
        d, k = self.domain_size, self.k
        p, scale = exp_ratios(self.epsilon, k, d - k)
        miss = (d - k) * scale  # 1 - p, without cancellation when p is near 1
        return p * (k - 1) / (d - 1) + miss * k / (d - 1)

    @classmethod
    def _count_sum_variances(cls, m, a, masks, frequencies, x_set) -> np.ndarray:
        r"""Mixed hypergeometric counts: :math:`x_S V_1 + (n - x_S) V_0`.

        With report size :math:`k = q(d-1) + p`, a user holding ``u`` reports ``u`` plus
        ``k - 1`` of the other ``d - 1`` items with probability ``p``, else ``k`` of
        them, so the number of set items in its report is a mixture of hypergeometric
        counts, of variance :math:`V_1` for ``u`` in the set and :math:`V_0` otherwise.
        """
        d, n, p, q = m.domain_size, m.n, m.p, m.q
        k = round(q * (d - 1) + p)
        sizes = a.astype(np.int64)
        v1 = _mixed_hypergeometric_variance(d, k, p, 1, np.maximum(sizes - 1, 0))
        v0 = _mixed_hypergeometric_variance(d, k, p, 0, sizes)
        return x_set * v1 + (n - x_set) * v0

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, the smallest unsigned one holding ``d - 1``."""
        return unsigned_dtype(self.domain_size - 1)

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one report, ``(k,)``."""
        return (self.k,)

    @property
    def _privatize_cells(self) -> int:
        return self.domain_size if self._method == "mask" else self.k

    @property
    def _count_cells(self) -> int:
        return self.k

    def _privatize_block(self, v, rng, out) -> None:
        include = bernoulli(self.p, v.size, rng)
        sets = subsets(v, include, self.domain_size, self.k, rng, method=self._method)
        np.copyto(out, sets, casting="unsafe")

    def _check_values(self, r, name) -> None:
        if r.max() >= self.domain_size:
            raise ValueError(
                f"{name} must lie in [0, {self.domain_size}) for SS; got maximum {r.max()}"
            )
        if self.k > 1 and not np.all(r[:, 1:] > r[:, :-1]):
            raise ValueError(
                f"{name}: each SS report must list its {self.k} items in strictly "
                "increasing order (sorted, no repeats)"
            )

    def _supports(self, r, items):
        return (r[:, :, None] == items[None, None, :]).any(axis=1)

    def _block_counts(self, r):
        return _bincount(r, self.domain_size)

    def _arrow_arrays(self, r, pa):
        flat = pa.array(np.ascontiguousarray(r).reshape(-1))
        return [pa.FixedSizeListArray.from_arrays(flat, self.k)]

    def _from_arrow_arrays(self, arrays, names, pa):
        arr, name = arrays[0], names[0]
        if not (
            pa.types.is_list(arr.type)
            or pa.types.is_large_list(arr.type)
            or pa.types.is_fixed_size_list(arr.type)
        ):
            raise ValueError(f"column {name!r} must hold lists of {self.k} items, got {arr.type}")
        import pyarrow.compute as pc

        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        if lengths.size and (lengths.min() != self.k or lengths.max() != self.k):
            raise ValueError(f"column {name!r}: every report must hold {self.k} items")
        flat = _arrow_integers(arr.flatten(), name, 0, self.domain_size, self.report_dtype)
        return flat.reshape(-1, self.k)


def fwht(x: np.ndarray) -> np.ndarray:
    """Fast Walsh-Hadamard transform (Sylvester order) of a length-``2^m`` vector."""
    a = np.array(x, dtype=np.float64)
    size = a.size
    if size & (size - 1):
        raise ValueError(f"length must be a power of two, got {size}")
    h = 1
    while h < size:
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], axis=1)
        h *= 2
    return a.reshape(size)


@register_oracle
class HR(_OneInteger):
    r"""Hadamard response (Acharya, Sun and Zhang 2019).

    With ``K`` the smallest power of two above ``d``, value ``v`` owns the columns
    :math:`C_v = \{j : H_{v+1, j} = +1\}` (``K/2`` of them) of the Sylvester
    Hadamard matrix. A user reports one column: uniform over :math:`C_v` with
    probability :math:`e^\varepsilon/(e^\varepsilon+1)`, else uniform over the rest.
    A report ``j`` supports every ``u`` with ``j`` in :math:`C_u`, so
    :math:`p = e^\varepsilon/(e^\varepsilon+1)` and :math:`q = 1/2`. Reports: one
    unsigned integer in ``[0, K)`` per user (the smallest dtype holding ``K - 1``);
    aggregation is one Walsh-Hadamard transform.
    """

    name = "HR"
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int) -> None:
        super().__init__(epsilon, domain_size)
        self.K = 1 << int(self.domain_size).bit_length()  # smallest power of 2 > d

    @property
    def _report_bound(self) -> int:
        return self.K

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + 1)` of a column of the own value."""
        return exp_ratios(self.epsilon, 1.0, 1.0)[0]

    @property
    def q(self) -> float:
        """Probability 1/2 that a report supports a given other item."""
        return 0.5

    @classmethod
    def _count_sum_variances(cls, m, a, masks, frequencies, x_set) -> np.ndarray:
        r""":math:`\tfrac14 \sum_u x_u (a + \beta M_u - \beta^2 [u \in S])`, :math:`\beta = 2p - 1`.

        With :math:`x_u = n f_u`; :math:`M_u` counts the ordered pairs ``(r, s)`` of rows
        of ``S`` with :math:`r \oplus s = u + 1` (two Walsh-Hadamard transforms), since
        the columns of two items are correlated through the row their XOR names.
        """
        d, n, p = m.domain_size, m.n, m.p
        size = 1 << d.bit_length()
        beta = 2 * p - 1
        out = np.empty(masks.shape[0])
        for i, mask in enumerate(masks):
            rows = np.zeros(size)
            rows[1 : d + 1] = mask
            pairs = np.rint(fwht(fwht(rows) ** 2) / size)[1 : d + 1]
            cross = float(np.sum(n * frequencies * pairs))
            out[i] = 0.25 * (n * a[i] + beta * cross - beta * beta * x_set[i])
        return out

    def _privatize_block(self, v, rng, out) -> None:
        row = v + 1
        j = rng.integers(0, self.K, size=v.size, dtype=np.int64)
        in_set = (np.bitwise_count(row & j) & 1) == 0
        want = bernoulli(self.p, v.size, rng)
        flip = row & -row  # lowest set bit: XOR with it swaps C_v and its complement
        np.copyto(out, np.where(in_set == want, j, j ^ flip), casting="unsafe")

    def support_counts(self, reports) -> np.ndarray:
        """Count, for every item, how many reports support it.

        One Walsh-Hadamard transform of the reports' histogram; see
        :meth:`FrequencyOracle.support_counts`.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in this oracle's wire format (checked).

        Returns
        -------
        numpy.ndarray of int64
            Support count of each of the ``d`` items.
        """
        r = self.check_reports(reports)
        hist = np.zeros(self.K, dtype=np.int64)
        for sl in _blocks(r.shape[0], CHUNK_CELLS):
            hist += _bincount(r[sl], self.K)
        signed = fwht(hist)[1 : self.domain_size + 1]
        return np.rint((r.shape[0] + signed) / 2).astype(np.int64)

    def _supports(self, r, items):
        rows = (items + 1)[None, :]
        return (np.bitwise_count(rows & r.reshape(-1).astype(np.int64)[:, None]) & 1) == 0

    def _block_counts(self, r):  # pragma: no cover - support_counts is overridden
        raise NotImplementedError
