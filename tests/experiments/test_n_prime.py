"""n': the users Base needs for the same MSE (NDSS Eq. 5)."""

from __future__ import annotations

from bayesldp.runner import get_experiment, run
from tests.helpers import tiny_config


def test_papers_claims_hold_on_a_small_zipf(tmp_path):
    """Norm-Sub beats Base on full-domain MSE; Base's n' is about n (Eq. 5 is exact)."""
    config = tiny_config("n_prime", methods=("base", "norm-sub"), datasets=("zipf:d=256,n=100000",),
                     reps=6)  # fmt: skip
    results = run(get_experiment("n_prime"), config, tmp_path).results
    mse = results[results["metric"] == "mse"].groupby("method")["value"].mean()
    assert mse["norm-sub"] < mse["base"] / 2
    nprime = results[results["metric"] == "n_prime"].groupby("method")["value"].mean()
    assert 0.8 < nprime["base"] / 100_000 < 1.25
    assert nprime["norm-sub"] > 2 * 100_000
