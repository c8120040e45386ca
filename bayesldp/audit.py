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
    Audit any callable ``privatize(values, rng) -> reports``.
audit_oracle
    Audit one of bayesldp's frequency oracles with the most powerful events known for it.
support_event, position_event
    The events that :func:`audit_oracle` uses besides the raw bytes.
clopper_pearson
    Exact binomial confidence bounds.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from bayesldp._validation import (
    check_choice,
    check_float,
    check_int,
    check_rng,
    check_values,
)
from bayesldp.oracles import SS, FrequencyOracle

__all__ = [
    "DEFAULT_SAMPLES",
    "AuditResult",
    "PositionEvent",
    "SupportEvent",
    "audit_oracle",
    "clopper_pearson",
    "default_inputs",
    "empirical_epsilon",
    "oracle_events",
    "position_event",
    "support_event",
]

logger = logging.getLogger(__name__)

#: Users per input in :func:`audit_oracle` (half select the worst event, half bound it).
DEFAULT_SAMPLES = 200_000
#: Users privatized per call of ``privatize`` (bounds memory; users are independent).
CHUNK = 1 << 16
#: Reports wider than this many bytes are compared through a 16-byte BLAKE2b digest.
MAX_KEY_BYTES = 64
#: Largest number of inputs :func:`default_inputs` returns.
MAX_DEFAULT_INPUTS = 8

Event = Callable[[Any, int, int], Any]


# ---------------------------------------------------------------------------
# Clopper-Pearson


def clopper_pearson(successes, trials: int, confidence: float = 0.95, *, alternative="two-sided"):
    """Exact (Clopper-Pearson) confidence bounds for a binomial proportion.

    Parameters
    ----------
    successes : int or array_like of int
        Observed successes ``k`` (``0 <= k <= trials``).
    trials : int
        Number of trials ``n`` (>= 1).
    confidence : float
        Confidence level in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        As in :func:`scipy.stats.binomtest`: ``"greater"`` gives a one-sided lower
        bound (upper bound 1), ``"less"`` a one-sided upper bound (lower bound 0).

    Returns
    -------
    (lower, upper) : tuple of float or numpy.ndarray
        ``lower = Beta(a; k, n - k + 1)`` quantile and ``upper = Beta(1 - a; k + 1, n - k)``
        quantile with ``a = (1 - confidence) / 2`` (two-sided) or ``1 - confidence``
        (one-sided); ``lower = 0`` when ``k = 0`` and ``upper = 1`` when ``k = n``.
    """
    n = check_int(trials, "trials", minimum=1)
    conf = check_float(
        confidence, "confidence", minimum=0, maximum=1, strict_minimum=True, strict_maximum=True
    )
    check_choice(alternative, ("two-sided", "greater", "less"), "alternative")
    k = np.asarray(successes)
    if k.dtype == bool or not np.issubdtype(k.dtype, np.integer):
        raise ValueError(f"successes must be integers, got dtype {k.dtype}")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"successes must lie in [0, trials={n}]")
    tail = (1 - conf) / 2 if alternative == "two-sided" else 1 - conf
    kf = k.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(tail, np.maximum(kf, 1), n - kf + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - tail, kf + 1, np.maximum(n - kf, 1)), 1.0)
    if alternative == "greater":
        upper = np.ones_like(lower)
    elif alternative == "less":
        lower = np.zeros_like(upper)
    if k.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def _log_ratio_lower(x_a, x_b, n_a: int, n_b: int, confidence: float) -> np.ndarray:
    """Lower bound on log(P_a / P_b) from x_a of n_a and x_b of n_b (union of two CP bounds).

    With probability at least ``confidence``, both the one-sided lower bound on
    ``P_a`` and the one-sided upper bound on ``P_b`` (each at ``(1 + confidence) / 2``)
    hold, and then so does their log-ratio bound.
    """
    half = (1 + confidence) / 2
    ua, ia = np.unique(np.asarray(x_a, dtype=np.int64), return_inverse=True)
    ub, ib = np.unique(np.asarray(x_b, dtype=np.int64), return_inverse=True)
    lower, _ = clopper_pearson(ua, n_a, half, alternative="greater")
    _, upper = clopper_pearson(ub, n_b, half, alternative="less")
    with np.errstate(divide="ignore"):
        out = np.log(lower)[ia] - np.log(upper)[ib]
    return out.reshape(np.shape(x_a))


