"""p and q at large and small epsilon: no overflow, accurate to the last digits."""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import bayesldp

ALL = list(bayesldp.ORACLES)


LARGE_EPS = [50.0, 100.0, 708.5, 709.7, 710.0, 1000.0]


def _exact_pq(name, eps, d, oracle):
    """Return p and q from their textbook forms, in 80-digit decimal arithmetic."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        e = Decimal(eps).exp()
        if name == "GRR":
            p, q = e / (e + d - 1), 1 / (e + d - 1)
        elif name == "OUE":
            p, q = Decimal("0.5"), 1 / (e + 1)
        elif name == "SUE":
            h = (Decimal(eps) / 2).exp()
            p, q = h / (h + 1), 1 / (h + 1)
        elif name == "HR":
            p, q = e / (e + 1), Decimal("0.5")
        elif name == "SS":
            k = oracle.k
            p = k * e / (k * e + d - k)
            q = p * (k - 1) / (d - 1) + (1 - p) * k / (d - 1)
        else:
            g = oracle.g
            c = Decimal(Fraction(oracle.collision_probability).numerator) / Decimal(
                Fraction(oracle.collision_probability).denominator
            )
            p = e / (e + g - 1)
            q = c * p + (1 - c) / (e + g - 1)
        return float(p), float(q)


@pytest.mark.parametrize("eps", LARGE_EPS)
@pytest.mark.parametrize("name", ALL)
def test_large_epsilon(name, eps, rng):
    d = 40
    oracle = bayesldp.make_oracle(name, eps, d)
    p, q = _exact_pq(name, eps, d, oracle)
    assert oracle.p == pytest.approx(p, rel=1e-13, abs=1e-300)
    assert oracle.q == pytest.approx(q, rel=1e-13, abs=1e-300)
    values = rng.integers(0, d, 2000)
    m = oracle.aggregate(oracle.privatize(values, rng))
    assert m.n == 2000 and np.isfinite(m.estimates).all()
    if name in ("GRR", "SS") or (name == "OLH" and eps >= 100):
        # the truth comes through: own value always supported, others almost never
        assert np.all(m.support_counts >= np.bincount(values, minlength=d))
    sim = oracle.simulate(np.bincount(values, minlength=d), rng)
    assert np.isfinite(sim.estimates).all()
    assert np.isfinite(oracle.variance(np.full(d, 1 / d))).all()


@pytest.mark.parametrize("eps", [1e-9, 0.01])
def test_small_epsilon_is_accurate(eps):
    """The exp(-eps) forms lose nothing at small eps either."""
    d = 10
    oracle = bayesldp.GRR(eps, d)
    assert oracle.p == pytest.approx(math.exp(eps) / (math.exp(eps) + d - 1), rel=1e-14)
    assert bayesldp.OUE(eps, d).q == pytest.approx(1 / (math.exp(eps) + 1), rel=1e-14)
