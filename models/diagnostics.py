r"""Convergence diagnostics of a fit, and the rule that decides when to warn.

Every diagnosed variable gets, element by element, the rank-normalised split
:math:`\hat R` (the larger of the bulk and the folded one) and the bulk effective sample
size of Vehtari, Gelman, Simpson, Carpenter and Bürkner (2021), the numbers ArviZ's
``rhat(method="rank")`` and ``ess(method="bulk")`` give. :func:`rhat_ess` computes them
for all elements at once; ArviZ and arviz-stats loop over the elements in Python, which
at tens of thousands of items costs as much as the sampling (a test checks that the
numbers are ArviZ's).

The rule (:func:`convergence_info`). With thousands of elements the largest
:math:`\hat R` passes a fixed 1.01 by chance even when every chain mixes well, so a rule
on the maximum alone fires on nearly every fit. Under good mixing, the split chains'
means scatter like independent draws of the posterior mean with the element's effective
sample size: with :math:`M` split chains of :math:`N` draws and :math:`S` effective draws
in all,

.. math::

    \hat R^2 \approx 1 - \frac{1}{N} + \frac{M}{S} X, \qquad
    X \sim \chi^2_{M-1} / (M - 1).

A variable of :math:`k` elements is flagged when an element's :math:`\hat R` exceeds
:math:`\max(1.01, \hat R_k)`, where :math:`\hat R_k` puts :math:`X` at its
:math:`1 - \alpha / (2k)` quantile (:data:`FAMILY_ALPHA`, Bonferroni over the elements
and the bulk/folded pair) and :math:`S` is the sum of the chains' own ESS (which, unlike
the joint ESS, chains that disagree do not lower; at most the variable's median, since a
single element's estimate is noisy): a well-mixed variable is flagged with
probability about :math:`\alpha` whatever its size, and a scalar keeps the usual 1.01.
A vector is also flagged when the median of its elements' :math:`X` passes the
:math:`1 - \alpha` quantile (:func:`drift`: a shift shared by all elements, as a
location the data do not identify makes). Bulk ESS below :data:`ESS_MIN_PER_CHAIN` per
chain is flagged (for a vector, whose ESS estimates scatter, its median), and so is any
divergent transition, with the advice to reparameterise.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from bayesldp._validation import as_array
from bayesldp.errors import ConvergenceWarning

__all__ = ["convergence_info", "rhat_ess"]

#: The usual limit on :math:`\hat R` (Vehtari et al. 2021), kept as the floor of every
#: variable's limit.
RHAT_MAX = 1.01
#: Least bulk effective sample size per chain of every diagnosed element.
ESS_MIN_PER_CHAIN = 100
#: Chance that a well-mixed fit exceeds any :math:`\hat R` limit (Bonferroni over the
#: judged variables, the elements, the bulk/folded pair and the drift test).
FAMILY_ALPHA = 0.01
#: Variables diagnosed at once by :func:`rhat_ess` (bounds memory).
DIAGNOSTIC_CHUNK = 4096

#: What the warnings advise.
MORE_DRAWS = (
    "run more draws/tune/chains, or look for a parameter the data do not identify "
    "(e.g. a softmax location without an anchor)"
)
REPARAMETERISE = (
    "the sampler met curvature its step cannot follow, so the draws may be biased; "
    "reparameterise the model (user guide, 'When the sampler diverges: reparameterise', "
    "docs/user_guide/bayes.rst): bayesldp.models.dirichlet_simplex for a Dirichlet prior, "
    "a centred or non-centred hierarchical scale (x = mu + tau * z), an anchored softmax; "
    "or raise target_accept"
)


def rhat_limit(
    size: int, ess: np.ndarray, chains: int, draws: int, alpha: float = FAMILY_ALPHA
) -> np.ndarray:
    r"""Return the :math:`\hat R` a well-mixed variable of ``size`` elements stays below.

    Parameters
    ----------
    size : int
        Elements of the variable (the multiplicity).
    ess : numpy.ndarray
        Each element's bulk ESS (all chains).
    chains, draws : int
        Chains and draws per chain.
    alpha : float, default FAMILY_ALPHA
        Chance that a well-mixed variable exceeds its limit.

    Returns
    -------
    numpy.ndarray
        The limit of each element, at least :data:`RHAT_MAX`.
    """
    from scipy.stats import chi2

    splits, half = 2 * chains, max(draws // 2, 1)
    x = chi2.isf(alpha / (2 * max(size, 1)), splits - 1) / (splits - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = np.sqrt(np.maximum(1.0 - 1.0 / half + splits * x / np.asarray(ess), 1.0))
    return np.maximum(np.where(np.isfinite(limit), limit, np.inf), RHAT_MAX)


def ess_problem(ess: np.ndarray, ess_min: float) -> str:
    r"""Say what is wrong with a variable's bulk ESS, or return "" when nothing is.

    A scalar needs ``ess_min``. A vector of many elements estimates each ESS with
    noise (by a factor of several for autocorrelated chains), so its smallest falls
    below any fixed floor by chance: it needs a median of ``ess_min`` (an element far
    below the others is caught by its :math:`\hat R`).

    Parameters
    ----------
    ess : numpy.ndarray
        Each element's bulk ESS.
    ess_min : float
        The least acceptable ESS.

    Returns
    -------
    str
        The problem, e.g. ``"= 35 below 200"``, or ``""``.
    """
    ess = np.asarray(ess, dtype=float).ravel()
    if not np.isfinite(ess).any():
        return ""
    if ess.size == 1:
        return f"= {ess[0]:.0f} below {ess_min:.0f}" if ess[0] < ess_min else ""
    median = float(np.nanmedian(ess))
    return f"median {median:.0f} below {ess_min:.0f}" if median < ess_min else ""


def drift(rhat: np.ndarray, ess: np.ndarray, chains: int, draws: int) -> float:
    r"""Return the median over a vector's elements of :math:`X` in the module's formula.

    Under good mixing each element's :math:`X = (\hat R^2 - 1 + 1/N) S / M` is about
    :math:`\chi^2_{M-1} / (M - 1)`, median 0.79 for two chains; a shift shared by the
    elements of one chain (a location the data do not identify, which every element
    follows) raises them all together, which the median shows while no single element
    passes its own limit.

    Parameters
    ----------
    rhat, ess : numpy.ndarray
        Each element's :math:`\hat R` and the ESS its limit uses.
    chains, draws : int
        Chains and draws per chain.

    Returns
    -------
    float
        The median of :math:`X`.
    """
    splits, half = 2 * chains, max(draws // 2, 1)
    x = (np.asarray(rhat) ** 2 - 1.0 + 1.0 / half) * np.asarray(ess) / splits
    return float(np.nanmedian(x)) if np.isfinite(x).any() else 0.0


def convergence_info(
    idata,
    names: list[str],
    stacklevel: int = 3,
    checked: list[str] | None = None,
    kernel: str = "NUTS",
) -> dict:
    r"""Diagnose ``names`` in ``idata``; warn (:class:`ConvergenceWarning`) on a problem.

    A variable is summarised by its worst element (largest :math:`\hat R`, smallest
    bulk ESS). See the module's docstring for the rule.

    Parameters
    ----------
    idata : arviz.InferenceData
        The sampler's output, with ``sample_stats``.
    names : list of str
        Posterior variables to diagnose.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`.
    checked : list of str, optional
        The variables the rule judges (by default all of ``names``); the others are
        only reported (e.g. deterministic functions of one free scalar, which would
        repeat its verdict).
    kernel : str, default "NUTS"
        The sampler's kernel, named in the warning.

    Returns
    -------
    dict
        ``r_hat``, ``r_hat_limit`` and ``ess_bulk`` (by name), ``divergences``,
        ``ess_min`` and ``warnings`` (the problems found, as the warning states them).
    """
    posterior = idata.posterior
    chains, draws = int(posterior.sizes["chain"]), int(posterior.sizes["draw"])
    ess_min = ESS_MIN_PER_CHAIN * chains
    info: dict[str, Any] = {"r_hat": {}, "r_hat_limit": {}, "ess_bulk": {}}
    problems = []
    # FAMILY_ALPHA is the chance that a well-mixed fit warns at all: shared by the judged
    # variables and, for vectors, the two R-hat tests (each element; a shared drift)
    judged = [n for n in names if checked is None or n in checked]
    tests = sum(2 if posterior[n].values[0, 0].size > 1 else 1 for n in judged)
    alpha = FAMILY_ALPHA / max(tests, 1)
    for name in names:
        values = np.asarray(posterior[name].values, dtype=np.float64)
        parts = {k: v.ravel() for k, v in rank_parts(values).items()}
        bulk, folded, ess = parts["r_hat_bulk"], parts["r_hat_folded"], parts["ess_bulk"]
        rhat = np.where(folded > bulk, folded, bulk)
        # each R-hat is judged against the ESS of the draws it is computed from (the
        # bulk's for the bulk R-hat, the folded draws' for the folded one): the chains'
        # own (the sum of each chain's), which a disagreement between the chains does
        # not lower as it lowers the joint one; at most the variable's median, since an
        # element's ESS estimate is noisy and one overestimated would make its limit
        # too strict
        used = {"ess_bulk": ess, "ess_folded": parts["ess_folded"]}
        if chains > 1:
            per_chain = [rank_parts(values[c : c + 1]) for c in range(chains)]
            for key in used:
                own = np.sum([p[key].ravel() for p in per_chain], axis=0)
                finite = np.isfinite(own).any()
                used[key] = np.minimum(own, np.nanmedian(own)) if finite else own
        ess_used = used["ess_bulk"]
        limits = {
            "bulk": rhat_limit(rhat.size, used["ess_bulk"], chains, draws, alpha),
            "folded": rhat_limit(rhat.size, used["ess_folded"], chains, draws, alpha),
        }
        # a NaN folded R-hat (constant folded draws) leaves the bulk one, as in ArviZ
        bulk_excess = bulk - limits["bulk"]
        folded_excess = np.where(np.isnan(folded), -np.inf, folded - limits["folded"])
        is_bulk = ~(folded_excess > bulk_excess)
        excess = np.where(is_bulk, bulk_excess, folded_excess)
        limit = np.where(is_bulk, limits["bulk"], limits["folded"])
        worst = int(np.nanargmax(excess)) if np.isfinite(excess).any() else 0
        info["r_hat"][name] = float(np.nanmax(rhat)) if np.isfinite(rhat).any() else np.nan
        # the limit of the element with the largest R-hat (the larger of its two limits)
        top = int(np.nanargmax(rhat)) if np.isfinite(rhat).any() else 0
        info["r_hat_limit"][name] = float(max(limits["bulk"][top], limits["folded"][top]))
        info["ess_bulk"][name] = float(np.nanmin(ess)) if np.isfinite(ess).any() else np.nan
        if checked is not None and name not in checked:
            continue
        over = excess > 0
        if chains > 1 and over.any():
            which = "r_hat" if is_bulk[worst] else "folded r_hat"
            value = bulk[worst] if is_bulk[worst] else folded[worst]
            problems.append(
                f"{which}({name}) = {value:.3f} above its limit {limit[worst]:.3f}"
                + (f" ({int(over.sum())} of {rhat.size} elements)" if rhat.size > 1 else "")
            )
        if chains > 1 and rhat.size > 1:
            from scipy.stats import chi2

            shared = drift(bulk, ess_used, chains, draws)
            if shared > chi2.isf(alpha, 2 * chains - 1) / (2 * chains - 1):
                problems.append(
                    f"r_hat({name}): its elements drift together (median X {shared:.1f})"
                )
        low = ess_problem(ess, ess_min)
        if low:
            problems.append(f"ess_bulk({name}) {low}")
    divergences = int(idata.sample_stats["diverging"].sum())
    info["divergences"] = divergences
    info["ess_min"] = ess_min
    messages = []
    if problems:
        messages.append(f"poor {kernel} convergence: " + ", ".join(problems) + "; " + MORE_DRAWS)
    if divergences:
        total = int(idata.sample_stats["diverging"].size)
        messages.append(f"{divergences} divergent transitions of {total}: {REPARAMETERISE}")
    info["warnings"] = messages
    for message in messages:
        warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel)
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


def rank_parts(draws) -> dict[str, np.ndarray]:
    """Return the bulk and folded rank-normalised split R-hat of each element, and their ESS.

    ``r_hat_bulk`` is the split R-hat of the rank-normalised draws, ``r_hat_folded`` that
    of the rank-normalised draws folded about their median (ArviZ's R-hat is the larger
    of the two); ``ess_bulk`` is Geyer's ESS of the rank-normalised draws (ArviZ's bulk
    ESS), ``ess_folded`` that of the folded ones: how many independent draws the
    chains' spread is worth. HMC's draws are often antithetic in location (a bulk ESS
    above the number of draws) but not in spread, so the two differ.

    Parameters
    ----------
    draws : array_like
        Shape ``(chain, draw, ...)``. R-hat needs 2 chains and all need 4 draws, else NaN.

    Returns
    -------
    dict of str to numpy.ndarray
        Each of shape ``draws.shape[2:]``; NaN for an element with a non-finite draw.
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
    keys = ("r_hat_bulk", "r_hat_folded", "ess_bulk", "ess_folded")
    out = {key: np.full(size, np.nan) for key in keys}
    two_chains = x.shape[0] >= 2

    def diagnose(block: tuple[slice, np.ndarray]) -> None:
        part, split = block
        with np.errstate(divide="ignore", invalid="ignore"):
            flat = split.reshape(split.shape[0], -1)
            finite = np.isfinite(flat).all(axis=1)
            z = _z_scale(split)
            constant = flat.max(axis=1) - flat.min(axis=1) < np.finfo(float).resolution
            folded = _z_scale(np.abs(split - np.median(flat, axis=1)[:, None, None]))
            for key, values in (("ess_bulk", z), ("ess_folded", folded)):
                ess = np.where(constant, flat.shape[1], _geyer_ess(values))
                out[key][part] = np.where(finite, ess, np.nan)
            if two_chains:
                out["r_hat_bulk"][part] = np.where(finite, _split_rhat(z), np.nan)
                out["r_hat_folded"][part] = np.where(finite, _split_rhat(folded), np.nan)

    # blocks are independent and NumPy's sorts and FFTs release the GIL: one thread per
    # core, a wave of blocks at a time (bounded memory)
    workers = max(1, min(os.cpu_count() or 1, -(-size // DIAGNOSTIC_CHUNK)))
    blocks = _chunks(x)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while wave := list(itertools.islice(blocks, workers)):
            list(pool.map(diagnose, wave))
    return {key: value.reshape(x.shape[2:]) for key, value in out.items()}


def rhat_ess(draws) -> tuple[np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat and bulk ESS of every element (Vehtari et al. 2021).

    The same numbers as ``arviz.rhat(..., method="rank")`` (the larger of the bulk and
    the folded R-hat) and ``arviz.ess(..., method="bulk")`` (Geyer's initial monotone
    sequence on the rank-normalised split chains), computed for all elements at once,
    in blocks of :data:`DIAGNOSTIC_CHUNK` elements (one thread per core), instead of
    ArviZ's loop over the elements (:func:`rank_parts` gives the parts).

    Parameters
    ----------
    draws : array_like
        Shape ``(chain, draw, ...)``. R-hat needs 2 chains and both need 4 draws, else NaN.

    Returns
    -------
    r_hat, ess_bulk : numpy.ndarray
        Shape ``draws.shape[2:]`` each; NaN for an element with a non-finite draw.
    """
    parts = rank_parts(draws)
    bulk, folded = parts["r_hat_bulk"], parts["r_hat_folded"]
    # ArviZ's max(bulk, folded): a NaN folded R-hat (constant folded draws) keeps bulk
    return np.where(folded > bulk, folded, bulk), parts["ess_bulk"]


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
