"""Wall time and accuracy of the composable Bayesian layer's ready-made models.

Each case runs in a fresh Python process and is timed from the process's start, so
imports, model building, compilation, NUTS (2 chains x (1000 tune + 1000 draws) by
default) and the posterior means are all included. Cases (eps = 1, OUE):

``zipf``      bayes-dirichlet, Zipf(1.5), d = 1024, n = 1e6 (the papers' setting)
``wordfreq``  bayes-dirichlet, wordfreq words, d = 42178, n = 1e6
``hier``      bayes-hier with a single group, the Zipf setting
``uscities``  bayes-hier grouped by state, US cities (d = 976, n = 1.5e6)
``hier-wordfreq``  bayes-hier with a single group on the wordfreq words

Full-domain MSE is reported beside norm-sub and power-ns on the same measurement.

    python benchmarks/bayes_layer_speed.py                          # every case, seed 0
    python benchmarks/bayes_layer_speed.py --cases zipf --seeds 0 1 2 --samplers nutpie pymc
    python benchmarks/bayes_layer_speed.py --cases zipf --samplers pymc --threads 1 0
    python benchmarks/bayes_layer_speed.py --run zipf --sampler nutpie   # one case, JSON
    python benchmarks/bayes_layer_speed.py --cases wordfreq --sampler-kwargs '{"maxdepth": 5}'
    python benchmarks/bayes_layer_speed.py --cases zipf --d 16384 --concentration 0.00111
    python benchmarks/bayes_layer_speed.py --cases wordfreq --kink normal
    python benchmarks/bayes_layer_speed.py --cases zipf --samplers numpyro --tabulated-mass
    python benchmarks/bayes_layer_speed.py --cases wordfreq --samplers numpyro nutpie --cold
    python benchmarks/bayes_layer_speed.py --cases zipf --samplers numpyro --warmup-depths 0 5

``--cold`` gives each case an empty PyTensor compile directory (``base_compiledir``), as
on a new machine, so nutpie compiles from scratch (JAX keeps no cache across processes).
``--threads 0`` leaves the BLAS/OpenMP libraries' default thread counts (no limit).
``--sampler-kwargs`` passes a JSON dict to :func:`bayesldp.models.fit`'s
``sampler_kwargs`` (e.g. nutpie's tree-depth cap); ``--concentration`` fixes the
Dirichlet's concentration ``a`` at a value (zipf and wordfreq only), to see how much
of the sampler's work the hyperparameter causes; ``--kink normal`` and ``--kink square``
fit the what-if coordinates of ``benchmarks/kink_normal.py`` and ``kink_square.py``
instead of the library's (zipf, wordfreq); ``--tabulated-mass`` (NumPyro) fixes the mass
matrix from the items' tabulated posteriors instead of adapting it (bayes-dirichlet on
zipf and wordfreq); ``--warmup-depths 0 5`` runs each seed with no cap on NumPyro's
warm-up trees and with a cap of 5 (``fit``'s ``warmup_tree_depth``), in turn (default:
no cap, as the ready-made models).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

if __package__:  # imported as benchmarks.bayes_layer_speed
    from benchmarks import results_table
    from benchmarks.speed_cases import CASES, case_measurement, ess_quantiles
else:  # run as a script: its folder is on sys.path
    import results_table
    from speed_cases import CASES, case_measurement, ess_quantiles

START = time.perf_counter()


def leapfrog_steps(idata, group: str) -> int | None:
    """Total leapfrog steps recorded in ``idata``'s ``group`` (None if not recorded)."""
    if group not in idata.groups() or "n_steps" not in idata[group]:
        return None
    return int(idata[group]["n_steps"].values.sum())


def mean_stat(idata, name: str) -> float | None:
    """Mean of a sampler statistic over the draws of every chain (None if not recorded)."""
    if "sample_stats" not in idata.groups() or name not in idata["sample_stats"]:
        return None
    return float(idata["sample_stats"][name].values.mean())


