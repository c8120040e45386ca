"""Pure LDP frequency oracles: GRR, OUE, SUE (basic RAPPOR), OLH, SS and HR.

Every oracle offers the user side (:meth:`~FrequencyOracle.privatize`), the aggregator
side (:meth:`~FrequencyOracle.aggregate`) and a whole simulated round from true counts
(:meth:`~FrequencyOracle.simulate`). All three are vectorised; none loops over users in
Python. Randomness always comes from a :class:`numpy.random.Generator` passed in.

All six are *pure* oracles (Wang et al., USENIX Security 2017): a user holding ``v``
supports ``v`` with probability ``p`` and supports any other item with probability
``q``, so :class:`~bayesldp.Measurement` and every post-processing method apply.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator

import numpy as np

from bayesldp._validation import check_counts, check_domain_size, check_epsilon, check_values
from bayesldp.measurement import Measurement

__all__ = ["GRR", "HR", "OLH", "ORACLES", "OUE", "SS", "SUE", "FrequencyOracle", "make_oracle"]

#: Users processed per vectorised chunk in per-user paths (bounds memory).
DEFAULT_CHUNK = 1 << 16
_MERSENNE = (1 << 31) - 1


def _require_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )
    return rng


def _chunks(total: int, size: int) -> Iterator[slice]:
    for start in range(0, total, size):
        yield slice(start, min(start + size, total))


class FrequencyOracle(ABC):
    """Common interface of the pure frequency oracles.

    Parameters
    ----------
    epsilon : float
        Privacy budget, finite and > 0.
    domain_size : int
        Number of items ``d``; values are indices ``0 .. d-1``.
    """

    name: str = "FO"
    #: whether :meth:`simulate` is exact by default without per-user work
    exact_counts_simulation: bool = True

    def __init__(self, epsilon: float, domain_size: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.domain_size = check_domain_size(domain_size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, domain_size={self.domain_size})"

    @property
    @abstractmethod
    def p(self) -> float:
        """Probability that a user's report supports the user's own value."""

    @property
    @abstractmethod
    def q(self) -> float:
        """Probability that a user's report supports a given other value."""

    def variance(self, frequencies) -> np.ndarray:
        """Exact variance of each unbiased estimate for ``n = 1``; divide by ``n``.

        Parameters
        ----------
        frequencies : array_like
            True frequencies :math:`f_v`.

        Returns
        -------
        numpy.ndarray
            :math:`(q(1-q) + f_v (p-q)(1-p-q)) / (p-q)^2`.
        """
        f = np.asarray(frequencies, dtype=float)
        p, q = self.p, self.q
        return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (p - q) ** 2

    def approx_variance(self, n: int = 1) -> float:
        """The papers' uniform approximation :math:`q(1-q) / (n (p-q)^2)`."""
        return self.q * (1 - self.q) / (n * (self.p - self.q) ** 2)

    def measurement(self, support_counts, n: int) -> Measurement:
        """Wrap support counts from ``n`` users of this oracle as a Measurement."""
        return Measurement.from_support_counts(
            support_counts, n, self.p, self.q, oracle=self.name, epsilon=self.epsilon
        )

    @abstractmethod
    def privatize(self, values, rng: np.random.Generator):
        """Perturb each user's value (the user side), vectorised over users.

        Parameters
        ----------
        values : array_like of int
            One value in ``[0, d)`` per user.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        numpy.ndarray
            The reports; their layout is oracle-specific (see the class docstring).
        """

    @abstractmethod
    def support_counts(self, reports) -> np.ndarray:
        """Count, for every item, how many reports support it."""

    def aggregate(self, reports) -> Measurement:
        """Aggregate user reports into a :class:`~bayesldp.Measurement`."""
        reports = np.asarray(reports)
        if reports.shape[0] == 0:
            raise ValueError("reports must hold at least one user's report")
        return self.measurement(self.support_counts(reports), int(reports.shape[0]))

    def simulate(self, true_counts, rng: np.random.Generator, *, exact: bool = True) -> Measurement:
        """Run a whole round: users with these true counts report, the server aggregates.

        Parameters
        ----------
        true_counts : array_like of int
            Number of users holding each item (length ``d``).
        rng : numpy.random.Generator
            Source of randomness.
        exact : bool, default True
            For GRR, OUE and SUE the support counts are drawn exactly from their joint
            distribution without per-user work, and this flag has no effect. For OLH,
            SS and HR, ``exact=True`` privatizes every user (vectorised in chunks);
            ``exact=False`` draws each count as
            ``Binomial(x_v, p) + Binomial(n - x_v, q)``: the exact marginal of each
            count, ignoring the (weak) dependence between items.

        Returns
        -------
        Measurement
        """
        rng = _require_generator(rng)
        x = check_counts(true_counts, "true_counts", length=self.domain_size)
        n = int(x.sum())
        if n == 0:
            raise ValueError("true_counts must sum to at least one user")
        if self.exact_counts_simulation or not exact:
            counts = self._simulate_counts(x, rng)
        else:
            counts = np.zeros(self.domain_size, dtype=np.int64)
            values = np.repeat(np.arange(self.domain_size), x)
            rng.shuffle(values)
            for sl in _chunks(n, self._chunk_size()):
                counts += self.support_counts(self.privatize(values[sl], rng))
        return self.measurement(counts, n)

    def _chunk_size(self) -> int:
        return DEFAULT_CHUNK

    def _simulate_counts(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Independent-bit draw ``Binomial(x_v, p) + Binomial(n - x_v, q)``."""
        n = int(x.sum())
        return rng.binomial(x, self.p) + rng.binomial(n - x, self.q)


class GRR(FrequencyOracle):
    """Generalized randomized response (direct encoding).

    A user reports the true value with probability :math:`p = e^\\varepsilon /
    (e^\\varepsilon + d - 1)` and each other value with probability
    :math:`q = 1 / (e^\\varepsilon + d - 1)`. Reports are one integer per user.
    """

    name = "GRR"

    @property
    def p(self) -> float:
        e = math.exp(self.epsilon)
        return e / (e + self.domain_size - 1)

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + self.domain_size - 1)

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        rng = _require_generator(rng)
        v = check_values(values, self.domain_size)
        d = self.domain_size
        if d == 1:
            return v.copy()
        keep = rng.random(v.size) < self.p
        other = rng.integers(0, d - 1, size=v.size)
        other += other >= v  # uniform over the d - 1 other values
        return np.where(keep, v, other)

    def support_counts(self, reports) -> np.ndarray:
        r = check_values(np.asarray(reports).ravel(), self.domain_size, "reports")
        return np.bincount(r, minlength=self.domain_size).astype(np.int64)

    def _simulate_counts(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Exact: keepers stay; each liar from v lands uniformly on the d - 1 others.
        d = self.domain_size
        kept = rng.binomial(x, self.p)
        if d == 1:
            return kept
        liars = x - kept
        origin = np.repeat(np.arange(d), liars)
        dest = rng.integers(0, d - 1, size=origin.size)
        dest += dest >= origin
        return kept + np.bincount(dest, minlength=d)


class _UnaryEncoding(FrequencyOracle):
    """Unary encoding: each user reports a length-``d`` bit vector.

    Bit ``v`` is 1 with probability ``p`` for the user's own value and ``q`` for every
    other value, independently. Reports are a boolean array of shape ``(n, d)``.
    """

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        rng = _require_generator(rng)
        v = check_values(values, self.domain_size)
        bits = rng.random((v.size, self.domain_size)) < self.q
        bits[np.arange(v.size), v] = rng.random(v.size) < self.p
        return bits

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.domain_size:
            raise ValueError(f"reports must have shape (n, {self.domain_size}), got {r.shape}")
        return r.sum(axis=0, dtype=np.int64)


class OUE(_UnaryEncoding):
    """Optimized unary encoding: :math:`p = 1/2`, :math:`q = 1/(e^\\varepsilon + 1)`."""

    name = "OUE"

    @property
    def p(self) -> float:
        return 0.5

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + 1)


class SUE(_UnaryEncoding):
    """Symmetric unary encoding (basic RAPPOR).

    :math:`p = e^{\\varepsilon/2} / (e^{\\varepsilon/2} + 1)`, :math:`q = 1 - p`.
    """

    name = "SUE"

    @property
    def p(self) -> float:
        e = math.exp(self.epsilon / 2)
        return e / (e + 1)

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon / 2) + 1)


class OLH(FrequencyOracle):
    """Optimized local hashing.

    Each user draws a hash :math:`h(v) = ((a v + b) \\bmod P) \\bmod g` from a
    universal family (:math:`P = 2^{31} - 1`, :math:`g = \\operatorname{round}(
    e^\\varepsilon + 1)`), hashes the value, and perturbs the hash with GRR over
    ``g`` buckets. Reports are an int64 array of shape ``(n, 3)``: ``a``, ``b`` and the
    perturbed bucket. :math:`p = e^\\varepsilon / (e^\\varepsilon + g - 1)`,
    :math:`q = 1/g`.

    Notes
    -----
    ``q = 1/g`` holds for an ideal hash; the universal family used here collides with
    probability within ``g / P`` (below 1e-8 for ``g < 20``) of ``1/g``. Aggregation
    costs ``O(n d)``, done in vectorised chunks.
    """

    name = "OLH"
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int, g: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        if g is None:
            g = max(2, round(math.exp(self.epsilon) + 1))
        if isinstance(g, bool) or not isinstance(g, int | np.integer) or g < 2:
            raise ValueError(f"g must be an integer >= 2, got {g!r}")
        self.g = int(g)

    @property
    def p(self) -> float:
        e = math.exp(self.epsilon)
        return e / (e + self.g - 1)

    @property
    def q(self) -> float:
        return 1.0 / self.g

    def hash(self, a: np.ndarray, b: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Bucket of ``values`` under the hashes ``(a, b)`` (broadcasting)."""
        return ((a * values + b) % _MERSENNE) % self.g

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        rng = _require_generator(rng)
        v = check_values(values, self.domain_size)
        a = rng.integers(1, _MERSENNE, size=v.size, dtype=np.int64)
        b = rng.integers(0, _MERSENNE, size=v.size, dtype=np.int64)
        h = self.hash(a, b, v)
        keep = rng.random(v.size) < self.p
        other = rng.integers(0, self.g - 1, size=v.size)
        other += other >= h
        return np.stack([a, b, np.where(keep, h, other)], axis=1)

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != 3 or not np.issubdtype(r.dtype, np.integer):
            raise ValueError(f"OLH reports must be an integer array of shape (n, 3), got {r.shape}")
        items = np.arange(self.domain_size, dtype=np.int64)
        counts = np.zeros(self.domain_size, dtype=np.int64)
        step = max(1, (1 << 23) // self.domain_size)
        for sl in _chunks(r.shape[0], step):
            block = r[sl]
            h = self.hash(block[:, :1], block[:, 1:2], items[None, :])
            counts += (h == block[:, 2:3]).sum(axis=0)
        return counts

    def _chunk_size(self) -> int:
        return max(1, (1 << 23) // self.domain_size)


class SS(FrequencyOracle):
    """Subset selection (Ye and Barg; Wang et al. 2016).

    Each user reports a subset of ``k = max(1, round(d / (e^\\varepsilon + 1)))`` items.
    With probability :math:`p = k e^\\varepsilon / (k e^\\varepsilon + d - k)` the
    subset holds the user's value plus ``k - 1`` others chosen uniformly; otherwise it
    holds ``k`` items chosen uniformly from the others. Then
    :math:`q = p (k-1)/(d-1) + (1-p) k / (d-1)`. Reports are an int64 array of shape
    ``(n, k)``. Requires ``d >= 2``; privatizing costs ``O(n d)``.
    """

    name = "SS"
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int, k: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        d = self.domain_size
        if d < 2:
            raise ValueError("domain_size must be at least 2 for SS")
        if k is None:
            k = max(1, round(d / (math.exp(self.epsilon) + 1)))
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k < d:
            raise ValueError(f"k must be an integer in [1, {d - 1}], got {k!r}")
        self.k = int(k)

    @property
    def p(self) -> float:
        ke = self.k * math.exp(self.epsilon)
        return ke / (ke + self.domain_size - self.k)

    @property
    def q(self) -> float:
        d, k, p = self.domain_size, self.k, self.p
        return p * (k - 1) / (d - 1) + (1 - p) * k / (d - 1)

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        rng = _require_generator(rng)
        v = check_values(values, self.domain_size)
        d, k = self.domain_size, self.k
        # k distinct draws from the d - 1 other items: smallest k of random keys.
        keys = rng.random((v.size, d - 1))
        others = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < d - 1 else np.argsort(keys, 1)
        others = others + (others >= v[:, None])
        include = rng.random(v.size) < self.p
        others[include, 0] = v[include]  # own value plus k - 1 others
        # The report is the *set*: sorted, so that slot order carries no information
        # (with the own value in slot 0 the report was not eps-LDP).
        return np.sort(others, axis=1).astype(np.int64)

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.k:
            raise ValueError(f"SS reports must have shape (n, {self.k}), got {r.shape}")
        flat = check_values(r.ravel(), self.domain_size, "reports")
        return np.bincount(flat, minlength=self.domain_size).astype(np.int64)

    def _chunk_size(self) -> int:
        return max(1, (1 << 23) // self.domain_size)


def fwht(x: np.ndarray) -> np.ndarray:
    """Fast Walsh-Hadamard transform (Sylvester order) of a length-``2^m`` vector."""
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


class HR(FrequencyOracle):
    """Hadamard response (Acharya, Sun and Zhang 2019).

    With ``K`` the smallest power of two above ``d``, value ``v`` owns the columns
    :math:`C_v = \\{j : H_{v+1, j} = +1\\}` (``K/2`` of them) of the Sylvester
    Hadamard matrix. A user reports one column: uniform over :math:`C_v` with
    probability :math:`e^\\varepsilon/(e^\\varepsilon+1)`, else uniform over the rest.
    A report ``j`` supports every ``u`` with ``j`` in :math:`C_u`, so
    :math:`p = e^\\varepsilon/(e^\\varepsilon+1)` and :math:`q = 1/2`. Reports are one
    integer in ``[0, K)`` per user; aggregation is one Walsh-Hadamard transform.
    """

    name = "HR"
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int) -> None:
        super().__init__(epsilon, domain_size)
        self.K = 1 << int(self.domain_size).bit_length()  # smallest power of 2 > d

    @property
    def p(self) -> float:
        e = math.exp(self.epsilon)
        return e / (e + 1)

    @property
    def q(self) -> float:
        return 0.5

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        rng = _require_generator(rng)
        v = check_values(values, self.domain_size)
        row = v + 1
        j = rng.integers(0, self.K, size=v.size, dtype=np.int64)
        in_set = (np.bitwise_count(row & j) & 1) == 0
        want = rng.random(v.size) < self.p
        flip = row & -row  # lowest set bit: XOR with it swaps C_v and its complement
        return np.where(in_set == want, j, j ^ flip)

    def support_counts(self, reports) -> np.ndarray:
        r = np.asarray(reports).ravel()
        if r.size and (not np.issubdtype(r.dtype, np.integer) or r.min() < 0 or r.max() >= self.K):
            raise ValueError(f"HR reports must be integers in [0, {self.K})")
        hist = np.bincount(r, minlength=self.K)
        signed = fwht(hist)[1 : self.domain_size + 1]
        return np.rint((r.size + signed) / 2).astype(np.int64)

    def _chunk_size(self) -> int:
        return 1 << 20


ORACLES: dict[str, type[FrequencyOracle]] = {
    "GRR": GRR,
    "OUE": OUE,
    "SUE": SUE,
    "OLH": OLH,
    "SS": SS,
    "HR": HR,
}


def make_oracle(name: str, epsilon: float, domain_size: int) -> FrequencyOracle:
    """Build an oracle by name (case-insensitive), e.g. ``make_oracle("oue", 1.0, 1024)``."""
    key = str(name).upper()
    if key not in ORACLES:
        raise ValueError(f"unknown oracle {name!r}; choose one of {', '.join(ORACLES)}")
    return ORACLES[key](epsilon, domain_size)
