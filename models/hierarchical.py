r"""Bayes-hier: a Dirichlet prior whose concentration varies by a grouping of the domain.

Items come in groups the user knows (cities by state, words by part of speech, ...).
Each group ``g`` has its own concentration :math:`a_g`, partially pooled through a
normal hyperprior on :math:`\log a_g`:

.. math::

    \mu \sim \mathcal N(\mu_0, s_0^2), \quad
    \tau \sim \mathrm{HalfNormal}(s_\tau), \quad
    \log a_g \sim \mathcal N(\mu, \tau^2), \\
    f \sim \mathrm{Dirichlet}(\alpha), \quad \alpha_v = a_{g(v)}, \qquad
    c \mid f \sim \text{the oracle's likelihood}.

By the aggregation property of the Dirichlet law this is the nested model
:math:`w \sim \mathrm{Dirichlet}(n_g a_g)_g` for the groups' totals and independent
:math:`\theta_g \sim \mathrm{Dirichlet}(a_g \mathbf 1_{n_g})` within each group
(:math:`f_v = w_{g(v)} \theta_{g(v), v}`): a group of sparse items (small
:math:`a_g`, one dominant city) and a group of even ones learn different
concentrations, and each borrows strength from the others through :math:`\mu` and
:math:`\tau`. With a single group it is :func:`~bayesldp.models.bayes_dirichlet` with
:math:`\log a = \mu`.

The group concentrations are sampled in coordinates that follow how much the data say
about each (:func:`group_coordinates`). Neither textbook form fits every fit: the
non-centred :math:`\log a_g = \mu + \tau z_g` has, when a group's items pin its
concentration to :math:`\pm\sigma_g`, a conditional width :math:`\sigma_g / \tau` in
:math:`z_g` that shrinks as :math:`\tau` grows (an inverted funnel: divergences at large
:math:`\tau`); the centred form has the usual funnel at small :math:`\tau`. Here
:math:`\log a_g = m_g + s_g z_g` with :math:`s_g^{-2} = \tau^{-2} + \sigma_g^{-2}` and
:math:`m_g = s_g^2 (\mu / \tau^2 + \ell_g / \sigma_g^2)`, the conditional posterior
of :math:`\log a_g` under a normal approximation of its likelihood (centre
:math:`\ell_g`, width :math:`\sigma_g`, both guessed from the measurement), so
:math:`z_g` has about unit scale at every :math:`\tau`: centred where the data are
strong, non-centred where they are weak (Papaspiliopoulos, Roberts and Sköld 2007's
partial centring, with the weight set per group). The law of the model does not depend
on the guesses: the normal density of :math:`\log a_g` and the Jacobian :math:`s_g`
enter the log-density exactly.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bayesldp._validation import check_float, check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models._concentration import (
    LOG_START_RANGE,
    check_normal_prior,
    dirichlet_draws,
    log_concentration,
)
from bayesldp.models._settings import SamplerSettings, resolve_settings
from bayesldp.models.dirichlet import cached_model, dirichlet_simplex
from bayesldp.models.fitting import fit, ready_made_settings
from bayesldp.models.likelihood import follow_measurement, ldp_likelihood, resolve_kind

__all__ = ["bayes_hier"]


def group_index(groups, d: int) -> tuple[tuple[str, ...], np.ndarray]:
    """Check a grouping of ``range(d)`` and return (labels, group of each item).

    Parameters
    ----------
    groups : mapping of str to sequence of int, or None
        Group label to its items; every item in exactly one group. ``None``: one group.
    d : int
        Domain size.

    Raises
    ------
    ValueError
        ``groups`` is not a mapping, a group is empty or holds an index out of range,
        or an item is in no group or in several.
    """
    if groups is None:
        return ("all",), np.zeros(d, dtype=np.int64)
    if not isinstance(groups, Mapping) or not groups:
        raise ValueError(
            f"groups must be a non-empty mapping of label to item indices, got {groups!r}"
        )
    index = np.full(d, -1, dtype=np.int64)
    labels = tuple(str(k) for k in groups)
    for g, (label, items) in enumerate(groups.items()):
        arr = np.atleast_1d(np.asarray(items))
        if arr.size == 0 or arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"groups[{label!r}] must be a non-empty sequence of item indices")
        if arr.min() < 0 or arr.max() >= d:
            raise ValueError(f"groups[{label!r}] holds indices outside [0, {d})")
        if np.any(index[arr] >= 0) or np.unique(arr).size != arr.size:
            raise ValueError(f"groups: an item of groups[{label!r}] is in more than one group")
        index[arr] = g
    if np.any(index < 0):
        raise ValueError(f"groups must cover every item; {int((index < 0).sum())} are in no group")
    return labels, index


#: A group of one item says nothing about its concentration: its likelihood width is
#: taken as this (the coordinates are then non-centred).
WEAK_GROUP_SD = 1e3


def group_coordinates(m: Measurement, index: np.ndarray) -> dict[str, np.ndarray]:
    r"""Guess each group's log concentration and how well its items pin it.

    The centre :math:`\ell_g` is the moment estimate of
    :func:`~bayesldp.models._concentration.concentration_start` applied to the group's
    shares :math:`\hat\theta_v` (its items' raw estimates over their sum :math:`W`): the
    :math:`\log a` at which :math:`E \sum_v \theta_v^2 = (1 + a) / (1 + n_g a)` equals
    the estimate :math:`\hat Q` of :math:`\sum_v \theta_v^2`. The width adds two parts
    in quadrature: :math:`2 / (n_g - 1)`, the inverse Fisher information about
    :math:`\log a` of :math:`n_g` exactly observed shares at its smallest over
    :math:`a`, and the noise of :math:`\hat Q` by the delta method,
    :math:`\mathrm{Var}\,\hat Q / (\partial E Q / \partial \log a)^2` with
    :math:`\mathrm{Var}\,\hat Q \approx \sum_v (4 \theta_v^2 s_v^2 + 2 s_v^4)`
    (:math:`s_v`: the share's noise sd, :math:`\theta_v^2` at its expectation
    :math:`Q / n_g`). Large concentrations under noise are barely identified (width of
    several units), small ones sharply. Only the coordinates depend on the guesses, not
    the model's law.

    Parameters
    ----------
    m : Measurement
        The measurement the model is fitted to.
    index : numpy.ndarray of int
        Group of each item (:func:`group_index`).

    Returns
    -------
    dict
        ``centre`` and ``sd``, one value per group.
    """
    f, var = m.estimates, m.variance()
    groups = int(index.max()) + 1
    centre, sd = np.zeros(groups), np.full(groups, WEAK_GROUP_SD)
    low, high = LOG_START_RANGE
    for g in range(groups):
        sel = index == g
        size = int(sel.sum())
        total = float(np.clip(f[sel], 0.0, None).sum())
        if size < 2 or total <= 0:
            continue
        square_sum = max(float(np.sum(f[sel] ** 2 - var[sel])), float(f[sel].max()) ** 2)
        square_sum = min(square_sum / total**2, 1.0)
        excess = square_sum * size - 1.0
        a = (1.0 - square_sum) / excess if excess > 0 else np.exp(high)
        centre[g] = float(np.clip(np.log(a), low, high)) if a > 0 else low
        a = float(np.exp(centre[g]))
        expected = (1.0 + a) / (1.0 + size * a)
        slope = a * (1.0 - size) / (1.0 + size * a) ** 2
        share_var = var[sel] / total**2
        noise = float(np.sum(4.0 * expected / size * share_var + 2.0 * share_var**2))
        sd[g] = min(np.sqrt(2.0 / (size - 1) + noise / slope**2), WEAK_GROUP_SD)
    return {"centre": centre, "sd": sd}


def set_group_coordinates(model, measurement: Measurement) -> None:
    """Move the group coordinates of a :func:`build_hier_model` model to ``measurement``.

    Run by :func:`bayesldp.models.fit` (through the model's followers).

    Parameters
    ----------
    model : pymc.Model
        A model built by :func:`build_hier_model` with several groups.
    measurement : Measurement
        The measurement the model will be fitted to next.
    """
    import pymc as pm

    index = np.asarray(model["item_group"].get_value())
    hints = group_coordinates(measurement, index)
    pm.set_data({f"log_a_{key}": value for key, value in hints.items()}, model=model)


def build_hier_model(
    m: Measurement,
    groups=None,
    *,
    concentration_prior: tuple[float, float] = (0.0, 2.0),
    spread_prior: float = 1.0,
    kind: str = "auto",
):
    r"""Build the PyMC model of :func:`bayes_hier`.

    Parameters
    ----------
    m : Measurement
        A measurement of the domain size and oracle the model is built for.
    groups : mapping of str to sequence of int, optional
        A partition of the domain; ``None`` puts every item in one group.
    concentration_prior : (float, float), default (0, 2)
        Mean and standard deviation of the normal prior on :math:`\mu`.
    spread_prior : float, default 1
        Scale :math:`s_\tau` of the half-normal prior on :math:`\tau`.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood (:func:`ldp_likelihood`).

    Returns
    -------
    pymc.Model
        Variables ``mu`` (sampled as ``mu_offset``: ``log_concentration``), ``tau``,
        ``z`` (free, dims ``group``: :func:`group_coordinates`) and ``log_a`` (not with a
        single group), ``a`` (dims ``group``), ``f`` (dims ``item``) and the likelihood
        ``counts``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    mu0, s0 = check_normal_prior(concentration_prior, "concentration_prior")
    s_tau = check_float(spread_prior, "spread_prior", minimum=0.0, strict_minimum=True)
    kind = resolve_kind(m, kind)
    d = m.domain_size
    labels, index = group_index(groups, d)
    with pm.Model(coords={"item": np.arange(d), "group": list(labels)}) as model:
        item_group = pm.Data("item_group", index, dims="item")
        mu = log_concentration("mu", (mu0, s0), m)
        if len(labels) > 1:
            tau = pm.HalfNormal("tau", s_tau)
            hints = {
                key: pm.Data(f"log_a_{key}", value, dims="group")
                for key, value in group_coordinates(m, index).items()
            }
            follow_measurement(model, "log_a_hints", set_group_coordinates)
            z = pm.Flat("z", dims="group", initval=np.zeros(len(labels)))
            precision = 1.0 / tau**2 + 1.0 / hints["sd"] ** 2
            scale = 1.0 / pt.sqrt(precision)
            centre = (mu / tau**2 + hints["centre"] / hints["sd"] ** 2) / precision
            log_a = pm.Deterministic("log_a", centre + scale * z, dims="group")
            # log a_g ~ N(mu, tau^2), with the Jacobian of z -> log a_g
            prior = pm.logp(pm.Normal.dist(mu, tau), log_a)
            pm.Potential("log_a_prior", pt.sum(prior + pt.log(scale)))
        else:
            log_a = pt.reshape(mu, (1,))
        a = pm.Deterministic("a", pt.exp(log_a), dims="group")
        f = dirichlet_simplex("f", a[item_group], m, dims="item")
        ldp_likelihood("counts", f, m, kind=kind)
    return model


@dataclass(frozen=True)
class HierarchicalPrior:
    r"""The bayes-hier prior of ``f``, as data: ``prior(size, rng)`` draws from it.

    Attributes
    ----------
    index : tuple of int
        Group of each item.
    concentration_prior : (float, float)
        Mean and standard deviation of the normal prior on :math:`\mu`.
    spread_prior : float
        Scale of the half-normal prior on :math:`\tau`.
    """

    index: tuple[int, ...]
    concentration_prior: tuple[float, float]
    spread_prior: float

    def __call__(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return ``size`` draws of ``f``, shape ``(size, d)``.

        Parameters
        ----------
        size : int
            Number of draws.
        rng : numpy.random.Generator
            Source of randomness.
        """
        index = np.asarray(self.index, dtype=np.int64)
        mu0, s0 = self.concentration_prior
        n_groups = int(index.max()) + 1
        mu = rng.normal(mu0, s0, size)
        if n_groups > 1:
            tau = np.abs(rng.normal(0.0, self.spread_prior, size))
            log_a = mu[:, None] + tau[:, None] * rng.normal(size=(size, n_groups))
        else:
            log_a = mu[:, None]
        return dirichlet_draws(np.exp(log_a)[:, index], rng)


def hier_prior_sampler(
    index: np.ndarray, concentration_prior, spread_prior: float
) -> HierarchicalPrior:
    r"""Draws of ``f`` from the bayes-hier prior: ``sample(size, rng)``, shape ``(size, d)``.

    Parameters
    ----------
    index : numpy.ndarray of int
        Group of each item, as :func:`group_index` returns it.
    concentration_prior : (float, float)
        Mean and standard deviation of the normal prior on :math:`\mu`.
    spread_prior : float
        Scale :math:`s_\tau` of the half-normal prior on :math:`\tau` (unused with one
        group).

    Returns
    -------
    HierarchicalPrior
        Called as ``sample(size, rng)`` with ``size`` an int and ``rng`` a
        :class:`numpy.random.Generator`.
    """
    mu0, s0 = concentration_prior
    return HierarchicalPrior(
        tuple(int(i) for i in np.asarray(index)), (float(mu0), float(s0)), float(spread_prior)
    )


def bayes_hier(
    m: Measurement,
    *,
    settings: SamplerSettings | None = None,
    rng=None,
    groups=None,
    concentration_prior: tuple[float, float] = (0.0, 2.0),
    spread_prior: float = 1.0,
    kind: str = "auto",
    **options,
) -> Estimate:
    r"""Posterior mean under a Dirichlet prior with group-wise, partially pooled concentrations.

    .. math::

        \mu \sim \mathcal N(\mu_0, s_0^2), \
        \tau \sim \mathrm{HalfNormal}(s_\tau), \
        \log a_g \sim \mathcal N(\mu, \tau^2), \
        f \sim \mathrm{Dirichlet}(a_{g(1)}, \dots, a_{g(d)}),

    with the oracle's likelihood (:func:`~bayesldp.models.ldp_likelihood`), sampled
    with :func:`bayesldp.models.fit` (each :math:`\log a_g` partially centred by how
    much its items say, :func:`group_coordinates`;
    :func:`~bayesldp.models.dirichlet_simplex` for ``f``).

    Parameters
    ----------
    m : Measurement
        The oracle output.
    settings : SamplerSettings, optional
        How to sample (see :func:`bayesldp.models.fit`).
    rng : numpy.random.Generator, int or None
        Seeds the sampler (same seed, same result).
    groups : mapping of str to sequence of int, optional
        A partition of the domain, e.g. ``bayesldp.datasets.us_cities().groups["state"]``;
        ``None`` puts every item in one group.
    concentration_prior : (float, float), default (0, 2)
        Mean and standard deviation of the normal prior on :math:`\mu`.
    spread_prior : float, default 1
        Scale :math:`s_\tau` of the half-normal prior on :math:`\tau`.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood.
    **options
        Fields of :class:`~bayesldp.models.SamplerSettings` replacing those of
        ``settings`` (``draws``, ``tune``, ``chains``, ``sampler``, ...).

    Returns
    -------
    Estimate
        Method ``"bayes-hier"``; as :func:`~bayesldp.models.bayes_dirichlet`, with
        ``info["a_mean"]`` (posterior mean concentration of each group, by label).

    Raises
    ------
    ValueError
        Bad input, named.
    """
    check_measurement(m)
    prior = check_normal_prior(concentration_prior, "concentration_prior")
    s_tau = check_float(spread_prior, "spread_prior", minimum=0.0, strict_minimum=True)
    kind = resolve_kind(m, kind)
    settings = ready_made_settings(resolve_settings(settings, options))
    rng = check_rng(rng, "rng")
    labels, index = group_index(groups, m.domain_size)
    start = time.perf_counter()
    key = ("hier", m.domain_size, kind, prior, s_tau, labels, index.tobytes())
    model = cached_model(
        key,
        lambda: build_hier_model(
            m, groups, concentration_prior=prior, spread_prior=s_tau, kind=kind
        ),
    )
    est = fit(model, m, settings=settings, rng=rng, method="bayes-hier")
    a = est.inference_data.posterior["a"].values.reshape(-1, len(labels))
    info = {
        **est.info,
        "a_mean": dict(zip(labels, a.mean(axis=0).tolist(), strict=True)),
        "groups": labels,
        "concentration_prior": prior,
        "spread_prior": s_tau,
        "kind": kind,
        "prior_sampler": hier_prior_sampler(index, prior, s_tau),
        "seconds_total": time.perf_counter() - start,
    }
    return dataclasses.replace(est, info=info)
