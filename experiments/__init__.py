"""The experiments: one module per study, each declaring ``EXPERIMENT``.

This folder is installed as the package ``bayesldp.experiments``. Every module that
defines ``EXPERIMENT = Experiment(...)`` (:class:`bayesldp.runner.Experiment`) is an
experiment named after the module: ``bayesldp experiment NAME`` finds it by scanning
this package, and ``python experiments/NAME.py`` runs it as a script (``main(argv)``).
Modules without one (``claims.py``, ``bayes_grid.py``: reports over saved results) are
skipped. Adding an experiment is adding one module: copy ``full_domain_mse.py`` (its
task, grids, plot, ``EXPERIMENT``, and the ``main`` / ``__main__`` lines at the end) and
nothing else changes: the command line, the scripts' test and the runner pick it up.

The settings shared by the papers' figures are defined here.
"""

#: The papers' privacy budgets, and three for the quick grids.
EPS_PAPER = (0.2, 0.4, 0.7, 1.0, 1.5, 2.0)
EPS_QUICK = (0.5, 1.0, 2.0)
#: The papers' synthetic datasets and the real ones standing in for theirs.
SYNTHETIC = ("zipf", "beta")
REAL = ("wordfreq", "us_cities")
#: Repetitions of the real datasets in the papers' grids. Measured in one process: a
#: wordfreq task (d = 42,178) takes 0.1-0.3 s, a us_cities task ~0.2 s, so the real data
#: get the papers' 30 repetitions too.
REAL_REPS = 30
