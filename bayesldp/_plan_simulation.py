"""Simulating a planned collection, and searching for the users a target error needs.

The machinery of :func:`bayesldp.plan` (in :mod:`bayesldp.planning`): query errors of
many simulated collections at once, and the search over user counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bayesldp._query import random_set_masks, set_loss, set_size, top_items
from bayesldp.methods.registry import MeasurementRows, get_method, postprocess
from bayesldp.oracles import FrequencyOracle

#: Random sets averaged over per simulated collection, for set queries.
SETS_PER_RUN = 10
#: Factor between the user counts tried when searching for the users a target needs.
SEARCH_STEP = 4.0
#: Most user counts tried per oracle in that search.
SEARCH_LIMIT = 8
#: Most users a plan simulates (numpy's multinomial draws int64 counts).
MAX_USERS = 1 << 62


def query_errors(
    answers: np.ndarray,
    raw: np.ndarray,
    truth: np.ndarray,
    kind: str,
    value: float,
    clip_sum: bool,
    masks: np.ndarray | None,
) -> np.ndarray:
    """Return the squared error of each simulated collection's answer (one per row).

    For a set query the error is averaged over all sets of the query's size exactly
    (:func:`bayesldp._query.set_loss`), except for answers that clip the raw sum (``post-pos``),
    which are averaged over the random sets ``masks``.
    """
    if kind == "set" and not clip_sum:
        return set_loss(answers - truth, set_size(truth.shape[1], value))
    if kind == "full":
        return np.mean((answers - truth) ** 2, axis=1)
    if kind == "top":
        top = top_items(truth, int(value))
        diff = np.take_along_axis(answers, top, axis=1) - np.take_along_axis(truth, top, axis=1)
        return np.mean(diff**2, axis=1)
    assert masks is not None
    w = masks.astype(np.float64)  # (rows, sets, d)
    sums = np.einsum("rsd,rd->rs", w, raw if clip_sum else answers)
    if clip_sum:
        sums = np.maximum(sums, 0.0)
    true_sums = np.einsum("rsd,rd->rs", w, truth)
    return np.mean((sums - true_sums) ** 2, axis=1)


def simulate_errors(
    oracle: FrequencyOracle,
    frequencies: np.ndarray,
    n: int,
    query: tuple[str, float],
    methods: Sequence[str],
    reps: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Each method's squared query error in ``reps`` simulated collections of ``n`` users.

    Each collection draws the users' values from ``frequencies`` (a multinomial), their
    support counts with ``oracle.simulate(..., exact=False)`` (exact for GRR, OUE and
    SUE; each count's exact marginal for OLH, SS and HR), and runs every method on all
    collections at once (its row function, else one at a time).

    Returns
    -------
    dict
        Method name (and ``"raw"``, the unbiased estimates) to ``reps`` squared errors.
    """
    kind, value = query
    d = oracle.domain_size
    x = rng.multinomial(n, frequencies, size=reps)
    counts = np.stack([oracle.simulate(row, rng, exact=False).support_counts for row in x])
    m = oracle.measurement(counts[0], n)
    rows = MeasurementRows.from_counts(m, counts)
    truth = x / n
    clipping = any(get_method(name).query_rule == "clip-sum" for name in methods)
    masks = None
    if kind == "set" and clipping:
        masks = random_set_masks((reps, SETS_PER_RUN), d, set_size(d, value), rng)
    out = {"raw": query_errors(rows.estimates, rows.estimates, truth, kind, value, False, masks)}
    for name in methods:
        spec = get_method(name)
        function = spec.row_function("numpy", {})
        if function is not None:
            answers, _ = function(rows, **spec.fixed_options)
        else:
            answers = np.stack(
                [
                    postprocess(oracle.measurement(c, n), name, **rng_option(spec, rng)).frequencies
                    for c in counts
                ]
            )
        clip = spec.query_rule == "clip-sum"
        out[name] = query_errors(answers, rows.estimates, truth, kind, value, clip, masks)
    return out


def rng_option(spec: Any, rng: np.random.Generator) -> dict[str, Any]:
    """Return ``{"rng": rng}`` for a method that draws random numbers, else nothing."""
    return {"rng": rng} if spec.accepts("rng") else {}


