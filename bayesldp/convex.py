r"""Exact convex formulations of CLS, MLE-Apx and the exact MLE, solved with cvxpy.

These are the reference solutions the closed forms in :mod:`bayesldp.methods` are
checked against (``postprocess(m, name, backend="cvxpy")``). Every problem has the
probability-simplex constraints

.. math::

    \sum_v f_v = 1 \quad (\text{dual } \nu, \text{ key } ``"sum"``), \qquad
    f_v \ge 0 \quad (\text{duals } \lambda_v \ge 0, \text{ key } ``"nonneg"``),

and, with cvxpy's sign convention, the KKT stationarity condition reads
:math:`\nabla F(f) + \nu \mathbf 1 - \lambda = 0` (see :func:`kkt_residuals`).

* ``cls``: :math:`F(f) = \|f - \tilde f\|_2^2`, a QP.
* ``mle-apx``: the long paper's Eq. (13),
  :math:`\sum_v (a_v - b f_v)^2 / (e + g f_v)` with :math:`a_v = c_v/n - q`,
  :math:`b = p - q`, :math:`e = q(1-q)`, :math:`g = (p-q)(1-p-q)`, multiplied by the
  constant :math:`e / b^2` (the same minimiser) so that it reads, with
  :math:`\kappa = g / e` and :math:`a_v - b f_v = b(\tilde f_v - f_v)`,

  .. math::

      F(f) = \sum_v \frac{(f_v - \tilde f_v)^2}{1 + \kappa f_v},

  a weighted CLS whose weights are the ratios :math:`\sigma^2 / \sigma_v^2`. Without
  the rescaling the objective's curvature is :math:`b^2/e` (about ``1e-5`` for GRR with
  :math:`\epsilon = 0.2, d = 4096`) and an interior-point solver stops far from the
  minimiser. Each term is quadratic over linear, written as one rotated second-order
  cone :math:`\|(2 r_v, t_v - y_v)\|_2 \le t_v + y_v` with :math:`r_v = f_v - \tilde f_v`
  and the affine denominator :math:`y_v = 1 + \kappa f_v`. :math:`\kappa` would be
  negative for an oracle with :math:`p + q > 1`; the denominator is positive on the
  whole simplex all the same, since it is :math:`1` at :math:`f_v = 0`,
  :math:`p(1-p)/(q(1-q)) > 0` at :math:`f_v = 1` and affine in between (GRR and SUE
  have :math:`p + q \le 1`, so :math:`\kappa \ge 0` for the oracles here).
  ``info["objective_eq13"]`` gives the value of Eq. (13) itself.
* ``mle``: the oracle's own likelihood. With :math:`w_v = c_v/n` and
  :math:`\pi_v = q + (p - q) f_v`,

  .. math::

      F(f) = s \sum_v \Big[w_v \log\frac{w_v}{\pi_v}
             + (1 - w_v)\log\frac{1 - w_v}{1 - \pi_v}\Big],
      \qquad s = \frac{q(1-q)}{(p-q)^2},

  which is the negative log-likelihood of the product of binomials (OUE, SUE and the
  other non-GRR oracles) divided by :math:`n / s`, shifted by the saturated model's
  value (so the objective is :math:`s / (2n)` times the deviance); for GRR the counts
  are multinomial and the second terms are absent. Terms with a zero weight are left
  out; each logarithm is one exponential cone. The centring at :math:`w_v` and the
  scale :math:`s` (curvature of order one in :math:`f`) are what let the solvers
  converge: Clarabel 0.11 still stops with ``InsufficientProgress`` on many of these
  exponential-cone problems, so the default solver for ``mle`` is SCS.

Polishing and the KKT check
---------------------------
An interior-point or first-order solver's ``"optimal"`` bounds the objective gap,
not the distance in :math:`f`: at the default tolerances the solvers' frequencies
are up to 4e-4 from the minimiser, slightly negative, and the items near zero are
not set apart from the items at zero. So by default (``polish=True``) the solver's
answer is polished, using only the solver's output and the problem's own
derivatives (never the closed forms of :mod:`bayesldp.methods`, so that the result
stays an independent check of them):

1. *Support.* The items the solver left at zero are those with
   :math:`f_v \le \lambda_v` (its primal value below its multiplier); the others
   form the support :math:`S`. (Items whose term has no curvature, such as those with
   no count under the multinomial likelihood, are never in :math:`S`.)
2. *Newton on the reduced problem.* :math:`\min \sum_{v \in S} F_v(f_v)` subject to
   :math:`\sum_{v \in S} f_v = 1` (no inequality) is solved by Newton's method on
   its KKT system, started at the solver's :math:`f_S` and :math:`\nu` (the
   infeasible-start method, with backtracking on the residual norm and on the
   domain of :math:`F`); the Hessian is diagonal, so a step costs :math:`O(|S|)`.
   Items outside :math:`S` are set to 0 and get the multipliers
   :math:`\lambda_v = F'_v(0) + \nu` (0 on :math:`S`).
3. *KKT check of the full problem.* The point and its multipliers are accepted when
   every :func:`kkt_residuals` is within :data:`KKT_TOL`: primal (a negative
   frequency or :math:`|\sum f - 1|`), dual (a negative :math:`\lambda_v`),
   complementary slackness and stationarity. For a separable strictly convex
   :math:`F` these conditions are sufficient, and with curvature at least
   :math:`\mu` along the simplex they give :math:`\|f - f^*\|_2 \le
   \|r\|_2 / \mu` for the stationarity residual :math:`r` of an exactly
   feasible, complementary point.
4. *Corrections.* If the check fails only because of items the solver left at the
   boundary (both :math:`|f_v|` and :math:`|\lambda_v|` of its answer at most
   :data:`BOUNDARY`: the solver could not tell whether they belong to the support),
   those items change sides (a negative :math:`f_v` leaves :math:`S`, a negative
   :math:`\lambda_v` joins it) and steps 2 and 3 are repeated, at most
   :data:`MAX_CORRECTIONS` times. An item the solver clearly placed is never moved.

``info`` reports what was done: ``solver_status`` (the solver's own status),
``status`` (``"optimal"``: the returned point passed the KKT check, or, with
``polish=False``, the solver said so), ``polished``, ``polish`` (support size, items
moved by corrections, Newton iterations, ``distance``: the largest change of a
frequency), ``kkt_residuals`` of the returned point with the returned ``duals``, and
the solver's own ``solver_duals`` and ``solver_objective``. No clipping is done:
``info["min_frequency"]`` and ``info["sum_error"]`` record how far the returned
vector is from the simplex (with polishing, at most :data:`KKT_TOL`).

When the solver fails
---------------------
A solver error, or a status with no solution (infeasible, unbounded), raises
:class:`SolverFailedError`. A status other than ``"optimal"`` that comes with a
point (``"optimal_inaccurate"``, ``"user_limit"``) raises too, unless polishing
from that point passes the KKT check: then the verified point is returned with
``info["status"] == "optimal"`` and the solver's status in ``info["solver_status"]``.
A polished point that fails the check raises whatever the solver's status was. With
``polish=False`` the solver's answer is returned exactly as it gave it, and any
status other than ``"optimal"`` raises. When polishing, Clarabel is given
``accept_unknown`` so that a solve stopped by ``InsufficientProgress`` still returns
its point (as ``"optimal_inaccurate"``) for polishing.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import cvxpy as cp
import numpy as np

from bayesldp._validation import check_bool
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods._likelihood import likelihood_kind

__all__ = [
    "BOUNDARY",
    "DEFAULT_SOLVER",
    "DEFAULT_SOLVERS",
    "KKT_TOL",
    "MAX_CORRECTIONS",
    "PROBLEMS",
    "SolverFailedError",
    "cls",
    "curvature",
    "gradient",
    "kkt_residuals",
    "mle",
    "mle_apx",
    "objective",
]

logger = logging.getLogger(__name__)

#: Solver used when ``solver=None``: Clarabel, an interior-point method for QPs and
#: second-order cones; for the exponential cones of ``mle``, SCS (see the module notes).
DEFAULT_SOLVER = "CLARABEL"
DEFAULT_SOLVERS: dict[str, str] = {"cls": "CLARABEL", "mle-apx": "CLARABEL", "mle": "SCS"}

#: Largest KKT residual (each of primal, dual, complementary, stationarity) of an
#: accepted polished point. The objectives are scaled to a curvature of order one in
#: ``f``, so this is about the accuracy in ``f`` it certifies.
KKT_TOL = 1e-9

#: An item whose frequency and multiplier in the solver's answer are both at most
#: this (in absolute value) is "at the boundary": polishing may move it into or out
#: of the support. Items placed more clearly are never moved.
BOUNDARY = 1e-4

#: Most rounds of support corrections after the first polish.
MAX_CORRECTIONS = 10

#: Newton iterations per polish round (it converges quadratically in a few).
_NEWTON_MAX_ITER = 100


class SolverFailedError(RuntimeError):
    """The solver did not reach a verified optimum (or failed outright).

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
        if status != cp.OPTIMAL:
            msg += ", not 'optimal'"
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


