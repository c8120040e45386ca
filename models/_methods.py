"""The Bayesian methods of bayesldp.models, registered through the ``bayesldp.methods`` entry point.

``pyproject.toml`` declares ``[project.entry-points."bayesldp.methods"] models =
"bayesldp.models._methods:register"``; the registry loads it on its first lookup, and
:func:`register` declares bayes-power, bayes-power-zi, bayes-consistent, bayes-dirichlet
and bayes-hier with direct references to their functions.
"""

from __future__ import annotations

import dataclasses

from bayesldp import MethodSpec, register_method
from bayesldp.models.consistent import bayes_consistent
from bayesldp.models.dirichlet import bayes_dirichlet
from bayesldp.models.hierarchical import bayes_hier
from bayesldp.models.power import bayes_power

# fmt: off
SPECS: tuple[MethodSpec, ...] = (
    MethodSpec("bayes-power", bayes_power,
               "posterior mean, power-law prior with a posterior on its exponent",
               nonnegative=True, bayesian=True, default=False, slow=True, interval="normal"),
    MethodSpec("bayes-power-zi", bayes_power,
               "bayes-power with a point mass at count 0", nonnegative=True, bayesian=True,
               default=False, slow=True, interval="normal",
               fixed_options={"zero_inflated": True}),
    MethodSpec("bayes-consistent", bayes_consistent,
               "posterior mean, shifted power-law prior conditioned on the total",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               color="black", interval="normal"),
    MethodSpec("bayes-dirichlet", bayes_dirichlet,
               "posterior mean, symmetric Dirichlet prior with a hyperprior on its concentration",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               minutes=True, interval="normal"),
    MethodSpec("bayes-hier", bayes_hier,
               "posterior mean, hierarchical Dirichlet prior over a grouping of the domain",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               minutes=True, interval="normal"),
)
# fmt: on


def register() -> None:
    """Register the models' methods (the ``bayesldp.methods`` entry point).

    A name already registered with the same metadata (e.g. by an earlier call, or by a
    registry that still lists these methods itself) is left as it is; one registered
    with different metadata is an error.

    Raises
    ------
    ValueError
        A method of the same name with other metadata is registered.
    """
    from bayesldp.methods.registry import get_method

    for spec in SPECS:
        try:
            existing = get_method(spec.name)
        except ValueError:
            register_method(spec)
            continue
        if dataclasses.replace(existing, target=spec.target) != spec:
            raise ValueError(f"method {spec.name!r} is registered with other metadata")