def run_case(
    case: str,
    sampler: str = "auto",
    seed: int = 0,
    threads: int = 1,
    draws: int = 1000,
    tune: int = 1000,
    d: int | None = None,
    sampler_kwargs: dict | None = None,
    concentration: float | None = None,
    kink: str = "logistic",
    tabulated_mass: bool = False,
    warmup_depth: int | None = None,
) -> dict:
    """Run one case in this process; return its timings and accuracy.

    ``warmup_depth`` is ``fit``'s ``warmup_tree_depth`` (NumPyro's warm-up tree-depth
    cap); 0 or None: no cap.
    """
    import warnings

    import numpy as np

    import bayesldp
    import bayesldp.models
    from bayesldp import metrics
    from bayesldp.models import dirichlet, fit, hierarchical, ldp_likelihood

    imported = time.perf_counter()
    data, m = case_measurement(case, seed, d)
    groups = data.groups["state"] if case == "uscities" else None
    if (concentration is not None or kink != "logistic") and case not in ("zipf", "wordfreq"):
        raise ValueError("--concentration and --kink apply to the zipf and wordfreq cases only")
    if kink != "logistic":  # a what-if map: benchmarks/kink_normal.py or transport_map.py
        if __package__:
            from benchmarks import kink_normal, kink_square, transport_map
        else:  # run as a script: its folder is on sys.path
            import kink_normal
            import kink_square
            import transport_map

        module, label = {
            "normal": (kink_normal, "normal kink"),
            "square": (kink_square, "square kink"),
            "transport": (transport_map, "transport map"),
        }[kink]
        model = module.build_model(m)
        method = f"bayes-dirichlet, {label}"
    elif concentration is not None:
        import pymc as pm

        with pm.Model(coords={"item": np.arange(m.domain_size)}) as model:
            f = dirichlet.dirichlet_simplex("f", float(concentration), m, dims="item")
            ldp_likelihood("counts", f, m)
        method = "bayes-dirichlet, a fixed"
    elif case in ("zipf", "wordfreq"):
        model = dirichlet.build_dirichlet_model(m)
        method = "bayes-dirichlet"
    else:
        model = hierarchical.build_hier_model(m, groups)
        method = "bayes-hier"
    if tabulated_mass:  # NumPyro only: a fixed mass matrix instead of its adaptation
        if case not in ("zipf", "wordfreq") or concentration is not None or kink == "transport":
            raise ValueError(
                "--tabulated-mass applies to bayes-dirichlet on zipf and wordfreq, with a kink"
            )
        if sampler != "numpyro":
            raise ValueError("--tabulated-mass needs --sampler numpyro (a NumPyro setting)")
        nuts = {"inverse_mass_matrix": tabulated_inverse_mass(model, m, kink)}
        nuts["adapt_mass_matrix"] = False
        sampler_kwargs = {**(sampler_kwargs or {}), "nuts_sampler_kwargs": {"nuts_kwargs": nuts}}
    ready = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        est = fit(
            model, m, draws=draws, tune=tune, chains=2, sampler=sampler,
            random_seed=seed, method=method, threads=threads or None,
            sampler_kwargs=sampler_kwargs, warmup_tree_depth=warmup_depth or None,
        )  # fmt: skip
    done = time.perf_counter()
    row = {
        "case": case,
        "method": method,
        "sampler": est.info["sampler"],
        "threads": threads or "default",
        "seed": seed,
        "d": data.d,
        "n": data.n,
        "draws": draws,
        "tune": tune,
        "sampler_kwargs": json.dumps(sampler_kwargs or {}, default=lambda _: "array"),
        "tabulated_mass": tabulated_mass,
        # NumPyro's warm-up tree-depth cap as applied (None: none, or another sampler)
        "warmup_tree_depth": est.info["warmup_tree_depth"],
        "fixed_concentration": concentration,
        "kink": kink,
        "seconds_total": done - START,
        "seconds_import": imported - START,
        "seconds_fit": done - ready,
        "seconds_sampling": est.info["seconds_sampling"],
        # the sampler's own run inside pm.sample (PyMC's timer; None for nutpie)
        "seconds_sampler_run": est.inference_data.attrs.get("sampling_time"),
        "seconds_compile": est.info["seconds_compile"],
        # the process's peak resident memory (Linux reports KiB)
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "divergences": est.info["divergences"],
        # leapfrog steps (gradient evaluations) of both chains: the sampler's work,
        # independent of the machine's load
        "leapfrog_warmup": leapfrog_steps(est.inference_data, "warmup_sample_stats"),
        "leapfrog_draws": leapfrog_steps(est.inference_data, "sample_stats"),
        # the tuned step size and tree depth: at fixed acceptance, leapfrog's step
        # shrinks roughly as d^(-1/4), so the steps per draw grow with the domain
        "step_size": mean_stat(est.inference_data, "step_size"),
        "tree_depth": next(  # nutpie's name, then PyMC's for NumPyro
            (v for v in (mean_stat(est.inference_data, k) for k in ("depth", "tree_depth")) if v),
            None,
        ),
        "r_hat_max": max(est.info["r_hat"].values()),
        "ess_bulk_min": min(est.info["ess_bulk"].values()),
        "warnings": " | ".join(str(w.message) for w in caught),
        "mse": metrics.mse(data.frequencies, est),
        "mse_norm_sub": metrics.mse(data.frequencies, bayesldp.postprocess(m, "norm-sub")),
        "mse_power_ns": metrics.mse(data.frequencies, bayesldp.postprocess(m, "power-ns")),
        "sum": est.total,
    }
    posterior = est.inference_data.posterior
    row["concentration"] = float(posterior["a"].mean()) if "a" in posterior else concentration
    row.update(worst_items(est, m, data.frequencies))
    return row