# ---------------------------------------------------------------------------
# The separable objectives: values and derivatives, item by item
# ---------------------------------------------------------------------------


class ObjectiveTerms:
    r""":math:`F(f) = \sum_v F_v(f_v)` of one method, with its first two derivatives.

    ``idx`` selects the items that ``f`` holds (all of them by default).
    """

    def __init__(self, method: str, m: Measurement, likelihood: str = "auto") -> None:
        if method not in PROBLEMS:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(PROBLEMS)}")
        self.method = method
        self.kind = likelihood_kind(m, likelihood) if method == "mle" else None
        self.ft = m.estimates
        self.kappa = _apx_kappa(m)
        self.w = m.support_counts / m.n
        self.q, self.pq, self.scale = m.q, m.p - m.q, _apx_scale(m)
        # Items whose term has no curvature: constant (no count, multinomial likelihood)
        # or, for MLE-Apx with 1 + kappa f~_v = 0, linear. Newton cannot place them;
        # at an optimum they are at 0 unless their multiplier is exactly 0.
        if self.kind == "multinomial":
            self.flat = self.w == 0
        elif method == "mle-apx":
            self.flat = 1 + self.kappa * self.ft == 0
        else:
            self.flat = np.zeros(m.domain_size, dtype=bool)

    def value(self, f: np.ndarray) -> float:
        if self.method == "cls":
            return float(np.sum((f - self.ft) ** 2))
        if self.method == "mle-apx":
            return float(np.sum((f - self.ft) ** 2 / (1 + self.kappa * f)))
        w1, pi = self.w, self.q + self.pq * f
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.where(w1 > 0, w1 * np.log(w1 / pi), 0.0).sum()
            if self.kind == "binomial":
                val += np.where(w1 < 1, (1 - w1) * np.log((1 - w1) / (1 - pi)), 0.0).sum()
        return float(self.scale * val)

    def grad(self, f: np.ndarray, idx: Any = slice(None)) -> np.ndarray:
        if self.method == "cls":
            return 2 * (f - self.ft[idx])
        if self.method == "mle-apx":
            x = (f - self.ft[idx]) / (1 + self.kappa * f)
            return 2 * x - self.kappa * x**2
        w1, pi = self.w[idx], self.q + self.pq * f
        grad = -self.pq * w1 / pi
        if self.kind == "binomial":
            grad = grad + self.pq * (1 - w1) / (1 - pi)
        return self.scale * grad

    def curv(self, f: np.ndarray, idx: Any = slice(None)) -> np.ndarray:
        if self.method == "cls":
            return np.full(np.shape(f), 2.0)
        if self.method == "mle-apx":
            return 2 * (1 + self.kappa * self.ft[idx]) ** 2 / (1 + self.kappa * f) ** 3
        w1, pi = self.w[idx], self.q + self.pq * f
        h = w1 / pi**2
        if self.kind == "binomial":
            h = h + (1 - w1) / (1 - pi) ** 2
        return self.scale * self.pq**2 * h

    def in_domain(self, f: np.ndarray, idx: Any = slice(None)) -> bool:
        """Whether every term is finite (and strictly convex) at ``f``."""
        if not np.all(np.isfinite(f)):
            return False
        if self.method == "cls":
            return True
        if self.method == "mle-apx":
            return bool(np.all(1 + self.kappa * f > 0))
        w1, pi = self.w[idx], self.q + self.pq * f
        ok = np.all((pi > 0) | (w1 == 0))
        if self.kind == "binomial":
            ok = ok and np.all((pi < 1) | (w1 == 1))
        return bool(ok)


