"""The user side: time and peak memory of ``privatize`` per user-item, against references.

For each domain size ``d`` and number of users ``n`` (default d = 1024 and 42178,
n = 1e5 and 1e6) the script times, side by side in one process:

* ``bayesldp``: every oracle's ``privatize(values, rng)`` (the reports as sent);
* ``previous``: the vectorised privatize of bayesldp before the wire format (OUE/SUE one
  float64 draw per bit and a bool matrix, SS a float64 key matrix and argpartition),
  copied below, run on at most ``--previous-users`` users and ``--previous-cells``
  user-items (it holds 9 to 18 bytes per user-item) and scaled;
* ``pure-LDP`` and ``multi-freq-ldpy``: their per-user clients (``privatise`` /
  ``*_Client`` in a Python loop), timed on ``--subsample`` users and scaled to n
  (``extrapolated=True``); their memory is the peak while holding those reports;
* references for the cost of the random bits (``library="reference"``):
  ``raw random bytes``: drawing 8 random bits per user-item, the randomness OUE/SUE's
  privatize consumes (``numpy.random.Generator.bit_generator.random_raw``, blocks of
  the oracles' block size in cells); ``rng.random per cell``: one float64
  uniform per user-item (what the previous OUE drew); ``naive packed Bernoulli``:
  ``packbits(rng.random(block) < q)``, the obvious vectorised way to make the same
  packed bits (exact only to 2^-53).

Times are the best of ``--repeat`` runs; peak memory is measured with ``tracemalloc``
in a separate run (numpy reports its buffers to it) and includes the returned reports.
Ratios (``*_ratio`` columns of ``ratios.csv``) are ours over the other figure in this
run. Cells with more than ``--max-cells`` user-items (d = 42178 with n = 1e6) and
oracles whose reports would exceed
``--max-output-gb`` are skipped. The script also times exact
``GRR.simulate`` at ``--grr-d`` (1e7) items and ``--grr-n`` (1e8) users against the
previous implementation (one int64 origin per liar).

Run ``pip install -e '.[bench]' && python benchmarks/user_side.py``; ``--quick`` for a
smoke run. Writes ``<out>/user_side.csv``,
``<out>/ratios.csv`` and ``<out>/run.json`` (machine, load average, versions).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import logging
import os
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp._io import write_csv, write_json
from bayesldp.oracles._blocks import rows_per_block
from bayesldp.oracles._exact_random import random_words

logger = logging.getLogger("user_side")

ORACLES = list(bayesldp.ORACLES)


# ---------------------------------------------------------------------------
# measurement helpers


def best_time(func, repeat: int) -> float:
    """Best wall time of ``repeat`` calls (the result is dropped before the next call)."""
    best = np.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
        del out
    return best


def peak_bytes(func) -> int:
    """Peak traced memory of one call, including what it returns."""
    gc.collect()
    tracemalloc.start()
    try:
        out = func()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del out
    return peak


# ---------------------------------------------------------------------------
# references: the cost of the random bits


def ref_raw_bytes(n: int, d: int, rng) -> None:
    """8 random bits per user-item, in blocks of CHUNK_CELLS cells."""
    rows = rows_per_block(d)
    for start in range(0, n, rows):
        random_words(rng, -(-min(rows, n - start) * d // 8))


def ref_random(n: int, d: int, rng) -> None:
    """One float64 uniform per user-item, in blocks."""
    rows = rows_per_block(d)
    for start in range(0, n, rows):
        rng.random((min(rows, n - start), d))


def ref_naive_packed(n: int, d: int, q: float, rng) -> np.ndarray:
    """Packed Bernoulli(q) bits the obvious way: one float64 draw per bit."""
    rows = rows_per_block(d)
    out = np.empty((n, -(-d // 8)), dtype=np.uint8)
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        out[start:stop] = np.packbits(rng.random((stop - start, d)) < q, axis=1)
    return out


# ---------------------------------------------------------------------------
# the previous bayesldp user side (before the wire format), for comparison


def previous_unary(values: np.ndarray, d: int, p: float, q: float, rng) -> np.ndarray:
    """Privatize as OUE/SUE in bayesldp 0.1 did: a bool (n, d) matrix from float64 draws."""
    bits = rng.random((values.size, d)) < q
    bits[np.arange(values.size), values] = rng.random(values.size) < p
    return bits


def previous_ss(values: np.ndarray, d: int, k: int, p: float, rng) -> np.ndarray:
    """Privatize as SS in bayesldp 0.1 did: a float64 key matrix, argpartition, sort."""
    keys = rng.random((values.size, d - 1))
    others = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < d - 1 else np.argsort(keys, 1)
    others = others + (others >= values[:, None])
    include = rng.random(values.size) < p
    others[include, 0] = values[include]
    return np.sort(others, axis=1).astype(np.int64)


def previous_grr_counts(x: np.ndarray, p: float, rng) -> np.ndarray:
    """Simulate as exact GRR in bayesldp 0.1 did: one int64 origin and destination per liar."""
    d = x.size
    kept = rng.binomial(x, p)
    liars = x - kept
    origin = np.repeat(np.arange(d), liars)
    dest = rng.integers(0, d - 1, size=origin.size)
    dest += dest >= origin
    return kept + np.bincount(dest, minlength=d)


# ---------------------------------------------------------------------------
# the other libraries' per-user clients


def peer_clients(d: int, eps: float, libraries) -> dict[tuple[str, str], object]:
    """(library, oracle) -> function(value) making one user's report."""
    clients: dict[tuple[str, str], object] = {}
    if "pure-LDP" in libraries and importlib.util.find_spec("pure_ldp") is not None:
        from pure_ldp.frequency_oracles.direct_encoding import DEClient
        from pure_ldp.frequency_oracles.hadamard_response import (
            HadamardResponseClient,
            HadamardResponseServer,
        )
        from pure_ldp.frequency_oracles.local_hashing import LHClient
        from pure_ldp.frequency_oracles.unary_encoding import UEClient

        de = DEClient(eps, d)
        oue = UEClient(eps, d, use_oue=True)
        sue = UEClient(eps, d, use_oue=False)
        olh = LHClient(eps, d, use_olh=True)
        hr = HadamardResponseClient(eps, d, HadamardResponseServer(eps, d).get_hash_funcs())
        # pure-LDP's items are 1..d
        clients["pure-LDP", "GRR"] = lambda v: de.privatise(v + 1)
        clients["pure-LDP", "OUE"] = lambda v: oue.privatise(v + 1)
        clients["pure-LDP", "SUE"] = lambda v: sue.privatise(v + 1)
        clients["pure-LDP", "OLH"] = lambda v: olh.privatise(v + 1)
        clients["pure-LDP", "HR"] = lambda v: hr.privatise(v + 1)
    if "multi-freq-ldpy" in libraries and importlib.util.find_spec("multi_freq_ldpy") is not None:
        from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

        clients["multi-freq-ldpy", "GRR"] = lambda v: GRR.GRR_Client(v, d, eps)
        clients["multi-freq-ldpy", "OUE"] = lambda v: UE.UE_Client(v, d, eps, optimal=True)
        clients["multi-freq-ldpy", "SUE"] = lambda v: UE.UE_Client(v, d, eps, optimal=False)
        clients["multi-freq-ldpy", "OLH"] = lambda v: LH.LH_Client(v, d, eps, optimal=True)
        clients["multi-freq-ldpy", "SS"] = lambda v: SS.SS_Client(v, d, eps)
    return clients


