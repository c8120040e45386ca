"""Cost of one log-density-and-gradient evaluation of bayes-dirichlet's model.

NUTS spends nearly all its time here: a fit is (leapfrog steps) x (this cost), so
``benchmarks/bayes_layer_speed.py``'s step counts and this figure explain its seconds.
The model is compiled with PyTensor's NUMBA backend (what nutpie runs) and timed at its
initial point, best of ``--repeat`` rounds.

    python benchmarks/gradient_cost.py                        # Zipf d = 1024 and wordfreq
    python benchmarks/gradient_cost.py --cases zipf --d 4096 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import time

if __package__:  # imported as benchmarks.gradient_cost
    from benchmarks import bayes_layer_speed, results_table
else:  # run as a script: its folder is on sys.path
    import bayes_layer_speed
    import results_table


def measure(case: str, d: int | None, repeat: int, seconds: float) -> dict:
    """Time one case; return a row."""
    from bayesldp.models import dirichlet

    if case not in ("zipf", "wordfreq"):
        raise ValueError(f"unknown case {case!r}; choose zipf or wordfreq")
    data, m = bayes_layer_speed.case_measurement(case, 0, d)
    model = dirichlet.build_dirichlet_model(m)
    begin = time.perf_counter()
    fn = model.compile_fn([model.logp(), model.dlogp()], mode="NUMBA")
    point = model.initial_point()
    fn(point)
    compile_seconds = time.perf_counter() - begin
    # calls per round: about `seconds` of work
    begin = time.perf_counter()
    fn(point)
    calls = max(5, int(seconds / max(time.perf_counter() - begin, 1e-6)))
    rounds = []
    for _ in range(repeat):
        begin = time.perf_counter()
        for _ in range(calls):
            fn(point)
        rounds.append((time.perf_counter() - begin) / calls)
    return {
        "case": case,
        "d": data.d,
        "ms_per_evaluation": 1e3 * min(rounds),
        "ms_median": 1e3 * sorted(rounds)[len(rounds) // 2],
        "calls_per_round": calls,
        "rounds": repeat,
        "compile_seconds": compile_seconds,
        "load": os.getloadavg()[0],
    }


def main(args: argparse.Namespace) -> list[dict]:
    """Measure every case; write ``OUT/NAME.csv``."""
    rows: list[dict] = []
    for case in args.cases:
        results_table.report(measure(case, args.d, args.repeat, args.seconds), rows)
    results_table.write_rows(rows, args)
    return rows


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["zipf", "wordfreq"])
    parser.add_argument("--d", type=int, help="domain size (default: the case's)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of a round")
    results_table.add_output_arguments(parser, "gradient_cost")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
