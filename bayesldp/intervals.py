r"""Intervals for subset sums.

Exact normal intervals of the raw estimates, and the parametric bootstrap of any
post-processing method.

Three kinds of interval back :meth:`bayesldp.Estimate.interval`:

``"normal"``
    The raw unbiased estimate of the set's frequency plus or minus a normal quantile
    times its exact standard deviation (:func:`subset_variance`: the oracle's variance,
    covariances between items included, at plug-in frequencies). Centred at the raw
    estimate whatever method produced the Estimate; ``post-pos`` clips it at 0 like its
    answers. The natural interval of ``base`` and ``post-pos``.
``"bootstrap"`` and ``"percentile"``
    A parametric bootstrap (:class:`ParametricBootstrap`): support counts are simulated
    from the fitted frequencies, the same method is re-run on each replicate with the
    same options, and the interval is the basic (pivotal) bootstrap interval
    :math:`[T - (q_{hi} - \theta^*), T - (q_{lo} - \theta^*)]` (``"bootstrap"``) or the
    quantiles of the replicates themselves (``"percentile"``). ``"bootstrap"`` is the
    natural interval of every other non-Bayesian method.
``"posterior"``
    Quantiles of posterior draws, for estimates that carry an ``uncertainty`` (the
    Bayesian methods, empirical Bayes); their natural interval.

Every interval is intersected with ``[0, 1]``, where a set's frequency lies (this can
only raise coverage). Coverage measured in simulation is in ``paper/intervals.md``
(``experiments/interval_coverage.py``).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from typing import Any, cast

import numpy as np
from scipy.stats import norm as _normal

from bayesldp._draws import cached_rows, draw_set_sums, row_generator
from bayesldp._validation import (
    check_choice,
    check_estimates,
    check_indices,
    check_int,
    check_probability,
    check_rng,
)
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods import project_simplex
from bayesldp.oracles import FrequencyOracle, oracle_class

logger = logging.getLogger(__name__)

__all__ = [
    "BOOTSTRAP_LINEAR",
    "BOOTSTRAP_UNRELIABLE",
    "INTERVAL_KINDS",
    "RELIABLE_SIGMAS",
    "Interval",
    "ParametricBootstrap",
    "available_intervals",
    "bootstrap_counts",
    "draw_set_sums",
    "estimate_interval",
    "fitted_counts",
    "flagged_sets",
    "natural_interval",
    "normal_interval",
    "set_intervals",
    "subset_count_variance",
    "subset_count_variances",
    "subset_variance",
    "undercoverage_note",
]

#: Interval kinds :meth:`Estimate.interval` knows.
INTERVAL_KINDS: tuple[str, ...] = ("normal", "bootstrap", "percentile", "posterior")


class Interval(tuple):
    """An interval ``(lo, hi)`` that also says how it was made.

    A 2-tuple (so ``lo, hi = est.interval(...)`` works) with attributes.

    Attributes
    ----------
    lo, hi : float
        The bounds.
    kind : str
        ``"normal"``, ``"bootstrap"``, ``"percentile"`` or ``"posterior"``.
    prob : float
        Nominal coverage.
    center : float
        The point the interval is built around: the raw estimate (normal), the
        method's answer (bootstrap), the replicates' or draws' median (percentile,
        posterior).
    note : str
        Anything the caller should know (e.g. a known undercoverage).
    """

    lo: float
    hi: float
    kind: str
    prob: float
    center: float
    note: str

    def __new__(
        cls, lo: float, hi: float, kind: str, prob: float, center: float, note: str = ""
    ) -> Interval:
        """Build the interval."""
        self = super().__new__(cls, (float(lo), float(hi)))
        self.lo, self.hi = float(lo), float(hi)
        self.kind, self.prob, self.center, self.note = kind, float(prob), float(center), note
        return self

    def __getnewargs__(self):  # pickling
        """Return the arguments that rebuild the interval when unpickled."""
        return (self.lo, self.hi, self.kind, self.prob, self.center, self.note)

    def __repr__(self) -> str:
        """Return ``Interval(lo=..., hi=..., kind=..., prob=...)``."""
        return f"Interval(lo={self.lo!r}, hi={self.hi!r}, kind={self.kind!r}, prob={self.prob!r})"

    @property
    def width(self) -> float:
        """``hi - lo``."""
        return self.hi - self.lo


# ---------------------------------------------------------------------------
# Exact variance of a subset sum of the raw estimates
# ---------------------------------------------------------------------------


def _as_masks(sets, d: int, name: str = "sets") -> np.ndarray:
    """Return a ``(Q, d)`` boolean array from a 2-D mask array or one set (indices or a mask)."""
    arr = np.asarray(sets)
    if arr.dtype == bool and arr.ndim == 2:
        if arr.shape[1] != d:
            raise ValueError(f"{name} as masks must have shape (Q, {d}), got {arr.shape}")
        return arr
    mask = np.zeros((1, d), dtype=bool)
    mask[0, check_indices(sets, d, name)] = True
    return mask


def subset_count_variances(m: Measurement, sets, frequencies=None) -> np.ndarray:
    r"""Exact variance of the summed support counts :math:`C_S = \sum_{v \in S} c_v`.

    Each user contributes :math:`N_i`, the number of items of ``S`` their report
    supports; users are independent given their values, so
    :math:`\operatorname{Var} C_S = \sum_u x_u \operatorname{Var}(N \mid u)` with
    :math:`x_u = n f_u` users holding ``u``. With :math:`a = |S|` and
    :math:`x_S = \sum_{u \in S} x_u`:

    .. math::

        \text{OUE, SUE, OLH:}\quad & a\,n\,q(1-q) + x_S\,(p-q)(1-p-q)
            \quad\text{(supports independent across items)}\\
        \text{GRR:}\quad & x_S\,\pi_1(1-\pi_1) + (n - x_S)\,\pi_0(1-\pi_0),
            \quad \pi_1 = p + (a-1)q,\ \pi_0 = a q\\
        \text{SS:}\quad & x_S V_1 + (n - x_S) V_0\\
        \text{HR:}\quad & \tfrac14 \sum_u x_u \left(a + \beta M_u - \beta^2
            [u \in S]\right),\quad \beta = 2p - 1.

    The oracle class computes them (:meth:`bayesldp.FrequencyOracle.count_sum_variances`,
    asked through :func:`bayesldp.oracles.oracle_class`; the private overrides of
    :class:`~bayesldp.SS` and :class:`~bayesldp.HR` explain :math:`V_0, V_1` and
    :math:`M_u`).
    OLH's independence holds for an ideal hash; the universal family
    :class:`~bayesldp.OLH` draws from correlates items whose offsets from the user's
    value are in small integer ratios (measured: a covariance of about 10% of the
    variance for ``(u, v, w) = (0, 1, 2)``), which averages out over random sets but not
    over structured ones. An oracle that does not override the formula (a registered one
    of your own, or a Measurement's ``"custom"``) is treated as having independent
    supports.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    sets : array_like
        One set (indices or a length-``d`` mask) or a ``(Q, d)`` boolean array of sets.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance. By default a plug-in:
        :math:`x_S = n\,\mathrm{clip}(\sum_S \tilde f, 0, 1)` and, for HR's
        cross terms, :math:`x_u = n\,\mathrm{clip}(\tilde f_u, 0, 1)`.

    Returns
    -------
    numpy.ndarray
        One variance per set.
    """
    d = m.domain_size
    masks = _as_masks(sets, d)
    n = m.n
    weights = masks.astype(np.float64)
    if frequencies is None:
        f = np.clip(m.estimates, 0.0, 1.0)
        f_set = np.clip(weights @ m.estimates, 0.0, 1.0)
    else:
        f = check_estimates(frequencies, "frequencies")
        if f.shape != (d,):
            raise ValueError(f"frequencies must have shape ({d},), got {f.shape}")
        f_set = weights @ f
    x_set = n * f_set
    return oracle_class(m.oracle, FrequencyOracle).count_sum_variances(m, masks, f, x_set)


def subset_count_variance(m: Measurement, indices, frequencies=None) -> float:
    """Exact variance of the summed support counts of one set.

    See :func:`subset_count_variances` for the formulas.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int or bool mask
        Items in the set.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance; by default the plug-in of
        :func:`subset_count_variances`.

    Returns
    -------
    float
    """
    idx = check_indices(indices, m.domain_size)
    mask = np.zeros(m.domain_size, dtype=bool)
    mask[idx] = True
    return float(subset_count_variances(m, mask[None, :], frequencies)[0])


def subset_variance(m: Measurement, indices, frequencies=None) -> float:
    r"""Exact variance of the raw estimate of a set's frequency.

    That is :math:`\sum_{v \in S} \tilde f_v`, whose variance is
    :math:`\operatorname{Var} C_S / (n (p-q))^2` (see :func:`subset_count_variances`).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int
        The items of the set.
    frequencies : array_like, optional
        The frequencies at which to evaluate the variance (a plug-in by default, as in
        :func:`subset_count_variances`).

    Returns
    -------
    float
        The variance.
    """
    return subset_count_variance(m, indices, frequencies) / (m.n * (m.p - m.q)) ** 2


def _z(prob: float) -> float:
    return float(_normal.ppf((1 + prob) / 2))


def normal_interval(
    m: Measurement, indices, prob: float = 0.9, *, clip_at_zero: bool = False
) -> Interval:
    r"""Return the normal interval of a set's frequency from the raw estimates (plug-in variance).

    :math:`\sum_S \tilde f \pm z_{(1+prob)/2} \sqrt{\operatorname{Var}}`,
    intersected with ``[0, 1]``; ``clip_at_zero`` clips both ends at 0 first (the
    ``post-pos`` query rule, a monotone map, so coverage is unchanged).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    indices : array_like of int or bool mask
        Items in the set.
    prob : float, default 0.9
        Nominal coverage, in (0, 1).
    clip_at_zero : bool, default False
        Clip both ends at 0 before intersecting with ``[0, 1]``.

    Returns
    -------
    Interval
        Of kind ``"normal"``, centred on the raw set estimate.
    """
    prob = check_probability(prob, "prob")
    idx = check_indices(indices, m.domain_size)
    center = float(m.estimates[idx].sum())
    half = _z(prob) * math.sqrt(max(subset_variance(m, idx), 0.0))
    lo, hi = center - half, center + half
    if clip_at_zero:
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    return Interval(min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0), "normal", prob, center)


# ---------------------------------------------------------------------------
# Parametric bootstrap
# ---------------------------------------------------------------------------


def fitted_counts(frequencies: np.ndarray, n: int) -> np.ndarray:
    """Integer user counts summing to ``n``: the bootstrap world of an estimate.

    The frequencies are projected onto the probability simplex (Euclidean projection:
    unchanged for consistent methods; for the others a shift and a cut at 0, which
    keeps the large items' values, unlike a rescaling), then ``n f`` is rounded by
    largest remainders.

    Parameters
    ----------
    frequencies : numpy.ndarray
        An estimate's frequencies, one per item (checked: finite).
    n : int
        Number of users.

    Returns
    -------
    numpy.ndarray of int64
        Non-negative counts summing to ``n``.
    """
    f = project_simplex(check_estimates(frequencies, "frequencies"), 1.0)
    raw = n * f
    x = np.floor(raw).astype(np.int64)
    short = n - int(x.sum())
    if short > 0:
        order = np.argsort(-(raw - x), kind="stable")[:short]
        x[order] += 1
    return x


def bootstrap_counts(m: Measurement, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""One replicate of support counts for users with true counts ``x``.

    The oracle class's ``bootstrap_counts`` (its ``bootstrap_simulation`` says how exact
    it is): GRR exactly, in its mixture form (:meth:`bayesldp.GRR.bootstrap_counts`);
    otherwise :math:`\mathrm{Bin}(x_v, p) + \mathrm{Bin}(n - x_v, q)`
    (:meth:`bayesldp.FrequencyOracle.bootstrap_counts`), the exact joint law for OUE and
    SUE and the exact marginals for OLH, SS and HR (whose dependence between items is
    ignored; subset sums of SS and HR replicates then have the wrong variance, see
    :func:`subset_count_variance`).

    Parameters
    ----------
    m : Measurement
        The oracle output; its oracle's name picks the class.
    x, rng
        As in :meth:`bayesldp.FrequencyOracle.bootstrap_counts` (``x`` as
        :func:`fitted_counts` returns it).
    """
    return oracle_class(m.oracle, FrequencyOracle).bootstrap_counts(m, x, rng)


class ParametricBootstrap:
    """Bootstrap replicates of an Estimate's method (an :class:`Uncertainty`).

    Support counts are simulated from the fitted user counts (the Estimate's
    frequencies projected onto the probability simplex and rounded to ``n`` users:
    :func:`fitted_counts`) by :func:`bootstrap_counts`, and the method is re-run on
    every replicate with the options recorded in ``estimate.info["options"]``, vectorised
    where :mod:`bayesldp.batch` has a form for it, otherwise one replicate at a time.

    Replicate ``i`` is simulated from ``SeedSequence(seed, spawn_key=(i,))``
    (:func:`bayesldp._draws.row_generator`), so it is the same whatever chunk it is
    asked in. All replicates are computed on first use and kept while the
    ``(n_replicates, d)`` array takes at most
    :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`; larger ones are regenerated chunk by
    chunk each time (:func:`bayesldp._draws.cached_rows`).

    Parameters
    ----------
    estimate : Estimate
        The estimate to bootstrap (its method must be registered and not Bayesian).
    n_replicates : int, default 200
        Number of replicates ``B``.
    rng : int, numpy.random.Generator or SeedSequence, default 0
        The seed (a Generator is asked for one).
    world : array_like, optional
        Frequencies to simulate from instead of the estimate's (e.g. another method's
        estimate); projected onto the simplex like them.

    Attributes
    ----------
    kind : str
        ``"parametric bootstrap"``.
    n_draws : int
        ``B``.
    fitted : numpy.ndarray
        Frequencies of the bootstrap world (``counts / n``).
    query_rule : str
        The method's query rule: ``"clip-sum"`` for ``post-pos``, whose replicates are
        raw estimates clipped at query time.
    info : dict
        ``vectorised``, ``seconds`` (time to compute all replicates, once cached),
        ``seed``, ``simulation``.
    """

    kind = "parametric bootstrap"

    def __init__(
        self, estimate: Estimate, n_replicates: int = 200, rng: Any = 0, world=None
    ) -> None:
        from bayesldp.registry import get_method

        if not isinstance(estimate, Estimate):
            raise ValueError(f"estimate must be an Estimate, got {type(estimate).__name__}")
        self.n_draws = check_int(n_replicates, "n_replicates", minimum=2)
        try:
            spec = get_method(estimate.method)
        except ValueError:
            raise ValueError(
                f"method {estimate.method!r} is not registered, so it cannot be re-run on "
                "bootstrap replicates; use method='normal'"
            ) from None
        if spec.bayesian:
            raise ValueError(
                f"method 'bootstrap' is not available for the Bayesian method "
                f"{estimate.method!r} (re-running MCMC per replicate); use 'posterior'"
            )
        if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
            self.seed = int(rng)
        else:
            self.seed = int(check_rng(rng).integers(2**63))
        self.estimate = estimate
        self.method = estimate.method
        self.backend = str(estimate.info.get("backend", "numpy"))
        self.options = dict(estimate.info.get("options", {}))
        self.query_rule = spec.query_rule
        m = estimate.measurement
        base = estimate.frequencies if world is None else check_estimates(world, "world")
        if base.shape != (m.domain_size,):
            raise ValueError(f"world must have length {m.domain_size}, got {base.size}")
        self.counts_fitted = fitted_counts(base, m.n)
        self.fitted = self.counts_fitted / m.n
        self._cache: dict[str, np.ndarray] = {}
        self.info: dict[str, Any] = {
            "seed": self.seed,
            "simulation": oracle_class(m.oracle, FrequencyOracle).bootstrap_simulation,
            "vectorised": None,
            "seconds": None,
        }

    def counts(self, start: int, stop: int) -> np.ndarray:
        """Simulate the support counts of replicates ``start .. stop - 1``.

        Replicate ``i`` uses its own stream (``SeedSequence(seed, spawn_key=(i,))``), so it
        is the same whatever range it is asked in.

        Parameters
        ----------
        start, stop : int
            First replicate and one past the last, ``0 <= start <= stop``.

        Returns
        -------
        numpy.ndarray
            Shape ``(stop - start, d)``.
        """
        start = check_int(start, "start", minimum=0)
        stop = check_int(stop, "stop", minimum=start)
        m = self.estimate.measurement
        rows = []
        for i in range(start, stop):
            rows.append(bootstrap_counts(m, self.counts_fitted, row_generator(self.seed, i)))
        return np.stack(rows)

    def _compute(self, start: int, stop: int) -> np.ndarray:
        from bayesldp.batch import run_rows

        begin = time.perf_counter()
        counts = self.counts(start, stop)
        out, info = run_rows(
            self.estimate.measurement,
            counts,
            self.method,
            backend=self.backend,
            options=self.options,
        )
        self.info["vectorised"] = info["vectorised"]
        self.info["seconds_last"] = time.perf_counter() - begin
        return out

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Replicates ``start .. stop - 1`` of the method's output, shape ``(rows, d)``.

        For ``post-pos`` these are the raw estimates its queries clip. All replicates are
        computed and cached on the first call unless the ``(n_draws, d)`` array would
        take more than :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`
        (:func:`bayesldp._draws.cached_rows`); ``info["seconds"]`` is the time that
        took.

        Parameters
        ----------
        start, stop : int
            First replicate and one past the last, ``0 <= start <= stop <= n_draws``.

        Returns
        -------
        numpy.ndarray
            Read-only, shape ``(stop - start, d)``.
        """
        filling = "rows" not in self._cache
        rows = cached_rows(
            self._cache, self._compute, start, stop, self.n_draws, self.estimate.domain_size
        )
        if filling and "rows" in self._cache:
            self.info["seconds"] = self.info["seconds_last"]
            logger.debug(
                "bootstrap of %s: %d replicates in %.3f s (vectorised: %s)",
                self.method,
                self.n_draws,
                self.info["seconds"],
                self.info["vectorised"],
            )
        return rows

    def set_sums(self, masks: np.ndarray) -> np.ndarray:
        """Every replicate's answer for each set, shape ``(Q, B)`` (``post-pos``: clipped).

        Parameters
        ----------
        masks : numpy.ndarray of bool
            The ``Q`` sets, shape ``(Q, d)``.
        """
        sums = draw_set_sums(self, masks)
        if self.query_rule == "clip-sum":
            sums = np.maximum(sums, 0.0)
        return sums


# ---------------------------------------------------------------------------
# Interval dispatch for Estimate.interval
# ---------------------------------------------------------------------------


def natural_interval(estimate: Estimate) -> str:
    """Return the interval kind ``Estimate.interval(method=None)`` uses.

    ``"posterior"`` when the estimate carries an ``uncertainty`` of kind posterior;
    otherwise the method's declared ``MethodSpec.interval``.

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about.

    Raises
    ------
    ValueError
        The method is not registered and the estimate carries no draws.
    """
    from bayesldp.registry import get_method

    unc = estimate.uncertainty
    if unc is not None and not isinstance(unc, ParametricBootstrap):
        return "posterior"
    try:
        return get_method(estimate.method).interval
    except ValueError:
        raise ValueError(
            f"method {estimate.method!r} is not registered and carries no draws, so it "
            "has no natural interval; pass method='normal' for the raw estimates' interval"
        ) from None


def available_intervals(estimate: Estimate) -> tuple[str, ...]:
    """Return the interval kinds this estimate supports.

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about.

    Returns
    -------
    tuple of str
        ``"normal"`` always; ``"posterior"`` with posterior draws; ``"bootstrap"`` and
        ``"percentile"`` for a registered method that is not Bayesian.
    """
    from bayesldp.registry import get_method

    kinds = ["normal"]
    unc = estimate.uncertainty
    if unc is not None and not isinstance(unc, ParametricBootstrap):
        kinds.append("posterior")
    try:
        spec = get_method(estimate.method)
    except ValueError:
        spec = None
    if spec is not None and not spec.bayesian:
        kinds += ["bootstrap", "percentile"]
    return tuple(kinds)


#: Methods whose answers are linear in the raw estimates: their bootstrap intervals
#: were calibrated for every set measured (paper/intervals.md).
BOOTSTRAP_LINEAR = frozenset({"base", "norm"})
#: Methods whose bootstrap intervals missed badly everywhere measured (a multiplicative
#: bias that the basic bootstrap's additive correction cannot undo).
BOOTSTRAP_UNRELIABLE = frozenset({"norm-mul"})
#: Bootstrap intervals of the other methods held their coverage only for sets whose
#: every item the method answers at least this many noise standard deviations above 0.
RELIABLE_SIGMAS = 6.0


def flagged_sets(estimate: Estimate, masks: np.ndarray, kind: str) -> np.ndarray:
    """Which sets get the undercoverage warning for this interval kind (see notes).

    ``normal`` and ``posterior``: none. ``percentile``: every set of every method (it
    does not correct the method's bias; measured undercoverage for top items of the
    projection methods and for most sets of the others). ``bootstrap``: none for
    ``base`` and ``norm``; every set for ``norm-mul``; for the other methods the sets
    holding an item the method answers below :data:`RELIABLE_SIGMAS` standard deviations
    of its raw estimate (clipping, cutting or shrinking near 0 biases the answer in a
    way replicates simulated around the fitted values do not reproduce).

    Parameters
    ----------
    estimate : Estimate
        The estimate whose intervals are asked for.
    masks : numpy.ndarray of bool
        The ``Q`` sets, shape ``(Q, d)``.
    kind : str
        The interval kind: ``"normal"``, ``"posterior"``, ``"bootstrap"`` or
        ``"percentile"``.

    Returns
    -------
    numpy.ndarray of bool
        One flag per set.
    """
    rows = masks.shape[0]
    if kind in ("normal", "posterior"):
        return np.zeros(rows, dtype=bool)
    if kind == "percentile" or estimate.method in BOOTSTRAP_UNRELIABLE:
        return np.ones(rows, dtype=bool)
    if estimate.method in BOOTSTRAP_LINEAR:
        return np.zeros(rows, dtype=bool)
    sd = np.sqrt(estimate.measurement.variance())
    low = (estimate.frequencies < RELIABLE_SIGMAS * sd).astype(np.float64)
    return masks.astype(np.float64) @ low > 0


def undercoverage_note(estimate: Estimate, masks: np.ndarray, kind: str) -> str:
    """Why intervals of this kind undercover for some of these sets ("" if not known).

    Parameters
    ----------
    estimate : Estimate
        The estimate whose intervals are asked for.
    masks : array_like of bool
        The ``Q`` sets, shape ``(Q, d)``.
    kind : str
        The interval kind, as in :func:`flagged_sets`.
    """
    flagged = flagged_sets(estimate, np.asarray(masks, dtype=bool), kind)
    if not flagged.any():
        return ""
    if kind == "percentile":
        why = "percentile intervals do not correct the method's bias"
    elif estimate.method in BOOTSTRAP_UNRELIABLE:
        why = f"bootstrap intervals of {estimate.method} missed in every setting measured"
    else:
        why = (
            f"{int(flagged.sum())} set(s) hold items that {estimate.method} answers below "
            f"{RELIABLE_SIGMAS:g} noise sd, where its bootstrap intervals undercover"
        )
    return f"{why} (paper/intervals.md); method='normal' is calibrated"


def _check_kind(estimate: Estimate, method: str | None) -> str:
    if method is None:
        return natural_interval(estimate)
    check_choice(method, INTERVAL_KINDS, "method")
    available = available_intervals(estimate)
    if method not in available:
        raise ValueError(
            f"method {method!r} is not available for an estimate of {estimate.method!r}; "
            f"it offers {', '.join(available)}"
        )
    return method


def set_intervals(
    estimate: Estimate,
    sets,
    prob: float = 0.9,
    method: str | None = None,
    *,
    warn: bool = True,
    stacklevel: int = 2,
    bootstrap: ParametricBootstrap | None = None,
) -> tuple[np.ndarray, np.ndarray, str]:
    """Intervals for many sets at once: what :meth:`Estimate.interval` computes for one.

    Parameters
    ----------
    estimate : Estimate
    sets : array_like
        A ``(Q, d)`` boolean array of sets, or one set (indices or a mask).
    prob : float
        Nominal coverage, in (0, 1).
    method : str, optional
        The interval kind (see :meth:`Estimate.interval`); ``None`` for the natural one.
    warn : bool
        Issue the RuntimeWarning for sets where the interval is known to undercover.
    stacklevel : int
        Passed to :func:`warnings.warn`.
    bootstrap : ParametricBootstrap, optional
        Replicates to use instead of ``estimate.bootstrap()`` (e.g. another seed or size).

    Returns
    -------
    lo, hi : numpy.ndarray
        Bounds, one per set, within [0, 1].
    kind : str
        The interval kind used.
    """
    if isinstance(prob, bool) or not isinstance(prob, int | float | np.integer | np.floating):
        raise ValueError(f"prob must be a number in (0, 1), got {prob!r}")
    prob = check_probability(prob, "prob")
    d = estimate.domain_size
    masks = _as_masks(sets, d, "indices")
    kind = _check_kind(estimate, method)
    weights = masks.astype(np.float64)
    lo_q, hi_q = (1 - prob) / 2, (1 + prob) / 2
    if kind == "normal":
        m = estimate.measurement
        center = weights @ m.estimates
        var = subset_count_variances(m, masks) / (m.n * (m.p - m.q)) ** 2
        half = _z(prob) * np.sqrt(np.maximum(var, 0.0))
        lo, hi = center - half, center + half
        if estimate.query_basis is not None:
            lo, hi = np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    elif kind == "posterior":
        assert estimate.uncertainty is not None  # "posterior" needs one (_check_kind)
        sums = draw_set_sums(estimate.uncertainty, masks)
        lo, hi = np.quantile(sums, [lo_q, hi_q], axis=1)
    else:
        # Estimate.bootstrap is typed as the Uncertainty protocol (estimate.py does not
        # import this module); DefaultInference makes a ParametricBootstrap
        boot = cast(ParametricBootstrap, estimate.bootstrap()) if bootstrap is None else bootstrap
        if boot.estimate is not estimate:
            raise ValueError("bootstrap must be made from this estimate (estimate.bootstrap())")
        sums = boot.set_sums(masks)
        if kind == "percentile":
            lo, hi = np.quantile(sums, [lo_q, hi_q], axis=1)
        else:
            answers = _answers(estimate, weights)
            pivots = sums - (weights @ boot.fitted)[:, None]
            q_lo, q_hi = np.quantile(pivots, [lo_q, hi_q], axis=1)
            lo, hi = answers - q_hi, answers - q_lo
        note = undercoverage_note(estimate, masks, kind)
        if warn and note:
            warnings.warn(note, RuntimeWarning, stacklevel=stacklevel)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0), kind


def _answers(estimate: Estimate, weights: np.ndarray) -> np.ndarray:
    """Return the estimate's answer to each set (``post-pos``: the raw sum clipped at 0)."""
    if estimate.query_basis is not None:
        return np.maximum(weights @ estimate.query_basis, 0.0)
    return weights @ estimate.frequencies


def estimate_interval(estimate: Estimate, indices, prob: float = 0.9, method=None) -> Interval:
    """Implement :meth:`bayesldp.Estimate.interval` (see there).

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about.
    indices : array_like of int or bool mask
        Items in the set.
    prob : float, default 0.9
        Nominal coverage, in (0, 1).
    method : {None, "normal", "bootstrap", "percentile", "posterior"}
        The interval kind; None for the estimate's natural one (:func:`natural_interval`).

    Returns
    -------
    Interval
        With the undercoverage note of :func:`undercoverage_note`.
    """
    d = estimate.domain_size
    idx = check_indices(indices, d)
    mask = np.zeros((1, d), dtype=bool)
    mask[0, idx] = True
    # Called as Estimate.interval -> DefaultInference.interval -> estimate_interval ->
    # set_intervals: warn at the caller.
    lo, hi, kind = set_intervals(estimate, mask, prob, method, stacklevel=5)
    note = undercoverage_note(estimate, mask, kind)
    if kind == "normal":
        center = float(estimate.measurement.estimates[idx].sum())
    else:
        center = float(_answers(estimate, mask.astype(np.float64))[0])
    return Interval(lo[0], hi[0], kind, float(prob), center, note)