# ---------------------------------------------------------------------------


def _row(**fields) -> dict:
    n, d = fields["n"], fields["d"]
    seconds = fields.get("seconds", np.nan)
    fields.setdefault("ns_per_user_item", seconds / (n * d) * 1e9)
    return fields


def run_cell(d: int, n: int, args, rng) -> list[dict]:
    """Every measurement at one (d, n)."""
    rows: list[dict] = []
    eps = args.epsilon
    values = rng.integers(0, d, n)
    base = {"d": d, "n": n, "epsilon": eps}
    oue = bayesldp.OUE(eps, d)
    # (row, function, users timed, measure peak memory); timed in interleaved rounds, so
    # that a change of the machine's load hits every entry alike
    entries: list[tuple[dict, object, int, bool]] = []
    for method, func, out in (
        ("raw random bytes", lambda: ref_raw_bytes(n, d, rng), 0),
        ("rng.random per cell", lambda: ref_random(n, d, rng), 0),
        ("naive packed Bernoulli", lambda: ref_naive_packed(n, d, oue.q, rng), -(-d // 8)),
    ):
        row = {"part": "reference", "library": "reference", "method": method, "oracle": "OUE",
               "output_bytes_per_user_item": out / d, **base}  # fmt: skip
        entries.append((row, func, n, False))
    for name in args.oracles:
        oracle = bayesldp.make_oracle(name, eps, d)
        out_bytes = oracle.report_nbytes * n
        row = {"part": "privatize", "library": "bayesldp", "method": "privatize",
               "oracle": name, "output_bytes_per_user_item": oracle.report_nbytes / d,
               **base}  # fmt: skip
        if out_bytes > args.max_output_gb * 1e9:
            rows.append(_row(**row, n_timed=0, extrapolated=False, skipped=True,
                             note=f"reports would take {out_bytes / 1e9:.1f} GB"))  # fmt: skip
            continue
        oracle.privatize(values[:10], rng)  # warm-up
        entries.append((row, lambda o=oracle: o.privatize(values, rng), n, True))
        # the previous implementation, on at most --previous-users users
        m = max(1, min(n, args.previous_users, int(args.previous_cells) // d))
        sub = values[:m]
        prev = None
        if name in ("OUE", "SUE"):
            prev = lambda o=oracle, v=sub: previous_unary(v, d, o.p, o.q, rng)  # noqa: E731
        elif name == "SS":
            prev = lambda o=oracle, v=sub: previous_ss(v, d, o.k, o.p, rng)  # noqa: E731
        if prev is not None:
            row = {"part": "privatize", "library": "previous", "method": "privatize (0.1)",
                   "oracle": name, **base}  # fmt: skip
            entries.append((row, prev, m, True))
    best = [np.inf] * len(entries)
    for _ in range(args.repeat):
        for i, (_, func, _, _) in enumerate(entries):
            best[i] = min(best[i], best_time(func, 1))
    for (row, func, timed, memory), seconds in zip(entries, best, strict=True):
        fields = dict(row, n_timed=timed, extrapolated=timed < n, seconds=seconds * n / timed)
        if memory:
            fields["peak_bytes_per_user_item"] = peak_bytes(func) / (timed * d)
        rows.append(_row(**fields))
        logger.info("d=%d n=%d %s %s %s: %.3f s (scaled to n), peak %.3g B/user-item", d, n,
                    row["library"], row["method"], row["oracle"], seconds * n / timed,
                    fields.get("peak_bytes_per_user_item", np.nan))  # fmt: skip

    # the other libraries, per user
    sub = [int(v) for v in values[: args.subsample]]
    for (library, name), client in peer_clients(d, eps, args.libraries).items():
        if name not in args.oracles:
            continue
        try:
            for v in sub[:5]:  # warm-up (imports, numba compilation)
                client(v)
        except Exception as err:  # e.g. their LH clients with the installed xxhash
            note = f"client fails: {type(err).__name__}: {err}"
            rows.append(_row(part="privatize", library=library, method="per-user client",
                             oracle=name, n_timed=0, extrapolated=False, skipped=True,
                             note=note, **base))  # fmt: skip
            logger.info("d=%d %s %s: client fails (%s)", d, library, name, err)
            continue
        seconds = best_time(lambda c=client: [c(v) for v in sub], 1)
        peak = peak_bytes(lambda c=client: [c(v) for v in sub])
        rows.append(_row(part="privatize", library=library, method="per-user client",
                         oracle=name, n_timed=len(sub), extrapolated=len(sub) < n,
                         seconds=seconds * n / len(sub),
                         peak_bytes_per_user_item=peak / (len(sub) * d), **base))  # fmt: skip
        logger.info("d=%d n=%d %s %s %.1f s (scaled)", d, n, library, name,
                    seconds * n / len(sub))  # fmt: skip
    return rows


def grr_simulate_rows(args, rng) -> list[dict]:
    """Exact GRR.simulate at a large domain, against the previous implementation."""
    d, n = args.grr_d, args.grr_n
    oracle = bayesldp.GRR(args.epsilon, d)
    x = rng.multinomial(n, np.full(d, 1 / d))
    rows = []
    for library, func in (
        ("bayesldp", lambda: oracle.simulate(x, rng).support_counts),
        ("previous", lambda: previous_grr_counts(x, oracle.p, rng)),
    ):
        seconds = best_time(func, 1)
        peak = peak_bytes(func)
        rows.append({"part": "GRR.simulate", "library": library, "method": "simulate (exact)",
                     "oracle": "GRR", "d": d, "n": n, "epsilon": args.epsilon, "n_timed": n,
                     "extrapolated": False, "seconds": seconds, "peak_gb": peak / 1e9,
                     "peak_bytes_per_user": peak / n})  # fmt: skip
        logger.info("GRR.simulate d=%d n=%d %s: %.2f s, peak %.2f GB", d, n, library,
                    seconds, peak / 1e9)  # fmt: skip
    return rows


def ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Ours over every other figure of the same (d, n), in the same run."""
    out = []
    priv = frame[(frame["part"] == "privatize") & ~frame.get("skipped", False).fillna(False)]
    refs = frame[frame["part"] == "reference"].set_index(["d", "n", "method"])["seconds"]
    for (d, n), cell in priv.groupby(["d", "n"]):
        ours = cell[cell["library"] == "bayesldp"].set_index("oracle")
        for oracle, row in ours.iterrows():
            rec = {"d": d, "n": n, "oracle": oracle, "ns_per_user_item": row["ns_per_user_item"],
                   "peak_bytes_per_user_item": row["peak_bytes_per_user_item"]}  # fmt: skip
            for method in ("raw random bytes", "rng.random per cell", "naive packed Bernoulli"):
                rec[f"over_{method.replace(' ', '_').replace('.', '_')}"] = (
                    row["seconds"] / refs.loc[(d, n, method)]
                )
            for _, other in cell[
                (cell["oracle"] == oracle) & (cell["library"] != "bayesldp")
            ].iterrows():
                key = other["library"].replace("-", "_")
                rec[f"time_ratio_vs_{key}"] = row["seconds"] / other["seconds"]
                rec[f"memory_ratio_vs_{key}"] = (
                    row["peak_bytes_per_user_item"] / other["peak_bytes_per_user_item"]
                )
            out.append(rec)
    return pd.DataFrame(out)


def main(argv=None) -> dict[str, pd.DataFrame]:
    """Run the benchmark and write its tables."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    args = build_parser().parse_args(argv)
    if args.quick:
        args.domains, args.users, args.subsample, args.repeat = [256], [20_000], 200, 1
        args.grr_d, args.grr_n, args.previous_users = 100_000, 1_000_000, 20_000
    rng = np.random.default_rng(args.seed)
    load_before = os.getloadavg()
    rows = []
    for d in args.domains:
        for n in args.users:
            if n * d > args.max_cells:
                rows.append({"part": "privatize", "library": "bayesldp", "d": d, "n": n,
                             "skipped": True, "note": "n*d above --max-cells"})  # fmt: skip
                continue
            rows.extend(run_cell(d, n, args, rng))
    if not args.no_grr_simulate:
        rows.extend(grr_simulate_rows(args, rng))
    frame = pd.DataFrame(rows)
    if "skipped" not in frame:
        frame["skipped"] = False
    frame["skipped"] = frame["skipped"].astype("boolean").fillna(False).astype(bool)
    table = ratios(frame)
    out = Path(args.out)
    write_csv(out / "user_side.csv", frame)
    write_csv(out / "ratios.csv", table)
    write_json(
        out / "run.json",
        {
            "argv": vars(args),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "bayesldp": bayesldp.__version__,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
    )
    return {"user_side": frame, "ratios": table}


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, nargs="+", default=[1024, 42178])
    parser.add_argument("--users", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--oracles", nargs="+", default=ORACLES)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--libraries", nargs="*", default=["pure-LDP", "multi-freq-ldpy"],
                        help="other libraries to time (none: give the option alone)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best is kept)")
    parser.add_argument("--subsample", type=int, default=2000,
                        help="users run through the other libraries' clients")  # fmt: skip
    parser.add_argument("--previous-users", type=int, default=100_000,
                        help="users run through the previous implementation")  # fmt: skip
    parser.add_argument("--previous-cells", type=float, default=1e8,
                        help="cap on users x d for the previous implementation")  # fmt: skip
    parser.add_argument("--max-output-gb", type=float, default=6.0)
    parser.add_argument("--max-cells", type=float, default=5e9,
                        help="skip larger (d, n) (by default d=42178, n=1e6)")  # fmt: skip
    parser.add_argument("--grr-d", type=int, default=10_000_000)
    parser.add_argument("--grr-n", type=int, default=100_000_000)
    parser.add_argument("--no-grr-simulate", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/user_side")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke run)")
    return parser


if __name__ == "__main__":
    result = main()
    with pd.option_context("display.width", 250, "display.float_format", "{:.4g}".format):
        for name, frame in result.items():
            print(f"\n== {name} ==\n{frame.to_string(index=False)}")
