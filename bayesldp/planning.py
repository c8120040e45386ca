r"""Planning a collection: which oracle, and how many users, for the error a query accepts.

:func:`bayesldp.plan` answers, before anything is collected, for each registered oracle: the
expected error of the raw estimates (exact, from the oracle's variance formulas), the
bits each user sends, the expected error after the recommended post-processing
(simulated on a prior), and, given a target error, the users each needs.

Queries
-------
The error of a query is the mean squared error of its answer, averaged as the
project's metrics average it (:mod:`bayesldp.metrics`):

``"full"``
    :math:`\frac1d \sum_v (\hat f_v - f_v)^2`, every item's frequency.
``("set", r)`` or ``"set:r"``
    :math:`(\hat f(S) - f(S))^2` for a set :math:`S` of ``max(1, round(r d))`` items
    drawn uniformly at random, averaged over sets; ``r`` in (0, 1].
``("top", k)`` or ``"top:k"``
    :math:`\frac1k \sum_{v \in T} (\hat f_v - f_v)^2` over the ``k`` items :math:`T`
    with the largest true frequencies (ties by index).

Priors
------
The data are ``n`` users drawn independently from a distribution over the items:
uniform (``None`` or ``"uniform"``), Zipf with a given exponent (a float ``s``:
:math:`f_v \propto (v+1)^{-s}`), or a pilot histogram (counts or frequencies, one per
item). The raw estimates are unbiased, so their error depends on the prior only
through the item variances and is computed exactly; the post-processed error is
simulated.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from bayesldp._plan_simulation import MAX_USERS, Curve, simulate_errors
from bayesldp._query import parse_query as parse
from bayesldp._query import set_size, top_items
from bayesldp._validation import (
    as_array,
    check_domain_size,
    check_epsilon,
    check_float,
    check_int,
    check_rng,
)
from bayesldp.measurement import Measurement
from bayesldp.methods.registry import get_method, method_names
from bayesldp.oracles import ORACLES, FrequencyOracle, make_oracle, oracle_class

logger = logging.getLogger(__name__)

__all__ = ["plan"]

#: The query kinds :func:`plan` accepts.
QUERY_KINDS = ("full", "set", "top")


def parse_query(query: Any, domain_size: int) -> tuple[str, float]:
    """Return ``(kind, parameter)`` of a query: ``("full", 0)``, ``("set", r)``, ``("top", k)``.

    Parameters
    ----------
    query : str or tuple
        ``"full"``; ``("set", r)`` or ``"set:r"`` with ``r`` in (0, 1]; ``("top", k)`` or
        ``"top:k"`` with ``k`` in ``[1, d]`` (the shared parser of the library's queries).
    domain_size : int
        The number of items ``d``.

    Raises
    ------
    ValueError
        An unknown kind, or a parameter out of range (naming ``query``).
    """
    q = parse(query, domain_size, QUERY_KINDS)
    return q.kind, float(q.value or 0.0)


def query_label(kind: str, value: float) -> str:
    """Return the query as ``full``, ``set:r`` or ``top:k``."""
    if kind == "full":
        return "full"
    return f"{kind}:{value:g}"


def prior_frequencies(prior: Any, domain_size: int) -> np.ndarray:
    r"""Return the frequencies a prior names (length ``d``, summing to 1).

    Parameters
    ----------
    prior : None, "uniform", float or array_like
        Uniform; a Zipf exponent ``s >= 0`` (:math:`f_v \propto (v+1)^{-s}`); or a
        pilot histogram of ``d`` non-negative counts or frequencies, not all zero.
    domain_size : int
        The number of items ``d``.

    Raises
    ------
    ValueError
        Anything else (naming ``prior``).
    """
    d = domain_size
    if prior is None or (isinstance(prior, str) and prior == "uniform"):
        return np.full(d, 1.0 / d)
    if isinstance(prior, str):
        raise ValueError(f"prior must be None, 'uniform', a Zipf exponent or counts, got {prior!r}")
    if np.ndim(prior) == 0:
        s = check_float(prior, "prior (Zipf exponent)", minimum=0.0)
        w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
        return w / w.sum()
    arr = as_array(prior, "prior")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"prior must hold numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.shape != (d,):
        raise ValueError(f"prior as a pilot histogram must have shape ({d},), got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError("prior must hold finite non-negative counts or frequencies")
    total = float(arr.sum())
    if not total > 0:
        raise ValueError("prior must not be all zero")
    return arr / total


def _oracles(oracles: Any, epsilon: float, domain_size: int) -> list[FrequencyOracle]:
    """Build the oracles to plan for (default parameters): all registered, or those named."""
    if oracles is None:
        names = list(ORACLES)
    elif isinstance(oracles, str):
        names = [oracles]
    elif isinstance(oracles, list | tuple):
        names = list(oracles)
        if not names:
            raise ValueError("oracles must name at least one oracle")
    else:
        raise ValueError(f"oracles must be a name or a list of names, got {oracles!r}")
    out = []
    for name in names:
        try:
            out.append(make_oracle(oracle_class(str(name)).name, epsilon, domain_size))
        except ValueError as err:
            raise ValueError(f"oracles: {err}") from None
    return out


def _methods(methods: Any) -> tuple[str, ...]:
    """Candidate methods: those named, or the registry's fast default non-Bayesian ones.

    The default leaves out methods whose time grows with the number of users
    (``grows_with_n``: power, power-ns), which a plan for 10^8 users would wait minutes for.
    """
    if methods is None:
        return method_names(
            default=True, slow=False, bayesian=False, needs_truth=False, grows_with_n=False
        )
    if isinstance(methods, str):
        names: tuple[Any, ...] = (methods,)
    elif isinstance(methods, list | tuple):
        names = tuple(methods)
    else:
        raise ValueError(f"methods must be a name or a list of names, got {methods!r}")
    if not names:
        raise ValueError("methods must name at least one method")
    for name in names:
        try:
            spec = get_method(name)
        except ValueError as err:
            raise ValueError(f"methods: {err}") from None
        if spec.needs_truth:
            raise ValueError(f"methods: {name!r} needs the true counts, which a plan has not")
    return names


def _unit_measurement(oracle: FrequencyOracle, n: int) -> Measurement:
    """Return a Measurement of ``n`` users of ``oracle`` (its counts are not read)."""
    counts = np.zeros(oracle.domain_size, dtype=np.int64)
    counts[0] = n
    return oracle.measurement(counts, n)


def raw_mse_per_user(
    oracle: FrequencyOracle,
    frequencies: np.ndarray,
    kind: str,
    value: float,
    simulated: bool = False,
) -> float:
    """Return the raw estimates' expected squared query error for one user (divide by n).

    Exact: the raw estimates are unbiased, so their error is their variance, from the
    oracle's item variances (:meth:`~bayesldp.FrequencyOracle.variance`) for the full
    domain and the top ``k``, and from the variance of a random set's summed counts,
    covariances included (:meth:`~bayesldp.FrequencyOracle.random_set_count_variance`),
    for set queries.

    Parameters
    ----------
    oracle : FrequencyOracle
        The oracle.
    frequencies : numpy.ndarray
        The true frequencies (summing to 1).
    kind : {"full", "set", "top"}
        The query kind, and ``value`` its parameter (see :func:`parse_query`).
    value : float
        The query's parameter.
    simulated : bool, default False
        Under the law :func:`simulate_errors` draws instead: for an oracle whose
        simulation draws each count's marginal (OLH, SS, HR), a set's counts as if
        independent.
    """
    if kind == "full":
        return float(np.mean(oracle.variance(frequencies)))
    if kind == "top":
        top = top_items(frequencies, int(value))[0]
        return float(np.mean(oracle.variance(frequencies[top])))
    n = 1 << 20  # the variance is exactly linear in n: evaluate at a large n, divide
    m = _unit_measurement(oracle, n)
    size = set_size(oracle.domain_size, value)
    cls = oracle_class(oracle.name, FrequencyOracle)
    if simulated and not oracle.exact_counts_simulation:
        cls = FrequencyOracle
    var = cls.random_set_count_variance(m, size, frequencies)
    return var / (n * (oracle.p - oracle.q) ** 2)  # Var C_S / (n (p-q))^2, times n


def plan(
    domain_size: int,
    epsilon: float,
    *,
    users: Any = None,
    target: float | None = None,
    query: Any = "full",
    prior: Any = None,
    oracles: Any = None,
    methods: Any = None,
    reps: int = 20,
    rng: Any = None,
):
    r"""Plan a collection: each oracle's error, report size, and users needed for a target.

    For every registered oracle (at its default parameters), the expected squared
    error of the query's answer from the raw estimates, exactly from the oracle's
    variance formulas (it is :math:`V/n` for a per-user :math:`V`); the bits one user
    sends (:attr:`~bayesldp.FrequencyOracle.report_bits`); and the error after the
    recommended post-processing, the candidate method with the lowest mean error in
    ``reps`` collections simulated on the prior (the user guide's "Planning a
    collection" says how). Given a ``target``, the users each needs: for the raw
    estimates :math:`\lceil V / \mathrm{target} \rceil`; after post-processing, a
    search over user counts a factor 4 apart, interpolated linearly in log error
    against log users (post-processed error is not exactly proportional to
    :math:`1/n`).

    Parameters
    ----------
    domain_size : int
        Number of items ``d``, at least 2.
    epsilon : float
        Privacy budget, > 0.
    users : int or sequence of int, optional
        Users to evaluate the errors at (one row per oracle and count). By default each
        oracle's row is at the users its post-processed estimate needs for ``target``.
    target : float, optional
        The squared error the query's answer may have, > 0. At least one of ``users``
        and ``target`` is needed.
    query : str or tuple, default "full"
        ``"full"``, ``("set", r)`` / ``"set:r"`` or ``("top", k)`` / ``"top:k"``; the
        error of each is defined in :mod:`bayesldp.planning`.
    prior : None, "uniform", float or array_like, optional
        The distribution of the users' values: uniform, a Zipf exponent, or a pilot
        histogram of ``d`` counts or frequencies (see :mod:`bayesldp.planning`).
    oracles : str or sequence of str, optional
        Registered oracle names to plan for; all of them by default.
    methods : str or sequence of str, optional
        Candidate post-processing methods; by default the registry's fast default
        non-Bayesian ones.
    reps : int, default 20
        Simulated collections per user count, at least 2.
    rng : numpy.random.Generator or int, optional
        Randomness of the simulations, or a seed.

    Returns
    -------
    pandas.DataFrame
        One row per oracle (and user count): ``oracle``, ``parameters``,
        ``report_bits``, ``users``, ``raw_mse``, ``method`` (the recommended one at
        ``users``), ``post_mse`` and ``post_se`` (its mean and Monte Carlo standard
        error); with a target also ``target``, ``raw_users_needed``,
        ``post_users_needed``, ``post_method`` (recommended at that count) and
        ``post_bracketed`` (False when the search did not bracket the target and the
        count is extrapolated as :math:`1/n`). ``attrs["curve"]`` holds every simulated
        point (oracle, users, method, post_mse, post_se) and ``attrs`` the inputs.

    Raises
    ------
    ValueError
        A bad argument, named: non-positive ``domain_size``, ``epsilon``, ``users`` or
        ``target``; an unknown query or oracle; a set fraction outside (0, 1]; ``k``
        outside ``[1, d]``; a bad prior.

    Examples
    --------
    >>> from bayesldp import plan
    >>> table = plan(64, 1.0, users=10_000, oracles=["GRR", "OUE"], methods="norm-sub",
    ...              reps=4, rng=0)
    >>> list(table["oracle"])
    ['GRR', 'OUE']
    >>> bool((table["raw_mse"] > 0).all())
    True
    """
    import pandas as pd

    d = check_domain_size(domain_size)
    if d < 2:
        raise ValueError(f"domain_size must be at least 2 to plan, got {domain_size!r}")
    eps = check_epsilon(epsilon)
    kind, value = parse_query(query, d)
    counts = _users(users)
    tgt = (
        None if target is None else check_float(target, "target", minimum=0.0, strict_minimum=True)
    )
    if counts is None and tgt is None:
        raise ValueError("users or target must be given (users to evaluate at, or a target error)")
    f = prior_frequencies(prior, d)
    chosen = _oracles(oracles, eps, d)
    candidates = _methods(methods)
    reps = check_int(reps, "reps", minimum=2)
    gen = check_rng(rng)
    rows: list[dict[str, Any]] = []
    curve_rows: list[dict[str, Any]] = []
    for oracle in chosen:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            per_user = raw_mse_per_user(oracle, f, kind, value)
        if not math.isfinite(per_user):
            raise ValueError(
                f"epsilon {eps!r} is too small: the variance of {oracle.name}'s estimates overflows"
            )

        def simulate(n: int, oracle: FrequencyOracle = oracle) -> dict[str, np.ndarray]:
            return simulate_errors(oracle, f, n, (kind, value), candidates, reps, gen)

        curve = Curve(simulate, raw_mse_per_user(oracle, f, kind, value, simulated=True))
        base: dict[str, Any] = {
            "oracle": oracle.name,
            "parameters": ", ".join(
                f"{k}={v}"
                for k, v in oracle.parameters().items()
                if k not in ("name", "epsilon", "domain_size")
            ),
            "report_bits": oracle.report_bits,
        }
        needed: dict[str, Any] = {}
        if tgt is not None:
            raw_n = max(1, math.ceil(per_user / tgt))
            if raw_n > MAX_USERS:
                raise ValueError(
                    f"target {tgt!r} needs more than 2^62 users of {oracle.name} at epsilon "
                    f"{eps!r} (a raw error of {per_user:.3g} per user)"
                )
            post_n, bracketed = curve.users_needed(tgt, raw_n)
            needed = {
                "target": tgt,
                "raw_users_needed": raw_n,
                "post_users_needed": post_n,
                "post_method": curve(post_n)[0],
                "post_bracketed": bracketed,
            }
        at = counts if counts is not None else [needed["post_users_needed"]]
        for n in at:
            method, mean, se = curve(n)
            rows.append(
                {
                    **base,
                    "users": n,
                    "raw_mse": per_user / n,
                    "method": method,
                    "post_mse": mean,
                    "post_se": se,
                    **needed,
                }
            )
        for n, (method, mean, se) in sorted(curve.points.items()):
            curve_rows.append(
                {
                    "oracle": oracle.name,
                    "users": n,
                    "raw_mse": per_user / n,
                    "method": method,
                    "post_mse": mean,
                    "post_se": se,
                }
            )
        logger.debug("planned %s: %d user counts simulated", oracle.name, len(curve.points))
    table = pd.DataFrame(rows)
    table.attrs.update(
        {
            "domain_size": d,
            "epsilon": eps,
            "query": query_label(kind, value),
            "prior": _prior_label(prior),
            "reps": reps,
            "methods": list(candidates),
            "curve": pd.DataFrame(curve_rows),
        }
    )
    return table


def _users(users: Any) -> list[int] | None:
    if users is None:
        return None
    if not isinstance(users, list | tuple | np.ndarray):
        return [check_int(users, "users", minimum=1, maximum=MAX_USERS)]
    values = [
        check_int(u, "users", minimum=1, maximum=MAX_USERS)
        for u in np.asarray(users, dtype=object).ravel()
    ]
    if not values:
        raise ValueError("users must hold at least one count")
    return values


def _prior_label(prior: Any) -> str:
    if prior is None or isinstance(prior, str):
        return "uniform"
    if np.ndim(prior) == 0:
        return f"zipf:{float(prior):g}"
    return "pilot histogram"
