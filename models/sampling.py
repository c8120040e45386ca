"""Sampling helpers shared by the PyMC models: seeds, sampler arguments, diagnostics."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from bayesldp._validation import check_rng

__all__ = [
    "ESS_MIN_PER_CHAIN",
    "RHAT_MAX",
    "check_sampler_args",
    "convergence_info",
    "limit_threads",
    "sample_counts",
    "seeds",
    "warn_at_bounds",
]

#: Convergence thresholds behind the warnings.
RHAT_MAX = 1.01
ESS_MIN_PER_CHAIN = 100


def seeds(rng) -> tuple[int, np.random.Generator]:
    """Return a seed for PyMC's sampler and the Generator it was drawn from.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        Randomness of the whole fit (``bayesldp._validation.check_rng``).
    """
    gen = check_rng(rng)
    return int(gen.integers(2**31 - 1)), gen


def check_sampler_args(draws: int, tune: int, chains: int) -> None:
    """Check the sampler's ``draws``, ``tune`` (>= 0) and ``chains``: integers, not bools.

    Parameters
    ----------
    draws, tune, chains : int
        Draws per chain, tuning steps per chain and number of chains.

    Raises
    ------
    ValueError
        If any of them is not an integer or is too small (``draws``, ``chains`` >= 1).
    """
    for name, value, low in (("draws", draws, 1), ("tune", tune, 0), ("chains", chains, 1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def convergence_info(idata, names: list[str], chains: int, stacklevel: int = 3) -> dict:
    """r_hat, bulk ESS and divergences of ``names``; a RuntimeWarning if any is poor.

    A vector variable is summarised by its worst element (largest r_hat, smallest ESS).
    Poor means r_hat above :data:`RHAT_MAX`, bulk ESS below :data:`ESS_MIN_PER_CHAIN`
    per chain, or any divergent transition.

    Parameters
    ----------
    idata : arviz.InferenceData
        The sampler's output, with ``sample_stats``.
    names : list of str
        Posterior variables to summarise.
    chains : int
        Number of chains (scales the ESS threshold).
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`.

    Returns
    -------
    dict
        ``r_hat`` and ``ess_bulk`` (by name) and ``divergences``.
    """
    import arviz as az

    rhat = az.rhat(idata, var_names=names)
    ess = az.ess(idata, var_names=names)
    divergences = int(idata.sample_stats["diverging"].sum())
    info: dict[str, Any] = {
        "r_hat": {k: float(rhat[k].max()) for k in names},
        "ess_bulk": {k: float(ess[k].min()) for k in names},
        "divergences": divergences,
    }
    problems = [f"r_hat({k}) = {v:.3f}" for k, v in info["r_hat"].items() if v > RHAT_MAX]
    problems += [
        f"ess_bulk({k}) = {v:.0f}"
        for k, v in info["ess_bulk"].items()
        if v < ESS_MIN_PER_CHAIN * chains
    ]
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    if problems:
        warnings.warn(
            "poor NUTS convergence: " + ", ".join(problems) + "; increase draws/tune/chains",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
    return info


def warn_at_bounds(draws: np.ndarray, bounds, name: str, stacklevel: int = 3) -> None:
    """Warn when over 5% of the draws lie within 2% of an end of the prior's support.

    Parameters
    ----------
    draws : numpy.ndarray
        Posterior draws of one parameter.
    bounds : (float, float)
        The ends of its prior's support.
    name : str
        The bounds' argument name, used in the warning.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`.
    """
    lo, hi = bounds
    width = hi - lo
    if np.mean((draws < lo + 0.02 * width) | (draws > hi - 0.02 * width)) > 0.05:
        warnings.warn(
            f"the posterior piles up at an end of {name} {tuple(bounds)}; widen {name}",
            RuntimeWarning,
            stacklevel=stacklevel,
        )


def sample_counts(
    w1: np.ndarray, mean: np.ndarray, var: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw counts from moment-matched Gamma laws, zero with probability ``1 - w1``.

    Parameters
    ----------
    w1 : numpy.ndarray
        Probability of each item's count being positive, shape ``(d,)``.
    mean, var : numpy.ndarray
        Mean and variance of each item's positive count, shape ``(d,)``; the variance
        is floored at ``1e-12 mean^2``.
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Shape ``(size, d)``.
    """
    var = np.maximum(var, 1e-12 * mean**2 + 1e-300)
    shape, scale = mean**2 / var, var / mean
    x = rng.gamma(shape, scale, size=(size, mean.size))
    return np.where(rng.random((size, mean.size)) < w1, x, 0.0)


#: BLAS/OpenMP threads the models use while they fit (see :func:`limit_threads`).
FIT_THREADS = 1


@contextmanager
def limit_threads(threads: int | None = None) -> Iterator[None]:
    """Limit the BLAS and OpenMP thread pools (``threadpoolctl``) inside the block.

    PyMC runs one chain per core, and each chain's BLAS calls would start a thread per
    core of their own: two chains on two cores oversubscribe the machine (bayes-power-zi
    at d = 42178 took 70 s with default threads and 22 s with one BLAS thread under the
    same background load). ``threads=None`` uses :data:`FIT_THREADS` (read at call
    time; set it to ``None`` to leave the pools alone, as ``benchmarks/bayes_speed.py
    --threads default`` does).

    Parameters
    ----------
    threads : int, optional
        Threads per pool; None for :data:`FIT_THREADS`.
    """
    if threads is None:
        threads = FIT_THREADS
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        yield
