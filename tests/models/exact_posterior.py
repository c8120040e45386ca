"""Exact posteriors of small Dirichlet models by Gauss-Jacobi quadrature (test reference).

A Dirichlet(alpha) vector is written by stick-breaking as independent Beta variables,
``s_k ~ Beta(alpha_k, sum_{j>k} alpha_j)``, so prior expectations are tensor products of
one-dimensional Gauss-Jacobi rules, which integrate the ``s^(a-1) (1-s)^(b-1)`` endpoint
singularities of small concentrations exactly. Hyperparameters are integrated on a grid.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import betaln, logsumexp, roots_jacobi


def beta_rule(a: float, b: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and log-weights of E[g(s)] for s ~ Beta(a, b) (weights sum to 1)."""
    x, w = roots_jacobi(nodes, b - 1.0, a - 1.0)  # weight (1-x)^(b-1) (1+x)^(a-1) on [-1, 1]
    s = (1.0 + x) / 2.0
    log_w = np.log(w)
    return s, log_w - logsumexp(log_w)


def dirichlet_rule(alpha, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Points on the simplex (N, K) and log-weights for E[g(f)], f ~ Dirichlet(alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    k = alpha.size
    if k == 1:
        return np.ones((1, 1)), np.zeros(1)
    rules = [beta_rule(alpha[i], alpha[i + 1 :].sum(), nodes) for i in range(k - 1)]
    grids = np.meshgrid(*[r[0] for r in rules], indexing="ij")
    log_ws = np.meshgrid(*[r[1] for r in rules], indexing="ij")
    sticks = np.stack([g.ravel() for g in grids], axis=1)  # (N, K-1)
    rest = np.cumprod(np.hstack([np.ones((sticks.shape[0], 1)), 1.0 - sticks]), axis=1)
    points = np.hstack([rest[:, :-1] * sticks, rest[:, -1:]])
    return points, sum(w.ravel() for w in log_ws)


def log_likelihood(kind: str, f: np.ndarray, m) -> np.ndarray:
    """Return the oracle's log-likelihood of m's counts at each row of f (up to a constant)."""
    pi = m.q + (m.p - m.q) * f
    c = m.support_counts
    if kind == "multinomial":
        return (c * np.log(pi)).sum(axis=-1)
    return stats.binom.logpmf(c, m.n, pi).sum(axis=-1)


class ExactDirichletPosterior:
    """Posterior of ``f ~ Dirichlet(alpha(h))`` with ``h`` on a weighted grid.

    Parameters
    ----------
    m : Measurement
    kind : str
        ``"multinomial"`` or ``"binomial"``.
    alphas : list of numpy.ndarray
        The concentration vector at each hyperparameter node.
    log_prior : numpy.ndarray
        Log prior weight of each node (grid weights included).
    nodes : int
        Gauss-Jacobi nodes per stick.
    """

    def __init__(self, m, kind, alphas, log_prior, nodes=60):
        self.m, self.kind, self.alphas, self.nodes = m, kind, alphas, nodes
        self.log_prior = np.asarray(log_prior, dtype=float)
        log_z, means = [], []
        for alpha in alphas:
            pts, lw = dirichlet_rule(alpha, nodes)
            ll = log_likelihood(kind, pts, m) + lw
            log_z.append(logsumexp(ll))
            means.append(np.exp(ll - log_z[-1]) @ pts)
        self.log_z = np.array(log_z)
        self.log_post = self.log_prior + self.log_z
        self.log_post -= logsumexp(self.log_post)
        self.hyper_weights = np.exp(self.log_post)
        self.mean = self.hyper_weights @ np.array(means)

    def cdf(self, subset, x: float) -> float:
        """P(sum of f over ``subset`` <= x | counts)."""
        d = self.m.domain_size
        inside = np.zeros(d, dtype=bool)
        inside[list(subset)] = True
        total = 0.0
        for alpha, weight, log_z in zip(self.alphas, self.hyper_weights, self.log_z, strict=True):
            if weight < 1e-14:
                continue
            a, b = alpha[inside].sum(), alpha[~inside].sum()
            # int_0^x s^(a-1) (1-s)^(b-1) H(s) ds / B(a, b), with s = x t, t^(a-1) weight
            tau, w = roots_jacobi(self.nodes, 0.0, a - 1.0)
            t = (1.0 + tau) / 2.0
            log_wt = np.log(w) - a * np.log(2.0)
            s = x * t
            u_pts, u_lw = dirichlet_rule(alpha[inside], self.nodes)
            v_pts, v_lw = dirichlet_rule(alpha[~inside], self.nodes)
            f = np.zeros((s.size, u_pts.shape[0], v_pts.shape[0], d))
            f[..., inside] = s[:, None, None, None] * u_pts[None, :, None, :]
            f[..., ~inside] = (1.0 - s)[:, None, None, None] * v_pts[None, None, :, :]
            ll = log_likelihood(self.kind, f, self.m) + u_lw[None, :, None] + v_lw[None, None, :]
            log_h = logsumexp(ll.reshape(s.size, -1), axis=1)
            log_int = (
                a * np.log(x) - betaln(a, b)
                + logsumexp(log_wt + (b - 1.0) * np.log1p(-x * t) + log_h)
            )  # fmt: skip
            total += weight * np.exp(log_int - log_z)
        return float(total)


def normal_grid(mu: float, sd: float, lo: float, hi: float, points: int):
    """Nodes of a uniform grid on [lo, hi] with log weights of N(mu, sd) (trapezoid)."""
    x = np.linspace(lo, hi, points)
    w = np.full(points, x[1] - x[0])
    w[[0, -1]] /= 2
    return x, stats.norm.logpdf(x, mu, sd) + np.log(w)


def hier_grid(mu0, s0, s_tau, lo, hi, points, tau_points=80):
    """Grid over (log a_1, log a_2) with log weights of the bayes-hier hyperprior (2 groups).

    Given tau, (log a_1, log a_2) is bivariate normal with variances s0^2 + tau^2 and
    covariance s0^2 (mu integrated out); tau ~ HalfNormal(s_tau) is integrated by
    Gauss-Legendre on [0, 6 s_tau].
    """
    x = np.linspace(lo, hi, points)
    step = x[1] - x[0]
    g1, g2 = np.meshgrid(x, x, indexing="ij")
    pts = np.stack([g1.ravel(), g2.ravel()], axis=1)
    t, wt = np.polynomial.legendre.leggauss(tau_points)
    tau = (t + 1) * 3 * s_tau
    wt = wt * 3 * s_tau * stats.halfnorm.pdf(tau, scale=s_tau)
    dens = np.zeros(len(pts))
    for ti, wi in zip(tau, wt, strict=True):
        cov = np.array([[s0**2 + ti**2, s0**2], [s0**2, s0**2 + ti**2]])
        dens += wi * stats.multivariate_normal(mean=[mu0, mu0], cov=cov).pdf(pts)
    edge = np.ones(points)
    edge[[0, -1]] = 0.5
    w = np.outer(edge, edge).ravel() * step**2
    return pts, np.log(dens * w)
