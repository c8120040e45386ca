"""bayesldp side by side with pure-LDP and multi-freq-ldpy, on the same inputs.

Three parts, each written to ``--out`` as a CSV (and plots):

1. ``simulation.csv``: time to privatize and aggregate n users (OUE and GRR) with
   their per-user clients against our vectorised ``privatize`` + ``support_counts``
   and our exact ``simulate``. Their per-user paths are timed on a subsample of
   ``--subsample`` users and scaled linearly to n: such rows say
   ``extrapolated=True``. Ratios ours / theirs are computed within this run.
2. ``postprocess.csv``: for the same support counts (Zipf 1.5, d = 1024, OUE,
   several seeds), time and accuracy (full-domain, 50% set and top-10 MSE) of
   pure-LDP's ``estimate_all(normalization=0..3)``, multi-freq-ldpy's ``MI``
   (clip and renormalise) and ``IBU``, and our corresponding and best methods.
3. ``scaling.csv`` / ``scaling.png``: post-processing time of every bayesldp method as
   d grows (log-log).

Run ``python benchmarks/compare_libraries.py`` (needs ``pip install -e '.[bench]'``);
``--quick`` for a small run.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp import datasets, metrics
from bayesldp._io import write_csv


def _timed(func, *args, **kwargs):
    start = time.perf_counter()
    out = func(*args, **kwargs)
    return out, time.perf_counter() - start


# ---------------------------------------------------------------------------
# 1. Simulation and aggregation
# ---------------------------------------------------------------------------


def theirs_per_user(library: str, oracle: str, values: np.ndarray, d: int, eps: float):
    """Privatize and aggregate with another library's per-user API; return seconds."""
    if library == "pure-ldp":
        if oracle == "OUE":
            from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

            client, server = UEClient(eps, d, use_oue=True), UEServer(eps, d, use_oue=True)
        else:
            from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer

            client, server = DEClient(eps, d), DEServer(eps, d)
        start = time.perf_counter()
        for v in values:
            server.aggregate(client.privatise(int(v) + 1))
        return time.perf_counter() - start
    from multi_freq_ldpy.pure_frequency_oracles import GRR, UE

    start = time.perf_counter()
    if oracle == "OUE":
        reports = [UE.UE_Client(int(v), d, eps, optimal=True) for v in values]
        np.sum(reports, axis=0)
    else:
        reports = [GRR.GRR_Client(int(v), d, eps) for v in values]
        np.bincount(reports, minlength=d)
    return time.perf_counter() - start


def ours_per_user(oracle_name: str, values: np.ndarray, d: int, eps: float, rng, chunk: int):
    """Our vectorised privatize + support_counts, in chunks; return seconds."""
    oracle = bayesldp.make_oracle(oracle_name, eps, d)
    start = time.perf_counter()
    counts = np.zeros(d, dtype=np.int64)
    for lo in range(0, values.size, chunk):
        counts += oracle.support_counts(oracle.privatize(values[lo : lo + chunk], rng))
    return time.perf_counter() - start


