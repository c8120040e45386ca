"""Empirical bias and variance per rank."""

from __future__ import annotations

import numpy as np

from bayesldp.experiments.bias_variance import bias_variance_table
from bayesldp.runner import get_experiment, run
from tests.helpers import tiny_config


def test_bias_variance_table_matches_direct_moments(tmp_path):
    config = tiny_config("bias_variance", methods=("base", "norm-sub"), reps=2,
                     params={"runs": 3, "ranks": 5})  # fmt: skip
    table = bias_variance_table(run(get_experiment("bias_variance"), config, tmp_path).results)
    assert set(table["runs"]) == {6}
    base = table[table["method"] == "base"]
    assert (base["variance"] > 0).all()
    np.testing.assert_allclose(base["mse"], base["bias"] ** 2 + base["variance"], rtol=1e-9)
