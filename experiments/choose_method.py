"""Experiment ``choose_method``.

Choosing a method with a synthetic dataset fitted to the estimate.

Reproduces NDSS Fig. 9. Run ``python experiments/choose_method.py [--quick | --full] [--out
DIR]``, the same as ``bayesldp experiment choose_method``; results go to
``DIR/choose_method/results.csv`` and the figure to ``DIR/choose_method/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "choose_method"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
