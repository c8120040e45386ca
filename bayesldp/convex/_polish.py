r"""Polishing a solver's answer on its support, and the KKT check that accepts it.

An interior-point or first-order solver's ``"optimal"`` bounds the objective gap, not
the distance in :math:`f`: at default tolerances its frequencies can be visibly off the
minimiser, slightly negative, and the items near zero are not set apart from the items
at zero. Polishing uses only the solver's output and the problem's own derivatives
(never the closed forms of :mod:`bayesldp.methods`, so that the result stays an
independent check of them):

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
   every KKT residual is within :data:`KKT_TOL`: primal (a negative frequency or
   :math:`|\sum f - 1|`), dual (a negative :math:`\lambda_v`), complementary
   slackness and stationarity. For a separable strictly convex :math:`F` these
   conditions are sufficient, and with curvature at least :math:`\mu` along the
   simplex they give :math:`\|f - f^*\|_2 \le \|r\|_2 / \mu` for the stationarity
   residual :math:`r` of an exactly feasible, complementary point.
4. *Corrections.* If the check fails only because of items the solver left at the
   boundary (both :math:`|f_v|` and :math:`|\lambda_v|` of its answer at most
   :data:`BOUNDARY`: the solver could not tell whether they belong to the support),
   those items change sides (a negative :math:`f_v` leaves :math:`S`, a negative
   :math:`\lambda_v` joins it) and steps 2 and 3 are repeated, at most
   :data:`MAX_CORRECTIONS` times. An item the solver clearly placed is never moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesldp.convex._terms import ObjectiveTerms, residuals

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
NEWTON_MAX_ITER = 100


@dataclass
class PolishResult:
    """What :func:`polish_point` did, and whether its point passed the KKT check."""

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


def newton_on_support(
    terms: ObjectiveTerms, support: np.ndarray, f_start: np.ndarray, nu_start: float
) -> tuple[np.ndarray, float, int]:
    r"""Minimise :math:`\sum_{S} F_v(f_v)` s.t. :math:`\sum_S f_v = 1` by Newton's method.

    Infeasible-start Newton (Boyd and Vandenberghe, Sec. 10.3) on the KKT system
    :math:`F'_v(f_v) + \nu = 0\ (v \in S)`, :math:`\sum_S f_v = 1`, with a diagonal
    Hessian.

    Parameters
    ----------
    terms : ObjectiveTerms
        The problem's objective.
    support : numpy.ndarray of bool
        The items of :math:`S`.
    f_start : numpy.ndarray
        Starting frequencies (all items; those of ``S`` are used, or a uniform start
        where they are outside the objective's domain).
    nu_start : float
        Starting multiplier (0 if not finite).

    Returns
    -------
    tuple of (numpy.ndarray, float, int)
        The full vector (0 outside ``S``), :math:`\nu` and the number of iterations.
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
    while iterations < NEWTON_MAX_ITER:
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
    """Polish a solver's point on its support and check the KKT conditions (module notes).

    Parameters
    ----------
    terms : ObjectiveTerms
        The problem's objective.
    f0 : numpy.ndarray
        The solver's frequencies.
    nu0 : float
        The solver's multiplier of ``sum(f) == 1``.
    lam0 : numpy.ndarray
        The solver's multipliers of ``f >= 0``.
    tol : float, default :data:`KKT_TOL`
        Largest KKT residual of an accepted point.

    Returns
    -------
    PolishResult
        The polished point and multipliers, and whether they passed the check (if not,
        ``reason`` says why).
    """
    f0 = np.asarray(f0, dtype=np.float64)
    lam0 = np.asarray(lam0, dtype=np.float64)
    usable = ~terms.flat
    support = (f0 > lam0) & usable
    boundary = (np.abs(f0) <= BOUNDARY) & (np.abs(lam0) <= BOUNDARY) & usable
    moved: set[int] = set()
    start, nu_start = f0, nu0
    newton_total = 0
    for rounds in range(1, MAX_CORRECTIONS + 2):
        f, nu, its = newton_on_support(terms, support, start, nu_start)
        newton_total += its
        lam = terms.grad(f) + nu
        lam[support] = 0.0
        res = residuals(terms, f, {"sum": nu, "nonneg": lam})
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
