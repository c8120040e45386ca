"""Experiment ``bias_variance``.

Empirical bias and variance per rank (Zipf, eps = 1).

Reproduces NDSS Fig. 4. Run ``python experiments/bias_variance.py [--quick | --full] [--out
DIR]``, the same as ``bayesldp experiment bias_variance``; results go to
``DIR/bias_variance/results.csv`` and the figure to ``DIR/bias_variance/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "bias_variance"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
