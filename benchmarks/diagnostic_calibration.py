"""How often the models' convergence warning fires: on sound fits, and on broken ones.

A warning that fires on every fit is noise; one that never fires is useless. This script
fits, seed after seed, cases of two kinds and counts the fits that raised a
:class:`bayesldp.errors.ConvergenceWarning` (the rule of
:func:`bayesldp.models.diagnostics.convergence_info`):

well-specified (the warning should stay silent, target: under 5% of fits)
    ``dirichlet`` and ``hier``: data drawn from the model's own prior (as in
    simulation-based calibration), fitted by :func:`bayesldp.models.bayes_dirichlet` /
    :func:`~bayesldp.models.bayes_hier` at the default settings; ``power`` and
    ``consistent``: Zipf(1.5) data fitted by bayes-power and bayes-consistent.
broken (the warning should fire, target: over 90% of fits)
    ``few-draws``: bayes-dirichlet with 40 warm-up iterations and 40 draws per chain;
    ``unanchored``: a user's logistic-normal model whose softmax location is not
    identified (``theta_v ~ N(mu, 1)``, ``mu ~ N(0, 10)``, ``f = softmax(theta)``: adding
    a constant to ``mu`` and every ``theta_v`` leaves ``f`` unchanged).

``python benchmarks/diagnostic_calibration.py --fits 10`` runs 10 fits of every case
(60 in all) at d = 16 and prints the rates; ``--sampler pymc --cores 1`` runs PyMC's own
NUTS with the chains one after the other (faster for such small models when JAX has to
compile every fit). Rows go to ``benchmarks/results/diagnostic_calibration.csv``.
"""

from __future__ import annotations

import argparse
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
    return {
        "case": case,
        "broken": CASES[case],
        "seed": seed,
        "warned": bool(messages),
        "messages": " | ".join(messages),
        "r_hat_max": max(info["r_hat"].values()),
        "ess_bulk_min": min(info["ess_bulk"].values()),
        "divergences": info["divergences"],
        "sampler": info.get("sampler", args.sampler),
        "d": args.d,
        "seconds": time.perf_counter() - start,
    }


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run every case ``args.fits`` times; write the rows and return the summary."""
    from bayesldp._io import write_csv

    rows = []
    for case in args.cases:
        for seed in range(args.fits):
            rows.append(run_fit(case, seed, args))
            print(rows[-1]["case"], seed, rows[-1]["messages"] or "silent", flush=True)
            if args.out:  # after every fit: a long study keeps what it has done
                write_csv(Path(args.out), pd.DataFrame(rows))
    frame = pd.DataFrame(rows)
    summary = frame.groupby(["broken", "case"])["warned"].agg(["mean", "size"])
    summary = summary.rename(columns={"mean": "warning rate", "size": "fits"})
    return summary


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=10, help="fits per case")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--d", type=int, default=16, help="domain size")
    parser.add_argument("--n", type=int, default=20_000, help="users")
    parser.add_argument("--sampler", default="auto")
    parser.add_argument("--cores", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/diagnostic_calibration.csv")
    return parser


if __name__ == "__main__":
    with pd.option_context("display.width", 200):
        print(main(build_parser().parse_args()).to_string())
