"""Methods in a task: which run, their seeds, their rows, and the warnings they raise.

Methods come from the method registry (:mod:`bayesldp.methods.registry`), plugins included:
any registered method can be named, by ``name`` or ``name@backend``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from bayesldp.runner._experiment import Row, Task
from bayesldp.runner._seeding import method_seed

#: Separates the distinct warnings of one method in one task (``Row``'s ``warning``).
WARNING_SEPARATOR = "\n"


def default_methods(bayes: bool = False) -> tuple[str, ...]:
    """Return the registry's default methods; plus :func:`bayes_methods` if asked.

    Parameters
    ----------
    bayes : bool
        Add the Bayesian methods of :func:`bayes_methods`.

    Returns
    -------
    tuple of str
        Method names in registration order.
    """
    from bayesldp.methods.registry import method_names

    out = method_names(default=True)
    if bayes:
        out += bayes_methods()
    return out


def bayes_methods() -> tuple[str, ...]:
    """Return the Bayesian methods ``--bayes`` adds: those that take seconds, not minutes.

    A method declared with ``MethodSpec.minutes`` (minutes per fit at d = 1024) is left
    out; name it (``--methods``) to run it.
    """
    from bayesldp.methods.registry import method_names

    return method_names(bayesian=True, minutes=False)


def check_methods(specs: Iterable[str]) -> tuple[str, ...]:
    """Check every method spec (``name`` or ``name@backend``) against the registry.

    Parameters
    ----------
    specs : iterable of str
        Method specs; at least one, none given twice.

    Returns
    -------
    tuple of str
        ``specs``, unchanged.

    Raises
    ------
    ValueError
        No spec, an unknown method or backend, or a spec given twice.
    """
    from bayesldp.methods.registry import parse_method

    specs = tuple(specs)
    if not specs:
        raise ValueError("methods: give at least one method")
    for spec in specs:
        try:
            parse_method(spec)
        except ValueError as err:
            raise ValueError(f"methods: {err}") from None
    if len(set(specs)) != len(specs):
        raise ValueError(f"methods: a method is given twice in {','.join(specs)}")
    return specs


def apply_methods(
    m: Any,
    specs: Iterable[str],
    seq: np.random.SeedSequence,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    true_counts: np.ndarray | None = None,
) -> tuple[dict[str, Any], dict[str, float], dict[str, str]]:
    """Post-process ``m`` with each method spec.

    Parameters
    ----------
    m : Measurement
        The oracle's output.
    specs : iterable of str
        Method specs (``name`` or ``name@backend``).
    seq : numpy.random.SeedSequence
        The task's sequence: a method that accepts ``rng`` gets
        ``default_rng(method_seed(seq, spec))``, its own stream.
    options : mapping, optional
        Options per spec, e.g. ``{"ibu": {"max_iter": 10**5}}``.
    true_counts : numpy.ndarray, optional
        The dataset's true counts, given to reference methods that need the truth
        (``MethodSpec.needs_truth``, e.g. ``oracle-bayes``); such a method without them
        is a ValueError.

    Returns
    -------
    estimates, seconds, warnings : dict
        Per spec: the Estimate, the seconds it took, and the whole text of each distinct
        warning it raised, one per line (empty if none).

    Raises
    ------
    ValueError
        A reference method without ``true_counts``, or an error of a method.
    """
    from bayesldp.methods.registry import parse_method, postprocess

    estimates: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    notes: dict[str, str] = {}
    for spec in specs:
        method, backend = parse_method(spec)
        opts = dict((options or {}).get(spec, {}))
        if "rng" not in opts and method.accepts("rng", backend):
            opts["rng"] = np.random.default_rng(method_seed(seq, spec))
        if method.needs_truth:
            if true_counts is None:
                raise ValueError(f"method {spec!r} is a reference that needs the true counts")
            opts.setdefault("true_counts", true_counts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            estimates[spec] = postprocess(m, spec, **opts)
            seconds[spec] = time.perf_counter() - t0
        notes[spec] = WARNING_SEPARATOR.join(sorted({str(w.message) for w in caught}))
    return estimates, seconds, notes


def simulate_and_apply(
    task: Task, dataset: Any, seq: np.random.SeedSequence
) -> tuple[dict[str, Any], dict[str, float], dict[str, str]]:
    """Simulate the task's oracle once (with ``seq``'s next child) and apply every method.

    Parameters
    ----------
    task : Task
        Gives the oracle, epsilon and methods.
    dataset : Dataset
        The loaded dataset; its true counts also go to methods that need them.
    seq : numpy.random.SeedSequence
        The task's sequence; the simulation uses the next child it spawns (the first,
        when nothing was spawned from it before).

    Returns
    -------
    estimates, seconds, warnings : dict
        As :func:`apply_methods` returns them.
    """
    m = task.simulate(dataset, np.random.default_rng(seq.spawn(1)[0]))
    return apply_methods(m, task.methods, seq, true_counts=dataset.counts)


def method_rows(
    metric: str,
    param: float,
    values: Mapping[str, float],
    seconds: Mapping[str, float],
    notes: Mapping[str, str],
) -> list[Row]:
    """Rows ``(method, metric, param, value, seconds, warning)``, one per method of ``values``.

    Parameters
    ----------
    metric : str
        The metric's name.
    param : float
        The metric's parameter (e.g. a set size or ``k``; NaN when it has none).
    values : mapping of str to float
        The metric's value per method.
    seconds, notes : mapping
        Per method: the seconds it took and its warnings' text (as
        :func:`apply_methods` returns them).

    Returns
    -------
    list of Row
    """
    return [(m, metric, param, float(v), seconds[m], notes[m]) for m, v in values.items()]
