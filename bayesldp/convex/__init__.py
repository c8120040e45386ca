r"""Exact convex formulations of CLS, MLE-Apx and the exact MLE, solved with cvxpy.

These are the reference solutions the closed forms in :mod:`bayesldp.methods` are
checked against (``postprocess(m, name, backend="cvxpy")``). Importing this package
imports cvxpy; ``import bayesldp`` does not. Every problem has the probability-simplex
constraints

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
  the rescaling the objective's curvature is :math:`b^2/e` (tiny for small
  :math:`\epsilon` and large ``d``) and an interior-point solver stops far from the
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
  converge; Clarabel often stops early on these exponential-cone problems, so the
  default solver for ``mle`` is SCS.

By default (``polish=True``) the solver's answer is polished on its support by
Newton's method and accepted only when the KKT conditions of the full problem hold to
``1e-9`` (``bayesldp.convex._polish``); otherwise :class:`SolverFailedError` is raised
(``bayesldp.convex._solve`` says when). ``info`` reports what was done:
``solver_status`` (the solver's own status), ``status`` (``"optimal"``: the returned
point passed the KKT check, or, with ``polish=False``, the solver said so),
``polished``, ``polish`` (support size, items moved by corrections, Newton iterations,
``distance``: the largest change of a frequency), ``kkt_residuals`` of the returned
point with the returned ``duals``, and the solver's own ``solver_duals`` and
``solver_objective``. No clipping is done: ``info["min_frequency"]`` and
``info["sum_error"]`` record how far the returned vector is from the simplex (with
polishing, at most the KKT tolerance).

Where things live: ``_terms`` (the objectives, their derivatives, the KKT residuals),
``_polish`` (Newton on the support and the KKT check), ``_solve`` (solver options,
failure, the Estimate and its ``info``), ``_problems`` (the three formulations).
"""

from bayesldp.convex._problems import cls, mle, mle_apx
from bayesldp.convex._solve import SolverFailedError
from bayesldp.convex._terms import kkt_residuals, objective

__all__ = ["SolverFailedError", "cls", "kkt_residuals", "mle", "mle_apx", "objective"]
