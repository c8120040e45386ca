"""Time ``bayesldp.choose_method`` on a large domain (issue 38's target: wordfreq in 10 s).

On ``--dataset`` (default wordfreq, d = 42,178, n = 1e6), one OUE collection at eps 1 is
simulated, and ``choose_method`` runs with ``--reps`` simulated collections per fit and
the default methods, for each ``--queries``. Reported per query: wall-clock seconds,
the process's CPU seconds (less sensitive to other work on a shared machine), the chosen
method and the 1-minute load average before and after. A second table breaks the work
down: fitting the two synthetic truths and simulating the support counts, then each
method re-run on all the simulated collections (the full-domain query).

    python benchmarks/choose_speed.py                            # wordfreq, reps 50
    python benchmarks/choose_speed.py --dataset zipf:d=64 --reps 2 --queries full
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np


def main(args: argparse.Namespace):
    """Time choose_method per query and one fit's steps; write both tables."""
    import pandas as pd

    import bayesldp
    from bayesldp._io import write_csv
    from bayesldp.choose import default_methods, parse_query, simulated_losses
    from bayesldp.cli._choose import parse_query_text
    from bayesldp.datasets import get_dataset

    data = get_dataset(args.dataset)
    m = bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(args.seed))
    out = Path(args.out)
    rows = []
    for text in args.queries:
        query = parse_query_text(text)
        parse_query(query, data.d)
        load_before = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            choice = bayesldp.choose_method(m, query, reps=args.reps, rng=args.seed)
        row = {"dataset": args.dataset, "d": data.d, "n": int(m.n), "query": text,
               "reps": args.reps, "methods": len(choice.ranking),
               "seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
               "chosen": choice.chosen, "load_before": load_before,
               "load_after": os.getloadavg()[0], "cpus": os.cpu_count()}  # fmt: skip
        rows.append(row)
        print(row, flush=True)
        write_csv(out / f"{args.name}.csv", pd.DataFrame(rows))
    # the steps: fitting both truths and simulating the counts (no method), then each
    # method on all the simulated collections (its time over that baseline)
    steps = []
    full = [parse_query("full", data.d)]
    for name in ("", *default_methods()):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            simulated_losses(m, full, [name] if name else [], reps=args.reps, rng=args.seed)
        steps.append({"method": name or "(fits and simulation)",
                      "seconds": time.perf_counter() - start,
                      "load": os.getloadavg()[0]})  # fmt: skip
    base = steps[0]["seconds"]
    for step in steps[1:]:
        step["seconds"] -= base
    frame = pd.DataFrame(steps)
    write_csv(out / f"{args.name}_steps.csv", frame)
    print(frame.to_string(index=False))
    return pd.DataFrame(rows)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="wordfreq")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--queries", nargs="+", default=["full", "set:0.5", "top:10"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/choose_speed")
    parser.add_argument("--name", default="choose_speed")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
