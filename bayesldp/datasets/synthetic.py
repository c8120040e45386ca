"""Synthetic datasets: users drawn i.i.d. from a Zipf, uniform or Beta law.

Zipf (``s = 1.5``, ``d = 1024``, ``n = 10^6``) and Beta(50, 2) bucketised into 400
bins (``n = 10^5``) are the papers' synthetic datasets; the uniform law is the flat
data of the ``mle_gap`` study. Each builder takes ``rng`` (a Generator or a seed; a
fixed seed by default, so the true data are the same in every repetition of a grid).
"""

from __future__ import annotations

import numpy as np

from bayesldp._validation import check_float, check_int, check_rng
from bayesldp.datasets._registry import Dataset


def zipf(
    s: float = 1.5, d: int = 1024, n: int = 1_000_000, rng: np.random.Generator | int = 0
) -> Dataset:
    r"""Users drawn i.i.d. from a Zipf law :math:`f_v \propto (v+1)^{-s}` on ``d`` items.

    The papers' synthetic dataset (``s = 1.5``, ``d = 1024``, ``n = 10^6``).

    Parameters
    ----------
    s : float, default 1.5
        The exponent, positive.
    d : int, default 1024
        Number of items, at least 1.
    n : int, default 1_000_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"zipf"``; the counts are one multinomial draw.
    """
    s = check_float(s, "s", minimum=0.0, strict_minimum=True)
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
    counts = check_rng(rng).multinomial(n, w / w.sum())
    return Dataset("zipf", counts, f"synthetic Zipf(s={s}) over d={d}, n={n}")


def uniform(d: int = 1024, n: int = 1_000_000, rng: np.random.Generator | int = 0) -> Dataset:
    """Users drawn i.i.d. from the uniform law on ``d`` items (the flat data of mle_gap).

    Parameters
    ----------
    d : int, default 1024
        Number of items, at least 1.
    n : int, default 1_000_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"uniform"``; the counts are one multinomial draw.
    """
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    counts = check_rng(rng).multinomial(n, np.full(d, 1.0 / d))
    return Dataset("uniform", counts, f"synthetic uniform over d={d}, n={n}")


def beta(
    a: float = 50.0,
    b: float = 2.0,
    d: int = 400,
    n: int = 100_000,
    rng: np.random.Generator | int = 0,
) -> Dataset:
    """Users' values drawn from Beta(a, b) and bucketised into ``d`` equal bins.

    The papers' second synthetic dataset (``Beta(50, 2)``, ``d = 400``, ``n = 10^5``).

    Parameters
    ----------
    a, b : float, default 50.0 and 2.0
        The Beta law's shape parameters, positive.
    d : int, default 400
        Number of equal-width bins of [0, 1], at least 1.
    n : int, default 100_000
        Number of users, at least 1.
    rng : numpy.random.Generator or int, default 0
        Source of randomness or a seed.

    Returns
    -------
    Dataset
        Named ``"beta"``.
    """
    a = check_float(a, "a", minimum=0.0, strict_minimum=True)
    b = check_float(b, "b", minimum=0.0, strict_minimum=True)
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    x = check_rng(rng).beta(a, b, size=n)
    idx = np.minimum((x * d).astype(np.int64), d - 1)
    counts = np.bincount(idx, minlength=d)
    return Dataset("beta", counts, f"synthetic Beta({a}, {b}) bucketised into d={d}, n={n}")
