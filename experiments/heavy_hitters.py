"""Experiment ``heavy_hitters``.

Heavy-hitter precision/recall/F vs threshold and vs eps (Calibrate).

Reproduces Calibrate Fig. 5-8. Run ``python experiments/heavy_hitters.py [--quick | --full]
[--out DIR]``, the same as ``bayesldp experiment heavy_hitters``; results go to
``DIR/heavy_hitters/results.csv`` and the figure to ``DIR/heavy_hitters/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "heavy_hitters"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
