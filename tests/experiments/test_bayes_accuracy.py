"""Accuracy and coverage of the Bayesian methods."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp import models
from bayesldp.runner import build_config, get_experiment, run
from tests.helpers import result_values


@pytest.mark.slow
def test_bayes_accuracy_reports_coverage(tmp_path):
    experiment = get_experiment("bayes_accuracy")
    config = build_config(experiment, "quick", reps=1, datasets=("zipf:d=64,n=20000",),
                          methods=("norm-sub", "bayes-power", "bayes-consistent",
                                   "bayes-dirichlet"))  # fmt: skip
    result = run(experiment, config, tmp_path)
    cover = pd.read_csv(tmp_path / "coverage.csv")
    assert set(cover["method"]) == {"bayes-power", "bayes-consistent", "bayes-dirichlet"}
    # the sampler "auto" took is recorded for the models fitted by bayesldp.models.fit
    ran = result.results[result.results["metric"].str.startswith("sampler:")]
    assert set(ran["method"]) == {"bayes-dirichlet"} and (ran["value"] == 1.0).all()
    assert ran["metric"].iloc[0] in {f"sampler:{name}" for name in models.available_samplers()}
    assert cover[["cover90_set10", "cover90_set50", "cover90_top10"]].notna().all().all()
    assert (tmp_path / "coverage.png").exists() and (tmp_path / "targets.csv").exists()
    again = run(experiment, config, tmp_path)
    assert again.tasks_run == 0
    pd.testing.assert_frame_equal(result_values(result.results), result_values(again.results))
