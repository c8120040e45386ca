"""Your own prior with the oracle's likelihood: a PyMC model in a few lines.

Simulates an OUE measurement of Zipf data, puts a symmetric Dirichlet prior with an
exponential hyperprior on its concentration, adds the oracle's likelihood with
``bayesldp.models.ldp_likelihood`` and fits it with ``bayesldp.models.fit``; prints the
posterior means, a 90% interval for the top items and the predictive check.

    python experiments/custom_model.py --d 64 --n 100000
    python experiments/custom_model.py --d 4 --n 300 --draws 100 --tune 100   # seconds
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=64, help="domain size")
    parser.add_argument("--n", type=int, default=100_000, help="users")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--sampler", default="auto", help="auto, numpyro, nutpie or pymc")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None):
    """Run the example; return the Estimate."""
    args = build_parser().parse_args(argv)
    import pymc as pm

    import bayesldp
    import bayesldp.models
    from bayesldp import datasets, metrics

    rng = np.random.default_rng(args.seed)
    data = datasets.zipf(1.5, args.d, args.n, rng=rng)
    m = bayesldp.OUE(args.epsilon, args.d).simulate(data.counts, rng)

    with pm.Model(coords={"item": range(m.domain_size)}) as model:
        a = pm.Exponential("a", 1.0)
        # pm.Dirichlet's own coordinates give NUTS a hard geometry at small concentrations
        f = bayesldp.models.dirichlet_simplex("f", a, m, dims="item")
        bayesldp.models.ldp_likelihood("counts", f, m)
    with warnings.catch_warnings():
        if args.draws < 500:  # tiny runs are for smoke tests: no convergence warnings
            warnings.simplefilter("ignore", RuntimeWarning)
        est = bayesldp.models.fit(
            model, m, draws=args.draws, tune=args.tune, chains=args.chains,
            sampler=args.sampler, rng=args.seed,
        )  # fmt: skip

    top, _ = est.top_k(min(3, args.d))
    print(f"sampler {est.info['sampler']}, {est.info['divergences']} divergences")
    print("item  true      posterior mean  90% interval")
    for v in top:
        lo, hi = est.interval([v], 0.9)
        print(f"{v:4d}  {data.frequencies[v]:.5f}   {est.frequencies[v]:.5f}         "
              f"[{lo:.5f}, {hi:.5f}]")  # fmt: skip
    mse = metrics.mse(data.frequencies, est)
    base = metrics.mse(data.frequencies, bayesldp.postprocess(m, "norm-sub"))
    print(f"full-domain MSE {mse:.3g} (norm-sub {base:.3g})")
    ppc = bayesldp.models.posterior_predictive_check(est, draws=200, rng=args.seed)
    print(f"posterior predictive p-value {ppc.p_value:.2f}")
    return est


if __name__ == "__main__":
    main()
