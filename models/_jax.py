"""What :func:`bayesldp.models.fit` asks before it hands a model to a JAX sampler.

JAX's CPU devices (one per parallel chain), whether a model's ops all have a JAX form,
how NumPyro should run the chains within the memory available, and NumPyro's warm-up
tree-depth cap. Everything here uses public APIs of JAX, PyMC and NumPyro.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from bayesldp._validation import check_int

logger = logging.getLogger("bayesldp.models.fitting")

#: Memory NumPyro's parallel chains add, in bytes per iteration (warm-up and draws, per
#: chain) per squared free parameter: while two chains execute at once JAX's CPU
#: runtime grows at a rate proportional to the free parameters for a time proportional
#: to them; an upper bound of that rate.
PARALLEL_CHAIN_BYTES = 4e-3

#: Share of the available memory the expected growth may take before the chains run
#: one after the other.
PARALLEL_MEMORY_SHARE = 0.75

#: NumPyro's own cap on NUTS's tree depth (``NUTS(max_tree_depth=10)``), which the draws
#: keep when the warm-up's is capped.
NUMPYRO_MAX_TREE_DEPTH = 10


def devices_for_chains(chains: int) -> int:
    """Give JAX one CPU device per chain (at least one per core) if it has not started yet.

    NumPyro runs parallel chains on separate JAX devices, and importing
    ``pymc.sampling.jax`` asks XLA for 100 host devices, far more than the cores, which
    slows every chain down. The count can only be set before JAX's first operation in
    the process; after that the devices JAX has are kept.

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


def can_run(model, chains: int = 2) -> bool:
    """Return whether every op of ``model`` has a JAX form, so NumPyro can sample it.

    A model with an op PyTensor cannot write in JAX (e.g. ``erfcx``, which the normal
    log-CDF uses) goes to the next sampler under ``sampler="auto"`` instead of failing.

    Parameters
    ----------
    model : pymc.Model
        The model to sample: its log-density and every variable the sampler returns.
    chains : int, default 2
        Chains to run (:func:`devices_for_chains` is called first, since this imports
        PyMC's JAX module).

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
    devices_for_chains(chains)
    from pymc.sampling.jax import get_jaxified_graph

    outputs = [model.logp(), *model.replace_rvs_by_values(model.unobserved_value_vars)]
    try:
        get_jaxified_graph(inputs=model.value_vars, outputs=outputs)
    except NotImplementedError as err:
        logger.info("JAX cannot run this model: %s", str(err).splitlines()[0])
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

    Returns
    -------
    float
        Bytes.
    """
    free = check_int(free, "free", minimum=0)
    iterations = check_int(draws, "draws", minimum=0) + check_int(tune, "tune", minimum=0)
    return PARALLEL_CHAIN_BYTES * float(free) ** 2 * iterations


def chain_method(free: int, draws: int, tune: int, cores: int, available: int | None = None) -> str:
    """Return how NumPyro should run the chains: ``"parallel"`` or ``"sequential"``.

    Parallel chains (one JAX CPU device each) are faster, but while they execute at once
    the process's memory grows (:func:`parallel_chain_growth`). Chains run one after
    the other on one core, or when that expected growth exceeds
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


def model_chain_method(model, draws: int, tune: int, chains: int, cores: int) -> str:
    """Return :func:`chain_method` for ``model`` (said in the log when sequential).

    Parameters
    ----------
    model : pymc.Model
        Its initial point gives the number of free parameters.
    draws, tune, chains, cores : int
        The fit's settings.

    Returns
    -------
    str
        ``"parallel"`` or ``"sequential"``.
    """
    free = sum(int(np.size(v)) for v in model.initial_point().values())
    method = chain_method(free, draws, tune, cores)
    if method == "sequential" and cores > 1 and chains > 1:
        logger.warning(
            "NumPyro's chains run one after the other: in parallel they would add about "
            "%.1f GB for %d free parameters, more than %.0f%% of the memory available",
            parallel_chain_growth(free, draws, tune) / 1e9,
            free,
            100 * PARALLEL_MEMORY_SHARE,
        )
    return method


def with_warmup_tree_depth(
    options: Mapping[str, Any], depth: int
) -> tuple[dict[str, Any], int | None]:
    """Return ``pymc.sample`` options with NumPyro's warm-up tree depth capped at ``depth``.

    NumPyro takes ``max_tree_depth=(warm-up, draws)``; the draws keep
    :data:`NUMPYRO_MAX_TREE_DEPTH`. A ``max_tree_depth`` the caller set in
    ``nuts_sampler_kwargs["nuts_kwargs"]`` is kept as it is. A smaller warm-up cap is
    faster at large d (the first warm-up iterations, with a small step far from the
    posterior's bulk, build the deepest trees) at a cost in the mixing of items whose
    posterior has two modes.

    Parameters
    ----------
    options : mapping
        ``sampler_kwargs`` for ``pm.sample`` (not changed).
    depth : int
        The warm-up's largest tree depth (at least 1).

    Returns
    -------
    (dict, int or None)
        The options to pass, and the cap applied (None when the caller's was kept).
    """
    depth = check_int(depth, "warmup_tree_depth", minimum=1)
    options = dict(options)
    numpyro_options = dict(options.get("nuts_sampler_kwargs", {}))
    nuts = dict(numpyro_options.get("nuts_kwargs", {}))
    if "max_tree_depth" in nuts:
        return options, None
    nuts["max_tree_depth"] = (depth, NUMPYRO_MAX_TREE_DEPTH)
    return {**options, "nuts_sampler_kwargs": {**numpyro_options, "nuts_kwargs": nuts}}, depth
