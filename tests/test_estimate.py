"""Estimate: queries against direct computation, a read-only info, no hidden state."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import numpy as np
import pytest

import bayesldp
from bayesldp.estimate import Estimate
from tests.helpers import toy_measurement


def test_subset_top_k_and_mask():
    est = bayesldp.postprocess(toy_measurement([0.1, 0.4, 0.2, 0.3]), "base")
    assert est.subset([1, 3]) == pytest.approx(0.7)
    assert est.subset(np.array([True, False, True, False])) == pytest.approx(0.3)
    assert est.subset(2) == pytest.approx(0.2)
    idx, vals = est.top_k(2)
    np.testing.assert_array_equal(idx, [1, 3])
    np.testing.assert_allclose(vals, [0.4, 0.3])


def test_top_k_ties_by_index():
    est = bayesldp.postprocess(toy_measurement([0.25, 0.25, 0.25, 0.25]), "base")
    np.testing.assert_array_equal(est.top_k(3)[0], [0, 1, 2])


def test_interval_from_draws(rng):
    m = toy_measurement([0.5, 0.3, 0.2])
    draws = rng.dirichlet([50, 30, 20], size=4000)
    est = Estimate(draws.mean(axis=0), "test", m, draws=draws)
    lo, hi = est.interval([0, 1], prob=0.9)
    sums = draws[:, :2].sum(axis=1)
    assert lo == pytest.approx(np.quantile(sums, 0.05))
    assert hi == pytest.approx(np.quantile(sums, 0.95))
    with pytest.raises(ValueError, match="prob"):
        est.interval([0], prob=1.5)


def test_estimate_rejects_bad_frequencies():
    m = toy_measurement([0.5, 0.5])
    with pytest.raises(ValueError, match="shape"):
        Estimate(np.zeros(3), "x", m)
    with pytest.raises(ValueError, match="non-finite"):
        Estimate(np.array([np.nan, 1.0]), "x", m)


def test_info_is_read_only_and_postprocess_makes_a_new_estimate():
    m = toy_measurement([0.5, 0.3, 0.2])
    info = {"delta": 0.1}
    est = Estimate(m.estimates.copy(), "x", m, info=info)
    info["delta"] = 99.0  # the caller's dict is copied, not kept
    assert est.info["delta"] == 0.1
    with pytest.raises(TypeError):
        est.info["delta"] = 0.2  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.info = {}  # type: ignore[misc]
    made = bayesldp.postprocess(m, "norm-sub")
    assert made.info["options"] == {} and made.info["backend"] == "numpy"
    with pytest.raises(TypeError):
        made.info["backend"] = "cvxpy"  # type: ignore[index]
    more = dataclasses.replace(made, info={**made.info, "note": "added"})
    assert more.info["note"] == "added" and "note" not in made.info
    with pytest.raises(ValueError, match="info"):
        Estimate(m.estimates.copy(), "x", m, info=[("a", 1)])  # type: ignore[arg-type]


def test_no_value_in_any_info_is_a_function(rng):
    """Info holds diagnostics, not behaviour: no closure or other callable is stored."""
    m = bayesldp.OUE(1.0, 30).simulate(np.arange(30) * 50 + 10, rng)
    for name in bayesldp.method_names(bayesian=False, needs_truth=False):
        est = bayesldp.postprocess(m, name, **({"rng": 0} if name == "eb-npmle" else {}))
        assert not [k for k, v in est.info.items() if callable(v)], name


def test_an_estimate_pickles_with_its_info(rng):
    m = bayesldp.OUE(1.0, 20).simulate(np.arange(20) * 30 + 5, rng)
    est = bayesldp.postprocess(m, "norm-hyb")
    est.bootstrap(10, rng=0)  # fills the result cache, which is not pickled
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.frequencies, est.frequencies)
    assert dict(back.info) == dict(est.info)
    with pytest.raises(TypeError):
        back.info["kept"] = 0  # type: ignore[index]
    assert back.interval([0, 1]) == est.interval([0, 1])


def test_queries_need_no_object_installed_at_import():
    """Estimate's queries call their implementations; importing bayesldp installs nothing."""
    code = (
        "import numpy as np\n"
        "from bayesldp.estimate import Estimate\n"
        "from bayesldp.measurement import Measurement\n"
        "m = Measurement.from_support_counts([600, 300, 100], 1000, 0.5, 0.25)\n"
        "draws = np.random.default_rng(0).dirichlet([50, 30, 20], size=200)\n"
        "est = Estimate(draws.mean(axis=0), 'x', m, draws=draws)\n"
        "print(est.interval([0]).kind, est.interval([0], method='normal').kind,"
        " len(est.heavy_hitters(0.3)), est.top_k_probability(1).sum())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["posterior", "normal", "1", "1.0"]
