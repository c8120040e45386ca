r"""
Heavy hitters with error control
================================

Which items have a frequency above a threshold :math:`t`? The obvious answer, every
item whose post-processed estimate is above :math:`t`, is a list with no error
statement: at :math:`\varepsilon = 1` the noise of one estimate is comparable to the
frequencies of most items near :math:`t`, and among a thousand items some will cross
the line by chance.

:meth:`Estimate.heavy_hitters <bayesldp.estimate.Estimate.heavy_hitters>` (from
:mod:`bayesldp.selection`) tests each item's hypothesis :math:`H_v: f_v \le t` on the
raw unbiased estimate and runs Holm's step-down procedure, so the *family-wise error
rate*, the probability of declaring even one item whose frequency is at most
:math:`t`, stays below :math:`\alpha`. This example measures that promise, and what it
costs in recall, against plain thresholding of ``norm-sub`` and ``power-ns``.
"""

# %%
# The rules
# ---------
# Thresholding keeps the items estimated at or above :math:`t`
# (:func:`bayesldp.metrics.heavy_hitters` scores such a list); Holm's rule keeps the
# items whose adjusted p-value is below :math:`\alpha`.

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets

RULES = ("norm-sub >= t", "power-ns >= t", "Holm, alpha")


def declared(m, threshold, alpha):
    """Return the items each rule declares heavy in one measurement.

    Parameters
    ----------
    m : bayesldp.Measurement
        The measurement.
    threshold : float
        The frequency threshold ``t``.
    alpha : float
        The family-wise error rate of Holm's rule.

    Returns
    -------
    dict
        ``{rule: array of item indices}``.
    """
    norm_sub = bayesldp.postprocess(m, "norm-sub")
    power_ns = bayesldp.postprocess(m, "power-ns")
    return {
        RULES[0]: np.flatnonzero(norm_sub.frequencies >= threshold),
        RULES[1]: np.flatnonzero(power_ns.frequencies >= threshold),
        RULES[2]: norm_sub.heavy_hitters(threshold, alpha=alpha).indices,
    }


def repeat(data, oracle, threshold, alpha, reps, rng):
    """Count each rule's false declarations and recall over repeated collections.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts.
    oracle : bayesldp.FrequencyOracle
        The users' oracle.
    threshold, alpha : float
        As in :func:`declared`.
    reps : int
        Repetitions.
    rng : numpy.random.Generator
        Randomness.

    Returns
    -------
    dict
        ``{rule: (false declarations per repetition, recall per repetition)}``.
    """
    heavy = data.frequencies > threshold
    out = {rule: ([], []) for rule in RULES}
    for _ in range(reps):
        m = oracle.simulate(data.counts, rng)
        for rule, items in declared(m, threshold, alpha).items():
            out[rule][0].append(int(np.sum(~heavy[items])))
            out[rule][1].append(np.sum(heavy[items]) / max(heavy.sum(), 1))
    return {rule: (np.array(f), np.array(r)) for rule, (f, r) in out.items()}


# %%
# The figure
# ----------
# Left: one measurement. The items by true frequency near the threshold, their
# ``norm-sub`` estimates, and which of them Holm's rule declares. Right: over repeated
# collections, how often each rule declares at least one item that is not heavy (the
# family-wise error rate, with :math:`\alpha` dashed) and the share of the truly heavy
# items it finds (recall).


def plot(data, m, threshold, alpha, results):
    """Draw one measurement's declarations and the repeated error rates.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts.
    m : bayesldp.Measurement
        One measurement.
    threshold, alpha : float
        As in :func:`declared`.
    results : dict
        What :func:`repeat` returns.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    order = np.argsort(-data.frequencies)
    heavy_count = int(np.sum(data.frequencies > threshold))
    shown = order[: 3 * max(heavy_count, 5)]
    rank = np.arange(1, shown.size + 1)
    est = bayesldp.postprocess(m, "norm-sub")
    holm = set(est.heavy_hitters(threshold, alpha=alpha).indices.tolist())
    left.plot(rank, data.frequencies[shown], "k_", ms=9, mew=2, label="truth")
    is_holm = np.array([v in holm for v in shown])
    left.plot(rank[is_holm], est.frequencies[shown][is_holm], "o", color="tab:green",
              ms=5, label="norm-sub, declared by Holm")  # fmt: skip
    left.plot(rank[~is_holm], est.frequencies[shown][~is_holm], "o", color="0.6",
              ms=4, label="norm-sub, not declared")  # fmt: skip
    left.axhline(threshold, color="tab:red", ls="--", label=f"threshold t = {threshold:g}")
    left.set_yscale("log")
    left.set_xlabel("item, by true frequency")
    left.set_ylabel("frequency")
    left.set_title("One measurement")
    left.legend(fontsize=8)

    x = np.arange(len(RULES))
    fwer = [np.mean(results[rule][0] > 0) for rule in RULES]
    recall = [np.mean(results[rule][1]) for rule in RULES]
    right.bar(x - 0.2, fwer, 0.4, label="family-wise error rate", color="tab:red")
    right.bar(x + 0.2, recall, 0.4, label="recall", color="tab:blue")
    right.axhline(alpha, color="tab:red", ls="--", lw=1)
    right.set_xticks(x, RULES)
    right.set_ylim(0, 1.05)
    right.set_title(f"Over {len(results[RULES[0]][0])} collections")
    right.legend(loc="upper left", fontsize=8)
    return fig


def main(args):
    """Run the comparison, print the table and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    data = datasets.zipf(s=args.s, d=args.d, n=args.n, rng=rng)
    oracle = bayesldp.OUE(epsilon=args.epsilon, domain_size=data.d)
    heavy = int(np.sum(data.frequencies > args.threshold))
    print(f"{heavy} of {data.d} items have a frequency above t = {args.threshold}")
    results = repeat(data, oracle, args.threshold, args.alpha, args.reps, rng)
    print("rule            P(any false)  mean false  recall")
    for rule in RULES:
        false, recall = results[rule]
        print(f"{rule:15} {np.mean(false > 0):12.2f} {false.mean():11.2f} {recall.mean():7.2f}")
    plot(data, oracle.simulate(data.counts, rng), args.threshold, args.alpha, results)
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
    parser = argparse.ArgumentParser(description="Heavy hitters with error control.")
    parser.add_argument("--d", type=int, default=1024, help="number of items")
    parser.add_argument("--n", type=int, default=1_000_000, help="number of users")
    parser.add_argument("--s", type=float, default=1.5, help="Zipf exponent")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--threshold", type=float, default=0.005)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--reps", type=int, default=50, help="repeated collections")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# What it shows
# -------------
# Thresholding the estimates finds most heavy items, but in a large share of the
# collections it also declares items that are not heavy: the many items just below
# :math:`t` cross it by noise. Holm's rule keeps the family-wise error rate near or
# below :math:`\alpha` and pays in recall: an item is declared only when its estimate is
# clear of :math:`t` by a margin that grows with the number of items tested. Which to
# publish depends on what a false item costs; ``bayesldp experiment heavy_hitter_fwer``
# runs the study with more rules and datasets (``paper/intervals.md``).

if __name__ == "__main__":
    main(parse_args())
