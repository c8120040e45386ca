r"""Nonparametric empirical Bayes for frequency oracles: the NPMLE of the count distribution.

Every item ``v`` has a true count :math:`x_v` (users holding it) and a support count
:math:`c_v`. Empirical Bayes treats the counts as draws from an unknown distribution
:math:`G` on ``0..n`` (the histogram of the counts over the items) and estimates it
from the data, instead of assuming a family (Calibrate's power law, the shifted power
law of ``bayes-consistent``):

.. math::

    x_v \overset{iid}{\sim} G, \qquad
    c_v \mid x_v \sim \mathrm{Binomial}\big(n,\ q + (p - q)\, x_v / n\big),
    \qquad \textstyle\sum_v x_v = n .

:math:`\hat G` is the Kiefer-Wolfowitz nonparametric maximum likelihood estimate
(NPMLE): a discrete distribution on a grid of counts :math:`u_1 < \dots < u_K` whose
weights :math:`w` maximise the marginal likelihood

.. math::

    \ell(w) = \sum_v \log \sum_k L_{vk} w_k, \qquad
    L_{vk} = P(c_v \mid x_v = u_k), \qquad
    w \ge 0, \ \textstyle\sum_k w_k = 1 .

The problem is convex; its optimality (KKT) condition is

.. math::

    S_k(w) = \sum_v \frac{L_{vk}}{\sum_j L_{vj} w_j} \le d
    \quad \text{for all } k, \text{ with equality where } w_k > 0,

and for any :math:`w` on the simplex :math:`\ell(\hat w) - \ell(w) \le \max_k S_k(w) - d`
bounds the distance to the optimum (:class:`NPMLEFit` reports it relative to ``d`` as
``gap``).

The known total enters twice. First in the data: the counts add up to ``n``, so the
sum of the support counts' noises is known, and the support counts are corrected by
their share of it (exact for Gaussian noise). Without this the raw total, off by about
:math:`\sigma\sqrt d`, would have to be absorbed by the tilt below, which puts it where
the posterior is widest (the small, noisy items). (Fixing the prior's mean at ``n / d``
instead does not help: the NPMLE meets such a constraint most cheaply by giving the
largest atom, which rests on one item, a little more weight, a "phantom" fraction of
an item that changes no posterior mean.)

Each item's estimate is its posterior mean under :math:`\hat G` **conditioned on the
total** by exponential tilting: the prior is multiplied by :math:`e^{\lambda u}` with
:math:`\lambda` solved so that the posterior means add up to ``n`` (the saddle-point /
Gibbs-conditioning approximation to conditioning independent counts on their sum,
accurate for large ``d``; the same device as ``bayes-consistent``). The estimate is
therefore non-negative and sums to 1.

Where things live
-----------------
* ``_grid``: the grid of counts (:func:`count_grid`): every count up to
  ``1 / grid_growth``, then relative steps of ``grid_growth`` capped at
  ``grid_spacing`` noise standard deviations, only within ``grid_window`` standard
  deviations of some observation (farther counts have likelihood below
  :math:`e^{-32}` for every item).
* ``_likelihood``: the likelihood matrix (:func:`count_likelihood`), one row per
  distinct support count, its gradient and KKT gap; the total-noise correction.
* ``_sqp`` and ``_npmle``: the NPMLE (:func:`npmle`) by active-set SQP (default), EM
  accelerated by SQUAREM (an independent check) or cvxpy (the reference).
* ``_posterior``: the tilted item posteriors (:func:`tilted_posterior`) and the table
  draws come from.
* ``_draws``: the posterior draws behind intervals (plug-in, parametric bootstrap).
* ``_methods``: :func:`eb_npmle` and :func:`oracle_bayes`.

References
----------
Kiefer and Wolfowitz (1956); Laird (1978); Lindsay (1983); Koenker and Mizera (2014),
"Convex optimization, shape constraints, compound decisions, and empirical Bayes
rules"; Kim, Carbonetto, Stephens and Anitescu (2020), "A fast algorithm for maximum
likelihood estimation of mixture proportions using sequential quadratic programming".
"""

from bayesldp.empirical_bayes._grid import count_grid
from bayesldp.empirical_bayes._likelihood import count_likelihood
from bayesldp.empirical_bayes._methods import eb_npmle, oracle_bayes
from bayesldp.empirical_bayes._npmle import NPMLEFit, npmle
from bayesldp.empirical_bayes._posterior import tilted_posterior

__all__ = [
    "NPMLEFit",
    "count_grid",
    "count_likelihood",
    "eb_npmle",
    "npmle",
    "oracle_bayes",
    "tilted_posterior",
]
