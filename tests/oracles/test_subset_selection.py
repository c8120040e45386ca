"""SS: the hypergeometric moments behind its exact set variances."""

from __future__ import annotations

import pytest
from scipy import stats

from bayesldp.oracles.subset_selection import hypergeometric_moments


@pytest.mark.parametrize(
    ("population", "successes", "draws"), [(9, 3, 4), (9, 0, 4), (2, 1, 1), (7, 7, 3)]
)
def test_hypergeometric_moments_match_scipy(population, successes, draws):
    mean, second = hypergeometric_moments(population, successes, draws)
    law = stats.hypergeom(population, successes, draws)
    assert mean == pytest.approx(law.mean(), abs=1e-12)
    assert second == pytest.approx(law.var() + law.mean() ** 2, abs=1e-12)
