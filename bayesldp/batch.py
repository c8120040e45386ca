"""Post-processing methods vectorised over many measurements of one oracle.

The parametric bootstrap (:mod:`bayesldp.intervals`) re-runs a method on hundreds of
simulated count vectors that share ``n``, ``p``, ``q`` and ``d``. Each function here takes
those counts as the rows of a ``(B, d)`` array and returns the ``(B, d)`` array of
frequencies that the method of the same name in :mod:`bayesldp.methods` gives for each
row (equal up to rounding: the tests compare them row by row). Methods without a
vectorised form here (the cvxpy backends, ``eb-npmle``, methods of your own) are re-run one
row at a time by :func:`run_rows`. ``ibu`` is the one method whose rows are not its own
iteration: they are its limit, the MLE (:func:`ibu_rows`).

``post-pos`` returns the raw estimates: its answers are clipped at query time.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from bayesldp import calibrate
from bayesldp._validation import check_choice, check_float
from bayesldp.measurement import Measurement
from bayesldp.methods import likelihood_kind, rounding_tolerance, threshold

logger = logging.getLogger(__name__)

__all__ = [
    "BATCH",
    "IBU_LIMIT_SDS",
    "NotVectorised",
    "batch_function",
    "estimates",
    "ibu_rows",
    "power_rows",
    "project_rows",
    "run_rows",
]

#: Largest error (log units) accepted when interpolating Power's posterior mean in ``s``.
POWER_S_TOL = 1e-5


class NotVectorised(Exception):
    """Raised by a vectorised form for options it does not cover (run row by row)."""


#: How far (in noise sds of each item) ``ibu`` may stop from the MLE its bootstrap rows are.
IBU_LIMIT_SDS = 0.01

#: Largest exponent of the sentinel that keeps items out of a row-wise projection.
_EXCLUDED = -1e250


def estimates(m: Measurement, counts: np.ndarray) -> np.ndarray:
    """Raw unbiased estimates of each row of support counts, as :class:`Measurement` does.

    Parameters
    ----------
    m : Measurement
        Gives ``n``, ``p`` and ``q`` (shared by every row).
    counts : numpy.ndarray
        Support counts, shape ``(..., d)``, one replicate per row.

    Returns
    -------
    numpy.ndarray
        ``(c / n - q) / (p - q)``, same shape as ``counts``.
    """
    return (np.asarray(counts) / m.n - m.q) / (m.p - m.q)


def project_rows(
    values: np.ndarray, totals: np.ndarray | float = 1.0, active: np.ndarray | None = None
) -> np.ndarray:
    r"""Euclidean projection of each row onto ``{f >= 0, sum f = total}`` (sort-based).

    Parameters
    ----------
    values : numpy.ndarray
        Rows to project, shape ``(B, d)``.
    totals : float or numpy.ndarray
        Required sum of each row (``>= 0``).
    active : numpy.ndarray of bool, optional
        Entries taking part in each row's projection; the others are returned as 0.
        Every row must have at least one active entry.

    Returns
    -------
    numpy.ndarray
        :math:`\max(x - \theta, 0)` on the active entries, 0 elsewhere.
    """
    x = np.asarray(values, dtype=np.float64)
    rows, d = x.shape
    totals = np.broadcast_to(np.asarray(totals, dtype=np.float64), (rows,))
    work = x if active is None else np.where(active, x, _EXCLUDED)
    u = -np.sort(-work, axis=1)
    css = np.cumsum(u, axis=1) - totals[:, None]
    ks = np.arange(1, d + 1)
    positive = u - css / ks > 0
    # Last index where the condition holds (it holds on a prefix of the sorted row).
    rho = d - 1 - np.argmax(positive[:, ::-1], axis=1)
    theta = css[np.arange(rows), rho] / (rho + 1)
    out = np.maximum(x - theta[:, None], 0.0)
    if active is not None:
        out = np.where(active, out, 0.0)
    out[totals == 0] = 0.0
    return out


def _base(m: Measurement, counts: np.ndarray) -> np.ndarray:
    return estimates(m, counts)


def _base_pos(m: Measurement, counts: np.ndarray) -> np.ndarray:
    return np.maximum(estimates(m, counts), 0.0)


def _base_cut(m: Measurement, counts: np.ndarray, *, alpha: float = 2.0) -> np.ndarray:
    f = estimates(m, counts)
    t = threshold(m, alpha)
    return np.where(f >= t, f, 0.0)


def _norm(m: Measurement, counts: np.ndarray) -> np.ndarray:
    f = estimates(m, counts)
    return f + ((1.0 - f.sum(axis=1)) / m.domain_size)[:, None]


def _norm_mul(m: Measurement, counts: np.ndarray) -> np.ndarray:
    pos = np.maximum(estimates(m, counts), 0.0)
    total = pos.sum(axis=1)
    empty = total <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pos / total[:, None]
    out[empty] = 1.0 / m.domain_size
    return out


def _norm_sub(m: Measurement, counts: np.ndarray) -> np.ndarray:
    return project_rows(estimates(m, counts), 1.0)


def _norm_cut(m: Measurement, counts: np.ndarray) -> np.ndarray:
    f = estimates(m, counts)
    rows, d = f.shape
    pos = np.maximum(f, 0.0)
    limit = 1.0 + rounding_tolerance(d)
    s = -np.sort(-pos, axis=1)  # positives largest first, then zeros
    csum = np.cumsum(s, axis=1)
    boundary = np.concatenate([s[:, :-1] > s[:, 1:], np.ones((rows, 1), dtype=bool)], axis=1)
    valid = boundary & (csum <= limit) & (s > 0)
    has = valid.any(axis=1)
    k = d - 1 - np.argmax(valid[:, ::-1], axis=1)
    theta = np.where(has, s[np.arange(rows), k], np.inf)
    cut = np.where(f >= theta[:, None], f, 0.0)
    return np.where((pos.sum(axis=1) <= limit)[:, None], pos, cut)


def _norm_hyb(m: Measurement, counts: np.ndarray, *, alpha: float = 2.0) -> np.ndarray:
    f = estimates(m, counts)
    d = f.shape[1]
    t = threshold(m, alpha)
    kept = f > t
    over = np.where(kept, f, 0.0).sum(axis=1) > 1.0
    if over.any():
        sub = f[over]
        order = np.argsort(-sub, axis=1, kind="stable")
        csum = np.cumsum(np.take_along_axis(sub, order, axis=1), axis=1)
        # The first k whose running sum reaches 1 (the running sum is not monotone once
        # it passes the negative estimates, so this is not a count of sums below 1).
        reach = csum >= 1.0
        k = np.where(reach.any(axis=1), np.argmax(reach, axis=1), d)
        top = np.zeros_like(sub, dtype=bool)
        np.put_along_axis(top, order, np.arange(d)[None, :] < k[:, None], axis=1)
        kept[over] = top
    rest = ~kept
    none_left = ~rest.any(axis=1)
    kept_sum = np.where(kept, f, 0.0).sum(axis=1)
    out = np.empty_like(f)
    normal = ~none_left
    if normal.any():
        projected = project_rows(
            f[normal], np.maximum(1.0 - kept_sum[normal], 0.0), active=rest[normal]
        )
        out[normal] = np.where(kept[normal], f[normal], projected)
    if none_left.any():
        out[none_left] = project_rows(f[none_left], 1.0)
    return out


def _mle_apx(m: Measurement, counts: np.ndarray, *, max_iter: int | None = None) -> np.ndarray:
    n, p, q = m.n, m.p, m.q
    a = np.asarray(counts) / n
    pq = p - q
    rows, d = a.shape
    active = np.ones((rows, d), dtype=bool)
    out = np.zeros((rows, d))
    todo = np.arange(rows)
    limit = d if max_iter is None else max_iter
    for _ in range(limit):
        act = active[todo]
        sub = a[todo]
        size = act.sum(axis=1)
        x = (np.where(act, sub, 0.0).sum(axis=1) - size * q - pq) / (
            pq * (1 - p - q) + size * q * (1 - q)
        )
        f = np.where(
            act, (sub - q - q * (1 - q) * x[:, None]) / (pq + pq * (1 - p - q) * x[:, None]), 0.0
        )
        negative = f < 0
        done = ~negative.any(axis=1)
        out[todo[done]] = f[done]
        active[todo] = act & ~negative
        todo = todo[~done]
        if todo.size == 0:
            return out
    raise RuntimeError("mle-apx: active-set passes did not converge (raise max_iter)")


def _mle(m: Measurement, counts: np.ndarray, *, likelihood: str = "auto") -> np.ndarray:
    kind = likelihood_kind(m, likelihood)
    c = np.asarray(counts, dtype=np.float64)
    rows, d = c.shape
    n, p, q = m.n, m.p, m.q
    pq = p - q
    if kind == "multinomial":
        r = q / pq
        cs = -np.sort(-c, axis=1)
        csum = np.cumsum(cs, axis=1)
        ks = np.arange(1, d + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (1 + ks * r) / csum
        ok = cs * t - r > 0
        j = d - 1 - np.argmax(ok[:, ::-1], axis=1)
        tj = t[np.arange(rows), j]
        return np.maximum(c * tj[:, None] - r, 0.0)
    return _binomial_rows(c, n, q, pq)


def ibu_rows(
    m: Measurement,
    counts: np.ndarray,
    *,
    likelihood: str = "auto",
    max_iter: int | None = None,
    tol: float | None = None,
    accelerate: bool | None = None,
) -> np.ndarray:
    """IBU's rows: the limit of its EM iteration, the exact MLE of each row (``mle``'s rows).

    :func:`bayesldp.methods.ibu` is EM for the likelihood :func:`bayesldp.methods.mle`
    maximises exactly, and it stops close to that optimum: within
    :data:`IBU_LIMIT_SDS` noise standard deviations of it for every item (a test checks
    this on the papers' Zipf setting, where OUE stops at its 20,000 EM-map evaluations
    before meeting its own tolerance). Re-running EM per replicate takes about a second
    at d = 1024 (``benchmarks/bootstrap_bench.py``), so the
    replicates are the MLE computed row-wise. Asking for ``max_iter``, ``tol`` or
    ``accelerate`` means asking for the iteration itself: then the rows are re-run.

    Parameters
    ----------
    m : Measurement
        Supplies ``n``, ``p``, ``q``.
    counts : numpy.ndarray
        Support counts, shape ``(B, d)``.
    likelihood : {"auto", "multinomial", "binomial"}
        As in :func:`bayesldp.methods.ibu`.
    max_iter, tol, accelerate : optional
        Options of the iteration; any of them raises :class:`NotVectorised`.

    Returns
    -------
    numpy.ndarray
        Shape ``(B, d)``.
    """
    if (max_iter, tol, accelerate) != (None, None, None):
        raise NotVectorised("ibu with iteration options runs its EM iteration per row")
    return _mle(m, counts, likelihood=likelihood)


def _binomial_rows(c: np.ndarray, n: int, q: float, pq: float) -> np.ndarray:
    r"""Row-wise exact binomial MLE: bracketed Newton on each row's multiplier.

    The same KKT system as :func:`bayesldp.methods.mle`: for multiplier ``kappa`` the
    active items have :math:`\pi = 2c/(b + \sqrt{b^2 - 4\kappa c})`, ``b = kappa + n``,
    and ``kappa`` is chosen so the frequencies sum to 1.
    """
    rows = c.shape[0]
    kappa = np.zeros(rows)
    lo = np.full(rows, -np.inf)
    hi = np.full(rows, np.inf)
    out = np.zeros_like(c)
    todo = np.arange(rows)
    eps = np.finfo(float).eps
    tol = 4 * eps * max(1.0, c.shape[1]) ** 0.5
    for _ in range(200):
        k = kappa[todo][:, None]
        cc = c[todo]
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
        excess = f.sum(axis=1) - 1.0
        kk = kappa[todo]
        low, high = lo[todo], hi[todo]
        done = np.abs(excess) <= tol
        low = np.where(excess > 0, kk, low)
        high = np.where(excess > 0, high, kk)
        gradient = slope.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(gradient < 0, kk - excess / gradient, np.nan)
        bracketed = np.isfinite(low) & np.isfinite(high)
        bad = ~((low < step) & (step < high))
        mid = 0.5 * (low + high)
        step = np.where(bracketed & bad, mid, step)
        with np.errstate(invalid="ignore"):
            scale = np.maximum(np.maximum(np.abs(low), np.abs(high)), 1.0)
            narrow = bracketed & (high - low <= 4 * eps * scale)
        done |= narrow
        outward = ~bracketed & (
            ~np.isfinite(step) | (np.isfinite(low) & (step <= low)) | (step >= high)
        )
        step = np.where(outward, (2 * np.abs(kk) + n) * np.where(excess > 0, 1.0, -1.0), step)
        out[todo[done]] = f[done]
        lo[todo], hi[todo] = low, high
        kappa[todo] = np.where(done, kk, step)
        todo = todo[~done]
        if todo.size == 0:
            return out
    raise RuntimeError("mle: the multiplier search did not converge")  # pragma: no cover


def _lobatto_nodes(lo: float, hi: float, k: int) -> np.ndarray:
    """Chebyshev-Lobatto nodes on ``[lo, hi]``: those of ``k`` are among those of ``2k - 1``."""
    j = np.arange(k)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(j * np.pi / (k - 1))


def _lagrange_weights(nodes: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Weights ``W[b, j]`` with ``sum_j W[b, j] g(nodes[j])`` interpolating ``g(at[b])``."""
    w = np.ones((at.size, nodes.size))
    for j in range(nodes.size):
        for i in range(nodes.size):
            if i != j:
                w[:, j] *= (at - nodes[i]) / (nodes[j] - nodes[i])
    return w


