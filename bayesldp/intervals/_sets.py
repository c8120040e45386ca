"""Intervals of many sets at once, the natural interval of each estimate, and their notes.

:func:`set_intervals` is what :meth:`bayesldp.Estimate.interval` computes for one set
(:func:`estimate_interval`). The natural interval of an estimate is its method's
``MethodSpec.interval``: ``"normal"`` for every built-in non-Bayesian method
(``eb-npmle`` included), ``"posterior"`` for the Bayesian models. An interval's note says when the
kind asked for is known to undercover (:func:`undercoverage_note`) and when the method's
own answer lies outside the interval.
"""

from __future__ import annotations

import warnings
from typing import cast

import numpy as np

from bayesldp._draws import draw_set_sums
from bayesldp._validation import check_choice, check_indices, check_probability
from bayesldp.estimate import Estimate
from bayesldp.intervals._bootstrap import ParametricBootstrap
from bayesldp.intervals._interval import CENTERS, Interval
from bayesldp.intervals._variance import as_masks, normal_bounds
from bayesldp.methods.registry import get_method

__all__ = [
    "BOOTSTRAP_LINEAR",
    "BOOTSTRAP_UNRELIABLE",
    "INTERVAL_KINDS",
    "RELIABLE_SIGMAS",
    "available_intervals",
    "estimate_interval",
    "flagged_sets",
    "natural_interval",
    "set_intervals",
    "undercoverage_note",
]

#: Interval kinds :meth:`Estimate.interval` knows.
INTERVAL_KINDS: tuple[str, ...] = ("normal", "bootstrap", "percentile", "posterior")

#: Methods whose answers are linear in the raw estimates: their bootstrap intervals
#: hold their coverage for every set (paper/intervals.md).
BOOTSTRAP_LINEAR = frozenset({"base", "norm"})
#: Methods whose bootstrap intervals miss everywhere (a multiplicative bias that the
#: basic bootstrap's additive correction cannot undo; paper/intervals.md).
BOOTSTRAP_UNRELIABLE = frozenset({"norm-mul"})
#: Bootstrap intervals of the other methods hold their coverage only for sets whose
#: every item the method answers at least this many noise standard deviations above 0.
RELIABLE_SIGMAS = 6.0


def _has_draws(estimate: Estimate) -> bool:
    """Whether the estimate carries draws of its own (posterior draws, not a bootstrap)."""
    unc = estimate.uncertainty
    return unc is not None and not isinstance(unc, ParametricBootstrap)


def natural_interval(estimate: Estimate) -> str:
    """Return the interval kind ``Estimate.interval(method=None)`` uses.

    The method's declared ``MethodSpec.interval`` (``"normal"`` for every built-in
    method that needs no truth, ``eb-npmle`` and the Bayesian models included, whose
    posterior intervals undercover set sums); ``"posterior"`` for an estimate of an
    unregistered method that carries draws of its own.

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about.

    Raises
    ------
    ValueError
        The method is not registered and the estimate carries no draws.
    """
    try:
        kind = get_method(estimate.method).interval
    except ValueError:
        if _has_draws(estimate):
            return "posterior"
        raise ValueError(
            f"method {estimate.method!r} is not registered and carries no draws, so it "
            "has no natural interval; pass method='normal' for the raw estimates' interval"
        ) from None
    if kind == "posterior" and not _has_draws(estimate):
        return "normal"
    return kind


def available_intervals(estimate: Estimate) -> tuple[str, ...]:
    """Return the interval kinds this estimate supports.

    Parameters
    ----------
    estimate : Estimate
        The estimate asked about.

    Returns
    -------
    tuple of str
        ``"normal"`` always; ``"posterior"`` with draws of its own; ``"bootstrap"`` and
        ``"percentile"`` for a registered method that is not Bayesian.
    """
    kinds = ["normal"]
    if _has_draws(estimate):
        kinds.append("posterior")
    try:
        spec = get_method(estimate.method)
    except ValueError:
        spec = None
    if spec is not None and not spec.bayesian:
        kinds += ["bootstrap", "percentile"]
    return tuple(kinds)


