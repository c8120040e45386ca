"""The exact posterior of ``bayes-consistent`` on tiny cases: the test reference.

The model (``bayesldp.models.consistent``): ``s ~ U(s_lo, s_hi)``, ``log c ~ U(u_lo,
u_hi)``, counts ``x_v`` iid with ``P(x) ∝ (1 + x/c)^-s`` on ``0..n``, ``y_v | x_v ~
N(x_v, sigma_c^2)``, and the event ``sum_v x_v = n`` observed. Then

    p(s, c | y, S = n) ∝ prod_v p(y_v | s, c) * P(S = n | y, s, c)

where the last factor is the probability that independent draws from the items'
posteriors add up to ``n``. Here it is computed by direct (not FFT) convolution of the
item posteriors over every count ``0..n``, in floating point with each partial product
rescaled, on a fine grid of ``(s, log c)``; :func:`enumerate_total` checks the
convolution by listing every count vector that sums to ``n``. Written independently
of the model's code (no import from ``bayesldp.models``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats
from scipy.special import logsumexp


def item_log_posteriors(y, sigma_c: float, n: int, s: float, c: float):
    """Log evidence (d,) and normalised log posterior (d, n + 1) of every item."""
    x = np.arange(n + 1, dtype=float)
    log_prior = -s * np.log1p(x / c)
    log_prior -= logsumexp(log_prior)
    lw = log_prior[None, :] + stats.norm.logpdf(np.asarray(y, float)[:, None], x, sigma_c)
    log_ev = logsumexp(lw, axis=1)
    return log_ev, lw - log_ev[:, None]


def _convolve_all(pmfs: list[np.ndarray], n: int) -> tuple[np.ndarray, float]:
    """Distribution of the sum (truncated at n) as (scaled pmf, log scale)."""
    out, log_scale = np.zeros(n + 1), 0.0
    out[0] = 1.0
    for p in pmfs:
        out = np.convolve(out, p)[: n + 1]
        top = out.max()
        out /= top
        log_scale += math.log(top)
    return out, log_scale


def log_total_probability(log_post: np.ndarray, n: int) -> float:
    """Return log P(S = n) for independent items with the given log pmfs on 0..n."""
    pmfs = []
    log_scale = 0.0
    for row in log_post:
        top = row.max()
        pmfs.append(np.exp(row - top))
        log_scale += top
    conv, extra = _convolve_all(pmfs, n)
    return math.log(conv[n]) + log_scale + extra if conv[n] > 0 else -math.inf


def conditional_means(log_post: np.ndarray, n: int) -> np.ndarray:
    """E[x_v | S = n] for every item: post_v(k) P(S_{-v} = n - k) / P(S = n)."""
    d = log_post.shape[0]
    pmfs = [np.exp(row - row.max()) for row in log_post]
    k = np.arange(n + 1)
    means = np.empty(d)
    for v in range(d):
        others, _ = _convolve_all(pmfs[:v] + pmfs[v + 1 :], n)
        w = pmfs[v] * others[n - k]
        means[v] = (w * k).sum() / w.sum()
    return means


def enumerate_total(log_post: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """Return log P(S = n) and E[x | S = n] by listing every count vector summing to n."""
    d = log_post.shape[0]
    total, mean = 0.0, np.zeros(d)
    for head in itertools.product(range(n + 1), repeat=d - 1):
        last = n - sum(head)
        if last < 0:
            continue
        x = (*head, last)
        w = math.exp(sum(log_post[v, x[v]] for v in range(d)))
        total += w
        mean += w * np.asarray(x)
    return math.log(total), mean / total


def posterior_grid(y, sigma_c, n, s_bounds, u_bounds, points=(81, 61), means=True):
    """Return the exact posterior on a midpoint grid of ``(s, log c)`` over the prior box.

    Returns a dict with the grid, normalised weights, the posterior mean and sd of
    ``s`` and ``log c``, and (if ``means``) the posterior means of the frequencies.
    """
    ns, nu = points
    s_edges = np.linspace(*s_bounds, ns + 1)
    u_edges = np.linspace(*u_bounds, nu + 1)
    ss, us = (s_edges[:-1] + s_edges[1:]) / 2, (u_edges[:-1] + u_edges[1:]) / 2
    lp = np.empty((ns, nu))
    f = np.zeros((ns, nu, len(y))) if means else None
    for i, s in enumerate(ss):
        for j, u in enumerate(us):
            log_ev, log_post = item_log_posteriors(y, sigma_c, n, s, math.exp(u))
            lp[i, j] = log_ev.sum() + log_total_probability(log_post, n)
            if means:
                f[i, j] = conditional_means(log_post, n) / n
    w = np.exp(lp - lp.max())
    w /= w.sum()
    out = {"s": ss, "log_c": us, "weights": w, "log_target": lp}
    for name, grid in (("s", ss[:, None]), ("log_c", us[None, :])):
        mean = float((w * grid).sum())
        out[name + "_mean"] = mean
        out[name + "_sd"] = math.sqrt(float((w * (grid - mean) ** 2).sum()))
    if means:
        out["frequencies"] = np.einsum("ij,ijk->k", w, f)
    return out
