"""Experiment ``fixed_set``.

Fixed-set queries (US states / census regions; random partition for Zipf) vs eps.

Reproduces NDSS Fig. 8. Run ``python experiments/fixed_set.py [--quick | --full] [--out
DIR]``, the same as ``bayesldp experiment fixed_set``; results go to
``DIR/fixed_set/results.csv`` and the figure to ``DIR/fixed_set/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "fixed_set"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
