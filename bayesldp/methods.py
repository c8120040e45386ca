"""Post-processing methods (NumPy): every one a plain function ``f(m, *, **options)``.

Names follow Wang et al., "Locally Differentially Private Frequency Estimation with
Consistency" (NDSS 2020 and its long version); equation numbers refer to the long
version. ``ibu`` and ``mle`` are exact maximum-likelihood anchors the papers do not
have. Each method is declared, with its properties, in :mod:`bayesldp.registry`; call
them by name with :func:`bayesldp.postprocess`.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm as _normal

from bayesldp import calibrate
from bayesldp._validation import (
    check_bool,
    check_choice,
    check_estimates,
    check_float,
    check_int,
)
from bayesldp.errors import ConvergenceError, ConvergenceWarning
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.oracles import FrequencyOracle, oracle_class

logger = logging.getLogger(__name__)

__all__ = [
    "base",
    "base_cut",
    "base_pos",
    "cls",
    "count_classes",
    "ibu",
    "likelihood_kind",
    "log_likelihood",
    "mle",
    "mle_apx",
    "norm",
    "norm_cut",
    "norm_hyb",
    "norm_mul",
    "norm_sub",
    "post_pos",
    "power",
    "power_ns",
    "project_simplex",
    "rounding_tolerance",
    "shift_to_total",
    "threshold",
]


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------


def shift_to_total(values: np.ndarray, total: float = 1.0) -> tuple[np.ndarray, float]:
    r"""Find :math:`\delta` with :math:`\sum_v \max(x_v + \delta, 0) = ` ``total``.

    The Norm-Sub step, solved by Michelot's active-set iteration: each pass sets
    :math:`\delta` so the active items sum to ``total`` and drops the items pushed to
    zero; :math:`\delta` only grows, so dropped items never return. Each pass is
    ``O(d)`` and a handful of passes suffice in practice.

    Parameters
    ----------
    values : numpy.ndarray
        Estimates :math:`x` (1-D, non-empty, finite).
    total : float
        Required sum, ``>= 0``.

    Returns
    -------
    shifted : numpy.ndarray
        :math:`\max(x + \delta, 0)`.
    delta : float
    """
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    x = np.asarray(values, dtype=np.float64)
    if total == 0:
        return np.zeros_like(x), -float(x.max())
    active = x
    while True:
        delta = (total - active.sum()) / active.size
        keep = active > -delta
        if keep.all():
            break
        active = active[keep]
    return np.maximum(x + delta, 0.0), float(delta)


def project_simplex(values: np.ndarray, total: float = 1.0) -> np.ndarray:
    r"""Euclidean projection onto :math:`\{f \ge 0, \sum f = \text{total}\}` by sorting.

    The sort-and-cumsum algorithm (Held et al. 1974; Duchi et al. 2008), ``O(d log d)``:
    an implementation independent of :func:`shift_to_total`, which it must agree with.

    Parameters
    ----------
    values : numpy.ndarray
        The vector to project: finite, non-empty, 1-D (else a ValueError naming it).
    total : float, default 1.0
        The sum of the result, positive (else a ValueError naming it).

    Returns
    -------
    numpy.ndarray of float64
        The projection.
    """
    x = check_estimates(values, "values")
    total = check_float(total, "total", minimum=0.0, strict_minimum=True)
    u = np.sort(x)[::-1]
    css = np.cumsum(u) - total
    ks = np.arange(1, x.size + 1)
    rho = np.nonzero(u - css / ks > 0)[0][-1]
    theta = css[rho] / (rho + 1)
    return np.maximum(x - theta, 0.0)


def threshold(m: Measurement, alpha: float) -> float:
    r"""Return the significance threshold :math:`T = \Phi^{-1}(1 - \alpha/d)\,\sigma` (Eq. 9).

    When :math:`\alpha/d \ge 1/2` the quantile is not positive and ``T`` is clamped to
    0, so that cutting below ``T`` still yields non-negative estimates.

    Parameters
    ----------
    m : Measurement
        Raw oracle output; gives ``d`` and the noise ``sigma``.
    alpha : float
        Expected number of false positives over the ``d`` items, positive.
    """
    alpha = check_float(alpha, "alpha", minimum=0.0, strict_minimum=True)
    level = 1 - alpha / m.domain_size
    if level <= 0.5:
        return 0.0
    return float(_normal.ppf(level) * m.sigma)


def rounding_tolerance(size: int) -> float:
    """Return a bound on the rounding error of a sum of ``size`` numbers of magnitude <= 1.

    ``size * 4 * machine epsilon``: comparisons of such sums with 1 (``norm-cut``) use
    it so that vectors summing to 1 in exact arithmetic count as summing to 1.

    Parameters
    ----------
    size : int
        Number of terms summed (values below 1 count as 1).
    """
    return 4.0 * float(np.finfo(np.float64).eps) * max(1, size)


def _estimate(m: Measurement, name: str, f: np.ndarray, **info) -> Estimate:
    return Estimate(frequencies=f, method=name, measurement=m, info=info)


# ---------------------------------------------------------------------------
# Baselines
# ---------------------------------------------------------------------------


def base(m: Measurement) -> Estimate:
    """Return the unbiased oracle estimates, unchanged (Base).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        A copy of ``m.estimates``.
    """
    return _estimate(m, "base", m.estimates.copy())


def base_pos(m: Measurement) -> Estimate:
    """Base-Pos: negative estimates set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
    """
    return _estimate(m, "base-pos", np.maximum(m.estimates, 0.0))


def post_pos(m: Measurement) -> Estimate:
    """Post-Pos: each *query result* that is negative is set to 0.

    Single-item answers equal Base-Pos; a subset query sums the raw estimates and
    clips the sum (see :meth:`Estimate.subset`).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        Frequencies as Base-Pos; the raw estimates kept as its ``query_basis``.
    """
    est = Estimate(
        frequencies=np.maximum(m.estimates, 0.0),
        method="post-pos",
        measurement=m,
        query_basis=m.estimates.copy(),
    )
    return est


def base_cut(m: Measurement, *, alpha: float = 2.0) -> Estimate:
    r"""Base-Cut: estimates below :math:`T = \Phi^{-1}(1-\alpha/d)\sigma` set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    alpha : float, default 2.0
        Expected number of false positives; the long paper uses 2, RAPPOR and
        Calibrate's "OUE-Zero" use 0.05.
    """
    t = threshold(m, alpha)
    f = np.where(m.estimates >= t, m.estimates, 0.0)
    return _estimate(m, "base-cut", f, threshold=t, alpha=alpha)


# ---------------------------------------------------------------------------
# Normalisation methods
# ---------------------------------------------------------------------------


def norm(m: Measurement) -> Estimate:
    r"""Norm: add :math:`\delta = (1 - \sum \tilde f)/d` to every estimate.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["delta"]`` is the shift added (estimates may stay negative).
    """
    delta = (1.0 - m.estimates.sum()) / m.domain_size
    return _estimate(m, "norm", m.estimates + delta, delta=float(delta))


def norm_mul(m: Measurement) -> Estimate:
    r"""Norm-Mul: clip negatives, then scale by :math:`\gamma` so the sum is 1.

    With no positive estimate there is nothing to scale; the uniform distribution
    is returned with a :class:`RuntimeWarning`.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["gamma"]`` is the scale factor (None when the uniform is returned).
    """
    pos = np.maximum(m.estimates, 0.0)
    total = pos.sum()
    if total <= 0:
        warnings.warn(
            "norm-mul: no positive estimate to scale; returning the uniform distribution",
            RuntimeWarning,
            stacklevel=3,
        )
        return _estimate(m, "norm-mul", np.full(m.domain_size, 1.0 / m.domain_size), gamma=None)
    return _estimate(m, "norm-mul", pos / total, gamma=float(1.0 / total))


def norm_sub(m: Measurement) -> Estimate:
    r"""Norm-Sub: :math:`f'_v = \max(\tilde f_v + \delta, 0)` with a sum of 1.

    Equal to the Euclidean projection onto the probability simplex (CLS).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["delta"]`` is the shift :math:`\delta`.
    """
    f, delta = shift_to_total(m.estimates, 1.0)
    return _estimate(m, "norm-sub", f, delta=delta)


def cls(m: Measurement) -> Estimate:
    r"""CLS: :math:`\arg\min \|f - \tilde f\|_2^2` s.t. :math:`f \ge 0, \sum f = 1`.

    Solved in closed form by sorting; equals Norm-Sub (the long paper, Section 4).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
    """
    return _estimate(m, "cls", project_simplex(m.estimates, 1.0))


def norm_cut(m: Measurement) -> Estimate:
    r"""Norm-Cut: keep the largest estimates whose sum stays within 1, zero the rest.

    The long paper's definition: when :math:`\sum_v \max(\tilde f_v, 0) \le 1`, only
    negatives are set to 0 (the sum may stay below 1). Otherwise :math:`\theta` is the
    smallest positive value with :math:`\sum_{\tilde f_v \ge \theta} \tilde f_v \le 1`; items
    below :math:`\theta` are set to 0 and the rest kept unchanged, without rescaling.
    Items tied at the boundary are kept or dropped together, so the sum can be
    below 1; if even the single largest estimate exceeds 1, every item is set to 0.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.

    Returns
    -------
    Estimate
        ``info["theta"]`` is the cut (0 when only negatives were zeroed, ``inf`` when
        every item was).
    """
    f_tilde = m.estimates
    pos = np.maximum(f_tilde, 0.0)
    # "A sum <= 1" allows for the rounding of summing d floats: estimates whose exact
    # values sum to 1 (GRR's always do) must not lose an item to an excess of 1e-16.
    limit = 1.0 + rounding_tolerance(m.domain_size)
    if pos.sum() <= limit:
        return _estimate(m, "norm-cut", pos, theta=0.0)
    s = -np.sort(-f_tilde[f_tilde > 0])  # positive estimates, largest first
    csum = np.cumsum(s)
    # Prefix lengths k at a boundary between distinct values (or the end): theta > 0,
    # since adding negatives would only lower the sum.
    boundary = np.append(s[:-1] > s[1:], True)
    valid = boundary & (csum <= limit)
    if not valid.any():
        return _estimate(m, "norm-cut", np.zeros_like(f_tilde), theta=float(np.inf))
    k = int(np.nonzero(valid)[0][-1]) + 1
    theta = float(s[k - 1])
    f = np.where(f_tilde >= theta, f_tilde, 0.0)
    return _estimate(m, "norm-cut", f, theta=theta)


def norm_hyb(m: Measurement, *, alpha: float = 2.0) -> Estimate:
    """Norm-Hyb: keep estimates above ``T`` unchanged, Norm-Sub the rest to total 1.

    ``T`` is Base-Cut's threshold. If the kept estimates sum to more than 1, only the
    largest ``k`` whose sum is below 1 are kept. When every item is kept and their
    sum is not 1, no item is left to absorb the difference and Norm-Sub is applied to
    the whole vector (recorded in ``info["fallback"]``).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    alpha : float, default 2.0
        Expected number of false positives of the threshold (:func:`threshold`),
        positive.

    Returns
    -------
    Estimate
        ``info`` records the ``threshold``, ``alpha``, the number ``kept`` and the
        shift ``delta`` of the rest (or ``fallback``).
    """
    f_tilde = m.estimates
    t = threshold(m, alpha)
    kept = f_tilde > t
    if f_tilde[kept].sum() > 1.0:
        order = np.argsort(-f_tilde, kind="stable")
        k = int(np.searchsorted(np.cumsum(f_tilde[order]), 1.0, side="left"))
        kept = np.zeros(m.domain_size, dtype=bool)
        kept[order[:k]] = True
    rest = ~kept
    if not rest.any():
        f, _ = shift_to_total(f_tilde, 1.0)
        return _estimate(
            m, "norm-hyb", f, threshold=t, alpha=alpha, kept=int(kept.sum()), fallback="norm-sub"
        )
    f = np.where(kept, f_tilde, 0.0)
    f[rest], delta = shift_to_total(f_tilde[rest], max(1.0 - f_tilde[kept].sum(), 0.0))
    return _estimate(m, "norm-hyb", f, threshold=t, alpha=alpha, kept=int(kept.sum()), delta=delta)


# ---------------------------------------------------------------------------
# Likelihood-based methods
# ---------------------------------------------------------------------------


def mle_apx(m: Measurement, *, max_iter: int | None = None) -> Estimate:
    r"""MLE-Apx: the closed-form KKT solution of the long paper's Eq. (13), Eq. (14).

    With :math:`D_1` the items not yet set to zero,

    .. math::

        x = \frac{\sum_{D_1} c_v/n - |D_1| q - (p-q)}{(p-q)(1-p-q) + |D_1| q (1-q)},
        \qquad
        f'_v = \frac{c_v/n - q - q(1-q)x}{p - q + (p-q)(1-p-q)x},

    starting from :math:`D_1 = D` and moving items with :math:`f'_v < 0` to
    :math:`D_0` until none is negative. (The NDSS copy's signs are damaged; these are
    the long version's, checked against an exact solver.)

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
        left, ``x`` and the sum before the final division (``sum_before``).

    Raises
    ------
    ConvergenceError
        ``max_iter`` passes left negative frequencies.
    """
    n, p, q = m.n, m.p, m.q
    a = m.support_counts / n
    pq = p - q
    active = np.ones(m.domain_size, dtype=bool)
    limit = m.domain_size if max_iter is None else check_int(max_iter, "max_iter", minimum=1)
    for it in range(1, limit + 1):
        size = int(active.sum())
        if size == 1:  # one item left: the constraint alone decides (Eq. 14 is 0/0 here)
            return _estimate(m, "mle-apx", active.astype(np.float64), iterations=it, support=1)
        x = (a[active].sum() - size * q - pq) / (pq * (1 - p - q) + size * q * (1 - q))
        f = np.where(active, (a - q - q * (1 - q) * x) / (pq + pq * (1 - p - q) * x), 0.0)
        negative = f < 0
        if not negative.any():
            # Eq. (14) sums to 1 in exact arithmetic; when p is near 1 its denominator
            # cancels and the computed sum can be off by 1e-6: divide the rounding out.
            total = float(f.sum())
            return _estimate(
                m, "mle-apx", f / total, x=float(x), iterations=it, support=size, sum_before=total
            )
        active &= ~negative
    raise ConvergenceError(
        f"mle-apx: {limit} active-set passes left negative frequencies (max_iter={max_iter}); "
        "it converges within d passes, so leave max_iter at None"
    )


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


def likelihood_kind(m: Measurement, likelihood: str, name: str = "likelihood") -> str:
    """Return the support-count likelihood to use: ``"multinomial"`` (GRR) or ``"binomial"``.

    ``"auto"`` picks the oracle's ``likelihood_kind`` (multinomial for GRR, binomial
    otherwise; :func:`bayesldp.oracles.oracle_class`); ``"multinomial"`` is refused for an
    oracle whose cell probabilities do not sum to one or whose support counts do not sum
    to ``n``. The one place these are decided
    (the PyMC layer's :func:`bayesldp.models.likelihood.resolve_kind` asks it too).

    Parameters
    ----------
    m : Measurement
        Raw oracle output; its ``oracle``, ``p``, ``q`` and ``d`` decide.
    likelihood : {"auto", "multinomial", "binomial"}
        The likelihood asked for.
    name : str, default "likelihood"
        The argument's name, for the error messages.
    """
    check_choice(likelihood, ("auto", "multinomial", "binomial"), name)
    if likelihood == "auto":
        return oracle_class(m.oracle, FrequencyOracle).likelihood_kind
    if likelihood == "multinomial":
        if abs(m.p + (m.domain_size - 1) * m.q - 1) > 1e-9:
            raise ValueError(
                f"{name}='multinomial' needs an oracle with p + (d-1) q = 1 (GRR); "
                f"here p + (d-1) q = {m.p + (m.domain_size - 1) * m.q:.6g}"
            )
        total = int(m.support_counts.sum())
        if total != m.n:
            raise ValueError(
                f"{name}='multinomial' needs support counts that sum to n (one item per "
                f"report); here they sum to {total}, n={m.n}"
            )
    return likelihood


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
    """
    kind = likelihood_kind(m, likelihood)
    c = m.support_counts.astype(np.float64)
    n, p, q = m.n, m.p, m.q
    pq = p - q
    if kind == "multinomial":
        # f_v = max(c_v t - r, 0), r = q/(p-q): water-filling over items sorted by c.
        r = q / pq
        cs = np.sort(c)[::-1]
        csum = np.cumsum(cs)
        ks = np.arange(1, c.size + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (1 + ks * r) / csum
        ok = cs * t - r > 0
        j = int(np.nonzero(ok)[0][-1])
        f = np.maximum(c * t[j] - r, 0.0)
        return _estimate(m, "mle", f, likelihood=kind, multiplier=float(1 / t[j]))

    values, weights, expand = count_classes(m.support_counts)
    kappa, f = _binomial_multiplier(values.astype(np.float64), weights, n, q, pq)
    # the multiplier is found to a few ulps; where the sum is steep in it (counts near n,
    # p near 1) that leaves the sum off by up to ~1e-9: divide it out
    total = _dot(weights, f)
    return _estimate(
        m, "mle", expand(f / total), likelihood=kind, multiplier=float(kappa * pq), sum_before=total
    )


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Return ``a @ b`` without BLAS.

    A threaded BLAS dot of short vectors can take milliseconds when the cores are busy
    (measured: 0.2 ms to 5 ms for 10^4 items), a plain sum not.
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


def _binomial_frequencies(
    kappa: float, c: np.ndarray, n: int, q: float, pq: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Frequencies at multiplier ``kappa`` and :math:`d\pi_v/d\kappa` (binomial MLE).

    For an active item the KKT condition :math:`c/\pi - (n-c)/(1-\pi) = \kappa` is the
    quadratic :math:`\kappa\pi^2 - (\kappa+n)\pi + c = 0`, whose one root in
    :math:`[0, 1]` is :math:`2c/(b + \sqrt D)` with :math:`b = \kappa + n`,
    :math:`D = b^2 - 4\kappa c \ge 0`, except where that is 0/0 (``c = 0`` and
    :math:`b \le 0`), where it is :math:`b / \kappa`: a form with no cancellation and no
    NaN for any count in ``0..n`` (zero counts included).
    """
    b = kappa + n
    root = np.sqrt(np.maximum(b * b - 4.0 * kappa * c, 0.0))
    den = b + root
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(den > 0, 2.0 * c / den, b / kappa if kappa != 0 else 0.0)
        slope = np.where(root > 0, -pi * (1.0 - pi) / root, 0.0)
    f = (pi - q) / pq
    active = f > 0
    return np.where(active, f, 0.0), np.where(active, slope / pq, 0.0)


def _binomial_multiplier(
    c: np.ndarray, weights: np.ndarray, n: int, q: float, pq: float
) -> tuple[float, np.ndarray]:
    r"""Solve :math:`\sum_v f_v(\kappa) = 1` by Newton's method kept inside a bracket.

    The sum falls as :math:`\kappa` grows; each step costs a few passes over ``d``.
    """
    lo, hi = -np.inf, np.inf
    kappa = 0.0
    for _ in range(200):
        f, slope = _binomial_frequencies(kappa, c, n, q, pq)
        excess = _dot(weights, f) - 1.0
        if abs(excess) <= 4 * np.finfo(float).eps * max(1.0, weights.sum()) ** 0.5:
            break
        if excess > 0:
            lo = kappa
        else:
            hi = kappa
        gradient = _dot(weights, slope)
        step = kappa - excess / gradient if gradient < 0 else np.nan
        if np.isfinite(lo) and np.isfinite(hi):
            if not lo < step < hi:
                step = 0.5 * (lo + hi)
            if hi - lo <= 4 * np.finfo(float).eps * max(abs(lo), abs(hi), 1.0):
                break
        elif not np.isfinite(step) or (np.isfinite(lo) and step <= lo) or step >= hi:
            # no usable Newton step yet: move out to find the other side of the root
            step = (2 * abs(kappa) + n) * (1.0 if excess > 0 else -1.0)
        kappa = float(step)
    else:  # pragma: no cover - the bracket halves at least every other step
        raise ConvergenceError("mle: the multiplier search did not converge")
    return kappa, f


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
    (:func:`bayesldp.batch.ibu_rows`), unless iteration options were given.

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
        change between steps, which at ``d = 10^7`` happened while every frequency was
        still ``1/d``.
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
    return _estimate(
        m,
        "ibu",
        expand(f),
        likelihood=kind,
        iterations=evals,
        gap=gap,
        converged=converged,
    )


def power(
    m: Measurement,
    *,
    s: float | None = None,
    fit: str = "mean",
    s_max: float = calibrate.S_MAX,
) -> Estimate:
    r"""Power (Calibrate): posterior mean under a power-law prior on counts.

    .. math::

        P(x) \propto x^{-s},\; x = 1..n; \qquad
        n\tilde f_v \mid x \sim \mathcal N(x, (n\sigma)^2); \qquad
        f'_v = \mathbb E[x \mid n \tilde f_v] / n .

    Parameters
    ----------
    m : Measurement
        The oracle output; its noise must be positive (``p - q < 1``).
    s : float, optional
        The exponent, in ``[0, S_LIMIT]`` (``bayesldp.calibrate.S_LIMIT``: beyond it the
        prior is a point mass at count 1 to double precision); fitted when omitted.
    fit : {"mean", "mle"}
        How to fit ``s``: match the prior's mean count to the observed mean
        (Calibrate's mean-variance method, as the authors' code does), or maximise the
        marginal likelihood (Calibrate's Eq. 16).
    s_max : float
        Upper end of the exponent's search interval, in ``(0, S_LIMIT]``.

    Returns
    -------
    Estimate
        ``info["s"]`` is the exponent used, ``info["fit"]`` how it was chosen.
    """
    fit = check_choice(fit, ("mean", "mle"), "fit")
    s_max = check_float(s_max, "s_max", minimum=0.0, maximum=calibrate.S_LIMIT, strict_minimum=True)
    n = m.n
    sigma_c = m.sigma * n
    if not sigma_c > 0:
        raise ValueError(
            "power needs a noisy oracle: this measurement has no noise (sigma = 0, e.g. "
            "p = 1 and q = 0), so its estimates are exact counts and the posterior mean "
            "under Calibrate's prior is not defined for items at 0"
        )
    y = m.estimates * n
    if s is None:
        how = fit
        if fit == "mean":
            s = calibrate.fit_exponent_mean(float(y.mean()), n, s_max=s_max)
        else:
            s = calibrate.fit_exponent_mle(y, sigma_c, n, s_max=s_max)
    else:
        how = "given"
        s = check_float(s, "s", minimum=0.0, maximum=calibrate.S_LIMIT)
    f = calibrate.posterior_mean(y, float(s), sigma_c, n) / n
    return _estimate(m, "power", f, s=float(s), fit=how)


def power_ns(
    m: Measurement,
    *,
    s: float | None = None,
    fit: str = "mean",
    s_max: float = calibrate.S_MAX,
) -> Estimate:
    """PowerNS (NDSS version): Norm-Sub applied to the output of Power.

    Parameters
    ----------
    m : Measurement
        The oracle output; its noise must be positive (``p - q < 1``).
    s : float, optional
        The exponent of the power-law prior; fitted when omitted (see :func:`power`).
    fit : {"mean", "mle"}, default "mean"
        How to fit ``s``, as in :func:`power`.
    s_max : float, default ``calibrate.S_MAX``
        Upper end of the exponent's search interval, in ``(0, S_LIMIT]``.

    Returns
    -------
    Estimate
        ``info`` records ``s``, ``fit`` and the Norm-Sub shift ``delta``.
    """
    pw = power(m, s=s, fit=fit, s_max=s_max)
    f, delta = shift_to_total(pw.frequencies, 1.0)
    return _estimate(m, "power-ns", f, s=pw.info["s"], fit=pw.info["fit"], delta=delta)
