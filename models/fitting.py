"""Fit any PyMC model holding an :func:`~bayesldp.models.ldp_likelihood` to a measurement.

:func:`fit` samples the model's posterior with ``pymc.sample``, whose ``nuts_sampler``
picks the NUTS implementation (``"numpyro"``, ``"nutpie"``, ``"blackjax"`` or PyMC's own
``"pymc"``), and returns a :class:`bayesldp.Estimate` whose frequencies are posterior
means and whose :meth:`~bayesldp.Estimate.interval` uses the posterior draws.

``sampler="auto"`` takes the first installed of
:data:`~bayesldp.models._settings.SAMPLERS` that can run the model: NumPyro on the
model's log-density compiled to JAX (a core dependency; XLA fuses the log-density and
its gradient, and compiles in seconds), else nutpie (Rust NUTS on PyTensor's numba
backend), and PyMC's own NUTS, which runs every model; ``"blackjax"`` is run when
asked for. A model with an op
that has no JAX form skips the JAX samplers. ``info["sampler"]`` says which ran.

NumPyro runs parallel chains on one JAX CPU device each; while they run at once the
process's memory grows with the work done, so the chains run one after the other when
the expected growth would not fit in the memory available (and the log says so). BLAS
and OpenMP thread pools are limited to one thread per chain while sampling
(:func:`single_threaded`): each chain already occupies a core.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import logging
import os
import time
import warnings
from collections.abc import Iterator

import numpy as np

from bayesldp._validation import check_rng
from bayesldp.estimate import Estimate, StoredDraws
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models import _jax
from bayesldp.models._settings import (
    OTHER_SAMPLERS,
    SAMPLERS,
    SamplerSettings,
    resolve_settings,
)
from bayesldp.models.diagnostics import convergence_info
from bayesldp.models.likelihood import likelihood_specs, move_followers, set_measurement

logger = logging.getLogger(__name__)

__all__ = ["fit"]

#: The samplers that run the model's log-density compiled to JAX.
JAX_SAMPLERS = ("numpyro", "blackjax", "numpyro-hmc")

#: The settings ``sampler_kwargs`` may pass to ``"numpyro-hmc"``.
HMC_OPTIONS = ("chain_method", "trajectory_length", "jitter", "max_steps")

#: Packages each sampler needs.
SAMPLER_PACKAGES = {
    "numpyro": ("numpyro", "jax"),
    "nutpie": ("nutpie", "numba"),
    "blackjax": ("blackjax", "jax"),
    "numpyro-hmc": ("numpyro", "jax"),
    "pymc": ("pymc",),
}

#: Environment variables that size the thread pools of BLAS and OpenMP libraries.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: Loggers of the sampling libraries whose progress lines (``Initializing NUTS using
#: jitter+adapt_diag...``, ``Sequential sampling ...``) fit keeps from the user.
LIBRARY_LOGGERS = ("pymc", "pytensor")


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def available_samplers() -> tuple[str, ...]:
    """Return the NUTS samplers whose packages are installed, in ``"auto"``'s order.

    Returns
    -------
    tuple of str
        A subset of ``("numpyro", "nutpie", "pymc")`` (``"blackjax"`` is taken only
        when asked for by name).
    """
    return tuple(s for s in SAMPLERS if all(_installed(m) for m in SAMPLER_PACKAGES[s]))


def resolve_sampler(sampler: str, model=None, chains: int = 2) -> str:
    """Return the sampler to run: ``"auto"`` is the first installed that runs ``model``.

    Parameters
    ----------
    sampler : {"auto", "numpyro", "nutpie", "blackjax", "pymc"}
        The sampler asked for (checked by :class:`SamplerSettings`).
    model : pymc.Model, optional
        With ``"auto"``, a model whose ops lack a JAX form skips the JAX samplers.
    chains : int, default 2
        Chains to run (JAX's devices are set for them).

    Returns
    -------
    str
        An installed sampler.

    Raises
    ------
    ValueError
        A sampler whose packages are not installed.
    """
    installed = available_samplers()
    if sampler != "auto":
        if sampler not in installed and not (
            sampler in OTHER_SAMPLERS and all(_installed(m) for m in SAMPLER_PACKAGES[sampler])
        ):
            needs = ", ".join(SAMPLER_PACKAGES[sampler])
            raise ValueError(f"sampler {sampler!r} is not installed (it needs {needs})")
        return sampler
    chosen = installed[0]
    if chosen in JAX_SAMPLERS and model is not None and not _jax.can_run(model, chains):
        chosen = next(s for s in installed if s not in JAX_SAMPLERS)
    return chosen


@contextlib.contextmanager
def single_threaded(threads: int | None = 1) -> Iterator[None]:
    """Limit BLAS/OpenMP thread pools to ``threads`` inside the block (None: no limit).

    Uses :mod:`threadpoolctl` for the libraries already loaded in this process and the
    usual environment variables for processes started inside the block (PyMC's chain
    processes, numba's threading layer); both are restored on exit.

    Parameters
    ----------
    threads : int or None, default 1
        Threads per pool; None leaves the pools and the environment alone.
    """
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    os.environ.update({k: str(threads) for k in THREAD_VARIABLES})
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
    """Keep the sampling libraries' progress logs and import-time FutureWarnings inside.

    PyMC logs ``Initializing NUTS using jitter+adapt_diag...`` and similar lines at INFO
    level on every call; ArviZ and xarray may raise FutureWarnings about their own
    coming changes; and PyTensor, installed from PyPI, warns that it "could not link to
    a BLAS installation": the BLAS that NumPy and SciPy wheels ship exports prefixed
    symbols PyTensor's C code cannot link to. The models do not need it: the default
    samplers run the log-density through JAX or numba, and PyTensor's C backend
    computes the few matrix products of the models' graphs with NumPy (whose BLAS is
    the wheels' own). Inside the block those loggers show WARNING and above only and
    these warnings are ignored; the user's own code, before and after, is left alone.
    Warnings about the fit itself (convergence) are raised after the block.
    """
    loggers = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(max(lg.getEffectiveLevel(), logging.WARNING))
    try:
        with warnings.catch_warnings():
            for module in ("arviz", "xarray", "pymc", "pytensor", "numpyro", "jax"):
                warnings.filterwarnings("ignore", category=FutureWarning, module=module)
            warnings.filterwarnings(
                "ignore", message="PyTensor could not link to a BLAS", category=UserWarning
            )
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def sample_options(model, sampler: str, settings: SamplerSettings, cores: int) -> tuple[dict, dict]:
    """Return the keyword arguments of ``pymc.sample`` for ``sampler``, and what to record.

    Parameters
    ----------
    model : pymc.Model
        The model (its size decides how NumPyro runs the chains).
    sampler : str
        The resolved sampler.
    settings : SamplerSettings
        The fit's settings.
    cores : int
        Chains run at once.

    Returns
    -------
    (dict, dict)
        Options for ``pymc.sample`` beyond the ones every sampler gets, and
        ``chain_method`` / ``warmup_tree_depth`` for ``Estimate.info``.
    """
    options = dict(settings.sampler_kwargs)
    record: dict = {"chain_method": None, "warmup_tree_depth": None}
    if settings.target_accept is not None:
        options["target_accept"] = settings.target_accept
    if sampler == "pymc":
        return options, record
    if sampler == "numpyro-hmc":
        unknown = sorted(set(options) - {*HMC_OPTIONS, "target_accept"})
        if unknown:
            raise ValueError(
                f"sampler_kwargs for 'numpyro-hmc' cannot set {', '.join(unknown)}; "
                f"choose from {', '.join(HMC_OPTIONS)}"
            )
        if "chain_method" not in options:
            options["chain_method"] = _jax.model_chain_method(
                model, settings.draws, settings.tune, settings.chains, cores
            )
        record["chain_method"] = options["chain_method"]
        return options, record
    options["nuts_sampler"] = sampler
    external = dict(options.get("nuts_sampler_kwargs", {}))
    if sampler == "numpyro":
        if "chain_method" not in external:
            external["chain_method"] = _jax.model_chain_method(
                model, settings.draws, settings.tune, settings.chains, cores
            )
        options["nuts_sampler_kwargs"] = external
        record["chain_method"] = external["chain_method"]
        if settings.warmup_tree_depth is not None:
            options, record["warmup_tree_depth"] = _jax.with_warmup_tree_depth(
                options, settings.warmup_tree_depth
            )
    elif sampler == "blackjax":
        record["chain_method"] = external.get("chain_method", "parallel")
    elif sampler == "nutpie":
        external.setdefault("cores", cores)
        options["nuts_sampler_kwargs"] = external
    return options, record


def _diagnosed(model, var_name: str) -> list[str]:
    """Return the free variables, ``var_name`` and the deterministics of <= 100 elements."""
    names = [rv.name for rv in model.free_RVs]
    for rv in model.deterministics:
        shape = rv.type.shape
        if all(s is not None for s in shape) and int(np.prod(shape, dtype=int)) <= 100:
            names.append(rv.name)
    return [*names, var_name] if var_name not in names else names


def fit(
    model,
    measurement: Measurement,
    *,
    settings: SamplerSettings | None = None,
    var_name: str = "f",
    rng=None,
    method: str = "bayes-model",
    **options,
) -> Estimate:
    """Sample a PyMC model holding an ``ldp_likelihood`` and return an Estimate.

    Parameters
    ----------
    model : pymc.Model
        A model with at least one :func:`~bayesldp.models.ldp_likelihood`.
    measurement : Measurement
        The measurement to condition on. When the model has a single
        ``ldp_likelihood`` it is swapped in first (:func:`set_measurement`), with the
        model's measurement-dependent coordinates (``dirichlet_simplex``'s), so one
        model serves many measurements; with several, set each one yourself.
    settings : SamplerSettings, optional
        How to sample (draws, tune, chains, sampler, ...); default
        ``SamplerSettings()``.
    var_name : str, default "f"
        The model variable holding the frequency vector (length ``d``).
    rng : numpy.random.Generator, int or None
        Seeds the sampler: same seed, same result (with the same sampler).
    method : str, default "bayes-model"
        Name recorded in the Estimate.
    **options
        Fields of :class:`SamplerSettings` that replace those of ``settings``
        (``draws=500``, ``sampler="pymc"``, ...).

    Returns
    -------
    Estimate
        ``frequencies``: posterior means of ``var_name``; ``uncertainty``: its
        posterior draws (``chains * draws`` of them), behind
        :meth:`~bayesldp.Estimate.interval`; ``inference_data``: the ArviZ
        InferenceData; ``info``: ``sampler``, the diagnostics of
        :func:`bayesldp.models.diagnostics.convergence_info` (``r_hat``, ``ess_bulk``,
        ``divergences``, ``warnings``), ``likelihoods`` (name to kind),
        ``chain_method`` (how NumPyro ran the chains), ``warmup_tree_depth`` (where
        applied), ``settings``, ``model`` and ``seconds_sampling``. Poor convergence
        and divergences raise a :class:`bayesldp.errors.ConvergenceWarning`.

    Raises
    ------
    ValueError
        A model without ``ldp_likelihood``, an unknown ``var_name`` or sampler, a
        measurement of the wrong domain size, or bad sampler settings.
    """
    check_measurement(measurement, "measurement")
    specs = likelihood_specs(model)
    if not specs:
        raise ValueError("model holds no ldp_likelihood; add one with ldp_likelihood(...)")
    if not isinstance(var_name, str) or var_name not in model.named_vars:
        raise ValueError(f"var_name {var_name!r} is not a variable of the model")
    settings = resolve_settings(settings, options)
    seed = int(check_rng(rng, "rng").integers(2**31 - 1))
    chains = settings.chains
    with quiet_libraries():  # choosing the sampler compiles functions of the model too
        chosen = resolve_sampler(settings.sampler, model, chains)
    cores = min(chains, os.cpu_count() or 1) if settings.cores is None else settings.cores
    d = measurement.domain_size
    if len(specs) == 1:
        set_measurement(model, next(iter(specs)), measurement)
        move_followers(model, measurement)
    elif all(spec.domain_size != d for spec in specs.values()):
        raise ValueError(f"measurement has domain size {d}; no likelihood of the model has")
    if chosen in JAX_SAMPLERS:
        _jax.devices_for_chains(chains)
    start = time.perf_counter()
    with single_threaded(settings.threads), quiet_libraries():
        run_options, record = sample_options(model, chosen, settings, cores)
        import pymc as pm

        if chosen == "numpyro-hmc":
            from bayesldp.models._jax_hmc import sample_jittered_hmc

            idata = sample_jittered_hmc(
                model, draws=settings.draws, tune=settings.tune, chains=chains,
                random_seed=seed, progressbar=settings.progressbar, **run_options,
            )  # fmt: skip
        else:
            idata = pm.sample(
                draws=settings.draws,
                tune=settings.tune,
                chains=chains,
                cores=cores,
                random_seed=seed,
                progressbar=settings.progressbar,
                compute_convergence_checks=False,
                quiet=not settings.progressbar,  # its own log lines; our diagnostics warn
                model=model,
                **run_options,
            )
    if chosen in JAX_SAMPLERS and settings.clear_jax_caches:
        import jax

        jax.clear_caches()
    sampled = time.perf_counter()
    values = np.asarray(idata.posterior[var_name].values, dtype=np.float64)
    if values.ndim != 3 or values.shape[-1] != d:
        raise ValueError(
            f"var_name {var_name!r} must be a vector of length {d}; its draws have shape "
            f"{values.shape[2:]}"
        )
    flat = values.reshape(-1, d)
    free = [rv.name for rv in model.free_RVs]
    names = [*free, var_name] if var_name not in free else free
    kernel = "HMC" if chosen == "numpyro-hmc" else "NUTS"
    info = convergence_info(
        idata, _diagnosed(model, var_name), stacklevel=3, checked=names, kernel=kernel
    )
    info.update(
        {
            "sampler": chosen,
            "likelihoods": {name: spec.kind for name, spec in specs.items()},
            "var_name": var_name,
            "settings": settings,
            "cores": cores,
            "random_seed": seed,
            "seconds_sampling": sampled - start,
            **record,
            "model": model,
            "inference_data": idata,
        }
    )
    logger.debug("fit %s with %s in %.1f s", method, chosen, sampled - start)
    return Estimate(
        frequencies=flat.mean(axis=0),
        method=method,
        measurement=measurement,
        info=info,
        inference_data=idata,
        uncertainty=StoredDraws(flat),
    )


def ready_made_settings(settings: SamplerSettings) -> SamplerSettings:
    """Return ``settings`` with ``sampler="auto"`` taken as the Dirichlet models' default.

    bayes-dirichlet and bayes-hier sample with ``"numpyro-hmc"`` first (their posteriors,
    in :func:`~bayesldp.models.dirichlet_simplex`'s coordinates, have the even scales a
    fixed trajectory length suits); without JAX, ``"auto"`` as for any model.

    Parameters
    ----------
    settings : SamplerSettings
        The caller's settings.

    Returns
    -------
    SamplerSettings
        With the sampler resolved for the ready-made models.
    """
    if settings.sampler == "auto" and all(_installed(m) for m in SAMPLER_PACKAGES["numpyro-hmc"]):
        return dataclasses.replace(settings, sampler="numpyro-hmc")
    return settings


def sample_parameters(
    model, settings: SamplerSettings, seed: int, *, target_accept: float, initvals=None
):
    """Sample a model of a few hyper-parameters (``bayes-power``, ``bayes-consistent``).

    ``sampler="auto"`` is NumPyro's NUTS with the chains vectorised in one process (a
    two-parameter model makes them cheap): from an empty compile cache it took 0.57-0.78x
    the time of PyMC's own NUTS, whose C code PyTensor compiles with a BLAS a pip
    install cannot link (``paper/bayes.md``); without JAX, PyMC's NUTS with the chains
    one after the other (``cores`` default 1).

    Parameters
    ----------
    model : pymc.Model
        The model.
    settings : SamplerSettings
        The fit's settings (``settings.target_accept`` wins over ``target_accept``).
    seed : int
        The sampler's seed.
    target_accept : float
        The model's default target acceptance.
    initvals : dict, optional
        Starting values (PyMC's ``initvals``).

    Returns
    -------
    arviz.InferenceData
        The draws.
    """
    if settings.sampler == "auto":
        sampler = "numpyro" if "numpyro" in available_samplers() else "pymc"
    else:
        sampler = resolve_sampler(settings.sampler)
    options = dict(settings.sampler_kwargs)
    if sampler != "pymc":
        options["nuts_sampler"] = sampler
    if sampler == "numpyro":
        external = dict(options.get("nuts_sampler_kwargs", {}))
        external.setdefault("chain_method", "vectorized")
        options["nuts_sampler_kwargs"] = external
    if initvals is not None:
        options["initvals"] = initvals
    accept = target_accept if settings.target_accept is None else settings.target_accept
    with single_threaded(settings.threads), quiet_libraries():
        import pymc as pm

        return pm.sample(
            draws=settings.draws,
            tune=settings.tune,
            chains=settings.chains,
            cores=1 if settings.cores is None else settings.cores,
            random_seed=seed,
            progressbar=settings.progressbar,
            compute_convergence_checks=False,
            quiet=not settings.progressbar,  # its own log lines; our diagnostics warn
            model=model,
            target_accept=accept,
            **options,
        )
