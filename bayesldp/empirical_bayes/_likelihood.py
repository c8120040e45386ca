r"""The likelihood matrix of the support counts on the grid, and its NPMLE optimality terms.

Items with the same support count share a likelihood row, so the matrix has one row
per distinct support count (far fewer than items on large domains). The marginal
log-likelihood of prior weights :math:`w` on the atoms :math:`u_k` is

.. math::

    \ell(w) = \sum_v \log \sum_k L_{vk} w_k, \qquad L_{vk} = P(c_v \mid x_v = u_k),

its gradient is :math:`S_k(w) = \sum_v L_{vk} / \sum_j L_{vj} w_j`, and for any
:math:`w` on the simplex :math:`\ell(\hat w) - \ell(w) \le \max_k S_k(w) - d`
(:meth:`CountLikelihood.kkt_gap` reports it relative to ``d``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from bayesldp._validation import check_choice
from bayesldp.empirical_bayes._grid import (
    LIKELIHOODS,
    conditional_count_variance,
    count_noise_sd,
    support_probability,
)
from bayesldp.measurement import Measurement


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
        Noise standard deviation of a count estimate at each atom.
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

        Returns
        -------
        float
            With every constant of the likelihood.
        """
        with np.errstate(divide="ignore"):
            return float(self.multiplicity @ (np.log(self.matrix @ weights) + self.log_scale))

    def gradient(self, weights: np.ndarray) -> np.ndarray:
        r""":math:`S_k(w) = \sum_v L_{vk} / \sum_j L_{vj} w_j` for every atom ``k``.

        The gradient of the marginal log-likelihood; :math:`\sum_k w_k S_k(w) = d`.

        Parameters
        ----------
        weights : numpy.ndarray
            Prior weight of each atom, shape ``(K,)``; only positive weights enter.

        Returns
        -------
        numpy.ndarray
            Shape ``(K,)``.
        """
        w = np.asarray(weights, dtype=np.float64)
        support = np.flatnonzero(w > 0)
        lw = self.matrix[:, support] @ w[support]
        return self.matrix.T @ (self.multiplicity / lw)

    def kkt_gap(self, weights: np.ndarray) -> float:
        r"""Relative optimality gap of ``weights``: :math:`\max_k S_k(w) / d - 1`.

        For any :math:`w` on the simplex, concavity gives
        :math:`\ell(w^*) - \ell(w) \le \nabla\ell(w) \cdot (w^* - w)
        = \sum_k w^*_k S_k(w) - d \le \max_k S_k(w) - d`, so the gap bounds the
        distance to the optimum in log-likelihood per item; it is zero exactly at the
        NPMLE (the KKT condition :math:`S_k \le d`, with equality where :math:`w_k > 0`).

        Parameters
        ----------
        weights : numpy.ndarray
            Prior weight of each atom, shape ``(K,)``, on the simplex.

        Returns
        -------
        float
            The gap, relative to ``d``.
        """
        return float(self.gradient(weights).max() / self.n_items - 1)


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
    :math:`\sigma\sqrt d`: left in the data, it is the tilt that would have to move
    the posterior means that far, and it moves them where the posterior is widest (the
    small, noisy items), not where the noise is. The variances are the oracle's at the
    plug-in counts :math:`\mathrm{clip}(n\tilde f_v, 0, n)`. For GRR every user
    supports exactly one item, :math:`E = 0` and nothing changes. The corrected counts
    are clipped into ``[0, n]`` (they move by a small fraction of a standard deviation).

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
    m: Measurement,
    atoms: np.ndarray,
    likelihood: str = "binomial",
    counts: np.ndarray | None = None,
) -> CountLikelihood:
    r"""Likelihood of every distinct support count at every atom (true count).

    Parameters
    ----------
    m : Measurement
        The measurement.
    atoms : array_like
        True counts in ``[0, n]``, e.g. :func:`count_grid`.
    likelihood : {"binomial", "gaussian"}
        ``binomial`` (default): :math:`c \sim \mathrm{Binomial}(n, q + (p-q)x/n)`, the
        exact marginal law of a pure oracle's support count when the users' values are
        i.i.d. draws from the frequencies (the likelihood ``mle`` and ``ibu`` use).
        ``gaussian``: a normal law with the mean :math:`nq + (p-q)x` and variance
        :math:`x p(1-p) + (n-x) q(1-q)` of the support count *given* the count ``x``
        (the law of ``Binomial(x, p) + Binomial(n - x, q)``, which is what an oracle's
        ``simulate`` draws); the binomial's variance exceeds it by
        :math:`(p-q)^2 x (1 - x/n)`, which only the largest items notice.
    counts : array_like, optional
        Support counts to use instead of ``m.support_counts`` (e.g. the counts with the
        known total noise taken out, as :func:`eb_npmle` uses; may be non-integer, in
        ``[0, n]``).

    Returns
    -------
    CountLikelihood
        The matrix, one row per distinct support count, with its atoms.

    Raises
    ------
    ValueError
        Atoms or counts outside ``[0, n]``, or a support count impossible at every atom.
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
        pi = support_probability(m, x)
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
        var = conditional_count_variance(m, x)[None, :]
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
