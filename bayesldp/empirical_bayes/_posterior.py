r"""Item posteriors under a discrete prior, conditioned on the total by exponential tilting.

The prior is multiplied by :math:`e^{\lambda u}` with :math:`\lambda` solved so that
the posterior means add up to ``n``: the saddle-point / Gibbs-conditioning
approximation to conditioning independent counts on their sum, accurate for large
``d``. :class:`PosteriorTable` holds the item posteriors in a form fast to draw from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from bayesldp._total import condition_on_total
from bayesldp.empirical_bayes._likelihood import CountLikelihood


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


def posterior_at(
    log_mat: np.ndarray, log_w: np.ndarray, atoms: np.ndarray, lam: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Posterior probabilities, means and variances of every row at tilt ``lam``.

    Parameters
    ----------
    log_mat : numpy.ndarray
        Log-likelihood of each row at each atom, shape ``(U, s)``.
    log_w : numpy.ndarray
        Log prior weight of each atom, shape ``(s,)``.
    atoms : numpy.ndarray
        The atoms, shape ``(s,)``.
    lam : float
        The tilt :math:`\lambda`.

    Returns
    -------
    tuple of numpy.ndarray
        ``prob`` ``(U, s)``, ``mean`` ``(U,)`` and ``var`` ``(U,)``.

    Raises
    ------
    RuntimeError
        Some row has zero likelihood at every atom of the prior.
    """
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
        The item posteriors on the atoms that carry weight.

    Raises
    ------
    ValueError
        Bad weights, or no tilt of the prior's atoms can reach ``total`` (they all lie
        on one side of ``total / d``).
    RuntimeError
        The tilt could not be bracketed, or the prior does not cover some row.
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
    lam = 0.0
    degenerate = (
        total is not None
        and np.isclose(atoms[0] * lik.n_items, total, rtol=1e-12)
        and atoms[0] == atoms[-1]
    )
    if total is not None and not degenerate:  # one atom at total/d: every tilt is exact
        target = float(total)

        def excess(lam: float) -> float:
            return float(mult @ posterior_at(mat, log_w, atoms, lam)[1]) - target

        if not atoms[0] * lik.n_items < total < atoms[-1] * lik.n_items:
            raise ValueError(
                f"no tilt of a prior on [{atoms[0]}, {atoms[-1]}] makes {lik.n_items:.0f} "
                f"posterior means sum to {total}"
            )
        f0 = excess(0.0)
        if f0 != 0.0:
            _, _, var = posterior_at(mat, log_w, atoms, 0.0)
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
    prob, mean, var = posterior_at(mat, log_w, atoms, lam)
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
        """Sort the items by row once, for the searches of the draws."""
        # items in row order, so that the searches below are nearly sorted (faster)
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

        Returns
        -------
        PosteriorTable
            The table.
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
        ``sum = n`` in proportion to their posterior variances, keeping them
        non-negative (:func:`bayesldp._total.condition_on_total`).

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
        x = condition_on_total(self.draw_counts(rng), self.item_var, n)
        return x / x.sum()
