r"""Model checking for fitted Bayesian estimates: predictive checks and LOO comparison.

Predictive checks replicate the support counts from the model's own likelihood, given
draws of the frequency vector from the posterior (:func:`posterior_predictive_check`)
or from the prior (:func:`prior_predictive_check`), and compare them with the observed
counts item by item (mid-p-values) and overall (a chi-square discrepancy).

Model comparison (:func:`loo`, :func:`compare`) uses Pareto-smoothed importance
sampling leave-one-out cross-validation (PSIS-LOO, Vehtari, Gelman and Gabry 2017) on a
pointwise log-likelihood. What a "point" is depends on the likelihood:

* ``binomial`` (the composite likelihood of OUE, SUE, OLH, SS, HR) and ``gaussian``:
  one point per **item**, :math:`\log p(c_v \mid f)`. These terms sum to the model's
  log-likelihood, but they are the marginals of dependent counts, so the elpd is a
  *composite* score: it ranks models fitted with the same likelihood to the same
  measurement (each item's count predicted from the others), but it is not the log
  predictive density of a new measurement, and its standard error treats the items as
  independent.
* ``multinomial`` (GRR): the multinomial is a product over users, each report an
  independent categorical draw with probability :math:`\pi_v = q + (p-q) f_v`, so one
  point per **user**, :math:`\log \pi_{v(u)}`. Users who reported the same item have the
  same pointwise term, so the ``n`` points are computed once per item and weighted by
  its count :math:`c_v` (exact leave-one-user-out, not leave-one-item-out, which would
  drop :math:`c_v` users at once). The multinomial coefficient is left out (it is the
  same for every model).

Scores of different units (user vs item) or of different likelihood kinds are not
comparable; :func:`compare` refuses to mix them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from bayesldp._validation import check_choice, check_int, check_rng
from bayesldp.estimate import Estimate
from bayesldp.models.likelihood import (
    gaussian_count_variance,
    likelihood_specs,
    pointwise_loglik,
)


@dataclass(frozen=True)
class PredictiveCheck:
    r"""Replicated support counts against the observed ones.

    Attributes
    ----------
    source : str
        ``"posterior"`` or ``"prior"``.
    kind : str
        The likelihood the counts were replicated from.
    counts : numpy.ndarray
        Replicated counts, shape ``(draws, d)``.
    observed : numpy.ndarray
        The measurement's support counts.
    p_item : numpy.ndarray
        Per item, the mid-p-value :math:`P(c^{rep}_v > c_v) + \tfrac12 P(c^{rep}_v = c_v)`;
        values near 0 or 1 flag items the model cannot reproduce.
    statistic : numpy.ndarray
        Chi-square discrepancy :math:`T(c, f) = \sum_v (c_v - n\pi_v)^2 / V_v(f)` of the
        observed counts under each draw of ``f`` (``V_v`` the likelihood's variance).
    statistic_rep : numpy.ndarray
        The same discrepancy of the replicated counts.
    p_value : float
        :math:`P(T(c^{rep}, f) \ge T(c, f))`, the overall predictive p-value.
    """

    source: str
    kind: str
    counts: np.ndarray
    observed: np.ndarray
    p_item: np.ndarray
    statistic: np.ndarray
    statistic_rep: np.ndarray
    p_value: float


def _spec(est: Estimate):
    model = est.info.get("model")
    specs = likelihood_specs(model) if model is not None else {}
    if len(specs) != 1:
        raise ValueError(
            "est must come from bayesldp.models.fit on a model with exactly one ldp_likelihood"
        )
    return next(iter(specs.values()))


def _likelihood_moments(kind, f, n, p, q):
    pi = q + (p - q) * f
    if kind == "gaussian":
        var = gaussian_count_variance(n, p, q, f)
    else:
        var = n * pi * (1 - pi)
    return pi, var


def replicate_counts(
    kind: str, frequencies: np.ndarray, n: int, p: float, q: float, rng: np.random.Generator
) -> np.ndarray:
    """Support counts drawn from likelihood ``kind`` given each row of ``frequencies``.

    Parameters
    ----------
    kind : {"multinomial", "binomial", "gaussian"}
        The support-count likelihood (anything else is a ValueError naming ``kind``).
    frequencies : numpy.ndarray
        Frequency vectors, shape ``(..., d)``, one replicate per row.
    n : int
        Number of users.
    p, q : float
        Support probabilities of the oracle.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Same shape as ``frequencies``; integers except for ``"gaussian"`` (floats).
    """
    check_choice(kind, ("multinomial", "binomial", "gaussian"), "kind")
    f = np.asarray(frequencies, dtype=np.float64)
    pi, var = _likelihood_moments(kind, f, n, p, q)
    if kind == "multinomial":
        pi = np.clip(pi, 0.0, None)
        return rng.multinomial(n, pi / pi.sum(axis=-1, keepdims=True))
    if kind == "binomial":
        return rng.binomial(n, np.clip(pi, 0.0, 1.0))
    return rng.normal(n * pi, np.sqrt(var))


def _check(source, kind, f, m, rng) -> PredictiveCheck:
    c = m.support_counts
    rep = replicate_counts(kind, f, m.n, m.p, m.q, rng)
    pi, var = _likelihood_moments(kind, f, m.n, m.p, m.q)
    mean = m.n * pi
    t_obs = (((c - mean) ** 2) / var).sum(axis=1)
    t_rep = (((rep - mean) ** 2) / var).sum(axis=1)
    p_item = (rep > c).mean(axis=0) + 0.5 * (rep == c).mean(axis=0)
    return PredictiveCheck(
        source, kind, rep, c, p_item, t_obs, t_rep, float(np.mean(t_rep >= t_obs))
    )


def _frequency_draws(est: Estimate, spec) -> np.ndarray:
    post = est.inference_data.posterior[spec.frequencies_name].values
    return post.reshape(-1, post.shape[-1])


def posterior_predictive_check(est: Estimate, *, draws: int = 1000, rng=None) -> PredictiveCheck:
    """Posterior predictive check of the support counts of a fitted estimate.

    Parameters
    ----------
    est : Estimate
        From :func:`bayesldp.models.fit` (or a ready-made model built on it).
    draws : int, default 1000
        Posterior draws used (evenly thinned; at most all of them).
    rng : numpy.random.Generator, int or None
        Seeds the replicated counts.

    Returns
    -------
    PredictiveCheck
    """
    spec = _spec(est)
    draws = check_int(draws, "draws", minimum=1)
    rng = check_rng(rng, "rng")
    f = _frequency_draws(est, spec)
    f = f[np.linspace(0, f.shape[0] - 1, min(draws, f.shape[0])).astype(int)]
    return _check("posterior", spec.kind, f, est.measurement, rng)


def prior_predictive_check(est: Estimate, *, draws: int = 500, rng=None) -> PredictiveCheck:
    """Prior predictive check: whether the observed counts are typical of the model's prior.

    The frequency vector is drawn from ``est.info["prior_sampler"]`` when the model
    provides one (the ready-made models do), otherwise with
    ``pymc.sample_prior_predictive`` on the fitted model.

    Parameters
    ----------
    est : Estimate
        From :func:`bayesldp.models.fit` (or a ready-made model built on it).
    draws : int, default 500
        Prior draws.
    rng : numpy.random.Generator, int or None
        Seeds the prior draws and replicated counts.

    Returns
    -------
    PredictiveCheck
    """
    spec = _spec(est)
    draws = check_int(draws, "draws", minimum=1)
    rng = check_rng(rng, "rng")
    sampler = est.info.get("prior_sampler")
    if sampler is not None:
        f = sampler(draws, rng)
    else:
        import pymc as pm

        prior = pm.sample_prior_predictive(
            draws=draws,
            model=est.info["model"],
            var_names=[spec.frequencies_name],
            random_seed=int(rng.integers(2**31 - 1)),
        )
        values = prior.prior[spec.frequencies_name].values
        f = values.reshape(-1, values.shape[-1])
    return _check("prior", spec.kind, f, est.measurement, rng)


@dataclass(frozen=True)
class LooResult:
    """PSIS-LOO of a fitted estimate (see the module docstring for what a point is).

    Attributes
    ----------
    elpd : float
        Expected log pointwise predictive density, summed over points.
    se : float
        Its standard error.
    p_loo : float
        Effective number of parameters.
    unit : str
        ``"item"`` (composite and gaussian likelihoods) or ``"user"`` (multinomial).
    kind : str
        The likelihood.
    pointwise : numpy.ndarray
        Per item: its elpd (for ``"user"``, one user's, to be weighted by ``weights``).
    weights : numpy.ndarray
        Points per item (1, or the count ``c_v`` for ``"user"``).
    pareto_k : numpy.ndarray
        Pareto shape of each item's importance weights (above 0.7: unreliable).
    """

    elpd: float
    se: float
    p_loo: float
    unit: str
    kind: str
    pointwise: np.ndarray
    weights: np.ndarray
    pareto_k: np.ndarray


def loo(est: Estimate) -> LooResult:
    """PSIS-LOO of a fitted estimate's likelihood (pointwise as the module docstring says).

    Parameters
    ----------
    est : Estimate
        A fitted Bayesian estimate with posterior draws (its model's likelihood is used).

    Returns
    -------
    LooResult
    """
    import arviz as az

    spec = _spec(est)
    m = est.measurement
    f = _frequency_draws(est, spec)
    ll = pointwise_loglik(spec.kind, f, m.support_counts, m.n, m.p, m.q).T  # (d, S)
    unit = "user" if spec.kind == "multinomial" else "item"
    weights = m.support_counts.astype(np.float64) if unit == "user" else np.ones(m.domain_size)
    keep = weights > 0
    ll = ll[keep]
    log_w, k = az.psislw(-ll, reff=1.0)
    elpd_i = logsumexp(ll + np.asarray(log_w), axis=1)
    lppd_i = logsumexp(ll, axis=1) - np.log(ll.shape[1])
    w = weights[keep]
    total = w.sum()
    elpd = float((w * elpd_i).sum())
    mean = elpd / total
    se = float(np.sqrt(total * (w * (elpd_i - mean) ** 2).sum() / total))
    pointwise = np.full(m.domain_size, np.nan)
    pointwise[keep] = elpd_i
    pareto_k = np.full(m.domain_size, np.nan)
    pareto_k[keep] = np.asarray(k)
    return LooResult(
        elpd, se, float((w * (lppd_i - elpd_i)).sum()), unit, spec.kind, pointwise, weights,
        pareto_k,
    )  # fmt: skip


def compare(estimates: Mapping[str, Estimate]):
    """Rank fitted models of the same measurement by PSIS-LOO.

    Parameters
    ----------
    estimates : mapping of str to Estimate
        Fitted models (same measurement, same likelihood kind), by name.

    Returns
    -------
    pandas.DataFrame
        One row per model, best first: ``elpd_loo``, ``se``, ``elpd_diff`` and
        ``dse`` (difference to the best and its standard error, from the pointwise
        differences), ``p_loo``, ``max_pareto_k``, ``unit``, ``kind``.

    Raises
    ------
    ValueError
        Fewer than two models, different measurements, or different likelihood kinds.
    """
    import pandas as pd

    if not isinstance(estimates, Mapping) or len(estimates) < 2:
        raise ValueError("estimates must be a mapping of at least two fitted models")
    results = {name: loo(est) for name, est in estimates.items()}
    counts = [est.measurement.support_counts for est in estimates.values()]
    if any(not np.array_equal(counts[0], c) for c in counts[1:]):
        raise ValueError("estimates must be fitted to the same measurement")
    kinds = {r.kind for r in results.values()}
    if len(kinds) > 1:
        raise ValueError(f"estimates use different likelihoods {sorted(kinds)}; not comparable")
    best = max(results, key=lambda k: results[k].elpd)
    rows = []
    for name, r in results.items():
        keep = r.weights > 0
        diff = np.nan_to_num(results[best].pointwise - r.pointwise)[keep]
        w = r.weights[keep]
        mean = (w * diff).sum() / w.sum()
        dse = float(np.sqrt(w.sum() * (w * (diff - mean) ** 2).sum() / w.sum()))
        rows.append(
            {
                "model": name,
                "elpd_loo": r.elpd,
                "se": r.se,
                "elpd_diff": results[best].elpd - r.elpd,
                "dse": dse,
                "p_loo": r.p_loo,
                "max_pareto_k": float(np.nanmax(r.pareto_k)),
                "unit": r.unit,
                "kind": r.kind,
            }
        )
    return pd.DataFrame(rows).sort_values("elpd_loo", ascending=False).set_index("model")
