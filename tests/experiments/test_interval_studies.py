"""The interval studies: heavy-hitter FWER and interval coverage, checked one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from bayesldp.methods.registry import postprocess
from bayesldp.runner import get_experiment
from bayesldp.runner._config import make_tasks
from bayesldp.runner._run import execute
from tests.helpers import TINY_DATA, tiny_config


def _first_measurement(name: str, **overrides):
    """Return the task of rep 0 and its measurement, re-simulated as the study's docstring says."""
    from bayesldp.datasets import get_dataset
    from bayesldp.oracles import OUE

    experiment = get_experiment(name)
    config = tiny_config(name, **overrides)
    task = make_tasks(config)[0]
    data = get_dataset(TINY_DATA)
    children = experiment.seed_sequence(task).spawn(3)
    m = OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(children[0]))
    return experiment, task, data, m, children


def test_heavy_hitter_fwer_scores_the_rules_as_defined():
    experiment, task, data, m, _ = _first_measurement(
        "heavy_hitter_fwer", methods=("base", "norm-sub"), params={"thresholds": (0.01, 0.05)}
    )
    rows = execute(experiment, task).set_index(["method", "param", "metric"])["value"]
    truth = data.frequencies
    for method in ("base", "norm-sub"):
        est = postprocess(m, method).frequencies
        for t in (0.01, 0.05):
            declared = est >= t
            assert rows[(method, t, "n_predicted")] == declared.sum()
            assert rows[(method, t, "family_error")] == np.any(truth[declared] <= t)
            heavy = truth >= t
            assert rows[(method, t, "recall")] == pytest.approx(
                (declared & heavy).sum() / heavy.sum()
            )
    for t in (0.01, 0.05):  # Holm rejects at least what Bonferroni does, at the same level
        assert rows[("holm", t, "n_predicted")] >= rows[("bonferroni", t, "n_predicted")]
        assert rows[("holm", t, "alpha")] == 0.05


def test_interval_coverage_counts_match_one_interval_at_a_time():
    from bayesldp.experiments.interval_coverage import queries

    experiment, task, data, m, children = _first_measurement(
        "interval_coverage", methods=("base", "norm-sub")
    )
    rows = execute(experiment, task).set_index(["method", "metric"])["value"]
    sets = queries(data.d, data.frequencies, 10, np.random.default_rng(children[1]))
    for method in ("base", "norm-sub"):
        est = postprocess(m, method)
        for query in ("set10", "set50", "top3", "item"):
            hits = [
                lo <= data.frequencies[mask].sum() <= hi
                for mask in sets[query]
                for lo, hi in [est.interval(np.flatnonzero(mask), 0.9, method="normal")]
            ]
            assert rows[(method, f"covered:normal:{query}")] == sum(hits)
            assert rows[(method, f"n:normal:{query}")] == len(hits)
    assert {"bootstrap_seconds", "covered:bootstrap:set10"} <= set(rows.loc["norm-sub"].index)
