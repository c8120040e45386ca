"""ldp_likelihood against scipy for every oracle and kind; one model, many measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.helpers import check_logp

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from bayesldp.models import likelihood  # noqa: E402
from tests.models.common import (  # noqa: E402
    FREQS,
    binomial_ref,
    gaussian_ref,
    multinomial_ref,
    oracle_measurements,
)


def test_logp_matches_scipy_every_oracle():
    ms = oracle_measurements()
    # one compiled function per kind serves every oracle's measurement
    check_logp("binomial", list(ms.values()), FREQS, binomial_ref)
    check_logp("gaussian", list(ms.values()), FREQS, gaussian_ref)
    grr = [ms["GRR"], oracle_measurements(seed=1)["GRR"]]
    check_logp("multinomial", grr, FREQS, multinomial_ref)


def test_gaussian_kind_is_the_estimates_normal_law():
    # the docstring's claim: counts-scale density = estimates-scale density - d log(n (p-q))
    m = oracle_measurements()["OUE"]
    f = FREQS[1]
    sd = np.sqrt(m.variance(f))
    on_estimates = stats.norm.logpdf(m.estimates, f, sd).sum()
    shift = m.domain_size * math.log(m.n * (m.p - m.q))
    assert gaussian_ref(m, f) == pytest.approx(on_estimates - shift, rel=1e-12)


def test_one_compiled_model_serves_many_measurements():
    ms = oracle_measurements(d=5, n=300)
    m1, m2 = ms["OUE"], ms["SUE"]
    with pm.Model(coords={"item": range(5)}) as model:
        a = pm.Exponential("a", 1.0)
        f = pm.Dirichlet("f", a * np.ones(5), dims="item")
        models.ldp_likelihood("counts", f, m1)
    assert model.named_vars_to_dims["counts"] == ("item",)
    assert set(likelihood.data_names("counts").values()) <= set(model.named_vars)
    logp = model.compile_logp(vars=[model["counts"]])
    point = model.initial_point()
    f0 = np.full(5, 0.2)  # the Dirichlet's initial point is the centre of the simplex
    first = float(logp(point))
    assert first == pytest.approx(binomial_ref(m1, f0), rel=1e-10)
    models.set_measurement(model, "counts", m2)
    second = float(logp(point))  # the same compiled function, new data
    assert second == pytest.approx(binomial_ref(m2, f0), rel=1e-10)
    assert first != second
    assert likelihood.current_data(model, "counts")["p"] == pytest.approx(m2.p)


def test_likelihood_errors():
    ms = oracle_measurements(d=4)
    with pytest.raises(ValueError, match="kind"):
        with pm.Model():
            models.ldp_likelihood("c", np.full(4, 0.25), ms["OUE"], kind="multinomial")
    with pytest.raises(ValueError, match="kind"):
        with pm.Model():
            models.ldp_likelihood("c", np.full(4, 0.25), ms["OUE"], kind="poisson")
    with pytest.raises(ValueError, match="frequencies"):
        with pm.Model():
            models.ldp_likelihood("c", np.full(3, 1 / 3), ms["OUE"])
    with pytest.raises(ValueError, match="name"):
        with pm.Model():
            models.ldp_likelihood("", np.full(4, 0.25), ms["OUE"])
    with pytest.raises(ValueError, match="measurement"):
        with pm.Model():
            models.ldp_likelihood("c", np.full(4, 0.25), ms["OUE"].estimates)
    with pytest.raises(ValueError, match="inside a"):
        models.ldp_likelihood("c", np.full(4, 0.25), ms["OUE"])
    with pm.Model() as model:
        models.ldp_likelihood("c", np.full(4, 0.25), ms["GRR"])
    with pytest.raises(ValueError, match="kind='multinomial'"):
        models.set_measurement(model, "c", ms["OUE"])
    with pytest.raises(ValueError, match="domain size"):
        models.set_measurement(model, "c", oracle_measurements(d=5)["GRR"])
    with pytest.raises(ValueError, match="not an ldp_likelihood"):
        models.set_measurement(model, "x", ms["GRR"])


def test_measurement_followers_refuse_bad_input():
    from bayesldp.models import _concentration, likelihood

    with pytest.raises(ValueError, match=r"^m must be a bayesldp\.Measurement"):
        _concentration.concentration_start([0.5, 0.5])
    m = oracle_measurements(d=4)["OUE"]
    with pm.Model() as model:
        with pytest.raises(ValueError, match="concentration_prior"):
            _concentration.log_concentration("log_a", (0.0, -1.0), m)
        with pytest.raises(ValueError, match="concentration_prior"):
            _concentration.log_concentration("log_a", (float("nan"), 1.0), m)
        _concentration.log_concentration("log_a", (0.0, 1.0), m)
    with pytest.raises(ValueError, match=r"^measurement must be a bayesldp\.Measurement"):
        likelihood.move_followers(model, np.ones(4))
