"""Where the jittered HMC's time goes on a ready-made Dirichlet model.

Cost of a fit = iterations x leapfrog steps per iteration x one log-density gradient.
This script measures each factor on the data of ``benchmarks/bayes_speed.py`` (Zipf,
OUE epsilon = 1, seed 0), in one process:

- ``grad_ms``: one jit-compiled value-and-gradient of the log-density, one chain, and
  ``grad_ms_2chains`` for both chains vectorised (median of ``--repeats`` calls);
- a run of the sampler (``--tune`` warm-up, ``--draws`` draws, both chains, the models'
  own kernel and start) recording every iteration's ``num_steps`` and step size, warm-up
  included: steps per iteration in each warm-up phase and after it, the adapted step
  size, and the seconds of warm-up and of the draws;
- the worst bulk ESS and R-hat of ``f`` over the draws.

``python benchmarks/bayes_hmc_profile.py --d 42178 --method bayes-dirichlet`` prints one
JSON row; ``--no-run`` times the gradient only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import time


def build(method: str, d: int, seed: int):
    """Return the model ``bayes_speed.run_case`` fits for ``method`` on its case's data."""
    from bayesldp.models import _jax
    from bayesldp.models.dirichlet import build_dirichlet_model
    from bayesldp.models.hierarchical import build_hier_model

    if __package__:  # imported as benchmarks.bayes_hmc_profile
        from benchmarks.bayes_speed import measurement
    else:  # run as a script: its folder is on sys.path
        from bayes_speed import measurement

    _jax.devices_for_chains(2)
    _, m = measurement(d, seed)
    return build_dirichlet_model(m) if method == "bayes-dirichlet" else build_hier_model(m)


def time_gradient(model, repeats: int) -> dict:
    """Milliseconds of one value-and-gradient (one chain; two chains vectorised)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from pymc.sampling.jax import get_jaxified_logp

    logp = get_jaxified_logp(model, negative_logp=False)
    point = model.initial_point()
    values = [jnp.asarray(point[v.name]) for v in model.value_vars]
    one = jax.jit(jax.value_and_grad(lambda xs: logp(xs)))
    two = jax.jit(jax.vmap(jax.value_and_grad(lambda xs: logp(xs))))
    pair = [jnp.stack([x, x]) for x in values]
    out = {}
    for name, fn, arg in (("grad_ms", one, values), ("grad_ms_2chains", two, pair)):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(arg))
        out[f"{name}_compile_s"] = time.perf_counter() - t0
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(fn(arg))
            times.append(time.perf_counter() - t0)
        out[name] = 1e3 * float(np.median(times))
    return out


def run_sampler(model, tune: int, draws: int, seed: int, options: dict) -> dict:
    """Run the models' jittered HMC with the warm-up recorded; return per-phase figures."""
    import jax
    import numpy as np
    from numpyro.infer import MCMC
    from pymc.sampling.jax import get_jaxified_logp

    from bayesldp.models._jax_hmc import initial_points, jittered_hmc_kernel
    from bayesldp.models.diagnostics import rhat_ess

    potential = get_jaxified_logp(model, negative_logp=False)
    kernel = jittered_hmc_kernel(potential, **options)
    rng = np.random.default_rng(seed)
    starts = initial_points(model, 2, rng, potential)
    fields = ("num_steps", "adapt_state.step_size", "diverging")
    key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
    mcmc = MCMC(kernel, num_warmup=tune, num_samples=draws, num_chains=2,
                chain_method="parallel", progress_bar=False)  # fmt: skip
    t0 = time.perf_counter()
    mcmc.warmup(key, init_params=starts, extra_fields=fields, collect_warmup=True)
    warm = jax.block_until_ready(mcmc.get_extra_fields(group_by_chain=True))
    t1 = time.perf_counter()
    mcmc.run(mcmc.post_warmup_state.rng_key, extra_fields=fields)
    stats = jax.block_until_ready(mcmc.get_extra_fields(group_by_chain=True))
    t2 = time.perf_counter()
    steps_w = np.asarray(warm["num_steps"])
    steps_d = np.asarray(stats["num_steps"])
    row = {
        "tune": tune,
        "draws": draws,
        "seconds_warmup": t1 - t0,
        "seconds_draws": t2 - t1,
        "steps_warmup_total": int(steps_w.sum(axis=1).max()),
        "steps_draws_total": int(steps_d.sum(axis=1).max()),
        "steps_per_draw_mean": float(steps_d.mean()),
        "step_size_adapted": [float(x) for x in np.asarray(stats["adapt_state.step_size"])[:, 0]],
        "divergences": int(np.asarray(stats["diverging"]).sum()),
    }
    # warm-up steps in blocks of 50 iterations (the chain with the most, per block)
    edges = [*range(0, tune, 50), tune]
    row["steps_warmup_per_50"] = [
        int(steps_w[:, a:b].sum(axis=1).max()) for a, b in itertools.pairwise(edges)
    ]
    print(json.dumps(row), flush=True)  # the figures so far, should the summaries fail
    if draws > 1:
        raw = mcmc.get_samples(group_by_chain=True)
        values = raw.values() if isinstance(raw, dict) else raw
        free = [np.asarray(x) for x in values if np.asarray(x).ndim == 3]
        diagnosed = [rhat_ess(x) for x in free]
        row["ess_bulk_worst_free"] = min(float(np.nanmin(e)) for _, e in diagnosed)
        row["ess_bulk_median_free"] = [float(np.nanmedian(e)) for _, e in diagnosed]
        row["r_hat_worst_free"] = max(float(np.nanmax(r)) for r, _ in diagnosed)
        row["seconds_per_draw_step"] = (t2 - t1) / max(row["steps_draws_total"], 1)
    return row


def main() -> None:
    """Parse arguments, profile one case, print a JSON row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=42178)
    parser.add_argument("--method", choices=["bayes-dirichlet", "bayes-hier"],
                        default="bayes-dirichlet")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--no-run", action="store_true", help="time the gradient only")
    parser.add_argument("--trajectory-length", type=float, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    cpu0 = time.process_time()
    model = build(args.method, args.d, args.seed)
    row = {"method": args.method, "d": args.d, "load_before": os.getloadavg()[0]}
    row["seconds_build"] = time.perf_counter() - start
    row.update(time_gradient(model, args.repeats))
    if not args.no_run:
        options = {}
        if args.trajectory_length is not None:
            options["trajectory_length"] = args.trajectory_length
        row.update(run_sampler(model, args.tune, args.draws, args.seed, options))
    row["seconds_wall"] = time.perf_counter() - start
    row["seconds_cpu"] = time.process_time() - cpu0
    row["load_after"] = os.getloadavg()[0]
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(row))


if __name__ == "__main__":
    main()
