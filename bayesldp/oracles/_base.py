"""The interface every frequency oracle implements, and its registration.

:class:`FrequencyOracle` holds what all pure oracles share (the user side block by
block, the aggregator side, a simulated round, the facts post-processing asks of an
oracle) and leaves to each oracle its probabilities and its wire format.
:func:`register_oracle` adds a subclass to the registry (``_registry``), from
which :func:`~bayesldp.make_oracle` and :func:`~bayesldp.oracles.oracle_class` find it.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from bayesldp._validation import (
    as_array,
    check_bool,
    check_counts,
    check_domain_size,
    check_epsilon,
    check_frequencies,
    check_int,
    check_rng,
    check_values,
)
from bayesldp.measurement import Measurement, support_count_variance
from bayesldp.oracles._arrow import ArrowCodec
from bayesldp.oracles._blocks import blocks, rows_per_block, units_in_range
from bayesldp.oracles._registry import add_oracle


def binomial_counts(
    x: np.ndarray, n: int, p: float, q: float, rng: np.random.Generator
) -> np.ndarray:
    """``Binomial(x_v, p) + Binomial(n - x_v, q)`` for every item: independent supports.

    Parameters
    ----------
    x : numpy.ndarray of int
        Users holding each item.
    n : int
        All users.
    p, q : float
        The oracle's support probabilities.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int
        Support count of each item.
    """
    return rng.binomial(x, p) + rng.binomial(n - x, q)


class FrequencyOracle(ArrowCodec):
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
    ``report_shape``, ``_privatize_block``, ``_check_values``, ``_block_counts``,
    ``_supports``) and its Arrow form (``_arrow_arrays``, ``_from_arrow_arrays``).

    What post-processing needs to know about the oracle is declared here once, with
    defaults for any pure oracle whose reports support items independently, and
    overridden where an oracle differs: ``likelihood_kind``, ``counts_sum_to_n``,
    :meth:`count_sum_variances` (exact variance of a set's summed support counts) and
    :meth:`bootstrap_counts` with its ``bootstrap_simulation`` label. Callers ask the
    class of a Measurement's oracle through :func:`~bayesldp.oracles.oracle_class`.
    """

    name: ClassVar[str] = "FO"
    #: keyword parameters of the constructor beyond epsilon and domain_size
    parameter_names: ClassVar[tuple[str, ...]] = ()
    #: whether :meth:`simulate` draws exact counts without privatizing each user (the
    #: default, independent supports: binomials are the exact joint law)
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
    #: most user-item cells :meth:`simulate` works through user by user (users times
    #: the cells one user costs); a larger round is refused (``exact=False`` is O(d))
    simulation_cell_limit: ClassVar[int] = 1 << 34

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

    def variance(self, frequencies: Any) -> np.ndarray:
        """Exact variance of each unbiased estimate for ``n = 1``; divide by ``n``.

        Parameters
        ----------
        frequencies : array_like
            True frequencies :math:`f_v`, each in ``[0, 1]``.

        Returns
        -------
        numpy.ndarray
            :math:`(q(1-q) + f_v (p-q)(1-p-q)) / (p-q)^2`.

        Raises
        ------
        ValueError
            ``frequencies`` holds NaN, infinities, bools or values outside ``[0, 1]``.
        """
        f = check_frequencies(frequencies, "frequencies")
        return support_count_variance(1, self.p, self.q, f) / (self.p - self.q) ** 2

    def approx_variance(self, n: int = 1) -> float:
        """Return the papers' uniform approximation :math:`q(1-q) / (n (p-q)^2)`.

        Parameters
        ----------
        n : int, default 1
            Number of users, at least 1; the default gives the variance per user.

        Returns
        -------
        float
            Approximate variance of a frequency estimate (a proportion, not a count).

        Raises
        ------
        ValueError
            ``n`` is not an integer of at least 1.
        """
        n = check_int(n, "n", minimum=1)
        return self.q * (1 - self.q) / (n * (self.p - self.q) ** 2)

    def measurement(self, support_counts: Any, n: int) -> Measurement:
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
    def _count_sum_variances(
        cls,
        m: Measurement,
        a: np.ndarray,
        masks: np.ndarray,
        frequencies: np.ndarray,
        x_set: np.ndarray,
    ) -> np.ndarray:
        """Supports independent across items (see :meth:`count_sum_variances`)."""
        return support_count_variance(m.n, m.p, m.q, x_set, items=a)

    @classmethod
    def random_set_count_variance(cls, m: Measurement, size: int, frequencies: np.ndarray) -> float:
        r"""Return the expected variance of a random ``size``-item set's summed support counts.

        The average of :meth:`count_sum_variances` over all sets of ``size`` items,
        exactly. The default holds for every formula that depends on the set only
        through its size ``a`` and linearly on the users it holds, :math:`x_S`, whose
        average is :math:`n a / d` (independent supports, GRR, SS); an oracle whose
        formula depends on which items are in the set (HR) overrides it.

        Parameters
        ----------
        m : Measurement
            Gives ``n``, ``p``, ``q`` and ``d``.
        size : int
            Items in the set, in ``[1, d]`` (not checked).
        frequencies : numpy.ndarray
            Frequency of each item, summing to 1.

        Returns
        -------
        float
            The expected variance of :math:`C_S`.
        """
        a = np.array([float(size)])
        x_set = np.array([m.n * size / m.domain_size])
        masks = np.ones((1, m.domain_size), dtype=bool)  # not read by the default formulas
        return float(cls._count_sum_variances(m, a, masks, frequencies, x_set)[0])

    @classmethod
    def bootstrap_counts(cls, m: Measurement, x: np.ndarray, rng: Any) -> np.ndarray:
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
        rng : numpy.random.Generator or int
            Source of randomness, or a seed.

        Returns
        -------
        numpy.ndarray of int
            Support count of each item.
        """
        return binomial_counts(x, m.n, m.p, m.q, check_rng(rng))

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
    def report_bits(self) -> int:
        """Bits one user sends, as the papers count communication cost.

        The information in a report at its natural encoding (e.g. ``ceil(log2 d)`` for
        one item of ``d``, one bit per item for a bit vector), not the padded bytes of
        the wire format (:attr:`report_nbytes`). Each oracle family declares its own;
        the default is the wire format's bits.

        Examples
        --------
        >>> from bayesldp import GRR
        >>> GRR(1.0, 1024).report_bits
        10
        """
        return 8 * self.report_nbytes

    @property
    def block_rows(self) -> int:
        """Users privatized per block (from the block size in user-item cells).

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

    def privatize(self, values: Any, rng: Any) -> np.ndarray:
        """Perturb each user's value (the user side), block by block.

        Parameters
        ----------
        values : array_like of int
            One value in ``[0, d)`` per user.
        rng : numpy.random.Generator or int
            Source of randomness, or a seed for one.

        Returns
        -------
        numpy.ndarray
            The reports as transmitted: shape ``(n, *report_shape)``, dtype
            ``report_dtype`` (see :mod:`bayesldp.oracles`).
        """
        gen = check_rng(rng)
        arr = as_array(values, "values")
        check_values(arr[:0] if arr.ndim == 1 else arr, self.domain_size)  # shape, dtype
        out = np.empty((arr.size, *self.report_shape), dtype=self.report_dtype)
        for sl in blocks(arr.size, self.block_rows):
            # values are converted block by block: no copy of all of them
            self._privatize_block(check_values(arr[sl], self.domain_size), gen, out[sl])
        return out

    @abstractmethod
    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        """Write the reports of users holding ``v`` into ``out``."""

    def check_reports(self, reports: Any, name: str = "reports") -> np.ndarray:
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
        for sl in blocks(r.shape[0], rows_per_block(math.prod(self.report_shape))):
            self._check_values(r[sl], name)
        return r

    @abstractmethod
    def _check_values(self, r: np.ndarray, name: str) -> None:
        """Raise ValueError naming ``name`` if a value is outside the format's range."""

    def support_counts(self, reports: Any) -> np.ndarray:
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
        for sl in blocks(r.shape[0], rows_per_block(self._count_cells)):
            counts += self._block_counts(r[sl])
        return counts

    @abstractmethod
    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        """Support counts of a block of checked reports."""

    def supports(self, reports: Any, items: Any) -> np.ndarray:
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

    def aggregate(self, reports: Any) -> Measurement:
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

    def simulate(self, true_counts: Any, rng: Any, *, exact: bool = True) -> Measurement:
        """Run a whole round: users with these true counts report, the server aggregates.

        Parameters
        ----------
        true_counts : array_like of int
            Number of users holding each item (length ``d``).
        rng : numpy.random.Generator or int
            Source of randomness, or a seed for one.
        exact : bool, default True
            For OUE and SUE the support counts are drawn exactly from their joint
            distribution as independent binomials, and this flag has no effect. For GRR,
            ``exact=True`` sends every user who lies to a uniform other item and
            ``exact=False`` draws the same law in the mixture form of
            :meth:`bootstrap_counts` (O(d) work, another random stream). For OLH, SS
            and HR, ``exact=True`` privatizes every user (block by block) and
            ``exact=False`` draws each count as
            ``Binomial(x_v, p) + Binomial(n - x_v, q)``: the exact marginal of each
            count, ignoring the (weak) dependence between items.

        Returns
        -------
        Measurement

        Raises
        ------
        ValueError
            Bad ``true_counts``, ``rng`` or ``exact``; or ``exact=True`` on a round whose
            user-by-user work (users times the user-item cells one user costs) exceeds
            :attr:`simulation_cell_limit` (``2**34``, about ``1.7e10`` cells: about
            ``1e9`` users of GRR or HR, ``1.7e7`` users of OLH at ``d = 1024``).
        """
        gen = check_rng(rng)
        exact = check_bool(exact, "exact")
        x = check_counts(true_counts, "true_counts", length=self.domain_size)
        n = int(x.sum())
        if n == 0:
            raise ValueError("true_counts must sum to at least one user")
        if exact:
            counts = self._simulate_exact(x, gen)
        else:
            counts = self._simulate_without_users(x, gen)
        return self.measurement(counts, n)

    @property
    def _simulation_cells(self) -> int:
        """User-item cells one user costs in an exact user-by-user simulation."""
        return max(self._privatize_cells, self._count_cells)

    def _check_simulation_work(self, n: int) -> None:
        """Refuse a simulation whose per-user work exceeds :attr:`simulation_cell_limit`."""
        cells = n * self._simulation_cells
        if cells > self.simulation_cell_limit:
            raise ValueError(
                f"true_counts: simulating {n:,} users of {self.name} one by one would work "
                f"through {cells:.3g} user-item cells, more than the limit "
                f"{self.simulation_cell_limit:.3g} ({type(self).__name__}."
                "simulation_cell_limit); pass exact=False to draw the counts in O(d)"
            )

    def _simulate_exact(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Exact support counts: binomials, or every user privatized and counted in blocks.

        Without ``exact_counts_simulation`` the work is bounded (see :meth:`simulate`).
        """
        n = int(x.sum())
        if self.exact_counts_simulation:
            return binomial_counts(x, n, self.p, self.q, rng)
        self._check_simulation_work(n)
        # Users report independently, so they can be taken in item order.
        counts = np.zeros(self.domain_size, dtype=np.int64)
        ends = np.cumsum(x)
        for sl in blocks(n, rows_per_block(self._simulation_cells)):
            values = units_in_range(x, ends, sl.start, sl.stop)
            counts += self.support_counts(self.privatize(values, rng))
        return counts

    def _simulate_without_users(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each count's exact marginal ``Binomial(x_v, p) + Binomial(n - x_v, q)``."""
        return binomial_counts(x, int(x.sum()), self.p, self.q, rng)


def register_oracle(cls: type[FrequencyOracle]) -> type[FrequencyOracle]:
    """Class decorator adding a :class:`FrequencyOracle` subclass to the registry.

    The class's ``name`` is its key and ``parameter_names`` lists the keyword
    parameters its constructor accepts beyond ``epsilon`` and ``domain_size``;
    :func:`~bayesldp.make_oracle`, :func:`~bayesldp.oracles.oracle_class` and
    ``bayesldp.ORACLES`` then know it.

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
        are compared ignoring case, as :func:`~bayesldp.oracles.oracle_class` looks
        them up).
    """
    if not (isinstance(cls, type) and issubclass(cls, FrequencyOracle)):
        raise ValueError(f"only FrequencyOracle subclasses can be registered, got {cls!r}")
    add_oracle(cls)
    return cls
