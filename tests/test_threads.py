"""Limiting the BLAS/OpenMP thread pools (``bayesldp._threads``)."""

from __future__ import annotations

import os

import numpy as np
from threadpoolctl import threadpool_info

from bayesldp._threads import THREAD_VARIABLES, limit_threads


def _blas_threads() -> list[int]:
    np.dot(np.ones(2), np.ones(2))  # make sure a BLAS is loaded
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_pools_are_limited_inside_and_restored_after():
    before = _blas_threads()
    with limit_threads(1, user_api="blas"):
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
    with limit_threads(None):
        assert _blas_threads() == before


def test_environment_is_set_inside_and_restored_after(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with limit_threads(1):  # without environment=True the variables are left alone
        assert os.environ["OPENBLAS_NUM_THREADS"] == "7" and "OMP_NUM_THREADS" not in os.environ
    with limit_threads(2, environment=True):
        assert all(os.environ[key] == "2" for key in THREAD_VARIABLES)
    assert os.environ["OPENBLAS_NUM_THREADS"] == "7" and "OMP_NUM_THREADS" not in os.environ
