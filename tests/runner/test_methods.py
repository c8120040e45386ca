"""Methods in a task: seeds, the cvxpy backend by name, and whole warnings."""

from __future__ import annotations

import numpy as np
import pytest

from bayesldp.datasets import get_dataset
from bayesldp.oracles import OUE
from bayesldp.runner import apply_methods, get_experiment, method_rows, run
from tests.helpers import tiny_config


def test_cvxpy_backend_is_usable_by_name(tmp_path):
    pytest.importorskip("cvxpy")
    config = tiny_config("full_domain_mse", methods=("mle-apx", "mle-apx@cvxpy"),
                         datasets=("zipf:d=32,n=20000",))  # fmt: skip
    res = run(get_experiment("full_domain_mse"), config, tmp_path).results
    mse = res.query("metric == 'mse'").set_index("method")["value"]
    assert mse["mle-apx@cvxpy"] == pytest.approx(mse["mle-apx"], rel=1e-2)


def test_a_warning_is_kept_whole():
    """Ibu's advice comes after a semicolon, past the 110-120 characters once kept."""
    data = get_dataset("zipf:d=16,n=5000")
    m = OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(0))
    seq = np.random.SeedSequence(0)
    est, seconds, notes = apply_methods(m, ("ibu", "base"), seq, {"ibu": {"max_iter": 2}})
    assert notes["base"] == ""
    assert notes["ibu"].startswith("ibu stopped after") and len(notes["ibu"]) > 120
    assert notes["ibu"].endswith("(use 'mle' for the exact MLE, or raise max_iter)")
    rows = method_rows("sum", np.nan, {k: e.total for k, e in est.items()}, seconds, notes)
    assert [r[5] for r in rows] == [notes["ibu"], ""]


def test_a_reference_method_needs_the_truth():
    data = get_dataset("zipf:d=16,n=5000")
    m = OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(0))
    with pytest.raises(ValueError, match="needs the true counts"):
        apply_methods(m, ("oracle-bayes",), np.random.SeedSequence(0))
