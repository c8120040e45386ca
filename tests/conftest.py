"""Shared fixtures for the test suite."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def rng() -> np.random.Generator:
    """Return a fresh, fixed-seed generator for each test."""
    return np.random.default_rng(20201122)
