"""HR: aggregation by one Walsh-Hadamard transform equals the brute force."""

from __future__ import annotations

import numpy as np

import bayesldp
from bayesldp.oracles.hadamard import fwht


def test_hr_aggregation_matches_brute_force(rng):
    oracle = bayesldp.HR(1.0, 5)
    reports = oracle.privatize(rng.integers(0, 5, 500), rng)
    k = oracle.K
    h = np.array([[(-1) ** bin(r & c).count("1") for c in range(k)] for r in range(k)])
    brute = np.array([(h[v + 1, reports] == 1).sum() for v in range(5)])
    np.testing.assert_array_equal(oracle.support_counts(reports), brute)
    np.testing.assert_allclose(fwht(np.eye(k)[3]), h[:, 3])
