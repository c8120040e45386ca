"""Experiment ``set_value_mse``.

Random set-value MSE vs set size rho (10-90% and 1-10%), eps = 1.

Reproduces long paper Fig. 5-6. Run ``python experiments/set_value_mse.py [--quick | --full]
[--out DIR]``, the same as ``bayesldp experiment set_value_mse``; results go to
``DIR/set_value_mse/results.csv`` and the figure to ``DIR/set_value_mse/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "set_value_mse"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
