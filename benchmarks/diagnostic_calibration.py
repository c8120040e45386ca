"""How often the models' convergence warning fires: on sound fits, and on broken ones.

A warning that fires on every fit is noise; one that never fires is useless. This script
fits, seed after seed, cases of two kinds and counts the fits that raised a
:class:`bayesldp.errors.ConvergenceWarning` (the rule of
:func:`bayesldp.models.diagnostics.convergence_info`):

well-specified (the warning should stay silent, target: under 5% of fits)
    ``dirichlet`` and ``hier``: data drawn from the model's own prior (as in
    simulation-based calibration; ``hier`` with two groups of d/2 items), fitted by
    :func:`bayesldp.models.bayes_dirichlet` / :func:`~bayesldp.models.bayes_hier` at the
    default settings; ``power`` and ``consistent``: Zipf(1.5) data (a power law, the
    models' own assumption) fitted by bayes-power and bayes-consistent.
broken (the warning should fire, target: over 90% of fits)
    ``few-draws``: bayes-dirichlet with 40 warm-up iterations and 40 draws per chain;
    ``unanchored``: a user's logistic-normal model whose softmax location is not
    identified (``theta_v ~ N(mu, 1)``, ``mu ~ N(0, 10)``, ``f = softmax(theta)``: adding
    a constant to ``mu`` and every ``theta_v`` leaves ``f`` unchanged).

``python benchmarks/diagnostic_calibration.py --fits 10 --d 256`` runs 10 fits of every
case (60 in all) at d = 256, n = 1e6, OUE epsilon 1; each case's rows go to
``benchmarks/results/diagnostic_calibration/<case>.csv`` (rewritten after every fit, so a
long study keeps what it has done; ``--cases`` runs some of them). ``--keep-draws DIR``
also stores each fit's draws of the diagnosed variables, and ``--rescore DIR`` applies
the library's current rule to stored draws again (to check a change of the rule on the
same fits without refitting). ``--summary`` prints the table of every case's CSV.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

#: The cases, with whether a sound rule should warn on them.
CASES = {
    "dirichlet": False,
    "hier": False,
    "power": False,
    "consistent": False,
    "few-draws": True,
    "unanchored": True,
}


def measurement_from_prior(case: str, d: int, n: int, rng: np.random.Generator):
    """Return ``(measurement, fit options)`` with frequencies drawn from the model's prior."""
    import bayesldp
    from bayesldp.models._checks import replicate_counts
    from bayesldp.models.dirichlet import prior_sampler
    from bayesldp.models.hierarchical import group_index, hier_prior_sampler

    oracle = bayesldp.OUE(1.0, d)
    options: dict = {}
    if case == "hier":
        groups = {"a": list(range(d // 2)), "b": list(range(d // 2, d))}
        _, index = group_index(groups, d)
        f = hier_prior_sampler(index, (0.0, 2.0), 1.0)(1, rng)[0]
        options["groups"] = groups
    else:
        f = prior_sampler((0.0, 2.0), d)(1, rng)[0]
    counts = replicate_counts("binomial", f, n, oracle.p, oracle.q, rng)
    m = bayesldp.Measurement.from_support_counts(counts, n, oracle.p, oracle.q, oracle="OUE")
    return m, options


def zipf_measurement(d: int, n: int, rng: np.random.Generator):
    """Return an OUE measurement of Zipf(1.5) data."""
    import bayesldp
    from bayesldp import datasets

    data = datasets.zipf(1.5, d, n, rng=rng)
    return bayesldp.OUE(1.0, d).simulate(data.counts, rng)


def unanchored_fit(m, rng: np.random.Generator, settings):
    """Fit a logistic-normal model whose softmax location is not identified."""
    import pymc as pm

    from bayesldp import models

    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        theta = pm.Normal("theta", mu, 1.0, shape=m.domain_size)
        f = pm.Deterministic("f", pm.math.softmax(theta))
        models.ldp_likelihood("counts", f, m)
    return models.fit(model, m, settings=settings, rng=rng)


def keep_draws(est, path: Path) -> None:
    """Store the diagnosed variables' draws and the divergence flags of a fit."""
    idata = est.inference_data
    names = list(est.info["r_hat"])
    model = est.info.get("model")  # fit's models: the free variables and f are judged
    if model is None:
        checked = names
    else:
        free = {rv.name for rv in model.free_RVs} | {est.info.get("var_name", "f")}
        checked = [n for n in names if n in free]
    arrays = {f"posterior/{n}": idata.posterior[n].values.astype(np.float32) for n in names}
    arrays["diverging"] = idata.sample_stats["diverging"].values
    arrays["checked"] = np.array(checked)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)


def rescore(path: Path) -> list[str]:
    """Apply the library's current rule to draws stored by :func:`keep_draws`."""
    import arviz as az

    from bayesldp.models.diagnostics import convergence_info

    stored = np.load(path)
    posterior = {k.split("/", 1)[1]: stored[k] for k in stored.files if k.startswith("posterior/")}
    idata = az.from_dict(posterior=posterior, sample_stats={"diverging": stored["diverging"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = convergence_info(idata, list(posterior), checked=list(stored["checked"]))
    return info["warnings"]


def run_fit(case: str, seed: int, args: argparse.Namespace) -> dict:
    """Fit one case with one seed; return whether it warned and its diagnostics."""
    from bayesldp import models
    from bayesldp.errors import ConvergenceWarning

    rng = np.random.default_rng(seed)
    settings = models.SamplerSettings(sampler=args.sampler, cores=args.cores)
    if case == "few-draws":
        settings = models.SamplerSettings(draws=40, tune=40, sampler=args.sampler, cores=args.cores)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case in ("dirichlet", "hier", "few-draws"):
            m, options = measurement_from_prior(case, args.d, args.n, rng)
            fitter = models.bayes_hier if case == "hier" else models.bayes_dirichlet
            est = fitter(m, settings=settings, rng=rng, **options)
        elif case == "unanchored":
            m, _ = measurement_from_prior("dirichlet", args.d, args.n, rng)
            est = unanchored_fit(m, rng, settings)
        else:
            m = zipf_measurement(args.d, args.n, rng)
            fitter = models.bayes_power if case == "power" else models.bayes_consistent
            est = fitter(m, settings=settings, rng=rng)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    info = est.info
    if args.keep_draws:
        keep_draws(est, Path(args.keep_draws) / f"{case}-{seed}.npz")
    return {
        "case": case,
        "broken": CASES[case],
        "seed": seed,
        "warned": bool(messages),
        "divergent_fit": info["divergences"] > 0,
        "messages": " | ".join(messages),
        "r_hat_max": max(info["r_hat"].values()),
        "ess_bulk_min": min(info["ess_bulk"].values()),
        "divergences": info["divergences"],
        "sampler": info.get("sampler", args.sampler),
        "d": args.d,
        "n": args.n,
        "seconds": time.perf_counter() - start,
        "load_average_1min": os.getloadavg()[0],
    }


def summary(folder: Path) -> pd.DataFrame:
    """Return the warning rate of every case whose CSV is in ``folder``."""
    frames = [pd.read_csv(p) for p in sorted(folder.glob("*.csv"))]
    if not frames:
        raise SystemExit(f"no results in {folder}")
    frame = pd.concat(frames, ignore_index=True)
    table = frame.groupby(["broken", "case"]).agg(
        fits=("warned", "size"),
        warned=("warned", "sum"),
        divergent_fits=("divergent_fit", "sum"),
        d=("d", "first"),
        median_seconds=("seconds", "median"),
        load=("load_average_1min", "median"),
    )
    table["warning rate"] = table["warned"] / table["fits"]
    for broken, rows in frame.groupby("broken"):
        table.loc[(broken, "all"), ["fits", "warned"]] = [len(rows), rows["warned"].sum()]
        table.loc[(broken, "all"), "warning rate"] = rows["warned"].mean()
    return table


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run every case ``args.fits`` times (or rescore kept draws); return the summary."""
    from bayesldp._io import write_csv

    out = Path(args.out)
    if args.rescore:
        rows = []
        for path in sorted(Path(args.rescore).glob("*.npz")):
            case, seed = path.stem.rsplit("-", 1)
            messages = rescore(path)
            rows.append({"case": case, "seed": int(seed), "warned": bool(messages),
                         "messages": " | ".join(messages)})  # fmt: skip
        frame = pd.DataFrame(rows)
        return frame.groupby("case")["warned"].agg(["mean", "size"])
    if not args.summary:
        for case in args.cases:
            rows = []
            for seed in range(args.first_seed, args.first_seed + args.fits):
                rows.append(run_fit(case, seed, args))
                print(case, seed, rows[-1]["messages"] or "silent", flush=True)
                write_csv(out / f"{case}.csv", pd.DataFrame(rows))
    return summary(out)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=10, help="fits per case")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--d", type=int, default=256, help="domain size")
    parser.add_argument("--n", type=int, default=1_000_000, help="users")
    parser.add_argument("--sampler", default="auto")
    parser.add_argument("--cores", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/diagnostic_calibration")
    parser.add_argument("--keep-draws", help="folder for each fit's draws (for --rescore)")
    parser.add_argument("--rescore", help="apply the current rule to the draws in this folder")
    parser.add_argument("--summary", action="store_true", help="only print the table")
    return parser


if __name__ == "__main__":
    with pd.option_context("display.width", 200):
        print(main(build_parser().parse_args()).to_string())
