"""Datasets: true item counts for simulation.

Each loader returns a :class:`Dataset` holding the count of users per item, so that
an oracle's :meth:`~bayesldp.FrequencyOracle.simulate` can run a round on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesldp._validation import check_counts

__all__ = ["Dataset", "beta", "zipf"]


def _generator(rng: np.random.Generator | int) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy.random.Generator or an int seed, got {rng!r}")


@dataclass(frozen=True)
class Dataset:
    """True counts of users per item, with where they came from.

    Parameters
    ----------
    name : str
        Short name, e.g. ``"zipf"``.
    counts : numpy.ndarray
        Number of users holding each item (length ``d``).
    source : str
        Where the data come from (generator and parameters, package, or file).
    labels : tuple of str, optional
        Item labels (words, city names); empty when items are anonymous.
    groups : dict, optional
        Named fixed sets of items for fixed-set queries, e.g. US states.
    """

    name: str
    counts: np.ndarray
    source: str
    labels: tuple[str, ...] = ()
    groups: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        counts = check_counts(self.counts, "counts")
        if counts.sum() == 0:
            raise ValueError("counts must hold at least one user")
        if self.labels and len(self.labels) != counts.size:
            raise ValueError(f"labels has {len(self.labels)} entries for {counts.size} items")
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.counts.sum())

    @property
    def d(self) -> int:
        """Domain size."""
        return int(self.counts.size)

    @property
    def frequencies(self) -> np.ndarray:
        """True frequencies, summing to 1."""
        return self.counts / self.n

    def __str__(self) -> str:
        return f"{self.name}: n={self.n:,}, d={self.d:,} ({self.source})"


def zipf(
    s: float = 1.5, d: int = 1024, n: int = 1_000_000, rng: np.random.Generator | int = 0
) -> Dataset:
    """Users drawn i.i.d. from a Zipf law :math:`f_v \\propto (v+1)^{-s}` on ``d`` items.

    The papers' synthetic dataset (``s = 1.5``, ``d = 1024``, ``n = 10^6``).
    """
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"s must be a positive finite number, got {s!r}")
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be positive, got d={d!r}, n={n!r}")
    w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
    counts = _generator(rng).multinomial(n, w / w.sum())
    return Dataset("zipf", counts, f"synthetic Zipf(s={s}) over d={d}, n={n}")


def beta(
    a: float = 50.0,
    b: float = 2.0,
    d: int = 400,
    n: int = 100_000,
    rng: np.random.Generator | int = 0,
) -> Dataset:
    """Users' values drawn from Beta(a, b) and bucketised into ``d`` equal bins.

    The papers' second synthetic dataset (``Beta(50, 2)``, ``d = 400``, ``n = 10^5``).
    """
    if not (a > 0 and b > 0):
        raise ValueError(f"a and b must be positive, got a={a!r}, b={b!r}")
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be positive, got d={d!r}, n={n!r}")
    x = _generator(rng).beta(a, b, size=n)
    idx = np.minimum((x * d).astype(np.int64), d - 1)
    counts = np.bincount(idx, minlength=d)
    return Dataset("beta", counts, f"synthetic Beta({a}, {b}) bucketised into d={d}, n={n}")
