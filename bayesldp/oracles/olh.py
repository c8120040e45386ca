r"""Optimized local hashing (OLH): each user reports a random hash and a perturbed bucket.

A user draws a hash from a universal family, hashes the value into ``g`` buckets and
perturbs the bucket with randomized response over the buckets. A report supports every
item that hashes to the reported bucket, so the support counts are dependent and
aggregation costs ``O(n d)`` hash evaluations, done in blocks.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from bayesldp._validation import check_int
from bayesldp.oracles._arrow import arrow_integers
from bayesldp.oracles._base import FrequencyOracle, register_oracle
from bayesldp.oracles._exact_random import bernoulli
from bayesldp.oracles._probabilities import exp_ratios

__all__ = ["OLH"]

#: The Mersenne prime of OLH's hash family.
_MERSENNE = (1 << 31) - 1


@register_oracle
class OLH(FrequencyOracle):
    r"""Optimized local hashing.

    Each user draws a hash :math:`h(v) = ((a v + b) \bmod P) \bmod g` from a
    universal family (``a`` uniform in ``[1, P)``, ``b`` in ``[0, P)``,
    :math:`P = 2^{31} - 1`, :math:`g = \operatorname{round}(e^\varepsilon + 1)`),
    hashes the value, and perturbs the hash with GRR over ``g`` buckets. Reports:
    ``uint32`` of shape ``(n, 3)``, the columns ``a``, ``b`` and the bucket ``y``.

    :math:`p = e^\varepsilon / (e^\varepsilon + g - 1)`, and ``q`` is the exact
    support probability of another item under this family,
    :math:`q = c p + (1 - c)(1 - p)/(g - 1)` with ``c`` the probability that two items
    collide (:attr:`collision_probability`, :math:`1/g - O(1/P)`; the papers' ideal
    hash has :math:`c = 1/g` and so :math:`q = 1/g`).

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items, at most ``P`` (the family separates only ``P`` items).
    g : int, optional
        Number of buckets, ``2 <= g <= P``. By default
        ``round(e^epsilon + 1)``, capped at :attr:`max_default_g` (from epsilon 11.1
        on): beyond that OLH's variance, about ``1/g``, is far below GRR's anyway.

    Notes
    -----
    Aggregation costs ``O(n d)`` hash evaluations, done in blocks.
    """

    name = "OLH"
    parameter_names = ("g",)
    arrow_columns = ("a", "b", "y")
    exact_counts_simulation = False
    #: the prime of the hash family (a class attribute so that tests can enumerate it)
    prime: ClassVar[int] = _MERSENNE
    #: cap on the default number of buckets
    max_default_g: ClassVar[int] = 1 << 16

    def __init__(self, epsilon: float, domain_size: int, g: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        if self.domain_size > self.prime:
            raise ValueError(
                f"domain_size must be at most {self.prime} for OLH (the hash family "
                f"separates only that many items), got {self.domain_size}"
            )
        if g is None:
            if self.epsilon >= math.log(self.max_default_g):
                g = self.max_default_g
            else:
                g = min(self.max_default_g, max(2, round(math.exp(self.epsilon) + 1)))
        self.g = check_int(g, "g", minimum=2, maximum=self.prime)

    @property
    def p(self) -> float:
        r"""Probability :math:`e^\varepsilon / (e^\varepsilon + g - 1)` of the true bucket."""
        return exp_ratios(self.epsilon, 1.0, self.g - 1)[0]

    @property
    def collision_probability(self) -> float:
        r"""Probability that two distinct items share a bucket under a random hash.

        For ``u != v`` the map ``(a, b) -> (a u + b, a v + b) mod P`` is a bijection
        onto the pairs of distinct residues, so ``c`` counts the pairs ``r != s`` with
        ``r = s (mod g)``: with ``n_j`` residues in class ``j``,
        :math:`c = \sum_j n_j (n_j - 1) / (P (P - 1))`.
        """
        per, extra = divmod(self.prime, self.g)
        pairs = extra * (per + 1) * per + (self.g - extra) * per * (per - 1)
        return float(Fraction(pairs, self.prime * (self.prime - 1)))

    @property
    def q(self) -> float:
        r"""Probability :math:`c p + (1 - c)(1 - p)/(g - 1)` of supporting another item."""
        other = exp_ratios(self.epsilon, 1.0, self.g - 1)[1]  # (1 - p) / (g - 1)
        c = self.collision_probability
        return c * self.p + (1.0 - c) * other

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, ``uint32``."""
        return np.dtype(np.uint32)

    @property
    def report_bits(self) -> int:
        r"""Bits of one report: the bucket, ``ceil(log2 g)``, and the hash seed ``(a, b)``.

        The seed is two residues modulo :math:`P = 2^{31} - 1`, 31 bits each.
        """
        return (self.g - 1).bit_length() + 2 * (self.prime - 1).bit_length()

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one report, ``(3,)``: the columns ``a``, ``b`` and ``y``."""
        return (3,)

    @property
    def _count_cells(self) -> int:
        return self.domain_size

    def hash(self, a: Any, b: Any, values: Any) -> np.ndarray:
        """Bucket of ``values`` under the hashes ``(a, b)`` (broadcasting).

        Parameters
        ----------
        a, b : array_like of int
            Hash coefficients, ``a`` in ``[1, P)`` and ``b`` in ``[0, P)`` (not checked).
        values : array_like of int
            Items to hash; broadcast against ``a`` and ``b``.

        Returns
        -------
        numpy.ndarray of int64
            ``((a v + b) mod P) mod g``, in ``[0, g)``.
        """
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        return ((a * np.asarray(values, dtype=np.int64) + b) % self.prime) % self.g

    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        a = rng.integers(1, self.prime, size=v.size, dtype=np.int64)
        b = rng.integers(0, self.prime, size=v.size, dtype=np.int64)
        h = self.hash(a, b, v)
        keep = bernoulli(self.p, v.size, rng)
        other = rng.integers(0, self.g - 1, size=v.size, dtype=np.int64)
        other += other >= h
        out[:, 0] = a
        out[:, 1] = b
        out[:, 2] = np.where(keep, h, other)

    def _check_values(self, r: np.ndarray, name: str) -> None:
        for col, (label, low, high) in enumerate(
            (("a", 1, self.prime), ("b", 0, self.prime), ("y", 0, self.g))
        ):
            lo, hi = r[:, col].min(), r[:, col].max()
            if lo < low or hi >= high:
                raise ValueError(
                    f"{name}: OLH column {col} ({label}) must lie in [{low}, {high}); "
                    f"got range [{lo}, {hi}]"
                )

    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        r = r.astype(np.int64)
        return self.hash(r[:, :1], r[:, 1:2], items[None, :]) == r[:, 2:3]

    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        r = r.astype(np.int64)
        h = np.multiply.outer(r[:, 0], np.arange(self.domain_size, dtype=np.int64))
        h += r[:, 1:2]
        np.remainder(h, self.prime, out=h)
        np.remainder(h, self.g, out=h)
        return np.count_nonzero(h == r[:, 2:3], axis=0).astype(np.int64)

    def _arrow_arrays(self, r: np.ndarray, pa: Any) -> list:
        return [pa.array(np.ascontiguousarray(r[:, i])) for i in range(3)]

    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa: Any) -> np.ndarray:
        bounds = ((1, self.prime), (0, self.prime), (0, self.g))
        cols = [
            arrow_integers(arr, name, low, high, np.uint32)
            for arr, name, (low, high) in zip(arrays, names, bounds, strict=True)
        ]
        return np.stack(cols, axis=1)