def power_rows(
    m: Measurement, counts: np.ndarray, exponents: np.ndarray, *, max_nodes: int = 9
) -> tuple[np.ndarray, dict]:
    r"""Calibrate's posterior mean for every row, each with its own exponent.

    The log posterior mean :math:`\log g(y; s)` is analytic in ``s``. It is computed
    exactly (:class:`bayesldp.calibrate.PosteriorGrid`, one per node) at Chebyshev-Lobatto
    nodes spanning the rows' exponents and interpolated in ``s``; the nodes are doubled
    (3, 5, 9; 1 when all exponents are equal) until two successive interpolants agree to
    :data:`POWER_S_TOL` in log units at every entry, and the finer one is returned. If
    ``max_nodes`` do not reach it (exponents far apart, e.g. one at the search bound),
    the rows are split (at a gap wider than a quarter of the range, else in halves) and
    each group is treated the same way.

    Parameters
    ----------
    m : Measurement
        The measurement whose ``n``, ``p``, ``q`` and noise scale every row shares.
    counts : numpy.ndarray
        Support counts, shape ``(B, d)``: one measurement per row.
    exponents : numpy.ndarray
        The power law's exponent ``s`` of each row, shape ``(B,)``.
    max_nodes : int, default 9
        The most Chebyshev nodes tried before the rows are split.

    Returns
    -------
    frequencies : numpy.ndarray
        Shape ``(B, d)``.
    info : dict
        ``s_nodes`` (number of exact grids) and ``s_error`` (largest agreement reached).
    """
    n = m.n
    sigma_c = m.sigma * n
    y_all = estimates(m, counts) * n
    out = np.empty_like(y_all)
    info = {"s_nodes": 0, "s_error": 0.0}

    def solve(rows: np.ndarray) -> None:
        y, ex = y_all[rows], exponents[rows]
        lo, hi = float(y.min()), float(y.max())
        s_lo, s_hi = float(ex.min()), float(ex.max())

        def log_mean(s: float) -> np.ndarray:
            info["s_nodes"] += 1
            return calibrate.PosteriorGrid(s, sigma_c, n, lo, hi).log_ratio(y)

        if s_hi - s_lo <= 1e-12 * max(1.0, s_hi):
            out[rows] = np.exp(log_mean(s_lo)) / n
            return
        exact: dict[float, np.ndarray] = {}
        previous, k = None, 3
        while k <= max_nodes:
            nodes = _lobatto_nodes(s_lo, s_hi, k)
            weights = _lagrange_weights(nodes, ex)
            current = np.zeros_like(y)
            for j, s in enumerate(nodes):
                key = round(float(s), 14)
                if key not in exact:
                    exact[key] = log_mean(float(s))
                current += weights[:, j : j + 1] * exact[key]
            if previous is not None:
                error = float(np.max(np.abs(current - previous)))
                if error <= POWER_S_TOL:
                    out[rows] = np.exp(current) / n
                    info["s_error"] = max(info["s_error"], error)
                    return
            previous, k = current, 2 * k - 1
        order = np.argsort(ex, kind="stable")
        gaps = np.diff(ex[order])
        # Split off a cluster at a wide gap (an exponent at the search bound), otherwise
        # in halves.
        cut = int(np.argmax(gaps)) + 1 if gaps.max() > (s_hi - s_lo) / 4 else rows.size // 2
        solve(rows[order[:cut]])
        solve(rows[order[cut:]])

    solve(np.arange(y_all.shape[0]))
    return out, info


