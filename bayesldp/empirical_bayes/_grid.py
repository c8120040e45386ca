r"""The grid of true counts on which the prior is estimated, and the noise it is sized by."""

from __future__ import annotations

import math

import numpy as np

from bayesldp._validation import check_choice, check_float
from bayesldp.measurement import Measurement, support_count_variance

#: Likelihoods of a support count given a true count.
LIKELIHOODS = ("binomial", "gaussian")
#: Most counts :func:`count_grid` builds (the defaults give hundreds to about a thousand;
#: a tiny spacing or growth with a large n would give millions, and a likelihood matrix
#: of gigabytes): more is a ValueError naming the grid options.
MAX_GRID_POINTS = 50_000


def support_probability(m: Measurement, x: np.ndarray | float) -> np.ndarray:
    r"""Probability :math:`q + (p - q) x / n` that a user supports an item of count ``x``."""
    return m.q + (m.p - m.q) * (np.asarray(x, dtype=np.float64) / m.n)


def conditional_count_variance(m: Measurement, x: np.ndarray) -> np.ndarray:
    """Variance of a support count given the true count ``x`` (the Gaussian likelihood)."""
    return support_count_variance(m.n, m.p, m.q, x)


def count_noise_sd(
    m: Measurement, x: np.ndarray | float, likelihood: str = "binomial"
) -> np.ndarray:
    r"""Return the standard deviation of a count estimate :math:`n\tilde f_v` given the true count.

    Parameters
    ----------
    m : Measurement
        Gives ``n``, ``p`` and ``q``.
    x : array_like
        True counts (clipped into ``[0, n]`` for this purpose).
    likelihood : {"binomial", "gaussian"}
        ``binomial``: :math:`\sqrt{n\pi(1-\pi)}/(p-q)` with
        :math:`\pi = q + (p-q)x/n`; ``gaussian``: the conditional law given the count,
        :math:`\sqrt{x p(1-p) + (n-x) q(1-q)}/(p-q)`.

    Returns
    -------
    numpy.ndarray
        In counts (users).
    """
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    x = np.clip(np.asarray(x, dtype=np.float64), 0, m.n)
    if likelihood == "binomial":
        pi = support_probability(m, x)
        var = m.n * pi * (1 - pi)
    else:
        var = conditional_count_variance(m, x)
    return np.sqrt(np.maximum(var, 0.0)) / (m.p - m.q)


def count_grid(
    m: Measurement,
    *,
    spacing: float = 0.25,
    growth: float = 0.02,
    window: float = 8.0,
    likelihood: str = "binomial",
) -> np.ndarray:
    r"""Grid of counts on which the prior :math:`G` is estimated.

    Every count from 0 up to ``1 / growth``, then steps of ``growth`` times the count,
    but never wider than ``spacing`` noise standard deviations (and never narrower
    than one count). Only counts within ``window`` noise standard deviations of some
    item's count estimate, or of the mean count ``n / d``, are kept.

    Why this resolution: every item's likelihood, as a function of its count, is a bump
    of width one noise standard deviation :math:`s`. Moving an atom of :math:`G` by
    :math:`h` changes each likelihood by a relative :math:`O(h/s)`, and a mixture of two
    neighbouring atoms reproduces a point between them up to :math:`O(h^2/s^2)`; with
    :math:`h \le s/4` the estimates change by a small fraction of the noise when the
    spacing is halved (the tests check it). Where counts are small compared with the
    noise the relative steps resolve the low end of :math:`G` (most items of real data
    have a handful of users), at a cost of about ``log(s * spacing / growth) / growth``
    points.

    Parameters
    ----------
    m : Measurement
        The measurement (its ``n``, ``p``, ``q`` and estimates).
    spacing : float, default 0.25
        Largest step, in noise standard deviations.
    growth : float, default 0.02
        Relative step where it is below ``spacing``.
    window : float, default 8.0
        Half-width of the kept region around each count estimate, in noise standard
        deviations (a likelihood ratio of :math:`e^{-32}`).
    likelihood : {"binomial", "gaussian"}
        Which noise standard deviation to use (the binomial law's or the law given the
        count).

    Returns
    -------
    numpy.ndarray
        Increasing integer counts in ``[0, n]`` (as floats).

    Raises
    ------
    ValueError
        A grid of more than 50,000 counts (``spacing`` or ``growth`` too small, or
        ``window`` too large, for ``n``).
    """
    spacing = check_float(spacing, "spacing", minimum=0, strict_minimum=True)
    growth = check_float(growth, "growth", minimum=0, strict_minimum=True)
    window = check_float(window, "window", minimum=0, strict_minimum=True)
    n = m.n
    y = np.unique(np.concatenate([m.estimates * n, [n / m.domain_size]]))
    half = window * count_noise_sd(m, y, likelihood)
    lo = np.clip(np.floor(y - half), 0, n)
    hi = np.clip(np.ceil(y + half), 0, n)
    # merge the windows [lo, hi] (sorted by lo since y is sorted and half varies slowly)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    starts = np.concatenate([[0], np.flatnonzero(lo[1:] > hi[:-1]) + 1])
    ends = np.concatenate([starts[1:] - 1, [lo.size - 1]])
    points: list[float] = []
    for a, b in zip(lo[starts], hi[ends], strict=True):
        x = float(a)
        while True:
            points.append(x)
            if x >= b:
                break
            if len(points) >= MAX_GRID_POINTS:
                raise ValueError(
                    f"count grid: more than {MAX_GRID_POINTS:,} counts for n = {n:,} "
                    f"(spacing {spacing:g}, growth {growth:g}, window {window:g}); raise "
                    "grid_spacing or grid_growth, or lower grid_window"
                )
            sd = float(count_noise_sd(m, x, likelihood))
            step = max(1.0, math.floor(min(growth * x, spacing * sd)))
            x = min(float(b), x + step)
    return np.unique(np.asarray(points))
