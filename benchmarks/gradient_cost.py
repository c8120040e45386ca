"""Cost of one log-density-and-gradient evaluation of bayes-dirichlet's model.

NUTS spends nearly all its time here: a fit is (leapfrog steps) x (this cost), so
``benchmarks/bayes_layer_speed.py``'s step counts and this figure explain its seconds.
Each backend is timed at the model's initial point, best of ``--repeat`` rounds, the
backends' rounds taken in turn in one process (the machine's speed drifts):

- ``numba``: PyTensor's NUMBA backend (what nutpie runs);
- ``jax``: PyMC's JAX form of the same graph, ``jax.jit(jax.value_and_grad(...))`` (what
  NumPyro runs);
- ``jax-hand``: the same log-density written by hand in JAX (:func:`hand_written_logp`,
  the binomial likelihood of OUE): one exponential shared by the kink's softplus and
  sigmoid, no switches in the likelihood. A what-if, not the library: it shows what
  PyTensor's JAX form of the graph costs. Its value and gradient are checked against
  PyMC's at the initial point and at random points before it is timed.

    python benchmarks/gradient_cost.py                        # Zipf d = 1024 and wordfreq
    python benchmarks/gradient_cost.py --cases wordfreq --backends jax jax-hand
    python benchmarks/gradient_cost.py --cases zipf --d 4096 --repeat 3

``--nuts DRAWS`` times whole NUTS runs instead: NumPyro's NUTS, two chains on two
devices in parallel, DRAWS warm-up and DRAWS draws, on each JAX backend's log-density in
turn, from the same jittered start and key (what a fused density would buy a fit; PyMC's
own wrapping and the summaries are left out of both)::

    python benchmarks/gradient_cost.py --cases wordfreq --backends jax jax-hand --nuts 1000

``--hmc-lengths L ...`` adds, after each round's NUTS runs, NumPyro's static HMC with a
fixed trajectory length ``L`` (its step adapted, ``ceil(L / step)`` leapfrog steps per
draw) on the same densities, start and key: NUTS doubles its trees to 2^depth - 1
steps, past the U-turn, so a fixed length near the U-turn's could take fewer steps. A
what-if, not the library (``pm.sample`` runs NumPyro's NUTS only). Every run reports the
largest R-hat and the bulk ESS (smallest, 0.1% and 1% quantiles, median) of the
unconstrained coordinates, so that a kernel's steps are weighed against its mixing::

    python benchmarks/gradient_cost.py --cases wordfreq --backends jax --nuts 1000 --hmc-lengths 3

``--hmc-jitter J`` draws each HMC iteration's length uniformly from ``L * (1 -+ J)``
(:func:`bayesldp.models.jax_hmc.jittered_hmc_kernel`, without its step cap), and
``--nuts-depths`` given alone runs no NUTS.

``--nuts-depths D ...`` runs NUTS once per largest tree depth ``D`` (NumPyro's default
10): NumPyro keeps ``D`` checkpoints of the momentum for its U-turn checks. A ``D`` that
still covers the draws' trees (6 levels on wordfreq) leaves the draws' trees alone and
may save bookkeeping; it also caps the first warm-up iterations' deeper trees.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

if __package__:  # imported as benchmarks.gradient_cost
    from benchmarks import results_table
    from benchmarks.speed_cases import case_measurement, ess_quantiles
else:  # run as a script: its folder is on sys.path
    import results_table
    from speed_cases import case_measurement, ess_quantiles

BACKENDS = ("numba", "jax", "jax-hand")


def hand_written_logp(model):
    """Return bayes-dirichlet's log-density as a JAX function of ``(log_a_offset, f_t)``.

    Built from the model's own data (hints, counts, prior), so it is the same function of
    the same free variables as PyMC's, up to a constant; the binomial likelihood only.
    """
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    data = {v.name: np.asarray(v.get_value()) for v in model.data_vars}
    if "counts_log_binom" not in data:
        raise ValueError("the hand-written form covers the binomial likelihood (OUE) only")
    hint = {k: jnp.asarray(data[f"f_{k}"]) for k in
            ("reference", "centre", "width", "kink", "start", "sharpness")}  # fmt: skip
    counts = jnp.asarray(data["counts_counts"], dtype=jnp.float64)
    log_coef = jnp.asarray(data["counts_log_binom"])
    n, p, q = (float(data[f"counts_{k}"]) for k in ("n", "p", "q"))
    start = float(data["log_a_start"])
    offset_rv = model["log_a_offset"].owner.inputs
    mu, sd = (float(np.asarray(v.eval())) for v in offset_rv[-2:])
    d = counts.size
    free = 1.0 - hint["reference"]

    def logp(point):
        offset, t = point
        log_a = start + offset
        a, inv_a = jnp.exp(log_a), jnp.exp(-log_a)
        k = hint["sharpness"]
        u = t + hint["start"]
        z = k * (u - hint["kink"])
        e = jnp.exp(-jnp.abs(z))  # softplus(-z) and sigmoid(-z) from one exponential
        softplus = jnp.maximum(-z, 0.0) + jnp.log1p(e)
        sigmoid = jnp.where(z > 0, e, 1.0) / (1.0 + e)
        y = free * (hint["centre"] + hint["width"] * u - inv_a * softplus / k)
        log_jac = jnp.sum(free * jnp.log(hint["width"] + inv_a * sigmoid))
        top = jax.lax.stop_gradient(jnp.max(y))
        ey = jnp.exp(y - top)
        total = jnp.sum(ey)
        log_f = y - top - jnp.log(total)
        pi = q + (p - q) * ey / total
        likelihood = jnp.sum(log_coef + counts * jnp.log(pi) + (n - counts) * jnp.log1p(-pi))
        prior = a * jnp.sum(log_f) + gammaln(d * a) - d * gammaln(a)
        unused = -0.5 * jnp.sum(hint["reference"] * t**2)
        log_a_prior = -0.5 * ((offset - mu) / sd) ** 2
        return likelihood + prior + log_jac + unused + log_a_prior

    return logp


def _numba_call(model, point):
    fn = model.compile_fn([model.logp(), model.dlogp()], mode="NUMBA")

    def call():
        return fn(point)

    return call


def jax_density(model, backend: str):
    """Return the log-density of ``backend`` ("jax" or "jax-hand") as a JAX function.

    The function takes a tuple of the model's values. The hand-written one is returned
    only after :func:`check_hand_written` has compared it with PyMC's at the initial
    point and at random points.
    """
    import jax
    import jax.numpy as jnp
    from pymc.sampling.jax import get_jaxified_logp

    jax.config.update("jax_enable_x64", True)
    pymc_logp = get_jaxified_logp(model)

    def as_list(xs):
        return pymc_logp(list(xs))

    if backend == "jax":
        return as_list
    hand = hand_written_logp(model)
    point = model.initial_point()
    x = tuple(jnp.asarray(point[v.name]) for v in model.value_vars)
    check_hand_written(jax.jit(jax.value_and_grad(as_list)), jax.jit(jax.value_and_grad(hand)), x)
    return hand


def _jax_call(model, point, backend: str):
    import jax
    import jax.numpy as jnp

    x = tuple(jnp.asarray(point[v.name]) for v in model.value_vars)
    vg = jax.jit(jax.value_and_grad(jax_density(model, backend)))

    def call():
        return jax.block_until_ready(vg(x))

    return call


def _functions(model, backends) -> tuple[dict, dict]:
    """Compile each backend's value-and-gradient; return them and their compile seconds."""
    point = model.initial_point()
    fns, seconds = {}, {}
    for backend in backends:
        begin = time.perf_counter()
        if backend == "numba":
            call = _numba_call(model, point)
        else:
            call = _jax_call(model, point, backend)
        call()
        fns[backend], seconds[backend] = call, time.perf_counter() - begin
    return fns, seconds


