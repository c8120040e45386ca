r"""Choose the post-processing method for the query you will publish.

The papers' procedure (NDSS, Fig. 9): fit a synthetic truth to the measurement, simulate
the collection on it many times, and keep the method with the lowest error on the
synthetic truth. :func:`choose_method` does it in one batch per fit: the support counts
of ``reps`` collections are simulated at once from the synthetic user counts (the
parametric bootstrap's simulation, :func:`bayesldp.intervals._bootstrap.bootstrap_counts`),
every candidate method is re-run on all of them through its row function
(:meth:`~bayesldp.MethodSpec.row_function`), and the error of each replicate is the
query's loss against the synthetic truth.

Two synthetic truths are used (:data:`FITS`), the ``norm-sub`` and the ``power-ns``
estimates of the measurement rounded to ``n`` users
(:func:`~bayesldp.intervals._bootstrap.fitted_counts`): the first is flat below its cut,
the second heavy-tailed, and the true data usually lie between. :func:`simulated_losses`
can add one draw from ``eb-npmle``'s posterior (:data:`POSTERIOR_DRAW`: each item's count
drawn from its posterior under the fitted nonparametric prior given its own support
count); measured as a third truth it did not change the choice's regret, and it is not a
default. For each fit every method's loss is divided by the best method's loss under that
fit; the method with the smallest mean ratio over the fits is chosen, and the result says
when the fits prefer different methods. A ``power-ns`` fit whose exponent sits at its
search bound is no synthetic truth (:func:`degenerate`) and is left out, and so is a
candidate whose own estimate of the measurement is degenerate (:func:`unusable_methods`).

Losses, with :math:`e = f' - f_{\rm synthetic}` the error of one replicate:

``"full"``
    Mean squared error over the items, :math:`\frac1d\sum_v e_v^2`.
``("set", fraction)``
    The expected squared error of the sum over a uniformly random set of
    :math:`s = \max(1, \mathrm{round}(\text{fraction}\cdot d))` items (the metrics' rule,
    :func:`bayesldp.metrics.random_subsets`), computed exactly
    (no set is drawn):
    :math:`\mathbb E[(\sum_{v\in S} e_v)^2] = \frac sd \sum_v e_v^2 +
    \frac{s(s-1)}{d(d-1)}\big((\sum_v e_v)^2 - \sum_v e_v^2\big)`.
    Methods answering sets by clipping the raw sum (``post-pos``) are measured on 64
    random sets per replicate instead.
``groups`` (a list of index arrays, or a mapping whose values are)
    Mean over the groups of the squared error of the group's answer.
``("top", k)``
    Mean squared error over the ``k`` items with the largest synthetic frequencies
    (ties by index), as :func:`bayesldp.metrics.topk_mse`.
``("heavy", threshold)``
    The expected number of misclassified items: items whose estimate is at least the
    threshold while their synthetic frequency is below it, plus the reverse.

``power`` and ``power-ns`` fit their exponent to every replicate; here the replicates
share one exponent, the median of their own fits (Calibrate's mean fit), so that one
posterior grid serves them all instead of dozens.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesldp._query import Query, parse_query, set_loss, set_size, top_items
from bayesldp._validation import check_int, check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.methods._calibrate import S_MAX, fit_exponent_mean
from bayesldp.methods.registry import MethodSpec, get_method, method_names, postprocess

if TYPE_CHECKING:  # pandas and the bootstrap load on the first call (a light import)
    import pandas as pd

logger = logging.getLogger(__name__)

__all__ = [
    "MethodChoice",
    "Query",
    "choose_method",
    "default_methods",
    "parse_query",
    "query_loss",
    "rank_losses",
    "simulated_losses",
    "unusable_methods",
]

#: The methods whose estimates are the synthetic truths.
FITS: tuple[str, ...] = ("norm-sub", "power-ns")
#: Fits whose synthetic truth is one draw from the fitted model's posterior, not its estimate.
POSTERIOR_DRAW: tuple[str, ...] = ("eb-npmle",)
#: Random sets per replicate for methods whose set answers are clipped sums.
CLIPPED_SETS = 64
#: Methods whose exponent the replicates share (one posterior grid for all).
_SHARED_EXPONENT = ("power", "power-ns")


def default_methods() -> tuple[str, ...]:
    """Return the candidates :func:`choose_method` ranks by default, from the registry.

    ``base`` and every consistent (non-negative, summing to 1), non-Bayesian method that
    is not slow, does not need the truth and has a row function (so that it runs on all
    replicates at once); a method that shares its row function and fixed options with
    an earlier one (``cls`` and ``norm-sub``) is left out as a duplicate.

    Examples
    --------
    >>> from bayesldp.choose import default_methods
    >>> "norm-sub" in default_methods() and "base" in default_methods()
    True
    """
    names = ("base", *method_names(consistent=True, bayesian=False, slow=False, needs_truth=False))
    out: list[str] = []
    seen: set[Any] = set()
    for name in names:
        spec = get_method(name)
        if spec.rows is None:
            continue
        key = (spec.rows, tuple(sorted(spec.fixed_options.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class MethodChoice:
    """The result of :func:`choose_method`.

    Attributes
    ----------
    chosen : str
        The method with the smallest mean loss ratio over the synthetic fits.
    estimate : Estimate
        ``chosen``'s estimate of the measurement, ready to publish (``.interval``,
        ``.subset``).
    ranking : pandas.DataFrame
        One row per method, best first: ``score`` (the mean over the fits of its loss
        over the best method's loss under that fit; 1 is best everywhere), ``error``
        (its loss averaged over the fits), ``spread`` (the Monte Carlo standard error
        of ``error``), and ``error[FIT]`` / ``spread[FIT]`` for each fit.
    query : Query
        The query the losses measure.
    winners : dict
        The best method under each fit alone.
    agree : bool
        Whether every fit has the same winner.
    note : str
        Says which fit prefers which method when they disagree, and which fit was left
        out as :func:`degenerate`; empty otherwise.
    reps : int
        Simulated collections per fit.
    """

    chosen: str
    estimate: Estimate
    ranking: pd.DataFrame
    query: Query
    winners: dict[str, str] = field(default_factory=dict)
    agree: bool = True
    note: str = ""
    reps: int = 0

    def __repr__(self) -> str:
        """Show the chosen method, the query and the disagreement note."""
        text = f"MethodChoice(chosen={self.chosen!r}, query={str(self.query)!r}, reps={self.reps}"
        return text + (f", note={self.note!r})" if self.note else ")")


def query_loss(
    q: Query,
    out: np.ndarray,
    truth: np.ndarray,
    rule: str = "sum",
    rng: Any = None,
) -> np.ndarray:
    """Return the query's loss of each row of ``out`` against ``truth`` (module docstring).

    Parameters
    ----------
    q : Query
        The query (:func:`parse_query`).
    out : numpy.ndarray
        Estimates, shape ``(B, d)`` (for ``post-pos`` its raw estimates).
    truth : numpy.ndarray
        The true frequencies, length ``d``.
    rule : {"sum", "clip-sum"}, default "sum"
        The method's query rule (:attr:`bayesldp.MethodSpec.query_rule`).
    rng : numpy.random.Generator or int, optional
        Draws the random sets of clipped set sums.

    Returns
    -------
    numpy.ndarray
        Shape ``(B,)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesldp.choose import parse_query, query_loss
    >>> query_loss(parse_query(("top", 1), 2), np.array([[0.5, 0.5]]), np.array([0.7, 0.3]))
    array([0.04])
    """
    out = np.atleast_2d(np.asarray(out, dtype=float))
    truth = np.asarray(truth, dtype=float)
    d = truth.size
    if q.kind == "full":
        return np.mean((out - truth) ** 2, axis=1)
    if q.kind == "top":
        top = top_items(truth, int(q.value or 1))[0]
        return np.mean((out[:, top] - truth[top]) ** 2, axis=1)
    if q.kind == "heavy":
        t = float(q.value or 0.0)
        return np.sum((out >= t) != (truth >= t), axis=1).astype(float)
    clip = rule == "clip-sum"
    if q.kind == "set":
        size = set_size(d, float(q.value or 0.0))
        if not clip:
            return set_loss(out - truth, size)
        masks = np.zeros((CLIPPED_SETS, d))
        rng = check_rng(rng)
        for row in masks:
            row[rng.choice(d, size, replace=False)] = 1.0
        answers = np.maximum(out @ masks.T, 0.0)
        return np.mean((answers - masks @ truth) ** 2, axis=1)
    sums = np.stack([out[:, g].sum(axis=1) for g in q.groups], axis=1)
    if clip:
        sums = np.maximum(sums, 0.0)
    true_sums = np.array([truth[g].sum() for g in q.groups])
    return np.mean((sums - true_sums) ** 2, axis=1)


def _rerun(spec: MethodSpec, m: Measurement, counts: np.ndarray) -> np.ndarray:
    """Re-run a method on every replicate (power's exponent shared, see the module)."""
    from bayesldp.intervals._bootstrap import rerun_rows

    options: dict[str, Any] = {}
    if spec.name in _SHARED_EXPONENT:
        means = (counts / m.n - m.q) / (m.p - m.q) * m.n
        fitted = [fit_exponent_mean(float(y), m.n)[0] for y in means.mean(axis=1)]
        options["s"] = float(np.median(fitted))
    out, _ = rerun_rows(spec, m, counts, options=options)
    return out


def choose_method(
    m: Measurement,
    query: Any = "full",
    *,
    methods: Sequence[str] | None = None,
    reps: int = 50,
    rng: Any = None,
) -> MethodChoice:
    """Choose the post-processing method with the lowest simulated error for ``query``.

    The collection is simulated ``reps`` times on each synthetic truth (:data:`FITS`:
    the ``norm-sub`` and ``power-ns`` estimates of ``m``), every candidate is re-run on
    the simulated measurements, and each is scored by its loss over the best loss under
    each fit, averaged over the fits (the module docstring defines the losses).

    Parameters
    ----------
    m : Measurement
        The raw oracle output you will publish from.
    query : str, tuple, list or mapping, default "full"
        What you will publish: ``"full"`` (every frequency), ``("set", fraction)``
        (sums over random sets of that fraction of the items, in (0, 1]),
        ``("top", k)`` (the ``k`` largest items), ``("heavy", threshold)`` (which items
        reach ``threshold``, in (0, 1)), or a fixed grouping (a list of index arrays, or
        a mapping whose values are).
    methods : sequence of str, optional
        Registered method names to rank; by default :func:`default_methods`. Methods
        without a row function are re-run one replicate at a time.
    reps : int, default 50
        Simulated collections per synthetic truth, at least 1.
    rng : numpy.random.Generator or int, optional
        Source of randomness (the same seed gives the same choice).

    Returns
    -------
    MethodChoice
        The ranking, the chosen method, its estimate of ``m`` and whether the fits agree.

    Raises
    ------
    ValueError
        A bad measurement, query, method or ``reps`` (the message names it).

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> oracle = bayesldp.OUE(epsilon=1.0, domain_size=64)
    >>> counts = np.random.default_rng(0).multinomial(20_000, np.ones(64) / 64)
    >>> m = oracle.simulate(counts, np.random.default_rng(1))
    >>> choice = bayesldp.choose_method(m, ("set", 0.5), reps=5, rng=0)
    >>> choice.chosen in choice.ranking["method"].tolist()
    True
    """
    check_measurement(m, "m")
    q = parse_query(query, m.domain_size)
    reps = check_int(reps, "reps", minimum=1)
    names = default_methods() if methods is None else _check_methods(methods)
    losses, fits = simulated_losses(m, [q], names, reps=reps, rng=rng)
    left_out = unusable_methods(m, names, fits)
    kept = [i for i, name in enumerate(names) if name not in left_out] or list(range(len(names)))
    table, winners = rank_losses(
        {fit: loss[0][kept] for fit, loss in losses.items()}, [names[i] for i in kept]
    )
    chosen = str(table["method"].iloc[0])
    agree = len(set(winners.values())) == 1
    note = (
        ""
        if agree
        else "the synthetic truths disagree: "
        + ", ".join(f"{fit} fit prefers {w}" for fit, w in winners.items())
        + f"; {chosen} has the best mean ratio"
    )
    dropped = [fit for fit in fits if fit not in losses]
    if dropped:
        note = "; ".join(
            filter(None, [note, f"the {', '.join(dropped)} fit is degenerate and not used"])
        )
    if left_out:
        note = "; ".join(
            filter(None, [note, f"{', '.join(left_out)} left out: its fit to m is degenerate"])
        )
    estimate = fits[chosen] if chosen in fits else postprocess(m, chosen)
    return MethodChoice(chosen, estimate, table, q, winners, agree, note, reps)


def simulated_losses(
    m: Measurement,
    queries: Sequence[Query],
    methods: Sequence[str],
    *,
    reps: int = 50,
    rng: Any = None,
    fits: Sequence[str] = FITS,
) -> tuple[dict[str, np.ndarray], dict[str, Estimate]]:
    """Every method's loss on every query, on ``reps`` collections simulated per fit.

    The building block of :func:`choose_method`, for several queries on the same
    simulated collections.

    Parameters
    ----------
    m : Measurement
        The raw oracle output the synthetic truths are fitted to.
    queries : sequence of Query
        Parsed queries (:func:`parse_query`).
    methods : sequence of str
        Registered method names.
    reps : int, default 50
        Simulated collections per synthetic truth.
    rng : numpy.random.Generator or int, optional
        Source of randomness.
    fits : sequence of str, default :data:`FITS`
        The synthetic truths: registered method names whose estimates of ``m`` are used,
        or one of :data:`POSTERIOR_DRAW` (a draw from its posterior), simulated in this
        order (a fit's draws do not depend on the fits after it).

    Returns
    -------
    losses : dict
        For each of ``fits`` that is not :func:`degenerate`, an array of shape
        ``(queries, methods, reps)``.
    fits : dict
        Each fit's estimate of ``m``.

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> from bayesldp.choose import parse_query, simulated_losses
    >>> m = bayesldp.OUE(1.0, 16).simulate(np.full(16, 500), np.random.default_rng(0))
    >>> losses, _ = simulated_losses(m, [parse_query("full", 16)], ["base"], reps=3, rng=0)
    >>> losses["norm-sub"].shape
    (1, 1, 3)
    """
    from bayesldp.intervals._bootstrap import bootstrap_counts, fitted_counts

    check_measurement(m, "m")
    reps = check_int(reps, "reps", minimum=1)
    generator = check_rng(rng)
    specs = [get_method(name) for name in methods]
    names = [get_method(fit).name for fit in fits]
    estimates = {fit: postprocess(m, fit) for fit in names if fit not in POSTERIOR_DRAW}
    out: dict[str, np.ndarray] = {}
    for fit in names:
        if fit in POSTERIOR_DRAW:  # drawn here, so that the earlier fits' draws keep their seeds
            estimates[fit] = postprocess(m, fit, uncertainty="plug-in", n_draws=1, rng=generator)
        est = estimates[fit]
        if degenerate(est):
            logger.debug("choose_method: the %s fit is degenerate; not used", fit)
            continue
        synthetic = est.frequencies
        if fit in POSTERIOR_DRAW and est.uncertainty is not None:
            synthetic = est.uncertainty.sample(0, 1)[0]
        x = fitted_counts(synthetic, m.n)
        truth = x / m.n
        counts = np.stack([bootstrap_counts(m, x, generator) for _ in range(reps)])
        set_rng = np.random.default_rng(generator.integers(2**63))
        loss = np.empty((len(queries), len(specs), reps))
        for i, spec in enumerate(specs):
            outputs = _rerun(spec, m, counts)
            for j, q in enumerate(queries):
                loss[j, i] = query_loss(q, outputs, truth, spec.query_rule, set_rng)
        out[fit] = loss
    return out, estimates


def degenerate(fit: Estimate) -> bool:
    """Whether a fit is no synthetic truth: its power-law exponent at the search bound.

    ``power-ns`` clips its fitted exponent at ``s_max`` when the mean estimate is below
    what any power law of exponent ``s <= s_max`` gives (few users, small epsilon): its
    prior is then almost a point mass at one user per item, and so is its estimate.

    Parameters
    ----------
    fit : Estimate
        A fit of :data:`FITS`.

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> from bayesldp.choose import degenerate
    >>> m = bayesldp.OUE(1.0, 16).simulate(np.full(16, 500), np.random.default_rng(0))
    >>> degenerate(bayesldp.postprocess(m, "norm-sub"))
    False
    """
    s = fit.info.get("s")
    return s is not None and float(np.max(s)) >= S_MAX


def unusable_methods(
    m: Measurement, methods: Sequence[str], fits: Mapping[str, Estimate] | None = None
) -> tuple[str, ...]:
    """Return the candidates whose own estimate of ``m`` is :func:`degenerate`.

    A method that fits a power-law exponent (``power``, ``power-ns``) and finds it at the
    search bound on the measurement publishes an almost flat estimate, whatever its
    simulated error: the simulated collections, drawn from a fitted truth, fit a usable
    exponent, so their errors do not describe the estimate that would be published.
    :func:`choose_method` leaves such candidates out (unless every candidate is).

    Parameters
    ----------
    m : Measurement
        The measurement that will be published from.
    methods : sequence of str
        Registered method names.
    fits : mapping, optional
        Estimates of ``m`` already computed, by method name (reused).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> from bayesldp.choose import unusable_methods
    >>> m = bayesldp.OUE(1.0, 16).simulate(np.full(16, 500), np.random.default_rng(0))
    >>> unusable_methods(m, ["norm-sub", "power-ns"])
    ()
    """
    known = dict(fits or {})
    out = []
    for name in methods:
        if get_method(name).name not in _SHARED_EXPONENT:
            continue
        est = known.get(name)
        if est is None:
            est = postprocess(m, name)
        if degenerate(est):
            out.append(name)
    return tuple(out)


def rank_losses(
    losses: Mapping[str, np.ndarray], methods: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rank methods by their mean loss ratio to the best method over the synthetic truths.

    Parameters
    ----------
    losses : mapping
        For each fit, the losses of shape ``(methods, reps)``.
    methods : sequence of str
        The methods' names, in the order of the rows of ``losses``.

    Returns
    -------
    ranking : pandas.DataFrame
        As :attr:`MethodChoice.ranking`, best first.
    winners : dict
        The method with the smallest loss under each fit.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesldp.choose import rank_losses
    >>> table, winners = rank_losses({"a": np.array([[1.0], [2.0]])}, ["x", "y"])
    >>> table["method"].tolist(), winners
    (['x', 'y'], {'a': 'x'})
    """
    import pandas as pd

    names = list(methods)
    errors = {fit: np.asarray(v, dtype=float).mean(axis=1) for fit, v in losses.items()}
    spreads = {
        fit: (
            np.asarray(v, dtype=float).std(axis=1, ddof=1) / np.sqrt(v.shape[1])
            if v.shape[1] > 1
            else np.zeros(len(names))
        )
        for fit, v in losses.items()
    }
    winners = {fit: names[int(np.argmin(e))] for fit, e in errors.items()}
    ratios = []
    for e in errors.values():
        tiny = 1e-12 * max(float(e.max()), 1e-300)
        ratios.append((e + tiny) / (float(e.min()) + tiny))
    table = pd.DataFrame(
        {
            "method": names,
            "score": np.mean(ratios, axis=0),
            "error": np.mean(list(errors.values()), axis=0),
            "spread": np.sqrt(np.mean([v**2 for v in spreads.values()], axis=0) / len(errors)),
            **{f"error[{f}]": e for f, e in errors.items()},
            **{f"spread[{f}]": v for f, v in spreads.items()},
        }
    )
    table = table.sort_values(["score", "error"], kind="stable").reset_index(drop=True)
    return table, winners


def _check_methods(methods: Any) -> tuple[str, ...]:
    """Check that ``methods`` are registered, distinct, non-Bayesian and use no truth."""
    if isinstance(methods, str) or not isinstance(methods, Sequence) or not methods:
        raise ValueError(f"methods must be a non-empty list of method names, got {methods!r:.80}")
    out = []
    for name in methods:
        spec = get_method(name)
        if spec.bayesian or spec.needs_truth:
            raise ValueError(
                f"methods: {name!r} cannot be re-run on simulated collections "
                "(Bayesian, or needs the truth)"
            )
        out.append(spec.name)
    if len(set(out)) != len(out):
        raise ValueError("methods: a method is given twice")
    return tuple(out)
