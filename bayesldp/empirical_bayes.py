r"""Nonparametric empirical Bayes for frequency oracles: the NPMLE of the count distribution.

Every item ``v`` has a true count :math:`x_v` (users holding it) and a support count
:math:`c_v`. Empirical Bayes treats the counts as draws from an unknown distribution
:math:`G` on ``0..n`` (the histogram of the counts over the items) and estimates it
from the data, instead of assuming a family (Calibrate's power law, the shifted power
law of ``bayes-consistent``):

.. math::

    x_v \overset{iid}{\sim} G, \qquad
    c_v \mid x_v \sim \mathrm{Binomial}\big(n,\ q + (p - q)\, x_v / n\big),
    \qquad \textstyle\sum_v x_v = n .

:math:`\hat G` is the Kiefer-Wolfowitz nonparametric maximum likelihood estimate
(NPMLE): a discrete distribution on a grid of counts :math:`u_1 < \dots < u_K` whose
weights :math:`w` maximise the marginal likelihood

.. math::

    \ell(w) = \sum_v \log \sum_k L_{vk} w_k, \qquad
    L_{vk} = P(c_v \mid x_v = u_k), \qquad
    w \ge 0, \ \textstyle\sum_k w_k = 1 .

The problem is convex; its optimality (KKT) condition is

.. math::

    S_k(w) = \sum_v \frac{L_{vk}}{\sum_j L_{vj} w_j} \le d
    \quad \text{for all } k, \text{ with equality where } w_k > 0,

and for any :math:`w` on the simplex :math:`\ell(\hat w) - \ell(w) \le \max_k S_k(w) - d`
bounds the distance to the optimum (:func:`kkt_gap` reports it relative to ``d``).

The known total enters twice. First in the data: the counts add up to ``n``, so the
sum of the support counts' noises is known, and the support counts are corrected by
their share of it (:func:`total_corrected_counts`; exact for Gaussian noise). Without
this the raw total, off by about :math:`\sigma\sqrt d` (6% on 1024 items, 40% on
42178), would have to be absorbed by the tilt below, which puts it where the posterior is
widest (the small, noisy items): on the papers' Zipf setting that doubled the MSE of
some runs. (Fixing the prior's mean at ``n / d`` instead does not help: the NPMLE meets
such a constraint most cheaply by giving the largest atom, which rests on one item, a
little more weight, a "phantom" fraction of an item that changes no posterior mean.)

Each item's estimate is its posterior mean under :math:`\hat G` **conditioned on the
total** by exponential tilting: the prior is multiplied by :math:`e^{\lambda u}` with
:math:`\lambda` solved so that the posterior means add up to ``n`` (the saddle-point /
Gibbs-conditioning approximation to conditioning independent counts on their sum,
accurate for large ``d``; the same device as ``bayes-consistent``). The estimate is
therefore non-negative and sums to 1.

Numerics
--------
* The grid (:func:`count_grid`) has every count up to ``1 / grid_growth``, then
  relative steps of ``grid_growth`` capped at ``grid_spacing`` noise standard
  deviations, and covers only counts within ``grid_window`` standard deviations of some
  observation (farther counts have likelihood below :math:`e^{-32}` for every item).
* Items with the same support count share a likelihood row, so the matrix has one row
  per distinct support count (2.5 thousand rows for 42 thousand words).
* ``solver="sqp"`` (the default) is an active-set sequential quadratic programming
  method in the manner of mixsqp (Kim, Carbonetto, Stephens and Anitescu 2020):
  Newton steps on the atoms that carry weight, with a nonnegativity-constrained
  quadratic subproblem solved by a primal active-set method and a backtracking line
  search, and atoms added wherever the KKT condition is violated on the whole grid
  (the support-reduction idea of Groeneboom, Jongbloed and Wellner 2008). The
  Hessian is only ever formed on the support (tens of atoms), so a solve costs a few
  matrix-vector products with the full matrix. ``solver="em"`` is the EM algorithm
  accelerated by SQUAREM; it converges, but far too slowly to be useful here
  (200,000 EM-map evaluations leave a gap of 4e-6 on the papers' Zipf setting, where
  the SQP reaches 1e-11 in 10 iterations); it is kept as an independent check.
  ``solver="cvxpy"`` hands the convex problem to a conic solver (the reference).

References
----------
Kiefer and Wolfowitz (1956); Laird (1978); Lindsay (1983); Koenker and Mizera (2014),
"Convex optimization, shape constraints, compound decisions, and empirical Bayes
rules"; Kim, Carbonetto, Stephens and Anitescu (2020), "A fast algorithm for maximum
likelihood estimation of mixture proportions using sequential quadratic programming".
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import gammaln, xlog1py, xlogy

from bayesldp._draws import cached_rows, row_generator
from bayesldp._validation import (
    check_bool,
    check_choice,
    check_counts,
    check_float,
    check_int,
    check_rng,
)
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement, support_count_variance

logger = logging.getLogger(__name__)

__all__ = [
    "LIKELIHOODS",
    "MAX_GRID_POINTS",
    "SOLVERS",
    "BootstrapPosteriorDraws",
    "CountLikelihood",
    "DiscretePosteriorDraws",
    "NPMLEFit",
    "PosteriorTable",
    "TiltedPosterior",
    "count_grid",
    "count_likelihood",
    "count_noise_sd",
    "eb_npmle",
    "kkt_gap",
    "npmle",
    "npmle_gradient",
    "oracle_bayes",
    "project_to_total",
    "single_threaded_blas",
    "tilted_posterior",
    "total_corrected_counts",
]

#: Likelihoods of a support count given a true count.
LIKELIHOODS = ("binomial", "gaussian")
#: NPMLE solvers.
SOLVERS = ("sqp", "em", "cvxpy")
#: Kinds of posterior draws behind intervals.
DRAW_KINDS = ("bootstrap", "plug-in")
#: Prior weight given to every grid atom when the NPMLE alone cannot be tilted to n.
PRIOR_FLOOR = 1e-9
#: Most counts :func:`count_grid` builds (the defaults give about 600 to 1000; a tiny
#: spacing or growth with a large n would give millions, and a likelihood matrix of
#: gigabytes): more is a ValueError naming the grid options.
MAX_GRID_POINTS = 50_000


# ---------------------------------------------------------------------------
# Likelihood and grid
# ---------------------------------------------------------------------------


#: threadpoolctl's controller, created on first use (it inspects the loaded libraries).
_BLAS_CONTROLLER: Any = None  # a ThreadpoolController once looked up; False if none


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the enclosed numpy linear algebra on one BLAS thread.

    The matrices here are small (tens to hundreds of rows): a multi-threaded BLAS gains
    nothing on them and, on a machine whose cores are busy, can be a thousand times
    slower (a 150 x 150 solve took 0.17 s instead of 0.3 ms at a load average of 10 on
    2 cores). ``threadpoolctl`` comes with PyMC; without it nothing is changed.
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is installed with pymc
            _BLAS_CONTROLLER = False
        else:
            _BLAS_CONTROLLER = ThreadpoolController()
    if _BLAS_CONTROLLER is False:  # pragma: no cover
        yield
        return
    with _BLAS_CONTROLLER.limit(limits=1, user_api="blas"):
        yield


def _support_probability(m: Measurement, x: np.ndarray) -> np.ndarray:
    return m.q + (m.p - m.q) * (np.asarray(x, dtype=np.float64) / m.n)


def count_noise_sd(m: Measurement, x, likelihood: str = "binomial") -> np.ndarray:
    r"""Return the standard deviation of a count estimate :math:`n\tilde f_v` given the true count.

    Parameters
    ----------
    m : Measurement
        Gives ``n``, ``p`` and ``q``.
    x : array_like
        True counts (clipped into ``[0, n]`` for this purpose).
    likelihood : {"binomial", "gaussian"}
        ``binomial``: :math:`\sqrt{n\pi(1-\pi)}/(p-q)` with
        :math:`\pi = q + (p-q)x/n`; ``gaussian``: the conditional law given the count,
        :math:`\sqrt{x p(1-p) + (n-x) q(1-q)}/(p-q)`.

    Returns
    -------
    numpy.ndarray
        In counts (users).
    """
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    x = np.clip(np.asarray(x, dtype=np.float64), 0, m.n)
    if likelihood == "binomial":
        pi = _support_probability(m, x)
        var = m.n * pi * (1 - pi)
    else:
        var = _conditional_count_variance(m, x)
    return np.sqrt(np.maximum(var, 0.0)) / (m.p - m.q)


def _conditional_count_variance(m: Measurement, x: np.ndarray) -> np.ndarray:
    """Variance of a support count given the true count ``x`` (the Gaussian likelihood)."""
    return support_count_variance(m.n, m.p, m.q, x)


def count_grid(
    m: Measurement,
    *,
    spacing: float = 0.25,
    growth: float = 0.02,
    window: float = 8.0,
    likelihood: str = "binomial",
) -> np.ndarray:
    r"""Grid of counts on which the prior :math:`G` is estimated.

    Every count from 0 up to ``1 / growth``, then steps of ``growth`` times the count,
    but never wider than ``spacing`` noise standard deviations (and never narrower
    than one count). Only counts within ``window`` noise standard deviations of some
    item's count estimate, or of the mean count ``n / d``, are kept.

    Why this resolution: every item's likelihood, as a function of its count, is a bump
    of width one noise standard deviation :math:`s`. Moving an atom of :math:`G` by
    :math:`h` changes each likelihood by a relative :math:`O(h/s)`, and a mixture of two
    neighbouring atoms reproduces a point between them up to :math:`O(h^2/s^2)`; with
    :math:`h \le s/4` the estimates change by a small fraction of the noise when the
    spacing is halved (``tests/test_empirical_bayes.py`` checks it). Where counts are
    small compared with the noise the relative steps resolve the low end of
    :math:`G` (most items of real data have a handful of users), at a cost of about
    ``log(s * spacing / growth) / growth`` points.

    Parameters
    ----------
    m : Measurement
        The measurement (its ``n``, ``p``, ``q`` and estimates).
    spacing : float, default 0.25
        Largest step, in noise standard deviations.
    growth : float, default 0.02
        Relative step where it is below ``spacing``.
    window : float, default 8.0
        Half-width of the kept region around each count estimate, in noise standard
        deviations (a likelihood ratio of :math:`e^{-32}`).
    likelihood : {"binomial", "gaussian"}
        Which noise standard deviation to use (:func:`count_noise_sd`).

    Returns
    -------
    numpy.ndarray
        Increasing integer counts in ``[0, n]`` (as floats).

    Raises
    ------
    ValueError
        A grid of more than :data:`MAX_GRID_POINTS` counts (``spacing`` or ``growth``
        too small, or ``window`` too large, for ``n``).
    """
    spacing = check_float(spacing, "spacing", minimum=0, strict_minimum=True)
    growth = check_float(growth, "growth", minimum=0, strict_minimum=True)
    window = check_float(window, "window", minimum=0, strict_minimum=True)
    n = m.n
    y = np.unique(np.concatenate([m.estimates * n, [n / m.domain_size]]))
    half = window * count_noise_sd(m, y, likelihood)
    lo = np.clip(np.floor(y - half), 0, n)
    hi = np.clip(np.ceil(y + half), 0, n)
    # merge the windows [lo, hi] (sorted by lo since y is sorted and half varies slowly)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    starts = np.concatenate([[0], np.flatnonzero(lo[1:] > hi[:-1]) + 1])
    ends = np.concatenate([starts[1:] - 1, [lo.size - 1]])
    points: list[float] = []
    for a, b in zip(lo[starts], hi[ends], strict=True):
        x = float(a)
        while True:
            points.append(x)
            if x >= b:
                break
            if len(points) >= MAX_GRID_POINTS:
                raise ValueError(
                    f"count grid: more than {MAX_GRID_POINTS:,} counts for n = {n:,} "
                    f"(spacing {spacing:g}, growth {growth:g}, window {window:g}); raise "
                    "grid_spacing or grid_growth, or lower grid_window"
                )
            sd = float(count_noise_sd(m, x, likelihood))
            step = max(1.0, math.floor(min(growth * x, spacing * sd)))
            x = min(float(b), x + step)
    return np.unique(np.asarray(points))


@dataclass(frozen=True)
class CountLikelihood:
    r"""The likelihood matrix of the distinct support counts on a grid of true counts.

    Attributes
    ----------
    atoms : numpy.ndarray
        The grid of counts :math:`u_k`, shape ``(K,)``.
    matrix : numpy.ndarray
        :math:`P(c_j \mid x = u_k)` divided by its largest value in each row, shape
        ``(U, K)``, one row per distinct support count.
    log_scale : numpy.ndarray
        Log of each row's largest value, shape ``(U,)``.
    support_counts : numpy.ndarray
        The distinct support counts :math:`c_j`, shape ``(U,)``.
    multiplicity : numpy.ndarray
        How many items have each support count, shape ``(U,)`` (floats).
    item_row : numpy.ndarray
        The row of each item, shape ``(d,)``.
    likelihood : str
        ``"binomial"`` or ``"gaussian"``.
    atom_sd : numpy.ndarray
        Noise standard deviation of a count estimate at each atom (:func:`count_noise_sd`).
    """

    atoms: np.ndarray
    matrix: np.ndarray
    log_scale: np.ndarray
    support_counts: np.ndarray
    multiplicity: np.ndarray
    item_row: np.ndarray
    likelihood: str
    atom_sd: np.ndarray

    @property
    def n_items(self) -> float:
        """Number of items ``d`` (the sum of the multiplicities)."""
        return float(self.multiplicity.sum())

    def loglik(self, weights: np.ndarray) -> float:
        r"""Marginal log-likelihood :math:`\sum_v \log \sum_k P(c_v \mid u_k) w_k`.

        Parameters
        ----------
        weights : numpy.ndarray
            Prior weight of each atom, shape ``(K,)`` (on the simplex; not checked).
        """
        with np.errstate(divide="ignore"):
            return float(self.multiplicity @ (np.log(self.matrix @ weights) + self.log_scale))


def total_corrected_counts(m: Measurement, likelihood: str = "binomial") -> np.ndarray:
    r"""Support counts with the known total noise taken out.

    The counts add up to ``n``, so the sum of the support counts' noises,
    :math:`E = \sum_v c_v - n(dq + p - q)`, is known. Independent Gaussian noises
    :math:`e_v` with variances :math:`\sigma_v^2` conditioned on their sum are
    :math:`e_v = e'_v + E \sigma_v^2 / \sum_u \sigma_u^2` with :math:`\sum_v e'_v = 0`,
    and on the hyperplane :math:`\sum_v x_v = n` the likelihood of the counts is
    exactly (for Gaussian noise) that of the corrected counts

    .. math::

        c'_v = c_v - E \, \sigma_v^2 / \textstyle\sum_u \sigma_u^2 ,

    which add up to their expected total. The raw total is off by about
    :math:`\sigma\sqrt d` (6% on 1024 items, 40% on 42178): left in the data, it is the
    tilt that would have to move the posterior means that far, and it moves them
    where the posterior is widest (the small, noisy items), not where the noise is.
    The variances are the oracle's at the plug-in counts
    :math:`\mathrm{clip}(n\tilde f_v, 0, n)`. For GRR every user supports exactly one
    item, :math:`E = 0` and nothing changes. The corrected counts are clipped into
    ``[0, n]`` (they move by a small fraction of a standard deviation).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    likelihood : {"binomial", "gaussian"}, default "binomial"
        The count likelihood whose variances :math:`\sigma_v^2` share out the noise.

    Returns
    -------
    numpy.ndarray
        :math:`c'`, floats, one per item.
    """
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    c = m.support_counts.astype(np.float64)
    n, p, q, d = m.n, m.p, m.q, m.domain_size
    excess = float(c.sum() - n * (d * q + p - q))
    x_hat = np.clip(m.estimates * n, 0, n)
    var = (count_noise_sd(m, x_hat, likelihood) * (p - q)) ** 2
    if excess == 0 or var.sum() <= 0:
        return c
    return np.clip(c - excess * var / var.sum(), 0, n)


def count_likelihood(
    m: Measurement, atoms, likelihood: str = "binomial", counts=None
) -> CountLikelihood:
    r"""Likelihood of every distinct support count at every atom (true count).

    Parameters
    ----------
    m : Measurement
        The measurement.
    atoms : array_like
        True counts in ``[0, n]``.
    likelihood : {"binomial", "gaussian"}
        ``binomial`` (default): :math:`c \sim \mathrm{Binomial}(n, q + (p-q)x/n)`, the
        exact marginal law of a pure oracle's support count when the users' values are
        i.i.d. draws from the frequencies (the likelihood ``mle`` and ``ibu`` use).
        ``gaussian``: a normal law with the mean :math:`nq + (p-q)x` and variance
        :math:`x p(1-p) + (n-x) q(1-q)` of the support count *given* the count ``x``
        (the law of ``Binomial(x, p) + Binomial(n - x, q)``, which is what
        :meth:`~bayesldp.oracles.FrequencyOracle.simulate` draws); the binomial's
        variance exceeds it by :math:`(p-q)^2 x (1 - x/n)`, which only the largest items
        notice.
    counts : array_like, optional
        Support counts to use instead of ``m.support_counts`` (e.g.
        :func:`total_corrected_counts`; may be non-integer, in ``[0, n]``).

    Returns
    -------
    CountLikelihood
    """
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    x = np.asarray(atoms, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("atoms must be a non-empty 1-D array of finite counts")
    if x.min() < 0 or x.max() > m.n:
        raise ValueError(f"atoms must lie in [0, n={m.n}], got [{x.min()}, {x.max()}]")
    if counts is None:
        counts = m.support_counts
    else:
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != (m.domain_size,) or not np.all(np.isfinite(counts)):
            raise ValueError(f"counts must be {m.domain_size} finite numbers")
        if counts.min() < 0 or counts.max() > m.n:
            raise ValueError(f"counts must lie in [0, n={m.n}]")
    c, item_row, mult = np.unique(counts, return_inverse=True, return_counts=True)
    n, p, q = m.n, m.p, m.q
    cf = c.astype(np.float64)[:, None]
    if likelihood == "binomial":
        pi = _support_probability(m, x)
        const = gammaln(n + 1) - gammaln(cf + 1) - gammaln(n - cf + 1)
        if 0 < pi.min() and pi.max() < 1:
            # c log(pi) + (n - c) log(1 - pi) as one multiply-add per entry
            logit, log_fail = np.log(pi) - np.log1p(-pi), n * np.log1p(-pi)
            logl = cf * logit[None, :]
            logl += log_fail[None, :] + const
        else:  # q = 0 or p = 1: mind 0 log 0
            logl = xlogy(cf, pi[None, :]) + xlog1py(n - cf, -pi[None, :]) + const
    else:
        mean = (n * q + (p - q) * x)[None, :]
        var = _conditional_count_variance(m, x)[None, :]
        logl = -0.5 * (cf - mean) ** 2 / var - 0.5 * np.log(2 * np.pi * var)
    top = logl.max(axis=1)
    if not np.all(np.isfinite(top)):
        raise ValueError("some support count is impossible at every atom; widen the grid")
    logl -= top[:, None]
    np.exp(logl, out=logl)
    return CountLikelihood(
        atoms=x,
        matrix=logl,
        log_scale=top,
        support_counts=c,
        multiplicity=mult.astype(np.float64),
        item_row=item_row.ravel(),
        likelihood=likelihood,
        atom_sd=count_noise_sd(m, x, likelihood),
    )


# ---------------------------------------------------------------------------
# The NPMLE
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NPMLEFit:
    r"""A fitted prior on the grid of counts.

    Attributes
    ----------
    weights : numpy.ndarray
        :math:`\hat w`, shape ``(K,)``, non-negative, summing to 1.
    loglik : float
        Marginal log-likelihood at :math:`\hat w` (with every constant).
    gap : float
        :math:`\max_k S_k(\hat w) / d - 1` (:func:`kkt_gap`), an upper bound on
        :math:`(\ell(w^*) - \ell(\hat w)) / d`.
    solver : str
        Which solver produced it.
    iterations : int
        Outer iterations (SQP), EM-map evaluations (EM) or solver iterations (cvxpy).
    seconds : float
        Wall time of the solve.
    converged : bool
        Whether ``gap`` reached the tolerance.
    info : dict
        Solver details.
    """

    weights: np.ndarray
    loglik: float
    gap: float
    solver: str
    iterations: int
    seconds: float
    converged: bool
    info: dict = field(default_factory=dict)

    @property
    def support(self) -> np.ndarray:
        """Indices of the atoms that carry weight."""
        return np.flatnonzero(self.weights > 0)


def npmle_gradient(lik: CountLikelihood, weights: np.ndarray) -> np.ndarray:
    r""":math:`S_k(w) = \sum_v L_{vk} / \sum_j L_{vj} w_j` for every atom ``k``.

    The gradient of the marginal log-likelihood; :math:`\sum_k w_k S_k(w) = d`.

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix :math:`L` of the distinct support counts.
    weights : numpy.ndarray
        Prior weight of each atom, shape ``(K,)``; only positive weights enter.

    Returns
    -------
    numpy.ndarray
        Shape ``(K,)``.
    """
    w = np.asarray(weights, dtype=np.float64)
    support = np.flatnonzero(w > 0)
    lw = lik.matrix[:, support] @ w[support]
    return lik.matrix.T @ (lik.multiplicity / lw)


def kkt_gap(lik: CountLikelihood, weights: np.ndarray) -> float:
    r"""Relative optimality gap of ``weights``: :math:`\max_k S_k(w) / d - 1`.

    For any :math:`w` on the simplex, concavity gives
    :math:`\ell(w^*) - \ell(w) \le \nabla\ell(w) \cdot (w^* - w)
    = \sum_k w^*_k S_k(w) - d \le \max_k S_k(w) - d`, so the gap bounds the distance
    to the optimum in log-likelihood per item; it is zero exactly at the NPMLE (the
    KKT condition :math:`S_k \le d`, with equality where :math:`w_k > 0`).

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix of the distinct support counts.
    weights : numpy.ndarray
        Prior weight of each atom, shape ``(K,)``, on the simplex.
    """
    return float(npmle_gradient(lik, weights).max() / lik.n_items - 1)


def _start(lik: CountLikelihood, sd: np.ndarray | None = None) -> np.ndarray:
    """Return starting weights: the histogram of the items' maximum-likelihood atoms, thinned.

    Every row then has an atom near its best one in the support, so no item starts
    with a tiny marginal likelihood (which would make the Hessian useless). Atoms
    closer than half a noise standard deviation ``sd`` to the previous kept atom are
    merged into it: the start then has tens of atoms, not hundreds, and the first
    quadratic subproblem does not spend its time dropping them one by one.
    """
    best = np.argmax(lik.matrix, axis=1)
    w = np.bincount(best, weights=lik.multiplicity, minlength=lik.atoms.size)
    if sd is not None:
        idx = np.flatnonzero(w)
        keep = idx[0]
        for k in idx[1:]:
            if lik.atoms[k] - lik.atoms[keep] < 0.5 * sd[keep]:
                w[keep] += w[k]
                w[k] = 0.0
            else:
                keep = k
    return w / w.sum()


def _qp_simplex(hess: np.ndarray, lin: np.ndarray, start: np.ndarray, max_iter: int = 1000):
    """Minimise ``u H u / 2 - lin . u`` subject to ``sum(u) = sum(start)``, ``u >= 0``.

    A primal active-set method (Nocedal and Wright, Algorithm 16.3) from the feasible
    point ``start``: solve the equality-constrained problem on the free variables;
    if that leaves the feasible set, step to the boundary and fix the variable that
    reaches zero; otherwise free the fixed variable with the most negative multiplier,
    or stop when there is none. Returns the minimiser and whether it finished.
    """
    total = float(start.sum())
    u = start.copy()
    free = u > 0
    ridge = 1e-13 * float(np.abs(np.diag(hess)).max())
    for _ in range(max_iter):
        idx = np.flatnonzero(free)
        nf = idx.size
        kkt = np.empty((nf + 1, nf + 1))
        kkt[:nf, :nf] = hess[np.ix_(idx, idx)]
        kkt[np.arange(nf), np.arange(nf)] += ridge
        kkt[:nf, nf] = 1.0
        kkt[nf, :nf] = 1.0
        kkt[nf, nf] = 0.0
        rhs = np.append(lin[idx], total)
        try:
            sol = np.linalg.solve(kkt, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        z, nu = sol[:nf], sol[nf]
        if z.min() >= 0:
            u = np.zeros_like(u)
            u[idx] = z
            fixed = np.flatnonzero(~free)
            if fixed.size == 0:
                return u, True
            mult = hess[fixed] @ u - lin[fixed] + nu
            j = int(np.argmin(mult))
            if mult[j] >= -1e-13 * float(np.abs(lin).max()):
                return u, True
            free[fixed[j]] = True
            continue
        uf = u[idx]
        neg = np.flatnonzero(z < 0)
        ratios = uf[neg] / (uf[neg] - z[neg])
        j = int(np.argmin(ratios))
        u[idx] = uf + ratios[j] * (z - uf)
        block = idx[neg[j]]
        u[block] = 0.0
        np.maximum(u, 0.0, out=u)
        free[block] = False
    return u, False


def _solve_sqp(
    lik: CountLikelihood, tol: float, max_iter: int, start: np.ndarray | None
) -> tuple[np.ndarray, int, dict]:
    """Active-set SQP (see the module notes). Returns weights, outer iterations, info."""
    mat, mult = lik.matrix, lik.multiplicity
    d = lik.n_items
    w_full = _start(lik) if start is None else start / start.sum()
    support = np.flatnonzero(w_full > 0)
    w = w_full[support]
    newton_steps = 0
    qp_unfinished = 0
    outer = 0
    for outer in range(1, max_iter + 1):  # noqa: B007 - reported after the loop
        # Newton (SQP) iterations on the current support
        for _ in range(100):
            ls = mat[:, support]
            lw = ls @ w
            g = ls.T @ (mult / lw)
            hm = ls * (np.sqrt(mult) / lw)[:, None]
            hess = hm.T @ hm / d
            u, finished = _qp_simplex(hess, 2 * g / d, w)
            qp_unfinished += not finished
            newton_steps += 1
            step = u - w
            # g . step with sum(step) = 0, written so that it does not cancel: g ~ d
            slope = float((g / d - 1) @ step) * d
            if np.abs(step).max() <= 1e-15 or slope <= -1e-12 * d:
                break
            # backtracking (Armijo) line search; near the optimum the rounding of the
            # log-likelihood (~1e-16 of it) exceeds the predicted gain, hence the slack.
            # A step may also not take more than 99% of any item's marginal likelihood:
            # far from the optimum the quadratic model would otherwise drop atoms that
            # some items need (a start far from the NPMLE can gain overall by doing so,
            # and those items' terms then wreck the next Hessian).
            f0 = float(mult @ np.log(lw))
            slack = 1e-13 * abs(f0)
            t = 1.0
            while True:
                new_lw = ls @ (w + t * step)
                if (new_lw >= 0.01 * lw).all():
                    f1 = float(mult @ np.log(new_lw))
                    if f1 >= f0 + 1e-4 * t * max(slope, 0.0) - slack:
                        break
                if t < 1e-12:
                    break
                t *= 0.5
            if t < 1e-12:
                break
            w = u if t == 1.0 else np.maximum(w + t * step, 0.0)
            keep = w > 0
            support, w = support[keep], w[keep]
            if slope < 1e-3 * tol * d:
                break
        w_full = np.zeros(lik.atoms.size)
        w_full[support] = w / w.sum()
        s = npmle_gradient(lik, w_full)
        if s.max() / d - 1 <= tol:
            break
        # add atoms where the KKT condition fails: local maxima of S off the support
        viol = s.copy()
        viol[support] = -np.inf
        pad = np.concatenate([[-np.inf], viol, [-np.inf]])
        peaks = np.flatnonzero((viol > (1 + tol) * d) & (viol >= pad[:-2]) & (viol >= pad[2:]))
        if peaks.size == 0:
            # the violation is on the support itself: Newton iterations must go on
            continue
        support = np.concatenate([support, peaks])
        order = np.argsort(support)
        w = np.concatenate([w, np.zeros(peaks.size)])[order]
        support = support[order]
    info = {"newton_steps": newton_steps, "qp_unfinished": qp_unfinished}
    return w_full, outer, info


def _em_map(lik: CountLikelihood, w: np.ndarray) -> np.ndarray:
    r"""One EM step: :math:`w_k \leftarrow w_k S_k(w) / d`."""
    z = w * (lik.matrix.T @ (lik.multiplicity / (lik.matrix @ w)))
    return z / z.sum()


def _solve_em(lik: CountLikelihood, tol: float, max_iter: int) -> tuple[np.ndarray, int, dict]:
    """EM with SQUAREM acceleration (Varadhan and Roland 2008), as in ``ibu``."""
    w = np.full(lik.atoms.size, 1.0 / lik.atoms.size)
    evals = 0
    next_check = 0
    while evals < max_iter:
        w1 = _em_map(lik, w)
        w2 = _em_map(lik, w1)
        evals += 2
        r, v = w1 - w, w2 - 2 * w1 + w
        nv = float(np.linalg.norm(v))
        alpha = -float(np.linalg.norm(r)) / nv if nv > 0 else -1.0
        cand = w2
        for _ in range(60):
            if alpha >= -1:
                break
            jump = w - 2 * alpha * r + alpha**2 * v
            if jump.min() > 0:
                jump = _em_map(lik, jump / jump.sum())
                evals += 1
                if lik.loglik(jump) >= lik.loglik(w2):
                    cand = jump
                break
            alpha = (alpha - 1) / 2
        w = cand
        if evals >= next_check:
            next_check = evals + 20
            if kkt_gap(lik, w) <= tol:
                break
    return w, evals, {}


def _solve_cvxpy(
    lik: CountLikelihood, tol: float, solver: str | None, max_iter: int
) -> tuple[np.ndarray, int, dict]:
    import cvxpy as cp

    from bayesldp.convex import SolverFailedError

    name = (solver or "CLARABEL").upper()
    w = cp.Variable(lik.atoms.size, nonneg=True)
    objective = cp.Maximize((lik.multiplicity / lik.n_items) @ cp.log(lik.matrix @ w))
    prob = cp.Problem(objective, [cp.sum(w) == 1])
    opts: dict = {}
    if name == "CLARABEL":
        opts = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": max_iter}
    elif name == "SCS":
        opts = {"eps_abs": tol, "eps_rel": tol, "max_iters": max_iter}
    try:
        prob.solve(solver=name, **opts)
    except cp.error.SolverError as exc:
        raise SolverFailedError("eb-npmle", name, "error", str(exc)) from exc
    if prob.status != "optimal":
        raise SolverFailedError("eb-npmle", name, str(prob.status))
    raw = np.asarray(w.value, dtype=np.float64)
    info = {
        "status": prob.status,
        "cvxpy_solver": name,
        "raw_min_weight": float(raw.min()),
        "raw_sum_error": float(raw.sum() - 1),
    }
    # the solver's weights may be slightly negative or off the simplex at its tolerance
    out = np.maximum(raw, 0.0)
    return out / out.sum(), int(prob.solver_stats.num_iters or 0), info


def npmle(
    lik: CountLikelihood,
    *,
    solver: str = "sqp",
    tol: float = 1e-8,
    max_iter: int | None = None,
    cvxpy_solver: str | None = None,
    start=None,
) -> NPMLEFit:
    r"""Kiefer-Wolfowitz NPMLE of the mixing weights on the grid.

    .. math::

        \hat w = \arg\max_{w \ge 0,\ \sum_k w_k = 1}
        \ \sum_v \log \sum_k L_{vk} w_k .

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix (:func:`count_likelihood`).
    solver : {"sqp", "em", "cvxpy"}
        Active-set SQP (fast, default), SQUAREM-accelerated EM, or cvxpy (reference).
    tol : float
        Stop when :func:`kkt_gap` is at most ``tol`` (for cvxpy: the conic solver's
        tolerances; its answer's gap is reported, not enforced).
    max_iter : int, optional
        Outer SQP iterations (default 500), EM-map evaluations (default 100000), or
        conic-solver iterations (default 10000).
    cvxpy_solver : str, optional
        Conic solver for ``solver="cvxpy"`` (``"CLARABEL"`` by default, or ``"SCS"``).
    start : array_like, optional
        Starting weights for the SQP (non-negative, one per atom); by default the
        histogram of the items' most likely atoms. Every item should have some weight
        within a few noise standard deviations.

    Returns
    -------
    NPMLEFit

    Warns
    -----
    RuntimeWarning
        When the gap is still above ``tol`` at the end (SQP and EM).
    """
    check_choice(solver, SOLVERS, "solver")
    tol = check_float(tol, "tol", minimum=0, strict_minimum=True)
    if not isinstance(lik, CountLikelihood):
        raise ValueError(f"lik must be a CountLikelihood, got {type(lik).__name__}")
    mult = np.asarray(lik.multiplicity, dtype=np.float64)
    if mult.shape != lik.matrix.shape[:1] or not np.all(np.isfinite(mult)) or mult.min() <= 0:
        raise ValueError(
            "lik.multiplicity must be positive and finite, one per row of lik.matrix "
            "(drop the rows no item has)"
        )
    default_iter = {"sqp": 500, "em": 100_000, "cvxpy": 10_000}[solver]
    max_iter = default_iter if max_iter is None else check_int(max_iter, "max_iter", minimum=1)
    if start is not None:
        start = np.asarray(start, dtype=np.float64)
        if start.shape != lik.atoms.shape or not np.all(np.isfinite(start)) or start.min() < 0:
            raise ValueError("start must be non-negative finite weights, one per atom")
        if start.sum() <= 0:
            raise ValueError("start must not be all zero")
    elif solver == "sqp":
        start = _start(lik, lik.atom_sd)
    began = time.perf_counter()
    if solver == "cvxpy":
        w, iters, info = _solve_cvxpy(lik, tol, cvxpy_solver, max_iter)
    else:
        with single_threaded_blas():
            if solver == "sqp":
                w, iters, info = _solve_sqp(lik, tol, max_iter, start)
            else:
                w, iters, info = _solve_em(lik, tol, max_iter)
    seconds = time.perf_counter() - began
    gap = kkt_gap(lik, w)
    converged = gap <= tol
    if not converged and solver != "cvxpy":
        warnings.warn(
            f"the NPMLE ({solver}) stopped after {iters} iterations with a relative gap of "
            f"{gap:.2e} (tol={tol:.0e}); raise max_iter",
            RuntimeWarning,
            stacklevel=2,
        )
    return NPMLEFit(
        weights=w,
        loglik=lik.loglik(w),
        gap=gap,
        solver=solver,
        iterations=iters,
        seconds=seconds,
        converged=converged,
        info=info,
    )


# ---------------------------------------------------------------------------
# Posterior under a discrete prior, conditioned on the total
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TiltedPosterior:
    r"""Item posteriors under a discrete prior tilted by :math:`e^{\lambda u}`.

    Attributes
    ----------
    atoms : numpy.ndarray
        The prior's atoms that carry weight, shape ``(s,)``.
    prob : numpy.ndarray
        Posterior probability of each atom for each distinct support count, ``(U, s)``.
    mean, var : numpy.ndarray
        Posterior mean and variance of the count for each distinct support count.
    tilt : float
        :math:`\lambda`, per user (0 when not conditioned on a total).
    item_row : numpy.ndarray
        The row of each item, shape ``(d,)``.
    multiplicity : numpy.ndarray
        Items per row.
    """

    atoms: np.ndarray
    prob: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    tilt: float
    item_row: np.ndarray
    multiplicity: np.ndarray

    def item_means(self) -> np.ndarray:
        """Posterior mean count of every item, shape ``(d,)``."""
        return self.mean[self.item_row]

    def item_variances(self) -> np.ndarray:
        """Posterior variance of every item's count, shape ``(d,)``."""
        return self.var[self.item_row]

    def responsibilities(self) -> np.ndarray:
        r"""Return the expected number of items at each atom.

        That is :math:`\sum_v P(x_v = u_k \mid c_v)`.
        """
        return self.multiplicity @ self.prob


def _posterior_at(
    log_mat: np.ndarray, log_w: np.ndarray, atoms: np.ndarray, lam: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    logits = log_mat + (log_w + lam * atoms)[None, :]
    top = logits.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise RuntimeError(
            "some support count has zero likelihood at every atom of the prior; "
            "the prior does not cover the data"
        )
    prob = np.exp(logits - top)
    prob /= prob.sum(axis=1, keepdims=True)
    mean = prob @ atoms
    var = np.maximum(prob @ (atoms * atoms) - mean**2, 0.0)
    return prob, mean, var


def tilted_posterior(
    lik: CountLikelihood, weights: np.ndarray, total: float | None = None
) -> TiltedPosterior:
    r"""Posterior of every item's count under the prior ``weights``, tilted to ``total``.

    .. math::

        P(x_v = u_k \mid c_v) \propto w_k e^{\lambda u_k} P(c_v \mid u_k),
        \qquad \sum_v \mathbb E[x_v \mid c_v] = \text{total},

    the exponential tilting that conditions independent counts on their sum (for large
    ``d``, the Gibbs-conditioning or saddle-point approximation); the sum is increasing
    in :math:`\lambda` (its derivative is the sum of the posterior variances), so
    :math:`\lambda` is found by a bracketing root search.

    Parameters
    ----------
    lik : CountLikelihood
        Likelihood matrix.
    weights : numpy.ndarray
        Prior weights on ``lik.atoms`` (non-negative, summing to 1).
    total : float, optional
        Required sum of the posterior means (``n``); ``None`` leaves the prior untilted.

    Returns
    -------
    TiltedPosterior
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != lik.atoms.shape or w.min() < 0 or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("weights must be non-negative, finite, one per atom, not all zero")
    keep = w > 0
    atoms = lik.atoms[keep]
    with np.errstate(divide="ignore"):
        mat = np.log(lik.matrix[:, keep])
    log_w = np.log(w[keep] / w[keep].sum())
    mult = lik.multiplicity

    def excess(lam: float) -> float:
        # only called below, where total is not None
        return float(mult @ _posterior_at(mat, log_w, atoms, lam)[1]) - total  # type: ignore[operator]

    lam = 0.0
    degenerate = (
        total is not None
        and np.isclose(atoms[0] * lik.n_items, total, rtol=1e-12)
        and atoms[0] == atoms[-1]
    )
    if total is not None and not degenerate:  # one atom at total/d: every tilt is exact
        if not atoms[0] * lik.n_items < total < atoms[-1] * lik.n_items:
            raise ValueError(
                f"no tilt of a prior on [{atoms[0]}, {atoms[-1]}] makes {lik.n_items:.0f} "
                f"posterior means sum to {total}"
            )
        f0 = excess(0.0)
        if f0 != 0.0:
            _, _, var = _posterior_at(mat, log_w, atoms, 0.0)
            slope = max(float(mult @ var), 1e-300)
            step = -f0 / slope
            width = max(atoms[-1] - atoms[0], 1.0)
            step = float(np.clip(step, -50 / width, 50 / width)) or (1e-12 / width)
            lo, hi = (0.0, step) if step > 0 else (step, 0.0)
            for _ in range(200):
                if excess(lo) <= 0 <= excess(hi):
                    break
                if step > 0:
                    lo, hi = hi, hi + 2 * (hi - lo)
                else:
                    lo, hi = lo - 2 * (hi - lo), lo
            else:
                raise RuntimeError("could not bracket the tilt")
            lam = optimize.brentq(excess, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    prob, mean, var = _posterior_at(mat, log_w, atoms, lam)
    return TiltedPosterior(atoms, prob, mean, var, float(lam), lik.item_row, mult)


@dataclass(frozen=True)
class PosteriorTable:
    """Discrete item posteriors in a form fast to draw from.

    Attributes
    ----------
    atoms : numpy.ndarray
        Atoms, shape ``(s,)``.
    flat_cdf : numpy.ndarray
        Row ``j``'s cumulative posterior probabilities plus ``j``, all rows
        concatenated (increasing), shape ``(U * s,)``.
    item_row : numpy.ndarray
        Row of each item, shape ``(d,)``.
    item_var : numpy.ndarray
        Posterior variance of each item's count, shape ``(d,)``.
    """

    atoms: np.ndarray
    flat_cdf: np.ndarray
    item_row: np.ndarray
    item_var: np.ndarray
    _order: np.ndarray = field(init=False, repr=False, compare=False)
    _sorted_row: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Sort the items by row once, for the searches of the queries."""
        # items in row order, so that the searches below are nearly sorted (2x faster)
        order = np.argsort(self.item_row, kind="stable")
        object.__setattr__(self, "_order", order)
        object.__setattr__(self, "_sorted_row", self.item_row[order])

    @classmethod
    def from_posterior(cls, post: TiltedPosterior) -> PosteriorTable:
        """Build the table of a :class:`TiltedPosterior`.

        Parameters
        ----------
        post : TiltedPosterior
            Item posteriors; each row's probabilities are normalised into a CDF.
        """
        cdf = np.cumsum(post.prob, axis=1)
        cdf /= cdf[:, -1:]
        cdf[:, -1] = 1.0
        flat = (cdf + np.arange(cdf.shape[0], dtype=np.float64)[:, None]).ravel()
        return cls(post.atoms, flat, post.item_row, post.var[post.item_row])

    def draw_counts(self, rng: np.random.Generator) -> np.ndarray:
        """Every item's count drawn from its posterior (inverse transform sampling).

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the ``d`` uniforms.

        Returns
        -------
        numpy.ndarray of float
            One atom per item, shape ``(d,)``.
        """
        s = self.atoms.size
        u = rng.random(self.item_row.size)
        rows = self._sorted_row
        pos = np.searchsorted(self.flat_cdf, rows + u[self._order], side="right")
        out = np.empty(self.item_row.size)
        out[self._order] = self.atoms[np.clip(pos - rows * s, 0, s - 1)]
        return out

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """One draw of the frequency vector, conditioned on the total ``n``.

        The counts drawn independently from the item posteriors are moved onto
        ``sum = n`` by :func:`project_to_total` with the posterior variances as weights.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.
        n : int
            Number of users, the total the counts are moved onto.

        Returns
        -------
        numpy.ndarray
            Frequencies summing to 1, shape ``(d,)``.
        """
        x = project_to_total(self.draw_counts(rng).astype(np.float64), self.item_var, n)
        return x / x.sum()


def project_to_total(x: np.ndarray, var: np.ndarray, n: float) -> np.ndarray:
    r"""Move independent draws of the counts onto ``sum = n``, keeping them non-negative.

    Independent Gaussians conditioned on their sum move by
    :math:`-(V_v / \sum_u V_u)(\sum_u x_u - n)`: each takes a share of the excess in
    proportion to its variance, so an item with a point posterior does not move. Here
    the draws must also stay non-negative, so the excess is shared the way Norm-Sub
    shares it, with weights: :math:`x'_v = \max(x_v - V_v \delta, 0)` with
    :math:`\delta` such that :math:`\sum_v x'_v = n`, found by Michelot's active-set
    iteration (items pushed to zero leave the sharing). Dividing the clipped draw by
    its sum instead would rescale every item, the largest by the most. When the items
    with zero variance alone exceed ``n`` (or no item has a variance), the draw is
    clipped and scaled.

    Parameters
    ----------
    x : numpy.ndarray
        Drawn counts.
    var : numpy.ndarray
        Their posterior variances (the weights).
    n : float
        The total.

    Returns
    -------
    numpy.ndarray
        Non-negative counts summing to ``n`` (to rounding).
    """
    fixed = var <= 0
    target = n - float(x[fixed].sum())
    free = ~fixed
    if target > 0 and free.any():
        while True:
            delta = (float(x[free].sum()) - target) / float(var[free].sum())
            y = x - var * delta
            drop = free & (y < 0)
            if not drop.any():
                return np.where(free, y, np.where(fixed, x, 0.0))
            free &= ~drop
            if not free.any():
                break
    out = np.maximum(x, 0.0)
    if out.sum() <= 0:
        raise RuntimeError("a conditioned posterior draw has no users")
    return out * (n / out.sum())


@dataclass(frozen=True)
class DiscretePosteriorDraws:
    """Plug-in posterior draws under a fixed discrete prior (an ``Uncertainty``).

    Row ``i`` draws every item's count from its (tilted) discrete posterior and
    conditions the vector on the total (:meth:`PosteriorTable.draw`), from its own seed
    ``SeedSequence(seed, spawn_key=(i,))``: the same whatever chunk it is asked in. The
    rows are generated on first use and kept while they take at most
    :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`; larger sets of draws are generated
    chunk by chunk at every query (:func:`bayesldp._draws.cached_rows`).

    The prior is treated as known. That is right for ``oracle-bayes``; for an estimated
    prior it ignores the estimate's uncertainty, and an item alone in its region of
    counts (the NPMLE puts an atom at its own estimate) gets an interval of zero width.
    """

    table: PosteriorTable
    n: int
    seed: int
    n_draws: int
    kind: str = "posterior"
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1`` of the frequency vector, shape ``(stop - start, d)``.

        Read-only (see :class:`bayesldp.estimate.Uncertainty`).

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.
        """
        d = self.table.item_row.size
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, d)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.table.item_row.size))
        for i in range(start, stop):
            out[i - start] = self.table.draw(row_generator(self.seed, i), self.n)
        return out


@dataclass(frozen=True)
class BootstrapPosteriorDraws:
    r"""Posterior draws that carry the uncertainty of the estimated prior (an ``Uncertainty``).

    A parametric bootstrap of the empirical-Bayes posterior (Laird and Louis 1987):
    replicate ``b`` draws every item's count from its posterior under :math:`\hat G`,
    simulates support counts from the model, refits the NPMLE :math:`G^*_b` to them
    exactly as :func:`eb_npmle` does, and keeps the item posteriors of the *observed*
    counts under :math:`G^*_b` (tilted to the total). Row ``i`` belongs to replicate
    ``i mod n_boot`` and is drawn from it as in :class:`DiscretePosteriorDraws`. An
    item alone in its region of counts then varies with the refitted atom near it,
    by about its own noise, instead of sitting at a point; items in dense regions
    keep their plug-in posteriors, which refitting barely moves.

    Replicates are fitted on first use (each costs about one ``eb-npmle`` fit) and
    cached; replicate ``b`` and row ``i`` have their own seeds, so a row is the same
    whatever chunk it is asked in. The rows are kept like
    :class:`DiscretePosteriorDraws`' rows (:func:`bayesldp._draws.cached_rows`).
    """

    measurement: Measurement
    counts: np.ndarray
    table: PosteriorTable
    settings: dict
    n_boot: int
    seed: int
    n_draws: int
    kind: str = "parametric-bootstrap posterior"
    _tables: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def replicate(self, b: int) -> PosteriorTable:
        """Return the posterior table of replicate ``b`` (fitted on first use).

        Parameters
        ----------
        b : int
            Replicate number, in ``[0, n_boot)``.
        """
        b = check_int(b, "b", minimum=0, maximum=self.n_boot - 1)
        if b not in self._tables:
            self._tables[b] = self._fit(b)
        return self._tables[b]

    def _fit(self, b: int) -> PosteriorTable:
        m, opts = self.measurement, self.settings
        g = row_generator(self.seed, 0, b)
        x = np.clip(np.round(self.table.draw_counts(g)), 0, m.n).astype(np.int64)
        if opts["likelihood"] == "binomial":
            c = g.binomial(m.n, _support_probability(m, x))
        else:
            c = g.binomial(x, m.p) + g.binomial(m.n - x, m.q)
        star = Measurement.from_support_counts(c, m.n, m.p, m.q, oracle=m.oracle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fit, star_lik = _fit_prior(star, opts)
        keep = fit.weights > 0
        lik = count_likelihood(m, star_lik.atoms[keep], opts["likelihood"], self.counts)
        post = tilted_posterior(lik, fit.weights[keep], total=float(m.n))
        return PosteriorTable.from_posterior(post)

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1`` of the frequency vector, shape ``(stop - start, d)``.

        Row ``i`` is drawn from replicate ``i mod n_boot``, which is fitted on first use.
        Read-only (see :class:`bayesldp.estimate.Uncertainty`).

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.
        """
        d = self.table.item_row.size
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, d)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.table.item_row.size))
        with single_threaded_blas():
            for i in range(start, stop):
                table = self.replicate(i % self.n_boot)
                out[i - start] = table.draw(row_generator(self.seed, 1, i), self.measurement.n)
        return out


