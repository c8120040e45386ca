"""Experiment ``n_prime``.

N': users Base needs for the same MSE, vs n (Zipf, eps = 1).

Reproduces NDSS Fig. 5. Run ``python experiments/n_prime.py [--quick | --full] [--out
DIR]``, the same as ``bayesldp experiment n_prime``; results go to
``DIR/n_prime/results.csv`` and the figure to ``DIR/n_prime/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "n_prime"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
