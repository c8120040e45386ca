r"""
Empirical Bayes against power-ns on a Zipf dataset
==================================================

Calibrate's ``power`` and ``power-ns`` post-process with a prior: they assume the item
frequencies follow a power law, fit it, and shrink each raw estimate toward it. The
empirical-Bayes method ``eb-npmle`` assumes no family. It estimates the distribution
:math:`G` of the items' true counts from the data themselves, as the nonparametric
maximum likelihood estimate (Kiefer and Wolfowitz): the discrete distribution on a
grid of counts that maximises

.. math::

    \ell(w) = \sum_v \log \sum_k P(c_v \mid x_v = u_k)\, w_k ,

the marginal likelihood of the support counts :math:`c_v`. Each item's estimate is then
its posterior mean under :math:`\hat G`, conditioned on the known total :math:`n`.

``oracle-bayes`` is the same posterior with the *true* count histogram as the prior:
a bound that no method can reach in practice (it needs the truth), shown for
reference. On a Zipf dataset the power law is exactly right, which is the best case
for ``power-ns``; the question is how much ``eb-npmle`` loses by not knowing that.
"""

# %%
# The data and the methods
# ------------------------
# The papers' synthetic dataset: :math:`10^6` users drawn from a Zipf law with exponent
# 1.5 over 1,024 items, privatized with OUE. Every method is called by its registered
# name through :func:`bayesldp.postprocess`.

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets, metrics

METHODS = ("norm-sub", "power-ns", "eb-npmle", "oracle-bayes")


def run(counts, oracle, reps, rng):
    """Simulate ``reps`` measurements and post-process each with every method.

    Parameters
    ----------
    counts : numpy.ndarray
        The true counts.
    oracle : bayesldp.FrequencyOracle
        The oracle the users run.
    reps : int
        Repetitions (independent privatizations of the same users).
    rng : numpy.random.Generator
        Randomness.

    Returns
    -------
    tuple of (dict, bayesldp.Estimate)
        ``{method: list of full-domain MSE}`` and the ``eb-npmle`` estimate of the
        first repetition.
    """
    truth = counts / counts.sum()
    mse = {name: [] for name in METHODS}
    first = None
    for _ in range(reps):
        m = oracle.simulate(counts, rng)
        for name in METHODS:
            options = {"true_counts": counts} if name == "oracle-bayes" else {}
            est = bayesldp.postprocess(m, name, **options)
            mse[name].append(metrics.mse(truth, est))
            if name == "eb-npmle" and first is None:
                first = est
    return mse, first


# %%
# The figure
# ----------
# Left: the fitted prior :math:`\hat G` (``info["prior_atoms"]`` and
# ``info["prior_weights"]`` of the estimate) beside the histogram of the true counts,
# as distribution functions over the count. The NPMLE is discrete, with a few atoms:
# most items' counts are far below the noise of a support count (its standard
# deviation is printed below), so it lumps them into an atom near zero and resolves
# only the larger counts. Right: each method's full-domain MSE in every repetition.


def plot(counts, eb, mse):
    """Draw the fitted prior against the true count distribution, and the errors.

    Parameters
    ----------
    counts : numpy.ndarray
        The true counts.
    eb : bayesldp.Estimate
        An ``eb-npmle`` estimate.
    mse : dict
        ``{method: list of full-domain MSE}``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    atoms = np.asarray(eb.info["prior_atoms"], dtype=float)
    weights = np.asarray(eb.info["prior_weights"], dtype=float)
    order = np.argsort(atoms)
    left.step(atoms[order], np.cumsum(weights[order]), where="post", label="fitted prior G")
    true_sorted = np.sort(counts)
    share = np.arange(1, counts.size + 1) / counts.size
    left.step(true_sorted, share, where="post", color="black", ls="--", label="true counts")
    left.set_xscale("symlog", linthresh=10)
    left.set_xlabel("count of an item")
    left.set_ylabel("share of the items with at most this count")
    left.set_title("The prior eb-npmle estimates")
    left.legend(loc="lower right")

    for i, name in enumerate(METHODS):
        values = np.asarray(mse[name]) * 1e6
        right.plot(np.full(values.size, i), values, "o", alpha=0.6)
        right.plot([i - 0.25, i + 0.25], [values.mean()] * 2, "k-")
    right.set_xticks(range(len(METHODS)), METHODS)
    right.set_ylabel("full-domain MSE x 1e6")
    right.set_title("Each repetition (dot) and the mean (bar)")
    right.set_ylim(bottom=0)
    return fig


def main(args):
    """Run the comparison, print the mean errors and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    counts = datasets.zipf(s=args.s, d=args.d, n=args.n, rng=rng).counts
    oracle = bayesldp.make_oracle(args.oracle, args.epsilon, args.d)
    mse, eb = run(counts, oracle, args.reps, rng)
    base = np.mean(mse["eb-npmle"])
    for name in METHODS:
        mean = np.mean(mse[name])
        print(f"{name:>12}: MSE x 1e6 = {mean * 1e6:.4f}  (eb-npmle / this: {base / mean:.3f})")
    noise_sd = np.sqrt(args.n * oracle.q * (1 - oracle.q))
    print(f"the fitted prior has {len(eb.info['prior_atoms'])} atoms")
    print(f"noise sd of a support count: {noise_sd:.0f} users; median count {np.median(counts):g}")
    plot(counts, eb, mse)
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
    parser = argparse.ArgumentParser(description="eb-npmle against power-ns on Zipf data.")
    parser.add_argument("--oracle", default="OUE", choices=list(bayesldp.ORACLES))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--d", type=int, default=1024, help="number of items")
    parser.add_argument("--n", type=int, default=1_000_000, help="number of users")
    parser.add_argument("--s", type=float, default=1.5, help="Zipf exponent")
    parser.add_argument("--reps", type=int, default=5, help="repetitions")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# Results
# -------
# ``eb-npmle`` is far below ``norm-sub``, which uses no prior at all, and a little above
# ``power-ns``, whose power law is exactly right for Zipf data; ``oracle-bayes`` is
# lower still, mostly on the largest items, each of which the true histogram knows
# exactly. On real data, where no power law holds exactly, the ranking of
# ``eb-npmle`` and ``power-ns`` can turn: ``paper/empirical_bayes.md`` measures both
# on Zipf, wordfreq and US-cities data over 30 repetitions.

if __name__ == "__main__":
    main(parse_args())
