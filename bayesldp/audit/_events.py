"""Events of an audit: views of the reports in which an event is one key value.

:class:`SupportEvent` reads whether a report supports the two compared inputs (the
most powerful event for a correct pure oracle); :class:`PositionEvent` reads the slots
of the two inputs in a report that lists items (it catches a report whose order
leaks the user's value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bayesldp.oracles import FrequencyOracle


def _format_bits(bits: bytes, a: int, b: int, what: str) -> str:
    fa, fb = (bool(x) for x in bits[:2])
    return f"{what} {a}: {'yes' if fa else 'no'}, {what} {b}: {'yes' if fb else 'no'}"


class SupportEvent:
    r"""Event ``(report supports a, report supports b)`` for a frequency oracle.

    For every pure oracle (GRR, OUE, SUE, OLH, SS, HR) the likelihood ratio
    :math:`P(o \mid a) / P(o \mid b)` of a report ``o`` depends on ``o`` only through
    these two bits (OUE/SUE: the bits at ``a`` and ``b``; OLH: whether the reported
    bucket equals ``h(a)`` and ``h(b)``, whatever the hash; SS: whether ``a`` and ``b``
    are in the subset; HR: whether the column is in :math:`C_a` and :math:`C_b`; GRR:
    whether the report is ``a`` or ``b``). The key ``(1, 0)`` is therefore exactly the
    set of reports of largest ratio :math:`e^\varepsilon`, and no event of that ratio
    is more probable, which makes it the most powerful event for a correct oracle.
    It ignores everything else in the report (slot order, dtype), so audits should
    also look at the raw bytes (:func:`audit_oracle` does).

    Support is read through the oracle's own wire format (``oracle.supports``).
    """

    name = "support"

    def __init__(self, oracle: FrequencyOracle) -> None:
        if not isinstance(oracle, FrequencyOracle):
            raise ValueError(f"oracle must be a bayesldp FrequencyOracle, got {oracle!r}")
        self.oracle = oracle

    def supports(self, reports: Any, items: Any) -> np.ndarray:
        """Boolean array (users x items): does each report support each item.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in the oracle's wire format.
        items : array_like of int
            Items in ``[0, d)``.
        """
        return self.oracle.supports(reports, items)

    def __call__(self, reports: Any, a: int, b: int) -> np.ndarray:
        """Keys: uint8 array (users x 2) of (supports a, supports b)."""
        return self.supports(reports, [a, b]).astype(np.uint8)

    def describe(self, key: bytes, a: int, b: int) -> str:
        """Human-readable form of a key.

        Parameters
        ----------
        key : bytes
            A key as :meth:`__call__` makes it (two bytes, the support bits).
        a, b : int
            The two items compared.
        """
        return _format_bits(key, a, b, "supports")


class PositionEvent:
    """Event ``(slot of a, slot of b)`` in a report that lists items (-1 if absent).

    For set-valued reports (subset selection) this keeps the order information that
    :class:`SupportEvent` throws away, at any domain size: a report that puts the
    user's own item in slot 0 makes ``(slot of a, slot of b) = (1, 0)`` impossible
    under input ``a`` (when a is reported it is first) but possible under ``b``.
    """

    name = "position"

    def __call__(self, reports: Any, a: int, b: int) -> np.ndarray:
        """Keys: int16 array (users x 2) of the first slot holding a and b, or -1."""
        r = np.asarray(reports)
        r = r.reshape(r.shape[0], -1)
        out = np.full((r.shape[0], 2), -1, dtype=np.int16)
        for col, item in enumerate((a, b)):
            hit = r == item
            found = hit.any(axis=1)
            out[found, col] = hit[found].argmax(axis=1)
        return out

    def describe(self, key: bytes, a: int, b: int) -> str:
        """Human-readable form of a key.

        Parameters
        ----------
        key : bytes
            A key as :meth:`__call__` makes it (two int16 slots, -1 for absent).
        a, b : int
            The two items compared.
        """
        pa, pb = np.frombuffer(key, dtype=np.int16)[:2]
        show = lambda s: "absent" if s < 0 else f"slot {s}"  # noqa: E731
        return f"item {a}: {show(pa)}, item {b}: {show(pb)}"


def support_event(oracle: FrequencyOracle) -> SupportEvent:
    """Return the ``(supports a, supports b)`` event of ``oracle`` (see :class:`SupportEvent`).

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle whose reports the event reads.
    """
    return SupportEvent(oracle)


def position_event() -> PositionEvent:
    """Return the ``(slot of a, slot of b)`` event of list-valued reports.

    See :class:`PositionEvent`.
    """
    return PositionEvent()


def event_name(ev: Any) -> str:
    if ev is None:
        return "bytes"
    return str(getattr(ev, "name", None) or getattr(ev, "__name__", None) or type(ev).__name__)


def normalise_events(event: Any) -> list:
    if event is None or callable(event):
        views = [event]
    elif isinstance(event, Sequence) and not isinstance(event, str | bytes):
        views = list(event)
        if not views:
            raise ValueError("event must not be an empty sequence")
    else:
        raise ValueError(
            f"event must be None, a callable (reports, a, b) -> keys, or a sequence of "
            f"them, got {event!r}"
        )
    for ev in views:
        if ev is not None and not callable(ev):
            raise ValueError(f"event items must be None or callables, got {ev!r}")
    return views
