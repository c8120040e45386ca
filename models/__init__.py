"""PyMC models for Bayesian post-processing (installed as ``bayesldp.models``).

The composable layer: :func:`ldp_likelihood` adds an oracle's likelihood to any PyMC
model, :func:`set_measurement` swaps in another measurement, :func:`fit` samples it
(through ``pymc.sample``, settings in :class:`SamplerSettings`) and returns a
:class:`bayesldp.Estimate`; :func:`dirichlet_simplex` is a Dirichlet prior in
coordinates NUTS samples well. Ready-made models: :func:`bayes_dirichlet` and
:func:`bayes_hier` (built on the layer), :func:`bayes_power` (``zero_inflated=True``
for ``bayes-power-zi``) and :func:`bayes_consistent` (power-law priors whose counts are
summed out). Predictive checks and model comparison: :func:`posterior_predictive_check`,
:func:`prior_predictive_check`, :func:`loo`, :func:`compare`. PyMC itself is imported
on first use.
"""

from bayesldp.models._checks import (
    compare,
    loo,
    posterior_predictive_check,
    prior_predictive_check,
)
from bayesldp.models._settings import SamplerSettings
from bayesldp.models.consistent import bayes_consistent
from bayesldp.models.dirichlet import bayes_dirichlet, dirichlet_simplex
from bayesldp.models.fitting import available_samplers, fit
from bayesldp.models.hierarchical import bayes_hier
from bayesldp.models.likelihood import ldp_likelihood, set_measurement
from bayesldp.models.power import bayes_power

__all__ = [
    "SamplerSettings",
    "available_samplers",
    "bayes_consistent",
    "bayes_dirichlet",
    "bayes_hier",
    "bayes_power",
    "compare",
    "dirichlet_simplex",
    "fit",
    "ldp_likelihood",
    "loo",
    "posterior_predictive_check",
    "prior_predictive_check",
    "set_measurement",
]
