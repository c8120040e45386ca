r"""
Planning a collection: which oracle, how many users
===================================================

A team wants the frequencies of ``d`` items (say, which of 512 app screens users open
most) under :math:`\varepsilon = 1` local differential privacy, and will publish the
full histogram. Before a single report is collected they must pick the frequency
oracle and know how many users to ask, for an error they can accept: here a mean
squared error of :math:`10^{-6}` per item.

:func:`bayesldp.plan` answers for every registered oracle. The error of the raw
(unbiased) estimates is exact, from each oracle's variance formula; the error after the
recommended post-processing is simulated on what the team expects the data to look
like, here a Zipf law with exponent 1.5 (a few screens take most of the visits). The
plan also tells what each user sends: the bits of one report.
"""

# %%
# The plan
# --------
# One row per oracle: the report size, the users the raw estimates need for the target,
# the method recommended after simulating the collection, and the users it needs.

from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np

import bayesldp


def make_plan(d, epsilon, target, zipf, reps, seed):
    """Plan the collection for every oracle.

    Parameters
    ----------
    d : int
        Number of items.
    epsilon : float
        Privacy budget.
    target : float
        The full-domain mean squared error the team accepts.
    zipf : float
        Exponent of the expected Zipf law of the data.
    reps : int
        Simulated collections per user count.
    seed : int
        Random seed.

    Returns
    -------
    pandas.DataFrame
        As :func:`bayesldp.plan` returns it.
    """
    return bayesldp.plan(d, epsilon, target=target, query="full", prior=zipf, reps=reps, rng=seed)


# %%
# Error against users
# -------------------
# Left: each oracle's raw error (dashed, exactly proportional to 1/n) and its error
# after the recommended post-processing (solid, the simulated points). Right: what the
# choice costs, users needed against the bits each user sends.


def draw(table):
    """Draw error against users (left) and users needed against report bits (right).

    Parameters
    ----------
    table : pandas.DataFrame
        A plan with a target.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    curve = table.attrs["curve"]
    span = np.geomspace(curve["users"].min() / 2, curve["users"].max() * 2, 40)
    for i, row in enumerate(table.itertuples(index=False)):
        colour = f"C{i}"
        per_user = row.raw_mse * row.users
        left.plot(span, per_user / span, "--", lw=1, color=colour)
        points = curve[curve["oracle"] == row.oracle].sort_values("users")
        left.plot(points["users"], points["post_mse"], "o-", ms=3, color=colour, label=row.oracle)
        right.scatter(row.report_bits, row.raw_users_needed, marker="x", color=colour)
        right.scatter(row.report_bits, row.post_users_needed, marker="o", color=colour)
        right.annotate(row.oracle, (row.report_bits, row.post_users_needed), fontsize=8)
    left.axhline(table["target"].iloc[0], color="k", ls=":", lw=0.8, label="target")
    left.set(xscale="log", yscale="log", xlabel="users", ylabel="full-domain MSE")
    left.set_title("dashed: raw; solid: recommended post-processing", fontsize=9)
    left.legend(fontsize=7)
    right.set(xscale="log", yscale="log", xlabel="bits per user", ylabel="users needed")
    right.set_title("x: raw estimates; o: post-processed", fontsize=9)
    return fig


def main(args):
    """Plan the collection, print the table and draw the figure.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`parse_args`.
    """
    table = make_plan(args.d, args.epsilon, args.target, args.zipf, args.reps, args.seed)
    columns = ["oracle", "report_bits", "raw_users_needed", "post_method", "post_users_needed"]
    print(table[columns].to_string(index=False))
    best = table.loc[table["post_users_needed"].idxmin()]
    print(
        f"fewest users: {best['oracle']} with {best['post_method']}, "
        f"{best['post_users_needed']:,} users ({best['report_bits']} bits each)"
    )
    draw(table)
    plt.show()


def parse_args():
    """Parse the command line.

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description="Plan an LDP frequency collection.")
    parser.add_argument("--d", type=int, default=512, help="number of items")
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy budget")
    parser.add_argument("--target", type=float, default=1e-6, help="full-domain MSE target")
    parser.add_argument("--zipf", type=float, default=1.5, help="expected Zipf exponent")
    parser.add_argument("--reps", type=int, default=20, help="simulated collections")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
