r"""Static HMC with a jittered trajectory length, on a PyMC model's JAX log-density.

The sampler ``"numpyro-hmc"`` of :func:`bayesldp.models.fit`, the ready-made Dirichlet
models' default. NumPyro's static HMC
integrates every iteration over a trajectory of length :math:`L` in the coordinates of
the adapted diagonal mass matrix; here :math:`L` is redrawn every iteration,

.. math::

    L_t = \min\bigl(L \, u_t,\; \epsilon K\bigr), \qquad
    u_t \sim \mathrm{Uniform}(1 - j, 1 + j),

independently of the state and of the momentum (from a key split off the chain's
own before HMC draws from it), so each
iteration is a valid HMC kernel for the posterior and so is their mixture
(:math:`\epsilon`: the step size, fixed after warm-up; :math:`K`:
:data:`MAX_STEPS`, the most leapfrog steps of one iteration). A *fixed* length that
falls near some coordinate's period leaves that coordinate nearly still; a random one
cannot do so every iteration (Neal 2011, section 5.4.2.2).

Why: NUTS builds each trajectory by doubling until it turns back, and with tens of
thousands of items its trees are deep while the first warm-up iterations are far from
the bulk; a fixed, jittered length costs fewer gradients per effective draw on the
ready-made models' posteriors, whose scales the adapted mass matrix evens out
(``benchmarks/bayes_speed.py --samplers numpyro-hmc numpyro`` measures it). Its
weakness is posteriors whose scales differ along a trajectory (funnels of hierarchical
models): there NUTS's adaptive length is safer, so ``sampler="auto"`` takes it first
only for the ready-made models, and :func:`bayesldp.models.fit` says which sampler ran.

Draws are transformed to the model's variables (a batch of draws at a time,
:func:`transform_draws`) and returned as ArviZ InferenceData, as PyMC's own NumPyro path
does, with the sample statistics ``diverging``, ``lp`` (the
log-density), ``energy``, ``step_size``, ``n_steps`` and ``acceptance_rate``.
"""

from __future__ import annotations

import logging

import numpy as np

from bayesldp._validation import check_choice, check_float, check_int, check_probability

logger = logging.getLogger(__name__)

#: Mean trajectory length, in the coordinates of the adapted mass matrix (the unit-scale
#: posterior's): long enough to move the slowest items of the ready-made models as far
#: per iteration as NUTS does.
TRAJECTORY_LENGTH = 3.0

#: Half-width of the uniform jitter of the length, relative to it.
LENGTH_JITTER = 0.5

#: Most leapfrog steps in one iteration, as NUTS's at its largest tree depth (10): the
#: first warm-up iterations, with a tiny step, would otherwise take thousands.
MAX_STEPS = 1023

#: Tries for a jittered start with a finite log-density, per chain (as PyMC's).
START_RETRIES = 10

#: NumPyro's per-iteration fields kept, and their names in ``sample_stats``.
STATS = {
    "diverging": "diverging",
    "potential_energy": "lp",
    "energy": "energy",
    "adapt_state.step_size": "step_size",
    "num_steps": "n_steps",
    "accept_prob": "acceptance_rate",
}


#: :func:`transform_draws` takes as many draws at once as keep each of the transform's
#: intermediate arrays to about this many numbers (all 2 x 1000 draws at once held one of
#: 2000 x 42,178 numbers per intermediate, and bayes-dirichlet ran out of 24 GB).
TRANSFORM_BATCH_NUMBERS = 2**22


