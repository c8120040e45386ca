"""Bayesian models.

Log-densities against scipy, the exponent's posterior against quadrature, prior
predictive, reproducibility, consistency and errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesldp
from tests.helpers import zipf_frequencies

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from bayesldp.models import _chebyshev as chebyshev  # noqa: E402
from bayesldp.models import power  # noqa: E402
from bayesldp.models.consistent import _region, _scale_model  # noqa: E402

FAST = {"draws": 200, "tune": 200, "chains": 2, "exponent_points": 4, "n_draws": 400}


def small_measurement(rng, d=40, n=3000, eps=2.0, s=1.4):
    counts = rng.multinomial(n, zipf_frequencies(d, s))
    return bayesldp.OUE(eps, d).simulate(counts, rng)


def direct_loglik(m, s, pi=0.0):
    """Sum over items of log sum_x P(x) N(y_v; x, sigma_c), with scipy, every count."""
    n, y, sigma_c = m.n, m.estimates * m.n, m.sigma * m.n
    x = np.arange(1, n + 1)
    log_prior = -s * np.log(x) - logsumexp(-s * np.log(x))
    total = 0.0
    for yv in y:
        nonzero = math.log1p(-pi) + logsumexp(log_prior + stats.norm.logpdf(yv, x, sigma_c))
        if pi > 0:
            nonzero = np.logaddexp(nonzero, math.log(pi) + stats.norm.logpdf(yv, 0, sigma_c))
        total += nonzero
    return total


@pytest.mark.parametrize("zero_inflated", [False, True])
def test_log_density_matches_scipy(zero_inflated, rng):
    m = small_measurement(rng)
    lik = chebyshev.build(m, 0.5, 3.5)
    model = power.build_model(m, lik, zero_inflated)
    logp = model.compile_logp(jacobian=False)
    for s, pi in [(0.9, 0.3), (1.4, 0.1), (2.7, 0.6)]:
        point = {"s_interval__": math.log(s - 0.5) - math.log(3.5 - s)}  # PyMC's interval map
        expected = direct_loglik(m, s, pi if zero_inflated else 0.0)
        expected += stats.uniform.logpdf(s, 0.5, 3.0)
        if zero_inflated:
            point["pi_logodds__"] = math.log(pi / (1 - pi))
            expected += stats.beta.logpdf(pi, 1, 1)
        assert float(logp(point)) == pytest.approx(expected, abs=1e-4)


def test_chebyshev_series_accurate(rng):
    m = small_measurement(rng, d=200, n=50_000)
    lik = chebyshev.build(m, 0.5, 3.5)
    assert lik.max_error < 1e-3
    s = 1.234
    direct = np.array(
        [
            logsumexp(-s * np.log(np.arange(1, m.n + 1))
                      - (np.arange(1, m.n + 1) - yv) ** 2 / (2 * lik.sigma_c**2))
            for yv in lik.y[:10]
        ]
    )  # fmt: skip
    np.testing.assert_allclose(lik.item_log_evidence(s)[:10], direct, atol=1e-4)


def test_exponent_posterior_matches_quadrature(rng):
    m = small_measurement(rng, d=150, n=10_000, eps=2.0, s=1.6)
    y, sigma_c, n = m.estimates * m.n, m.sigma * m.n, m.n
    logx = np.log(np.arange(1, n + 1))
    kernel = -((np.arange(1, n + 1)[None, :] - y[:, None]) ** 2) / (2 * sigma_c**2)

    def log_post(s):  # uniform prior: the exact marginal likelihood, every count summed
        return logsumexp(kernel - s * logx, axis=1).sum() - y.size * logsumexp(-s * logx)

    coarse = np.linspace(0.5, 3.5, 31)
    mode = coarse[np.argmax([log_post(s) for s in coarse])]
    grid = np.linspace(max(0.5, mode - 0.6), min(3.5, mode + 0.6), 121)
    lp = np.array([log_post(s) for s in grid])
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mean = (w * grid).sum()
    sd = math.sqrt((w * (grid - mean) ** 2).sum())
    assert w[0] < 1e-6 and w[-1] < 1e-6  # the fine grid holds the whole posterior
    post = power.sample_exponent(
        m, zero_inflated=False, s_bounds=(0.5, 3.5),
        settings=models.SamplerSettings(draws=600, tune=300), rng=np.random.default_rng(11),
    )  # fmt: skip
    mcse = post.s.std() / math.sqrt(post.info["ess_bulk"]["s"])
    assert abs(post.s.mean() - mean) < 4 * mcse + 0.01 * sd
    assert post.s.std() == pytest.approx(sd, rel=0.15)


def test_prior_predictive_covers_data(rng):
    # Data drawn from the model itself (s = 1.8) must look typical under the prior
    # predictive: its summaries fall inside the predictive range.
    d, n = 300, 20_000
    x = np.arange(1, n + 1)
    w = x**-1.8
    counts = rng.choice(x, size=d, p=w / w.sum())
    oracle = bayesldp.OUE(2.0, d)
    total = int(counts.sum())
    m = oracle.measurement(
        rng.binomial(counts, oracle.p) + rng.binomial(total - counts, oracle.q), total
    )
    sims = power.prior_predictive(m, samples=300, rng=rng)
    y = m.estimates * m.n
    for stat in (np.median, lambda a: np.mean(a < 0), lambda a: np.quantile(a, 0.9)):
        sim_stats = np.array([stat(row) for row in sims])
        lo, hi = np.quantile(sim_stats, [0.005, 0.995])
        assert lo <= stat(y) <= hi


def test_same_seed_same_result(rng):
    m = small_measurement(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = bayesldp.postprocess(m, "bayes-power", rng=5, **FAST)
        b = bayesldp.postprocess(m, "bayes-power", rng=5, **FAST)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    assert a.draws is None
    np.testing.assert_array_equal(a.uncertainty.sample(0, 50), b.uncertainty.sample(0, 50))
    assert "r_hat" in a.info and "ess_bulk" in a.info
    assert a.inference_data is not None


@pytest.mark.slow  # tests/models/test_consistent.py checks the same on its own fits
def test_bayes_consistent_on_simplex(rng):
    m = small_measurement(rng, d=200, n=50_000, eps=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = bayesldp.postprocess(m, "bayes-consistent", rng=2, **FAST)
    assert est.is_consistent()
    rows = est.uncertainty.sample(0, est.uncertainty.n_draws)
    assert rows.shape == (FAST["n_draws"], m.domain_size)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)
    assert rows.min() >= 0
    lo, hi = est.interval(np.arange(20), prob=0.9, method="posterior")
    assert lo <= est.subset(np.arange(20)) <= hi


def test_bayes_power_zi_runs(rng):
    m = small_measurement(rng, d=100, n=20_000, eps=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = bayesldp.postprocess(m, "bayes-power-zi", rng=1, **FAST)
    assert 0 <= est.info["pi_mean"] <= 1
    assert est.frequencies.min() >= 0


def test_poor_convergence_warns(rng):
    m = small_measurement(rng)
    with pytest.warns(RuntimeWarning, match="convergence"):
        bayesldp.postprocess(m, "bayes-power", rng=1, draws=15, tune=5, chains=2)


def test_bad_sampler_arguments(rng):
    m = small_measurement(rng)
    with pytest.raises(ValueError, match="draws"):
        bayesldp.postprocess(m, "bayes-power", draws=0)
    with pytest.raises(ValueError, match="lo < hi"):
        bayesldp.postprocess(m, "bayes-power", s_bounds=(2.0, 1.0))
    with pytest.raises(ValueError, match="rng"):
        bayesldp.postprocess(m, "bayes-power", rng="abc")
    with pytest.raises(ValueError, match="unknown option"):
        bayesldp.postprocess(m, "bayes-consistent", alpha=2)


@pytest.mark.slow
def test_bayes_power_beats_power_on_zipf():
    """Real sampling at the papers' setting (a few runs): bayes-power <= power on MSE."""
    from bayesldp import datasets, metrics

    data = datasets.zipf(1.5, 1024, 10**6, rng=0)
    wins = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        m = bayesldp.OUE(1.0, 1024).simulate(data.counts, rng)
        bp = bayesldp.postprocess(m, "bayes-power", rng=seed)
        pw = bayesldp.postprocess(m, "power")
        wins += metrics.mse(data.frequencies, bp) <= metrics.mse(data.frequencies, pw)
        assert max(bp.info["r_hat"].values()) < 1.01
    assert wins >= 2