def _frequencies(post: TiltedPosterior, n: int) -> np.ndarray:
    f = post.item_means() / n
    return f / f.sum()


def _condition_on_total(
    lik: CountLikelihood, weights: np.ndarray, n: int
) -> tuple[TiltedPosterior, np.ndarray]:
    """Item posteriors conditioned on the total, and the frequencies they give.

    The exponential tilt of the fitted prior (:func:`tilted_posterior`). When no tilt of
    its atoms reaches ``n`` (they all lie on one side of ``n / d``, e.g. every support
    count is 0, or the likelihood confines the items below it), every grid atom is
    first given prior weight :data:`PRIOR_FLOOR`; failing that, the untilted posterior
    means are moved onto the total by the variance-weighted Norm-Sub of
    :func:`project_to_total` (shared equally if they are all 0). Every fallback warns.
    """
    try:
        post = tilted_posterior(lik, weights, total=float(n))
        return post, _frequencies(post, n)
    except (ValueError, RuntimeError) as exc:
        reason = str(exc)
    floored = (1 - PRIOR_FLOOR) * weights + PRIOR_FLOOR / weights.size
    try:
        post = tilted_posterior(lik, floored, total=float(n))
        how = f"every grid atom was given prior weight {PRIOR_FLOOR:g}"
        frequencies = _frequencies(post, n)
    except (ValueError, RuntimeError):
        post = tilted_posterior(lik, weights, total=None)
        means = post.item_means()
        if means.sum() > 0:
            moved = project_to_total(means, post.item_variances(), float(n))
            frequencies = moved / moved.sum()
            how = "the untilted posterior means were moved onto the total (variance-weighted)"
        else:  # every item's posterior is a point at count 0: nothing to share n by
            frequencies = np.full(means.size, 1.0 / means.size)
            how = "every posterior mean is 0, so the total was shared equally"
    warnings.warn(f"eb-npmle: {reason}; {how}", RuntimeWarning, stacklevel=3)
    return post, frequencies


