"""The result of post-processing: frequencies plus what is needed to answer queries.

:class:`Estimate` is frozen: its frequencies and its ``info`` are read-only. Its
statistical queries (:meth:`Estimate.interval`, :meth:`Estimate.bootstrap`,
:meth:`Estimate.heavy_hitters`, :meth:`Estimate.top_k_probability`) call their
implementations in :mod:`bayesldp.intervals` and :mod:`bayesldp.selection` directly,
imported inside each method: those modules re-run methods, which make Estimates, so
they sit above this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bayesldp._draws import check_draw_range
from bayesldp._validation import check_indices, check_k
from bayesldp.measurement import Measurement

__all__ = ["Estimate", "StoredDraws", "Uncertainty"]


@runtime_checkable
class Uncertainty(Protocol):
    """A reproducible source of draws of the whole frequency vector.

    Posterior draws, bootstrap replicates or any other distribution behind
    :meth:`Estimate.interval`. Draws are generated on demand, chunk by chunk, so an
    implementation can keep compact per-item parameters instead of an
    ``(n_draws, d)`` array; row ``i`` must be the same whatever chunk it is asked in
    (:func:`bayesldp._draws.row_generator` gives each row its own random stream).

    The rows :meth:`sample` returns are read-only: they may be a view of rows kept in
    memory (:class:`StoredDraws`, or rows cached by :func:`bayesldp._draws.cached_rows`, which every
    implementation in the package uses), so a caller that needs to change them makes a
    copy. The implementations here return read-only rows whether or not they are cached,
    so a caller that writes into them fails at every size, not only when the draws are
    small enough to be cached.

    Attributes
    ----------
    kind : str
        What the draws are, e.g. ``"posterior"`` or ``"parametric bootstrap"``.
    n_draws : int
        Number of draws available.
    """

    # read-only properties: implementations may compute them (e.g. from their arrays)
    @property
    def kind(self) -> str:
        """What the draws are."""
        ...

    @property
    def n_draws(self) -> int:
        """Number of draws available."""
        ...

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1`` of the frequency vector, shape ``(stop - start, d)``.

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``
            (:func:`bayesldp._draws.check_draw_range`).

        Returns
        -------
        numpy.ndarray
            Read-only, shape ``(stop - start, d)``.
        """
        ...


