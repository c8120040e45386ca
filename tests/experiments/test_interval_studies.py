"""The interval studies: heavy-hitter FWER and interval coverage, checked one at a time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesldp.methods.registry import postprocess
from bayesldp.oracles import OUE
from bayesldp.runner import get_experiment
from bayesldp.runner._config import make_tasks
from bayesldp.runner._run import execute
from bayesldp.runner._seeding import method_seed
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
    from bayesldp.datasets import get_dataset
    from bayesldp.experiments.interval_coverage import queries, top_by_estimate

    experiment, task, data, m, _ = _first_measurement(
        "interval_coverage", methods=("base", "post-pos", "norm-sub", "eb-npmle")
    )
    children = experiment.seed_sequence(task).spawn(2)
    m = OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(children[0]))
    rows = execute(experiment, task).set_index(["method", "metric"])["value"]
    p = task.params
    sets = queries(
        get_dataset(TINY_DATA), p["items"], p["sets"], np.random.default_rng(children[1])
    )
    assert {"item", "set10", "set50", "group:block50", "group:random50"} == set(sets)
    for method in ("base", "post-pos", "norm-sub", "eb-npmle"):
        options = {
            "rng": np.random.default_rng(method_seed(experiment.seed_sequence(task), method))
        }
        est = postprocess(m, method, **(options if method == "eb-npmle" else {}))
        kind = est.interval([0]).kind
        for query, masks in [*sets.items(), ("top10_est", top_by_estimate(est.frequencies))]:
            hits = [
                lo <= data.frequencies[mask].sum() <= hi
                for mask in masks
                for lo, hi in [est.interval(np.flatnonzero(mask), 0.9)]
            ]
            assert rows[(method, f"covered:default={kind}:{query}")] == sum(hits)
            assert rows[(method, f"n:default={kind}:{query}")] == len(hits)


def test_interval_coverage_summary_counts_every_run_query_pair():
    from bayesldp.experiments.interval_coverage import summarise

    frame = pd.DataFrame({
        "dataset": "z", "oracle": "OUE", "epsilon": 1.0, "method": "base", "kind": "default",
        "query": "item", "rep": [0, 1, 2], "covered": [9.0, 10.0, 7.0], "n": [10.0] * 3,
        "outside": [0.0, 1.0, 0.0], "width": [0.1] * 3,
    })  # fmt: skip
    row = summarise(frame, 0.9).iloc[0]
    assert row["coverage"] == pytest.approx(26 / 30)
    assert row["se"] == pytest.approx(np.std([0.9, 1.0, 0.7], ddof=1) / np.sqrt(3))
    assert row["in_band"] and row["runs"] == 3 and row["outside_share"] == pytest.approx(1 / 30)