# ---------------------------------------------------------------------------
# reports as keys


def _keys(out, n: int, name: str) -> np.ndarray:
    """One key per user, such that keys are equal exactly when the bytes are equal.

    ``out`` is an ndarray whose first axis is users (row ``i`` of
    ``np.ascontiguousarray(out).reshape(n, -1)`` is user ``i``'s bytes), or a list or
    tuple of ``bytes``. Returns a 1-D void array (fixed width) or object array of bytes.
    """
    if isinstance(out, np.ndarray):
        if out.dtype.hasobject:
            raise ValueError(
                f"{name} returned an object array; return a numeric array or a list of bytes"
            )
        if out.ndim == 0 or out.shape[0] != n:
            raise ValueError(
                f"{name} returned an array of shape {out.shape}; its first axis must be "
                f"the {n} users"
            )
        rows = np.ascontiguousarray(out).reshape(n, -1)
        width = rows.shape[1] * rows.dtype.itemsize
        if width == 0:
            return np.full(n, b"", dtype=object)
        keys = rows.view(np.dtype((np.void, width))).reshape(n)
        if width > MAX_KEY_BYTES:
            return _digest(keys)
        return keys
    if isinstance(out, list | tuple):
        if len(out) != n:
            raise ValueError(f"{name} returned {len(out)} reports for {n} users")
        if not all(isinstance(x, bytes) for x in out):
            raise ValueError(f"{name} returned a sequence whose items are not all bytes")
        keys = np.empty(n, dtype=object)
        keys[:] = list(out)
        return keys
    raise ValueError(
        f"{name} must return a numpy array (first axis = users) or a list of bytes, "
        f"got {type(out).__name__}"
    )


def _digest(keys: np.ndarray) -> np.ndarray:
    """16-byte BLAKE2b digests of wide keys (equal bytes give equal digests)."""
    out = np.empty(keys.size, dtype=np.dtype((np.void, 16)))
    view = out.view(np.uint8).reshape(keys.size, 16)
    for i, key in enumerate(keys):
        view[i] = np.frombuffer(hashlib.blake2b(key.tobytes(), digest_size=16).digest(), np.uint8)
    return out


def _as_bytes_objects(keys: np.ndarray) -> np.ndarray:
    if keys.dtype == object:
        return keys
    out = np.empty(keys.size, dtype=object)
    out[:] = [k.tobytes() for k in keys]
    return out


def _unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)``, sorting short byte keys as integers."""
    width = keys.dtype.itemsize
    if keys.dtype.kind != "V" or width > 8:
        return np.unique(keys, return_inverse=True)
    padded = np.zeros((keys.size, 8), dtype=np.uint8)
    padded[:, :width] = keys.view(np.uint8).reshape(keys.size, width)
    ints, inverse = np.unique(padded.view(np.uint64).reshape(-1), return_inverse=True)
    back = np.ascontiguousarray(ints.view(np.uint8).reshape(-1, 8)[:, :width])
    return back.view(keys.dtype).reshape(-1), inverse


def _concat(chunks: list[np.ndarray]) -> np.ndarray:
    if len({(k.dtype.kind, k.dtype.itemsize) for k in chunks}) > 1:
        chunks = [_as_bytes_objects(k) for k in chunks]  # e.g. widths differ
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _group_counts(
    keys: list[np.ndarray], selection: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Count each distinct key per input and half.

    Returns the distinct keys (as one array) and counts of shape
    ``(len(keys), 2, n_keys)``: ``[:, 0]`` the selection half, ``[:, 1]`` the rest.
    """
    uniq, inverse = _unique(_concat(keys))
    counts = np.zeros((len(keys), 2, uniq.size), dtype=np.int64)
    start = 0
    for g, (k, sel) in enumerate(zip(keys, selection, strict=True)):
        inv = inverse[start : start + k.size]
        counts[g, 0] = np.bincount(inv[sel], minlength=uniq.size)
        counts[g, 1] = np.bincount(inv[~sel], minlength=uniq.size)
        start += k.size
    return uniq, counts