def test_bayes_speed_case_runs():
    from benchmarks import bayes_speed as speed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        row = speed.run_case(64, "bayes-power", 0, n=20_000, draws=100, tune=100)
    assert row["seconds_total"] > 0 and row["d"] == 64


def test_bayes_speed_reports_a_child_killed_without_a_word():
    # a case the out-of-memory killer ends prints nothing on stderr; the row says so
    import subprocess

    from benchmarks import bayes_speed as speed

    killed = subprocess.CompletedProcess(["python"], -9, stdout="", stderr="")
    assert speed._error_line(killed) == "killed by signal 9, nothing on stderr"
    failed = subprocess.CompletedProcess(["python"], 1, stdout="", stderr="a\nValueError: x\n")
    assert speed._error_line(failed) == "ValueError: x"


@pytest.mark.slow  # a fresh process with an empty compile cache; run_case is tested above
def test_bayes_speed_runs_a_case_in_a_cold_child_process(tmp_path):
    # the timing path: a child process that loads the script by path, with an empty
    # PyTensor cache (it once failed to import the script's sibling results_table)
    import subprocess
    import sys
    from pathlib import Path

    import pandas as pd

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bayes_speed.py"
    cmd = [sys.executable, str(script), "--sizes", "64", "--n", "20000", "--methods",
           "bayes-power", "--threads", "1", "--cold", "--out", str(tmp_path)]  # fmt: skip
    subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tmp_path)
    (table,) = tmp_path.glob("bayes_speed_*.csv")
    row = pd.read_csv(table).iloc[0]
    assert "error" not in row or pd.isna(row["error"]), row["error"]
    assert bool(row["cold_cache"]) and row["seconds_total"] > 0
    assert row["d"] == 64 and row["n"] == 20_000  # --n reached the child


