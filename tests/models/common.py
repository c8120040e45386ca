"""Shared helpers of the models' tests: small measurements, references, SBC, exact checks."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import bayesldp
from bayesldp import models
from bayesldp.models import _checks as checks
from tests.models.exact_posterior import ExactDirichletPosterior

ROOT = Path(__file__).resolve().parents[2]


#: PyMC's own NUTS: its compiled log-density is cached on disk, so every later fit of a
#: model of the same structure starts at once, which keeps the sampling tests to
#: seconds; chains one after the other (no processes forked from a process that may
#: have started JAX's threads).
SAMPLER = "pymc"
RUN = {"sampler": SAMPLER, "cores": 1}


def quiet(func, *args, **kwargs):
    """Run func with convergence warnings silenced (small sampler settings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return func(*args, **kwargs)


def oracle_measurements(d=8, n=400, seed=0):
    rng = np.random.default_rng(seed)
    true = rng.multinomial(n, np.arange(1, d + 1)[::-1] / (d * (d + 1) / 2))
    out = {}
    for name in ("GRR", "OUE", "SUE", "OLH", "SS", "HR"):
        oracle = bayesldp.oracles.make_oracle(name, 1.0, d)
        out[name] = oracle.simulate(true, rng)
    return out


def binomial_ref(m, f):
    return stats.binom.logpmf(m.support_counts, m.n, m.q + (m.p - m.q) * f).sum()


def multinomial_ref(m, f):
    return stats.multinomial.logpmf(m.support_counts, m.n, m.q + (m.p - m.q) * f)


def gaussian_ref(m, f):
    sd = np.sqrt(m.n * (m.q * (1 - m.q) + f * (m.p - m.q) * (1 - m.p - m.q)))
    return stats.norm.logpdf(m.support_counts, m.n * (m.q + (m.p - m.q) * f), sd).sum()


FREQS = [np.full(8, 1 / 8), np.array([0.4, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0])]


TINY_COUNTS = [210, 75, 15]


def tiny(oracle_name: str):
    oracle = bayesldp.oracles.make_oracle(oracle_name, 2.0, 3)
    return oracle.simulate(TINY_COUNTS, np.random.default_rng(0))


def assert_matches_exact(est, exact: ExactDirichletPosterior, subset):
    """Posterior means and a 90% interval against the exact posterior, to Monte Carlo error.

    Tolerances: 4 Monte Carlo standard errors (sd / sqrt(ESS_bulk) for means; for the
    interval's ends, the binomial error sqrt(0.05 * 0.95 / ESS_tail) of the posterior
    mass below each end), plus 0.002 for the quadrature and draws' rounding. Four
    standard errors keep a correct sampler from failing by chance (about 1 in 16,000
    per comparison) while a wrong posterior (e.g. a missing Jacobian, which moves the
    means by ~0.05 here) fails.
    """
    import arviz as az

    idata = est.inference_data
    draws = idata.posterior["f"].values.reshape(-1, 3)
    ess = az.ess(idata, var_names=["f"])["f"].values
    mcse = draws.std(axis=0) / np.sqrt(ess)
    np.testing.assert_array_less(np.abs(est.frequencies - exact.mean), 4 * mcse + 0.002)
    sums = draws[:, subset].sum(axis=1)
    ess_tail = float(az.ess(sums.reshape(idata.posterior.sizes["chain"], -1), method="tail"))
    lo, hi = est.interval(subset, prob=0.9, method="posterior")
    tol = 4 * math.sqrt(0.05 * 0.95 / ess_tail) + 0.002
    assert exact.cdf(subset, lo) == pytest.approx(0.05, abs=tol)
    assert exact.cdf(subset, hi) == pytest.approx(0.95, abs=tol)


NEEDS_NUMPYRO = pytest.mark.skipif(
    "numpyro" not in models.available_samplers(), reason="needs jax and numpyro"
)


def sbc_ranks(fitter, prior_sampler, sims, d, n, rng, thin_to=99, sampler=SAMPLER, **options):
    """Ranks of the true frequencies among posterior draws (Talts et al. 2018)."""
    oracle = bayesldp.OUE(1.0, d)
    truths = prior_sampler(sims, rng)
    ranks = []
    for f in truths:
        # data from the model itself: the composite likelihood's independent binomials
        counts = checks.replicate_counts("binomial", f, n, oracle.p, oracle.q, rng)
        m = bayesldp.Measurement.from_support_counts(counts, n, oracle.p, oracle.q, oracle="OUE")
        est = quiet(fitter, m, rng=rng, sampler=sampler, cores=1, **options)
        if sampler in models.fitting.JAX_SAMPLERS:
            # a long loop of JAX fits: without this the process grows ~30 MB per fit,
            # and one slow-test process of ~250 fits crashed in XLA (paper/bayes.md)
            import jax

            jax.clear_caches()
        draws = est.uncertainty.sample(0, est.uncertainty.n_draws)
        draws = draws[np.linspace(0, draws.shape[0] - 1, thin_to).astype(int)]
        ranks.append((draws < f).sum(axis=0))
    return np.array(ranks)  # (sims, d), each uniform on 0..thin_to


def assert_uniform_ranks(ranks, thin_to=99, bins=5):
    hist = np.histogram(ranks.ravel(), bins=bins, range=(0, thin_to + 1))[0]
    chi2 = stats.chisquare(hist)
    assert chi2.pvalue > 1e-3, hist
