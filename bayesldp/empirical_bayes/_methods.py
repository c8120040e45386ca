r"""The two methods: ``eb-npmle`` (posterior means under the NPMLE prior) and ``oracle-bayes``."""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from bayesldp._threads import limit_threads
from bayesldp._total import condition_on_total
from bayesldp._validation import (
    check_bool,
    check_choice,
    check_counts,
    check_float,
    check_int,
    check_rng,
    require,
)
from bayesldp.empirical_bayes._draws import BootstrapPosteriorDraws, DiscretePosteriorDraws
from bayesldp.empirical_bayes._grid import LIKELIHOODS
from bayesldp.empirical_bayes._likelihood import CountLikelihood, count_likelihood
from bayesldp.empirical_bayes._npmle import SOLVERS, PriorSettings, fit_prior
from bayesldp.empirical_bayes._posterior import (
    PosteriorTable,
    TiltedPosterior,
    tilted_posterior,
)
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement

logger = logging.getLogger(__name__)

#: Kinds of posterior draws behind intervals.
DRAW_KINDS = ("bootstrap", "plug-in")
#: Prior weight given to every grid atom when the NPMLE alone cannot be tilted to n.
PRIOR_FLOOR = 1e-9


def posterior_frequencies(post: TiltedPosterior, n: int) -> np.ndarray:
    """Posterior means divided by ``n``, renormalised to sum to exactly 1."""
    f = post.item_means() / n
    return f / f.sum()


def condition_prior_on_total(
    lik: CountLikelihood, weights: np.ndarray, n: int
) -> tuple[TiltedPosterior, np.ndarray]:
    """Item posteriors conditioned on the total, and the frequencies they give.

    The exponential tilt of the fitted prior (:func:`tilted_posterior`). When no tilt of
    its atoms reaches ``n`` (they all lie on one side of ``n / d``, e.g. every support
    count is 0, or the likelihood confines the items below it), every grid atom is
    first given prior weight :data:`PRIOR_FLOOR`; failing that, the untilted posterior
    means are moved onto the total in proportion to their variances, keeping them
    non-negative (:func:`bayesldp._total.condition_on_total`; shared equally if they are
    all 0). Every fallback warns.

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix of the observed (corrected) counts.
    weights : numpy.ndarray
        The fitted prior's weights on ``lik.atoms``.
    n : int
        Number of users.

    Returns
    -------
    tuple of (TiltedPosterior, numpy.ndarray)
        The posteriors behind the draws, and the frequencies (summing to 1).
    """
    try:
        post = tilted_posterior(lik, weights, total=float(n))
        return post, posterior_frequencies(post, n)
    except (ValueError, RuntimeError) as exc:
        reason = str(exc)
    floored = (1 - PRIOR_FLOOR) * weights + PRIOR_FLOOR / weights.size
    try:
        post = tilted_posterior(lik, floored, total=float(n))
        how = f"every grid atom was given prior weight {PRIOR_FLOOR:g}"
        frequencies = posterior_frequencies(post, n)
    except (ValueError, RuntimeError):
        post = tilted_posterior(lik, weights, total=None)
        means = post.item_means()
        moved = condition_on_total(means, post.item_variances(), float(n))
        frequencies = moved / moved.sum()
        if means.sum() > 0:
            how = "the untilted posterior means were moved onto the total (variance-weighted)"
        else:  # every item's posterior is a point at count 0: nothing to share n by
            how = "every posterior mean is 0, so the total was shared equally"
    warnings.warn(f"eb-npmle: {reason}; {how}", RuntimeWarning, stacklevel=3)
    return post, frequencies


