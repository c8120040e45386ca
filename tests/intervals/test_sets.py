"""Estimate.interval and set_intervals: the natural kind, notes, centres and bad input."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import intervals
from bayesldp.estimate import Estimate, StoredDraws
from bayesldp.intervals._sets import RELIABLE_SIGMAS, flagged_sets
from bayesldp.methods.registry import method_names, postprocess
from tests.helpers import toy_measurement
from tests.intervals.test_variance import fixed_users


def test_natural_interval_kinds(rng):
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    assert postprocess(m, "base").interval([0]).kind == "normal"
    assert postprocess(m, "post-pos").interval([0]).kind == "normal"
    assert postprocess(m, "norm-sub").interval([0, 1]).kind == "normal"
    draws = rng.dirichlet(np.ones(30) * 5, size=100)
    bayes = Estimate(draws.mean(axis=0), "bayes-power", m, draws=draws)
    # a registered Bayesian model's default is the calibrated normal interval too; its
    # posterior interval is there on request
    assert bayes.interval([0]).kind == "normal"
    assert bayes.interval([0], method="posterior").kind == "posterior"
    unregistered = Estimate(draws.mean(axis=0), "my-model", m, draws=draws)
    assert unregistered.interval([0]).kind == "posterior"
    assert intervals.available_intervals(bayes) == ("normal", "posterior")


def test_every_method_without_draws_defaults_to_the_calibrated_normal_interval(rng):
    """The natural interval of every non-Bayesian method: the raw estimate's, no warning."""
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    for name in method_names(bayesian=False, needs_truth=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = postprocess(m, name)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            iv = est.interval(np.arange(10))
        expected = intervals.normal_interval(m, np.arange(10), clip_at_zero=name == "post-pos")
        assert (iv.kind, iv.centered_on) == ("normal", "raw estimate"), name
        assert tuple(iv) == pytest.approx(tuple(expected), abs=1e-15), name
        assert iv.center == pytest.approx(m.estimates[:10].sum(), abs=1e-15)


def test_the_note_says_when_the_answer_lies_outside(rng):
    m = toy_measurement([0.5, 0.4, 0.1, -0.2, -0.1, 0.3])  # noise sd about 0.03
    est = postprocess(m, "norm-sub")  # shifts every kept item down by 0.075
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a note, not a warning
        iv = est.interval([0])
    assert not iv.lo <= est.subset([0]) <= iv.hi
    assert "norm-sub's answer 0.425 lies outside" in iv.note and "raw estimate" in iv.note
    assert "note=" in repr(iv) and "centered_on='raw estimate'" in repr(iv)
    inside = postprocess(m, "base").interval([0])
    assert inside.note == "" and "note=" not in repr(inside)
    assert pickle.loads(pickle.dumps(iv)) == iv
    assert pickle.loads(pickle.dumps(iv)).note == iv.note


def test_centers_say_what_each_kind_is_built_around(rng):
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    est = postprocess(m, "norm-sub")
    idx = np.arange(5)
    with pytest.warns(RuntimeWarning, match="undercover"):
        boot = est.interval(idx, method="bootstrap")
    assert (boot.centered_on, boot.center) == ("method answer", pytest.approx(est.subset(idx)))
    with pytest.warns(RuntimeWarning, match="bias"):
        perc = est.interval(idx, method="percentile")
    sums = est.bootstrap().sample(0, 200)[:, idx].sum(axis=1)
    assert (perc.centered_on, perc.center) == ("bootstrap replicates", np.median(sums))
    draws = rng.dirichlet(np.ones(30) * 5, size=101)
    post = Estimate(draws.mean(axis=0), "bayes-power", m, draws=draws).interval(
        idx, method="posterior"
    )
    assert post.centered_on == "posterior draws"
    assert post.center == pytest.approx(np.median(draws[:, :5].sum(axis=1)))


def test_interval_bad_input(rng):
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    est = postprocess(m, "norm-sub")
    with pytest.raises(ValueError, match="method"):
        est.interval([0], method="wald")
    with pytest.raises(ValueError, match="method"):
        est.interval([0], method="posterior")
    draws = rng.dirichlet(np.ones(30), size=10)
    bayes = Estimate(draws.mean(axis=0), "bayes-power", m, draws=draws)
    with pytest.raises(ValueError, match="method"):
        bayes.interval([0], method="bootstrap")
    for bad in ("0.9", None, True, 1.0, 0.0, float("nan")):
        with pytest.raises(ValueError, match="prob"):
            est.interval([0], prob=bad)
    with pytest.raises(ValueError, match="indices"):
        est.interval([31])
    unregistered = Estimate(m.estimates, "my-method", m)
    with pytest.raises(ValueError, match="method"):
        unregistered.interval([0])
    assert unregistered.interval([0], method="normal").kind == "normal"


def test_interval_is_a_tuple_within_0_1(rng):
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    iv = postprocess(m, "base").interval(np.arange(30))
    lo, hi = iv
    assert (lo, hi) == iv and 0.0 <= lo <= hi <= 1.0
    assert iv.prob == 0.9 and iv.width == pytest.approx(hi - lo)


def test_warns_where_the_bootstrap_undercovers():
    m = toy_measurement([0.5, 0.4, 0.1, -0.2, -0.1, 0.3])  # noise sd about 0.03
    est = postprocess(m, "norm-sub")
    zero = int(np.flatnonzero(est.frequencies == 0)[0])
    with pytest.warns(RuntimeWarning, match="undercover") as record:
        iv = est.interval([zero], method="bootstrap")
    assert record[0].filename == __file__  # points at the caller
    assert "undercover" in iv.note
    with pytest.warns(RuntimeWarning, match="undercover"):
        est.interval([0, zero], method="bootstrap")  # a set holding one such item
    with pytest.warns(RuntimeWarning, match="bias"):
        est.interval([0], method="percentile")
    with pytest.warns(RuntimeWarning, match="norm-mul"):
        postprocess(m, "norm-mul").interval([0], method="bootstrap")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "undercover" not in est.interval([0, 1], method="bootstrap").note  # far above
        est.interval([zero])  # the natural interval: normal
        postprocess(m, "norm").interval([zero], method="bootstrap")  # linear: calibrated


def test_flagged_sets_rule():
    m = toy_measurement([0.5, 0.4, 0.1, -0.2, -0.1, 0.3])
    est = postprocess(m, "norm-hyb")
    masks = np.eye(6, dtype=bool)
    sd = np.sqrt(m.variance())
    expected = est.frequencies < RELIABLE_SIGMAS * sd
    np.testing.assert_array_equal(flagged_sets(est, masks, "bootstrap"), expected)
    assert not flagged_sets(est, masks, "normal").any()


def test_set_intervals_equal_one_set_at_a_time(rng):
    m = bayesldp.OUE(1.0, 40).simulate(fixed_users(40, 10**5), rng)
    masks = rng.random((6, 40)) < 0.3
    for method in ("base", "norm-hyb", "post-pos"):
        est = postprocess(m, method)
        for kind in intervals.available_intervals(est):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lo, hi, used = intervals.set_intervals(est, masks, 0.8, kind)
                one = [est.interval(np.flatnonzero(mk), 0.8, kind) for mk in masks]
            assert used == kind and all(iv.kind == kind for iv in one)
            np.testing.assert_allclose(lo, [iv.lo for iv in one], atol=1e-15)
            np.testing.assert_allclose(hi, [iv.hi for iv in one], atol=1e-15)


def test_declared_kind_is_the_natural_interval_even_with_draws(rng):
    """A registered method's ``MethodSpec.interval`` decides; its draws stay on request.

    An unregistered method that carries draws of its own gets 'posterior'.
    """
    m = bayesldp.OUE(1.0, 20).simulate(fixed_users(20, 10**4), rng)
    draws = rng.dirichlet(np.ones(20) * 3, size=300)
    est = Estimate(draws.mean(axis=0), "norm-sub", m, uncertainty=StoredDraws(draws))
    assert est.interval([0, 1]).kind == "normal"
    iv = est.interval([0, 1], method="posterior")
    sums = draws[:, :2].sum(axis=1)
    assert iv == pytest.approx(tuple(np.quantile(sums, [0.05, 0.95])))
    assert set(intervals.available_intervals(est)) == {"normal", "posterior", "bootstrap",
                                                        "percentile"}  # fmt: skip
    own = Estimate(draws.mean(axis=0), "my-own-method", m, uncertainty=StoredDraws(draws))
    assert own.interval([0, 1]).kind == "posterior"
    assert own.interval([0, 1]) == pytest.approx(tuple(iv))
    with pytest.raises(ValueError, match="not registered"):
        Estimate(draws.mean(axis=0), "my-own-method", m).interval([0])


def test_eb_npmle_defaults_to_the_normal_interval_and_keeps_its_posterior(rng):
    """eb-npmle's posterior intervals undercover set sums: its default is the normal one."""
    m = bayesldp.OUE(1.0, 30).simulate(fixed_users(30, 10**4), rng)
    est = postprocess(m, "eb-npmle", n_draws=50, n_boot=2, rng=0)
    iv = est.interval(np.arange(10))
    assert (iv.kind, iv.centered_on) == ("normal", "raw estimate")
    assert tuple(iv) == pytest.approx(tuple(intervals.normal_interval(m, np.arange(10))))
    assert est.interval(np.arange(10), method="posterior").kind == "posterior"
