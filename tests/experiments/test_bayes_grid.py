"""The summary of a full-domain grid with the Bayesian methods."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp.experiments import bayes_grid


def test_bayes_grid_summary_counts_paired_wins_and_sampler_warnings(tmp_path):
    # a hand-made grid: 3 paired runs of 4 methods on one (dataset, eps); method a beats b in
    # runs 0 and 2; the only sampler warning is run 1's divergences (a BLAS notice is not one)
    values = {
        "bayes-consistent": [1.0, 4.0, 2.0],
        "power-ns": [2.0, 3.0, 3.0],
        "cls": [5.0, 5.0, 5.0],
        "cls@cvxpy": [5.0, 5.0005, 5.0],
    }
    warning = {("bayes-consistent", 1): "poor NUTS convergence: 7 divergent transitions; ..."}
    warning[("power-ns", 0)] = "PyTensor could not link to a BLAS installation."
    rows = [
        {
            "experiment": "full_domain_mse",
            "dataset": "zipf",
            "epsilon": 1.0,
            "rep": rep,
            "method": method,
            "metric": metric,
            "value": v if metric == "mse" else 1.0,
            "seconds": 0.5 + rep,
            "warning": warning.get((method, rep), ""),
        }
        for method, vs in values.items()
        for rep, v in enumerate(vs)
        for metric in ("mse", "sum")
    ]
    folder = tmp_path / "full_domain_mse"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    assert bayes_grid.main(["--out", str(tmp_path)]) == 0
    pairs = pd.read_csv(folder / "bayes_pairs.csv").set_index(["first", "second"])
    assert set(pairs.index) == {("bayes-consistent", "power-ns"), ("cls@cvxpy", "cls")}
    bc = pairs.loc[("bayes-consistent", "power-ns")]
    assert bc["mse_first"] == pytest.approx(7 / 3) and bc["mse_second"] == pytest.approx(8 / 3)
    assert bc["first_lower"] == 2 and bc["runs"] == 3
    assert pairs.loc[("cls@cvxpy", "cls"), "max_rel_diff"] == pytest.approx(1e-4)
    per = pd.read_csv(folder / "bayes_methods.csv").set_index("method")
    assert per.loc["bayes-consistent", "runs_warned"] == 1
    assert per.loc["bayes-consistent", "runs_divergent"] == 1
    assert per.loc["power-ns", "runs_warned"] == 0
    assert list(per["rank"]) == [1, 2, 3, 4] and per["median_seconds"].eq(1.5).all()
    with pytest.raises(SystemExit):
        bayes_grid.main(["--out", str(tmp_path / "nothing")])