def _fit_prior(m: Measurement, opts: dict) -> tuple[NPMLEFit, CountLikelihood]:
    """Grid, corrected counts, likelihood matrix and NPMLE, as :func:`eb_npmle` does."""
    grid = count_grid(
        m,
        spacing=opts["grid_spacing"],
        growth=opts["grid_growth"],
        window=opts["grid_window"],
        likelihood=opts["likelihood"],
    )
    counts = total_corrected_counts(m, opts["likelihood"]) if opts["correct_total"] else None
    lik = count_likelihood(m, grid, opts["likelihood"], counts)
    fit = npmle(lik, solver=opts["solver"], tol=opts["tol"], max_iter=opts["max_iter"])
    return fit, lik


def eb_npmle(
    m: Measurement,
    *,
    likelihood: str = "binomial",
    grid_spacing: float = 0.25,
    grid_growth: float = 0.02,
    grid_window: float = 8.0,
    correct_total: bool = True,
    solver: str = "sqp",
    max_iter: int | None = None,
    tol: float = 1e-8,
    n_draws: int = 1000,
    uncertainty: str = "bootstrap",
    n_boot: int = 40,
    rng=None,
) -> Estimate:
    r"""Nonparametric empirical Bayes (``eb-npmle``): posterior means under the NPMLE prior.

    .. math::

        x_v \overset{iid}{\sim} \hat G, \quad
        c_v \mid x_v \sim \mathrm{Binomial}(n, q + (p-q) x_v / n), \quad
        f'_v = \mathbb E_{\hat G_\lambda}[x_v \mid c_v] / n,
        \quad \hat G_\lambda(u) \propto \hat G(u) e^{\lambda u},
        \ \textstyle\sum_v f'_v = 1,

    where :math:`\hat G` is the Kiefer-Wolfowitz NPMLE of the counts' distribution on a
    grid (:func:`count_grid`), fitted to the support counts corrected for the known
    total noise (:func:`total_corrected_counts`), and :math:`\lambda` conditions the
    counts on their total by exponential tilting (:func:`tilted_posterior`). See the
    module notes.

    Parameters
    ----------
    m : Measurement
        Oracle output (support counts, ``n``, ``p``, ``q``).
    likelihood : {"binomial", "gaussian"}
        Law of a support count given the true count (:func:`count_likelihood`).
    grid_spacing : float, default 0.25
        Largest grid step, in noise standard deviations (:func:`count_grid`).
    grid_growth : float, default 0.02
        Relative grid step near zero.
    grid_window : float, default 8.0
        Grid covers counts within this many noise standard deviations of the data.
    correct_total : bool, default True
        Take the known total noise out of the support counts first
        (:func:`total_corrected_counts`); ``False`` leaves it all to the tilt.
    solver : {"sqp", "em", "cvxpy"}
        NPMLE solver (:func:`npmle`).
    max_iter : int, optional
        Solver iterations (:func:`npmle`).
    tol : float, default 1e-8
        Relative optimality gap at which the solver stops.
    n_draws : int, default 1000
        Posterior draws behind :meth:`Estimate.interval` (generated on demand).
    uncertainty : {"bootstrap", "plug-in"}
        Where the draws behind :meth:`Estimate.interval` come from. ``plug-in``: each
        item's discrete posterior under :math:`\hat G`, conditioned on the total
        (:class:`DiscretePosteriorDraws`); it treats :math:`\hat G` as known, so an item
        alone in its region of counts (the largest items), on which the NPMLE puts an
        atom at the item's own estimate, gets an interval of zero width. ``bootstrap``
        (default): the same, averaged over ``n_boot`` parametric-bootstrap refits of
        :math:`\hat G` (:class:`BootstrapPosteriorDraws`), fitted when draws are first
        asked for.
    n_boot : int, default 40
        Bootstrap replicates for ``uncertainty="bootstrap"``.
    rng : numpy.random.Generator, int or None
        Seeds the posterior draws (same seed, same draws).

    Raises
    ------
    ValueError
        Bad arguments (the message names the argument).
    RuntimeWarning
        When no tilt of the fitted prior makes the posterior means add up to ``n`` (the
        atoms all above or all below ``n / d``, e.g. every support count 0); the
        fallback used is named (see :func:`_condition_on_total`).

    Returns
    -------
    Estimate
        Method ``"eb-npmle"``: non-negative frequencies summing to 1; ``uncertainty``
        a :class:`BootstrapPosteriorDraws` or :class:`DiscretePosteriorDraws`; ``info``
        holds the grid size, the support, the log-likelihood, the optimality gap, the
        tilt and timings.
    """
    start = time.perf_counter()
    m = check_measurement(m)
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    check_choice(solver, SOLVERS, "solver")
    check_choice(uncertainty, DRAW_KINDS, "uncertainty")
    correct_total = check_bool(correct_total, "correct_total")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    tol = check_float(tol, "tol", minimum=0, strict_minimum=True)
    grid_spacing = check_float(grid_spacing, "grid_spacing", minimum=0, strict_minimum=True)
    grid_growth = check_float(grid_growth, "grid_growth", minimum=0, strict_minimum=True)
    grid_window = check_float(grid_window, "grid_window", minimum=0, strict_minimum=True)
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", minimum=1)
    rng = check_rng(rng)
    opts = {
        "likelihood": likelihood,
        "grid_spacing": grid_spacing,
        "grid_growth": grid_growth,
        "grid_window": grid_window,
        "correct_total": correct_total,
        "solver": solver,
        "max_iter": max_iter,
        "tol": tol,
    }
    with single_threaded_blas():
        fit, lik = _fit_prior(m, opts)
        solved = time.perf_counter()
        post, frequencies = _condition_on_total(lik, fit.weights, m.n)
        table = PosteriorTable.from_posterior(post)
    seed = int(rng.integers(2**63 - 1))
    draws: DiscretePosteriorDraws | BootstrapPosteriorDraws
    if uncertainty == "plug-in":
        draws = DiscretePosteriorDraws(table, m.n, seed, n_draws, "plug-in posterior")
    else:
        corrected = lik.support_counts[lik.item_row]
        draws = BootstrapPosteriorDraws(m, corrected, table, opts, n_boot, seed, n_draws)
    sigma_c = m.sigma * m.n
    info = {
        "likelihood": likelihood,
        "grid_size": int(lik.atoms.size),
        "likelihood_rows": int(lik.matrix.shape[0]),
        "support_size": int(fit.support.size),
        "loglik": fit.loglik,
        "gap": fit.gap,
        "converged": fit.converged,
        "solver": solver,
        "iterations": fit.iterations,
        "correct_total": correct_total,
        "tilt": post.tilt,
        "tilt_shift_sigma": post.tilt * sigma_c,
        "uncertainty": uncertainty,
        "seconds_solver": fit.seconds,
        "seconds_posterior": time.perf_counter() - solved,
        "seconds": time.perf_counter() - start,
        "prior_atoms": lik.atoms[fit.support].tolist(),
        "prior_weights": fit.weights[fit.support].tolist(),
    }
    logger.debug(
        "eb-npmle: K=%d, U=%d, support=%d, gap=%.2e, tilt=%.3g sigma",
        lik.atoms.size, lik.matrix.shape[0], fit.support.size, fit.gap, info["tilt_shift_sigma"],
    )  # fmt: skip
    return Estimate(
        frequencies=frequencies,
        method="eb-npmle",
        measurement=m,
        info=info,
        uncertainty=draws,
    )


