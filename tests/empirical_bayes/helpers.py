"""Measurements and likelihood problems shared by the empirical-Bayes tests."""

from __future__ import annotations

import numpy as np

import bayesldp
from bayesldp import datasets
from bayesldp.empirical_bayes import count_grid, count_likelihood
from bayesldp.empirical_bayes._likelihood import CountLikelihood, total_corrected_counts


def zipf_measurement(
    d: int = 120, n: int = 20_000, eps: float = 1.0, seed: int = 0, oracle: str = "OUE"
) -> tuple:
    """Return Zipf(1.5) data and one simulated measurement of it."""
    data = datasets.zipf(s=1.5, d=d, n=n, rng=seed)
    m = bayesldp.make_oracle(oracle, eps, d).simulate(data.counts, np.random.default_rng(seed))
    return data, m


def likelihood_problem(m: bayesldp.Measurement, likelihood: str = "binomial") -> CountLikelihood:
    """Return the likelihood matrix ``eb_npmle`` fits: default grid, corrected counts."""
    grid = count_grid(m, likelihood=likelihood)
    return count_likelihood(m, grid, likelihood, total_corrected_counts(m, likelihood))
