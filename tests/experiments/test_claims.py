"""The claims report over saved results."""

from __future__ import annotations

import pandas as pd

from bayesldp.experiments import claims
from bayesldp.runner import get_experiment, run
from tests.helpers import FEW_METHODS, tiny_config


def test_claims_report_reads_saved_results(tmp_path):
    for name in ("full_domain_mse", "set_value_mse"):
        run(get_experiment(name), tiny_config(name, methods=FEW_METHODS), tmp_path / name)
    table = claims.claims(tmp_path)
    assert {"Base MSE / Norm-Sub MSE", "MLE-Apx MSE / Norm-Sub MSE"} <= set(table["claim"])
    assert (table["ours"] > 0).all()
    assert claims.main(["--out", str(tmp_path)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "claims.csv"), table)