def _power_exponents(
    m: Measurement, counts: np.ndarray, s: float | None, fit: str, s_max: float
) -> np.ndarray:
    check_choice(fit, ("mean", "mle"), "fit")
    s_max = check_float(s_max, "s_max", minimum=0.0, strict_minimum=True)
    rows = counts.shape[0]
    if s is not None:
        return np.full(rows, check_float(s, "s", minimum=0.0))
    if fit == "mle":
        raise NotVectorised("power with fit='mle' fits s by maximum likelihood per row")
    y_mean = estimates(m, counts).mean(axis=1) * m.n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # s at a bound: as the method does
        return np.array([calibrate.fit_exponent_mean(float(v), m.n, s_max=s_max) for v in y_mean])


def _power(
    m: Measurement,
    counts: np.ndarray,
    *,
    s: float | None = None,
    fit: str = "mean",
    s_max: float = calibrate.S_MAX,
) -> np.ndarray:
    exponents = _power_exponents(m, counts, s, fit, s_max)
    return power_rows(m, counts, exponents)[0]


def _power_ns(
    m: Measurement,
    counts: np.ndarray,
    *,
    s: float | None = None,
    fit: str = "mean",
    s_max: float = calibrate.S_MAX,
) -> np.ndarray:
    return project_rows(_power(m, counts, s=s, fit=fit, s_max=s_max), 1.0)


