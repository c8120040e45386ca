"""Helpers shared by test modules."""

from __future__ import annotations

import numpy as np

from bayesldp import Measurement

# Dyadic oracle parameters: with n = 4000, f~ = c / 1000 - 1 exactly, so a catalogue
# case can be written directly as the estimates it should produce.
P_TOY, Q_TOY, N_TOY = 0.5, 0.25, 4000


def toy_measurement(estimates) -> Measurement:
    """A Measurement whose raw estimates are exactly ``estimates`` (multiples of 1e-3)."""
    f = np.asarray(estimates, dtype=float)
    counts = np.rint(1000 * (f + 1)).astype(np.int64)
    if np.any(counts < 0) or np.any(counts > N_TOY):
        raise ValueError("toy estimates must lie in [-1, 3]")
    m = Measurement.from_support_counts(counts, N_TOY, P_TOY, Q_TOY, oracle="OUE")
    np.testing.assert_allclose(m.estimates, f, atol=1e-12)
    return m


def zipf_frequencies(d: int, s: float = 1.5) -> np.ndarray:
    """Zipf frequencies over ``d`` items."""
    w = np.arange(1, d + 1, dtype=float) ** (-s)
    return w / w.sum()
