"""The audit of bayesldp's own oracles: their inputs, their events, one call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayesldp._validation import check_int, check_values
from bayesldp.audit._empirical import AuditResult, check_inputs, empirical_epsilon
from bayesldp.audit._events import position_event, support_event
from bayesldp.oracles import SS, FrequencyOracle

#: Users per input in :func:`audit_oracle` (half select the worst event, half bound it).
DEFAULT_SAMPLES = 200_000
#: Largest number of inputs :func:`default_inputs` returns.
MAX_DEFAULT_INPUTS = 8


def default_inputs(domain_size: int) -> np.ndarray:
    """Return the inputs an audit privatizes.

    All of ``0 .. d-1`` if ``d <= 8``, else 8 spread values.

    Parameters
    ----------
    domain_size : int
        The oracle's domain size ``d``, at least 2.

    Returns
    -------
    numpy.ndarray of int64
        Distinct items, increasing.
    """
    d = check_int(domain_size, "domain_size", minimum=2)
    if d <= MAX_DEFAULT_INPUTS:
        return np.arange(d, dtype=np.int64)
    return np.unique(np.rint(np.linspace(0, d - 1, MAX_DEFAULT_INPUTS)).astype(np.int64))


def oracle_events(oracle: FrequencyOracle) -> list:
    """Return the views :func:`audit_oracle` searches for ``oracle``.

    Always the raw report bytes (any leak in the transmitted layout, when the output
    space is small enough for outputs to repeat) and :class:`SupportEvent` (the most
    powerful event for a correct pure oracle, at any domain size); for SS also
    :class:`PositionEvent` (slot order, at any domain size).

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle audited.

    Returns
    -------
    list
        ``None`` (the raw bytes) followed by the event objects.
    """
    views: list = [None, support_event(oracle)]
    if isinstance(oracle, SS):
        views.append(position_event())
    return views


def audit_oracle(
    oracle: FrequencyOracle,
    *,
    inputs: Any = None,
    samples: int = DEFAULT_SAMPLES,
    confidence: float = 0.99,
    rng: Any = None,
    progress: Callable[[int], Any] | None = None,
) -> AuditResult:
    """Audit a bayesldp frequency oracle's ``privatize`` against its own epsilon.

    Parameters
    ----------
    oracle : FrequencyOracle
        ``GRR``, ``OUE``, ``SUE``, ``OLH``, ``SS`` or ``HR`` (or a subclass). Audits use
        small domains (say ``d <= 8``), where every pair of inputs can be searched.
    inputs : sequence of int, optional
        Values to privatize; default :func:`default_inputs` of the domain size.
    samples : int
        Users per input (default 200,000).
    confidence : float
        Confidence level of the lower bound.
    rng : numpy.random.Generator, int seed or None
        Randomness.
    progress : callable, optional
        Called with 1 after each input.

    Returns
    -------
    AuditResult
        With ``claimed_epsilon = oracle.epsilon``; ``result.contradicted`` is True when
        the audit shows the oracle is not eps-LDP as transmitted.

    Notes
    -----
    The events searched are those of :func:`oracle_events`: the raw bytes of each
    report, the oracle's ``(supports a, supports b)`` event, and for SS the slots of
    ``a`` and ``b``. See :func:`empirical_epsilon` for the statistics.
    """
    if not isinstance(oracle, FrequencyOracle):
        raise ValueError(f"oracle must be a bayesldp FrequencyOracle, got {oracle!r}")
    d = oracle.domain_size
    if inputs is None:
        if d < 2:
            raise ValueError("oracle must have a domain size of at least 2 to be audited")
        values = default_inputs(d)
    else:
        values = check_values(check_inputs(inputs), d, "inputs")
    return empirical_epsilon(
        oracle.privatize,
        values,
        samples=samples,
        confidence=confidence,
        rng=rng,
        event=oracle_events(oracle),
        epsilon=oracle.epsilon,
        progress=progress,
    )