def jittered_hmc_kernel(
    potential_fn,
    *,
    trajectory_length: float = TRAJECTORY_LENGTH,
    jitter: float = LENGTH_JITTER,
    max_steps: int = MAX_STEPS,
    target_accept: float = 0.8,
):
    """Return NumPyro's HMC kernel whose trajectory length is redrawn every iteration.

    Parameters
    ----------
    potential_fn : callable
        The negative log-density of a tuple of arrays (JAX-traceable).
    trajectory_length : float, default :data:`TRAJECTORY_LENGTH`
        Mean length :math:`L` (positive).
    jitter : float, default :data:`LENGTH_JITTER`
        Relative half-width :math:`j` in [0, 1); 0 gives a fixed length.
    max_steps : int, default :data:`MAX_STEPS`
        Most leapfrog steps in one iteration.
    target_accept : float, default 0.8
        Mean acceptance probability the step size is adapted to (as NUTS's).

    Returns
    -------
    numpyro.infer.HMC
        Diagonal mass matrix and step size adapted during warm-up.
    """
    import jax
    import jax.numpy as jnp
    from numpyro.infer import HMC

    length = check_float(trajectory_length, "trajectory_length", minimum=0.0, strict_minimum=True)
    jitter = check_float(jitter, "jitter", minimum=0.0, maximum=1.0, strict_maximum=True)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    target_accept = check_probability(target_accept, "target_accept")

    class JitteredHMC(HMC):
        """HMC whose trajectory length is drawn afresh each iteration."""

        def sample(self, state, model_args, model_kwargs):
            # the length's key is split off and HMC gets the other half: a key HMC also
            # uses would tie the length to the momentum (JAX's split(key)[i] is
            # fold_in(key, i)), and a length that depends on the momentum biases the
            # chain (log a moved by 0.06, 28 standard errors, on the papers' setting)
            length_key, key = jax.random.split(state.rng_key)
            scale = jax.random.uniform(length_key, minval=1 - jitter, maxval=1 + jitter)
            cap = state.adapt_state.step_size * max_steps
            state = state._replace(rng_key=key, trajectory_length=jnp.minimum(length * scale, cap))
            return super().sample(state, model_args, model_kwargs)

    return JitteredHMC(
        potential_fn=potential_fn,
        trajectory_length=length,
        target_accept_prob=target_accept,
        adapt_step_size=True,
        adapt_mass_matrix=True,
        dense_mass=False,
    )


def initial_points(model, chains: int, rng: np.random.Generator, potential_fn) -> list:
    """Return jittered starts for each chain: one array ``(chains, ...)`` per value variable.

    Each chain starts at the model's initial point plus Uniform(-1, 1) jitter on every
    free variable (in its unconstrained coordinates), as PyMC's samplers do; a start
    whose log-density is not finite is redrawn, up to :data:`START_RETRIES` times.

    Parameters
    ----------
    model : pymc.Model
        The model.
    chains : int
        Chains to start.
    rng : numpy.random.Generator
        Seeds the jitter.
    potential_fn : callable
        The negative log-density of a list of the value variables' arrays.

    Returns
    -------
    list of numpy.ndarray
        One array ``(chains, ...)`` per value variable, in ``model.value_vars`` order.

    Raises
    ------
    ValueError
        No finite start was found for a chain.
    """
    from pymc.initial_point import make_initial_point_fn

    point_fn = make_initial_point_fn(
        model=model, jitter_rvs=set(model.free_RVs), return_transformed=True
    )
    names = [v.name for v in model.value_vars]
    starts = []
    for chain in range(chains):
        for _ in range(START_RETRIES):
            point = point_fn(int(rng.integers(2**31 - 1)))
            values = [np.asarray(point[name]) for name in names]
            if np.isfinite(float(potential_fn(values))):
                break
        else:
            raise ValueError(
                f"no start with a finite log-density for chain {chain} in {START_RETRIES} "
                "jittered tries; check the model's initial point"
            )
        starts.append(values)
    return [np.stack(column) for column in zip(*starts, strict=True)]


