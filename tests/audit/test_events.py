"""The support and position events read the reports as the server does."""

from __future__ import annotations

import numpy as np
import pytest

import bayesldp
from bayesldp.audit import (
    position_event,
    support_event,
)

ALL = list(bayesldp.ORACLES)


@pytest.mark.parametrize("name", ALL)
def test_support_event_matches_support_counts(name, rng):
    oracle = bayesldp.make_oracle(name, 1.0, 6)
    reports = oracle.privatize(rng.integers(0, 6, 300), rng)
    ev = support_event(oracle)
    fast = ev.supports(reports, range(6))
    slow = np.stack([oracle.support_counts(reports[i : i + 1]) > 0 for i in range(300)])
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(ev(reports, 2, 4), slow[:, [2, 4]].astype(np.uint8))


def test_position_event():
    r = np.array([[3, 1], [1, 3], [0, 2], [2, 3]])
    keys = position_event()(r, 1, 3)
    np.testing.assert_array_equal(keys, [[1, 0], [0, 1], [-1, -1], [-1, 1]])
