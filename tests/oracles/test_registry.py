"""The oracle registry: names, parameters, and the facts declared on the classes."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp


def test_registry_and_make_oracle():
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]
    assert bayesldp.ORACLES["OLH"].parameter_names == ("g",)
    assert bayesldp.ORACLES["SS"].parameter_names == ("k",)
    olh = bayesldp.make_oracle("olh", 1.0, 100, g=7)
    assert isinstance(olh, bayesldp.OLH) and olh.g == 7
    ss = bayesldp.make_oracle("SS", 1.0, 100, k=9)
    assert ss.k == 9
    assert ss.parameters() == {"name": "SS", "epsilon": 1.0, "domain_size": 100, "k": 9}
    rebuilt = bayesldp.make_oracle(**olh.parameters())
    assert rebuilt.parameters() == olh.parameters()
    with pytest.raises(ValueError, match="'g'"):
        bayesldp.make_oracle("GRR", 1.0, 10, g=3)
    with pytest.raises(ValueError, match=r"'kk'.*accepts.*k"):
        bayesldp.make_oracle("SS", 1.0, 10, kk=3)
    with pytest.raises(ValueError, match="unknown oracle 'XYZ'"):
        bayesldp.make_oracle("XYZ", 1.0, 10)
    with pytest.raises(ValueError, match="g must"):
        bayesldp.make_oracle("OLH", 1.0, 10, g=1)
    with pytest.raises(ValueError, match="g must"):
        bayesldp.make_oracle("OLH", 1.0, 10, g=2.0)
    with pytest.raises(ValueError, match="k must"):
        bayesldp.make_oracle("SS", 1.0, 10, k=10)


def test_register_oracle_refuses_duplicates_and_strangers():
    from bayesldp.oracles import register_oracle

    with pytest.raises(ValueError, match="already registered"):
        register_oracle(type("GRR2", (bayesldp.GRR,), {"name": "GRR"}))
    with pytest.raises(ValueError, match="FrequencyOracle"):
        register_oracle(object)
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]


def test_oracle_class_lookup():
    from bayesldp.oracles import FrequencyOracle, oracle_class

    for name, cls in bayesldp.ORACLES.items():
        assert oracle_class(name) is cls
        assert oracle_class(name.lower()) is cls
    assert oracle_class("custom", FrequencyOracle) is FrequencyOracle
    assert oracle_class("ss", FrequencyOracle) is bayesldp.SS
    with pytest.raises(ValueError, match=r"unknown oracle 'custom'; name must be one of GRR"):
        oracle_class("custom")
    with pytest.raises(ValueError, match="already registered"):  # case-insensitive names
        bayesldp.oracles.register_oracle(type("Grr2", (bayesldp.GRR,), {"name": "grr"}))


def test_oracle_facts_on_the_classes():
    from bayesldp.oracles import FrequencyOracle

    facts = {
        name: (cls.likelihood_kind, cls.counts_sum_to_n, cls.bootstrap_simulation)
        for name, cls in bayesldp.ORACLES.items()
    }
    marginals = ("binomial", False, "binomial marginals")
    assert facts == {
        "GRR": ("multinomial", True, "exact (GRR mixture form)"),
        "OUE": ("binomial", False, "exact"),
        "SUE": ("binomial", False, "exact"),
        "OLH": marginals,
        "SS": marginals,
        "HR": marginals,
    }
    base = FrequencyOracle
    assert (base.likelihood_kind, base.counts_sum_to_n, base.bootstrap_simulation) == marginals
    # Only the oracles with dependent supports override the generic variance.
    own = {name for name, cls in bayesldp.ORACLES.items() if "_count_sum_variances" in vars(cls)}
    assert own == {"GRR", "SS", "HR"}


class _ToyOracle(bayesldp.FrequencyOracle):
    """A user's own oracle: independent bits with fixed p and q, no facts declared."""

    name = "TOYBITS"
    p, q, report_dtype = 0.7, 0.2, np.dtype(np.uint8)  # class attributes fill the properties

    def _unused(self, *args):
        raise NotImplementedError("the toy only simulates counts")

    _privatize_block = _check_values = _block_counts = _supports = _unused
    _arrow_arrays = _from_arrow_arrays = _unused


def test_a_registered_oracle_gets_the_generic_facts(rng):
    from bayesldp.intervals._bootstrap import bootstrap_counts
    from bayesldp.intervals._variance import subset_count_variance
    from bayesldp.measurement import Measurement, support_count_variance
    from bayesldp.methods.registry import postprocess
    from bayesldp.oracles import ORACLES, oracle_class, register_oracle
    from bayesldp.oracles._likelihood import likelihood_kind

    register_oracle(_ToyOracle)
    try:
        assert oracle_class("toybits") is _ToyOracle
        toy = bayesldp.make_oracle("ToyBits", 1.0, 8)
        x = np.array([4000, 2500, 1500, 1000, 500, 300, 100, 100])
        m = toy.simulate(x, rng)
        assert m.oracle == "TOYBITS" and likelihood_kind(m, "auto") == "binomial"
        custom = Measurement.from_support_counts(m.support_counts, m.n, m.p, m.q)
        # the generic variance: independent supports, as for an unregistered "custom"
        idx = [0, 1, 2]
        x_set = m.n * np.clip(m.estimates[idx].sum(), 0, 1)
        expect = support_count_variance(m.n, m.p, m.q, x_set, items=3)
        assert subset_count_variance(m, idx) == pytest.approx(expect, rel=1e-12)
        assert subset_count_variance(custom, idx) == pytest.approx(expect, rel=1e-12)
        base = postprocess(m, "base")
        normal = base.interval(idx, 0.9, method="normal")
        assert normal == postprocess(custom, "base").interval(idx, 0.9, method="normal")
        assert 0 <= normal.lo < normal.hi <= 1
        # the bootstrap simulates binomial marginals
        draws = bootstrap_counts(m, x, np.random.default_rng(4))
        again = np.random.default_rng(4)
        np.testing.assert_array_equal(draws, again.binomial(x, m.p) + again.binomial(m.n - x, m.q))
        estimate = postprocess(m, "norm-sub")
        boot = estimate.interval(idx, 0.9, method="bootstrap")
        assert boot.kind == "bootstrap" and 0 <= boot.lo <= boot.hi <= 1
        assert estimate.bootstrap().info["simulation"] == "binomial marginals"
    finally:
        ORACLES.pop("TOYBITS")
    assert list(bayesldp.ORACLES) == ["GRR", "OUE", "SUE", "OLH", "SS", "HR"]


def test_find_oracle_answers_any_name():
    """The look-up Measurement asks: None for anything that is not a registered name."""
    from bayesldp.oracles._registry import find_oracle

    assert find_oracle("grr") is bayesldp.GRR and find_oracle("Ss") is bayesldp.SS
    for name in ("custom", 3, None, b"GRR", ""):
        assert find_oracle(name) is None