def _compiled_constants(model) -> list[tuple]:
    """Return the constants of the compiled log density and gradient (what goes into C code)."""
    from pytensor.graph.basic import Constant

    fn = model.logp_dlogp_function(ravel_inputs=True)  # what NUTS compiles
    graph = fn._pytensor_function.maker.fgraph
    constants = [v for v in graph.variables if isinstance(v, Constant)]
    return sorted((str(v.type), np.asarray(v.data).tobytes()) for v in constants)


@pytest.mark.parametrize(
    "which",
    [
        "bayes-power",
        "bayes-power-zi",
        # two prepares of the scale model (~35 s on 2 cores); the same pm.Data mechanism
        pytest.param("bayes-consistent", marks=pytest.mark.slow),
    ],
)
def test_compiled_graph_does_not_depend_on_the_measurement(which, rng):
    # Constants are folded into PyTensor's generated C code, so a model that embeds the
    # measurement compiles anew for every measurement (~10 s each, and the compile cache
    # grows without bound); measurement-dependent arrays must enter as pm.Data.
    def build(m):
        if which == "bayes-consistent":
            return _scale_model.build_scale_model(_region.prepare(m))
        return power.build_model(m, chebyshev.build(m, 0.5, 4.0), which == "bayes-power-zi")

    first, second = (small_measurement(rng, s=s) for s in (1.2, 1.8))
    assert not np.allclose(first.estimates, second.estimates)
    assert _compiled_constants(build(first)) == _compiled_constants(build(second))


def test_chebyshev_tensors_match_numpy_with_finite_gradients_at_the_ends(rng):
    import pytensor
    import pytensor.tensor as pt
    from numpy.polynomial import chebyshev as numpy_chebyshev

    from bayesldp.models.consistent import _target

    coef1, coef2 = rng.normal(size=25), rng.normal(size=(14, 14))
    t, u = pt.dscalar("t"), pt.dscalar("u")
    one = chebyshev.chebval_tensor(t, pt.as_tensor(coef1), 25)
    two = _target.chebval2d_tensor(t, u, coef2)
    f = pytensor.function([t, u], [one, two, pytensor.grad(one, t), *pytensor.grad(two, [t, u])])
    # (t is shrunk by 1e-15 inside, which moves values near the ends by up to ~k^2 1e-15)
    for a, b, tol in (
        [-1.0, 1.0, 1e-10],
        [1.0, -1.0, 1e-10],
        [0.3, -0.77, 1e-10],
        [-0.999, 0, 1e-10],
    ):
        v1, v2, *grads = f(a, b)
        assert v1 == pytest.approx(numpy_chebyshev.chebval(a, coef1), abs=tol)
        assert v2 == pytest.approx(numpy_chebyshev.chebval2d(a, b, coef2), abs=tol)
        assert np.isfinite(grads).all()
    _, _, g1, g2t, _ = f(0.3, -0.77)
    assert g1 == pytest.approx(
        numpy_chebyshev.chebval(0.3, numpy_chebyshev.chebder(coef1)), rel=1e-6
    )
    assert g2t == pytest.approx(
        numpy_chebyshev.chebval2d(0.3, -0.77, numpy_chebyshev.chebder(coef2, axis=0)), rel=1e-6
    )


def test_zero_inflated_node_sum_matches_items(rng):
    """Many items: the zi log-likelihood is summed over nodes; against the item sum."""
    d, n = 3000, 200_000
    counts = rng.multinomial(n, zipf_frequencies(d, 1.1))
    m = bayesldp.OUE(1.0, d).simulate(counts, rng)
    lik = chebyshev.build(m, 0.5, 3.5)
    assert lik.node_coef is not None and lik.nodes.size < d / 2
    logp = power.build_model(m, lik, True).compile_logp(jacobian=False)
    y, sigma_c = lik.y, lik.sigma_c
    for s, pi in [(0.9, 0.3), (1.4, 0.1), (2.7, 0.6)]:
        # the per-item sum, each item's A_v(s) from its own series (checked against scipy
        # by test_log_density_matches_scipy and test_chebyshev_series_accurate)
        a = lik.item_log_evidence(s) - lik.log_norm(s)
        items = np.logaddexp(math.log(pi) - y**2 / (2 * sigma_c**2), math.log1p(-pi) + a)
        expected = items.sum() + d * lik.log_gauss_const()
        expected += stats.uniform.logpdf(s, 0.5, 3.0) + stats.beta.logpdf(pi, 1, 1)
        point = {
            "s_interval__": math.log(s - 0.5) - math.log(3.5 - s),
            "pi_logodds__": math.log(pi / (1 - pi)),
        }
        assert float(logp(point)) == pytest.approx(expected, abs=0.01)
