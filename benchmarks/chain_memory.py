"""Memory and time of NumPyro's chains, by how they run: bayes-dirichlet's model, 2 chains.

A wordfreq fit's memory grows while NumPyro samples two chains at once (paper/bayes.md,
"A side finding: the memory of a wordfreq fit"). This runs PyMC's NumPyro sampler on a
speed case (``speed_cases.py``) with one ``chain_method`` in a fresh process per run,
reads the process's resident memory every ``--every`` seconds from ``/proc`` (Linux), and
reports the peak, the growth per second while sampling (a least-squares slope over the
middle half of the run), the wall time and the load:

- ``sequential``: one chain after the other (NumPyro's own);
- ``parallel``: one JAX CPU device per chain (NumPyro's ``pmap``; ``fit``'s default);
- ``threads``: two Python threads, one chain each on its own device (a map function
  handed to NumPyro as ``chain_method``);
- ``threads-one-device``: the same, both chains on the first device.

Methods are run in turn, ``--repeat`` rounds, so a pair shares the machine's state::

    python benchmarks/chain_memory.py --cases wordfreq --draws 200
    python benchmarks/chain_memory.py --cases zipf --d 16384 --draws 200
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

if __package__:  # imported as benchmarks.chain_memory
    from benchmarks import results_table
    from benchmarks.speed_cases import CASES, case_measurement
else:  # run as a script: its folder is on sys.path
    import results_table
    from speed_cases import CASES, case_measurement

METHODS = ("sequential", "parallel", "threads", "threads-one-device")


def thread_map(one_device: bool):
    """Return a NumPyro ``chain_method``: each chain in its own thread and JAX device."""
    from concurrent.futures import ThreadPoolExecutor

    import jax
    import jax.numpy as jnp
    import numpy as np

    def wrap(chain_fn):
        def run(batched):
            devices = jax.local_devices()
            chains = jax.tree.leaves(batched)[0].shape[0]

            def one(i):
                device = devices[0 if one_device else i % len(devices)]
                args = jax.tree.map(lambda x: jax.device_put(np.asarray(x)[i], device), batched)
                return jax.device_put(jax.block_until_ready(chain_fn(args)), devices[0])

            with ThreadPoolExecutor(chains) as pool:
                outs = list(pool.map(one, range(chains)))
            return jax.tree.map(lambda *xs: jnp.stack(xs), *outs)

        return run

    return wrap


def resident_gb() -> float:
    """Return the resident memory of this process in GB (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9


class MemoryTrace:
    """Read this process's memory every ``every`` seconds inside a ``with`` block.

    On exit, :meth:`figures` gives the block's seconds, the peak and the first reading,
    and the growth while sampling: a least-squares slope over the middle half of the
    block (compilation before it, the draws' conversion after it).
    """

    def __init__(self, every: float) -> None:
        self.every = every
        self.trace: list[tuple[float, float]] = []
        self.seconds = 0.0
        self._done = threading.Event()

    def _watch(self) -> None:
        while not self._done.is_set():
            self.trace.append((time.perf_counter() - self._begin, resident_gb()))
            self._done.wait(self.every)

    def __enter__(self) -> MemoryTrace:
        """Start reading."""
        self._begin = time.perf_counter()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        return self

    def __exit__(self, *exc) -> None:
        """Stop reading and keep the block's seconds."""
        self.seconds = time.perf_counter() - self._begin
        self._done.set()
        self._watcher.join()

    def figures(self) -> dict:
        """Return seconds, peak_gb, start_gb, growth_mb_per_s and samples."""
        import numpy as np

        times, memory = (np.array(v) for v in zip(*self.trace, strict=True))
        middle = (times >= 0.25 * self.seconds) & (times <= 0.75 * self.seconds)
        growth = np.polyfit(times[middle], memory[middle], 1)[0] if middle.sum() >= 2 else np.nan
        return {
            "seconds": self.seconds, "peak_gb": float(memory.max()),
            "start_gb": float(memory[0]), "growth_mb_per_s": 1e3 * float(growth),
            "samples": len(self.trace),
        }  # fmt: skip


def run_children(commands: list[list[str]], args: argparse.Namespace) -> list[dict]:
    """Run each command (a ``--run`` of a script) in turn, ``args.repeat`` rounds.

    Each prints one JSON row last; the rows get the round and the load, are printed and
    are written to ``OUT/NAME.csv``.
    """
    rows: list[dict] = []
    for round_ in range(args.repeat):
        for cmd in commands:
            load = os.getloadavg()[0]
            result = subprocess.run([sys.executable, *cmd], capture_output=True, text=True)
            if result.returncode != 0:
                print(result.stderr[-2000:], file=sys.stderr)
                continue
            row = json.loads(result.stdout.strip().splitlines()[-1])
            row.update(round=round_, load_before=load, load_after=os.getloadavg()[0])
            results_table.report(row, rows)
    results_table.write_rows(rows, args)
    return rows


def run_one(case: str, d: int | None, method: str, draws: int, every: float, seed: int) -> dict:
    """Sample the case's model once with ``method``; return time and memory figures."""
    import pymc as pm

    from bayesldp.models import dirichlet
    from bayesldp.models.fitting import jax_devices_for_chains

    jax_devices_for_chains(2)
    data, m = case_measurement(case, seed, d)
    model = dirichlet.build_dirichlet_model(m)
    chain_method = thread_map(method == "threads-one-device") if "threads" in method else method
    with MemoryTrace(every) as memory:
        idata = pm.sample(
            draws=draws, tune=draws, chains=2, nuts_sampler="numpyro", progressbar=False,
            nuts_sampler_kwargs={"chain_method": chain_method},
            compute_convergence_checks=False, model=model, random_seed=seed,
        )  # fmt: skip
    return {
        "case": case, "d": data.d, "method": method, "draws": draws, "seed": seed,
        **memory.figures(), "posterior_shape": list(idata.posterior["f"].shape),
    }  # fmt: skip


def main(args: argparse.Namespace) -> list[dict]:
    """Run every (case, method) in a fresh process, methods in turn; write the table."""
    commands = []
    for case in args.cases:
        for method in args.methods:
            cmd = [
                __file__, "--run", case, "--method", method, "--draws", str(args.draws),
                "--every", str(args.every), "--seed", str(args.seed),
            ]  # fmt: skip
            commands.append(cmd + (["--d", str(args.d)] if args.d is not None else []))
    return run_children(commands, args)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["wordfreq"], choices=CASES)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--d", type=int, help="domain size (zipf, wordfreq)")
    parser.add_argument("--draws", type=int, default=200, help="warm-up and draws, each")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between reads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every method")
    parser.add_argument("--run", choices=CASES, help="run one case here and print JSON")
    parser.add_argument("--method", choices=METHODS, default="parallel")
    results_table.add_output_arguments(parser, "chain_memory")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.run is not None:
        found = run_one(
            parsed.run, parsed.d, parsed.method, parsed.draws, parsed.every, parsed.seed
        )
        print(json.dumps(found, default=float))
    else:
        main(parsed)