@dataclass(frozen=True)
class StoredDraws:
    """Draws held in memory as an ``(n_draws, d)`` array (an :class:`Uncertainty`)."""

    values: np.ndarray
    kind: str = "posterior"

    @property
    def n_draws(self) -> int:
        """Number of draws."""
        return int(self.values.shape[0])

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start .. stop - 1`` of the stored draws.

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.

        Returns
        -------
        numpy.ndarray
            A read-only view, shape ``(stop - start, d)``.
        """
        start, stop = check_draw_range(start, stop, self.n_draws)
        rows = self.values[start:stop]
        rows.setflags(write=False)
        return rows


@dataclass(frozen=True)
class Estimate:
    """Post-processed frequency estimates.

    Parameters
    ----------
    frequencies : numpy.ndarray
        Estimated frequency of every item (length ``d``): the answer to each
        single-item query.
    method : str
        Name of the method that produced it.
    measurement : Measurement
        The raw measurement it was computed from.
    info : mapping
        Method-specific diagnostics (thresholds, fitted exponents, solver status, ...):
        plain values, read-only once the Estimate is made (to add to it, make a new
        Estimate with :func:`dataclasses.replace`).
    query_basis : numpy.ndarray, optional
        For query-time rules (``post-pos``): the vector whose subset sums are clipped
        at zero. ``None`` means subset queries sum :attr:`frequencies`.
    draws : numpy.ndarray, optional
        Draws of the frequency vector held in memory, shape ``(n_draws, d)``; a shortcut
        for ``uncertainty=StoredDraws(draws)``.
    inference_data : object, optional
        The ArviZ ``InferenceData`` of a Bayesian fit.
    uncertainty : Uncertainty, optional
        Where the draws behind :meth:`interval` come from (posterior draws generated on
        demand, bootstrap replicates, ...).
    """

    frequencies: np.ndarray
    method: str
    measurement: Measurement
    info: Mapping[str, Any] = field(default_factory=dict)
    query_basis: np.ndarray | None = None
    draws: np.ndarray | None = None
    inference_data: Any = field(default=None, repr=False)
    uncertainty: Uncertainty | None = field(default=None, repr=False)
    # The one mutable part: bootstrap replicates already computed for this estimate
    # (:meth:`bootstrap`, keyed by size and seed); a result cache, not state: a query
    # gives the same answer with or without it. Not compared, copied or pickled.
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the frequencies (shape ``(d,)``, finite); make them and ``info`` read-only."""
        f = np.asarray(self.frequencies, dtype=np.float64)
        d = self.measurement.domain_size
        if f.shape != (d,):
            raise ValueError(f"frequencies must have shape ({d},), got {f.shape}")
        if not np.all(np.isfinite(f)):
            raise ValueError(f"method {self.method!r} produced non-finite frequencies")
        f.setflags(write=False)
        object.__setattr__(self, "frequencies", f)
        if not isinstance(self.info, Mapping):
            raise ValueError(f"info must be a mapping, got {type(self.info).__name__}")
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))
        if self.draws is not None:
            draws = np.asarray(self.draws, dtype=np.float64)
            if draws.ndim != 2 or draws.shape[1] != d:
                raise ValueError(f"draws must have shape (n_draws, {d}), got {draws.shape}")
            object.__setattr__(self, "draws", draws)
            if self.uncertainty is None:
                object.__setattr__(self, "uncertainty", StoredDraws(draws))
        if self.uncertainty is not None and not isinstance(self.uncertainty, Uncertainty):
            raise ValueError(
                f"uncertainty must provide kind, n_draws and sample(start, stop), "
                f"got {type(self.uncertainty).__name__}"
            )

    def __getstate__(self) -> dict[str, Any]:
        """Return the fields for pickling (``info`` as a dict; the cache is left out)."""
        state = {key: value for key, value in self.__dict__.items() if key != "_cache"}
        state["info"] = dict(self.info)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the fields from :meth:`__getstate__`, ``info`` read-only again."""
        for key, value in state.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "info", MappingProxyType(dict(state["info"])))
        object.__setattr__(self, "_cache", {})

    @property
    def domain_size(self) -> int:
        """Number of items ``d``."""
        return int(self.frequencies.size)

    @property
    def total(self) -> float:
        """Sum of the estimated frequencies."""
        return float(self.frequencies.sum())

    def is_consistent(self, atol: float = 1e-9) -> bool:
        """Whether the estimate is non-negative and sums to 1 within ``atol``.

        Parameters
        ----------
        atol : float, default 1e-9
            Largest accepted distance of the sum from 1.
        """
        return bool(self.frequencies.min() >= 0 and abs(self.total - 1) <= atol)

    def subset(self, indices) -> float:
        """Answer a subset-sum query: the estimated frequency of a set of items.

        Parameters
        ----------
        indices : array_like of int or bool mask
            Items in the set (unique indices in ``[0, d)``, or a length-``d`` mask).

        Returns
        -------
        float
            The sum of the estimates over the set; for ``post-pos`` the raw sum
            clipped at zero (the method's query-time rule).
        """
        idx = check_indices(indices, self.domain_size)
        if self.query_basis is not None:
            return max(float(self.query_basis[idx].sum()), 0.0)
        return float(self.frequencies[idx].sum())

    def top_k(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the ``k`` items with the largest estimates, largest first.

        Parameters
        ----------
        k : int
            Number of items, in ``[1, d]``.

        Returns
        -------
        indices : numpy.ndarray
            Item indices, ordered by decreasing estimate (ties by index).
        values : numpy.ndarray
            Their estimated frequencies.
        """
        k = check_k(k, self.domain_size)
        order = np.lexsort((np.arange(self.domain_size), -self.frequencies))[:k]
        return order, self.frequencies[order]

    def interval(self, indices, prob: float = 0.9, method: str | None = None):
        r"""Interval for a subset sum: the method's natural one, or the kind asked for.

        Parameters
        ----------
        indices : array_like of int or bool mask
            Items in the set; a single item is a set of one.
        prob : float, default 0.9
            Nominal coverage, in (0, 1).
        method : {None, "normal", "bootstrap", "percentile", "posterior"}
            ``None`` uses the natural interval, declared once per method as
            ``MethodSpec.interval``: ``"posterior"`` for the Bayesian models,
            ``"normal"`` for every other method (``eb-npmle`` included: its posterior
            intervals undercover set sums; ask for them with ``method="posterior"``).

            - ``"normal"`` (every estimate): the raw unbiased set estimate plus or minus
              a normal quantile times its exact standard deviation, covariances between
              items included (:func:`bayesldp.intervals.subset_variance`), at plug-in
              frequencies; centred at the raw estimate, not at this method's answer
              (``post-pos`` clips it at 0 like its answers). Calibrated for every set
              chosen independently of the data, whatever the method.
            - ``"bootstrap"`` (non-Bayesian registered methods): the basic parametric
              bootstrap interval :math:`[T - (q_{hi} - \theta^*), T - (q_{lo} -
              \theta^*)]`, with ``T`` this method's answer, ``\theta^*`` the set's
              frequency in the fitted bootstrap world and ``q`` quantiles of the
              replicates' answers (:meth:`bootstrap`).
            - ``"percentile"``: the quantiles of the replicates' answers.
            - ``"posterior"``: equal-tailed credible interval from the draws.

        Returns
        -------
        bayesldp.intervals.Interval
            A tuple ``(lo, hi)`` (intersected with [0, 1]) with attributes ``kind``,
            ``prob``, ``center``, ``centered_on`` (what the interval is built around)
            and ``note`` (e.g. that this method's answer lies outside the interval).

        Raises
        ------
        ValueError
            Bad ``indices`` or ``prob``; ``method`` unknown or not available for this
            estimate (``"posterior"`` without draws, ``"bootstrap"`` for a Bayesian
            or unregistered method).

        Warns
        -----
        RuntimeWarning
            Where the interval asked for is known to undercover; see Notes.

        Notes
        -----
        Coverage is measured in ``experiments/interval_coverage.py`` (results in
        ``paper/intervals.md``). The normal interval of the raw estimates is exact up to
        the normal approximation and the plug-in. Bootstrap intervals of methods that
        clip at 0 undercover for sets whose answer is near 0 (replicates around a
        fitted 0 cannot go below it), and percentile intervals do not correct the
        method's bias: a RuntimeWarning says so. Posterior intervals are as good as the
        model: a posterior that does not know the counts add up to ``n`` can miss the
        sums of large sets. Items chosen from the data (e.g. the top ``k`` by this
        estimate) are a different question, which no interval of this kind answers.
        """
        from bayesldp.intervals._sets import estimate_interval

        return estimate_interval(self, indices, prob, method)

    def bootstrap(self, n_replicates: int = 200, rng=0) -> Uncertainty:
        """Parametric bootstrap replicates of this estimate's method (cached).

        Support counts are simulated from the fitted frequencies (this estimate's,
        projected onto the probability simplex and rounded to ``n`` users): exactly for
        GRR, OUE and SUE, by their binomial marginals for OLH, SS and HR; the method is
        re-run on each with the options recorded in ``info["options"]``, through its row
        function where it has one. See :class:`bayesldp.intervals.ParametricBootstrap`.
        The replicates are kept on this Estimate (a result cache), so later queries reuse
        them.

        Parameters
        ----------
        n_replicates : int, default 200
            Number of replicates.
        rng : int, numpy.random.Generator or SeedSequence, default 0
            Seed of the replicates; the same seed gives the same replicates.

        Returns
        -------
        bayesldp.intervals.ParametricBootstrap
            The same object on every call with the same integer seed and size; it is
            what ``interval(method="bootstrap")`` and :meth:`top_k_probability` use
            (with the defaults).
        """
        from bayesldp.intervals import ParametricBootstrap

        key = None
        if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
            key = ("bootstrap", n_replicates, int(rng))
            if key in self._cache:
                return self._cache[key]
        boot = ParametricBootstrap(self, n_replicates, rng)
        if key is not None:
            self._cache[key] = boot
        return boot

    def heavy_hitters(self, threshold: float, alpha: float = 0.05):
        r"""Items whose frequency exceeds ``threshold``, with error control.

        Frequentist methods: Holm's step-down procedure on one-sided tests of
        :math:`f_v \le t` from the raw unbiased estimates (normal approximation, each
        item's variance at :math:`f_v = t`), so the family-wise error rate, the
        probability of declaring *any* item with :math:`f_v \le t`, is at most
        ``alpha`` (up to the normal approximation); the post-processing does not enter.
        Estimates with posterior draws: the items whose posterior probability of
        exceeding ``t`` is above ``1 - alpha`` (a per-item statement, not a
        family-wise guarantee).

        Parameters
        ----------
        threshold : float
            In (0, 1].
        alpha : float, default 0.05
            In (0, 1).

        Returns
        -------
        bayesldp.selection.HeavyHitters
            ``indices`` (strongest first), ``rule``, and ``p_values`` /
            ``adjusted_p_values`` or ``probabilities`` for every item.
        """
        from bayesldp.selection import estimate_heavy_hitters

        return estimate_heavy_hitters(self, threshold, alpha)

    def top_k_probability(self, k: int) -> np.ndarray:
        """For each item, the probability that it is among the ``k`` largest.

        From the posterior draws when the estimate has them; otherwise from this
        method's parametric bootstrap replicates (:meth:`bootstrap` with its defaults),
        i.e. how often the method ranks the item in its top ``k`` when the data are
        simulated from the fitted frequencies. Ties are broken by index, so the
        result sums to ``k``.

        Parameters
        ----------
        k : int
            Number of items, in ``[1, d]``.

        Returns
        -------
        numpy.ndarray
            Length ``d``, values in [0, 1].
        """
        from bayesldp.selection import estimate_top_k_probability

        return estimate_top_k_probability(self, k)