def _describe_bytes(key: bytes, layouts: set) -> str:
    """Return the report's values if all reports share one dtype and width, else its bytes."""
    if len(layouts) == 1 and None not in layouts:
        ((dtype, items),) = layouts
        dt = np.dtype(dtype)
        if len(key) == dt.itemsize * items and len(key) <= MAX_KEY_BYTES:
            values = np.frombuffer(key, dtype=dt)
            return f"report {values.tolist()} ({dt.name})"
        if dt.itemsize * items > MAX_KEY_BYTES:
            return f"report with BLAKE2b digest 0x{key.hex()}"
    return "0x" + key.hex() if len(key) <= 32 else f"0x{key[:32].hex()}... ({len(key)} bytes)"


def _key_bytes(key) -> bytes:
    return key if isinstance(key, bytes) else key.tobytes()


# ---------------------------------------------------------------------------
# events


def _fmt_bits(bits: bytes, a: int, b: int, what: str) -> str:
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

    def supports(self, reports, items) -> np.ndarray:
        """Boolean array (users x items): does each report support each item.

        Parameters
        ----------
        reports : numpy.ndarray
            Reports in the oracle's wire format.
        items : array_like of int
            Items in ``[0, d)``.
        """
        return self.oracle.supports(reports, items)

    def __call__(self, reports, a: int, b: int) -> np.ndarray:
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
        return _fmt_bits(key, a, b, "supports")


class PositionEvent:
    """Event ``(slot of a, slot of b)`` in a report that lists items (-1 if absent).

    For set-valued reports (subset selection) this keeps the order information that
    :class:`SupportEvent` throws away, at any domain size: a report that puts the
    user's own item in slot 0 makes ``(slot of a, slot of b) = (1, 0)`` impossible
    under input ``a`` (when a is reported it is first) but possible under ``b``.
    """

    name = "position"

    def __call__(self, reports, a: int, b: int) -> np.ndarray:
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


def _event_name(ev) -> str:
    if ev is None:
        return "bytes"
    return str(getattr(ev, "name", None) or getattr(ev, "__name__", None) or type(ev).__name__)


def _normalise_events(event) -> list:
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


# ---------------------------------------------------------------------------
# result


