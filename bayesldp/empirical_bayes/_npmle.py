r"""The Kiefer-Wolfowitz NPMLE of the counts' distribution on the grid, by three solvers.

.. math::

    \hat w = \arg\max_{w \ge 0,\ \sum_k w_k = 1}\ \sum_v \log \sum_k L_{vk} w_k .

``"sqp"`` (the default) is the active-set SQP of :mod:`bayesldp.empirical_bayes._sqp`.
``"em"`` is the EM algorithm accelerated by SQUAREM; it converges, but far too slowly
to be useful on large problems, and is kept as an independent check. ``"cvxpy"`` hands
the convex problem to a conic solver (the reference).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from bayesldp._threads import limit_threads
from bayesldp._validation import check_choice, check_float, check_int
from bayesldp.empirical_bayes._grid import count_grid
from bayesldp.empirical_bayes._likelihood import (
    CountLikelihood,
    count_likelihood,
    total_corrected_counts,
)
from bayesldp.empirical_bayes._sqp import solve_sqp, start_weights
from bayesldp.measurement import Measurement

#: NPMLE solvers.
SOLVERS = ("sqp", "em", "cvxpy")
#: Default iteration limit of each solver (outer SQP iterations, EM-map evaluations,
#: conic-solver iterations).
DEFAULT_MAX_ITER = {"sqp": 500, "em": 100_000, "cvxpy": 10_000}


@dataclass(frozen=True)
class NPMLEFit:
    r"""A fitted prior on the grid of counts.

    Attributes
    ----------
    weights : numpy.ndarray
        :math:`\hat w`, shape ``(K,)``, non-negative, summing to 1.
    loglik : float
        Marginal log-likelihood at :math:`\hat w` (with every constant).
    gap : float
        :math:`\max_k S_k(\hat w) / d - 1`, an upper bound on
        :math:`(\ell(w^*) - \ell(\hat w)) / d`.
    solver : str
        Which solver produced it.
    iterations : int
        Outer iterations (SQP), EM-map evaluations (EM) or solver iterations (cvxpy).
    seconds : float
        Wall time of the solve.
    converged : bool
        Whether ``gap`` reached the tolerance.
    info : dict
        Solver details.
    """

    weights: np.ndarray
    loglik: float
    gap: float
    solver: str
    iterations: int
    seconds: float
    converged: bool
    info: dict = field(default_factory=dict)

    @property
    def support(self) -> np.ndarray:
        """Indices of the atoms that carry weight."""
        return np.flatnonzero(self.weights > 0)


def em_map(lik: CountLikelihood, w: np.ndarray) -> np.ndarray:
    r"""One EM step: :math:`w_k \leftarrow w_k S_k(w) / d`."""
    z = w * (lik.matrix.T @ (lik.multiplicity / (lik.matrix @ w)))
    return z / z.sum()


def solve_em(lik: CountLikelihood, tol: float, max_iter: int) -> tuple[np.ndarray, int, dict]:
    """EM with SQUAREM acceleration (Varadhan and Roland 2008), as in ``ibu``.

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix.
    tol : float
        Stop when the relative KKT gap is at most ``tol`` (checked every 20 EM maps).
    max_iter : int
        Most EM-map evaluations.

    Returns
    -------
    tuple of (numpy.ndarray, int, dict)
        Weights, EM-map evaluations, and an empty dict.
    """
    w = np.full(lik.atoms.size, 1.0 / lik.atoms.size)
    evals = 0
    next_check = 0
    while evals < max_iter:
        w1 = em_map(lik, w)
        w2 = em_map(lik, w1)
        evals += 2
        r, v = w1 - w, w2 - 2 * w1 + w
        nv = float(np.linalg.norm(v))
        alpha = -float(np.linalg.norm(r)) / nv if nv > 0 else -1.0
        cand = w2
        for _ in range(60):
            if alpha >= -1:
                break
            jump = w - 2 * alpha * r + alpha**2 * v
            if jump.min() > 0:
                jump = em_map(lik, jump / jump.sum())
                evals += 1
                if lik.loglik(jump) >= lik.loglik(w2):
                    cand = jump
                break
            alpha = (alpha - 1) / 2
        w = cand
        if evals >= next_check:
            next_check = evals + 20
            if lik.kkt_gap(w) <= tol:
                break
    return w, evals, {}


def solve_cvxpy(
    lik: CountLikelihood, tol: float, solver: str | None, max_iter: int
) -> tuple[np.ndarray, int, dict]:
    """Hand the NPMLE to a conic solver through cvxpy (imported here, on first use).

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix.
    tol : float
        Given to the solver's gap and feasibility tolerances (Clarabel, SCS).
    solver : str, optional
        ``"CLARABEL"`` (default) or ``"SCS"`` (any other cvxpy solver with its defaults).
    max_iter : int
        The solver's iteration limit.

    Returns
    -------
    tuple of (numpy.ndarray, int, dict)
        Weights (clipped at 0 and renormalised), solver iterations, solver details.

    Raises
    ------
    bayesldp.convex.SolverFailedError
        The solver failed or did not report ``"optimal"``.
    """
    import cvxpy as cp

    from bayesldp.convex import SolverFailedError

    name = (solver or "CLARABEL").upper()
    w = cp.Variable(lik.atoms.size, nonneg=True)
    objective = cp.Maximize((lik.multiplicity / lik.n_items) @ cp.log(lik.matrix @ w))
    prob = cp.Problem(objective, [cp.sum(w) == 1])
    opts: dict = {}
    if name == "CLARABEL":
        opts = {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": max_iter}
    elif name == "SCS":
        opts = {"eps_abs": tol, "eps_rel": tol, "max_iters": max_iter}
    try:
        prob.solve(solver=name, **opts)
    except cp.error.SolverError as exc:
        raise SolverFailedError("eb-npmle", name, "error", str(exc)) from exc
    if prob.status != "optimal":
        raise SolverFailedError("eb-npmle", name, str(prob.status))
    raw = np.asarray(w.value, dtype=np.float64)
    info = {
        "status": prob.status,
        "cvxpy_solver": name,
        "raw_min_weight": float(raw.min()),
        "raw_sum_error": float(raw.sum() - 1),
    }
    # the solver's weights may be slightly negative or off the simplex at its tolerance
    out = np.maximum(raw, 0.0)
    return out / out.sum(), int(prob.solver_stats.num_iters or 0), info


def npmle(
    lik: CountLikelihood,
    *,
    solver: str = "sqp",
    tol: float = 1e-8,
    max_iter: int | None = None,
    cvxpy_solver: str | None = None,
    start: np.ndarray | None = None,
) -> NPMLEFit:
    r"""Kiefer-Wolfowitz NPMLE of the mixing weights on the grid.

    .. math::

        \hat w = \arg\max_{w \ge 0,\ \sum_k w_k = 1}
        \ \sum_v \log \sum_k L_{vk} w_k .

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix (:func:`count_likelihood`).
    solver : {"sqp", "em", "cvxpy"}
        Active-set SQP (fast, default), SQUAREM-accelerated EM, or cvxpy (reference).
    tol : float
        Stop when the relative KKT gap (``lik.kkt_gap``) is at most ``tol`` (for cvxpy:
        the conic solver's tolerances; its answer's gap is reported, not enforced).
    max_iter : int, optional
        Outer SQP iterations (default 500), EM-map evaluations (default 100000), or
        conic-solver iterations (default 10000).
    cvxpy_solver : str, optional
        Conic solver for ``solver="cvxpy"`` (``"CLARABEL"`` by default, or ``"SCS"``).
    start : array_like, optional
        Starting weights for the SQP (non-negative, one per atom); by default the
        histogram of the items' most likely atoms. Every item should have some weight
        within a few noise standard deviations.

    Returns
    -------
    NPMLEFit
        The weights, their log-likelihood and gap, and the solver's report.

    Raises
    ------
    ValueError
        Bad arguments (the message names the argument).

    Warns
    -----
    RuntimeWarning
        When the gap is still above ``tol`` at the end (SQP and EM).
    """
    check_choice(solver, SOLVERS, "solver")
    tol = check_float(tol, "tol", minimum=0, strict_minimum=True)
    if not isinstance(lik, CountLikelihood):
        raise ValueError(f"lik must be a CountLikelihood, got {type(lik).__name__}")
    mult = np.asarray(lik.multiplicity, dtype=np.float64)
    if mult.shape != lik.matrix.shape[:1] or not np.all(np.isfinite(mult)) or mult.min() <= 0:
        raise ValueError(
            "lik.multiplicity must be positive and finite, one per row of lik.matrix "
            "(drop the rows no item has)"
        )
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER[solver]
    else:
        max_iter = check_int(max_iter, "max_iter", minimum=1)
    if start is not None:
        start = np.asarray(start, dtype=np.float64)
        if start.shape != lik.atoms.shape or not np.all(np.isfinite(start)) or start.min() < 0:
            raise ValueError("start must be non-negative finite weights, one per atom")
        if start.sum() <= 0:
            raise ValueError("start must not be all zero")
    elif solver == "sqp":
        start = start_weights(lik, lik.atom_sd)
    began = time.perf_counter()
    if solver == "cvxpy":
        w, iters, info = solve_cvxpy(lik, tol, cvxpy_solver, max_iter)
    else:
        with limit_threads(1, user_api="blas"):
            if solver == "sqp":
                w, iters, info = solve_sqp(lik, tol, max_iter, start)
            else:
                w, iters, info = solve_em(lik, tol, max_iter)
    seconds = time.perf_counter() - began
    gap = lik.kkt_gap(w)
    converged = gap <= tol
    if not converged and solver != "cvxpy":
        warnings.warn(
            f"the NPMLE ({solver}) stopped after {iters} iterations with a relative gap of "
            f"{gap:.2e} (tol={tol:.0e}); raise max_iter",
            RuntimeWarning,
            stacklevel=2,
        )
    return NPMLEFit(
        weights=w,
        loglik=lik.loglik(w),
        gap=gap,
        solver=solver,
        iterations=iters,
        seconds=seconds,
        converged=converged,
        info=info,
    )


@dataclass(frozen=True)
class PriorSettings:
    """How :func:`fit_prior` builds the grid and fits the prior (``eb_npmle``'s options).

    Attributes
    ----------
    likelihood : str
        ``"binomial"`` or ``"gaussian"``.
    grid_spacing, grid_growth, grid_window : float
        The grid's options (:func:`count_grid`).
    correct_total : bool
        Take the known total noise out of the support counts first.
    solver : str
        NPMLE solver.
    max_iter : int or None
        Solver iterations (None: the solver's default).
    tol : float
        Relative optimality gap at which the solver stops.
    """

    likelihood: str = "binomial"
    grid_spacing: float = 0.25
    grid_growth: float = 0.02
    grid_window: float = 8.0
    correct_total: bool = True
    solver: str = "sqp"
    max_iter: int | None = None
    tol: float = 1e-8


def fit_prior(m: Measurement, settings: PriorSettings) -> tuple[NPMLEFit, CountLikelihood]:
    """Grid, corrected counts, likelihood matrix and NPMLE, as ``eb_npmle`` fits them.

    Parameters
    ----------
    m : Measurement
        The measurement.
    settings : PriorSettings
        The (checked) options.

    Returns
    -------
    tuple of (NPMLEFit, CountLikelihood)
        The fitted prior and the likelihood matrix it was fitted to.
    """
    grid = count_grid(
        m,
        spacing=settings.grid_spacing,
        growth=settings.grid_growth,
        window=settings.grid_window,
        likelihood=settings.likelihood,
    )
    counts = total_corrected_counts(m, settings.likelihood) if settings.correct_total else None
    lik = count_likelihood(m, grid, settings.likelihood, counts)
    fit = npmle(lik, solver=settings.solver, tol=settings.tol, max_iter=settings.max_iter)
    return fit, lik
