"""Coverage of bayes-consistent's 90% single-item intervals for the top items.

On word frequencies at eps 0.5 (``bayesldp.datasets.wordfreq_words()``, d = 42178, OUE)
the noise is ~4,000 users and the 6th to 10th most frequent words have 10,700 to 19,600:
2.7 to 5 noise standard deviations, among 42,000 words with a few users each. This
script puts the model's intervals beside those of the *oracle* prior (the true count
histogram as the prior, the best any exchangeable prior can do) and the frequentist
normal interval of the raw estimate (``base``), for three sets of items: the top 10 by
true frequency, the top 10 by the estimate (the posterior mean), and all items (every
``--oracle-stride``-th item for the oracle prior and the normal interval).

``python research/top_coverage.py --reps 3 --eps 0.5`` writes
``benchmarks/results/top_coverage/coverage.csv``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logsumexp

import bayesldp
from bayesldp import datasets
from bayesldp._io import write_csv


def oracle_intervals(truth_counts, y, sigma_c, items, prob=0.9):
    """Equal-tailed intervals (in counts) under the true count histogram as the prior."""
    values, mult = np.unique(truth_counts, return_counts=True)
    log_mult = np.log(mult)
    out = np.empty((len(items), 2))
    tails = [(1 - prob) / 2, (1 + prob) / 2]
    for j, v in enumerate(items):
        lw = log_mult - (values - y[v]) ** 2 / (2 * sigma_c**2)
        cdf = np.cumsum(np.exp(lw - logsumexp(lw)))
        out[j] = values[np.minimum(np.searchsorted(cdf, tails), values.size - 1)]
    return out


def run(args: argparse.Namespace) -> pd.DataFrame:
    """Coverage per repetition, item set and prior."""
    data = datasets.wordfreq_words(d=args.d, n=args.n)
    truth = data.frequencies
    rows = []
    for rep in range(args.reps):
        m = bayesldp.OUE(args.eps, data.d).simulate(data.counts, np.random.default_rng(rep))
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = bayesldp.postprocess(m, "bayes-consistent", rng=rep)
        seconds = time.perf_counter() - start
        draws = est.uncertainty.sample(0, est.uncertainty.n_draws)
        lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
        del draws
        raw = bayesldp.postprocess(m, "base")  # the frequentist alternative
        sets = {
            "top10_by_truth": np.argsort(-truth, kind="stable")[:10],
            "top10_by_estimate": np.argsort(-est.frequencies, kind="stable")[:10],
            "all_items": np.arange(data.d),
        }
        y, sigma_c = m.estimates * m.n, m.sigma * m.n
        for name, items in sets.items():
            hit = (lo[items] <= truth[items]) & (truth[items] <= hi[items])
            rows.append({"rep": rep, "set": name, "prior": "bayes-consistent",
                         "coverage": float(hit.mean()), "seconds": seconds,
                         "warnings": len(caught), "s_mean": est.info["s_mean"]})  # fmt: skip
            sub = items if name != "all_items" else items[:: args.oracle_stride]
            iv = oracle_intervals(data.counts, y, sigma_c, sub) / m.n
            hit = (iv[:, 0] <= truth[sub]) & (truth[sub] <= iv[:, 1])
            rows.append({"rep": rep, "set": name, "prior": "oracle histogram",
                         "coverage": float(hit.mean())})  # fmt: skip
            # base's own interval, item by item: the exact normal one, at plug-in variance
            iv = np.array([raw.interval([v], 0.9) for v in sub])
            hit = (iv[:, 0] <= truth[sub]) & (truth[sub] <= iv[:, 1])
            rows.append({"rep": rep, "set": name, "prior": "none: base, normal interval",
                         "coverage": float(hit.mean())})  # fmt: skip
        print(pd.DataFrame(rows[-9:]).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--eps", type=float, default=0.5)
    parser.add_argument("--d", type=int, default=42178, help="the d most frequent words")
    parser.add_argument("--n", type=int, default=1_000_000, help="users")
    parser.add_argument("--oracle-stride", type=int, default=7, help="every k-th item (all)")
    parser.add_argument("--out", default="benchmarks/results/top_coverage")
    return parser


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run and write ``coverage.csv`` and ``summary.csv``."""
    frame = run(args)
    out = Path(args.out)
    write_csv(out / "coverage.csv", frame)
    summary = frame.groupby(["set", "prior"])["coverage"].agg(["mean", "min", "max", "count"])
    write_csv(out / "summary.csv", summary.reset_index())
    print(summary.to_string())
    return summary


if __name__ == "__main__":
    main(build_parser().parse_args())