# ---------------------------------------------------------------------------
# Polishing (see the module notes)
# ---------------------------------------------------------------------------


@dataclass
class PolishResult:
    """Result of :func:`_polish`."""

    frequencies: np.ndarray
    nu: float
    lam: np.ndarray
    residuals: dict[str, float]
    verified: bool
    support_size: int
    rounds: int
    newton_iterations: int
    moved: list[int] = field(default_factory=list)
    reason: str = ""


def _newton(
    terms: ObjectiveTerms, support: np.ndarray, f_start: np.ndarray, nu_start: float
) -> tuple[np.ndarray, float, int]:
    r"""Minimise :math:`\sum_{S} F_v(f_v)` s.t. :math:`\sum_S f_v = 1` by Newton's method.

    Infeasible-start Newton (Boyd and Vandenberghe, Sec. 10.3) on the KKT system
    :math:`F'_v(f_v) + \nu = 0\ (v \in S)`, :math:`\sum_S f_v = 1`, with a diagonal
    Hessian. Returns the full vector (0 outside ``S``), :math:`\nu` and the number of
    iterations.
    """
    idx = np.flatnonzero(support)
    f = np.zeros(support.size)
    if idx.size == 0:
        return f, float(nu_start), 0
    x = f_start[idx].astype(np.float64, copy=True)
    if not terms.in_domain(x, idx):
        x = np.full(idx.size, 1.0 / idx.size)
    nu = float(nu_start) if np.isfinite(nu_start) else 0.0

    def residual(x: np.ndarray, nu: float) -> float:
        return float(np.hypot(np.linalg.norm(terms.grad(x, idx) + nu), x.sum() - 1.0))

    r = residual(x, nu)
    iterations = 0
    while iterations < _NEWTON_MAX_ITER:
        iterations += 1
        g, inv = terms.grad(x, idx), 1.0 / terms.curv(x, idx)
        nu_new = (x.sum() - 1.0 - g @ inv) / inv.sum()
        dx, dnu = -(g + nu_new) * inv, nu_new - nu
        t = 1.0
        while t > 1e-12:
            xt, nut = x + t * dx, nu + t * dnu
            if terms.in_domain(xt, idx):
                rt = residual(xt, nut)
                if rt <= (1 - 0.01 * t) * r:
                    break
            t *= 0.5
        else:
            break  # no decrease left: at the rounding level (or stuck; the check decides)
        x, nu, r = xt, nut, rt
        if t == 1.0 and np.abs(dx).max() <= 4 * np.finfo(float).eps * max(1.0, np.abs(x).max()):
            break
    f[idx] = x
    return f, nu, iterations


