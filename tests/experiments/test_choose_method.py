"""Choosing a method with a synthetic dataset fitted to the estimate."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp.experiments.choose_method import choice_table


def test_choice_table_picks_the_argmin():
    rows = []
    for param, errs in ((0.0, (3.0, 1.0)), (1.0, (0.5, 2.0)), (2.0, (2.0, 0.1))):
        for m, v in zip(("a", "power-ns"), errs, strict=True):
            rows.append(
                dict(dataset="x", epsilon=1.0, rep=0, metric="full", method=m, param=param, value=v)
            )
    table = choice_table(pd.DataFrame(rows)).set_index("fit")
    assert table.loc["norm-sub", "chosen"] == "a" and not table.loc["norm-sub", "match"]
    assert table.loc["norm-sub", "regret"] == pytest.approx(3.0)
    assert table.loc["power-ns", "match"] and table.loc["power-ns", "regret"] == 1.0
