"""Exact convex formulations of CLS, MLE-Apx and the exact MLE, solved with cvxpy.

These are the reference solutions the closed forms in :mod:`bayesldp.methods` are
checked against (``postprocess(m, name, backend="cvxpy")``). Every problem has the
probability-simplex constraints

.. math::

    \\sum_v f_v = 1 \\quad (\\text{dual } \\nu, \\text{ key } ``"sum"``), \\qquad
    f_v \\ge 0 \\quad (\\text{duals } \\lambda_v \\ge 0, \\text{ key } ``"nonneg"``),

and, with cvxpy's sign convention, the KKT stationarity condition reads
:math:`\\nabla F(f) + \\nu \\mathbf 1 - \\lambda = 0` (see :func:`kkt_residuals`).

* ``cls``: :math:`F(f) = \\|f - \\tilde f\\|_2^2`, a QP.
* ``mle-apx``: the long paper's Eq. (13),
  :math:`\\sum_v (a_v - b f_v)^2 / (e + g f_v)` with :math:`a_v = c_v/n - q`,
  :math:`b = p - q`, :math:`e = q(1-q)`, :math:`g = (p-q)(1-p-q)`, multiplied by the
  constant :math:`e / b^2` (the same minimiser) so that it reads, with
  :math:`\\kappa = g / e` and :math:`a_v - b f_v = b(\\tilde f_v - f_v)`,

  .. math::

      F(f) = \\sum_v \\frac{(f_v - \\tilde f_v)^2}{1 + \\kappa f_v},

  a weighted CLS whose weights are the ratios :math:`\\sigma^2 / \\sigma_v^2`. Without
  the rescaling the objective's curvature is :math:`b^2/e` (about ``1e-5`` for GRR with
  :math:`\\epsilon = 0.2, d = 4096`) and an interior-point solver stops far from the
  minimiser. Each term is quadratic over linear, written as one rotated second-order
  cone :math:`\\|(2 r_v, t_v - y_v)\\|_2 \\le t_v + y_v` with :math:`r_v = f_v - \\tilde f_v`
  and the affine denominator :math:`y_v = 1 + \\kappa f_v`. :math:`\\kappa` would be
  negative for an oracle with :math:`p + q > 1`; the denominator is positive on the
  whole simplex all the same, since it is :math:`1` at :math:`f_v = 0`,
  :math:`p(1-p)/(q(1-q)) > 0` at :math:`f_v = 1` and affine in between (GRR and SUE
  have :math:`p + q \\le 1`, so :math:`\\kappa \\ge 0` for the oracles here).
  ``info["objective_eq13"]`` gives the value of Eq. (13) itself.
* ``mle``: the oracle's own likelihood. With :math:`w_v = c_v/n` and
  :math:`\\pi_v = q + (p - q) f_v`,

  .. math::

      F(f) = s \\sum_v \\Big[w_v \\log\\frac{w_v}{\\pi_v}
             + (1 - w_v)\\log\\frac{1 - w_v}{1 - \\pi_v}\\Big],
      \\qquad s = \\frac{q(1-q)}{(p-q)^2},

  which is the negative log-likelihood of the product of binomials (OUE, SUE and the
  other non-GRR oracles) divided by :math:`n / s`, shifted by the saturated model's
  value (so the objective is :math:`s / (2n)` times the deviance); for GRR the counts
  are multinomial and the second terms are absent. Terms with a zero weight are left
  out; each logarithm is one exponential cone. The centring at :math:`w_v` and the
  scale :math:`s` (curvature of order one in :math:`f`) are what let the solvers
  converge: Clarabel 0.11 still stops with ``InsufficientProgress`` on many of these
  exponential-cone problems, so the default solver for ``mle`` is SCS.

Solutions are returned exactly as the solver gave them: no clipping, so a frequency
may be negative at the order of the solver's tolerance. ``info["min_frequency"]`` and
``info["sum_error"]`` record how far the returned vector is from the simplex.

A solve that does not end with status ``"optimal"`` (including
``"optimal_inaccurate"``) raises :class:`SolverFailedError`: no inaccurate solution is
returned silently.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import cvxpy as cp
import numpy as np

from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods import likelihood_kind

__all__ = [
    "DEFAULT_SOLVER",
    "DEFAULT_SOLVERS",
    "METHODS",
    "SolverFailedError",
    "cls",
    "gradient",
    "kkt_residuals",
    "mle",
    "mle_apx",
    "objective",
]

#: Solver used when ``solver=None``: Clarabel, an interior-point method for QPs and
#: second-order cones; for the exponential cones of ``mle``, SCS (see the module notes).
DEFAULT_SOLVER = "CLARABEL"
DEFAULT_SOLVERS: dict[str, str] = {"cls": "CLARABEL", "mle-apx": "CLARABEL", "mle": "SCS"}


class SolverFailedError(RuntimeError):
    """The solver did not reach an optimal status (or failed outright).

    Attributes
    ----------
    solver : str
        Name of the solver.
    status : str
        The cvxpy status, e.g. ``"optimal_inaccurate"`` or ``"user_limit"``.
    method : str
        The post-processing method being solved.
    """

    def __init__(self, method: str, solver: str, status: str, detail: str = "") -> None:
        self.method, self.solver, self.status = method, solver, status
        msg = f"{method} (cvxpy): solver {solver} ended with status {status!r}, not 'optimal'"
        if detail:
            msg += f": {detail}"
        super().__init__(msg)


# ---------------------------------------------------------------------------
# Solver options
# ---------------------------------------------------------------------------


def _check_solver(solver: str | None, method: str) -> str:
    if solver is None:
        return DEFAULT_SOLVERS.get(method, DEFAULT_SOLVER)
    if not isinstance(solver, str):
        raise ValueError(f"solver must be a string or None, got {solver!r}")
    name = solver.upper()
    installed = cp.installed_solvers()
    if name not in installed:
        raise ValueError(
            f"solver {solver!r} is not installed; choose one of {', '.join(installed)}"
        )
    return name


def _solver_options(
    solver: str, tol: float | None, max_iter: int | None, extra: dict[str, Any] | None
) -> dict[str, Any]:
    """Translate the common ``tol`` / ``max_iter`` into the solver's own option names."""
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
        tol = float(tol)
        names = {
            "CLARABEL": ("tol_gap_abs", "tol_gap_rel", "tol_feas", "tol_ktratio"),
            "OSQP": ("eps_abs", "eps_rel"),
            "SCS": ("eps_abs", "eps_rel"),
            "HIGHS": (
                "primal_feasibility_tolerance",
                "dual_feasibility_tolerance",
                "ipm_optimality_tolerance",
            ),
        }.get(solver)
        if names is None:
            raise ValueError(
                f"tol is not mapped for solver {solver}; pass its own options in solver_options"
            )
        opts.update(dict.fromkeys(names, tol))
    if max_iter is not None:
        key = {"SCS": "max_iters", "HIGHS": "ipm_iteration_limit"}.get(solver, "max_iter")
        opts[key] = int(max_iter)
    if extra:
        opts.update(extra)
    return opts