def polish_point(
    terms: ObjectiveTerms, f0: np.ndarray, nu0: float, lam0: np.ndarray, tol: float = KKT_TOL
) -> PolishResult:
    """Polish a solver's point on its support and check the KKT conditions."""
    f0 = np.asarray(f0, dtype=np.float64)
    lam0 = np.asarray(lam0, dtype=np.float64)
    usable = ~terms.flat
    support = (f0 > lam0) & usable
    boundary = (np.abs(f0) <= BOUNDARY) & (np.abs(lam0) <= BOUNDARY) & usable
    moved: set[int] = set()
    start, nu_start = f0, nu0
    newton_total = 0
    for rounds in range(1, MAX_CORRECTIONS + 2):
        f, nu, its = _newton(terms, support, start, nu_start)
        newton_total += its
        lam = terms.grad(f) + nu
        lam[support] = 0.0
        res = _kkt(terms, f, {"sum": nu, "nonneg": lam})
        if max(res.values()) <= tol:
            return PolishResult(f, nu, lam, res, True, int(support.sum()), rounds, newton_total,
                             sorted(moved))  # fmt: skip
        leave = support & (f < -tol)
        join = ~support & (lam < -tol) & usable
        change = leave | join
        reason = "KKT residuals " + ", ".join(f"{k} {v:.1e}" for k, v in res.items())
        if not change.any():
            reason += " (Newton did not converge on the support)"
            break
        if not boundary[change].all():
            reason += (
                f" ({int((change & ~boundary).sum())} item(s) the solver placed clearly would "
                "have to change sides)"
            )
            break
        if rounds > MAX_CORRECTIONS:
            reason += f" (after {MAX_CORRECTIONS} rounds of corrections)"
            break
        moved.update(np.flatnonzero(change).tolist())
        support = (support & ~leave) | join
        start, nu_start = f, nu
    return PolishResult(f, nu, lam, res, False, int(support.sum()), rounds, newton_total,
                     sorted(moved), reason)  # fmt: skip


