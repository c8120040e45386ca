"""Which likelihood of the support counts an oracle's measurement has.

For GRR every report supports exactly one item, so the counts are one multinomial
draw; for the other oracles each count's exact marginal is binomial (their product is a
composite likelihood). Every method, convex form and model that writes a likelihood asks
:func:`likelihood_kind` here.
"""

from __future__ import annotations

from bayesldp._validation import check_choice
from bayesldp.measurement import Measurement
from bayesldp.oracles._base import FrequencyOracle
from bayesldp.oracles._registry import oracle_class


def likelihood_kind(m: Measurement, likelihood: str, name: str = "likelihood") -> str:
    """Return the support-count likelihood to use: ``"multinomial"`` (GRR) or ``"binomial"``.

    ``"auto"`` picks the oracle's ``likelihood_kind`` (multinomial for GRR, binomial
    otherwise; :func:`bayesldp.oracles.oracle_class`); ``"multinomial"`` is refused for an
    oracle whose cell probabilities do not sum to one or whose support counts do not sum
    to ``n``. The one place these are decided
    (the PyMC layer's :func:`bayesldp.models.likelihood.resolve_kind` asks it too).

    Parameters
    ----------
    m : Measurement
        Raw oracle output; its ``oracle``, ``p``, ``q`` and ``d`` decide.
    likelihood : {"auto", "multinomial", "binomial"}
        The likelihood asked for.
    name : str, default "likelihood"
        The argument's name, for the error messages.
    """
    check_choice(likelihood, ("auto", "multinomial", "binomial"), name)
    if likelihood == "auto":
        return oracle_class(m.oracle, FrequencyOracle).likelihood_kind
    if likelihood == "multinomial":
        if abs(m.p + (m.domain_size - 1) * m.q - 1) > 1e-9:
            raise ValueError(
                f"{name}='multinomial' needs an oracle with p + (d-1) q = 1 (GRR); "
                f"here p + (d-1) q = {m.p + (m.domain_size - 1) * m.q:.6g}"
            )
        total = int(m.support_counts.sum())
        if total != m.n:
            raise ValueError(
                f"{name}='multinomial' needs support counts that sum to n (one item per "
                f"report); here they sum to {total}, n={m.n}"
            )
    return likelihood
