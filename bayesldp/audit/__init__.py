r"""Empirical audit of epsilon-LDP: a lower confidence bound on a privatizer's epsilon.

A mechanism :math:`M` is :math:`\varepsilon`-LDP when, for every pair of inputs
:math:`a, b` and every set :math:`E` of reports,

.. math::

    P(M(a) \in E) \le e^{\varepsilon} \, P(M(b) \in E).

The audit privatizes many users holding each of a few inputs, counts how often each
candidate event occurs, and bounds :math:`\log P_a(E) - \log P_b(E)` from below with
Clopper-Pearson intervals, as in ldp-audit (Arcolezi and Gambs, "Revealing the True
Cost of Local Privacy: An Auditing Perspective", PETS 2024). Where that paper audits
one fixed pair of inputs and one attack per protocol, this audit searches every
ordered pair of inputs and every output (or coarser event) and accounts for that
search by sample splitting (see :func:`empirical_epsilon`).

Reports are audited **as transmitted**: by default each user's report is the bytes
of its row, so dtype, element order and layout all count (a subset-selection report
that lists the user's own item first is not eps-LDP even though the *set* is).

Functions
---------
empirical_epsilon
    Audit any callable ``privatize(values, rng) -> reports``; returns an
    :class:`AuditResult`.
audit_oracle
    Audit one of bayesldp's frequency oracles with the most powerful events known for it.
support_event, position_event
    The events that :func:`audit_oracle` uses besides the raw bytes.
clopper_pearson
    Exact binomial confidence bounds.

The private modules hold the parts: ``_bounds`` (Clopper-Pearson and the log-ratio
bound), ``_keys`` (reports as comparable keys), ``_events`` (the event views),
``_empirical`` (the estimate and its result) and ``_oracle`` (the oracles' audit).
"""

from __future__ import annotations

from bayesldp.audit._bounds import clopper_pearson
from bayesldp.audit._empirical import AuditResult, empirical_epsilon
from bayesldp.audit._events import position_event, support_event
from bayesldp.audit._oracle import audit_oracle

__all__ = [
    "AuditResult",
    "audit_oracle",
    "clopper_pearson",
    "empirical_epsilon",
    "position_event",
    "support_event",
]