class Curve:
    r"""Simulated post-processed error of one oracle, by number of users (memoised).

    Each method's mean error is taken with the raw estimates' error as a control
    variate: the simulated collections are shared by all methods and the raw error's
    expectation under the simulation, ``raw_per_user / n``, is known exactly, so
    :math:`\bar e - \hat\beta (\bar r - \mathbb E r)` (with :math:`\hat\beta` the
    regression slope of the method's error on the raw error) has the same expectation
    and far less Monte Carlo noise, above all for methods close to the raw estimates.
    """

    def __init__(
        self, simulate: Callable[[int], dict[str, np.ndarray]], raw_per_user: float
    ) -> None:
        self.simulate = simulate
        self.raw_per_user = raw_per_user
        self.points: dict[int, tuple[str, float, float]] = {}

    def __call__(self, n: int) -> tuple[str, float, float]:
        """Return ``(best method, its mean error, its Monte Carlo standard error)`` at ``n``."""
        if n not in self.points:
            errors = self.simulate(n)
            raw = errors.pop("raw")
            means = {k: controlled(e, raw, self.raw_per_user / n) for k, e in errors.items()}
            best = min(means, key=lambda k: means[k][0])
            self.points[n] = (best, *means[best])
        return self.points[n]

    def users_needed(self, target: float, start: int) -> tuple[int, bool]:
        """Users at which the simulated error reaches ``target``; whether it was bracketed.

        Starting at ``start`` (the raw estimates' need), the search steps by
        :data:`SEARCH_STEP` until the error crosses the target, then interpolates
        linearly in log error against log users between the two bracketing counts,
        simulates at the interpolated count, and returns where the least-squares line
        through the three counts (log error on log users) reaches the target.
        """
        hi = start
        e_hi = self(hi)[1]
        lo, e_lo = hi, e_hi
        tries = 1
        if e_hi > target:  # post-processing does worse than needed: more users
            while e_hi > target and tries < SEARCH_LIMIT and hi < MAX_USERS:
                lo, e_lo = hi, e_hi
                hi = min(MAX_USERS, math.ceil(hi * SEARCH_STEP))
                e_hi = self(hi)[1]
                tries += 1
        else:
            while e_lo <= target and tries < SEARCH_LIMIT and lo > 1:
                hi, e_hi = lo, e_lo
                lo = max(1, math.floor(lo / SEARCH_STEP))
                e_lo = self(lo)[1]
                tries += 1
        bracketed = e_lo > target >= e_hi and lo < hi
        if not bracketed:
            return (hi if e_hi <= target else _extrapolate(lo, e_lo, hi, e_hi, target)), False
        middle = _interpolate(lo, e_lo, hi, e_hi, target)
        self(middle)
        inside = [(k, v[1]) for k, v in self.points.items() if lo <= k <= hi and v[1] > 0]
        if len({k for k, _ in inside}) < 2:  # errors of 0 leave no line to fit
            return middle, True
        return _fit_users(inside, lo, hi, target), True


def controlled(errors: np.ndarray, raw: np.ndarray, raw_mean: float) -> tuple[float, float]:
    """Return the control-variate mean of ``errors`` and its standard error.

    Parameters
    ----------
    errors : numpy.ndarray
        A method's error in each simulated collection.
    raw : numpy.ndarray
        The raw estimates' error in the same collections.
    raw_mean : float
        The raw error's exact expectation.
    """
    reps = errors.size
    if reps < 3 or not np.var(raw) > 0:
        mean, resid = float(np.mean(errors)), errors
    else:
        beta = float(np.cov(errors, raw)[0, 1] / np.var(raw, ddof=1))
        resid = errors - beta * (raw - raw_mean)
        mean = float(np.mean(resid))
    se = float(np.std(resid, ddof=1) / math.sqrt(reps)) if reps > 1 else math.nan
    return max(mean, 0.0), se


def _interpolate(lo: int, e_lo: float, hi: int, e_hi: float, target: float) -> int:
    """Users at which the log-log line through two points reaches ``target``."""
    if not (e_lo > 0 and e_hi > 0) or e_lo == e_hi:
        return hi
    t = (math.log(target) - math.log(e_lo)) / (math.log(e_hi) - math.log(e_lo))
    t = min(max(t, 0.0), 1.0)
    return max(1, math.ceil(math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))))


def _fit_users(points: list[tuple[int, float]], lo: int, hi: int, target: float) -> int:
    """Return where the least-squares line (log error on log users) reaches ``target``.

    Kept within ``[lo, hi]``; more robust to Monte Carlo noise than one segment.
    """
    logn = np.log([p[0] for p in points])
    loge = np.log([p[1] for p in points])
    slope, icept = np.polyfit(logn, loge, 1)
    if not slope < 0:  # noise hides the trend: the middle of the bracket
        return math.ceil(math.sqrt(lo * hi))
    n = math.exp((math.log(target) - icept) / slope)
    return max(1, min(max(math.ceil(n), lo), hi))


def _extrapolate(lo: int, e_lo: float, hi: int, e_hi: float, target: float) -> int:
    """Beyond the searched range: the error taken as ``1/n`` from the last point."""
    return max(1, min(MAX_USERS, math.ceil(hi * e_hi / target)))
