"""The output of a frequency oracle: what every post-processing method consumes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesldp._validation import (
    check_counts,
    check_epsilon,
    check_estimates,
    check_frequencies,
    check_int,
    check_probability,
)

__all__ = ["Measurement", "support_count_variance"]


def _counts_sum_to_n(oracle: str) -> bool:
    """Whether the oracle registered as ``oracle`` declares that its counts sum to ``n``.

    The fact is a class attribute of the oracle (``counts_sum_to_n``: every report
    supports exactly one item, as in GRR), asked of the registry at check time; an
    unregistered name (``"custom"``) declares nothing. The registry is imported here,
    not at the top: the oracles build Measurements, so importing their package while
    this module loads would be circular (the registry module itself imports neither).
    """
    from bayesldp.oracles._registry import find_oracle

    cls = find_oracle(oracle)
    return cls is not None and bool(cls.counts_sum_to_n)


def support_count_variance(n: Any, p: Any, q: Any, x: Any, items: Any = 1) -> Any:
    r"""Return the variance of a pure oracle's support count given the true count.

    .. math::

        \operatorname{Var}[c] = a\,n\,q(1-q) + x\,(p-q)(1-p-q),

    for ``n`` users of whom ``x`` hold the item: ``x`` Bernoulli(p) reports and
    ``n - x`` Bernoulli(q) ones. With ``items = a`` it is the variance of the sum of the
    counts of ``a`` items whose reports are independent given the users' values (exact
    for OUE and SUE; ``x`` is then the number of users holding any of them). Plain
    arithmetic, so it serves NumPy arrays and PyTensor variables alike. The variance of
    the unbiased estimate :math:`\tilde f_v` is this divided by :math:`(n(p-q))^2`.

    Parameters
    ----------
    n : int, float or array_like
        Number of users.
    p, q : float
        The oracle's support probabilities.
    x : float or array_like
        True count(s): users holding the item (or any item of the set).
    items : int or array_like, default 1
        Number of items whose counts are summed.

    Returns
    -------
    float or array
        The variance, in users squared.
    """
    return items * n * q * (1 - q) + x * (p - q) * (1 - p - q)


@dataclass(frozen=True)
class Measurement:
    r"""Raw, unbiased frequency estimates from a pure frequency oracle.

    A pure oracle reports, for each item ``v``, a support count ``c_v``: the number of
    users whose report supports ``v``. A user holding ``v`` supports it with
    probability ``p``; a user holding another value supports it with probability
    ``q``. The unbiased estimate is

    .. math::

        \tilde f_v = \frac{c_v / n - q}{p - q},
        \qquad
        \operatorname{Var}[\tilde f_v]
        = \frac{q(1-q) + f_v (p-q)(1-p-q)}{n (p-q)^2}.

    Parameters
    ----------
    estimates : numpy.ndarray
        The raw estimates :math:`\tilde f` (length ``d``).
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
    fields, so a Measurement is always internally consistent: the estimates must be
    the ones the support counts give, and the counts of a registered oracle whose
    reports support one item each (its class declares ``counts_sum_to_n``: GRR) must sum
    to ``n``.
    """

    estimates: np.ndarray
    n: int
    p: float
    q: float
    support_counts: np.ndarray
    oracle: str = "custom"
    epsilon: float | None = None

    def __post_init__(self) -> None:
        """Check the fields and make the arrays read-only."""
        est = check_estimates(self.estimates, "estimates")
        counts = check_counts(self.support_counts, "support_counts", length=est.size)
        n = check_int(self.n, "n", minimum=1)
        p = check_probability(self.p, "p", open_interval=False)
        q = check_probability(self.q, "q", open_interval=False)
        if not p > q:
            raise ValueError(f"p must exceed q, got p={p}, q={q}")
        if counts.max() > n:
            raise ValueError(f"support_counts exceed n={n}: max is {counts.max()}")
        if not isinstance(self.oracle, str):
            raise ValueError(f"oracle must be a name, got {self.oracle!r}")
        if _counts_sum_to_n(self.oracle) and counts.sum() != n:
            raise ValueError(
                f"support_counts of {self.oracle} must sum to n (each user reports one "
                f"item): they sum to {counts.sum()}, n={n}"
            )
        # The estimates must be the ones the counts give: anything else is a measurement
        # that contradicts itself, and methods would silently use one or the other.
        implied = (counts / n - q) / (p - q)
        if not np.allclose(est, implied, rtol=1e-9, atol=1e-12):
            worst = int(np.argmax(np.abs(est - implied)))
            raise ValueError(
                f"estimates disagree with support_counts: item {worst} has estimate "
                f"{est[worst]!r} but its count gives {implied[worst]!r}; build the "
                "Measurement with Measurement.from_support_counts"
            )
        est.setflags(write=False)
        counts.setflags(write=False)
        object.__setattr__(self, "estimates", est)
        object.__setattr__(self, "support_counts", counts)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @classmethod
    def from_support_counts(
        cls,
        counts: Any,
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
            Oracle name. A registered one (in any case) selects that oracle's facts
            (GRR: counts summing to ``n``, a multinomial likelihood, exact subset
            variances); any other is treated as a generic pure oracle.
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
        n = check_int(n, "n", minimum=1)
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
        r"""Approximate (uniform) standard deviation of each estimate.

        :math:`\sigma = \sqrt{q(1-q) / (n (p-q)^2)}`, the papers' Equation (7).
        """
        return math.sqrt(self.q * (1 - self.q) / (self.n * (self.p - self.q) ** 2))

    def variance(self, frequencies: Any = None) -> np.ndarray:
        """Exact variance of each estimate given true frequencies.

        Parameters
        ----------
        frequencies : array_like, optional
            True frequencies, each in ``[0, 1]``; defaults to the clipped raw estimates
            (a plug-in).

        Returns
        -------
        numpy.ndarray
            :math:`(q(1-q) + f_v (p-q)(1-p-q)) / (n (p-q)^2)` for each item.

        Raises
        ------
        ValueError
            ``frequencies`` holds NaN, infinities, bools or values outside ``[0, 1]``.
        """
        if frequencies is None:
            f = np.clip(self.estimates, 0, 1)
        else:
            f = check_frequencies(frequencies, "frequencies")
        var = support_count_variance(1, self.p, self.q, f)
        return var / (self.n * (self.p - self.q) ** 2)


def check_measurement(value: Any, name: str = "m") -> Measurement:
    """Return ``value`` if it is a :class:`Measurement`, else raise ValueError naming ``name``.

    Parameters
    ----------
    value : object
        The argument to check.
    name : str, default "m"
        The argument's name, for the error message.
    """
    if not isinstance(value, Measurement):
        raise ValueError(f"{name} must be a bayesldp.Measurement, got {type(value).__name__}")
    return value
