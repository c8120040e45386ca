"""Predictive checks and PSIS-LOO against ArviZ and a per-user brute force."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesldp

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402


def test_posterior_predictive_check(oue_fit):
    m, est = oue_fit
    ppc = models.posterior_predictive_check(est, draws=400, rng=0)
    assert ppc.counts.shape == (400, 3) and ppc.source == "posterior"
    # recompute the item p-values by brute force from the replicated counts
    expected = [
        np.mean(ppc.counts[:, v] > m.support_counts[v])
        + 0.5 * np.mean(ppc.counts[:, v] == m.support_counts[v])
        for v in range(3)
    ]
    np.testing.assert_allclose(ppc.p_item, expected)
    assert 0.01 < ppc.p_value < 0.99  # the data are typical of a model that fits
    prior = models.prior_predictive_check(est, draws=300, rng=0)
    assert prior.counts.shape == (300, 3) and prior.source == "prior"
    assert np.all((prior.p_item >= 0) & (prior.p_item <= 1))


def test_loo_pointwise_matches_arviz_and_per_user_brute_force(oue_fit):
    import arviz as az

    _, est = oue_fit
    result = models.loo(est)
    assert result.unit == "item"
    f = est.inference_data.posterior["f"].values
    m = est.measurement
    ll = stats.binom.logpmf(m.support_counts, m.n, m.q + (m.p - m.q) * f)
    idata = az.from_dict(posterior={"f": f}, log_likelihood={"counts": ll})
    ref = az.loo(idata, pointwise=True, reff=1.0)
    assert result.elpd == pytest.approx(float(ref.elpd_loo), rel=1e-8)
    assert result.p_loo == pytest.approx(float(ref.p_loo), rel=1e-6)

    # GRR: one point per user; the weighted per-item computation equals arviz on users
    grr = bayesldp.GRR(2.0, 3).simulate([30, 12, 6], np.random.default_rng(2))
    with pm.Model() as model:
        models.ldp_likelihood("counts", np.full(3, 1 / 3), grr)
    draws = np.random.default_rng(3).dirichlet([30, 12, 6], size=(2, 200))
    fake = bayesldp.Estimate(
        draws.mean(axis=(0, 1)), "x", grr, info={"model": model},
        inference_data=az.from_dict(posterior={"counts_frequencies": draws}),
    )  # fmt: skip
    user = models.loo(fake)
    assert user.unit == "user"
    report = np.repeat(np.arange(3), grr.support_counts)
    log_pi = np.log(grr.q + (grr.p - grr.q) * draws)[..., report]
    brute = az.loo(az.from_dict(posterior={"f": draws}, log_likelihood={"u": log_pi}), reff=1.0)
    assert user.elpd == pytest.approx(float(brute.elpd_loo), rel=1e-8)
    assert user.se == pytest.approx(float(brute.se), rel=1e-6)


def test_compare(oue_fit, oue_fit_other_seed):
    _, est = oue_fit
    table = models.compare({"seed5": est, "seed6": oue_fit_other_seed})
    assert list(table.columns[:4]) == ["elpd_loo", "se", "elpd_diff", "dse"]
    assert table["elpd_diff"].iloc[0] == 0 and table["elpd_diff"].iloc[1] >= 0
    # two runs of one model (300 draws, 3 items, Pareto k up to ~1): the same elpd
    # within twice its standard error
    assert table["elpd_diff"].iloc[1] < 2 * table["se"].max()
    with pytest.raises(ValueError, match="at least two"):
        models.compare({"dirichlet": est})
