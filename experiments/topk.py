"""Experiment ``topk``.

Top-k MSE vs k (eps = 1) and vs eps (k = 10).

Reproduces long paper Fig. 7-8. Run ``python experiments/topk.py [--quick | --full] [--out
DIR]``, the same as ``bayesldp experiment topk``; results go to ``DIR/topk/results.csv`` and
the figure to ``DIR/topk/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "topk"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