def simulation_table(args) -> pd.DataFrame:
    """Time privatize + aggregate per library, and bayesldp's exact simulation."""
    rows = []
    rng = np.random.default_rng(args.seed)
    for d in args.domains:
        for n in args.users:
            data = datasets.zipf(1.5, d, n, rng=rng)
            values = np.repeat(np.arange(d), data.counts)
            rng.shuffle(values)
            for oracle in ("OUE", "GRR"):
                sub = values[: args.subsample]
                for library in ("pure-ldp", "multi-freq-ldpy"):
                    # Warm up first: imports and JIT compilation are not per-user costs.
                    theirs_per_user(library, oracle, sub[:10], d, args.epsilon)
                    seconds = theirs_per_user(library, oracle, sub, d, args.epsilon)
                    rows.append({"part": "privatize+aggregate", "library": library,
                                 "oracle": oracle, "d": d, "n": n,
                                 "seconds": seconds * n / sub.size,
                                 "extrapolated": sub.size < n})  # fmt: skip
                # Ours per user: time the full n unless the bit matrix work is huge.
                ours_n = n if oracle == "GRR" or n * d <= args.max_bits else args.max_bits // d
                chunk = max(1, (1 << 24) // d) if oracle == "OUE" else 1 << 20
                ours_per_user(oracle, values[:10], d, args.epsilon, rng, chunk)  # warm-up
                seconds = ours_per_user(oracle, values[:ours_n], d, args.epsilon, rng, chunk)
                rows.append({"part": "privatize+aggregate", "library": "bayesldp",
                             "oracle": oracle, "d": d, "n": n,
                             "seconds": seconds * n / ours_n,
                             "extrapolated": ours_n < n})  # fmt: skip
                o = bayesldp.make_oracle(oracle, args.epsilon, d)
                _, seconds = _timed(o.simulate, data.counts, rng)
                rows.append({"part": "simulate (exact counts)", "library": "bayesldp",
                             "oracle": oracle, "d": d, "n": n, "seconds": seconds,
                             "extrapolated": False})  # fmt: skip
    frame = pd.DataFrame(rows)
    per_user = frame[frame["part"] == "privatize+aggregate"]
    ours = per_user[per_user["library"] == "bayesldp"].set_index(["oracle", "d", "n"])["seconds"]
    frame["ours_over_theirs"] = [
        ours.loc[(r.oracle, r.d, r.n)] / r.seconds
        if r.part == "privatize+aggregate" and r.library != "bayesldp"
        else np.nan
        for r in frame.itertuples()
    ]
    return frame


# ---------------------------------------------------------------------------
# 2. Post-processing: their options against ours, on the same counts
# ---------------------------------------------------------------------------


def pure_ldp_estimates(m: bayesldp.Measurement, eps: float, normalization: int) -> np.ndarray:
    """pure-LDP's estimate_all on our support counts (their estimates are in counts)."""
    from pure_ldp.frequency_oracles.unary_encoding import UEServer

    server = UEServer(eps, m.domain_size, use_oue=True)
    server.aggregated_data = m.support_counts.astype(float)
    server.n = m.n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = server.estimate_all(range(1, m.domain_size + 1), suppress_warnings=True,
                                  normalization=normalization)  # fmt: skip
    return np.asarray(est, dtype=float) / m.n


def multi_freq_estimates(m: bayesldp.Measurement, method: str, iters: int) -> np.ndarray:
    """multi-freq-ldpy's MI (clip and renormalise) or IBU on our support counts."""
    from multi_freq_ldpy.estimators import Histogram_estimator as H

    if method == "MI":
        return H.MI(m.support_counts.astype(float), m.n, m.p, m.q)
    a = np.full((m.domain_size, m.domain_size), m.q)
    np.fill_diagonal(a, m.p)
    obs = m.support_counts / m.support_counts.sum()
    return H.IBU(m.domain_size, a, obs, iters, 1e-12, "max_abs")


def postprocess_table(args) -> pd.DataFrame:
    """Run their post-processing options and ours on the same OUE measurements."""
    d, n = args.pp_domain, args.pp_users
    data = datasets.zipf(1.5, d, n, rng=args.seed)
    truth = data.frequencies
    oracle = bayesldp.OUE(args.epsilon, d)
    theirs = {
        "pure-ldp norm=0 (none)": lambda m: pure_ldp_estimates(m, args.epsilon, 0),
        "pure-ldp norm=1 (additive)": lambda m: pure_ldp_estimates(m, args.epsilon, 1),
        "pure-ldp norm=2 (simplex)": lambda m: pure_ldp_estimates(m, args.epsilon, 2),
        "pure-ldp norm=3 (cut)": lambda m: pure_ldp_estimates(m, args.epsilon, 3),
        "multi-freq-ldpy MI": lambda m: multi_freq_estimates(m, "MI", 0),
        "multi-freq-ldpy IBU": lambda m: multi_freq_estimates(m, "IBU", args.ibu_iters),
    }
    counterpart = {
        "pure-ldp norm=0 (none)": "base",
        "pure-ldp norm=1 (additive)": "norm-sub",
        "pure-ldp norm=2 (simplex)": "norm-sub",
        "pure-ldp norm=3 (cut)": "norm-cut",
        "multi-freq-ldpy MI": "norm-mul",
        "multi-freq-ldpy IBU": "ibu",
    }
    ours = ("base", "norm-sub", "norm-cut", "norm-mul", "ibu", "mle", "norm-hyb", "power-ns")
    rows = []
    for rep in range(args.reps):
        rng = np.random.default_rng([args.seed, rep])
        m = oracle.simulate(data.counts, rng)
        qseed = int(rng.integers(2**31))
        results = {}
        for name, func in theirs.items():
            f, seconds = _timed(func, m)
            results[name] = (bayesldp.Estimate(f, name, m), seconds, "theirs")
        for name in ours:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                est, seconds = _timed(bayesldp.postprocess, m, name)
            results[name] = (est, seconds, "bayesldp")
        for name, (est, seconds, library) in results.items():
            rows.append({
                "rep": rep, "method": name, "library": library, "seconds": seconds,
                "counterpart": counterpart.get(name, ""),
                "mse": metrics.mse(truth, est),
                "set_mse_50": metrics.set_value_mse(
                    truth, est, 50, np.random.default_rng(qseed), args.queries),
                "top10_mse": metrics.topk_mse(truth, est, 10),
                "min": float(est.frequencies.min()), "sum": est.total,
            })  # fmt: skip
    return pd.DataFrame(rows)


def summarise_postprocess(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean per method, with ours / theirs ratios against the counterpart method."""
    cols = ["seconds", "mse", "set_mse_50", "top10_mse", "min", "sum"]
    summary = frame.groupby(["method", "library", "counterpart"], sort=False)[cols].mean()
    summary = summary.reset_index()
    ours = summary[summary["library"] == "bayesldp"].set_index("method")
    for col in ("seconds", "mse", "set_mse_50", "top10_mse"):
        summary[f"{col}_ours_over_theirs"] = [
            ours.loc[r.counterpart, col] / getattr(r, col) if r.counterpart else np.nan
            for r in summary.itertuples()
        ]
    return summary


# ---------------------------------------------------------------------------
# 3. Scaling of every bayesldp method with d
# ---------------------------------------------------------------------------


def _scaling_script():
    """Return the standalone scaling benchmark beside this file (one implementation for both)."""
    if __package__:  # imported as benchmarks.compare_libraries (the tests)
        from benchmarks import scaling
    else:  # run as python benchmarks/compare_libraries.py: this folder is on sys.path
        import scaling
    return scaling


def scaling_table(args):
    """Time every bayesldp method as d grows, with ``benchmarks/scaling.py``."""
    scaling = _scaling_script()
    scaling_args = scaling.build_parser().parse_args(
        ["--domains", *map(str, args.scaling_domains), "--epsilon", str(args.epsilon),
         "--seed", str(args.seed), "--ibu-iters", "2000"]
    )  # fmt: skip
    return scaling, scaling.scaling_table(scaling_args)


def main(args: argparse.Namespace) -> dict[str, pd.DataFrame]:
    """Run the three parts and write their tables and plots."""
    out = Path(args.out)
    if getattr(args, "quick", False):
        args.domains, args.users, args.subsample = [1024], [100_000], 500
        args.pp_users, args.reps, args.queries, args.ibu_iters = 100_000, 2, 5, 500
        args.scaling_domains = [1000, 10_000]
    tables = {}
    if "simulation" in args.parts:
        tables["simulation"] = simulation_table(args)
    if "postprocess" in args.parts:
        raw = postprocess_table(args)
        write_csv(out / "postprocess_runs.csv", raw)
        tables["postprocess"] = summarise_postprocess(raw)
    if "scaling" in args.parts:
        scaling, tables["scaling"] = scaling_table(args)
        scaling.plot_scaling(tables["scaling"], out / "scaling.png")
    for name, frame in tables.items():
        write_csv(out / f"{name}.csv", frame)
    return tables


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["simulation", "postprocess", "scaling"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--domains", type=int, nargs="+", default=[1024, 42178])
    parser.add_argument("--users", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--subsample", type=int, default=2000,
                        help="users timed through the other libraries' per-user paths")  # fmt: skip
    parser.add_argument("--max-bits", type=int, default=2 * 10**9,
                        help="cap on n*d for our per-user OUE timing (then scaled)")  # fmt: skip
    parser.add_argument("--pp-domain", type=int, default=1024)
    parser.add_argument("--pp-users", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--ibu-iters", type=int, default=10_000)
    parser.add_argument("--scaling-domains", type=int, nargs="+",
                        default=[1000, 10_000, 100_000, 1_000_000])  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/compare")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (d=1024, n=1e5, 2 reps) for a smoke run")  # fmt: skip
    return parser


if __name__ == "__main__":
    for name, table in main(build_parser().parse_args()).items():
        with pd.option_context("display.width", 220, "display.float_format", "{:.4g}".format):
            print(f"\n== {name} ==\n{table.to_string(index=False)}")