def flagged_sets(estimate: Estimate, masks: np.ndarray, kind: str) -> np.ndarray:
    """Which sets get the undercoverage warning for this interval kind (see notes).

    ``normal`` and ``posterior``: none. ``percentile``: every set of every method (it
    does not correct the method's bias). ``bootstrap``: none for ``base`` and ``norm``;
    every set for ``norm-mul``; for the other methods the sets holding an item the
    method answers below :data:`RELIABLE_SIGMAS` standard deviations of its raw
    estimate (clipping, cutting or shrinking near 0 biases the answer in a way
    replicates simulated around the fitted values do not reproduce).

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
        why = f"bootstrap intervals of {estimate.method} miss in every setting measured"
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


def _answers(estimate: Estimate, weights: np.ndarray) -> np.ndarray:
    """Return the estimate's answer to each set (``post-pos``: the raw sum clipped at 0)."""
    if estimate.query_basis is not None:
        return np.maximum(weights @ estimate.query_basis, 0.0)
    return weights @ estimate.frequencies


def _set_intervals(
    estimate: Estimate,
    masks: np.ndarray,
    prob: float,
    kind: str,
    bootstrap: ParametricBootstrap | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds (not clipped to [0, 1]) and centres of ``kind`` intervals for each set."""
    lo_q, hi_q = (1 - prob) / 2, (1 + prob) / 2
    if kind == "normal":
        clip = estimate.query_basis is not None
        return normal_bounds(estimate.measurement, masks, prob, clip_at_zero=clip)
    if kind == "posterior":
        assert estimate.uncertainty is not None  # "posterior" needs draws (_check_kind)
        sums = draw_set_sums(estimate.uncertainty, masks)
        lo, center, hi = np.quantile(sums, [lo_q, 0.5, hi_q], axis=1)
        return lo, hi, center
    # Estimate.bootstrap is typed as the Uncertainty protocol (estimate.py does not
    # import this module); it returns a ParametricBootstrap
    boot = cast(ParametricBootstrap, estimate.bootstrap()) if bootstrap is None else bootstrap
    if boot.estimate is not estimate:
        raise ValueError("bootstrap must be made from this estimate (estimate.bootstrap())")
    sums = boot.set_sums(masks)
    if kind == "percentile":
        lo, center, hi = np.quantile(sums, [lo_q, 0.5, hi_q], axis=1)
        return lo, hi, center
    weights = masks.astype(np.float64)
    answers = _answers(estimate, weights)
    pivots = sums - (weights @ boot.fitted)[:, None]
    q_lo, q_hi = np.quantile(pivots, [lo_q, hi_q], axis=1)
    return answers - q_hi, answers - q_lo, answers


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
        The estimate asked about.
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
    lo, hi, _, kind = _checked_intervals(
        estimate, sets, prob, method, warn, stacklevel + 1, bootstrap
    )
    return lo, hi, kind


def _checked_intervals(
    estimate: Estimate,
    sets,
    prob,
    method: str | None,
    warn: bool,
    stacklevel: int,
    bootstrap: ParametricBootstrap | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Check the arguments; return bounds within [0, 1], centres and the kind used.

    ``stacklevel`` is given to :func:`warnings.warn` as it is.
    """
    if isinstance(prob, bool) or not isinstance(prob, int | float | np.integer | np.floating):
        raise ValueError(f"prob must be a number in (0, 1), got {prob!r}")
    prob = check_probability(float(prob), "prob")
    masks = as_masks(sets, estimate.domain_size, "indices")
    kind = _check_kind(estimate, method)
    lo, hi, center = _set_intervals(estimate, masks, prob, kind, bootstrap)
    if warn and kind in ("bootstrap", "percentile"):
        note = undercoverage_note(estimate, masks, kind)
        if note:
            warnings.warn(note, RuntimeWarning, stacklevel=stacklevel)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0), center, kind


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
        Its note joins the undercoverage note of :func:`undercoverage_note` and, when
        the method's own answer lies outside the interval, a sentence that says so.
    """
    d = estimate.domain_size
    idx = check_indices(indices, d)
    mask = np.zeros((1, d), dtype=bool)
    mask[0, idx] = True
    # Called as Estimate.interval -> estimate_interval -> _checked_intervals: warn at
    # the caller of Estimate.interval.
    lo, hi, center, kind = _checked_intervals(estimate, mask, prob, method, True, 4)
    notes = [undercoverage_note(estimate, mask, kind)]
    answer = float(_answers(estimate, mask.astype(np.float64))[0])
    tol = 1e-12 * max(1.0, abs(answer))
    if not lo[0] - tol <= answer <= hi[0] + tol:
        notes.append(
            f"{estimate.method}'s answer {answer:.6g} lies outside this interval, which is "
            f"built around the {CENTERS[kind]} ({float(center[0]):.6g})"
        )
    note = "; ".join(n for n in notes if n)
    return Interval(lo[0], hi[0], kind, float(prob), float(center[0]), note)
