"""Fit any PyMC model holding an :func:`~bayesldp.models.ldp_likelihood` to a measurement.

:func:`fit` samples the model's posterior with one of three NUTS implementations or
jittered static HMC, and returns a :class:`bayesldp.Estimate` whose frequencies are
posterior means and whose :meth:`~bayesldp.Estimate.interval` uses the posterior draws.

NUTS samplers, fastest first where installed (for your own model ``sampler="auto"``
takes the first available NUTS;
``python benchmarks/bayes_layer_speed.py --samplers numpyro nutpie --cold`` measures them
side by side: bayes-dirichlet on wordfreq, d = 42,178, took 222 s with NumPyro and 448 s
with nutpie, and 11 s against 26 s on the papers' Zipf setting, from an empty cache).
The ready-made models' ``"auto"`` takes ``"numpyro-hmc"`` first
(:data:`READY_MADE_SAMPLERS`), checked on their posteriors:

``"numpyro-hmc"``
    NumPyro's static HMC with a trajectory length redrawn every iteration
    (:mod:`bayesldp.models.jax_hmc`), on the same JAX log-density as ``"numpyro"``.
    bayes-dirichlet on wordfreq took 134 s against NUTS's 202 s from an empty cache,
    side by side (``paper/bayes.md``). A fixed length suits posteriors whose scales the
    adapted mass matrix evens out, as the ready-made models' are; NUTS, which adapts the
    length to the posterior, stays the default for models of your own.

``"numpyro"``
    NumPyro's NUTS on the model's log-density compiled to JAX (``jax`` and ``numpyro``,
    in the ``fast`` extra). XLA fuses the log-density and its gradient into a few loops
    (about 1 ms at d = 42,178 against 3-3.5 ms for the numba form); chains run on one JAX
    CPU device each (:func:`jax_devices_for_chains`). JAX keeps no compiled model across
    processes, but compiles in seconds. Memory: while two chains run at once the
    process's memory grows with the work done (about 60 MB/s at d = 42,178; two chains
    of 1000 + 1000 peaked at 14.5 GB, against 3.7 GB one chain after the other, which
    took 1.20x the time: ``paper/bayes.md``). :func:`numpyro_chain_method` therefore
    runs the chains one after the other when the expected growth would not fit in the
    memory available, and says so; to choose yourself, pass
    ``sampler_kwargs={"nuts_sampler_kwargs": {"chain_method": "sequential"}}``.
``"nutpie"``
    nutpie's NUTS (Rust) on the model's log-density compiled by PyTensor's numba
    backend; chains run in threads of one process. The compiled model is kept per
    ``pm.Model`` and reused with new data for every later fit of that model, and its
    C callbacks are cached on disk (:func:`bayesldp.models.compiled.compile_nutpie`), so
    a later process compiles the same model in about 1.5 s instead of 13-23 s.
``"pymc"``
    PyMC's own NUTS (Python, with a C-compiled log-density and gradient); chains in
    separate processes when ``cores > 1``.

BLAS and OpenMP thread pools are limited to one thread for the duration of sampling
(:func:`single_threaded`): each chain already occupies a core, and multithreaded BLAS
in every chain oversubscribes the machine.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import time
import weakref

import numpy as np

from bayesldp._validation import (
    check_bool,
    check_choice,
    check_int,
    check_keywords,
    check_rng,
)
from bayesldp.estimate import Estimate, StoredDraws
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.models.likelihood import likelihood_specs, move_followers, set_measurement
from bayesldp.models.sampling import convergence_info

logger = logging.getLogger(__name__)

__all__ = [
    "HMC_OPTIONS",
    "JAX_PACKAGES",
    "JAX_SAMPLERS",
    "READY_MADE_SAMPLERS",
    "RESERVED_SAMPLER_KWARGS",
    "SAMPLERS",
    "available_memory",
    "available_samplers",
    "fit",
    "jax_can_run",
    "jax_devices_for_chains",
    "numpyro_chain_method",
    "parallel_chain_growth",
    "resolve_sampler",
    "single_threaded",
    "with_warmup_tree_depth",
]

#: Samplers in the order ``sampler="auto"`` tries them (fastest first, as measured by
#: ``benchmarks/bayes_layer_speed.py``: NumPyro 2.0x faster than nutpie on wordfreq and
#: 2.2x at d = 1024, from an empty cache; ``paper/bayes.md``).
SAMPLERS = ("numpyro", "numpyro-hmc", "nutpie", "pymc")

#: The order ``sampler="auto"`` tries them in for the ready-made models
#: (:func:`~bayesldp.models.bayes_dirichlet`, :func:`~bayesldp.models.bayes_hier`), whose
#: posteriors were checked with static HMC (exact posteriors, SBC, NUTS's answers on the
#: real datasets): jittered static HMC first (``paper/bayes.md``).
READY_MADE_SAMPLERS = ("numpyro-hmc", "numpyro", "nutpie", "pymc")

#: The samplers that run the model's log-density compiled to JAX.
JAX_SAMPLERS = ("numpyro", "numpyro-hmc")

#: Packages the JAX samplers need; their models must also compile to JAX (:func:`jax_can_run`).
JAX_PACKAGES = ("numpyro", "jax")

#: Free and deterministic variables with at most this many elements (of static shape)
#: get r_hat / ESS diagnostics, with the frequency vector itself; larger latent vectors
#: are summarised through it.
DIAGNOSE_MAX_SIZE = 100

#: Environment variables that size the thread pools of BLAS and OpenMP libraries.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)

#: Memory NumPyro's parallel chains add, in bytes per iteration (warm-up and draws, per
#: chain) per squared free parameter: the process grows at a rate proportional to the
#: free parameters for a time proportional to them. Measured 2.7e-3 to 3.7e-3 by
#: ``benchmarks/chain_memory.py`` and the paired wordfreq runs (d = 16,384 and 42,178:
#: their peak memory less that of sequential chains; ``paper/bayes.md``); rounded up.
PARALLEL_CHAIN_BYTES = 4e-3

#: Share of the available memory the expected growth may take before
#: :func:`numpyro_chain_method` runs the chains one after the other.
PARALLEL_MEMORY_SHARE = 0.75

#: NumPyro's own cap on NUTS's tree depth (``NUTS(max_tree_depth=10)``), which the draws
#: keep when :func:`fit` caps the warm-up's (``warmup_tree_depth``).
NUMPYRO_MAX_TREE_DEPTH = 10

#: nutpie's compiled models, per PyMC model (reused with new data on later fits).
_NUTPIE_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def available_samplers(order: tuple[str, ...] = SAMPLERS) -> tuple[str, ...]:
    """Return the samplers whose packages are installed, in ``order`` (``"auto"``'s).

    Parameters
    ----------
    order : tuple of str, default :data:`SAMPLERS`
        Samplers in the order wanted (:data:`READY_MADE_SAMPLERS` for the ready-made
        models).
    """
    needs = {
        "nutpie": ("nutpie", "numba"),
        "numpyro": JAX_PACKAGES,
        "numpyro-hmc": JAX_PACKAGES,
        "pymc": ("pymc",),
    }
    for sampler in order:
        check_choice(sampler, SAMPLERS, "sampler")
    return tuple(s for s in order if all(_installed(m) for m in needs[s]))


def resolve_sampler(sampler: str, order: tuple[str, ...] = SAMPLERS) -> str:
    """Return the sampler to run: ``"auto"`` is the first of :func:`available_samplers`.

    Parameters
    ----------
    sampler : {"auto", "numpyro", "numpyro-hmc", "nutpie", "pymc"}
        The sampler asked for.
    order : tuple of str, default :data:`SAMPLERS`
        The order ``"auto"`` tries them in.

    Raises
    ------
    ValueError
        An unknown sampler, or one whose packages are not installed.
    """
    if not isinstance(sampler, str):
        raise ValueError(f"sampler must be a string, got {sampler!r}")
    check_choice(sampler, ("auto", *SAMPLERS), "sampler")
    if sampler == "auto":
        return available_samplers(order)[0]
    if sampler not in available_samplers():
        raise ValueError(f"sampler {sampler!r} is not installed (pip install 'bayesldp[fast]')")
    return sampler


@contextlib.contextmanager
def single_threaded(threads: int | None = 1):
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


def _sample_pymc(model, draws, tune, chains, cores, seed, progressbar, extra, options):
    import pymc as pm

    return pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        random_seed=seed,
        progressbar=progressbar,
        compute_convergence_checks=False,
        model=model,
        **options,
    )


def _sample_nutpie(model, draws, tune, chains, cores, seed, progressbar, extra, options):
    import nutpie

    compiled = _NUTPIE_CACHE.get(model)
    begin = time.perf_counter()
    if compiled is None:
        from bayesldp.models.compiled import compile_nutpie

        compiled = compile_nutpie(model)
        _NUTPIE_CACHE[model] = compiled
    extra["seconds_compile"] = time.perf_counter() - begin
    # the compiled model holds a copy of every pm.Data value: push the current ones
    current = {v.name: v.get_value() for v in model.data_vars if v.name in compiled.shared_data}
    compiled = compiled.with_data(**current)
    return nutpie.sample(
        compiled,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        seed=seed,
        progress_bar=progressbar,
        **options,
    )


def jax_devices_for_chains(chains: int) -> int:
    """Give JAX one CPU device per chain (at least one per core) if it has not started yet.

    NumPyro runs parallel chains on separate JAX devices. Importing
    ``pymc.sampling.jax`` asks XLA for 100 host devices, which made bayes-dirichlet's
    sampling on wordfreq (d = 42,178) 1.6x slower than with two
    (``benchmarks/bayes_layer_speed.py``). The number can only be set before JAX's
    first operation in the process; after that the devices JAX has are kept.

    Parameters
    ----------
    chains : int
        Chains to run in parallel.

    Returns
    -------
    int
        The number of CPU devices JAX runs with.
    """
    import jax

    wanted = max(check_int(chains, "chains", minimum=1), os.cpu_count() or 1)
    try:
        jax.config.update("jax_num_cpu_devices", wanted)
    except RuntimeError:  # JAX has started: its devices stay as they are
        logger.debug("JAX already initialised; keeping its %d devices", jax.device_count())
    return jax.device_count()


def jax_can_run(model, chains: int = 2) -> bool:
    """Return whether every op of ``model`` has a JAX form, so NumPyro can sample it.

    ``sampler="auto"`` asks this before it takes NumPyro: a model with an op PyTensor
    cannot write in JAX (e.g. ``erfcx``, which the normal log-CDF uses, needs
    TensorFlow Probability) goes to the next sampler instead of failing.

    Parameters
    ----------
    model : pymc.Model
        The model to sample: its log-density and every variable NumPyro returns.
    chains : int, default 2
        Chains to run (:func:`jax_devices_for_chains` is called first, since this
        imports PyMC's JAX module).

    Returns
    -------
    bool
        False when an op has no JAX implementation.

    Raises
    ------
    ValueError
        ``model`` is not a PyMC model, or ``chains`` is not a positive integer.
    """
    import pymc as pm

    if not isinstance(model, pm.Model):
        raise ValueError(f"model must be a pymc.Model, got {type(model).__name__}")
    jax_devices_for_chains(chains)
    from pymc.sampling.jax import get_jaxified_graph

    outputs = [model.logp(), *model.replace_rvs_by_values(model.unobserved_value_vars)]
    try:
        get_jaxified_graph(inputs=model.value_vars, outputs=outputs)
    except NotImplementedError as err:
        logger.info("NumPyro cannot run this model: %s", str(err).splitlines()[0])
        return False
    return True


def available_memory() -> int | None:
    """Return the memory available to a new allocation in bytes, or None if unknown.

    Reads ``MemAvailable`` from ``/proc/meminfo`` (Linux); None elsewhere.
    """
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def parallel_chain_growth(free: int, draws: int, tune: int) -> float:
    """Return the memory NumPyro's parallel chains are expected to add, in bytes.

    :data:`PARALLEL_CHAIN_BYTES` per iteration (``draws + tune``) per squared free
    parameter.

    Parameters
    ----------
    free : int
        Free parameters of the model (elements of its value variables).
    draws, tune : int
        Draws and warm-up iterations per chain.
    """
    free = check_int(free, "free", minimum=0)
    iterations = check_int(draws, "draws", minimum=0) + check_int(tune, "tune", minimum=0)
    return PARALLEL_CHAIN_BYTES * float(free) ** 2 * iterations


def numpyro_chain_method(
    free: int, draws: int, tune: int, cores: int, available: int | None = None
) -> str:
    """Return how NumPyro should run the chains: ``"parallel"`` or ``"sequential"``.

    Parallel chains (one JAX CPU device each) are faster: 1.20x on wordfreq (d = 42,178)
    and 1.46x at d = 1024, side by side. But while two chains execute at once the
    process's memory grows, about :data:`PARALLEL_CHAIN_BYTES` bytes per iteration per
    squared free parameter (14.5 GB against 3.7 GB for bayes-dirichlet on wordfreq with
    1000 + 1000; ``benchmarks/chain_memory.py``, ``paper/bayes.md``). Chains run one
    after the other on one core, or when that expected growth
    (:func:`parallel_chain_growth`) exceeds
    :data:`PARALLEL_MEMORY_SHARE` of the available memory.

    Parameters
    ----------
    free, draws, tune : int
        As for :func:`parallel_chain_growth`.
    cores : int
        Cores for the chains; 1 means one after the other.
    available : int or None, optional
        Bytes of memory available; None reads :func:`available_memory` (and, where that
        is unknown, does not limit).

    Returns
    -------
    str
        ``"parallel"`` or ``"sequential"``.
    """
    expected = parallel_chain_growth(free, draws, tune)
    if check_int(cores, "cores", minimum=1) == 1:
        return "sequential"
    if available is None:
        available = available_memory()
        if available is None:
            return "parallel"
    else:
        available = check_int(available, "available", minimum=0)
    return "sequential" if expected > PARALLEL_MEMORY_SHARE * available else "parallel"


def _chain_method(model, draws, tune, chains, cores) -> str:
    """Return NumPyro's chain method for ``model`` (logged when sequential)."""
    free = sum(int(np.size(v)) for v in model.initial_point().values())
    method = numpyro_chain_method(free, draws, tune, cores)
    if method == "sequential" and cores > 1 and chains > 1:
        logger.warning(
            "NumPyro's chains run one after the other (about 1.2x the time): in "
            "parallel they would add about %.1f GB for %d free parameters, more than "
            "%.0f%% of the memory available",
            parallel_chain_growth(free, draws, tune) / 1e9,
            free,
            100 * PARALLEL_MEMORY_SHARE,
        )
    return method


def _sample_numpyro(model, draws, tune, chains, cores, seed, progressbar, extra, options):
    import pymc as pm

    jax_devices_for_chains(chains)
    options = dict(options)
    numpyro_options = dict(options.pop("nuts_sampler_kwargs", {}))
    if "chain_method" not in numpyro_options:
        numpyro_options["chain_method"] = _chain_method(model, draws, tune, chains, cores)
    extra["chain_method"] = numpyro_options["chain_method"]
    return pm.sample(
        draws=draws,
        tune=tune,
        chains=chains,
        random_seed=seed,
        progressbar=progressbar,
        nuts_sampler="numpyro",
        nuts_sampler_kwargs=numpyro_options,
        compute_convergence_checks=False,
        model=model,
        **options,
    )


#: The settings ``sampler_kwargs`` may pass to ``"numpyro-hmc"``
#: (:func:`bayesldp.models.jax_hmc.sample_jittered_hmc`).
HMC_OPTIONS = ("chain_method", "trajectory_length", "jitter", "max_steps", "target_accept")


def _sample_numpyro_hmc(model, draws, tune, chains, cores, seed, progressbar, extra, options):
    from bayesldp.models.jax_hmc import sample_jittered_hmc

    unknown = sorted(set(options) - set(HMC_OPTIONS))
    if unknown:
        raise ValueError(
            f"sampler_kwargs for 'numpyro-hmc' cannot set {', '.join(unknown)}; "
            f"choose from {', '.join(HMC_OPTIONS)}"
        )
    jax_devices_for_chains(chains)
    options = dict(options)
    if "chain_method" not in options:
        options["chain_method"] = _chain_method(model, draws, tune, chains, cores)
    extra["chain_method"] = options["chain_method"]
    return sample_jittered_hmc(
        model, draws=draws, tune=tune, chains=chains, random_seed=seed,
        progressbar=progressbar, **options,
    )  # fmt: skip


def with_warmup_tree_depth(options: dict, depth: int) -> tuple[dict, int | None]:
    """Return NumPyro's ``sampler_kwargs`` with NUTS's warm-up tree depth capped at ``depth``.

    NumPyro takes ``max_tree_depth=(warm-up, draws)``; the draws keep
    :data:`NUMPYRO_MAX_TREE_DEPTH`. A ``max_tree_depth`` the caller set in
    ``nuts_sampler_kwargs["nuts_kwargs"]`` is kept as it is.

    Parameters
    ----------
    options : dict
        ``sampler_kwargs`` for ``pm.sample`` (not changed).
    depth : int
        The warm-up's largest tree depth (at least 1).

    Returns
    -------
    (dict, int or None)
        The options to pass, and the cap applied (None when the caller's was kept).
    """
    depth = check_int(depth, "warmup_tree_depth", minimum=1)
    numpyro_options = dict(options.get("nuts_sampler_kwargs", {}))
    nuts = dict(numpyro_options.get("nuts_kwargs", {}))
    if "max_tree_depth" in nuts:
        return options, None
    nuts["max_tree_depth"] = (depth, NUMPYRO_MAX_TREE_DEPTH)
    return {**options, "nuts_sampler_kwargs": {**numpyro_options, "nuts_kwargs": nuts}}, depth


_RUNNERS = {
    "pymc": _sample_pymc,
    "nutpie": _sample_nutpie,
    "numpyro": _sample_numpyro,
    "numpyro-hmc": _sample_numpyro_hmc,
}

#: Arguments of each sampler's own function that :func:`fit` sets itself, so
#: ``sampler_kwargs`` cannot.
_PM_SAMPLE_SET = (
    "draws", "tune", "chains", "cores", "random_seed", "progressbar", "model",
    "compute_convergence_checks", "nuts_sampler", "return_inferencedata",
)  # fmt: skip
RESERVED_SAMPLER_KWARGS = {
    "nutpie": (
        "compiled_model", "draws", "tune", "chains", "cores", "seed", "progress_bar",
        "return_raw_trace", "blocking",
    ),
    "pymc": _PM_SAMPLE_SET,  # both call pm.sample
    "numpyro": _PM_SAMPLE_SET,
    "numpyro-hmc": (
        "model", "draws", "tune", "chains", "random_seed", "progressbar",
    ),
}  # fmt: skip


def _diagnosed_names(model, var_name: str) -> list[str]:
    names = []
    for rv in [*model.free_RVs, *model.deterministics]:
        size = rv.type.shape
        if all(s is not None for s in size) and int(np.prod(size, dtype=int)) <= DIAGNOSE_MAX_SIZE:
            names.append(rv.name)
    return [*names, var_name] if var_name not in names else names


def fit(
    model,
    measurement: Measurement,
    *,
    var_name: str = "f",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    sampler: str = "auto",
    random_seed=None,
    cores: int | None = None,
    method: str = "bayes-model",
    threads: int | None = 1,
    progressbar: bool = False,
    sampler_kwargs: dict | None = None,
    warmup_tree_depth: int | None = None,
    clear_jax_caches: bool = False,
) -> Estimate:
    """Sample a PyMC model holding an ``ldp_likelihood`` and return an Estimate.

    Parameters
    ----------
    model : pymc.Model
        A model with at least one :func:`~bayesldp.models.ldp_likelihood`.
    measurement : Measurement
        The measurement to condition on. When the model has a single
        ``ldp_likelihood`` it is swapped in first (:func:`set_measurement`), with the
        model's measurement-dependent coordinates
        (:func:`~bayesldp.models.likelihood.move_followers`), so one model serves many
        measurements; with several, set each one yourself.
    var_name : str, default "f"
        The model variable holding the frequency vector (length ``d``).
    draws, tune, chains : int
        NUTS settings, per chain.
    sampler : {"auto", "numpyro", "numpyro-hmc", "nutpie", "pymc"}
        A NUTS implementation, or jittered static HMC (``"numpyro-hmc"``, settings in
        ``sampler_kwargs``: :data:`HMC_OPTIONS`); ``"auto"`` takes the fastest NUTS
        installed (see the module docstring), skipping NumPyro for a model it cannot run
        (:func:`jax_can_run`).
    random_seed : int, numpy.random.Generator or None
        Same seed, same result (with the same sampler).
    cores : int, optional
        Chains run in parallel; default ``min(chains, os.cpu_count())``.
    method : str, default "bayes-model"
        Name recorded in the Estimate.
    threads : int or None, default 1
        BLAS/OpenMP threads while sampling (:func:`single_threaded`); None leaves the
        libraries' defaults.
    progressbar : bool, default False
        Show the sampler's progress bar.
    sampler_kwargs : dict, optional
        More keyword arguments for the sampler's own function, passed through unchecked
        (its errors are its own): ``nutpie.sample`` (e.g. ``{"maxdepth": 8}``) or
        ``pymc.sample`` for ``"pymc"`` and ``"numpyro"`` (e.g.
        ``{"target_accept": 0.9}``; ``"nuts_sampler_kwargs"`` reach NumPyro), or
        :func:`bayesldp.models.jax_hmc.sample_jittered_hmc` for ``"numpyro-hmc"``
        (:data:`HMC_OPTIONS`, e.g. ``{"trajectory_length": 5.0}``). The
        arguments ``fit`` sets itself (:data:`RESERVED_SAMPLER_KWARGS`) are refused.
        Recorded in ``info["sampler_kwargs"]``.
    warmup_tree_depth : int, optional
        ``"numpyro"`` only: the largest NUTS tree depth during warm-up (the draws keep
        NumPyro's :data:`NUMPYRO_MAX_TREE_DEPTH`; :func:`with_warmup_tree_depth`). The
        first warm-up iterations, with a small step far from the posterior's bulk, build
        the deepest trees. A trade of speed against the mixing of the hardest items:
        bayes-dirichlet on wordfreq (d = 42,178) at a cap of 5 took 164-175 s from an empty
        cache against 229-270 s uncapped (six seeds, paired), with the same bulk ESS and
        MSE (and ESS tail, 0.1% quantile, in the three seeds that recorded it), but its
        worst item (one with a two-mode posterior: a noise outlier, or a real word whose
        estimate could also be noise) mixed worse in five of the six (r_hat 1.022-1.121,
        median 1.055, against 1.021-1.040, median 1.032; an item above 1.05 in three capped
        runs, in no uncapped one; ``paper/bayes.md``). So no model caps it by default.
        nutpie, PyMC and static HMC have no separate warm-up cap and run as without it.
        Recorded in
        ``info["warmup_tree_depth"]`` (None where it was not applied).
    clear_jax_caches : bool, default False
        After a JAX sampler (``"numpyro"``, ``"numpyro-hmc"``), empty JAX's compilation
        caches (``jax.clear_caches()``; they hold this process's other JAX functions
        too). Every fit compiles functions of its own and JAX keeps them: 40 bayes-hier
        fits at d = 4 grew the process from about 1.0 to 2.0 GB (HMC) and 2.5 GB
        (NumPyro's NUTS), against 1.3 GB with clearing, which cost about 1.5 s per fit
        in recompiling (``benchmarks/sampler_agreement.py --repeat-fits 40``;
        ``paper/bayes.md``). For long loops of fits in one process.

    Returns
    -------
    Estimate
        ``frequencies``: posterior means of ``var_name``; ``uncertainty``: its
        posterior draws (``chains * draws`` of them), behind
        :meth:`~bayesldp.Estimate.interval`; ``inference_data`` and
        ``info["inference_data"]``: the ArviZ InferenceData; ``info``: ``sampler``,
        ``r_hat`` and ``ess_bulk`` (the worst item of ``var_name`` and of each small
        free or deterministic variable), ``divergences``, ``likelihoods`` (name to
        kind), ``chain_method`` (how NumPyro ran the chains,
        :func:`numpyro_chain_method`; None for the other samplers),
        ``warmup_tree_depth`` (the warm-up's tree-depth cap, where applied), ``model`` and
        timings: ``seconds_sampling`` (the sampler's call, its
        compilation included) and ``seconds_compile`` (nutpie's compilation of the
        model; near 0 when this process compiled it before, a second or two when an
        earlier process did; None for the other samplers, which compile inside their
        call). Poor convergence raises a :class:`RuntimeWarning`.

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
    draws = check_int(draws, "draws", minimum=1)
    tune = check_int(tune, "tune", minimum=0)
    chains = check_int(chains, "chains", minimum=1)
    cores = (
        min(chains, os.cpu_count() or 1) if cores is None else check_int(cores, "cores", minimum=1)
    )
    if threads is not None:
        threads = check_int(threads, "threads", minimum=1)
    clear_jax_caches = check_bool(clear_jax_caches, "clear_jax_caches")
    seed = int(check_rng(random_seed, "random_seed").integers(2**31 - 1))
    chosen = resolve_sampler(sampler)
    if sampler == "auto" and chosen in JAX_SAMPLERS and not jax_can_run(model, chains):
        # the fastest that does not run on JAX; PyMC's own is always there
        chosen = next(s for s in available_samplers() if s not in JAX_SAMPLERS)
    options = check_keywords(sampler_kwargs, "sampler_kwargs", RESERVED_SAMPLER_KWARGS[chosen])
    run_options, applied_depth = options, None
    if warmup_tree_depth is not None:
        warmup_tree_depth = check_int(warmup_tree_depth, "warmup_tree_depth", minimum=1)
        if chosen == "numpyro":
            run_options, applied_depth = with_warmup_tree_depth(options, warmup_tree_depth)
    d = measurement.domain_size
    if len(specs) == 1:
        set_measurement(model, next(iter(specs)), measurement)
        move_followers(model, measurement)
    elif all(spec.domain_size != d for spec in specs.values()):
        raise ValueError(f"measurement has domain size {d}; no likelihood of the model has")

    start = time.perf_counter()
    extra: dict = {}  # what the runner reports beside the draws
    with single_threaded(threads):
        idata = _RUNNERS[chosen](
            model, draws, tune, chains, cores, seed, progressbar, extra, run_options
        )
    if chosen in JAX_SAMPLERS and clear_jax_caches:
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
    info = convergence_info(
        idata, _diagnosed_names(model, var_name), chains, stacklevel=3,
        kernel="HMC" if chosen == "numpyro-hmc" else "NUTS",
    )  # fmt: skip
    info.update(
        {
            "sampler": chosen,
            "likelihoods": {name: spec.kind for name, spec in specs.items()},
            "var_name": var_name,
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "cores": cores,
            "threads": threads,
            "random_seed": seed,
            "sampler_kwargs": options,
            "seconds_sampling": sampled - start,
            "seconds_compile": extra.get("seconds_compile"),
            "chain_method": extra.get("chain_method"),
            "warmup_tree_depth": applied_depth,
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
