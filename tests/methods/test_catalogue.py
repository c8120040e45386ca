"""Every NumPy method against the promises it declares, over a catalogue of cases.

The method list, and which methods promise non-negative or summing-to-1 answers, come
from the registry: a newly registered method is tested here without a line of code.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp.methods.registry import method_names
from tests.helpers import toy_measurement, zipf_frequencies

# ---------------------------------------------------------------------------
# The catalogue. Each case is a vector of raw estimates f~ (exactly representable by
# the toy oracle p = 1/2, q = 1/4, n = 4000) and the reason it is interesting.
# ---------------------------------------------------------------------------
CATALOGUE = {
    # Every estimate negative: norm-sub must lift them all; norm-mul has nothing to scale.
    "all-negative": [-0.2, -0.1, -0.05, -0.3, -0.001],
    # Already a probability vector: consistent methods should (mostly) leave it alone.
    "already-consistent": [0.5, 0.25, 0.125, 0.125, 0.0],
    # Ties, including ties at the norm-cut boundary (0.3 + 0.3 + 0.3 + 0.3 > 1).
    "ties": [0.3, 0.3, 0.3, 0.3, -0.1, -0.1],
    # One estimate far above 1: norm-cut keeps nothing, norm-hyb keeps no item.
    "single-huge": [2.5, 0.01, -0.02, 0.0, 0.03],
    # A typical noisy vector: some negatives, sum above 1.
    "noisy": [0.45, 0.3, 0.12, 0.08, -0.04, 0.06, -0.07, 0.11],
    # Sum of positives below 1 (norm-cut only clips).
    "small-positives": [0.2, 0.1, -0.3, 0.05, 0.0],
    # Domain of one item.
    "d=1": [0.7],
}

# The promises each method declares in the registry, which these tests hold it to.
NUMPY_METHODS = method_names(bayesian=False, needs_truth=False)
NONNEGATIVE = set(method_names(nonnegative=True))
SUM_TO_ONE = set(method_names(sums_to_one=True))


def run_quietly(m, method, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # norm-mul fallback, ibu steps
        return bayesldp.postprocess(m, method, **options)


@pytest.mark.parametrize("case", CATALOGUE)
@pytest.mark.parametrize("method", NUMPY_METHODS)
def test_catalogue_promises(case, method):
    m = toy_measurement(CATALOGUE[case])
    est = run_quietly(m, method)
    f = est.frequencies
    assert f.shape == (m.domain_size,)
    assert np.all(np.isfinite(f))
    if method in NONNEGATIVE:
        assert f.min() >= 0, f
    if method in SUM_TO_ONE:
        assert abs(f.sum() - 1) <= 1e-9, f.sum()
    if method == "norm-cut":
        assert f.sum() <= 1 + 1e-12 or np.maximum(m.estimates, 0).sum() <= 1


def test_large_domain_all_methods(rng):
    """At d = 1e5 every method runs and keeps its promises."""
    d, n = 100_000, 2_000_000
    counts = rng.multinomial(n, zipf_frequencies(d, 1.1))
    m = bayesldp.OUE(1.0, d).simulate(counts, rng)
    for method in NUMPY_METHODS:
        options = {"max_iter": 200} if method == "ibu" else {}
        f = run_quietly(m, method, **options).frequencies
        if method in NONNEGATIVE:
            assert f.min() >= 0, method
        if method in SUM_TO_ONE:
            assert abs(f.sum() - 1) <= 1e-9, method


# ---------------------------------------------------------------------------
# Unbiasedness of Base and Norm over repeated simulation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["base", "norm"])
@pytest.mark.parametrize("oracle", ["GRR", "OUE", "SUE"])
def test_unbiased_over_repetitions(method, oracle, rng):
    d, n, reps = 16, 5000, 3000
    counts = rng.multinomial(n, zipf_frequencies(d))
    o = bayesldp.make_oracle(oracle, 1.0, d)
    est = np.array([run_quietly(o.simulate(counts, rng), method).frequencies for _ in range(reps)])
    f = counts / n
    se = np.sqrt(o.variance(f) / n / reps)
    z = (est.mean(axis=0) - f) / se
    assert np.abs(z).max() < 4.5, z