def worst_items(est, m, truth, count: int = 5) -> dict:
    """Which items mix worst: their R-hat and where their estimate and truth lie.

    The items with the largest rank R-hat, each with its raw estimate and its true
    frequency in units of its noise standard deviation, and the number of items whose
    R-hat exceeds 1.05 (the prototype runs found them all estimated at 3-4.5 sds, most
    with a true count near 0: a posterior split between the estimate and the prior's
    spike at 0). Also the number above 1.01, and the 0.1% and 1% quantiles and the
    median of the items' bulk ESS: the tail of the items' mixing, which the single worst
    item measures noisily.
    """
    import numpy as np

    from bayesldp.models.sampling import rhat_ess

    r_hat, ess = rhat_ess(est.inference_data.posterior["f"].values)
    worst = np.argsort(-r_hat)[:count]
    sd = np.sqrt(m.variance())
    return {
        "items_r_hat_over_1_05": int((r_hat > 1.05).sum()),
        "items_r_hat_over_1_01": int((r_hat > 1.01).sum()),
        **ess_quantiles(ess),  # beyond the single worst item (``ess_bulk_min``)
        "worst_items": " ".join(str(int(v)) for v in worst),
        "worst_r_hat": " ".join(f"{r_hat[v]:.3f}" for v in worst),
        "worst_z_estimate": " ".join(f"{m.estimates[v] / sd[v]:.2f}" for v in worst),
        "worst_z_true": " ".join(f"{truth[v] / sd[v]:.2f}" for v in worst),
    }


