"""The ``bayesldp`` command line: one module per command.

``demo`` (:mod:`bayesldp.cli._demo`), ``experiment`` (``_experiment``), ``aggregate``
(``_aggregate``) and ``audit`` (``_audit``); what they share (the parser, option types,
user errors, output) is in ``_common``. Every command spells an option the same way
(``--epsilon``, ``--d``, ``--n``, ``--oracle``, ``--seed``, ``--reps``, ``--methods``,
``--datasets``), reads counts written as ``1e6``, and imports the numerical packages
only when it runs, so ``bayesldp --version`` and ``--help`` are immediate. Everything
printed is printed here: the library returns data and logs.
"""

from bayesldp.cli._main import main

__all__ = ["main"]