def _solve(
    method: str,
    m: Measurement,
    problem: cp.Problem,
    f: cp.Variable,
    sum_constraint: cp.Constraint,
    nonneg_constraint: cp.Constraint,
    solver: str | None,
    tol: float | None,
    max_iter: int | None,
    verbose: bool,
    solver_options: dict[str, Any] | None,
    **extra_info: Any,
) -> Estimate:
    name = _check_solver(solver, method)
    opts = _solver_options(name, tol, max_iter, solver_options)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # cvxpy warns "Solution may be inaccurate"; such a status raises below.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=name, verbose=bool(verbose), **opts)
    except cp.error.SolverError as exc:
        status = problem.status or "solver_error"
        raise SolverFailedError(method, name, status, str(exc)) from exc
    wall = time.perf_counter() - start
    if problem.status != cp.OPTIMAL:
        raise SolverFailedError(
            method,
            name,
            str(problem.status),
            "no solution is returned; raise max_iter, loosen tol or choose another solver",
        )
    freqs = np.asarray(f.value, dtype=np.float64).reshape(-1)
    stats = problem.solver_stats
    info = {
        "status": problem.status,
        "solver": stats.solver_name if stats is not None else name,
        "objective": float(problem.value),
        "duals": {
            "sum": float(np.asarray(sum_constraint.dual_value).reshape(-1)[0]),
            "nonneg": np.asarray(nonneg_constraint.dual_value, dtype=np.float64).reshape(-1),
        },
        "solve_time": getattr(stats, "solve_time", None),
        "setup_time": getattr(stats, "setup_time", None),
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


def _simplex(d: int) -> tuple[cp.Variable, cp.Constraint, cp.Constraint]:
    f = cp.Variable(d, name="f")
    return f, cp.sum(f) == 1, f >= 0


# ---------------------------------------------------------------------------
# The three problems
# ---------------------------------------------------------------------------


def cls(
    m: Measurement,
    solver: str | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    verbose: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> Estimate:
    """CLS: :math:`\\min \\|f - \\tilde f\\|_2^2` s.t. :math:`f \\ge 0, \\sum f = 1`, by cvxpy.

    Parameters
    ----------
    m : Measurement
    solver : str, optional
        Any installed cvxpy solver that handles QPs (``CLARABEL`` by default, ``OSQP``,
        ``SCS``, ``HIGHS``).
    tol : float, optional
        Tolerance given to every accuracy option of the solver (Clarabel's gap,
        feasibility and KKT-ratio tolerances; OSQP's and SCS's ``eps_abs``/``eps_rel``;
        HiGHS's feasibility and IPM tolerances). ``None`` keeps the solver's (or
        cvxpy's) defaults.
    max_iter : int, optional
        Iteration limit of the solver; ``None`` keeps its default.
    verbose : bool, default False
        Let the solver print its log.
    solver_options : dict, optional
        Further options passed to the solver unchanged (they override ``tol``).

    Returns
    -------
    Estimate
        ``info`` holds ``status``, ``solver``, ``objective``, ``duals`` (``"sum"``:
        :math:`\\nu`, ``"nonneg"``: :math:`\\lambda`), ``solve_time``, ``wall_time``,
        ``iterations``, ``min_frequency`` and ``sum_error``.

    Raises
    ------
    SolverFailedError
        If the solver ends with a status other than ``"optimal"``.
    """
    f, total, nonneg = _simplex(m.domain_size)
    ft = m.estimates
    # Expanded, so the QP reaches the solver without auxiliary variables (HiGHS's QP
    # solver reports a solve error on the form with f - f~ as a new variable).
    fit = cp.sum_squares(f) - 2 * (ft @ f) + float(ft @ ft)
    problem = cp.Problem(cp.Minimize(fit), [total, nonneg])
    return _solve("cls", m, problem, f, total, nonneg, solver, tol, max_iter, verbose,
                  solver_options)  # fmt: skip


def _apx_kappa(m: Measurement) -> float:
    """:math:`\\kappa = (p-q)(1-p-q) / (q(1-q))`, the slope of the variance ratio."""
    return (m.p - m.q) * (1 - m.p - m.q) / (m.q * (1 - m.q))


def _apx_scale(m: Measurement) -> float:
    """:math:`q(1-q)/(p-q)^2`: Eq. (13) times this is the objective solved."""
    return m.q * (1 - m.q) / (m.p - m.q) ** 2


def mle_apx(
    m: Measurement,
    solver: str | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    verbose: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> Estimate:
    """MLE-Apx: the exact minimiser of the long paper's Eq. (13) on the simplex.

    .. math::

        \\min_f \\sum_v \\frac{(c_v/n - q - (p-q) f_v)^2}{q(1-q) + (p-q)(1-p-q) f_v}
        \\quad\\text{s.t.}\\quad f \\ge 0,\\ \\sum_v f_v = 1,

    solved in the rescaled form :math:`\\sum_v (f_v - \\tilde f_v)^2 / (1 + \\kappa f_v)`
    with one rotated second-order cone per term (see the module notes). ``info``
    holds the rescaled ``objective``, its duals, and ``objective_eq13``. Options as
    in :func:`cls`; the solver must handle second-order cones (``CLARABEL``, ``SCS``).
    """
    kappa = _apx_kappa(m)
    f, total, nonneg = _simplex(m.domain_size)
    t = cp.Variable(m.domain_size, name="t")
    r = f - m.estimates
    y = 1 + kappa * f
    cone = cp.SOC(t + y, cp.vstack([2 * r, t - y]), axis=0)
    problem = cp.Problem(cp.Minimize(cp.sum(t)), [total, nonneg, cone])
    est = _solve("mle-apx", m, problem, f, total, nonneg, solver, tol, max_iter, verbose,
                 solver_options, kappa=kappa)  # fmt: skip
    est.info["objective_eq13"] = est.info["objective"] / _apx_scale(m)
    return est


def mle(
    m: Measurement,
    likelihood: str = "auto",
    solver: str | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    verbose: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> Estimate:
    """Exact MLE of the oracle's support-count likelihood on the simplex, by cvxpy.

    .. math::

        \\max_f \\sum_v \\big[c_v \\log \\pi_v + (n - c_v) \\log(1 - \\pi_v)\\big],
        \\quad \\pi_v = q + (p-q) f_v, \\quad f \\ge 0,\\ \\sum_v f_v = 1,

    without the :math:`\\log(1-\\pi_v)` terms for the multinomial (GRR) likelihood: the
    same likelihood as :func:`bayesldp.methods.mle`. It is solved as the centred and
    scaled objective of the module notes; ``info["deviance"]`` is twice the gap in
    log-likelihood to the saturated model.

    Parameters
    ----------
    likelihood : {"auto", "multinomial", "binomial"}
        ``auto`` picks multinomial for GRR and binomial otherwise.
    solver : str, optional
        ``None`` means SCS. The solver must handle exponential cones (``SCS``,
        ``CLARABEL``); Clarabel
        0.11 often stops early on these problems, which raises
        :class:`SolverFailedError`.
    tol, max_iter, verbose, solver_options
        As in :func:`cls`.
    """
    kind = likelihood_kind(m, likelihood)
    w1 = m.support_counts / m.n
    scale = _apx_scale(m)
    f, total, nonneg = _simplex(m.domain_size)
    pi = m.q + (m.p - m.q) * f
    pos = np.flatnonzero(w1 > 0)
    divergence = -(w1[pos] @ cp.log(cp.multiply(pi[pos], 1 / w1[pos])))
    if kind == "binomial":
        w0 = 1.0 - w1
        rest = np.flatnonzero(w0 > 0)
        divergence = divergence - w0[rest] @ cp.log(cp.multiply(1 - pi[rest], 1 / w0[rest]))
    problem = cp.Problem(cp.Minimize(scale * divergence), [total, nonneg])
    est = _solve("mle", m, problem, f, total, nonneg, solver, tol, max_iter, verbose,
                 solver_options, likelihood=kind, scale=scale)  # fmt: skip
    est.info["deviance"] = 2 * m.n * est.info["objective"] / scale
    return est


METHODS: dict[str, Callable[..., Estimate]] = {"cls": cls, "mle-apx": mle_apx, "mle": mle}


# ---------------------------------------------------------------------------
# Objectives, gradients and KKT residuals (for checking any candidate solution)
# ---------------------------------------------------------------------------


def objective(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> float:
    """Value of the objective :math:`F(f)` that ``METHODS[method]`` minimises.

    The rescaled forms of the module notes: for ``mle-apx``, Eq. (13) times
    :math:`q(1-q)/(p-q)^2`; for ``mle``, the scaled divergence to the saturated model.
    """
    f = np.asarray(f, dtype=np.float64)
    if method == "cls":
        return float(np.sum((f - m.estimates) ** 2))
    if method == "mle-apx":
        return float(np.sum((f - m.estimates) ** 2 / (1 + _apx_kappa(m) * f)))
    if method == "mle":
        kind = likelihood_kind(m, likelihood)
        w1 = m.support_counts / m.n
        pi = m.q + (m.p - m.q) * f
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(w1 > 0, w1 * np.log(w1 / pi), 0.0).sum()
            if kind == "binomial":
                val += np.where(w1 < 1, (1 - w1) * np.log((1 - w1) / (1 - pi)), 0.0).sum()
        return float(_apx_scale(m) * val)
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


def gradient(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> np.ndarray:
    """Gradient :math:`\\nabla F(f)` of the objective of ``METHODS[method]``."""
    f = np.asarray(f, dtype=np.float64)
    if method == "cls":
        return 2 * (f - m.estimates)
    if method == "mle-apx":
        kappa = _apx_kappa(m)
        x = (f - m.estimates) / (1 + kappa * f)
        return 2 * x - kappa * x**2
    if method == "mle":
        kind = likelihood_kind(m, likelihood)
        w1 = m.support_counts / m.n
        pq = m.p - m.q
        pi = m.q + pq * f
        grad = -pq * w1 / pi
        if kind == "binomial":
            grad += pq * (1 - w1) / (1 - pi)
        return _apx_scale(m) * grad
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


def kkt_residuals(
    method: str,
    m: Measurement,
    f: np.ndarray,
    duals: dict[str, Any],
    likelihood: str = "auto",
) -> dict[str, float]:
    """KKT residuals of a candidate solution ``f`` with multipliers ``duals``.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
    m : Measurement
    f : numpy.ndarray
        Candidate frequencies, e.g. a closed form from :mod:`bayesldp.methods`.
    duals : dict
        ``"sum"`` (:math:`\\nu`) and ``"nonneg"`` (:math:`\\lambda`), e.g. a solver's
        ``info["duals"]``.

    Returns
    -------
    dict
        ``primal`` (largest of :math:`\\max(-f_v, 0)` and :math:`|\\sum f - 1|`),
        ``dual`` (largest :math:`\\max(-\\lambda_v, 0)`), ``complementary``
        (largest :math:`|\\lambda_v f_v|`) and ``stationarity`` (largest
        :math:`|\\nabla F(f) + \\nu - \\lambda|`).
    """
    f = np.asarray(f, dtype=np.float64)
    lam = np.asarray(duals["nonneg"], dtype=np.float64)
    nu = float(duals["sum"])
    grad = gradient(method, m, f, likelihood=likelihood)
    return {
        "primal": float(max(np.maximum(-f, 0).max(), abs(f.sum() - 1))),
        "dual": float(np.maximum(-lam, 0).max()),
        "complementary": float(np.abs(lam * f).max()),
        "stationarity": float(np.abs(grad + nu - lam).max()),
    }
