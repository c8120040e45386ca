"""Every experiment's quick grid runs in this process, on a tiny dataset, with its files.

The command line's own run of an experiment (a subprocess, on Dask) is checked once, in
``tests/cli/test_experiment.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayesldp.runner import find_experiments, get_experiment, run
from tests.helpers import TINY_DATA, tiny_config

#: A few methods from both of the papers' panels.
FEW = ("base", "norm", "norm-sub", "norm-hyb", "power-ns")
#: Methods where an experiment needs particular ones.
METHODS = {
    "mle_gap": ("base", "cls", "mle-apx", "mle"),
    "consistent_priors": ("norm-sub", "power-ns"),
    "bayes_accuracy": ("norm-sub", "power-ns"),
    "eb_accuracy": ("eb-npmle", "oracle-bayes", "norm-sub", "power-ns"),
}


@pytest.mark.parametrize("name", sorted(find_experiments()))
def test_every_experiment_runs_its_quick_grid(name, tmp_path):
    methods = METHODS.get(name, FEW)
    oracles = ("OUE",) if name == "mle_gap" else None
    config = tiny_config(name, methods=methods, oracles=oracles)
    assert config.mode == "quick"
    result = run(get_experiment(name), config, tmp_path)
    results = pd.read_csv(tmp_path / "results.csv", keep_default_na=False, na_values=[""])
    assert (tmp_path / "figure.png").stat().st_size > 1000
    assert (tmp_path / "summary.csv").stat().st_size > 0
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["tasks"] == meta["tasks_done"] == result.tasks_run >= 1
    assert set(methods) <= set(results["method"])
    assert set(results["dataset"]) == {TINY_DATA} and set(results["rep"]) == {0}
    assert np.isfinite(results["value"].dropna()).all()
    assert {"seed", "seed_entropy", "bayesldp_version", "epsilon", "rep", "oracle"} <= set(results)