def oracle_bayes(
    m: Measurement,
    *,
    true_counts,
    likelihood: str = "binomial",
    n_draws: int = 1000,
    rng=None,
) -> Estimate:
    r"""Compute posterior means with the true count histogram as prior (REFERENCE, NOT A METHOD).

    The prior is the histogram of the *true* counts,
    :math:`G(u) = |\{v : x_v = u\}| / d`, which no one has in practice: this function
    takes the true counts as an argument and exists to measure how close an
    empirical-Bayes method comes to the best any prior-based post-processor could do
    (the "oracle" Bayes rule of the compound decision problem). The likelihood and the
    conditioning on the total (exponential tilting, :func:`tilted_posterior`) are those
    of :func:`eb_npmle`.

    Note that the oracle knows every count exactly: an item whose count no other item
    comes near (the largest items) has a prior atom of its own at its true count, so
    its posterior is that point and its error is zero. No estimator that is not told
    the counts can do that, so the bound is not attainable on such items.

    Parameters
    ----------
    m : Measurement
        The measurement.
    true_counts : array_like of int
        The true counts (length ``d``, summing to ``n``).
    likelihood : {"binomial", "gaussian"}
        As in :func:`eb_npmle`.
    n_draws : int
        Posterior draws (plug-in: the prior is exact).
    rng : numpy.random.Generator, int or None
        Seeds the draws.

    Returns
    -------
    Estimate
        Method ``"oracle-bayes"``, ``info["reference_only"] = True``.
    """
    m = check_measurement(m)
    x = check_counts(true_counts, "true_counts", length=m.domain_size)
    if int(x.sum()) != m.n:
        raise ValueError(f"true_counts must sum to n={m.n}, got {int(x.sum())}")
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    rng = check_rng(rng)
    start = time.perf_counter()
    atoms, mult = np.unique(x, return_counts=True)
    with single_threaded_blas():
        lik = count_likelihood(m, atoms.astype(np.float64), likelihood)
        weights = mult / mult.sum()
        # a single atom is already consistent (d times the atom is n): nothing to tilt
        post = tilted_posterior(lik, weights, total=float(m.n))
        frequencies = _frequencies(post, m.n)
        table = PosteriorTable.from_posterior(post)
    draws = DiscretePosteriorDraws(
        table, m.n, int(rng.integers(2**63 - 1)), n_draws, "oracle posterior (reference only)"
    )
    info = {
        "reference_only": True,
        "note": "takes the true counts: a bound for experiments, not a usable method",
        "likelihood": likelihood,
        "prior_atoms": int(atoms.size),
        "tilt": post.tilt,
        "tilt_shift_sigma": post.tilt * m.sigma * m.n,
        "seconds": time.perf_counter() - start,
    }
    return Estimate(
        frequencies=frequencies,
        method="oracle-bayes",
        measurement=m,
        info=info,
        uncertainty=draws,
    )
