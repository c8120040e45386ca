"""Experiment ``full_domain_mse``.

Full-domain MSE vs eps.

Reproduces long paper Fig. 3-4; NDSS Fig. 3. Run ``python experiments/full_domain_mse.py
[--quick | --full] [--out DIR]``, the same as ``bayesldp experiment full_domain_mse``;
results go to ``DIR/full_domain_mse/results.csv`` and the figure to
``DIR/full_domain_mse/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "full_domain_mse"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
