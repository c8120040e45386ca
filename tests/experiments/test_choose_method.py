"""The choose_method study: regrets of the choice, of each single fit and of fixed policies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesldp.choose import FITS
from bayesldp.experiments.choose_method import CHOICE, FIT_CODES, METHODS, TRUE, choice_table


def test_choice_table_measures_regret_on_the_true_errors():
    rows = [
        dict(dataset="x", epsilon=1.0, rep=0, metric="full", method=m, param=TRUE, value=v)
        for m, v in (("a", 3.0), ("power-ns", 1.5), ("b", 1.0))
    ]
    rows.append(dict(dataset="x", epsilon=1.0, rep=0, metric="full", method="power-ns",
                     param=CHOICE, value=1.0))  # fmt: skip
    for fit, winner in zip(FITS, ("a", "b"), strict=True):
        rows.append(dict(dataset="x", epsilon=1.0, rep=0, metric="full", method=winner,
                         param=FIT_CODES[fit], value=np.nan))  # fmt: skip
    table = choice_table(pd.DataFrame(rows)).iloc[0]
    assert table["best"] == "b" and table["chosen"] == "power-ns"
    assert table["regret"] == pytest.approx(1.5)
    assert table[f"regret[{FITS[0]}]"] == pytest.approx(3.0)
    assert table[f"regret[{FITS[1]}]"] == pytest.approx(1.0)
    assert table["always[a]"] == pytest.approx(3.0) and table["always[b]"] == 1.0


def test_the_candidates_include_the_library_defaults_and_empirical_bayes():
    from bayesldp.choose import default_methods

    assert set(default_methods()) < set(METHODS) and "eb-npmle" in METHODS


def test_hindsight_policies_pick_the_best_method_of_each_cell():
    from bayesldp.experiments.choose_method import CANDIDATES, hindsight_policies

    a, b = CANDIDATES[0], CANDIDATES[1]
    summary = pd.DataFrame(
        {
            f"always[{a}]": [1.0, 3.0],
            f"always[{b}]": [2.0, 1.5],
            "always[eb-npmle]": [4.0, 1.1],
        }
    )
    bounds = hindsight_policies(summary)
    assert bounds["hindsight[best method per cell]"] == pytest.approx((1.0 + 1.1) / 2)
    assert bounds["hindsight[best candidate per cell]"] == pytest.approx((1.0 + 1.5) / 2)


def test_ratio_to_cell_best_divides_by_the_method_best_on_average(tmp_path):
    from bayesldp.experiments.choose_method import plot

    rows = []
    for rep, errors, chosen in ((0, {"a": 1.0, "b": 2.0}, "a"), (1, {"a": 3.0, "b": 1.0}, "b")):
        for m, v in errors.items():
            rows.append(dict(dataset="x", epsilon=1.0, rep=rep, metric="full", method=m,
                             param=TRUE, value=v))  # fmt: skip
        rows.append(dict(dataset="x", epsilon=1.0, rep=rep, metric="full", method=chosen,
                         param=CHOICE, value=1.0))  # fmt: skip
    summary = plot(pd.DataFrame(rows), tmp_path).iloc[0]
    # b is best on average (1.5 against 2.0): the choice's errors 1 and 1 over b's 2 and 1
    assert summary["ratio_to_cell_best"] == pytest.approx((0.5 + 1.0) / 2)
    assert summary["regret"] == pytest.approx(1.0)
    assert (tmp_path / "overall.csv").exists() and (tmp_path / "report.md").exists()
