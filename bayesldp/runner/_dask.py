"""The Dask cluster's lifecycle: start a LocalCluster (or connect to a scheduler), close it.

Ctrl-C in a terminal reaches the whole process group: this process and every worker.
Only this process should answer it (the workers are stopped when the cluster closes), so
the worker processes start with SIGINT blocked: the cluster is started from a helper
thread that blocks it, and the threads and processes Dask starts from there inherit the
block. This process keeps its own SIGINT: Ctrl-C while the cluster is starting stops
the start (the cluster is closed once it is up) with :class:`KeyboardInterrupt`, as it
does later in the run.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from multiprocessing import resource_tracker
from typing import Any

from bayesldp._validation import check_int

logger = logging.getLogger(__name__)


def dask_available() -> bool:
    """Whether dask.distributed can be imported (the ``dask`` extra)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def make_client(scheduler: str | None = None, n_workers: int = 2, timeout: float = 5.0) -> Any:
    """Start a Dask client: a LocalCluster when ``scheduler`` is None, else connect to it.

    Parameters
    ----------
    scheduler : str, optional
        A scheduler address; ``"synchronous"`` returns None (tasks run in this process).
    n_workers : int
        Single-threaded worker processes of the LocalCluster.
    timeout : float
        Seconds to wait for a scheduler at ``scheduler``.

    Returns
    -------
    dask.distributed.Client or None

    Raises
    ------
    ValueError
        ``n_workers < 1``, dask not installed, or a scheduler that cannot be reached.
    KeyboardInterrupt
        Ctrl-C while the LocalCluster was starting (it is closed again).
    """
    if scheduler == "synchronous":
        return None
    n_workers = check_int(n_workers, "workers", minimum=1)
    if not dask_available():
        raise ValueError("dask is not installed: pip install 'bayesldp[dask]', or use --no-dask")
    from dask.distributed import Client

    if not logger.isEnabledFor(logging.DEBUG):
        # distributed logs every scheduler/worker start and stop at INFO
        logging.getLogger("distributed").setLevel(logging.WARNING)
    if scheduler:
        try:
            return Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ValueError(
                f"scheduler: cannot connect to {scheduler} within {timeout:g} s ({reason})"
            ) from None
    logger.debug("starting a LocalCluster of %d workers", n_workers)
    cluster = _start_without_sigint(lambda: _local_cluster(n_workers))
    return Client(cluster)


def _local_cluster(n_workers: int) -> Any:
    """Start a LocalCluster of single-threaded worker processes."""
    import dask
    from dask.distributed import LocalCluster

    # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in workers, which makes glibc
    # return freed memory to the OS at once; the methods' large temporaries then
    # page-fault on every call. Keep glibc's default.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            # the workers' own warnings (e.g. a task cancelled by Ctrl-C) only with -v
            silence_logs=logging.WARNING if logger.isEnabledFor(logging.DEBUG) else logging.ERROR,
        )


def _start_without_sigint(start: Callable[[], Any]) -> Any:
    """Call ``start()`` in a thread that blocks SIGINT; this thread still takes Ctrl-C.

    Threads and processes started by ``start`` inherit the blocked signal. On Ctrl-C the
    start is let finish (it cannot be cut short safely), what it made is closed, and
    :class:`KeyboardInterrupt` is raised. Outside the main thread (and where signal
    masks do not exist) ``start`` is called directly.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        return start()
    # multiprocessing starts its resource tracker with SIGINT blocked and then unblocks
    # SIGINT in the thread that started it: started here first, it leaves Dask's threads
    # as they are
    resource_tracker.ensure_running()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = start()
        except BaseException as err:  # handed to the caller below
            outcome["error"] = err

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        helper = threading.Thread(target=target, name="bayesldp-cluster-start", daemon=True)
        helper.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    try:
        while helper.is_alive():
            helper.join(0.1)
    except KeyboardInterrupt:
        with _sigint_ignored():  # a second Ctrl-C does not cut the clean-up short
            helper.join()
            if "value" in outcome:
                _close_quietly(outcome["value"])
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT in this block (main thread only)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _close_quietly(cluster: Any) -> None:
    """Close a cluster after Ctrl-C without Dask's shutdown messages."""
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    with contextlib.suppress(Exception):
        cluster.close()


def close_client(client: Any, own_cluster: bool = True) -> None:
    """Close a client from :func:`make_client` (and its LocalCluster if it made one).

    Parameters
    ----------
    client : dask.distributed.Client or None
        The client; None (the synchronous scheduler) does nothing.
    own_cluster : bool, default True
        Close the client's cluster too (False when connected to an outside scheduler).
    """
    if client is None:
        return
    cluster = client.cluster
    # a worker slow to stop (a busy machine) is killed with a warning: not the user's concern
    nanny = logging.getLogger("distributed.nanny")
    level = nanny.level
    if not logger.isEnabledFor(logging.DEBUG):
        nanny.setLevel(logging.ERROR)
    try:
        client.close()
        if own_cluster and cluster is not None:
            cluster.close()
    finally:
        nanny.setLevel(level)
