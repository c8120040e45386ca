"""The likelihood methods: MLE-Apx (Wang et al.'s Eq. 14), the exact MLE and IBU.

``mle`` maximises the oracle's support-count likelihood exactly (multinomial for GRR,
binomial marginals otherwise); ``ibu`` is EM for the same likelihood and stops close
to its optimum; ``mle-apx`` is the long paper's closed-form approximation. The row
functions are vectorised over the rows of a
:class:`~bayesldp.methods._rows.MeasurementRows`; ``ibu``'s rows are its limit, the
MLE (:func:`ibu_rows`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesldp._validation import check_bool, check_estimates, check_float, check_int
from bayesldp.errors import ConvergenceError, ConvergenceWarning
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods._rows import MeasurementRows, estimate_of
from bayesldp.oracles._likelihood import likelihood_kind

__all__ = [
    "IBU_LIMIT_SDS",
    "count_classes",
    "ibu",
    "ibu_rows",
    "likelihood_kind",
    "log_likelihood",
    "mle",
    "mle_apx",
    "mle_apx_rows",
    "mle_rows",
]

#: How far (in noise standard deviations of each item) ``ibu`` may stop from the MLE,
#: the limit its bootstrap rows are (:func:`ibu_rows`; a test holds it to this).
IBU_LIMIT_SDS = 0.01


def mle_apx_rows(
    rows: MeasurementRows, *, max_iter: int | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    r"""MLE-Apx's rows: the closed-form KKT solution of the long paper's Eq. (13), Eq. (14).

    With :math:`D_1` the items not yet set to zero,

    .. math::

        x = \frac{\sum_{D_1} c_v/n - |D_1| q - (p-q)}{(p-q)(1-p-q) + |D_1| q (1-q)},
        \qquad
        f'_v = \frac{c_v/n - q - q(1-q)x}{p - q + (p-q)(1-p-q)x},

    starting from :math:`D_1 = D` and moving items with :math:`f'_v < 0` to
    :math:`D_0` until none is negative, every row at once. A row left with one item is
    that item's indicator (Eq. 14 is 0/0 there). Eq. (14) sums to 1 in exact
    arithmetic; when ``p`` is near 1 its denominator cancels and the computed sum can be
    off by 1e-6, so the rounding is divided out (``sum_before``).

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    max_iter : int, optional
        Largest number of active-set passes, at least 1; None allows ``d``, which always
        suffices.

    Raises
    ------
    ConvergenceError
        ``max_iter`` passes left negative frequencies in some row.
    """
    m = rows.measurement
    n, p, q = m.n, m.p, m.q
    pq = p - q
    a = rows.counts / n
    count, d = a.shape
    limit = d if max_iter is None else check_int(max_iter, "max_iter", minimum=1)
    active = np.ones((count, d), dtype=bool)
    out = np.zeros((count, d))
    iterations = np.zeros(count, dtype=np.int64)
    support = np.zeros(count, dtype=np.int64)
    x_done = np.full(count, None, dtype=object)
    sum_before = np.full(count, None, dtype=object)
    todo = np.arange(count)
    for it in range(1, limit + 1):
        act = active[todo]
        size = act.sum(axis=1)
        single = size == 1
        if single.any():
            out[todo[single]] = act[single]
            iterations[todo[single]], support[todo[single]] = it, 1
        sub, act, size, rest = a[todo], act, size, ~single
        x = (np.where(act, sub, 0.0).sum(axis=1) - size * q - pq) / (
            pq * (1 - p - q) + size * q * (1 - q)
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(
                act,
                (sub - q - q * (1 - q) * x[:, None]) / (pq + pq * (1 - p - q) * x[:, None]),
                0.0,
            )
        negative = f < 0
        done = rest & ~negative.any(axis=1)
        if done.any():
            total = f[done].sum(axis=1)
            rows_done = todo[done]
            out[rows_done] = f[done] / total[:, None]
            iterations[rows_done], support[rows_done] = it, size[done]
            x_done[rows_done], sum_before[rows_done] = x[done], total
        active[todo] = act & ~negative
        todo = todo[rest & ~done]
        if todo.size == 0:
            info = {"x": x_done, "iterations": iterations, "support": support}
            return out, {**info, "sum_before": sum_before}
    raise ConvergenceError(
        f"mle-apx: {limit} active-set passes left negative frequencies (max_iter={max_iter}); "
        "it converges within d passes, so leave max_iter at None"
    )


def mle_apx(m: Measurement, *, max_iter: int | None = None) -> Estimate:
    """MLE-Apx: the closed-form KKT solution of the long paper's Eq. (13), Eq. (14).

    See :func:`mle_apx_rows` for the formulas. (The NDSS copy's signs are damaged; these
    are the long version's, checked against an exact solver.)

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    max_iter : int, optional
        Largest number of active-set passes, at least 1; None (the default) allows
        ``d``, which always suffices.

    Returns
    -------
    Estimate
        ``info`` records ``iterations``, the ``support`` size and, unless one item is
        left (then None), ``x`` and the sum before the final division (``sum_before``).

    Raises
    ------
    ConvergenceError
        ``max_iter`` passes left negative frequencies.
    """
    return estimate_of(mle_apx_rows, m, "mle-apx", max_iter=max_iter)


def log_likelihood(m: Measurement, frequencies, *, likelihood: str = "auto") -> float:
    r"""Log-likelihood of the support counts given frequencies (up to a constant).

    :math:`\sum_v c_v \log \pi_v` for the multinomial (GRR) and
    :math:`\sum_v c_v \log \pi_v + (n - c_v) \log(1 - \pi_v)` for the product of
    binomials, with :math:`\pi_v = q + (p - q) f_v`: the objective of :func:`mle` and
    :func:`ibu`.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    frequencies : array_like of float
        Frequencies of the ``d`` items (checked: finite, length ``d``).
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        As in :func:`likelihood_kind`.
    """
    kind = likelihood_kind(m, likelihood)
    f = check_estimates(frequencies, "frequencies")
    if f.size != m.domain_size:
        raise ValueError(f"frequencies has length {f.size}, but the domain size is {m.domain_size}")
    c = m.support_counts.astype(np.float64)
    return _Classes(c, np.ones_like(c), m.n, m.p, m.q, kind).loglik(f)


def mle_rows(
    rows: MeasurementRows, *, likelihood: str = "auto"
) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Return the exact MLE of every row (see :func:`mle`).

    Multinomial (GRR): :math:`f_v = \max(c_v t - r, 0)` with :math:`r = q/(p-q)`, found
    by water-filling over the items sorted by count. Binomial: the KKT multiplier of
    :math:`\sum f = 1`, found by a bracketed Newton search per row
    (:func:`_binomial_rows`). A single row is solved on its distinct counts
    (:func:`count_classes`), which are far fewer than ``d`` at large ``d``; several rows
    on all their items (their distinct counts differ from row to row).

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    likelihood : {"auto", "multinomial", "binomial"}
        As in :func:`likelihood_kind`.
    """
    m = rows.measurement
    kind = likelihood_kind(m, likelihood)
    c = rows.counts.astype(np.float64)
    n, p, q = m.n, m.p, m.q
    pq = p - q
    if kind == "multinomial":
        # f_v = max(c_v t - r, 0), r = q/(p-q): water-filling over items sorted by c.
        r = q / pq
        count, d = c.shape
        cs = -np.sort(-c, axis=1)
        csum = np.cumsum(cs, axis=1)
        ks = np.arange(1, d + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (1 + ks * r) / csum
        ok = cs * t - r > 0
        j = d - 1 - np.argmax(ok[:, ::-1], axis=1)
        tj = t[np.arange(count), j]
        return np.maximum(c * tj[:, None] - r, 0.0), {"likelihood": kind, "multiplier": 1 / tj}
    if rows.size == 1:
        values, weights, expand = count_classes(rows.counts[0])
        f, kappa = _binomial_rows(values[None, :].astype(np.float64), weights[None, :], n, q, pq)
    else:
        f, kappa = _binomial_rows(c, np.ones_like(c), n, q, pq)
        weights = np.ones_like(c)
    # the multiplier is found to a few ulps; where the sum is steep in it (counts near n,
    # p near 1) that leaves the sum off by up to ~1e-9: divide it out
    total = np.sum(weights * f, axis=-1)
    f = f / total[:, None]
    out = expand(f[0])[None, :] if rows.size == 1 else f
    return out, {"likelihood": kind, "multiplier": kappa * pq, "sum_before": total}


def mle(m: Measurement, *, likelihood: str = "auto") -> Estimate:
    r"""Exact MLE of the oracle's support-count likelihood on the simplex.

    For GRR the counts are multinomial with cell probabilities
    :math:`\pi_v = q + (p-q) f_v`; for the other oracles each count is
    :math:`\mathrm{Binomial}(n, \pi_v)` (users draw values i.i.d. from ``f``), and the
    product of these marginals is maximised. Both are solved exactly through the KKT
    conditions: a one-dimensional search for the multiplier of :math:`\sum f = 1`.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    likelihood : {"auto", "multinomial", "binomial"}
        ``auto`` picks multinomial for GRR and binomial otherwise.

    Returns
    -------
    Estimate
        ``info`` records the ``likelihood``, the ``multiplier`` and (binomial) the sum
        before the final division (``sum_before``).
    """
    return estimate_of(mle_rows, m, "mle", likelihood=likelihood)


def ibu_rows(
    rows: MeasurementRows, *, likelihood: str = "auto"
) -> tuple[np.ndarray, dict[str, Any]]:
    """IBU's rows: the limit of its EM iteration, the exact MLE of each row (:func:`mle_rows`).

    :func:`ibu` is EM for the likelihood :func:`mle` maximises exactly, and it stops
    close to that optimum: within :data:`IBU_LIMIT_SDS` noise standard deviations of it
    for every item (a test checks this on the papers' Zipf setting, also where ibu stops
    at ``max_iter`` before meeting its own tolerance). Re-running EM on every bootstrap
    replicate would cost the iteration hundreds of times over, so the replicates are the
    MLE. Asking for ``max_iter``, ``tol`` or ``accelerate`` asks
    for the iteration itself: this function does not take them, and the bootstrap then
    re-runs :func:`ibu` on every replicate.

    Parameters
    ----------
    rows : MeasurementRows
        The measurements.
    likelihood : {"auto", "multinomial", "binomial"}
        As in :func:`ibu`.
    """
    return mle_rows(rows, likelihood=likelihood)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Return ``a @ b`` without BLAS.

    A threaded BLAS dot of short vectors can wait for busy cores; a plain sum does not.
    """
    return float(np.sum(a * b))


def count_classes(
    counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Group items by their support count: the distinct counts, how many items share each.

    The likelihood methods treat items with equal counts alike, so they can work on the
    distinct counts (tens of thousands even when ``d`` is ten million, because counts
    are integers in a narrow band around ``n q``) and expand the answer at the end.

    Parameters
    ----------
    counts : array_like of int
        Support counts, one per item.

    Returns
    -------
    values : numpy.ndarray
        The distinct counts, increasing.
    weights : numpy.ndarray
        Number of items with each count.
    expand : callable
        Maps a vector over ``values`` to the vector over all items.
    """
    c = np.asarray(counts, dtype=np.int64)
    low = int(c.min())
    span = int(c.max()) - low + 1
    if span <= 8 * c.size + 1024:  # a histogram is cheaper than sorting
        hist = np.bincount(c - low, minlength=span)
        present = np.flatnonzero(hist)
        slot = np.zeros(span, dtype=np.int64)
        slot[present] = np.arange(present.size)
        index = slot[c - low]
        values, weights = present + low, hist[present]
    else:
        values, index, weights = np.unique(c, return_inverse=True, return_counts=True)

    def expand(x: np.ndarray) -> np.ndarray:
        return np.asarray(x)[index]

    return values, weights.astype(np.float64), expand


def _binomial_rows(
    c: np.ndarray, weights: np.ndarray, n: int, q: float, pq: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Solve :math:`\sum_v w_v f_v(\kappa) = 1` in every row: Newton kept inside a bracket.

    For multiplier :math:`\kappa` the KKT condition :math:`c/\pi - (n-c)/(1-\pi) =
    \kappa` of an active item is the quadratic :math:`\kappa\pi^2 - (\kappa+n)\pi + c =
    0`, whose one root in :math:`[0, 1]` is :math:`2c/(b + \sqrt D)` with :math:`b =
    \kappa + n`, :math:`D = b^2 - 4\kappa c \ge 0`, except where that is 0/0 (``c = 0``
    and :math:`b \le 0`), where it is :math:`b / \kappa`: a form with no cancellation and
    no NaN for any count in ``0..n`` (zero counts included). The weighted sum falls as
    :math:`\kappa` grows; each step costs a few passes over the row.

    Parameters
    ----------
    c : numpy.ndarray
        Counts (or distinct counts), shape ``(B, K)``.
    weights : numpy.ndarray
        Items per entry, shape ``(B, K)``.
    n : int
        Number of users.
    q, pq : float
        The oracle's ``q`` and ``p - q``.

    Returns
    -------
    f : numpy.ndarray
        Frequencies, shape ``(B, K)``.
    kappa : numpy.ndarray
        Each row's multiplier.
    """
    count = c.shape[0]
    kappa = np.zeros(count)
    lo = np.full(count, -np.inf)
    hi = np.full(count, np.inf)
    out = np.zeros_like(c)
    todo = np.arange(count)
    eps = np.finfo(float).eps
    tol = 4 * eps * np.maximum(1.0, weights.sum(axis=1)) ** 0.5
    for _ in range(200):
        k = kappa[todo][:, None]
        cc, w = c[todo], weights[todo]
        b = k + n
        root = np.sqrt(np.maximum(b * b - 4.0 * k * cc, 0.0))
        den = b + root
        with np.errstate(divide="ignore", invalid="ignore"):
            alt = np.where(k != 0, b / k, 0.0)
            pi = np.where(den > 0, 2.0 * cc / den, alt)
            slope = np.where(root > 0, -pi * (1.0 - pi) / root, 0.0)
        f = (pi - q) / pq
        act = f > 0
        f = np.where(act, f, 0.0)
        slope = np.where(act, slope / pq, 0.0)
        excess = np.sum(w * f, axis=1) - 1.0
        kk = kappa[todo]
        low, high = lo[todo], hi[todo]
        done = np.abs(excess) <= tol[todo]
        low = np.where(excess > 0, kk, low)
        high = np.where(excess > 0, high, kk)
        gradient = np.sum(w * slope, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(gradient < 0, kk - excess / gradient, np.nan)
        bracketed = np.isfinite(low) & np.isfinite(high)
        bad = ~((low < step) & (step < high))
        step = np.where(bracketed & bad, 0.5 * (low + high), step)
        with np.errstate(invalid="ignore"):
            scale = np.maximum(np.maximum(np.abs(low), np.abs(high)), 1.0)
            narrow = bracketed & (high - low <= 4 * eps * scale)
        done |= narrow
        # no usable Newton step yet: move out to find the other side of the root
        outward = ~bracketed & (
            ~np.isfinite(step) | (np.isfinite(low) & (step <= low)) | (step >= high)
        )
        step = np.where(outward, (2 * np.abs(kk) + n) * np.where(excess > 0, 1.0, -1.0), step)
        out[todo[done]] = f[done]
        lo[todo], hi[todo] = low, high
        kappa[todo] = np.where(done, kk, step)
        todo = todo[~done]
        if todo.size == 0:
            return out, kappa
    raise ConvergenceError("mle: the multiplier search did not converge")  # pragma: no cover


@dataclass(frozen=True)
class _Classes:
    """Items grouped by support count (see :func:`count_classes`), for EM."""

    c: np.ndarray
    w: np.ndarray
    n: int
    p: float
    q: float
    kind: str

    def step(self, f: np.ndarray) -> np.ndarray:
        """One EM step for the channel ``A[v, u] = p if u == v else q``."""
        c, w, n, q = self.c, self.w, self.n, self.q
        pq = self.p - q
        pi = q + pq * f
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio1 = np.where(c > 0, c / pi, 0.0)
            new = q * _dot(w, ratio1) + pq * ratio1
            if self.kind == "binomial":
                ratio0 = np.where(c < n, (n - c) / (1 - pi), 0.0)
                new += (1 - q) * _dot(w, ratio0) - pq * ratio0
        new *= f
        return new / _dot(w, new)

    def loglik(self, f: np.ndarray) -> float:
        """Return the log-likelihood (up to a constant)."""
        c, w, n = self.c, self.w, self.n
        pi = self.q + (self.p - self.q) * f
        with np.errstate(divide="ignore", invalid="ignore"):
            ll = np.where(c > 0, c * np.log(pi), 0.0)
            if self.kind == "binomial":
                ll += np.where(c < n, (n - c) * np.log1p(-pi), 0.0)
        return _dot(w, ll)

    def gap(self, f: np.ndarray) -> float:
        r"""Duality (Frank-Wolfe) gap per user: a bound on the log-likelihood still to gain.

        The log-likelihood is concave, so :math:`\ell^* - \ell(f) \le \max_v
        \partial_v \ell - \sum_v f_v \partial_v \ell`; divided by ``n`` it is free of the
        scale of the data.
        """
        c, n = self.c, self.n
        pq = self.p - self.q
        pi = self.q + pq * f
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = np.where(c > 0, c / pi, 0.0)
            if self.kind == "binomial":
                grad -= np.where(c < n, (n - c) / (1 - pi), 0.0)
        grad *= pq / n
        return float(max(grad.max() - _dot(self.w, f * grad), 0.0))

    def norm(self, x: np.ndarray) -> float:
        """Euclidean norm of the full vector over items."""
        return math.sqrt(_dot(self.w, x * x))


def ibu(
    m: Measurement,
    *,
    likelihood: str = "auto",
    max_iter: int = 20_000,
    tol: float = 1e-12,
    accelerate: bool = True,
) -> Estimate:
    r"""IBU: the iterative Bayesian update, EM for the likelihood of :func:`mle`.

    Each EM step is :math:`f_u \leftarrow f_u W_u(f) / \sum_u f_u W_u(f)` for the
    channel :math:`A_{vu} = p` if :math:`u = v` else :math:`q`; it never decreases the
    likelihood and converges to the MLE. Plain EM needs tens of thousands of steps when
    ``p - q`` is small, so by default steps are accelerated with SQUAREM (Varadhan and
    Roland 2008), falling back to the plain EM step whenever an extrapolation would
    lower the likelihood. Items with equal support counts stay equal along the whole
    iteration (it starts from the uniform distribution), so it runs on the distinct
    counts (:func:`count_classes`): a step costs ``O(distinct counts)``, not ``O(d)``.
    Its parametric bootstrap (``Estimate.interval(..., method="bootstrap")``) re-runs
    the limit of this iteration on every replicate, the exact MLE, vectorised
    (:func:`ibu_rows`), unless iteration options were given.

    Parameters
    ----------
    m : Measurement
        The oracle output.
    likelihood : {"auto", "multinomial", "binomial"}
        As in :func:`mle`.
    max_iter : int
        Largest number of EM-map evaluations; a :class:`ConvergenceWarning` is issued
        whenever they run out before the tolerance is met.
    tol : float
        Stop when the duality gap per user, a bound on the log-likelihood per user the
        iterate can still gain (:math:`\ell^* - \ell(f) \le \max_v \partial_v\ell -
        \sum_v f_v \partial_v \ell`, the log-likelihood being concave), is below
        ``tol`` nats. This test is free of the scale of ``n`` and ``d``, unlike a small
        change between steps (at large ``d`` every step is small, even far from the MLE).
    accelerate : bool, default True
        Use SQUAREM; ``False`` runs the classic IBU iteration.

    Returns
    -------
    Estimate
        ``info`` holds the EM-map evaluations, the final gap and ``converged``.
    """
    kind = likelihood_kind(m, likelihood)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    tol = check_float(tol, "tol", minimum=0.0, strict_minimum=True)
    accelerate = check_bool(accelerate, "accelerate")
    values, weights, expand = count_classes(m.support_counts)
    em = _Classes(values.astype(np.float64), weights, m.n, m.p, m.q, kind)
    f = np.full(values.size, 1.0 / m.domain_size)
    gap, evals = em.gap(f), 0
    while evals < max_iter and gap > tol:
        f1 = em.step(f)
        evals += 1
        candidate = f1
        if accelerate:
            f2 = em.step(f1)
            evals += 1
            r, v = f1 - f, f2 - 2 * f1 + f
            norm_v = em.norm(v)
            alpha = -em.norm(r) / norm_v if norm_v > 0 else -1.0
            candidate = f2
            # Extrapolate; shorten the step towards alpha = -1 (which gives f2) until the
            # jump keeps every frequency positive (EM can never revive an item set exactly
            # to zero) and its EM step does not lower the likelihood below f2's.
            floor = em.loglik(f2)
            while alpha < -1:
                jump = f - 2 * alpha * r + alpha**2 * v
                if jump.min() > 0:
                    jump = em.step(jump / _dot(weights, jump))
                    evals += 1
                    if em.loglik(jump) >= floor:
                        candidate = jump
                        break
                alpha = (alpha - 1) / 2
        f = candidate
        gap = em.gap(f)
    converged = gap <= tol
    if not converged:
        warnings.warn(
            f"ibu stopped after {evals} EM steps with {gap:.2e} nats per user of "
            f"log-likelihood still to gain (tol={tol:.0e}); it is not the MLE yet (use "
            "'mle' for the exact MLE, or raise max_iter)",
            ConvergenceWarning,
            stacklevel=3,
        )
    info = {"likelihood": kind, "iterations": evals, "gap": gap, "converged": converged}
    return Estimate(frequencies=expand(f), method="ibu", measurement=m, info=info)
