"""Shared fixtures for the test suite."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

#: JAX's persistent compilation cache (its own configuration, read when JAX starts), in
#: the repository like ``.mypy_cache``: a NumPyro program compiles once for every test
#: process, pytest-xdist's workers and the scripts the tests run, as PyTensor's C code
#: does in ``~/.pytensor``. Most of a small NumPyro fit is its compilation, and
#: several tests fit the same model again (the same seed twice, another seed). Every
#: compilation is kept (none is too quick to store); at most 1 GB, least recently used
#: first out (the size limit also makes JAX lock the folder between processes).
JAX_CACHE = Path(__file__).resolve().parents[1] / ".jax_cache"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(JAX_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
if importlib.util.find_spec("filelock") is not None:  # JAX's lock, needed for the limit
    os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(2**30))


@pytest.fixture
def rng() -> np.random.Generator:
    """Return a fresh, fixed-seed generator for each test."""
    return np.random.default_rng(20201122)
