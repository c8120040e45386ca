"""The models' gammaln and digamma: PyTensor's values, a numba form PyTensor can cache."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special as scipy_special

import bayesldp

pytest.importorskip("pymc")
pytest.importorskip("numba")

import pytensor
import pytensor.tensor as pt

from bayesldp.models import _special, dirichlet

#: Positive arguments (concentrations), dense around digamma's zero, and negative ones.
POSITIVE = np.concatenate(
    [np.logspace(-8, 4, 4001), 1.4616321449683623 + np.linspace(-0.3, 0.3, 241)]
)

NEGATIVE = -np.linspace(0.013, 9.987, 401)  # no poles


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_RUN"])
def test_gammaln_and_its_gradient_equal_scipy(mode):
    x = pt.dvector("x")
    y = _special.gammaln(x)
    fn = pytensor.function([x], [y, pytensor.grad(y.sum(), x), _special.digamma(x)], mode=mode)
    value, grad, psi = fn(POSITIVE)
    np.testing.assert_allclose(value, scipy_special.gammaln(POSITIVE), rtol=1e-13, atol=1e-14)
    # the C backend runs PyTensor's own psi (1.5e-10 off near its zero); numba runs ours
    tol = {"rtol": 1e-14} if mode == "NUMBA" else {"rtol": 1e-9, "atol": 2e-10}
    np.testing.assert_allclose(grad, scipy_special.digamma(POSITIVE), **tol)
    np.testing.assert_allclose(psi, scipy_special.digamma(POSITIVE), **tol)
    if mode == "NUMBA":
        np.testing.assert_allclose(fn(NEGATIVE)[2], scipy_special.digamma(NEGATIVE), rtol=1e-11)
        assert np.isnan(fn(np.array([0.0, -3.0]))[2]).all()


def small_measurement(d=6, seed=0):
    counts = np.random.default_rng(seed).multinomial(5000, np.arange(d, 0, -1) / (d * (d + 1) / 2))
    return bayesldp.OUE(1.0, d).simulate(counts, np.random.default_rng(seed + 1))


def test_the_dirichlet_graph_is_cacheable():
    """Every op of bayes-dirichlet's log-density and gradient has a numba cache key."""
    from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key
    from pytensor.scalar.basic import Composite

    model = dirichlet.build_dirichlet_model(small_measurement())
    logp = model.logp()
    fn = pytensor.function(model.value_vars, [logp, *pytensor.grad(logp, model.value_vars)],
                           mode="NUMBA")  # fmt: skip
    missing = []
    for node in fn.maker.fgraph.toposort():
        inner = getattr(node.op, "scalar_op", None)
        nodes = inner.fgraph.toposort() if isinstance(inner, Composite) else []
        for n in (node, *nodes):
            if numba_funcify_and_cache_key(n.op, node=n)[1] is None:
                missing.append(str(n.op))
    assert not missing
