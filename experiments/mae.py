"""Experiment ``mae``.

Full-domain MAE vs eps.

Reproduces long paper Fig. 10 (appendix). Run ``python experiments/mae.py [--quick | --full]
[--out DIR]``, the same as ``bayesldp experiment mae``; results go to
``DIR/mae/results.csv`` and the figure to ``DIR/mae/figure.png``.
"""

from __future__ import annotations

import sys

from bayesldp.experiments.command import script_main

NAME = "mae"


def main(args: list[str] | None = None) -> int:
    """Run the experiment with command-line ``args`` (see ``--help``)."""
    return script_main(NAME, args)


if __name__ == "__main__":
    sys.exit(main())