# ---------------------------------------------------------------------------
# Solving
# ---------------------------------------------------------------------------


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
    polish: bool,
    likelihood: str = "auto",
    **extra_info: Any,
) -> Estimate:
    name = _check_solver(solver, method)
    polish = check_bool(polish, "polish")
    opts = _solver_options(name, tol, max_iter, solver_options)
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
        "kkt_residuals": _kkt(terms, freqs, duals),
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
    polish: bool = True,
) -> Estimate:
    r"""CLS: :math:`\min \|f - \tilde f\|_2^2` s.t. :math:`f \ge 0, \sum f = 1`, by cvxpy.

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
    polish : bool, default True
        Polish the solver's answer on its support by Newton's method and accept it only
        if it passes the KKT check (module notes). ``False`` returns the solver's
        answer as it is.

    Returns
    -------
    Estimate
        ``info`` holds ``status``, ``solver_status``, ``solver``, ``objective`` (at the
        returned point), ``duals`` (``"sum"``: :math:`\nu`, ``"nonneg"``:
        :math:`\lambda`, of the returned point), ``kkt_residuals``, ``polished``,
        ``polish`` (``support_size``, ``moved``, ``newton_iterations``, ``distance``),
        the solver's ``solver_duals`` and ``solver_objective``, ``solve_time``,
        ``polish_time``, ``wall_time``, ``iterations``, ``min_frequency`` and
        ``sum_error``.

    Raises
    ------
    SolverFailedError
        If the solver fails, or ends with a status other than ``"optimal"`` and
        polishing does not reach a verified optimum, or the polished point fails the
        KKT check.
    """
    f, total, nonneg = _simplex(m.domain_size)
    ft = m.estimates
    # Expanded, so the QP reaches the solver without auxiliary variables (HiGHS's QP
    # solver reports a solve error on the form with f - f~ as a new variable).
    fit = cp.sum_squares(f) - 2 * (ft @ f) + float(ft @ ft)
    problem = cp.Problem(cp.Minimize(fit), [total, nonneg])
    return _solve("cls", m, problem, f, total, nonneg, solver, tol, max_iter, verbose,
                  solver_options, polish)  # fmt: skip


def _apx_kappa(m: Measurement) -> float:
    r""":math:`\kappa = (p-q)(1-p-q) / (q(1-q))`, the slope of the variance ratio."""
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
    polish: bool = True,
) -> Estimate:
    r"""MLE-Apx: the exact minimiser of the long paper's Eq. (13) on the simplex.

    .. math::

        \min_f \sum_v \frac{(c_v/n - q - (p-q) f_v)^2}{q(1-q) + (p-q)(1-p-q) f_v}
        \quad\text{s.t.}\quad f \ge 0,\ \sum_v f_v = 1,

    solved in the rescaled form :math:`\sum_v (f_v - \tilde f_v)^2 / (1 + \kappa f_v)`
    with one rotated second-order cone per term (see the module notes). ``info``
    holds the rescaled ``objective``, its duals, and ``objective_eq13``. Options
    (including ``polish``) and ``info`` as in :func:`cls`; the solver must handle
    second-order cones (``CLARABEL``, ``SCS``).

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    solver : str, optional
        An installed cvxpy solver that handles second-order cones (``CLARABEL`` by
        default).
    tol : float, optional
        Tolerance given to every accuracy option of the solver, as in :func:`cls`;
        ``None`` keeps the solver's defaults.
    max_iter : int, optional
        Iteration limit of the solver; ``None`` keeps its default.
    verbose : bool, default False
        Let the solver print its log.
    solver_options : dict, optional
        Further options passed to the solver unchanged (they override ``tol``).
    polish : bool, default True
        Polish the solver's answer on its support and accept it only if it passes the
        KKT check, as in :func:`cls`.

    Returns
    -------
    Estimate

    Raises
    ------
    SolverFailedError
        As in :func:`cls`.
    """
    kappa = _apx_kappa(m)
    f, total, nonneg = _simplex(m.domain_size)
    t = cp.Variable(m.domain_size, name="t")
    r = f - m.estimates
    y = 1 + kappa * f
    cone = cp.SOC(t + y, cp.vstack([2 * r, t - y]), axis=0)
    problem = cp.Problem(cp.Minimize(cp.sum(t)), [total, nonneg, cone])
    est = _solve("mle-apx", m, problem, f, total, nonneg, solver, tol, max_iter, verbose,
                 solver_options, polish, kappa=kappa)  # fmt: skip
    return replace(est, info={**est.info, "objective_eq13": est.info["objective"] / _apx_scale(m)})


