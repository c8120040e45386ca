r"""Solving a formulated problem with cvxpy: solver options, polishing, failure and ``info``.

A solver error, or a status with no solution (infeasible, unbounded), raises
:class:`SolverFailedError`. A status other than ``"optimal"`` that comes with a point
(``"optimal_inaccurate"``, ``"user_limit"``) raises too, unless polishing from that
point passes the KKT check: then the verified point is returned with
``info["status"] == "optimal"`` and the solver's status in ``info["solver_status"]``.
A polished point that fails the check raises whatever the solver's status was. With
``polish=False`` the solver's answer is returned exactly as it gave it, and any status
other than ``"optimal"`` raises. When polishing, Clarabel is given ``accept_unknown``
so that a solve stopped by ``InsufficientProgress`` still returns its point (as
``"optimal_inaccurate"``) for polishing.
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from bayesldp._validation import check_bool
from bayesldp.convex._polish import polish_point
from bayesldp.convex._terms import ObjectiveTerms, residuals
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement

logger = logging.getLogger(__name__)

#: Solver used when ``solver=None``: Clarabel, an interior-point method for QPs and
#: second-order cones; for the exponential cones of ``mle``, SCS, on which Clarabel
#: often stops early.
DEFAULT_SOLVERS: dict[str, str] = {"cls": "CLARABEL", "mle-apx": "CLARABEL", "mle": "SCS"}

#: The solvers' own names of the accuracy options ``tol`` sets.
TOLERANCE_OPTIONS: dict[str, tuple[str, ...]] = {
    "CLARABEL": ("tol_gap_abs", "tol_gap_rel", "tol_feas", "tol_ktratio"),
    "OSQP": ("eps_abs", "eps_rel"),
    "SCS": ("eps_abs", "eps_rel"),
    "HIGHS": (
        "primal_feasibility_tolerance",
        "dual_feasibility_tolerance",
        "ipm_optimality_tolerance",
    ),
}


class SolverFailedError(RuntimeError):
    """The solver did not reach a verified optimum (or failed outright).

    Parameters
    ----------
    method : str
        The post-processing method being solved.
    solver : str
        Name of the solver.
    status : str
        The solver's cvxpy status.
    detail : str, optional
        What went wrong, appended to the message.

    Attributes
    ----------
    solver : str
        Name of the solver.
    status : str
        The solver's cvxpy status, e.g. ``"optimal_inaccurate"`` or ``"user_limit"``
        (``"optimal"`` when the solver claimed optimality but the polished point
        failed the KKT check).
    method : str
        The post-processing method being solved.
    """

    def __init__(self, method: str, solver: str, status: str, detail: str = "") -> None:
        self.method, self.solver, self.status = method, solver, status
        msg = f"{method} (cvxpy): solver {solver} ended with status {status!r}"
        if status != "optimal":
            msg += ", not 'optimal'"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


def check_solver(solver: str | None, method: str) -> str:
    """Return the solver's upper-case name (the method's default for ``None``), or raise.

    Parameters
    ----------
    solver : str or None
        An installed cvxpy solver, any case.
    method : str
        The problem, for its default solver.

    Returns
    -------
    str
        The solver's name as cvxpy spells it.

    Raises
    ------
    ValueError
        Not a string, or not installed.
    """
    if solver is None:
        return DEFAULT_SOLVERS[method]
    if not isinstance(solver, str):
        raise ValueError(f"solver must be a string or None, got {solver!r}")
    name = solver.upper()
    installed = cp.installed_solvers()
    if name not in installed:
        raise ValueError(
            f"solver {solver!r} is not installed; choose one of {', '.join(installed)}"
        )
    return name


def solver_options(
    solver: str, tol: float | None, max_iter: int | None, extra: dict[str, Any] | None
) -> dict[str, Any]:
    """Translate the common ``tol`` / ``max_iter`` into the solver's own option names.

    Parameters
    ----------
    solver : str
        The solver's name.
    tol : float or None
        Given to every accuracy option of the solver (:data:`TOLERANCE_OPTIONS`).
    max_iter : int or None
        The solver's iteration limit.
    extra : dict or None
        Options passed on unchanged (they override the translated ones).

    Returns
    -------
    dict
        Keyword arguments for ``Problem.solve``.

    Raises
    ------
    ValueError
        A bad ``tol``, ``max_iter`` or ``extra``, or ``tol`` for a solver without a
        mapping.
    """
    if tol is not None and not (isinstance(tol, int | float) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number or None, got {tol!r}")
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be a positive integer or None, got {max_iter!r}")
    if extra is not None and not isinstance(extra, dict):
        raise ValueError(f"solver_options must be a dict or None, got {type(extra).__name__}")
    opts: dict[str, Any] = {}
    if tol is not None:
        names = TOLERANCE_OPTIONS.get(solver)
        if names is None:
            raise ValueError(
                f"tol is not mapped for solver {solver}; pass its own options in solver_options"
            )
        opts.update(dict.fromkeys(names, float(tol)))
    if max_iter is not None:
        key = {"SCS": "max_iters", "HIGHS": "ipm_iteration_limit"}.get(solver, "max_iter")
        opts[key] = int(max_iter)
    if extra:
        opts.update(extra)
    return opts


def simplex_variable(d: int) -> tuple[cp.Variable, cp.Constraint, cp.Constraint]:
    """Return the variable ``f`` and the constraints ``sum(f) == 1`` and ``f >= 0``."""
    f = cp.Variable(d, name="f")
    return f, cp.sum(f) == 1, f >= 0


def solve(
    method: str,
    m: Measurement,
    problem: cp.Problem,
    f: cp.Variable,
    sum_constraint: cp.Constraint,
    nonneg_constraint: cp.Constraint,
    *,
    solver: str | None,
    tol: float | None,
    max_iter: int | None,
    verbose: bool,
    extra_options: dict[str, Any] | None,
    polish: bool,
    likelihood: str = "auto",
    **extra_info: Any,
) -> Estimate:
    """Solve ``problem``, polish and check its answer, and wrap it in an Estimate.

    Parameters
    ----------
    method : str
        The problem's name (:data:`bayesldp.convex._terms.PROBLEMS`).
    m : Measurement
        Raw oracle output.
    problem : cvxpy.Problem
        The formulation.
    f : cvxpy.Variable
        Its frequency vector.
    sum_constraint, nonneg_constraint : cvxpy.Constraint
        ``sum(f) == 1`` and ``f >= 0`` (their duals are reported).
    solver, tol, max_iter, verbose, polish
        As in :func:`bayesldp.convex.cls`.
    extra_options : dict or None
        The caller's ``solver_options``.
    likelihood : str, default "auto"
        For ``mle``, the support-count likelihood.
    **extra_info
        Added to ``info``.

    Returns
    -------
    Estimate
        The (polished) frequencies; ``info`` as :func:`bayesldp.convex.cls` describes.

    Raises
    ------
    SolverFailedError
        The solver failed, or no verified optimum was reached (module notes).
    """
    name = check_solver(solver, method)
    polish = check_bool(polish, "polish")
    opts = solver_options(name, tol, max_iter, extra_options)
    if polish and name == "CLARABEL":
        opts.setdefault("accept_unknown", True)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # cvxpy warns "Solution may be inaccurate"; such a status is checked below.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=name, verbose=bool(verbose), **opts)
    except cp.error.SolverError as exc:
        status = problem.status or "solver_error"
        raise SolverFailedError(method, name, status, str(exc)) from exc
    solved = time.perf_counter()
    solver_status = str(problem.status)
    if f.value is None or (not polish and solver_status != cp.OPTIMAL):
        raise SolverFailedError(
            method,
            name,
            solver_status,
            "no solution is returned; raise max_iter, loosen tol or choose another solver",
        )
    raw = np.asarray(f.value, dtype=np.float64).reshape(-1)
    nu_raw = sum_constraint.dual_value
    lam_raw = nonneg_constraint.dual_value
    solver_duals: dict[str, Any] = {
        "sum": float(np.asarray(nu_raw).reshape(-1)[0]) if nu_raw is not None else np.nan,
        "nonneg": (
            np.asarray(lam_raw, dtype=np.float64).reshape(-1)
            if lam_raw is not None
            else np.full(raw.size, np.nan)
        ),
    }
    terms = ObjectiveTerms(method, m, likelihood)
    if polish:
        lam0 = np.nan_to_num(solver_duals["nonneg"], nan=0.0)
        result = polish_point(terms, raw, solver_duals["sum"], lam0)
        if not result.verified:
            logger.info("%s (cvxpy, %s): polishing failed: %s", method, name, result.reason)
            raise SolverFailedError(
                method,
                name,
                solver_status,
                f"the polished point failed the KKT check: {result.reason}; "
                "tighten tol, raise max_iter or choose another solver "
                "(polish=False returns the solver's answer unchecked)",
            )
        freqs = result.frequencies
        duals = {"sum": result.nu, "nonneg": result.lam}
        polish_info: dict[str, Any] | None = {
            "verified": True,
            "support_size": result.support_size,
            "rounds": result.rounds,
            "moved": result.moved,
            "newton_iterations": result.newton_iterations,
            "distance": float(np.abs(freqs - raw).max()),
        }
    else:
        freqs, duals, polish_info = raw, solver_duals, None
    wall = time.perf_counter() - start
    stats = problem.solver_stats
    info = {
        "status": cp.OPTIMAL,
        "solver_status": solver_status,
        "solver": stats.solver_name if stats is not None else name,
        "objective": terms.value(freqs),
        "solver_objective": float(problem.value) if problem.value is not None else np.nan,
        "duals": duals,
        "solver_duals": solver_duals,
        "kkt_residuals": residuals(terms, freqs, duals),
        "polished": polish,
        "polish": polish_info,
        "solve_time": getattr(stats, "solve_time", None),
        "setup_time": getattr(stats, "setup_time", None),
        "polish_time": time.perf_counter() - solved if polish else 0.0,
        "wall_time": wall,
        "iterations": getattr(stats, "num_iters", None),
        "tol": tol,
        "solver_options": opts,
        "min_frequency": float(freqs.min()),
        "sum_error": float(freqs.sum() - 1.0),
        "clipped": False,
        **extra_info,
    }
    return Estimate(frequencies=freqs, method=method, measurement=m, info=info)
