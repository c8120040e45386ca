"""The experiments: one module per study, each declaring ``EXPERIMENT``.

This folder is installed as the package ``bayesldp.experiments``. Every module that
defines ``EXPERIMENT = Experiment(...)`` (:class:`bayesldp.runner.Experiment`) is an
experiment named after the module, and ``bayesldp experiment NAME`` runs it: the command
imports that module (``bayesldp experiment list`` scans the package); ``import bayesldp``
never imports this package. Modules without one (``claims.py``, ``bayes_grid.py``:
reports over saved results) are skipped. Adding an
experiment is adding one module: copy ``full_domain_mse.py`` (its task, grids, plot and
``EXPERIMENT``) and nothing else changes: the command line, the tests and the runner
pick it up.

The settings shared by the papers' figures are defined here.
"""

#: The papers' privacy budgets, and three for the quick grids.
EPS_PAPER = (0.2, 0.4, 0.7, 1.0, 1.5, 2.0)
EPS_QUICK = (0.5, 1.0, 2.0)
#: The papers' synthetic datasets and the real ones standing in for theirs.
SYNTHETIC = ("zipf", "beta")
REAL = ("wordfreq", "us_cities")
#: Repetitions of the real datasets in the papers' grids: the papers' 30, as for the
#: synthetic data.
REAL_REPS = 30
