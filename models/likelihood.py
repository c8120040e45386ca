"""The oracles' likelihood as a building block for any PyMC model.

:func:`ldp_likelihood` adds, inside a ``pm.Model`` context, the likelihood of a
measurement's support counts given a frequency vector on the simplex. Whatever prior the
model puts on that vector, the oracle's part of the model is this one call::

    with pm.Model(coords={"item": range(m.domain_size)}) as model:
        a = pm.Exponential("a", 1.0)
        f = pm.Dirichlet("f", a * np.ones(m.domain_size), dims="item")
        ldp_likelihood("counts", f, m)

Every number that comes from the measurement (the counts, ``n``, ``p`` and ``q``) is
registered as ``pm.Data`` under names derived from the likelihood's name, so one
compiled model serves every measurement of the same domain size:
:func:`set_measurement` swaps another one in without rebuilding or recompiling
anything.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from bayesldp._validation import check_choice
from bayesldp.measurement import Measurement, check_measurement, support_count_variance
from bayesldp.oracles._likelihood import likelihood_kind

__all__ = ["ldp_likelihood", "set_measurement"]

#: Likelihood kinds :func:`ldp_likelihood` accepts.
KINDS = ("auto", "multinomial", "binomial", "gaussian")

#: Every ldp_likelihood of every live model, by model (the model owns nothing extra).
_REGISTRY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Per live model, the updates of its measurement-dependent data by key
#: (:func:`follow_measurement`).
_FOLLOWERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class LikelihoodSpec:
    """What :func:`ldp_likelihood` added to a model.

    Attributes
    ----------
    name : str
        Name of the observed variable.
    kind : str
        ``"multinomial"``, ``"binomial"`` or ``"gaussian"``.
    domain_size : int
        Number of items ``d``.
    frequencies_name : str
        Name of the model variable holding the frequency vector the likelihood uses
        (a ``Deterministic`` named ``<name>_frequencies`` is added when the vector
        passed in had no name).
    dims : tuple of str or None
        Named dimension of the counts, taken from the frequency vector.
    """

    name: str
    kind: str
    domain_size: int
    frequencies_name: str
    dims: tuple[str, ...] | None

    @property
    def data(self) -> dict[str, str]:
        """Names of the ``pm.Data`` containers: keys ``counts``, ``n``, ``p``, ``q``."""
        return data_names(self.name)


def gaussian_count_variance(n, p, q, f):
    r"""Return the variance of a support count under ``kind="gaussian"``.

    :math:`n (q(1-q) + f (p-q)(1-p-q))`: each item's own variance, for NumPy arrays and
    PyTensor variables alike.

    Parameters
    ----------
    n : int
        Number of users.
    p, q : float
        Support probabilities of the oracle.
    f : numpy.ndarray or TensorVariable
        Frequencies of the items.
    """
    return support_count_variance(n, p, q, n * f)


def data_names(name: str) -> dict[str, str]:
    """Return the ``pm.Data`` names :func:`ldp_likelihood` registers for likelihood ``name``.

    Parameters
    ----------
    name : str
        The likelihood's name, as given to :func:`ldp_likelihood`.

    Returns
    -------
    dict
        ``{"counts": f"{name}_counts", "n": f"{name}_n", "p": f"{name}_p",
        "q": f"{name}_q"}``.
    """
    return {key: f"{name}_{key}" for key in ("counts", "n", "p", "q")}


def resolve_kind(m: Measurement, kind: str) -> str:
    """Return the likelihood for ``m``: ``"auto"`` is its oracle's ``likelihood_kind``.

    That is multinomial for GRR and binomial otherwise; ``"auto"``, ``"multinomial"``
    and ``"binomial"`` are decided by :func:`bayesldp.methods.likelihood_kind`, which
    the NumPy methods use too (a multinomial also needs counts summing to ``n``).

    Parameters
    ----------
    m : Measurement
        The measurement to be fitted.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        The likelihood asked for.

    Raises
    ------
    ValueError
        Unknown ``kind``, or ``"multinomial"`` for counts that are not one multinomial
        draw (cell probabilities ``p + (d-1) q`` not summing to one, or counts not
        summing to ``n``).
    """
    if not isinstance(kind, str):
        raise ValueError(f"kind must be a string, got {kind!r}")
    check_choice(kind, KINDS, "kind")
    if kind == "gaussian":
        return kind
    return likelihood_kind(m, kind, "kind")


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return name


def ldp_likelihood(
    name: str, frequencies, measurement: Measurement, *, kind: str = "auto", dims=None
):
    r"""Add the likelihood of a measurement's support counts given a frequency vector.

    Call inside a ``pm.Model`` context. With :math:`\pi_v = q + (p - q) f_v` the
    probability that one user's report supports item ``v``:

    ``kind="multinomial"`` (the default for GRR), the exact likelihood of GRR: each user
    reports one item, so

    .. math::

        (c_1, \dots, c_d) \sim \mathrm{Multinomial}(n, (\pi_1, \dots, \pi_d)).

    ``kind="binomial"`` (the default for OUE, SUE, OLH, SS and HR), the **marginal
    composite likelihood**: the product of each count's exact marginal law,

    .. math::

        \ell(f) = \sum_{v=1}^{d} \log \mathrm{Binomial}(c_v \mid n, \pi_v).

    Each marginal is exact when users' values are drawn i.i.d. from ``f``, but the counts
    are not independent: one user's bits (OUE, SUE), hashed bucket (OLH), item set (SS)
    or Hadamard coefficient (HR) support several items at once, and the true values
    are one-hot. The product ignores that dependence between one user's bits/items; it
    has the right mean and marginal spread for every item but treats the ``d`` counts
    as ``d`` independent observations.

    ``kind="gaussian"``, the normal approximation with each item's own variance, on the
    scale of the counts:

    .. math::

        c_v \sim \mathcal N\!\left(n \pi_v,\;
        n \left[q(1-q) + f_v (p-q)(1-p-q)\right]\right)
        \iff
        \tilde f_v \sim \mathcal N\!\left(f_v,\;
        \frac{q(1-q) + f_v (p-q)(1-p-q)}{n (p-q)^2}\right),

    independently over items (its log-density is that of the estimates :math:`\tilde f`
    plus the constant :math:`-d \log(n (p - q))`).

    Parameters
    ----------
    name : str
        Name of the observed variable; the measurement is registered as ``pm.Data``
        named ``{name}_counts``, ``{name}_n``, ``{name}_p`` and ``{name}_q``.
    frequencies : TensorVariable
        The frequency vector (length ``d``, on the simplex), e.g. a ``pm.Dirichlet``.
        Values off the simplex give a log-density of ``-inf`` (multinomial, binomial)
        or a meaningless one (gaussian).
    measurement : Measurement
        The oracle's output; its counts are the observed data.
    kind : {"auto", "multinomial", "binomial", "gaussian"}
        ``"auto"``: multinomial for GRR, binomial otherwise.
    dims : str or tuple of str, optional
        Named dimension of the counts; by default that of ``frequencies`` (if it was
        declared with ``dims``).

    Returns
    -------
    TensorVariable
        The observed variable.

    Raises
    ------
    ValueError
        Bad ``name``, ``kind`` or ``measurement``, a ``frequencies`` vector of the wrong
        length, or no model on the context stack.

    See Also
    --------
    set_measurement : swap in another measurement of the same domain size.
    bayesldp.models.fit : sample the model and return an :class:`~bayesldp.Estimate`.
    """
    import pymc as pm
    import pytensor.tensor as pt

    name = _check_name(name)
    m = check_measurement(measurement, "measurement")
    kind = resolve_kind(m, kind)
    try:
        model = pm.modelcontext(None)
    except TypeError:
        raise ValueError(
            "ldp_likelihood must be called inside a `with pm.Model():` block"
        ) from None
    d = m.domain_size
    try:
        f = pt.as_tensor_variable(frequencies)
    except (TypeError, ValueError) as err:
        raise ValueError(f"frequencies must be a tensor of length {d}: {err}") from None
    if f.ndim != 1 or f.type.shape[0] not in (None, d):
        raise ValueError(
            f"frequencies must be a vector of length d = {d}, got static shape {f.type.shape}"
        )
    if dims is None and f.name is not None and f.name in model.named_vars:
        dims = model.named_vars_to_dims.get(f.name)
    if isinstance(dims, str):
        dims = (dims,)
    dims = tuple(dims) if dims is not None else None
    if f.name is None or f.name not in model.named_vars:
        f = pm.Deterministic(f"{name}_frequencies", f, dims=dims)
    names = data_names(name)
    counts = pm.Data(names["counts"], np.asarray(m.support_counts, dtype=np.int64), dims=dims)
    n = pm.Data(names["n"], np.int64(m.n))
    p = pm.Data(names["p"], np.float64(m.p))
    q = pm.Data(names["q"], np.float64(m.q))
    pi = q + (p - q) * f
    if kind == "multinomial":
        out = pm.Multinomial(name, n=n, p=pi, observed=counts, dims=dims)
    elif kind == "binomial":
        log_coef = pm.Data(f"{name}_log_binom", log_binomial_coefficients(m), dims=dims)
        out = pm.CustomDist(
            name, n, pi, log_coef, logp=_binomial_logp, random=_binomial_random,
            observed=counts, dims=dims, dtype="int64",
        )  # fmt: skip
    else:
        var = gaussian_count_variance(n, p, q, f)
        out = pm.Normal(name, mu=n * pi, sigma=pt.sqrt(var), observed=counts, dims=dims)
    specs = _REGISTRY.setdefault(model, {})
    assert f.name is not None  # a named model variable, or named by pm.Deterministic above
    specs[name] = LikelihoodSpec(name, kind, d, f.name, dims)
    return out


def log_binomial_coefficients(m: Measurement) -> np.ndarray:
    r"""Return :math:`\log \binom{n}{c_v}` for each support count of ``m``.

    The binomial likelihood's constant, computed once per measurement (as ``pm.Data``)
    instead of three log-gamma functions per item at every gradient evaluation.

    Parameters
    ----------
    m : Measurement
        Gives ``n`` and the support counts.
    """
    from scipy import special

    c = np.asarray(m.support_counts, dtype=np.float64)
    return special.gammaln(m.n + 1.0) - special.gammaln(c + 1.0) - special.gammaln(m.n - c + 1.0)


def _binomial_logp(value, n, pi, log_coef):
    """Binomial log-pmf with its coefficient given (as ``pm.Binomial``, -inf off [0, 1])."""
    import pytensor.tensor as pt

    hits = pt.switch(pt.eq(value, 0), 0.0, value * pt.log(pi))
    misses = pt.switch(pt.eq(value, n), 0.0, (n - value) * pt.log1p(-pi))
    return pt.switch((pi >= 0) & (pi <= 1), log_coef + hits + misses, -np.inf)


def _binomial_random(n, pi, log_coef, rng=None, size=None):
    """Draw counts from the binomial likelihood (for PyMC's predictive sampling)."""
    return rng.binomial(n, pi, size=size)


def likelihood_specs(model) -> dict:
    """Return the likelihoods :func:`ldp_likelihood` added to ``model``, by name.

    Parameters
    ----------
    model : pymc.Model
        A model built with :func:`ldp_likelihood`.

    Returns
    -------
    dict of str to LikelihoodSpec
        Empty when the model has none.
    """
    return dict(_REGISTRY.get(model, {}))


def follow_measurement(model, key: str, update) -> None:
    """Register ``update(model, measurement)`` to run whenever ``fit`` swaps a measurement in.

    Parts of a model other than the likelihood may depend on the measurement without
    changing the model's law, e.g. the coordinates of
    :func:`~bayesldp.models.dirichlet.dirichlet_simplex` or the start of
    :func:`~bayesldp.models.dirichlet.log_concentration`; they register here, and
    :func:`move_followers` (called by :func:`bayesldp.models.fit`) moves them with the
    counts, so one compiled model serves many measurements with the right coordinates.

    Parameters
    ----------
    model : pymc.Model
        The model the data belong to.
    key : str
        Names the update (registering the same key again replaces it).
    update : callable
        ``update(model, measurement)``, setting the model's ``pm.Data``.
    """
    if not callable(update):
        raise ValueError(f"update must be callable, got {update!r}")
    _FOLLOWERS.setdefault(model, {})[str(key)] = update


def move_followers(model, measurement: Measurement) -> None:
    """Run every update :func:`follow_measurement` registered on ``model``.

    Parameters
    ----------
    model : pymc.Model
        The model.
    measurement : Measurement
        The measurement the model will be fitted to next.
    """
    m = check_measurement(measurement, "measurement")
    for update in _FOLLOWERS.get(model, {}).values():
        update(model, m)


def set_measurement(model, name: str, measurement: Measurement) -> None:
    """Swap another measurement of the same domain size into likelihood ``name``.

    Only the ``pm.Data`` containers change, so a compiled log-density (and PyMC's
    compiled sampler functions) computes with the new counts, ``n``, ``p`` and
    ``q`` without recompiling.

    Parameters
    ----------
    model : pymc.Model
        A model holding an :func:`ldp_likelihood` called ``name``.
    name : str
        Name of that likelihood.
    measurement : Measurement
        The new measurement (any oracle whose counts fit the likelihood's kind).

    Raises
    ------
    ValueError
        No such likelihood, a measurement of another domain size, or counts the
        likelihood's kind cannot describe (a multinomial likelihood needs GRR counts).
    """
    import pymc as pm

    m = check_measurement(measurement, "measurement")
    specs = likelihood_specs(model)
    if name not in specs:
        raise ValueError(
            f"name {name!r} is not an ldp_likelihood of this model; it has: "
            f"{', '.join(specs) or 'none'}"
        )
    spec = specs[name]
    if m.domain_size != spec.domain_size:
        raise ValueError(
            f"measurement has domain size {m.domain_size}; likelihood {name!r} was built "
            f"for {spec.domain_size}"
        )
    if spec.kind == "multinomial":
        resolve_kind(m, "multinomial")
    names = spec.data
    values = {
        names["counts"]: np.asarray(m.support_counts, dtype=np.int64),
        names["n"]: np.int64(m.n),
        names["p"]: np.float64(m.p),
        names["q"]: np.float64(m.q),
    }
    if spec.kind == "binomial":
        values[f"{name}_log_binom"] = log_binomial_coefficients(m)
    pm.set_data(values, model=model)


def current_data(model, name: str) -> dict[str, np.ndarray]:
    """Return the counts, ``n``, ``p`` and ``q`` that likelihood ``name`` currently holds."""
    spec = likelihood_specs(model)[name]
    return {key: model[var].get_value() for key, var in spec.data.items()}


def pointwise_loglik(
    kind: str, frequencies: np.ndarray, counts: np.ndarray, n: int, p: float, q: float
) -> np.ndarray:
    r"""Per-item log-likelihood terms for draws of the frequency vector.

    Parameters
    ----------
    kind : {"multinomial", "binomial", "gaussian"}
        The likelihood.
    frequencies : numpy.ndarray
        Draws, shape ``(..., d)``.
    counts : numpy.ndarray
        Support counts, length ``d``.
    n : int
        Number of users.
    p, q : float
        The oracle's support probabilities.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., d)``. Binomial and gaussian: item ``v``'s term of the
        composite (or independent-normal) log-likelihood, summing over items to the
        model's log-likelihood. Multinomial: :math:`\log \pi_v`, the log-probability of
        one user's report when it is item ``v`` (the multinomial log-likelihood is
        :math:`\log n! - \sum_v \log c_v! + \sum_v c_v \log \pi_v`, a sum over users).
    """
    from scipy import stats

    f = np.asarray(frequencies, dtype=np.float64)
    pi = q + (p - q) * f
    if kind == "multinomial":
        with np.errstate(divide="ignore"):
            return np.log(pi)
    if kind == "binomial":
        return stats.binom.logpmf(counts, n, pi)
    if kind == "gaussian":
        sd = np.sqrt(gaussian_count_variance(n, p, q, f))
        return stats.norm.logpdf(counts, n * pi, sd)
    raise ValueError(f"unknown kind {kind!r}")
