"""audit_oracle: every correct oracle passes tightly, broken ones are flagged."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import bayesldp
from bayesldp.audit import (
    audit_oracle,
    empirical_epsilon,
    support_event,
)
from bayesldp.audit._oracle import default_inputs
from benchmarks import audit_power as power

ALL = list(bayesldp.ORACLES)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
D = 5  # a small domain: every pair of inputs is searched
SAMPLES = 20_000


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("name", ALL)
def test_correct_oracles_pass_and_the_audit_is_tight(name, eps):
    res = audit_oracle(bayesldp.make_oracle(name, eps, D), samples=SAMPLES, rng=11)
    assert res.passed() and not res.contradicted, res.summary()
    assert res.epsilon_lower <= eps
    # tight: every pure oracle has an event of ratio exactly e^eps, and the audit finds it.
    # With 10,000 held-out users per input the log-ratio of the selected event has a
    # standard error of about 0.03-0.06, and the 99% bound sits ~2.3 of them lower:
    # a correct, tight audit is within 0.3 of eps (0.1 eps at large eps, where the
    # selected event under b is rare).
    assert abs(res.epsilon_hat - eps) < 0.3, res.summary()
    assert res.epsilon_lower > eps - max(0.3, 0.1 * eps), res.summary()


@pytest.mark.parametrize("eps", [0.5, 4.0])
@pytest.mark.parametrize("name", ALL)
def test_inflated_epsilon_is_detected(name, eps):
    cheat = power.inflated_oracle(name, eps, D, factor=2.0)
    assert cheat.epsilon == eps
    res = audit_oracle(cheat, samples=SAMPLES, rng=5)
    assert res.contradicted and not res.passed(), res.summary()
    assert res.epsilon_lower > eps


@pytest.mark.parametrize("eps", EPSILONS)
def test_ordered_subset_selection_is_detected(eps):
    """The old SS (own item in slot 0): its set is eps-LDP, its transmitted list is not."""
    leaky = power.OrderedSS(eps, D, k=2)
    res = audit_oracle(leaky, samples=SAMPLES, rng=5)
    assert res.contradicted, res.summary()
    assert res.counts[1] == 0  # an output impossible under b: infinite likelihood ratio
    assert res.epsilon_hat == math.inf
    # the same reports, sorted (the set), pass
    fixed = empirical_epsilon(
        lambda v, r: np.sort(leaky.privatize(v, r), axis=1),
        range(D),
        samples=SAMPLES,
        rng=5,
        event=[None, support_event(leaky)],
        epsilon=eps,
    )
    assert not fixed.contradicted, fixed.summary()


def test_order_leak_found_at_large_domain_by_the_position_event():
    """At d = 40 the raw outputs barely repeat; the slots of a and b still show the leak."""
    leaky = power.OrderedSS(1.0, 40, k=4)
    res = audit_oracle(leaky, inputs=[0, 1, 2], samples=SAMPLES, rng=1)
    assert res.contradicted and res.event == "position", res.summary()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"oracle": "GRR"}, "oracle"),
        ({"inputs": [0, 7]}, "inputs"),
        ({"inputs": [0, 1, 1]}, "inputs"),
        ({"samples": 0}, "samples"),
    ],
)
def test_audit_oracle_bad_input(kwargs, name):
    args = {"oracle": bayesldp.GRR(1.0, 4), **kwargs}
    with pytest.raises(ValueError, match=name):
        audit_oracle(args.pop("oracle"), **args)


def test_default_inputs():
    np.testing.assert_array_equal(default_inputs(5), np.arange(5))
    big = default_inputs(1000)
    assert big.size == 8 and big[0] == 0 and big[-1] == 999
    with pytest.raises(ValueError, match="domain_size"):
        default_inputs(1)


@pytest.mark.slow
def test_false_alarm_rate_over_many_seeds():
    """At confidence 0.99 at most 1% of audits of a correct oracle may flag it."""
    seeds = 10
    flagged = total = 0
    for name, eps in itertools.product(ALL, EPSILONS):
        oracle = bayesldp.make_oracle(name, eps, D)
        for seed in range(seeds):
            res = audit_oracle(oracle, samples=10_000, rng=1000 + seed)
            flagged += bool(res.contradicted)
            total += 1
    # P(Binomial(240, 0.01) > 7) < 0.5%: more than 7 would contradict the guarantee
    assert flagged <= stats.binom.ppf(0.995, total, 0.01), (flagged, total)


@pytest.mark.slow
def test_power_over_many_seeds():
    seeds = 10
    for name, eps in itertools.product(ALL, EPSILONS):
        cheat = power.inflated_oracle(name, eps, D, factor=2.0)
        hits = sum(
            bool(audit_oracle(cheat, samples=10_000, rng=seed).contradicted)
            for seed in range(seeds)
        )
        assert hits == seeds, (name, eps, hits)
