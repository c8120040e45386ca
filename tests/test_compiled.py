"""nutpie's compiled model cached across processes (models.compiled, models.special).

The cached callbacks must be the same functions as nutpie's own: log-density, gradient
and expansion at random points, before and after another measurement is swapped in.
The Dirichlet normaliser's gammaln must keep PyTensor's values and gradient while
letting PyTensor cache the whole graph.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special as sp

import bayesldp

pytest.importorskip("pymc")
pytest.importorskip("numba")

import pytensor
import pytensor.tensor as pt

from bayesldp.models import compiled, dirichlet, special
from bayesldp.models.likelihood import move_followers, set_measurement

ROOT = Path(__file__).resolve().parents[1]
#: Positive arguments (concentrations), dense around digamma's zero, and negative ones.
POSITIVE = np.concatenate(
    [np.logspace(-8, 4, 4001), 1.4616321449683623 + np.linspace(-0.3, 0.3, 241)]
)
NEGATIVE = -np.linspace(0.013, 9.987, 401)  # no poles


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_RUN"])
def test_gammaln_and_its_gradient_equal_scipy(mode):
    x = pt.dvector("x")
    y = special.gammaln(x)
    fn = pytensor.function([x], [y, pytensor.grad(y.sum(), x), special.digamma(x)], mode=mode)
    value, grad, psi = fn(POSITIVE)
    np.testing.assert_allclose(value, sp.gammaln(POSITIVE), rtol=1e-13, atol=1e-14)
    # the C backend runs PyTensor's own psi (1.5e-10 off near its zero); numba runs ours
    tol = {"rtol": 1e-14} if mode == "NUMBA" else {"rtol": 1e-9, "atol": 2e-10}
    np.testing.assert_allclose(grad, sp.digamma(POSITIVE), **tol)
    np.testing.assert_allclose(psi, sp.digamma(POSITIVE), **tol)
    if mode == "NUMBA":
        np.testing.assert_allclose(fn(NEGATIVE)[2], sp.digamma(NEGATIVE), rtol=1e-11)
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


def call_logp(model, x):
    fn = model.compiled_logp_func.ctypes
    x = np.ascontiguousarray(x, dtype=np.float64)
    grad, logp = np.empty_like(x), np.empty(())
    ptr = ctypes.POINTER(ctypes.c_double)
    code = fn(x.size, x.ctypes.data_as(ptr), grad.ctypes.data_as(ptr), logp.ctypes.data_as(ptr),
              ctypes.c_void_p(model.user_data.ctypes.data))  # fmt: skip
    return code, float(logp), grad


def call_expand(model, x):
    fn = model.compiled_expand_func.ctypes
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty(model.n_expanded)
    ptr = ctypes.POINTER(ctypes.c_double)
    code = fn(x.size, out.size, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr),
              ctypes.c_void_p(model.user_data.ctypes.data))  # fmt: skip
    return code, out


def with_current_data(model, nutpie_model):
    current = {v.name: v.get_value() for v in model.data_vars if v.name in nutpie_model.shared_data}
    return nutpie_model.with_data(**current)


def test_cached_callbacks_equal_nutpies():
    nutpie = pytest.importorskip("nutpie")
    if nutpie.__version__ not in compiled.NUTPIE_VERSIONS:
        pytest.skip("compile_nutpie falls back to nutpie's own compilation for this version")
    m = small_measurement()
    model = dirichlet.build_dirichlet_model(m)
    ours = compiled.compile_nutpie(model)
    theirs = nutpie.compile_pymc_model(model, backend="numba")
    assert ours.n_dim == theirs.n_dim and ours.n_expanded == theirs.n_expanded
    rng = np.random.default_rng(2)
    other = small_measurement(seed=5)
    for swap in (False, True):
        if swap:  # another measurement, as models.fit swaps it in
            set_measurement(model, "counts", other)
            move_followers(model, other)
            ours, theirs = with_current_data(model, ours), with_current_data(model, theirs)
        start = theirs.initial_point_func(1)
        for k in range(4):
            x = start + (0 if k == 0 else rng.normal(0, 1, start.size))
            code, logp, grad = call_logp(ours, x)
            ref_code, ref_logp, ref_grad = call_logp(theirs, x)
            assert code == ref_code == 0
            assert logp == pytest.approx(ref_logp, rel=1e-12)
            np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(
                call_expand(ours, x)[1], call_expand(theirs, x)[1], rtol=1e-12
            )
    bad = call_logp(ours, np.full(ours.n_dim, np.nan))[0]
    assert bad == call_logp(theirs, np.full(theirs.n_dim, np.nan))[0] != 0


def test_untested_nutpie_versions_fall_back(monkeypatch):
    nutpie = pytest.importorskip("nutpie")
    monkeypatch.setattr(compiled, "NUTPIE_VERSIONS", ())
    calls = []
    monkeypatch.setattr(nutpie, "compile_pymc_model", lambda model, **kw: calls.append(kw) or "own")
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x")
    assert compiled.compile_nutpie(model) == "own" and calls == [{"backend": "numba"}]


def test_compile_nutpie_refuses_what_is_not_a_model_to_sample():
    import pymc as pm

    for bad in (None, object(), "model", 3):
        with pytest.raises(ValueError, match=r"model must be a pymc\.Model"):
            compiled.compile_nutpie(bad)
    with pm.Model() as empty:
        pm.Data("x", np.zeros(3))
    with pytest.raises(ValueError, match="no free random variable"):
        compiled.compile_nutpie(empty)


SCRIPT = """
import numpy as np, bayesldp
from bayesldp.models import compiled, dirichlet
counts = np.random.default_rng(0).multinomial(5000, np.full(7, 1 / 7))
m = bayesldp.OUE(1.0, 7).simulate(counts, np.random.default_rng(1))
c = compiled.compile_nutpie(dirichlet.build_dirichlet_model(m))
print(c.compiled_logp_func.cache_hits, c.compiled_expand_func.cache_hits)
"""


@pytest.mark.slow
def test_a_second_process_loads_the_callbacks_from_cache(tmp_path):
    nutpie = pytest.importorskip("nutpie")
    if nutpie.__version__ not in compiled.NUTPIE_VERSIONS:
        pytest.skip("compile_nutpie falls back to nutpie's own compilation for this version")
    env = {**__import__("os").environ, "PYTENSOR_FLAGS": f"base_compiledir={tmp_path}"}
    runs = [
        subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       env=env, cwd=ROOT, check=True, timeout=900).stdout.split()
        for _ in range(2)
    ]  # fmt: skip
    first, second = (list(map(int, r[-2:])) for r in runs)
    assert first == [0, 0]  # an empty cache: compiled and written
    assert second[0] >= 1 and second[1] >= 1  # read back
