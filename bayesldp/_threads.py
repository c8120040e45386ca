"""Limit the thread pools of BLAS and OpenMP inside a block.

Small dense linear algebra (matrices of tens to hundreds of rows) gains nothing from a
multi-threaded BLAS, and on a machine whose cores are busy the threads of one pool wait
for each other: the same solve can become orders of magnitude slower. Samplers that
run one chain per core want the same limit in the processes they start.
:mod:`threadpoolctl` (a dependency of the library) sets the pools of the libraries
already loaded; the usual environment variables reach processes started inside the
block.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from threadpoolctl import ThreadpoolController

__all__ = ["THREAD_VARIABLES", "limit_threads"]

#: Environment variables that set the thread count of BLAS, OpenMP and numexpr pools in
#: processes started later.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@contextlib.contextmanager
def limit_threads(
    threads: int | None = 1, *, user_api: str | None = None, environment: bool = False
) -> Iterator[None]:
    """Limit the thread pools to ``threads`` inside the block; restore them on exit.

    Parameters
    ----------
    threads : int or None, default 1
        Threads per pool; ``None`` changes nothing.
    user_api : {"blas", "openmp"}, optional
        Limit only the pools of this kind (:mod:`threadpoolctl`'s ``user_api``); by
        default every pool of the libraries loaded in this process.
    environment : bool, default False
        Also set :data:`THREAD_VARIABLES` for processes started inside the block (a
        sampler's chain processes, numba's threading layer); they are restored on exit.

    Yields
    ------
    None
    """
    if threads is None:
        yield
        return
    saved = {key: os.environ.get(key) for key in THREAD_VARIABLES} if environment else {}
    os.environ.update({key: str(threads) for key in saved})
    try:
        with ThreadpoolController().limit(limits=threads, user_api=user_api):
            yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