def sample_jittered_hmc(
    model,
    *,
    draws: int,
    tune: int,
    chains: int,
    random_seed: int,
    chain_method: str = "parallel",
    progressbar: bool = False,
    trajectory_length: float = TRAJECTORY_LENGTH,
    jitter: float = LENGTH_JITTER,
    max_steps: int = MAX_STEPS,
    target_accept: float = 0.8,
):
    """Sample a PyMC model with :func:`jittered_hmc_kernel`; return ArviZ InferenceData.

    Parameters
    ----------
    model : pymc.Model
        The model (its log-density must compile to JAX).
    draws, tune, chains : int
        Draws and warm-up iterations per chain, and chains.
    random_seed : int
        Seeds the starts and the chains' keys.
    chain_method : {"parallel", "sequential", "vectorized"}, default "parallel"
        How NumPyro runs the chains ("parallel": one JAX CPU device each).
    progressbar : bool, default False
        NumPyro's progress bar.
    trajectory_length, jitter, max_steps, target_accept
        As :func:`jittered_hmc_kernel`.

    Returns
    -------
    arviz.InferenceData
        ``posterior`` (the model's free variables in their own coordinates and its
        deterministics, with the model's dims and coords), ``sample_stats``,
        ``observed_data`` and ``constant_data``.
    """
    import arviz as az
    import jax
    from numpyro.infer import MCMC
    from pymc.backends.arviz import find_constants, find_observations
    from pymc.sampling.jax import get_jaxified_graph, get_jaxified_logp
    from pymc.util import get_default_varnames

    draws = check_int(draws, "draws", minimum=1)
    tune = check_int(tune, "tune", minimum=0)
    chains = check_int(chains, "chains", minimum=1)
    seed = check_int(random_seed, "random_seed", minimum=0)
    chain_method = check_choice(
        chain_method, ("parallel", "sequential", "vectorized"), "chain_method"
    )
    potential = get_jaxified_logp(model, negative_logp=False)  # PyMC's name: the negative
    kernel = jittered_hmc_kernel(
        potential, trajectory_length=trajectory_length, jitter=jitter, max_steps=max_steps,
        target_accept=target_accept,
    )  # fmt: skip
    rng = np.random.default_rng(seed)
    starts = initial_points(model, chains, rng, potential)
    if chains == 1:
        starts = [s[0] for s in starts]
    mcmc = MCMC(
        kernel, num_warmup=tune, num_samples=draws, num_chains=chains,
        chain_method=chain_method, progress_bar=progressbar,
    )  # fmt: skip
    key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
    mcmc.run(key, init_params=starts, extra_fields=tuple(STATS))
    raw = mcmc.get_samples(group_by_chain=True)
    stats = {
        STATS[field]: np.asarray(value)
        for field, value in mcmc.get_extra_fields(group_by_chain=True).items()
    }
    stats["lp"] = -stats["lp"]  # NumPyro's potential energy is the negative log-density
    outputs = list(get_default_varnames(model.unobserved_value_vars, include_transformed=False))
    transform = get_jaxified_graph(inputs=model.value_vars, outputs=outputs)
    values = transform_draws(transform, raw)
    del raw, mcmc
    posterior = {v.name: np.asarray(x) for v, x in zip(outputs, values, strict=True)}
    coords = {name: np.asarray(v) for name, v in model.coords.items() if v is not None}
    dims = {name: list(names) for name, names in model.named_vars_to_dims.items()}
    return az.from_dict(
        posterior=posterior,
        sample_stats=stats,
        observed_data=find_observations(model),
        constant_data=find_constants(model),
        coords=coords,
        dims=dims,
        attrs={"sampler": "numpyro-hmc", "tuning_steps": tune},
    )


def transform_draws(transform, raw: list) -> list:
    """Apply a jaxified graph to every draw, a batch of draws at a time.

    Parameters
    ----------
    transform : callable
        From ``pymc.sampling.jax.get_jaxified_graph``: the free variables of one draw to
        a list of outputs.
    raw : list of jax.Array
        Each free variable's draws, shape ``(chains, draws, ...)``.

    Returns
    -------
    list of jax.Array
        Each output's values, shape ``(chains, draws, ...)``.
    """
    import jax

    leading = raw[0].shape[:2]
    flat = [x.reshape((-1, *x.shape[2:])) for x in raw]
    width = max(max(int(np.prod(x.shape[1:])) for x in flat), 1)
    batch = int(min(flat[0].shape[0], max(1, TRANSFORM_BATCH_NUMBERS // width)))
    values = jax.jit(lambda xs: jax.lax.map(lambda x: transform(*x), xs, batch_size=batch))(flat)
    return [v.reshape((*leading, *v.shape[1:])) for v in values]
