r"""How well ``bayesldp.plan`` predicts the error after its recommended post-processing.

For each dataset (the papers' Zipf: d = 1024, s = 1.5, n = 1e6; us_cities; wordfreq),
epsilon and query, ``plan`` is called for OUE (the papers' oracle) at the dataset's
``n`` users with a prior, and returns the recommended method and its predicted error.
That method is then run on ``--runs`` fresh simulations of the collection on the TRUE
data (exact OUE support counts of the dataset's own counts), and the mean error of its
answers is the measured error. ``ratio`` = predicted / measured; the target is
``|ratio - 1| <= 0.15``. ``z`` = (predicted - measured) / the two Monte Carlo standard
errors combined: a cell with ``|z|`` below about 3 misses by chance, not by design.

Priors given to ``plan``:

* ``zipf``: the generating law (``prior=1.5``), whose one draw is the true data;
* ``truth`` (real data): the dataset's own histogram as a pilot (the planner's own
  accuracy, with the prior exactly right);
* ``sample`` (real data): the histogram of a sample of ``--pilot-share`` of the users
  (a small pilot collection without noise), the realistic case.

    python benchmarks/plan_accuracy.py                        # the table of paper/plan.md
    python benchmarks/plan_accuracy.py --datasets zipf --epsilons 1 --runs 5   # quick
    python benchmarks/plan_accuracy.py --oracles GRR HR --priors truth --runs 30 \
        --out benchmarks/results/plan_oracles        # oracles whose plan draws marginals
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

QUERIES = ("full", "set:0.5", "top:10")


def measured_error(oracle, counts, method, query, runs, rng) -> tuple[float, float]:
    """Mean and standard error of ``method``'s query error on fresh rounds of ``counts``."""
    from bayesldp import postprocess
    from bayesldp._plan_simulation import SETS_PER_RUN
    from bayesldp._query import set_loss, set_size, top_items
    from bayesldp.methods.registry import get_method
    from bayesldp.planning import parse_query

    n, d = int(counts.sum()), counts.size
    truth = counts / n
    kind, value = parse_query(query, d)
    errors = []
    for _ in range(runs):
        est = postprocess(oracle.simulate(counts, rng), method)
        if kind == "full":
            errors.append(float(np.mean((est.frequencies - truth) ** 2)))
        elif kind == "top":
            top = top_items(truth, int(value))[0]
            errors.append(float(np.mean((est.frequencies[top] - truth[top]) ** 2)))
        elif get_method(method).query_rule == "sum":  # every set of the size, exactly
            size = set_size(d, value)
            errors.append(float(set_loss((est.frequencies - truth)[None, :], size)[0]))
        else:  # a query-time rule (post-pos): random sets
            size = set_size(d, value)
            sq = []
            for _ in range(SETS_PER_RUN):
                s = rng.choice(d, size=size, replace=False)
                sq.append((est.subset(s) - truth[s].sum()) ** 2)
            errors.append(float(np.mean(sq)))
    e = np.asarray(errors)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size))


def priors(name: str, counts: np.ndarray, share: float, rng: np.random.Generator) -> dict:
    """Return the priors ``plan`` is given for a dataset, by label."""
    if name == "zipf":
        return {"zipf": 1.5}
    sample = rng.multinomial(max(1, round(share * counts.sum())), counts / counts.sum())
    return {"truth": counts, "sample": sample}


def main(args: argparse.Namespace):
    """Run every cell, write the CSV and the markdown table."""
    import pandas as pd

    from bayesldp.datasets import get_dataset

    rows = []
    rng = np.random.default_rng(args.seed)
    for name in args.datasets:
        dataset = get_dataset(name)
        counts = np.asarray(dataset.counts)
        for label, prior in priors(name, counts, args.pilot_share, rng).items():
            if args.priors and label not in args.priors and name != "zipf":
                continue
            for eps in args.epsilons:
                for oracle_name in args.oracles:
                    rows += cell(name, counts, label, prior, eps, oracle_name, args, rng)
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "plan_accuracy.csv", index=False)
    (out / "plan_accuracy.md").write_text(markdown(frame))
    within = (frame["ratio"] - 1).abs() <= 0.15
    print(f"{int(within.sum())} of {len(frame)} cells within 15%; wrote {out}")
    return frame


def cell(name, counts, label, prior, eps, oracle_name, args, rng) -> dict:
    """Plan one (dataset, prior, eps, oracle) for each query; measure; return the rows."""
    from bayesldp import make_oracle, plan

    n, d = int(counts.sum()), counts.size
    oracle = make_oracle(oracle_name, eps, d)
    out = []
    for query in args.queries:
        start = time.perf_counter()
        table = plan(d, eps, users=n, query=query, prior=prior, oracles=oracle_name,
                     reps=args.reps, rng=rng)  # fmt: skip
        seconds = time.perf_counter() - start
        row = table.iloc[0]
        mean, se = measured_error(oracle, counts, row["method"], query, args.runs, rng)
        out.append({
            "dataset": name, "d": d, "n": n, "prior": label, "epsilon": eps,
            "oracle": oracle_name, "query": query, "method": row["method"],
            "raw_predicted": float(row["raw_mse"]),
            "predicted": float(row["post_mse"]),
            "predicted_se": float(row["post_se"]),
            "measured": mean, "measured_se": se, "ratio": float(row["post_mse"]) / mean,
            "z": (float(row["post_mse"]) - mean) / np.hypot(float(row["post_se"]), se),
            "plan_seconds": seconds, "load": os.getloadavg()[0],
        })  # fmt: skip
        r = out[-1]
        print(f"{name:<9} {label:<6} eps {eps:<4g} {oracle_name:<4} {query:<8} {r['method']:<9} "
              f"pred {r['predicted']:.3e} meas {mean:.3e} ratio {r['ratio']:.3f} "
              f"({seconds:.1f} s)", flush=True)  # fmt: skip
    return out


def spread(value: float, se: float) -> str:
    """Return ``± se``, or ``(exact)`` when the control variate leaves no noise (base)."""
    return "(exact)" if se <= 1e-9 * abs(value) else f"± {se:.1g}"


def markdown(frame) -> str:
    """Return the table of paper/plan.md: one row per cell."""
    lines = [
        "| dataset | prior | eps | oracle | query | method | predicted | measured | ratio | z |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in frame.itertuples(index=False):
        mark = "" if abs(r.ratio - 1) <= 0.15 else " **miss**"
        lines.append(
            f"| {r.dataset} | {r.prior} | {r.epsilon:g} | {getattr(r, 'oracle', 'OUE')} | "
            f"{r.query} | {r.method} | "
            f"{r.predicted:.3g} {spread(r.predicted, r.predicted_se)} | "
            f"{r.measured:.3g} {spread(r.measured, r.measured_se)} | "
            f"{r.ratio:.3f}{mark} | {r.z:+.1f} |"
        )
    return "\n".join(lines) + "\n"


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["zipf", "us_cities", "wordfreq"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    parser.add_argument("--queries", nargs="+", default=list(QUERIES))
    parser.add_argument("--reps", type=int, default=50, help="plan's simulated collections")
    parser.add_argument("--runs", type=int, default=100, help="fresh rounds on the true data")
    parser.add_argument("--pilot-share", type=float, default=0.05)
    parser.add_argument("--oracles", nargs="+", default=["OUE"], help="simulated exactly")
    parser.add_argument("--priors", nargs="+", default=None, help="truth and/or sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/plan")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
