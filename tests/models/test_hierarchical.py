"""bayes-hier against the exact posterior and SBC (slow), and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.exact_posterior import ExactDirichletPosterior, hier_grid

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from tests.models.common import (  # noqa: E402
    NEEDS_NUMPYRO,
    RUN,
    SAMPLER,
    assert_matches_exact,
    assert_uniform_ranks,
    quiet,
    sbc_ranks,
    tiny,
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "oracle_name, kind, sampler",
    [
        ("OUE", "binomial", SAMPLER),
        ("GRR", "multinomial", SAMPLER),
        pytest.param("OUE", "binomial", "numpyro", marks=NEEDS_NUMPYRO),
        pytest.param("GRR", "multinomial", "numpyro", marks=NEEDS_NUMPYRO),
    ],
)
def test_bayes_hier_matches_exact_posterior(oracle_name, kind, sampler):
    m = tiny(oracle_name)
    pts, log_w = hier_grid(0.0, 2.0, 1.0, -10.0, 4.5, 40)
    alphas = [np.exp(np.array([p[0], p[0], p[1]])) for p in pts]
    exact = ExactDirichletPosterior(m, kind, alphas, log_w, 40)
    groups = {"pair": [0, 1], "single": [2]}
    est = quiet(
        models.bayes_hier, m, groups=groups, draws=4000, tune=1000, sampler=sampler, cores=1,
        rng=4,
    )  # fmt: skip
    # The group-level scale makes a funnel: about 1% of transitions diverge on these tiny
    # cases, so at most 2% are allowed; the posterior must still match the exact one.
    assert est.info["divergences"] <= 0.02 * 8000
    assert_matches_exact(est, exact, [0, 1])


@pytest.mark.slow
@pytest.mark.parametrize(
    "which, sampler",
    [
        ("dirichlet", SAMPLER),
        ("hier", SAMPLER),
        pytest.param("dirichlet", "numpyro", marks=NEEDS_NUMPYRO),
        pytest.param("hier", "numpyro", marks=NEEDS_NUMPYRO),
    ],
)
def test_sbc_ready_made_models(which, sampler):
    from bayesldp.models.dirichlet import prior_sampler
    from bayesldp.models.hierarchical import hier_prior_sampler

    rng = np.random.default_rng(8)
    if which == "dirichlet":
        fitter, prior = models.bayes_dirichlet, prior_sampler((0.0, 2.0), 4)
        options = {}
    else:
        groups = {"a": [0, 1], "b": [2, 3]}
        fitter = models.bayes_hier
        prior = hier_prior_sampler(np.array([0, 0, 1, 1]), (0.0, 2.0), 1.0)
        options = {"groups": groups}
    ranks = sbc_ranks(
        fitter, prior, sims=100, d=4, n=300, rng=rng, draws=500, tune=500, sampler=sampler,
        **options,
    )  # fmt: skip
    assert_uniform_ranks(ranks, bins=10)


def test_compare_dirichlet_and_hier(oue_fit):
    # the default suite's fit of bayes-hier: a small one, compared with bayes-dirichlet
    m, est = oue_fit
    hier = quiet(
        models.bayes_hier, m, groups={"a": [0, 1], "b": [2]}, draws=300, tune=300,
        **RUN, rng=1,
    )  # fmt: skip
    assert hier.method == "bayes-hier" and hier.is_consistent()
    assert set(hier.info["a_mean"]) == {"a", "b"} and hier.info["groups"] == ("a", "b")
    table = models.compare({"dirichlet": est, "hier": hier})
    assert set(table.index) == {"dirichlet", "hier"} and (table["unit"] == "item").all()
