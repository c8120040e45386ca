"""Which count prior a consistent Bayesian oracle should use."""

from __future__ import annotations

from bayesldp.runner import get_experiment, run
from tests.helpers import tiny_config


def test_consistent_priors_rows(tmp_path):
    config = tiny_config("consistent_priors", datasets=("zipf:d=48,n=20000",))
    summary = run(get_experiment("consistent_priors"), config, tmp_path).summary
    priors = ("power-tilt", "lomax-tilt", "betaprime-tilt", "oracle-tilt")
    assert list(summary["method"]) == [*priors, "power-ns", "norm-sub"]
    assert (summary["mse"] > 0).all()
    assert summary.set_index("method").loc["lomax-tilt", ["s", "c"]].notna().all()