def tabulated_inverse_mass(model, m, kink: str):
    """NumPyro's diagonal inverse mass for bayes-dirichlet, without adaptation.

    Each item's from its tabulated one-dimensional posterior at the start of the
    concentration (``step_limit.item_inverse_mass``: ``sqrt(var / var(grad))``, what
    nutpie's adaptation aims at); ``log_a_offset``'s is its conditional variance at the
    initial point (a finite-difference second derivative). In ``model.value_vars`` order.
    """
    import math

    import numpy as np

    from bayesldp.models import dirichlet

    if __package__:
        from benchmarks import step_limit
    else:  # run as a script: its folder is on sys.path
        import step_limit

    hints = step_limit.kink_hints(m, kink)
    a = math.exp(dirichlet.concentration_start(m))
    items = step_limit.item_inverse_mass(m, hints, a, kink)
    logp = model.compile_logp()
    point = model.initial_point()
    h = 1e-3
    values = []
    for shift in (-h, 0.0, h):
        moved = dict(point, log_a_offset=point["log_a_offset"] + shift)
        values.append(float(logp(moved)))
    curvature = (values[0] - 2 * values[1] + values[2]) / h**2
    offset = 1.0 / max(-curvature, 1e-12)
    parts = {"log_a_offset": np.array([offset]), "f_t": items}
    return np.concatenate([parts[v.name] for v in model.value_vars])


def main(args: argparse.Namespace):
    """Run every requested case in a fresh process and write the table."""
    rows: list[dict] = []
    for case in args.cases:
        for sampler in args.samplers:
            for threads in args.threads:
                for seed, depth in [(s, w) for s in args.seeds for w in args.warmup_depths]:
                    cmd = [
                        sys.executable, __file__, "--run", case, "--sampler", sampler,
                        "--seed", str(seed), "--threads", str(threads),
                        "--draws", str(args.draws), "--tune", str(args.tune),
                    ]  # fmt: skip
                    if args.d is not None:
                        cmd += ["--d", str(args.d)]
                    if args.sampler_kwargs is not None:
                        cmd += ["--sampler-kwargs", json.dumps(args.sampler_kwargs)]
                    if args.concentration is not None:
                        cmd += ["--concentration", str(args.concentration)]
                    cmd += ["--kink", args.kink]
                    if args.tabulated_mass:
                        cmd += ["--tabulated-mass"]
                    cmd += ["--warmup-depths", str(depth)]
                    load = os.getloadavg()[0]
                    with results_table.child_environment(args.cold) as env:
                        result = subprocess.run(cmd, capture_output=True, text=True, env=env)
                    if result.returncode != 0:
                        print(result.stderr[-2000:], file=sys.stderr)
                        continue
                    row = json.loads(result.stdout.strip().splitlines()[-1])
                    row["load_before"], row["load_after"] = load, os.getloadavg()[0]
                    row["cpu_count"] = os.cpu_count()
                    row["cold_cache"] = bool(args.cold)
                    row["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
                    results_table.report(row, rows)
    results_table.write_rows(rows, args)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--samplers", nargs="+", default=["auto"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--run", choices=CASES, help="run one case here and print JSON")
    parser.add_argument("--sampler", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--d", type=int, help="domain size (zipf, hier, wordfreq)")
    parser.add_argument(
        "--sampler-kwargs", type=json.loads, help="JSON dict for fit's sampler_kwargs"
    )
    parser.add_argument(
        "--concentration", type=float, help="fix the Dirichlet's a (zipf, wordfreq)"
    )
    parser.add_argument(
        "--kink", choices=["logistic", "normal", "square", "transport"], default="logistic"
    )
    parser.add_argument(
        "--tabulated-mass", action="store_true",
        help="NumPyro: fix the mass matrix from the items' tabulated posteriors",
    )  # fmt: skip
    parser.add_argument(
        "--warmup-depths", nargs="+", type=int, default=[0],
        help="NumPyro's warm-up tree-depth caps to run in turn per seed (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--cold", action="store_true", help="an empty PyTensor cache per case (a new machine)"
    )
    results_table.add_output_arguments(parser, "bayes_layer_speed")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.run is not None:
        threads = parsed.threads[0]
        row = run_case(
            parsed.run, parsed.sampler, parsed.seed, threads, parsed.draws, parsed.tune,
            parsed.d, parsed.sampler_kwargs, parsed.concentration, parsed.kink,
            parsed.tabulated_mass, parsed.warmup_depths[0],
        )  # fmt: skip
        print(json.dumps(row, default=float))
    else:
        main(parsed)