def eb_npmle(
    m: Measurement,
    *,
    likelihood: str = "binomial",
    grid_spacing: float = 0.25,
    grid_growth: float = 0.02,
    grid_window: float = 8.0,
    correct_total: bool = True,
    solver: str = "sqp",
    max_iter: int | None = None,
    tol: float = 1e-8,
    n_draws: int = 1000,
    uncertainty: str = "bootstrap",
    n_boot: int = 40,
    rng: np.random.Generator | int | None = None,
) -> Estimate:
    r"""Nonparametric empirical Bayes (``eb-npmle``): posterior means under the NPMLE prior.

    .. math::

        x_v \overset{iid}{\sim} \hat G, \quad
        c_v \mid x_v \sim \mathrm{Binomial}(n, q + (p-q) x_v / n), \quad
        f'_v = \mathbb E_{\hat G_\lambda}[x_v \mid c_v] / n,
        \quad \hat G_\lambda(u) \propto \hat G(u) e^{\lambda u},
        \ \textstyle\sum_v f'_v = 1,

    where :math:`\hat G` is the Kiefer-Wolfowitz NPMLE of the counts' distribution on a
    grid (:func:`count_grid`), fitted to the support counts corrected for the known
    total noise, and :math:`\lambda` conditions the counts on their total by
    exponential tilting (:func:`tilted_posterior`). See the package notes of
    :mod:`bayesldp.empirical_bayes`.

    Parameters
    ----------
    m : Measurement
        Oracle output (support counts, ``n``, ``p``, ``q``).
    likelihood : {"binomial", "gaussian"}
        Law of a support count given the true count (:func:`count_likelihood`).
    grid_spacing : float, default 0.25
        Largest grid step, in noise standard deviations (:func:`count_grid`).
    grid_growth : float, default 0.02
        Relative grid step near zero.
    grid_window : float, default 8.0
        Grid covers counts within this many noise standard deviations of the data.
    correct_total : bool, default True
        Take the known total noise out of the support counts first (each count moved
        by its share of it, in proportion to its variance); ``False`` leaves it all to
        the tilt.
    solver : {"sqp", "em", "cvxpy"}
        NPMLE solver (:func:`npmle`).
    max_iter : int, optional
        Solver iterations (:func:`npmle`).
    tol : float, default 1e-8
        Relative optimality gap at which the solver stops.
    n_draws : int, default 1000
        Posterior draws behind ``Estimate.interval(..., method="posterior")``, the
        heavy hitters and the top-k probabilities (generated on demand). The default
        interval is the calibrated normal interval of the raw estimate: the posterior
        intervals undercover sums over sets (paper/intervals.md).
    uncertainty : {"bootstrap", "plug-in"}
        Where the posterior draws come from. ``plug-in``: each
        item's discrete posterior under :math:`\hat G`, conditioned on the total; it
        treats :math:`\hat G` as known, so an item alone in its region of counts (the
        largest items), on which the NPMLE puts an atom at the item's own estimate,
        gets an interval of zero width. ``bootstrap`` (default): the same, averaged
        over ``n_boot`` parametric-bootstrap refits of :math:`\hat G`, fitted when
        draws are first asked for.
    n_boot : int, default 40
        Bootstrap replicates for ``uncertainty="bootstrap"``.
    rng : numpy.random.Generator, int or None
        Seeds the posterior draws (same seed, same draws).

    Returns
    -------
    Estimate
        Method ``"eb-npmle"``: non-negative frequencies summing to 1; ``uncertainty``
        the posterior draws; ``info`` holds the grid size, the support, the
        log-likelihood, the optimality gap, the tilt and timings.

    Raises
    ------
    ValueError
        Bad arguments (the message names the argument).

    Warns
    -----
    RuntimeWarning
        When no tilt of the fitted prior makes the posterior means add up to ``n`` (the
        atoms all above or all below ``n / d``, e.g. every support count 0); the
        fallback used is named.
    """
    start = time.perf_counter()
    m = check_measurement(m)
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    check_choice(solver, SOLVERS, "solver")
    check_choice(uncertainty, DRAW_KINDS, "uncertainty")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    settings = PriorSettings(
        likelihood=likelihood,
        grid_spacing=check_float(grid_spacing, "grid_spacing", minimum=0, strict_minimum=True),
        grid_growth=check_float(grid_growth, "grid_growth", minimum=0, strict_minimum=True),
        grid_window=check_float(grid_window, "grid_window", minimum=0, strict_minimum=True),
        correct_total=check_bool(correct_total, "correct_total"),
        solver=solver,
        max_iter=None if max_iter is None else check_int(max_iter, "max_iter", minimum=1),
        tol=check_float(tol, "tol", minimum=0, strict_minimum=True),
    )
    rng = check_rng(rng)
    with limit_threads(1, user_api="blas"):
        fit, lik = fit_prior(m, settings)
        solved = time.perf_counter()
        post, frequencies = condition_prior_on_total(lik, fit.weights, m.n)
        table = PosteriorTable.from_posterior(post)
    seed = int(rng.integers(2**63 - 1))
    draws: DiscretePosteriorDraws | BootstrapPosteriorDraws
    if uncertainty == "plug-in":
        draws = DiscretePosteriorDraws(table, m.n, seed, n_draws, "plug-in posterior")
    else:
        corrected = lik.support_counts[lik.item_row]
        draws = BootstrapPosteriorDraws(m, corrected, table, settings, n_boot, seed, n_draws)
    info = {
        "likelihood": likelihood,
        "grid_size": int(lik.atoms.size),
        "likelihood_rows": int(lik.matrix.shape[0]),
        "support_size": int(fit.support.size),
        "loglik": fit.loglik,
        "gap": fit.gap,
        "converged": fit.converged,
        "solver": solver,
        "iterations": fit.iterations,
        "correct_total": settings.correct_total,
        "tilt": post.tilt,
        "tilt_shift_sigma": post.tilt * (m.sigma * m.n),
        "uncertainty": uncertainty,
        "seconds_solver": fit.seconds,
        "seconds_posterior": time.perf_counter() - solved,
        "seconds": time.perf_counter() - start,
        "prior_atoms": lik.atoms[fit.support].tolist(),
        "prior_weights": fit.weights[fit.support].tolist(),
    }
    logger.debug(
        "eb-npmle: K=%d, U=%d, support=%d, gap=%.2e, tilt=%.3g sigma",
        lik.atoms.size, lik.matrix.shape[0], fit.support.size, fit.gap, info["tilt_shift_sigma"],
    )  # fmt: skip
    return Estimate(
        frequencies=frequencies,
        method="eb-npmle",
        measurement=m,
        info=info,
        uncertainty=draws,
    )