def _cls(m: Measurement, counts: np.ndarray) -> np.ndarray:
    return project_rows(estimates(m, counts), 1.0)


#: Vectorised forms, by registered method name (``oue-zero`` is ``base-cut``).
BATCH: dict[str, Callable[..., np.ndarray]] = {
    "base": _base,
    "base-pos": _base_pos,
    "post-pos": _base,
    "norm": _norm,
    "norm-mul": _norm_mul,
    "norm-sub": _norm_sub,
    "cls": _cls,
    "mle-apx": _mle_apx,
    "base-cut": _base_cut,
    "oue-zero": _base_cut,
    "norm-cut": _norm_cut,
    "norm-hyb": _norm_hyb,
    "mle": _mle,
    "ibu": ibu_rows,
    "power": _power,
    "power-ns": _power_ns,
}


def batch_function(method: str, backend: str = "numpy") -> Callable[..., np.ndarray] | None:
    """Return the vectorised form of a registered method, or ``None`` if it has none.

    Parameters
    ----------
    method : str
        A registered method name (a key of :data:`BATCH`).
    backend : str, default "numpy"
        The backend asked for; only ``"numpy"`` has vectorised forms.
    """
    if backend != "numpy":
        return None
    return BATCH.get(method)


def run_rows(
    m: Measurement,
    counts: np.ndarray,
    method: str,
    *,
    backend: str = "numpy",
    options: dict[str, Any] | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Run a registered method on every row of support counts.

    Parameters
    ----------
    m : Measurement
        Supplies ``n``, ``p``, ``q``, the oracle name and epsilon.
    counts : numpy.ndarray
        Support counts, shape ``(B, d)``.
    method : str
        A registered method name.
    backend : str
        Its backend.
    options : dict, optional
        Options as given to :func:`bayesldp.postprocess` (the name's fixed options are
        added here, as ``postprocess`` does).

    Returns
    -------
    frequencies : numpy.ndarray
        Shape ``(B, d)``; for ``post-pos`` the raw estimates (its query basis).
    info : dict
        ``vectorised`` (bool), ``seconds`` and ``warnings`` (count of warnings the
        row-by-row runs raised; the first one is re-issued).
    """
    from bayesldp.registry import get_method, postprocess

    spec = get_method(method)
    options = dict(options or {})
    counts = np.asarray(counts)
    start = time.perf_counter()
    func = batch_function(method, backend)
    if func is not None:
        try:
            out = func(m, counts, **spec.fixed_options, **options)
        except NotVectorised as why:
            logger.debug("%s runs row by row: %s", method, why)
        else:
            seconds = time.perf_counter() - start
            return out, {"vectorised": True, "seconds": seconds, "warnings": 0}
    out = np.empty(counts.shape)
    caught_all = []
    for i, row in enumerate(counts):
        mi = Measurement.from_support_counts(row, m.n, m.p, m.q, oracle=m.oracle, epsilon=m.epsilon)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = postprocess(mi, method, backend=backend, **options)
        caught_all.extend(caught)
        out[i] = est.query_basis if est.query_basis is not None else est.frequencies
    if caught_all:
        first = caught_all[0]
        warnings.warn(
            f"{len(caught_all)} warning(s) while re-running {method!r} on {counts.shape[0]} "
            f"bootstrap replicates; the first: {first.message}",
            first.category if issubclass(first.category, Warning) else RuntimeWarning,
            stacklevel=3,
        )
    seconds = time.perf_counter() - start
    logger.debug("re-ran %s on %d rows one by one in %.2f s", method, counts.shape[0], seconds)
    return out, {"vectorised": False, "seconds": seconds, "warnings": len(caught_all)}
