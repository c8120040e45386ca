"""Fixtures of the models' tests: small fitted bayes-dirichlet shared by several files."""

from __future__ import annotations

import pytest

from bayesldp import models
from tests.models.common import RUN, quiet, tiny


@pytest.fixture(scope="session")
def oue_fit():
    m = tiny("OUE")
    return m, quiet(models.bayes_dirichlet, m, draws=300, tune=300, **RUN, rng=5)


@pytest.fixture(scope="session")
def oue_fit_other_seed(oue_fit):
    """Return ``oue_fit`` fitted with another seed (reproducibility, model comparison)."""
    m, _ = oue_fit
    return quiet(models.bayes_dirichlet, m, draws=300, tune=300, **RUN, rng=6)
