"""Output: result files written atomically, and Markdown tables of results.

Files are complete or absent, never half-written; the tables are for scripts to print.
Private to the library (the runner, the experiments, the benchmarks use it).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; rename it over ``path`` on success.

    An exception (or an interrupted process) leaves ``path`` as it was. Missing parent
    directories are created.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    mode : str, default "w"
        Mode of the temporary file (``"w"`` or ``"wb"``).

    Yields
    ------
    file object
        The open temporary file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; use the usual mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically.

    Keys are sorted; values JSON cannot encode are written as their ``str``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    obj : object
        The data.
    """
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, default=str)


def write_csv(path: str | os.PathLike, frame: Any) -> None:
    """Write a pandas DataFrame as CSV, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    frame : pandas.DataFrame
        The table; its index is not written.
    """
    with atomic_open(path) as fh:
        frame.to_csv(fh, index=False)


def markdown_table(frame: Any) -> str:
    """Format a pandas DataFrame as a Markdown table, floats to 3 significant digits.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its index is left out.
    """
    import numpy as np

    cells = [
        [f"{v:.3g}" if isinstance(v, float | np.floating) else str(v) for v in row]
        for row in frame.itertuples(index=False)
    ]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)
