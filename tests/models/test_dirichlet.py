"""bayes-dirichlet and dirichlet_simplex: the density, the exact posterior, SBC, errors."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

from tests.models.exact_posterior import ExactDirichletPosterior, normal_grid

pm = pytest.importorskip("pymc")

from bayesldp import models  # noqa: E402
from tests.models.common import (  # noqa: E402
    NEEDS_NUMPYRO,
    SAMPLER,
    assert_matches_exact,
    assert_uniform_ranks,
    oracle_measurements,
    quiet,
    sbc_ranks,
    tiny,
)


@pytest.mark.parametrize(
    "alpha",
    [0.3, 0.02, np.array([0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 2.0, 2.0])],
    ids=["symmetric", "symmetric-small", "per-item"],
)
def test_dirichlet_simplex_density_is_the_dirichlet(alpha):
    """The sampled coordinates' log-density is scipy's Dirichlet plus the change of variables.

    Rebuilt in NumPy with a finite-difference Jacobian of each coordinate's map.
    """
    from bayesldp.models import _concentration, dirichlet

    m = oracle_measurements()["OUE"]
    d = m.domain_size
    hints = dirichlet.parametrization_hints(m)
    ref = int(np.argmax(hints["reference"]))
    alpha_vec = np.broadcast_to(alpha, d).astype(float)
    with pm.Model() as model:
        dirichlet.dirichlet_simplex("f", alpha, m)
    logp = model.compile_logp()
    # each item's sharpness: data, by the rule written out (kink_sharpness's docstring)
    a0 = math.exp(_concentration.concentration_start(m))
    with np.errstate(divide="ignore"):  # the reference's kink is 0; its sharpness is set
        need = np.log(1 / (a0 * hints["width"])) - np.log(dirichlet.PEAK_LEAK)
        need = need / np.abs(hints["kink"])
    k = np.minimum(np.maximum(dirichlet.KINK_SHARPNESS, need), dirichlet.SHARPNESS_MAX)
    k = np.where(hints["start"] < 0, np.minimum(k, dirichlet.TAIL_SHARPNESS_MAX), k)
    k[ref] = dirichlet.KINK_SHARPNESS
    np.testing.assert_allclose(k, hints["sharpness"], rtol=1e-12)
    assert np.unique(k.round(6)).size > 1  # the items' sharpness differs in this case

    lam = hints["following"]  # how far the prior's precision follows the sampled alpha
    assert np.all((lam > 0) & (lam < 1))
    alpha_c = np.exp(hints["guess"] + lam * (np.log(alpha_vec) - hints["guess"]))
    precision = 1.0 / hints["width"] ** 2 + alpha_c
    scale = 1.0 / np.sqrt(precision)
    mode = np.log(alpha_vec / alpha_vec[ref])
    centre = (hints["centre"] / hints["width"] ** 2 + alpha_c * mode) / precision
    # the reference's shared uncertainty: u = start + (I + c b b^T) t
    start_slope = scale + 1.0 / (alpha_c * (1.0 + np.exp(k * (hints["start"] - hints["kink"]))))
    b = scale[ref] / start_slope
    b[ref] = 0.0
    c = 1.0 / (1.0 + np.sqrt(1.0 + b @ b))

    def y_of(t):
        u = hints["start"] + t + c * b * (b @ t)
        soft = np.logaddexp(0.0, -k * (u - hints["kink"])) / (k * alpha_vec)
        y = centre + scale * u - soft
        y[ref] = 0.0
        return y

    rng = np.random.default_rng(0)
    others = np.arange(d) != ref
    for _ in range(5):
        t = rng.normal(0.0, 2.0, d)
        y = y_of(t)
        f = np.exp(y - np.logaddexp.reduce(y))
        h = 1e-6
        jacobian = np.empty((d, d))  # d y / d t, column by column (not diagonal: b b^T)
        for j in range(d):
            step = np.zeros(d)
            step[j] = h
            jacobian[:, j] = (y_of(t + step) - y_of(t - step)) / (2 * h)
        sign, log_det = np.linalg.slogdet(jacobian[np.ix_(others, others)])
        assert sign > 0
        expected = (
            stats.dirichlet.logpdf(f, alpha_vec)
            + np.log(f).sum()  # the additive log-ratio map's Jacobian
            + log_det
            + stats.norm.logpdf(t[ref])  # the unused reference slot
        )
        assert logp({"f_t": t}) == pytest.approx(expected, rel=1e-7, abs=1e-6)


def decimal_dirichlet_log_density(y, log_a, ratio) -> Decimal:
    """Return sum alpha log softmax(y) + lgamma(sum alpha) - sum lgamma(alpha), to 80 digits.

    As the formula reads, in decimal arithmetic, with ``alpha = exp(log_a) * ratio``
    (``log_a`` a ``Decimal``); lgamma by Stirling's series (every argument here is
    above 10^4, where three terms leave an error below 10^-30).
    """
    with localcontext() as context:
        context.prec = 80
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")

        def lgamma(x):
            coefficients = ((1, 12), (-1, 360), (1, 1260))  # B_2k / (2k (2k - 1))
            series = sum(
                Decimal(num) / (den * x ** (2 * j + 1)) for j, (num, den) in enumerate(coefficients)
            )
            return (x - Decimal("0.5")) * x.ln() - x + (2 * pi).ln() / 2 + series

        y = [Decimal(float(v)) for v in y]
        alpha = [(+log_a).exp() * Decimal(float(r)) for r in ratio]
        log_total = sum(v.exp() for v in y).ln()
        value = sum(a * (v - log_total) for a, v in zip(alpha, y, strict=True))
        return value + lgamma(sum(alpha)) - sum(lgamma(a) for a in alpha)


@pytest.mark.parametrize("log_a", [10.0, 20.0, 30.0])
@pytest.mark.parametrize("per_item", [False, True], ids=["symmetric", "per-item"])
def test_dirichlet_log_density_keeps_its_precision_at_large_concentrations(log_a, per_item):
    """Value and gradient in log a against an 80-digit evaluation of the formula as it reads.

    At concentration a the formula's terms are ~ a d log d while their sum is ~ d: in
    double precision as written, the error at log a = 30 and d = 64 is ~ 10 nats.
    """
    import pytensor
    import pytensor.tensor as pt

    from bayesldp.models.dirichlet import dirichlet_log_density

    d = 64
    rng = np.random.default_rng(1)
    ratio = np.tile([1.0, 2.0], d // 2) if per_item else np.ones(d)
    # log-ratios as the prior spreads them at this concentration, about its mode
    y_value = np.log(ratio) + rng.normal(0.0, math.exp(-log_a / 2), d)
    y, la = pt.dvector("y"), pt.dscalar("la")
    alpha = pt.exp(la) * ratio if per_item else pt.exp(la)
    density = dirichlet_log_density(y, alpha, d)
    value_and_slope = pytensor.function([y, la], [density, pt.grad(density, la)])
    value, slope = value_and_slope(y_value, log_a)

    def reference(shift: str):
        return decimal_dirichlet_log_density(y_value, Decimal(log_a) + Decimal(shift), ratio)

    expected_slope = (reference("1e-20") - reference("-1e-20")) / Decimal("2e-20")
    assert value == pytest.approx(float(reference("0")), abs=1e-8, rel=1e-12)
    # the per-item path keeps ~1e-16 sqrt(a) d of rounding in the slope (its log-ratios'
    # modes depend on alpha): ~1e-7 at log a = 30, against ~10 as the formula reads
    assert slope == pytest.approx(float(expected_slope), abs=1e-6, rel=1e-6)


@pytest.mark.parametrize(
    "oracle_name, kind, sampler",
    [
        ("OUE", "binomial", SAMPLER),
        pytest.param("GRR", "multinomial", SAMPLER, marks=pytest.mark.slow),
        # NumPyro differentiates the model's JAX form itself (see the gradient test below)
        pytest.param("OUE", "binomial", "numpyro", marks=[NEEDS_NUMPYRO, pytest.mark.slow]),
        # the model's default: static HMC with a jittered length, its own kernel
        pytest.param("OUE", "binomial", "numpyro-hmc", marks=NEEDS_NUMPYRO),
    ],
)
def test_bayes_dirichlet_matches_exact_posterior(oracle_name, kind, sampler):
    m = tiny(oracle_name)
    x, log_w = normal_grid(0.0, 2.0, -10.0, 4.5, 80)
    exact = ExactDirichletPosterior(m, kind, [np.full(3, math.exp(v)) for v in x], log_w, 40)
    assert exact.hyper_weights[[0, -1]].max() < 1e-5  # the grid holds the posterior of log a
    est = quiet(models.bayes_dirichlet, m, draws=1000, tune=500, sampler=sampler, cores=1, rng=3)
    assert est.method == "bayes-dirichlet" and est.info["sampler"] == sampler
    # log a is loosely identified on three items, and where a is tiny the kink of
    # dirichlet_simplex is sharp: a few transitions in a thousand may diverge; the
    # posterior must still match the exact one.
    assert est.info["divergences"] <= 0.0025 * 2000
    assert_matches_exact(est, exact, [2])


@pytest.mark.parametrize(
    "sampler",
    [
        # 20 fits each: slow; the default suite checks the samplers against the exact
        # posterior (above)
        pytest.param(SAMPLER, marks=pytest.mark.slow),
        pytest.param("numpyro", marks=[NEEDS_NUMPYRO, pytest.mark.slow]),
    ],
)
def test_sbc_bayes_dirichlet_small(sampler):
    from bayesldp.models.dirichlet import prior_sampler

    rng = np.random.default_rng(7)
    ranks = sbc_ranks(
        models.bayes_dirichlet, prior_sampler((0.0, 2.0), 3), sims=20, d=3, n=200, rng=rng,
        draws=200, tune=200, chains=1, sampler=sampler,
    )  # fmt: skip
    assert_uniform_ranks(ranks)


def test_sbc_detects_a_wrong_posterior():
    # the check can fail: ranks of draws from a posterior that is too narrow pile up
    rng = np.random.default_rng(1)
    truth = rng.normal(size=(200, 3))
    draws = truth[:, None, :] * 0.0 + 0.3 * rng.normal(size=(200, 99, 3))
    ranks = (draws < truth[:, None, :]).sum(axis=1)
    with pytest.raises(AssertionError):
        assert_uniform_ranks(ranks)


def test_dirichlet_coordinates_refuse_a_non_measurement():
    from bayesldp.models import dirichlet

    with pytest.raises(ValueError, match=r"^m must be a bayesldp\.Measurement, got list"):
        dirichlet.parametrization_hints([1, 2, 3])
    with pm.Model(), pytest.raises(ValueError, match=r"^measurement must be a bayesldp"):
        dirichlet.dirichlet_simplex("f", 0.5, "counts")
