r"""
Choosing a method for the query you will publish
================================================

You hold the support counts of a collection and you will publish something from them:
every frequency, sums over sets of items, the top ten. Which post-processing should
you use? The papers' answer (NDSS, Fig. 9) is to ask the data: fit a synthetic truth
to the measurement, simulate the collection on it many times, and keep the method
with the lowest error on the synthetic truth. :func:`bayesldp.choose_method` does
this for one query in one call, on two synthetic truths (the ``norm-sub`` and
``power-ns`` fits: one flat in the tail, one heavy-tailed), and returns the ranking,
the chosen method and its estimate, ready to publish with ``interval``.

The best method depends on the query. Here the truth is known (Zipf data), so the
choice can be checked: for each query we compare the error each method really makes
with the ranking ``choose_method`` derives from the measurement alone.
"""

# %%
# The queries
# -----------
# The full domain, sums over random sets of half and of a tenth of the items, and the
# ten most frequent items. :func:`bayesldp.choose.query_loss` measures a method's
# error on a query against the true frequencies, as ``choose_method`` does against
# its synthetic truths (random sets by their exact expected loss).

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets
from bayesldp.choose import parse_query, query_loss

QUERIES = {"full domain": "full", "50% sets": ("set", 0.5), "10% sets": ("set", 0.1)}


def true_regrets(data, m, query, methods):
    """Each method's true error on ``query`` over the best method's.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts.
    m : bayesldp.Measurement
        The measurement.
    query : object
        A query of :func:`bayesldp.choose_method`.
    methods : list of str
        Method names.

    Returns
    -------
    dict
        ``{method: true error / smallest true error}``.
    """
    q = parse_query(query, data.d)
    errors = {}
    for name in methods:
        est = bayesldp.postprocess(m, name)
        errors[name] = float(query_loss(q, est.frequencies, data.frequencies)[0])
    best = min(errors.values())
    return {name: e / best for name, e in errors.items()}


# %%
# The figure
# ----------
# One panel per query: the bars are ``choose_method``'s scores (a method's simulated
# error over the best simulated error, averaged over the two synthetic truths), the
# dots each method's true error over the best true error. The chosen method is the
# first bar; where its dot sits at 1 the choice was right.


def plot(choices, regrets):
    """Draw the simulated scores and the true regrets of every query.

    Parameters
    ----------
    choices : dict
        ``{query label: MethodChoice}``.
    regrets : dict
        ``{query label: {method: true regret}}``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(1, len(choices), figsize=(3.6 * len(choices), 3.8),
                             layout="constrained", squeeze=False)  # fmt: skip
    for ax, (label, choice) in zip(axes[0], choices.items(), strict=True):
        table = choice.ranking
        y = np.arange(len(table))[::-1]
        ax.barh(y, table["score"], color="tab:blue", alpha=0.6, label="simulated score")
        ax.plot([regrets[label][name] for name in table["method"]], y, "ko", ms=4,
                label="true regret")  # fmt: skip
        ax.set_yticks(y, table["method"])
        ax.set_xscale("log")
        ax.axvline(1, color="0.5", lw=0.8)
        ax.set_title(f"{label}: chose {choice.chosen}", fontsize=9)
        ax.set_xlabel("error / best error")
    axes[0, 0].legend(fontsize=7, loc="lower right")
    return fig


def main(args):
    """Choose a method for each query, print the choices and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    data = datasets.zipf(s=args.s, d=args.d, n=args.n, rng=rng)
    m = bayesldp.OUE(epsilon=args.epsilon, domain_size=data.d).simulate(data.counts, rng)
    queries = {**QUERIES, f"top {args.k}": ("top", args.k)}
    choices, regrets = {}, {}
    for label, query in queries.items():
        choice = bayesldp.choose_method(m, query, reps=args.reps, rng=rng)
        choices[label] = choice
        regrets[label] = true_regrets(data, m, query, list(choice.ranking["method"]))
        truly_best = min(regrets[label], key=regrets[label].get)
        print(f"{label:12} chose {choice.chosen:9} true regret "
              f"{regrets[label][choice.chosen]:.3f} (truly best: {truly_best})"
              + (f"  [{choice.note}]" if choice.note else ""))  # fmt: skip
    interval = choices["50% sets"].estimate.interval(np.arange(data.d // 2), 0.9)
    print(f"first half of the items, {choices['50% sets'].chosen}: {interval}")
    plot(choices, regrets)
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
    parser = argparse.ArgumentParser(description="Choosing a method for a query.")
    parser.add_argument("--d", type=int, default=1024, help="number of items")
    parser.add_argument("--n", type=int, default=1_000_000, help="number of users")
    parser.add_argument("--s", type=float, default=1.5, help="Zipf exponent")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--k", type=int, default=10, help="the top-k query's k")
    parser.add_argument("--reps", type=int, default=50, help="simulated collections per fit")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# What it shows
# -------------
# No single method wins every query: the methods that pull small estimates to zero help
# the full domain and large sets, where the errors of the many rare items add up, but
# can hurt the top items. The simulated ranking tracks the true one closely, and where
# it picks a method that is not the truly best one, that method's true error is near
# the best. ``bayesldp experiment choose_method`` measures this regret over datasets,
# privacy budgets and queries against every fixed choice (``paper/choose.md``); the
# same choice is on the command line as ``bayesldp choose MEASUREMENT.json --query
# set:0.5``.

if __name__ == "__main__":
    main(parse_args())
