"""Clopper-Pearson bounds against scipy, and their input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesldp.audit import (
    clopper_pearson,
)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [1, 7, 50, 1000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.995])
def test_clopper_pearson_matches_scipy_binomtest(alternative, n, confidence):
    ks = np.unique(np.linspace(0, n, 9).round().astype(int))
    low, high = clopper_pearson(ks, n, confidence, alternative=alternative)
    for k, lo, hi in zip(ks, low, high, strict=True):
        ref = stats.binomtest(int(k), n, alternative=alternative).proportion_ci(
            confidence_level=confidence, method="exact"
        )
        assert lo == pytest.approx(ref.low, abs=1e-12)
        assert hi == pytest.approx(ref.high, abs=1e-12)
        # scalar form agrees with the vector form
        assert clopper_pearson(int(k), n, confidence, alternative=alternative) == (
            pytest.approx(lo, abs=1e-15),
            pytest.approx(hi, abs=1e-15),
        )


def test_clopper_pearson_one_sided_beta_quantiles():
    n, k, conf = 200, 13, 0.99
    low, _ = clopper_pearson(k, n, conf, alternative="greater")
    _, high = clopper_pearson(k, n, conf, alternative="less")
    assert low == pytest.approx(stats.beta.ppf(0.01, k, n - k + 1), rel=1e-12)
    assert high == pytest.approx(stats.beta.ppf(0.99, k + 1, n - k), rel=1e-12)
    assert clopper_pearson(0, n, conf)[0] == 0.0
    assert clopper_pearson(n, n, conf)[1] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"successes": 3, "trials": 0}, "trials"),
        ({"successes": 3, "trials": 2.0}, "trials"),
        ({"successes": 5, "trials": 4}, "successes"),
        ({"successes": 1.5, "trials": 4}, "successes"),
        ({"successes": 1, "trials": 4, "confidence": 1.0}, "confidence"),
        ({"successes": 1, "trials": 4, "confidence": True}, "confidence"),
        ({"successes": 1, "trials": 4, "alternative": "up"}, "alternative"),
    ],
)
def test_clopper_pearson_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        clopper_pearson(**kwargs)