def check_hand_written(reference, hand, x) -> None:
    """Raise if the hand-written gradient differs from PyMC's (values up to a constant)."""
    rng = np.random.default_rng(0)
    base = None
    for trial in range(4):
        point = x if trial == 0 else (x[0] + rng.normal(), x[1] + 2.0 * rng.normal(size=x[1].shape))
        (v_ref, g_ref), (v_hand, g_hand) = reference(point), hand(point)
        shift = float(v_ref) - float(v_hand)
        base = shift if base is None else base
        grads = [np.ravel(np.asarray(g)) for g in (*g_ref, *g_hand)]
        ref, got = np.concatenate(grads[:2]), np.concatenate(grads[2:])
        if abs(shift - base) > 1e-6 * abs(float(v_ref)) or not np.allclose(
            got, ref, rtol=1e-8, atol=1e-8
        ):
            raise RuntimeError("the hand-written log-density differs from the model's")


def measure(case: str, d: int | None, repeat: int, seconds: float, backends) -> list[dict]:
    """Time one case on every backend, rounds in turn; return one row per backend."""
    from bayesldp.models import dirichlet

    if case not in ("zipf", "wordfreq"):
        raise ValueError(f"unknown case {case!r}; choose zipf or wordfreq")
    data, m = case_measurement(case, 0, d)
    model = dirichlet.build_dirichlet_model(m)
    fns, compile_seconds = _functions(model, backends)
    calls = {}
    for backend, call in fns.items():  # calls per round: about `seconds` of work
        begin = time.perf_counter()
        call()
        calls[backend] = max(5, int(seconds / max(time.perf_counter() - begin, 1e-6)))
    rounds: dict[str, list[float]] = {b: [] for b in fns}
    load = os.getloadavg()[0]
    for _ in range(repeat):
        for backend, call in fns.items():
            begin = time.perf_counter()
            for _ in range(calls[backend]):
                call()
            rounds[backend].append((time.perf_counter() - begin) / calls[backend])
    return [
        {
            "case": case,
            "d": data.d,
            "backend": backend,
            "ms_per_evaluation": 1e3 * min(times),
            "ms_median": 1e3 * sorted(times)[len(times) // 2],
            "calls_per_round": calls[backend],
            "rounds": repeat,
            "compile_seconds": compile_seconds[backend],
            "load": load,
            "load_after": os.getloadavg()[0],
        }
        for backend, times in rounds.items()
    ]


def mixing(samples) -> dict:
    """Largest R-hat and bulk-ESS quantiles over all elements of ``(chain, draw, ...)`` arrays."""
    from bayesldp.models.sampling import rhat_ess

    r_hat, ess = zip(*(rhat_ess(np.asarray(x)) for x in samples), strict=True)
    r_hat, ess = (
        np.concatenate([np.ravel(r) for r in r_hat]),
        np.concatenate([np.ravel(e) for e in ess]),
    )
    return {
        "r_hat_max": float(np.nanmax(r_hat)),
        "ess_bulk_min": float(np.nanmin(ess)),
        **ess_quantiles(ess),
    }


def nuts_runs(
    case: str,
    d: int | None,
    draws: int,
    repeat: int,
    backends,
    hmc_lengths=(),
    nuts_depths=(10,),
    first_round: int = 0,
    hmc_jitter: float = 0.0,
) -> list[dict]:
    """Run NumPyro's NUTS (then static HMC of each length) on each JAX density; a row per run.

    ``nuts_depths``: NUTS's largest tree depth, one run per value (NumPyro's default 10).
    Round ``r`` (``first_round`` to ``first_round + repeat - 1``) runs from the key
    ``PRNGKey(r)``; every round starts at the same jittered point. ``hmc_jitter`` > 0:
    each HMC iteration's length is drawn uniformly from ``length * (1 -+ hmc_jitter)``.
    """
    import jax
    from numpyro.infer import MCMC, NUTS

    from bayesldp.models import dirichlet
    from bayesldp.models.fitting import jax_devices_for_chains
    from bayesldp.models.jax_hmc import jittered_hmc_kernel

    if "numba" in backends:
        raise ValueError("--nuts runs NumPyro: choose the backends jax and jax-hand")
    jax_devices_for_chains(2)
    jax.config.update("jax_enable_x64", True)
    data, m = case_measurement(case, 0, d)
    model = dirichlet.build_dirichlet_model(m)
    point = model.initial_point()
    jitter = np.random.default_rng(0)
    init = tuple(
        np.stack([point[v.name] + jitter.uniform(-1, 1, np.shape(point[v.name])) for _ in "ab"])
        for v in model.value_vars
    )
    densities = {backend: jax_density(model, backend) for backend in backends}
    rows = []
    for round_ in range(first_round, first_round + repeat):
        runs = [(b, None, depth) for depth in nuts_depths for b in densities]
        runs += [(b, L, None) for L in hmc_lengths for b in densities]
        for backend, length, depth in runs:
            logp = densities[backend]
            potential = lambda z, logp=logp: -logp(z)  # noqa: E731
            if length is None:
                kernel = NUTS(potential_fn=potential, max_tree_depth=depth)
            else:
                kernel = jittered_hmc_kernel(
                    potential, trajectory_length=length, jitter=hmc_jitter, max_steps=2**31 - 1
                )
            mcmc = MCMC(
                kernel, num_warmup=draws, num_samples=draws, num_chains=2,
                chain_method="parallel", progress_bar=False,
            )  # fmt: skip
            load, begin = os.getloadavg()[0], time.perf_counter()
            mcmc.warmup(jax.random.PRNGKey(round_), init_params=init,
                        extra_fields=("num_steps",), collect_warmup=True)  # fmt: skip
            warm_steps = int(np.sum(mcmc.get_extra_fields()["num_steps"]))
            warm = time.perf_counter()
            mcmc.run(mcmc.post_warmup_state.rng_key, extra_fields=("num_steps",))
            jax.block_until_ready(mcmc.get_samples())
            end = time.perf_counter()
            draw_steps = int(np.sum(mcmc.get_extra_fields()["num_steps"]))
            step = np.asarray(mcmc.last_state.adapt_state.step_size)
            rows.append({
                "case": case, "d": data.d, "backend": backend, "round": round_,
                "kernel": "NUTS" if length is None else "HMC", "trajectory_length": length,
                "max_tree_depth": depth, "hmc_jitter": None if length is None else hmc_jitter,
                "draws": draws, "seconds": end - begin, "seconds_warmup": warm - begin,
                "steps_warmup": warm_steps,
                "steps_draws": draw_steps,
                "step_size": " ".join(f"{s:.4f}" for s in np.ravel(step)),
                "ms_per_step": 1e3 * (end - warm) / draw_steps,
                "load": load, "load_after": os.getloadavg()[0],
                **mixing(jax.tree_util.tree_leaves(mcmc.get_samples(group_by_chain=True))),
            })  # fmt: skip
    return rows


def main(args: argparse.Namespace) -> list[dict]:
    """Measure every case; write ``OUT/NAME.csv``."""
    rows: list[dict] = []
    for case in args.cases:
        if args.nuts:
            found = nuts_runs(
                case, args.d, args.nuts, args.repeat, args.backends, args.hmc_lengths,
                args.nuts_depths, args.first_round, args.hmc_jitter,
            )  # fmt: skip
        else:
            found = measure(case, args.d, args.repeat, args.seconds, args.backends)
        for row in found:
            results_table.report(row, rows)
    results_table.write_rows(rows, args)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["zipf", "wordfreq"])
    parser.add_argument("--d", type=int, help="domain size (default: the case's)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["numba"])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    parser.add_argument(
        "--first-round", type=int, default=0, help="with --nuts: the first round's key"
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="length of a round")
    parser.add_argument(
        "--nuts", type=int, metavar="DRAWS", help="time NUTS runs of DRAWS + DRAWS instead"
    )
    parser.add_argument(
        "--hmc-lengths", nargs="*", type=float, default=[],
        help="with --nuts: also static HMC runs of these trajectory lengths",
    )  # fmt: skip
    parser.add_argument(
        "--nuts-depths", nargs="*", type=int, default=[10],
        help="with --nuts: NUTS's largest tree depth, one run per value (none: no NUTS)",
    )  # fmt: skip
    parser.add_argument(
        "--hmc-jitter", type=float, default=0.0,
        help="with --hmc-lengths: each iteration's length uniform in length * (1 -+ this)",
    )  # fmt: skip
    results_table.add_output_arguments(parser, "gradient_cost")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