def mle(
    m: Measurement,
    likelihood: str = "auto",
    solver: str | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    verbose: bool = False,
    solver_options: dict[str, Any] | None = None,
    polish: bool = True,
) -> Estimate:
    r"""Exact MLE of the oracle's support-count likelihood on the simplex, by cvxpy.

    .. math::

        \max_f \sum_v \big[c_v \log \pi_v + (n - c_v) \log(1 - \pi_v)\big],
        \quad \pi_v = q + (p-q) f_v, \quad f \ge 0,\ \sum_v f_v = 1,

    without the :math:`\log(1-\pi_v)` terms for the multinomial (GRR) likelihood: the
    same likelihood as :func:`bayesldp.methods.mle`. It is solved as the centred and
    scaled objective of the module notes; ``info["deviance"]`` is twice the gap in
    log-likelihood to the saturated model.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    likelihood : {"auto", "multinomial", "binomial"}
        ``auto`` picks multinomial for GRR and binomial otherwise.
    solver : str, optional
        ``None`` means SCS. The solver must handle exponential cones (``SCS``,
        ``CLARABEL``); Clarabel
        0.11 often stops early on these problems (its point is then polished, and
        :class:`SolverFailedError` raised if that fails).
    tol, max_iter, verbose, solver_options, polish
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
                 solver_options, polish, likelihood=kind, scale=scale)  # fmt: skip
    deviance = 2 * m.n * est.info["objective"] / scale
    return replace(est, info={**est.info, "likelihood": kind, "deviance": deviance})


#: The problems this module formulates (the methods that declare a ``cvxpy`` backend in
#: :mod:`bayesldp.methods.registry`, where they are listed; a test keeps the two in step).
PROBLEMS: tuple[str, ...] = ("cls", "mle-apx", "mle")


# ---------------------------------------------------------------------------
# Objectives, gradients and KKT residuals (for checking any candidate solution)
# ---------------------------------------------------------------------------


def objective(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> float:
    """Value of the objective :math:`F(f)` that method ``method`` minimises.

    The rescaled forms of the module notes: for ``mle-apx``, Eq. (13) times
    :math:`q(1-q)/(p-q)^2`; for ``mle``, the scaled divergence to the saturated model.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).
    """
    return ObjectiveTerms(method, m, likelihood).value(np.asarray(f, dtype=np.float64))


def gradient(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> np.ndarray:
    r"""Gradient :math:`\nabla F(f)` of the objective of method ``method``.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).
    """
    return ObjectiveTerms(method, m, likelihood).grad(np.asarray(f, dtype=np.float64))


def curvature(method: str, m: Measurement, f: np.ndarray, likelihood: str = "auto") -> np.ndarray:
    r"""Diagonal of the Hessian :math:`\nabla^2 F(f)` (the objective is separable).

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
        Whose objective.
    m : Measurement
        Raw oracle output.
    f : numpy.ndarray
        Frequencies of the ``d`` items.
    likelihood : {"auto", "multinomial", "binomial"}, default "auto"
        The support-count likelihood of ``mle`` (ignored by the others).
    """
    return ObjectiveTerms(method, m, likelihood).curv(np.asarray(f, dtype=np.float64))


def kkt_residuals(
    method: str,
    m: Measurement,
    f: np.ndarray,
    duals: dict[str, Any],
    likelihood: str = "auto",
) -> dict[str, float]:
    r"""KKT residuals of a candidate solution ``f`` with multipliers ``duals``.

    Parameters
    ----------
    method : {"cls", "mle-apx", "mle"}
    m : Measurement
    f : numpy.ndarray
        Candidate frequencies, e.g. a closed form from :mod:`bayesldp.methods`.
    duals : dict
        ``"sum"`` (:math:`\nu`) and ``"nonneg"`` (:math:`\lambda`), e.g. a solver's
        ``info["duals"]``.
    likelihood : {"auto", "multinomial", "binomial"}
        For ``mle``, as in :func:`mle`.

    Returns
    -------
    dict
        ``primal`` (largest of :math:`\max(-f_v, 0)` and :math:`|\sum f - 1|`),
        ``dual`` (largest :math:`\max(-\lambda_v, 0)`), ``complementary``
        (largest :math:`|\lambda_v f_v|`) and ``stationarity`` (largest
        :math:`|\nabla F(f) + \nu - \lambda|`).
    """
    return _kkt(ObjectiveTerms(method, m, likelihood), f, duals)


def _kkt(terms: ObjectiveTerms, f: np.ndarray, duals: dict[str, Any]) -> dict[str, float]:
    f = np.asarray(f, dtype=np.float64)
    lam = np.asarray(duals["nonneg"], dtype=np.float64)
    nu = float(duals["sum"])
    grad = terms.grad(f)
    return {
        "primal": float(max(np.maximum(-f, 0).max(), abs(f.sum() - 1))),
        "dual": float(np.maximum(-lam, 0).max()),
        "complementary": float(np.abs(lam * f).max()),
        "stationarity": float(np.abs(grad + nu - lam).max()),
    }