@dataclass(frozen=True)
class AuditResult:
    r"""Outcome of an empirical epsilon-LDP audit.

    Attributes
    ----------
    epsilon_hat : float
        Point estimate :math:`\log(\hat P_a(E) / \hat P_b(E))` for the selected pair and
        event on the held-out half (``inf`` when the event never occurred under ``b``
        there; floored at 0).
    epsilon_lower : float
        Lower confidence bound on the mechanism's epsilon at level ``confidence``,
        valid including the search over pairs and events (floored at 0).
    pair : tuple of int
        Inputs ``(a, b)``: the bound is on :math:`\log P_a(E) - \log P_b(E)`.
    event : str
        Which view defines the event: ``"bytes"`` (the raw report) or an event's name.
    output : bytes
        The key of the event ``E`` in that view (the report's bytes for ``"bytes"``).
    description : str
        A readable form of ``output``.
    counts : tuple of int
        Occurrences of ``E`` among the held-out users holding ``a`` and ``b``.
    holdout : int
        Held-out users per input (``samples - samples // 2``).
    samples : int
        Users privatized per input.
    confidence : float
        Confidence level of ``epsilon_lower``.
    claimed_epsilon : float or None
        The epsilon the mechanism claims, if given.
    """

    epsilon_hat: float
    epsilon_lower: float
    pair: tuple[int, int]
    event: str
    output: bytes
    description: str
    counts: tuple[int, int]
    holdout: int
    samples: int
    confidence: float
    claimed_epsilon: float | None = None
    inputs: tuple[int, ...] = field(default=(), repr=False)

    @property
    def contradicted(self) -> bool | None:
        """True when the lower bound exceeds the claimed epsilon (None if none claimed)."""
        if self.claimed_epsilon is None:
            return None
        return self.epsilon_lower > self.claimed_epsilon

    def passed(self, epsilon: float | None = None) -> bool:
        """Return True unless the audit contradicts ``epsilon`` (default: the claimed one).

        The audit contradicts ``epsilon`` when its lower bound ``epsilon_lower`` exceeds it.

        Parameters
        ----------
        epsilon : float, optional
            The privacy level to test, at least 0; None for ``claimed_epsilon``.

        Raises
        ------
        ValueError
            ``epsilon`` is None and the audit has no claimed epsilon.
        """
        if epsilon is None:
            if self.claimed_epsilon is None:
                raise ValueError("epsilon must be given: this audit has no claimed epsilon")
            epsilon = self.claimed_epsilon
        eps = check_float(epsilon, "epsilon", minimum=0)
        return self.epsilon_lower <= eps

    def summary(self) -> str:
        """One line: estimate, bound and (if an epsilon is claimed) the verdict."""
        pct = f"{100 * self.confidence:g}%"
        text = (
            f"eps_hat {self.epsilon_hat:.3f}, {pct} lower bound {self.epsilon_lower:.3f}"
            f" (inputs {self.pair[0]} vs {self.pair[1]}, {self.event} event: "
            f"{self.description}; held-out counts {self.counts[0]} vs {self.counts[1]} "
            f"of {self.holdout})"
        )
        if self.claimed_epsilon is not None:
            verdict = (
                f"VIOLATES eps = {self.claimed_epsilon:g}"
                if self.contradicted
                else f"consistent with eps = {self.claimed_epsilon:g}"
            )
            text = f"{verdict}: {text}"
        return text


# ---------------------------------------------------------------------------
# the audit