def oracle_bayes(
    m: Measurement,
    *,
    true_counts: np.ndarray | None = None,
    likelihood: str = "binomial",
    n_draws: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> Estimate:
    r"""Compute posterior means with the true count histogram as prior (REFERENCE, NOT A METHOD).

    The prior is the histogram of the *true* counts,
    :math:`G(u) = |\{v : x_v = u\}| / d`, which no one has in practice: this function
    takes the true counts as an argument and exists to measure how close an
    empirical-Bayes method comes to the best any prior-based post-processor could do
    (the "oracle" Bayes rule of the compound decision problem). The likelihood and the
    conditioning on the total (exponential tilting, :func:`tilted_posterior`) are those
    of :func:`eb_npmle`.

    Note that the oracle knows every count exactly: an item whose count no other item
    comes near (the largest items) has a prior atom of its own at its true count, so
    its posterior is that point and its error is zero. No estimator that is not told
    the counts can do that, so the bound is not attainable on such items.

    Parameters
    ----------
    m : Measurement
        The measurement.
    true_counts : array_like of int
        The true counts (length ``d``, summing to ``n``). Required: the keyword has no
        usable default, it only lets a missing value be reported as a ValueError.
    likelihood : {"binomial", "gaussian"}
        As in :func:`eb_npmle`.
    n_draws : int
        Posterior draws (plug-in: the prior is exact).
    rng : numpy.random.Generator, int or None
        Seeds the draws.

    Returns
    -------
    Estimate
        Method ``"oracle-bayes"``, ``info["reference_only"] = True``.

    Raises
    ------
    ValueError
        ``true_counts`` missing, of the wrong length or not summing to ``n``, or other
        bad arguments (the message names the argument).
    """
    m = check_measurement(m)
    require(true_counts, "true_counts", "oracle-bayes is a reference that takes the true counts")
    x = check_counts(true_counts, "true_counts", length=m.domain_size)
    if int(x.sum()) != m.n:
        raise ValueError(f"true_counts must sum to n={m.n}, got {int(x.sum())}")
    check_choice(likelihood, LIKELIHOODS, "likelihood")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    rng = check_rng(rng)
    start = time.perf_counter()
    atoms, mult = np.unique(x, return_counts=True)
    with limit_threads(1, user_api="blas"):
        lik = count_likelihood(m, atoms.astype(np.float64), likelihood)
        weights = mult / mult.sum()
        # a single atom is already consistent (d times the atom is n): nothing to tilt
        post = tilted_posterior(lik, weights, total=float(m.n))
        frequencies = posterior_frequencies(post, m.n)
        table = PosteriorTable.from_posterior(post)
    draws = DiscretePosteriorDraws(
        table, m.n, int(rng.integers(2**63 - 1)), n_draws, "oracle posterior (reference only)"
    )
    info = {
        "reference_only": True,
        "note": "takes the true counts: a bound for experiments, not a usable method",
        "likelihood": likelihood,
        "prior_atoms": int(atoms.size),
        "tilt": post.tilt,
        "tilt_shift_sigma": post.tilt * m.sigma * m.n,
        "seconds": time.perf_counter() - start,
    }
    return Estimate(
        frequencies=frequencies,
        method="oracle-bayes",
        measurement=m,
        info=info,
        uncertainty=draws,
    )
