r"""
Norm-Sub, MLE-Apx and the exact MLE: one estimator for OUE, three for GRR
=========================================================================

The long consistency paper derives MLE-Apx, a closed-form approximation of the maximum
likelihood estimate, and finds it behaving like ``norm-sub``, the Euclidean projection
of the raw estimates onto the simplex. The exact MLE (``mle``) maximises the oracle's
actual support-count likelihood on the simplex (``ibu``, the iterative Bayesian
update, is EM for the same likelihood and converges to it, slowly).

Whether the three differ depends on the oracle. For OUE the variance of an estimate
barely depends on the item's frequency, so the likelihood is close to the Gaussian one
that ``norm-sub`` and MLE-Apx solve exactly. For GRR the variance grows with the
frequency (the term :math:`f_v (p - q)(1 - p - q)` is large when :math:`d` is small
against :math:`e^\varepsilon`), and the exact MLE weighs the items differently. This
example measures the distance between the estimators and their errors for both
oracles, on a Zipf and a flat dataset.
"""

# %%
# The measurements
# ----------------

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.plotting import method_style

METHODS = ("norm-sub", "mle-apx", "mle")
ORACLES = ("OUE", "GRR")


def run(data, epsilon, reps, rng):
    """Return each method's MSE and its largest distance from ``norm-sub``.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts.
    epsilon : float
        Privacy budget.
    reps : int
        Repetitions.
    rng : numpy.random.Generator
        Randomness.

    Returns
    -------
    dict
        ``{oracle: {method: (mean MSE, mean of max |f - f_norm-sub|)}}``.
    """
    out = {}
    for oracle_name in ORACLES:
        oracle = bayesldp.make_oracle(oracle_name, epsilon, data.d)
        mse = {name: [] for name in METHODS}
        gap = {name: [] for name in METHODS}
        for _ in range(reps):
            m = oracle.simulate(data.counts, rng)
            reference = bayesldp.postprocess(m, "norm-sub")
            for name in METHODS:
                est = bayesldp.postprocess(m, name)
                mse[name].append(metrics.mse(data.frequencies, est))
                gap[name].append(np.max(np.abs(est.frequencies - reference.frequencies)))
        out[oracle_name] = {name: (np.mean(mse[name]), np.mean(gap[name])) for name in METHODS}
    return out


# %%
# The figure
# ----------
# Left: each method's largest distance from ``norm-sub``'s estimate, per oracle and
# dataset (log scale; ``norm-sub`` itself is at zero and not drawn). Right: its mean
# full-domain MSE relative to ``norm-sub``'s (1: the same error).


def plot(results):
    """Draw the distances from norm-sub and the MSE ratios.

    Parameters
    ----------
    results : dict
        ``{dataset: what run returns}``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    groups = [(data, oracle) for data in results for oracle in ORACLES]
    x = np.arange(len(groups))
    others = METHODS[1:]
    width = 0.8 / len(others)
    for k, method in enumerate(others):
        gaps = [results[data][oracle][method][1] for data, oracle in groups]
        ratios = [
            results[data][oracle][method][0] / results[data][oracle]["norm-sub"][0]
            for data, oracle in groups
        ]
        offset = (k - (len(others) - 1) / 2) * width
        color = method_style(method)["color"]
        left.bar(x + offset, np.maximum(gaps, 1e-18), width, label=method, color=color)
        right.plot(x + offset, ratios, "o", ms=7, label=method, color=color)
    labels = [f"{oracle}\n{data}" for data, oracle in groups]
    left.set_yscale("log")
    left.set_ylabel("max |f - f(norm-sub)|")
    left.set_title("How far from norm-sub")
    right.axhline(1, color="black", lw=0.8)
    right.set_ylabel("full-domain MSE / norm-sub's")
    right.set_title("Error relative to norm-sub")
    for ax in (left, right):
        ax.set_xticks(x, labels)
        ax.legend(fontsize=8)
    return fig


def main(args):
    """Run both datasets, print the tables and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    cases = {
        f"Zipf {args.s}": datasets.zipf(s=args.s, d=args.d, n=args.n, rng=rng),
        "flat": datasets.uniform(d=args.d, n=args.n, rng=rng),
    }
    results = {}
    for name, data in cases.items():
        results[name] = run(data, args.epsilon, args.reps, rng)
        print(f"{name}, d = {data.d}, n = {data.n}, eps = {args.epsilon}")
        for oracle in ORACLES:
            for method in METHODS:
                mse, gap = results[name][oracle][method]
                print(f"  {oracle:4} {method:9} MSE {mse:.3e}  max |f - norm-sub| {gap:.1e}")
    plot(results)
    plt.show()


def parse_args(argv=None):
    """Parse the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; default ``sys.argv[1:]``.

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description="Norm-Sub, MLE-Apx and the exact MLE.")
    parser.add_argument("--d", type=int, default=64, help="number of items")
    parser.add_argument("--n", type=int, default=100_000, help="number of users")
    parser.add_argument("--s", type=float, default=1.5, help="Zipf exponent")
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# What it shows
# -------------
# For OUE the three estimates are nearly the same vector and their errors match: the
# paper's observation that Norm-Sub behaves as the MLE holds. For GRR on the Zipf data
# the likelihood methods move further from ``norm-sub`` (the printed distances), while
# on flat data all three coincide; which is more accurate depends on the data and on
# :math:`\varepsilon`: the full study (``bayesldp experiment mle_gap``, 30 repetitions at the
# papers' setting) and its KKT checks are in ``paper/convex.md``, and
# :doc:`/user_guide/convex` validates each closed form against cvxpy.

if __name__ == "__main__":
    main(parse_args())
