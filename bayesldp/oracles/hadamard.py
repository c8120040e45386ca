r"""Hadamard response (HR): each user reports one column of a Hadamard matrix.

Value ``v`` owns the ``K/2`` columns where row ``v + 1`` of the Sylvester Hadamard
matrix of order ``K`` (the smallest power of two above ``d``) is ``+1``; a user reports
one column, of its own value's with probability :math:`e^\varepsilon/(e^\varepsilon+1)`.
Aggregation is one fast Walsh-Hadamard transform (:func:`fwht`) of the reports'
histogram.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp.measurement import Measurement
from bayesldp.oracles._base import register_oracle
from bayesldp.oracles._blocks import bincount, blocks, rows_per_block
from bayesldp.oracles._exact_random import bernoulli
from bayesldp.oracles._integer_reports import OneIntegerReports
from bayesldp.oracles._probabilities import exp_ratios

__all__ = ["HR"]


def fwht(x: np.ndarray) -> np.ndarray:
    """Fast Walsh-Hadamard transform (Sylvester order) of a length-``2^m`` vector.

    Parameters
    ----------
    x : array_like
        A vector whose length is a power of two.

    Returns
    -------
    numpy.ndarray of float64
        ``H @ x`` for the Sylvester Hadamard matrix ``H`` of that order.

    Raises
    ------
    ValueError
        The length is not a power of two.
    """
    a = np.array(x, dtype=np.float64)
    size = a.size
    if size & (size - 1):
        raise ValueError(f"length must be a power of two, got {size}")
    h = 1
    while h < size:
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], axis=1)
        h *= 2
    return a.reshape(size)


@register_oracle
class HR(OneIntegerReports):
    r"""Hadamard response (Acharya, Sun and Zhang 2019).

    With ``K`` the smallest power of two above ``d``, value ``v`` owns the columns
    :math:`C_v = \{j : H_{v+1, j} = +1\}` (``K/2`` of them) of the Sylvester
    Hadamard matrix. A user reports one column: uniform over :math:`C_v` with
    probability :math:`e^\varepsilon/(e^\varepsilon+1)`, else uniform over the rest.
    A report ``j`` supports every ``u`` with ``j`` in :math:`C_u`, so
    :math:`p = e^\varepsilon/(e^\varepsilon+1)` and :math:`q = 1/2`. Reports: one
    unsigned integer in ``[0, K)`` per user (the smallest dtype holding ``K - 1``);
    aggregation is one Walsh-Hadamard transform.
    """

    name = "HR"
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int) -> None:
        super().__init__(epsilon, domain_size)
        self.K = 1 << int(self.domain_size).bit_length()  # smallest power of 2 > d

    @property
    def _report_bound(self) -> int:
        return self.K

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + 1)` of a column of the own value."""
        return exp_ratios(self.epsilon, 1.0, 1.0)[0]

    @property
    def q(self) -> float:
        """Probability 1/2 that a report supports a given other item."""
        return 0.5

    @classmethod
    def _count_sum_variances(
        cls,
        m: Measurement,
        a: np.ndarray,
        masks: np.ndarray,
        frequencies: np.ndarray,
        x_set: np.ndarray,
    ) -> np.ndarray:
        r""":math:`\tfrac14 \sum_u x_u (a + \beta M_u - \beta^2 [u \in S])`, :math:`\beta = 2p - 1`.

        With :math:`x_u = n f_u`; :math:`M_u` counts the ordered pairs ``(r, s)`` of rows
        of ``S`` with :math:`r \oplus s = u + 1` (two Walsh-Hadamard transforms), since
        the columns of two items are correlated through the row their XOR names.
        """
        d, n, p = m.domain_size, m.n, m.p
        size = 1 << d.bit_length()
        beta = 2 * p - 1
        out = np.empty(masks.shape[0])
        for i, mask in enumerate(masks):
            rows = np.zeros(size)
            rows[1 : d + 1] = mask
            pairs = np.rint(fwht(fwht(rows) ** 2) / size)[1 : d + 1]
            cross = float(np.sum(n * frequencies * pairs))
            out[i] = 0.25 * (n * a[i] + beta * cross - beta * beta * x_set[i])
        return out

    @classmethod
    def random_set_count_variance(cls, m: Measurement, size: int, frequencies: np.ndarray) -> float:
        r"""Return the expected variance of a random ``size``-item set's summed counts, exactly.

        The formula of :meth:`count_sum_variances` is linear in the set's indicator
        (through :math:`x_S`) and in its pairs (through :math:`M_u`): a random set of
        ``a`` of the ``d`` items holds each item with probability :math:`a/d` and each
        ordered pair of distinct items with probability :math:`a(a-1)/(d(d-1))`, so
        :math:`M_u` averages to that times :math:`P_u`, the ordered pairs of rows in
        ``1..d`` whose XOR is ``u + 1``.

        Parameters
        ----------
        m : Measurement
            Gives ``n``, ``p`` and ``d``.
        size : int
            Items in the set, in ``[1, d]`` (not checked).
        frequencies : numpy.ndarray
            Frequency of each item, summing to 1.

        Returns
        -------
        float
            The expected variance of :math:`C_S`.
        """
        d, n, p = m.domain_size, m.n, m.p
        order = 1 << d.bit_length()
        beta = 2 * p - 1
        rows = np.zeros(order)
        rows[1 : d + 1] = 1.0
        pairs = np.rint(fwht(fwht(rows) ** 2) / order)[1 : d + 1]
        share = size * (size - 1) / (d * (d - 1)) if d > 1 else 0.0
        cross = float(np.sum(n * np.asarray(frequencies) * pairs)) * share
        return 0.25 * (n * size + beta * cross - beta * beta * n * size / d)

    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        row = v + 1
        j = rng.integers(0, self.K, size=v.size, dtype=np.int64)
        in_set = (np.bitwise_count(row & j) & 1) == 0
        want = bernoulli(self.p, v.size, rng)
        flip = row & -row  # lowest set bit: XOR with it swaps C_v and its complement
        np.copyto(out, np.where(in_set == want, j, j ^ flip), casting="unsafe")

    def support_counts(self, reports: Any) -> np.ndarray:
        """Count, for every item, how many reports support it.

        One Walsh-Hadamard transform of the reports' histogram; see
        :meth:`FrequencyOracle.support_counts`.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in this oracle's wire format (checked).

        Returns
        -------
        numpy.ndarray of int64
            Support count of each of the ``d`` items.
        """
        r = self.check_reports(reports)
        hist = np.zeros(self.K, dtype=np.int64)
        for sl in blocks(r.shape[0], rows_per_block(1)):
            hist += bincount(r[sl], self.K)
        signed = fwht(hist)[1 : self.domain_size + 1]
        return np.rint((r.shape[0] + signed) / 2).astype(np.int64)

    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        rows = (items + 1)[None, :]
        return (np.bitwise_count(rows & r.reshape(-1).astype(np.int64)[:, None]) & 1) == 0

    def _block_counts(self, r: np.ndarray) -> np.ndarray:  # pragma: no cover - not used
        raise NotImplementedError
