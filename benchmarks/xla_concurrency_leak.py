"""The memory growth of concurrent chains without NumPyro or PyMC: JAX alone.

``chain_memory.py`` finds that a process grows while two NUTS chains execute at once,
however they are dispatched. This reproduces it with JAX only: a jitted while loop
whose body runs an inner while loop of data-dependent length (as a NUTS tree does)
taking a gradient and writing a checkpoint row per step, on a vector of size ``--d``.
Two copies run either one after the other (``seq``) or in two Python threads on two CPU
devices (``threads``), each in a fresh process; resident memory is read every second.
The growth is a least-squares slope over the middle half of the run::

    python benchmarks/xla_concurrency_leak.py --d 42178 --iterations 2000
"""

from __future__ import annotations

import argparse
import json
import threading

if __package__:  # imported as benchmarks.xla_concurrency_leak
    from benchmarks import results_table
    from benchmarks.chain_memory import MemoryTrace, run_children
else:  # run as a script: its folder is on sys.path
    import results_table
    from chain_memory import MemoryTrace, run_children

MODES = ("seq", "threads")


def run_one(mode: str, d: int, iterations: int, every: float) -> dict:
    """Run the two loops with ``mode``; return seconds, peak memory and its growth."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from bayesldp.models.fitting import jax_devices_for_chains  # imports no PyMC

    jax_devices_for_chains(2)
    jax.config.update("jax_enable_x64", True)

    def inner_grad(z):
        return jax.grad(lambda v: jnp.sum(jnp.log1p(jnp.exp(-jnp.abs(v))) * v))(z)

    @jax.jit
    def loop(x):
        def body(state):
            i, x, total = state

            def step(inner):
                j, y, rows = inner
                y = y - 0.001 * inner_grad(y)
                return j + 1, y, jax.lax.dynamic_update_index_in_dim(rows, y, j % 10, 0)

            start = (0, x, jnp.zeros((10, x.size)))
            _, x, rows = jax.lax.while_loop(lambda s: s[0] < 8 + i % 50, step, start)
            x = x + 1e-6 * rows.sum(0)
            return i + 1, x, total + jnp.sum(x)

        return jax.lax.while_loop(lambda s: s[0] < iterations, body, (0, x, 0.0))

    devices = jax.local_devices()
    starts = [
        jax.device_put(np.random.default_rng(i).normal(size=d), devices[i % len(devices)])
        for i in range(2)
    ]
    with MemoryTrace(every) as memory:
        if mode == "seq":
            for x in starts:
                jax.block_until_ready(loop(x))
        else:
            workers = [
                threading.Thread(target=lambda x=x: jax.block_until_ready(loop(x))) for x in starts
            ]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
    return {"mode": mode, "d": d, "iterations": iterations, **memory.figures()}


def main(args: argparse.Namespace) -> list[dict]:
    """Run each mode in a fresh process, in turn; write the table."""
    commands = [
        [__file__, "--run", mode, "--d", str(args.d), "--iterations", str(args.iterations),
         "--every", str(args.every)]
        for mode in args.modes
    ]  # fmt: skip
    return run_children(commands, args)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--d", type=int, default=42178, help="length of the vector")
    parser.add_argument("--iterations", type=int, default=2000, help="outer loop length")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between reads")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every mode")
    parser.add_argument("--run", choices=MODES, help="run one mode here and print JSON")
    results_table.add_output_arguments(parser, "xla_concurrency_leak")
    return parser


if __name__ == "__main__":
    parsed = build_parser().parse_args()
    if parsed.run is not None:
        print(json.dumps(run_one(parsed.run, parsed.d, parsed.iterations, parsed.every)))
    else:
        main(parsed)
