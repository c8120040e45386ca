r"""The empirical epsilon of any privatizer, with a lower bound valid after the search.

A mechanism :math:`M` is :math:`\varepsilon`-LDP when, for every pair of inputs
:math:`a, b` and every set :math:`E` of reports,
:math:`P(M(a) \in E) \le e^{\varepsilon} P(M(b) \in E)`. :func:`empirical_epsilon`
privatizes many users holding each of a few inputs, selects the pair and event with the
largest bound on half of them and bounds that one on the other half.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayesldp._validation import check_float, check_int, check_rng
from bayesldp.audit._bounds import log_ratio_lower
from bayesldp.audit._events import event_name, normalise_events
from bayesldp.audit._keys import concat_keys, describe_bytes, group_counts, key_bytes, report_keys

logger = logging.getLogger(__name__)

#: Users privatized per call of ``privatize`` (bounds memory; users are independent).
CHUNK = 1 << 16


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


def check_inputs(inputs: Any) -> np.ndarray:
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
    inputs: Any,
    *,
    samples: int,
    confidence: float = 0.99,
    rng: Any = None,
    event: Any = None,
    epsilon: float | None = None,
    progress: Callable[[int], Any] | None = None,
) -> AuditResult:
    r"""Estimate and lower-bound the epsilon of a privatizer from its outputs.

    For each value ``v`` in ``inputs``, ``samples`` users holding ``v`` are privatized
    by calls ``privatize(np.full(size, v), rng)`` of at most ``2**16`` users.
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
        one call of ``privatize`` returned it (at most ``2**16`` users), to one
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
    values = check_inputs(inputs)
    n = check_int(samples, "samples", minimum=2)
    conf = check_float(
        confidence, "confidence", minimum=0, maximum=1, strict_minimum=True, strict_maximum=True
    )
    gen = check_rng(rng)
    views = normalise_events(event)
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
            raw = report_keys(out, size, "privatize")
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
                        slot[member].append(report_keys(k, size, "event"))
        if progress is not None:
            progress(1)

    # Groups of inputs whose keys are comparable: all inputs for the raw bytes, each
    # pair of inputs for a pair event (its keys depend on the pair).
    groups = []  # (view index, input indices, event arguments, distinct keys, counts)
    for (vi, g), chunks in keys.items():
        members = tuple(range(m)) if g is None else pairs[g]
        args = None if g is None else (int(values[members[0]]), int(values[members[1]]))
        merged = [concat_keys(c) for c in chunks]
        uniq, counts = group_counts(merged, [halves[i] for i in members])
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
        scores = log_ratio_lower(x_a, x_b, n_sel, n_sel, select_conf)
        top = int(np.argmax(scores))
        if scores[top] > best[0]:
            best = (float(scores[top]), g, p, q, int(seen[top]))
    _, g, p, q, k = best
    vi, members, args, uniq, counts = groups[g]
    a, b = int(values[members[p]]), int(values[members[q]])
    key = key_bytes(uniq[k])
    y_a, y_b = int(counts[p, 1, k]), int(counts[q, 1, k])
    lower = float(log_ratio_lower(np.array(y_a), np.array(y_b), n_hold, n_hold, conf))
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
        description = describe_bytes(key, layouts if view is None else set())
    result = AuditResult(
        epsilon_hat=hat,
        epsilon_lower=max(0.0, lower),
        pair=(a, b),
        event=event_name(view),
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
