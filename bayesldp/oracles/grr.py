r"""Generalized randomized response (direct encoding): each user reports one item.

A user reports the true value with probability :math:`p = e^\varepsilon /
(e^\varepsilon + d - 1)` and each other value with probability
:math:`q = 1 / (e^\varepsilon + d - 1)`, so every report supports exactly one item and
the support counts sum to ``n`` (a multinomial likelihood).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp._validation import check_rng
from bayesldp.measurement import Measurement
from bayesldp.oracles._base import register_oracle
from bayesldp.oracles._blocks import bincount, blocks, rows_per_block, units_in_range
from bayesldp.oracles._exact_random import bernoulli
from bayesldp.oracles._integer_reports import OneIntegerReports
from bayesldp.oracles._probabilities import exp_ratios

__all__ = ["GRR"]


def mixture_counts(
    x: np.ndarray, n: int, p: float, q: float, rng: np.random.Generator
) -> np.ndarray:
    r"""GRR's support counts for user counts ``x``, drawn exactly in the mixture form.

    A user reports its own value with probability :math:`p - q` and otherwise a value
    uniform over all ``d`` (the same law, since :math:`p = (p - q) + q` and
    :math:`q = 0 + q`), so the counts are :math:`\mathrm{Bin}(x_v, p-q)` plus one
    multinomial of the rest over ``d`` cells: O(d) work for any ``n``.

    Parameters
    ----------
    x : numpy.ndarray of int
        Users holding each item, summing to ``n``.
    n : int
        All users.
    p, q : float
        GRR's probabilities.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int
        Support count of each item (summing to ``n``).
    """
    own = rng.binomial(x, p - q)
    return own + rng.multinomial(n - int(own.sum()), np.full(x.size, 1.0 / x.size))


@register_oracle
class GRR(OneIntegerReports):
    r"""Generalized randomized response (direct encoding).

    A user reports the true value with probability :math:`p = e^\varepsilon /
    (e^\varepsilon + d - 1)` and each other value with probability
    :math:`q = 1 / (e^\varepsilon + d - 1)`. Reports: one unsigned integer per user
    (the smallest dtype holding ``d - 1``).

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items.
    """

    name = "GRR"
    likelihood_kind = "multinomial"
    counts_sum_to_n = True
    bootstrap_simulation = "exact (GRR mixture form)"

    @classmethod
    def _count_sum_variances(
        cls,
        m: Measurement,
        a: np.ndarray,
        masks: np.ndarray,
        frequencies: np.ndarray,
        x_set: np.ndarray,
    ) -> np.ndarray:
        r"""One item per report: :math:`x_S \pi_1(1-\pi_1) + (n - x_S) \pi_0(1-\pi_0)`.

        A user supports the set with probability :math:`\pi_1 = p + (a-1)q` if it holds
        an item of the set, else :math:`\pi_0 = a q`.
        """
        n, p, q = m.n, m.p, m.q
        pin, pout = p + (a - 1) * q, a * q
        return x_set * pin * (1 - pin) + (n - x_set) * pout * (1 - pout)

    @classmethod
    def bootstrap_counts(cls, m: Measurement, x: np.ndarray, rng: Any) -> np.ndarray:
        """One replicate of GRR's support counts for user counts ``x``, exactly.

        Drawn in the mixture form (:func:`mixture_counts`).

        Parameters
        ----------
        m : Measurement
            Gives ``n``, ``p`` and ``q``.
        x : numpy.ndarray of int
            True user counts of the ``d`` items, summing to ``n`` (not checked).
        rng : numpy.random.Generator or int
            Source of randomness, or a seed.

        Returns
        -------
        numpy.ndarray of int
            Support count of each item.
        """
        return mixture_counts(x, m.n, m.p, m.q, check_rng(rng))

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + d - 1)` of the true value."""
        return exp_ratios(self.epsilon, 1.0, self.domain_size - 1)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^\varepsilon + d - 1)` of reporting a given other value."""
        return exp_ratios(self.epsilon, 1.0, self.domain_size - 1)[1]

    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        d = self.domain_size
        if d == 1:
            out[:] = 0
            return
        keep = bernoulli(self.p, v.size, rng)
        other = rng.integers(0, d - 1, size=v.size, dtype=np.int64)
        other += other >= v  # uniform over the d - 1 other values
        np.copyto(out, np.where(keep, v, other), casting="unsafe")

    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        return r.reshape(-1)[:, None] == items[None, :]

    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        return bincount(r, self.domain_size)

    def _simulate_exact(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Exact: keepers stay; each liar from v lands uniformly on the d - 1 others.
        # Liars are taken a block at a time (their origins found by bisection).
        self._check_simulation_work(int(x.sum()))
        d = self.domain_size
        kept = rng.binomial(x, self.p)
        if d == 1:
            return kept
        counts = kept
        liars = x - kept
        ends = np.cumsum(liars)
        for sl in blocks(int(ends[-1]), rows_per_block(1)):
            origin = units_in_range(liars, ends, sl.start, sl.stop)
            dest = rng.integers(0, d - 1, size=origin.size, dtype=np.int64)
            dest += dest >= origin
            if d <= 4 * origin.size:
                counts += np.bincount(dest, minlength=d)
            else:  # a length-d bincount per block would cost more than the block
                np.add.at(counts, dest, 1)
        return counts

    def _simulate_without_users(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return mixture_counts(x, int(x.sum()), self.p, self.q, rng)
