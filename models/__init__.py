"""PyMC models for Bayesian post-processing (installed as ``bayesldp.models``).

The composable layer: :func:`ldp_likelihood` adds an oracle's likelihood to any PyMC
model, :func:`set_measurement` swaps in another measurement, :func:`fit` samples and
returns a :class:`bayesldp.Estimate`; :func:`bayes_dirichlet` and :func:`bayes_hier` are
ready-made models built on it; :mod:`bayesldp.models.checks` holds predictive checks
and model comparison. PyMC itself is imported on first use.
"""

from bayesldp.models.checks import compare, loo, posterior_predictive_check, prior_predictive_check
from bayesldp.models.dirichlet import bayes_dirichlet, dirichlet_simplex
from bayesldp.models.fitting import available_samplers, fit
from bayesldp.models.hierarchical import bayes_hier
from bayesldp.models.likelihood import ldp_likelihood, set_measurement

__all__ = [
    "available_samplers",
    "bayes_dirichlet",
    "bayes_hier",
    "compare",
    "dirichlet_simplex",
    "fit",
    "ldp_likelihood",
    "loo",
    "posterior_predictive_check",
    "prior_predictive_check",
    "set_measurement",
]
