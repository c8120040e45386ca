"""Sampling helpers shared by the PyMC models: seeds, sampler arguments, diagnostics."""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np

from bayesldp._validation import as_array, check_rng

__all__ = [
    "DIAGNOSTIC_CHUNK",
    "ESS_MIN_PER_CHAIN",
    "RHAT_MAX",
    "check_sampler_args",
    "convergence_info",
    "limit_threads",
    "rhat_ess",
    "sample_counts",
    "seeds",
    "warn_at_bounds",
]

#: Convergence thresholds behind the warnings.
RHAT_MAX = 1.01
ESS_MIN_PER_CHAIN = 100
#: Variables diagnosed at once by :func:`rhat_ess` (bounds memory).
DIAGNOSTIC_CHUNK = 4096


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


def convergence_info(
    idata, names: list[str], chains: int, stacklevel: int = 3, kernel: str = "NUTS"
) -> dict:
    """r_hat, bulk ESS and divergences of ``names``; a RuntimeWarning if any is poor.

    A vector variable is summarised by its worst element (largest r_hat, smallest ESS),
    computed by :func:`rhat_ess` (ArviZ's ``rhat`` and ``ess``, vectorised over the
    elements). Poor means r_hat above :data:`RHAT_MAX`, bulk ESS below
    :data:`ESS_MIN_PER_CHAIN` per chain, or any divergent transition.

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
    kernel : str, default "NUTS"
        The sampler's kernel, named in the warning ("poor NUTS convergence: ...").

    Returns
    -------
    dict
        ``r_hat`` and ``ess_bulk`` (by name) and ``divergences``.
    """
    diagnosed = {k: rhat_ess(idata.posterior[k].values) for k in names}
    divergences = int(idata.sample_stats["diverging"].sum())
    info: dict[str, Any] = {
        "r_hat": {k: float(np.max(r)) for k, (r, _) in diagnosed.items()},
        "ess_bulk": {k: float(np.min(e)) for k, (_, e) in diagnosed.items()},
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
            f"poor {kernel} convergence: " + ", ".join(problems) + "; increase draws/tune/chains",
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


def _chunks(x: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Split draws ``(chain, draw, ...)`` into ``(chunk, 2 * chain, draw // 2)`` blocks.

    Each block is copied from the draws' two halves directly (no copy of the whole
    array). Nothing is yielded below 4 draws per chain (every diagnostic is then NaN).
    """
    chains, n = x.shape[:2]
    flat = x.reshape(chains, n, -1)
    if n < 4:
        return
    half = n // 2
    for start in range(0, flat.shape[2], DIAGNOSTIC_CHUNK):
        part = slice(start, min(start + DIAGNOSTIC_CHUNK, flat.shape[2]))
        block = np.empty((part.stop - part.start, 2 * chains, half))
        block[:, :chains] = np.moveaxis(flat[:, :half, part], 2, 0)
        block[:, chains:] = np.moveaxis(flat[:, n - half :, part], 2, 0)
        yield part, block


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..N of each row of ``x`` (2-D), tied values sharing their average rank."""
    order = np.argsort(x, axis=1)
    ordered = np.take_along_axis(x, order, axis=1)
    size = x.shape[1]
    index = np.broadcast_to(np.arange(size), x.shape)
    starts = np.ones(x.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ranks = np.empty(x.shape)
    if starts.all():  # no ties (continuous draws)
        np.put_along_axis(ranks, order, index + 1.0, axis=1)
        return ranks
    ends = np.ones(x.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, index, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, index, size - 1)[:, ::-1], axis=1)[:, ::-1]
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise each variable's draws together (average ranks, Blom's offset 3/8).

    Average ranks are multiples of 1/2, so their normal scores come from one table of
    ``2 N - 1`` values (the same numbers as ``ndtri`` of every rank, at a fraction of
    the cost).
    """
    from scipy.special import ndtri

    v, *shape = x.shape
    size = int(np.prod(shape))
    ranks = _average_ranks(x.reshape(v, size))
    table = ndtri((np.arange(2, 2 * size + 1) / 2.0 - 0.375) / (size + 0.25))
    return table[(2.0 * ranks).astype(np.intp) - 2].reshape(x.shape)


def _split_rhat(z: np.ndarray) -> np.ndarray:
    m = z.shape[2]
    between = m * np.var(z.mean(axis=2), axis=1, ddof=1)
    within = np.var(z, axis=2, ddof=1).mean(axis=1)
    return np.sqrt((between / within + m - 1) / m)


def rhat_ess(draws) -> tuple[np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat and bulk ESS of every element (Vehtari et al. 2021).

    The same numbers as ``arviz.rhat(..., method="rank")`` (the larger of the bulk and
    the folded R-hat) and ``arviz.ess(..., method="bulk")`` (Geyer's initial monotone
    sequence on the rank-normalised split chains), computed for all elements at once,
    in blocks of :data:`DIAGNOSTIC_CHUNK` elements (one thread per core), instead of
    ArviZ's loop over the elements (``benchmarks/diagnostics_speed.py`` times both; a
    test compares the numbers).

    Parameters
    ----------
    draws : array_like
        Shape ``(chain, draw, ...)``. R-hat needs 2 chains and both need 4 draws, else NaN.

    Returns
    -------
    r_hat, ess_bulk : numpy.ndarray
        Shape ``draws.shape[2:]`` each; NaN for an element with a non-finite draw.
    """
    x = as_array(draws, "draws")
    if x.dtype == bool or not (
        np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)
    ):
        raise ValueError(f"draws must hold real numbers, got dtype {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"draws must have shape (chain, draw, ...), got shape {x.shape}")
    x = x.astype(np.float64, copy=False)
    size = int(np.prod(x.shape[2:], dtype=int))
    rhat, ess = np.full(size, np.nan), np.full(size, np.nan)
    two_chains = x.shape[0] >= 2

    def diagnose(block: tuple[slice, np.ndarray]) -> None:
        part, split = block
        with np.errstate(divide="ignore", invalid="ignore"):
            flat = split.reshape(split.shape[0], -1)
            finite = np.isfinite(flat).all(axis=1)
            z = _z_scale(split)
            constant = flat.max(axis=1) - flat.min(axis=1) < np.finfo(float).resolution
            ess[part] = np.where(finite, np.where(constant, flat.shape[1], _geyer_ess(z)), np.nan)
            if two_chains:
                folded = np.abs(split - np.median(flat, axis=1)[:, None, None])
                bulk, tail = _split_rhat(z), _split_rhat(_z_scale(folded))
                # ArviZ's max(bulk, tail): a NaN tail (constant folded draws) keeps bulk
                value = np.where(tail > bulk, tail, bulk)
                rhat[part] = np.where(finite, value, np.nan)

    # blocks are independent and NumPy's sorts and FFTs release the GIL: one thread per
    # core, a wave of blocks at a time (bounded memory)
    workers = max(1, min(os.cpu_count() or 1, -(-size // DIAGNOSTIC_CHUNK)))
    blocks = _chunks(x)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while wave := list(itertools.islice(blocks, workers)):
            list(pool.map(diagnose, wave))
    return rhat.reshape(x.shape[2:]), ess.reshape(x.shape[2:])


def _geyer_ess(z: np.ndarray) -> np.ndarray:
    """ESS of ``z`` ``(var, chain, draw)`` by Geyer's initial monotone sequence."""
    from scipy import fft

    _, chains, n = z.shape
    centred = z - z.mean(axis=2, keepdims=True)
    size = fft.next_fast_len(2 * n, real=True)
    spectrum = fft.rfft(centred, n=size, axis=2)
    acov = fft.irfft(spectrum * np.conjugate(spectrum), n=size, axis=2)[..., :n] / n
    acov = acov.mean(axis=1)
    mean_var = acov[:, 0] * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if chains > 1:
        var_plus = var_plus + np.var(z.mean(axis=2), axis=1, ddof=1)
    rho = 1.0 - (mean_var[:, None] - acov) / var_plus[:, None]
    rho[:, 0] = 1.0
    # pairs (rho_2k, rho_2k+1): k = 0 always, k = 1..M while the pair sums stay positive
    m_pairs = len(range(1, n - 3, 2))
    even = rho[:, 0 : 2 * m_pairs + 1 : 2]
    odd = rho[:, 1 : 2 * m_pairs + 2 : 2]
    pairs = even + odd
    fails = pairs <= 0
    first = np.where(fails.any(axis=1), np.argmax(fails, axis=1), m_pairs + 1)
    j = np.minimum(first, m_pairs)  # pairs computed; 0..j-1 enter the sum
    rows = np.arange(z.shape[0])
    last_even, last_pair = even[rows, j], pairs[rows, j]
    tail = np.where((last_even > 0) | (last_pair >= 0), last_even, 0.0)
    tail = np.where(j == 0, 1.0, tail)
    monotone = np.minimum.accumulate(pairs, axis=1)
    kept = np.arange(pairs.shape[1])[None, :] < j[:, None]
    tau = -1.0 + 2.0 * np.sum(np.where(kept, monotone, 0.0), axis=1) + tail
    total = chains * n
    ess = total / np.maximum(tau, 1.0 / np.log10(total))
    return np.where(np.isnan(rho).any(axis=1), np.nan, ess)
