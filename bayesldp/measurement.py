"""The output of a frequency oracle: what every post-processing method consumes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayesldp._validation import check_counts, check_estimates, check_probability


@dataclass(frozen=True)
class Measurement:
    """Raw, unbiased frequency estimates from a pure frequency oracle.

    A pure oracle reports, for each item ``v``, a support count ``c_v``: the number of
    users whose report supports ``v``. A user holding ``v`` supports it with
    probability ``p``; a user holding another value supports it with probability
    ``q``. The unbiased estimate is

    .. math::

        \\tilde f_v = \\frac{c_v / n - q}{p - q},
        \\qquad
        \\operatorname{Var}[\\tilde f_v]
        = \\frac{q(1-q) + f_v (p-q)(1-p-q)}{n (p-q)^2}.

    Parameters
    ----------
    estimates : numpy.ndarray
        The raw estimates :math:`\\tilde f` (length ``d``).
    n : int
        Number of users.
    p, q : float
        Support probabilities of the oracle, ``0 <= q < p <= 1``.
    support_counts : numpy.ndarray
        The support counts :math:`c` (length ``d``).
    oracle : str
        Name of the oracle that produced the counts (``"GRR"``, ``"OUE"``, ...), or
        ``"custom"``.
    epsilon : float or None
        Privacy budget, when known.

    Notes
    -----
    Build one with :meth:`from_support_counts` (counts from a real deployment) or
    with an oracle's ``aggregate`` / ``simulate``. The constructor validates its
    fields, so a Measurement is always internally consistent.
    """

    estimates: np.ndarray
    n: int
    p: float
    q: float
    support_counts: np.ndarray
    oracle: str = "custom"
    epsilon: float | None = None

    def __post_init__(self) -> None:
        est = check_estimates(self.estimates, "estimates")
        counts = check_counts(self.support_counts, "support_counts", length=est.size)
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 1:
            raise ValueError(f"n must be a positive integer, got {self.n!r}")
        p = check_probability(self.p, "p", open_interval=False)
        q = check_probability(self.q, "q", open_interval=False)
        if not p > q:
            raise ValueError(f"p must exceed q, got p={p}, q={q}")
        if counts.max() > self.n:
            raise ValueError(f"support_counts exceed n={self.n}: max is {counts.max()}")
        est.setflags(write=False)
        counts.setflags(write=False)
        object.__setattr__(self, "estimates", est)
        object.__setattr__(self, "support_counts", counts)
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @classmethod
    def from_support_counts(
        cls,
        counts,
        n: int,
        p: float,
        q: float,
        *,
        oracle: str = "custom",
        epsilon: float | None = None,
    ) -> Measurement:
        """Build a Measurement from support counts, e.g. from a real deployment.

        Parameters
        ----------
        counts : array_like of int
            Support count of each item, length ``d``; each in ``[0, n]``.
        n : int
            Number of users who reported.
        p, q : float
            Support probabilities of the oracle used.
        oracle : str, optional
            Oracle name, recorded for reference.
        epsilon : float, optional
            Privacy budget, recorded for reference.

        Returns
        -------
        Measurement

        Raises
        ------
        ValueError
            If counts are negative, non-integer, not 1-D, or exceed ``n``, or if
            ``p <= q``.

        Examples
        --------
        >>> m = Measurement.from_support_counts([60, 20, 20], n=100, p=0.5, q=0.25)
        >>> m.estimates.round(3).tolist()
        [1.4, -0.2, -0.2]
        """
        c = check_counts(counts, "counts")
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        p = check_probability(p, "p", open_interval=False)
        q = check_probability(q, "q", open_interval=False)
        if not p > q:
            raise ValueError(f"p must exceed q, got p={p}, q={q}")
        est = (c / n - q) / (p - q)
        return cls(est, int(n), p, q, c, oracle=oracle, epsilon=epsilon)

    @property
    def domain_size(self) -> int:
        """Number of items ``d``."""
        return int(self.estimates.size)

    @property
    def sigma(self) -> float:
        """Approximate (uniform) standard deviation of each estimate.

        :math:`\\sigma = \\sqrt{q(1-q) / (n (p-q)^2)}`, the papers' Equation (7).
        """
        return math.sqrt(self.q * (1 - self.q) / (self.n * (self.p - self.q) ** 2))

    def variance(self, frequencies=None) -> np.ndarray:
        """Exact variance of each estimate given true frequencies.

        Parameters
        ----------
        frequencies : array_like, optional
            True frequencies; defaults to the clipped raw estimates (a plug-in).

        Returns
        -------
        numpy.ndarray
            :math:`(q(1-q) + f_v (p-q)(1-p-q)) / (n (p-q)^2)` for each item.
        """
        f = np.clip(self.estimates, 0, 1) if frequencies is None else np.asarray(frequencies)
        pq = self.p - self.q
        return (self.q * (1 - self.q) + f * pq * (1 - self.p - self.q)) / (self.n * pq**2)