def _check_inputs(inputs) -> np.ndarray:
    arr = np.asarray(inputs)
    if arr.ndim != 1:
        raise ValueError(f"inputs must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"inputs must hold integer values, got dtype {arr.dtype}")
    if arr.size < 2:
        raise ValueError(f"inputs must hold at least two values, got {arr.size}")
    if np.unique(arr).size != arr.size:
        raise ValueError("inputs must not repeat a value")
    return arr.astype(np.int64)


def empirical_epsilon(
    privatize: Callable[[np.ndarray, np.random.Generator], Any],
    inputs,
    *,
    samples: int,
    confidence: float = 0.99,
    rng=None,
    event=None,
    epsilon: float | None = None,
    progress: Callable[[int], Any] | None = None,
) -> AuditResult:
    r"""Estimate and lower-bound the epsilon of a privatizer from its outputs.

    For each value ``v`` in ``inputs``, ``samples`` users holding ``v`` are privatized
    by calls ``privatize(np.full(size, v), rng)`` of at most :data:`CHUNK` users.
    Every ordered pair of inputs ``(a, b)`` and every event ``E`` (an output, or a key
    of an ``event`` view) is a candidate for :math:`\log P_a(E) - \log P_b(E)`,
    which eps-LDP bounds by eps.

    **Selection and validity (sample splitting).** Each input's reports are shuffled
    and split in two. On the first half, every candidate gets the bound described
    below, and the candidate with the largest one is selected; on the second half,
    independent of the selection, only that candidate is bounded. So the search over
    pairs, events and views costs no confidence at all: if the mechanism is eps-LDP,
    ``epsilon_lower <= eps`` with probability at least ``confidence``, however many
    outputs there are. (A Bonferroni correction over all candidates would need no
    split, but its price grows with the number of outputs, which is unbounded for
    hash-based reports; the split costs half the samples, whatever the search.)
    The held-out bound is the union of two one-sided Clopper-Pearson bounds, each at
    level ``(1 + confidence) / 2``: a lower bound ``L`` on :math:`P_a(E)` and an upper
    bound ``U`` on :math:`P_b(E)`, so ``log(L / U)`` is a lower bound on the log-ratio
    with probability at least ``confidence``. It assumes users are privatized
    independently (i.i.d. reports for each input).

    Parameters
    ----------
    privatize : callable
        ``privatize(values, rng) -> reports``: ``values`` an int64 array of users'
        values, ``rng`` a :class:`numpy.random.Generator`. ``reports`` is an ndarray
        whose first axis is users (user ``i``'s report is the bytes of row ``i`` of
        ``np.ascontiguousarray(reports).reshape(n, -1)``, so dtype, order and layout
        count), or a list of ``bytes`` (one per user).
    inputs : sequence of int
        At least two distinct values to privatize (e.g. ``range(d)`` for a small ``d``).
    samples : int
        Users per input (>= 2); half select, half bound.
    confidence : float, default 0.99
        Confidence level of the lower bound, in (0, 1).
    rng : numpy.random.Generator, int seed or None
        Randomness of the privatization and of the split.
    event : None, callable or sequence of them
        The views in which events are defined. ``None`` is the raw report bytes. A
        callable ``event(reports, a, b) -> keys`` maps a block of reports, exactly as
        one call of ``privatize`` returned it (at most :data:`CHUNK` users), to one
        key per user, for the pair of inputs ``(a, b)`` (it is called with the same
        ``(a, b)`` for the reports of both inputs); keys are compared as bytes like
        reports. It must
        not look at anything but the reports (and ``a``, ``b``): each key value is then
        a fixed set of reports, to which eps-LDP applies. Several views can be given
        at once (e.g. ``[None, support_event(oracle)]``); the split makes that free.
        A callable may have a ``name`` and a ``describe(key, a, b)`` method.
    epsilon : float, optional
        The epsilon the mechanism claims; stored in the result (``contradicted``).
    progress : callable, optional
        Called with 1 after each input is privatized (e.g. ``tqdm.update``).

    Returns
    -------
    AuditResult
    """
    if not callable(privatize):
        raise ValueError(f"privatize must be callable, got {privatize!r}")
    values = _check_inputs(inputs)
    n = check_int(samples, "samples", minimum=2)
    conf = check_float(
        confidence, "confidence", minimum=0, maximum=1, strict_minimum=True, strict_maximum=True
    )
    gen = check_rng(rng)
    views = _normalise_events(event)
    claimed = None
    if epsilon is not None:
        claimed = check_float(epsilon, "epsilon", minimum=0, strict_minimum=True)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable or None, got {progress!r}")

    n_sel = n // 2
    n_hold = n - n_sel
    m = values.size
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    # keys[(view, group)][member] -> list of key chunks; group None = all inputs (bytes)
    keys: dict = {}
    halves = []  # per input: True for users in the selection half
    # (dtype, items per row) of the reports, to describe a bytes key
    layouts: set[tuple[str, int] | None] = set()
    for i, v in enumerate(values):
        sel = np.zeros(n, dtype=bool)
        sel[gen.permutation(n)[:n_sel]] = True
        halves.append(sel)
        for start in range(0, n, CHUNK):
            size = min(CHUNK, n - start)
            out = privatize(np.full(size, v, dtype=np.int64), gen)
            raw = _keys(out, size, "privatize")
            if isinstance(out, np.ndarray):
                layouts.add((out.dtype.str, out.reshape(size, -1).shape[1]))
            else:
                layouts.add(None)
            for vi, ev in enumerate(views):
                if ev is None:
                    keys.setdefault((vi, None), [[] for _ in range(m)])[i].append(raw)
                    continue
                for g, (pi, pj) in enumerate(pairs):
                    if i in (pi, pj):
                        k = ev(out, int(values[pi]), int(values[pj]))
                        member = 0 if i == pi else 1
                        slot = keys.setdefault((vi, g), [[], []])
                        slot[member].append(_keys(k, size, "event"))
        if progress is not None:
            progress(1)

    # Groups of inputs whose keys are comparable: all inputs for the raw bytes, each
    # pair of inputs for a pair event (its keys depend on the pair).
    groups = []  # (view index, input indices, event arguments, distinct keys, counts)
    for (vi, g), chunks in keys.items():
        members = tuple(range(m)) if g is None else pairs[g]
        args = None if g is None else (int(values[members[0]]), int(values[members[1]]))
        merged = [_concat(c) for c in chunks]
        uniq, counts = _group_counts(merged, [halves[i] for i in members])
        groups.append((vi, members, args, uniq, counts))

    # Candidates: (group, numerator position, denominator position, key index) with the
    # event seen at least once under the numerator input in the selection half.
    candidates = []
    for g, (_, members, _, _, counts) in enumerate(groups):
        for p in range(len(members)):
            seen = np.flatnonzero(counts[p, 0] > 0)
            for q in range(len(members)):
                if q != p and seen.size:
                    candidates.append((g, p, q, seen, counts[p, 0, seen], counts[q, 0, seen]))
    total = sum(c[3].size for c in candidates)
    # Selection: the largest lower bound on the selection half, at a Bonferroni-adjusted
    # level so that rare events (wide intervals) do not win by chance. Any rule is valid
    # here: the bound below uses only the other half.
    select_conf = 1 - (1 - conf) / max(total, 1)
    best = (-math.inf, 0, 0, 1, 0)
    for g, p, q, seen, x_a, x_b in candidates:
        scores = _log_ratio_lower(x_a, x_b, n_sel, n_sel, select_conf)
        top = int(np.argmax(scores))
        if scores[top] > best[0]:
            best = (float(scores[top]), g, p, q, int(seen[top]))
    _, g, p, q, k = best
    vi, members, args, uniq, counts = groups[g]
    a, b = int(values[members[p]]), int(values[members[q]])
    key = _key_bytes(uniq[k])
    y_a, y_b = int(counts[p, 1, k]), int(counts[q, 1, k])
    lower = float(_log_ratio_lower(np.array(y_a), np.array(y_b), n_hold, n_hold, conf))
    if y_a == 0:
        hat = 0.0
    elif y_b == 0:
        hat = math.inf
    else:
        hat = max(0.0, math.log(y_a) - math.log(y_b))
    view = views[vi]
    if view is not None and hasattr(view, "describe"):
        assert args is not None  # an event view is always looked at on a pair of inputs
        description = view.describe(key, *args)
    else:
        description = _describe_bytes(key, layouts if view is None else set())
    result = AuditResult(
        epsilon_hat=hat,
        epsilon_lower=max(0.0, lower),
        pair=(a, b),
        event=_event_name(view),
        output=bytes(key),
        description=description,
        counts=(y_a, y_b),
        holdout=n_hold,
        samples=n,
        confidence=conf,
        claimed_epsilon=claimed,
        inputs=tuple(int(v) for v in values),
    )
    logger.info("audit: %s", result.summary())
    return result


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
    inputs=None,
    samples: int = DEFAULT_SAMPLES,
    confidence: float = 0.99,
    rng=None,
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
        Users per input (default :data:`DEFAULT_SAMPLES`).
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
        values = check_values(_check_inputs(inputs), d, "inputs")
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
