r"""The three problems written for cvxpy: CLS, MLE-Apx and the exact MLE."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import cvxpy as cp
import numpy as np

from bayesldp.convex._solve import simplex_variable, solve
from bayesldp.convex._terms import apx_kappa, apx_scale
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.oracles._likelihood import likelihood_kind


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
        Raw oracle output.
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
        if it passes the KKT check (package notes). ``False`` returns the solver's
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
    ValueError
        Bad options (the message names the option).
    """
    f, total, nonneg = simplex_variable(m.domain_size)
    ft = m.estimates
    # Expanded, so the QP reaches the solver without auxiliary variables (HiGHS's QP
    # solver reports a solve error on the form with f - f~ as a new variable).
    fit = cp.sum_squares(f) - 2 * (ft @ f) + float(ft @ ft)
    problem = cp.Problem(cp.Minimize(fit), [total, nonneg])
    return solve("cls", m, problem, f, total, nonneg, solver=solver, tol=tol,
                 max_iter=max_iter, verbose=verbose, extra_options=solver_options,
                 polish=polish)  # fmt: skip


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
    with one rotated second-order cone per term (see the package notes). ``info``
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
        As in :func:`cls`, with ``info["kappa"]`` and ``info["objective_eq13"]``.

    Raises
    ------
    SolverFailedError
        As in :func:`cls`.
    ValueError
        Bad options (the message names the option).
    """
    kappa = apx_kappa(m)
    f, total, nonneg = simplex_variable(m.domain_size)
    t = cp.Variable(m.domain_size, name="t")
    r = f - m.estimates
    y = 1 + kappa * f
    cone = cp.SOC(t + y, cp.vstack([2 * r, t - y]), axis=0)
    problem = cp.Problem(cp.Minimize(cp.sum(t)), [total, nonneg, cone])
    est = solve("mle-apx", m, problem, f, total, nonneg, solver=solver, tol=tol,
                max_iter=max_iter, verbose=verbose, extra_options=solver_options,
                polish=polish, kappa=kappa)  # fmt: skip
    return replace(est, info={**est.info, "objective_eq13": est.info["objective"] / apx_scale(m)})


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
    scaled objective of the package notes; ``info["deviance"]`` is twice the gap in
    log-likelihood to the saturated model.

    Parameters
    ----------
    m : Measurement
        Raw oracle output.
    likelihood : {"auto", "multinomial", "binomial"}
        ``auto`` picks multinomial for GRR and binomial otherwise.
    solver : str, optional
        ``None`` means SCS. The solver must handle exponential cones (``SCS``,
        ``CLARABEL``); Clarabel often stops early on these problems (its point is then
        polished, and :class:`SolverFailedError` raised if that fails).
    tol, max_iter, verbose, solver_options, polish
        As in :func:`cls`.

    Returns
    -------
    Estimate
        As in :func:`cls`, with ``info["likelihood"]``, ``info["scale"]`` and
        ``info["deviance"]``.

    Raises
    ------
    SolverFailedError
        As in :func:`cls`.
    ValueError
        Bad options (the message names the option).
    """
    kind = likelihood_kind(m, likelihood)
    w1 = m.support_counts / m.n
    scale = apx_scale(m)
    f, total, nonneg = simplex_variable(m.domain_size)
    pi = m.q + (m.p - m.q) * f
    pos = np.flatnonzero(w1 > 0)
    divergence = -(w1[pos] @ cp.log(cp.multiply(pi[pos], 1 / w1[pos])))
    if kind == "binomial":
        w0 = 1.0 - w1
        rest = np.flatnonzero(w0 > 0)
        divergence = divergence - w0[rest] @ cp.log(cp.multiply(1 - pi[rest], 1 / w0[rest]))
    problem = cp.Problem(cp.Minimize(scale * divergence), [total, nonneg])
    est = solve("mle", m, problem, f, total, nonneg, solver=solver, tol=tol,
                max_iter=max_iter, verbose=verbose, extra_options=solver_options,
                polish=polish, likelihood=kind, scale=scale)  # fmt: skip
    deviance = 2 * m.n * est.info["objective"] / scale
    return replace(est, info={**est.info, "likelihood": kind, "deviance": deviance})
