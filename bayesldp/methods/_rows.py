"""What a method's row function reads, and how a public method runs it on one measurement.

Every NumPy method is written once, vectorised over rows: its row function takes a
:class:`MeasurementRows` (``B`` measurements sharing the oracle, ``n``, ``p`` and
``q``, e.g. the parametric bootstrap's replicates) and returns the ``(B, d)``
frequencies and per-row diagnostics. The public function ``f(m, **options)`` runs the
same row function on the one row of ``m`` (:func:`one_row`), so the bootstrap re-runs
exactly the code that made the estimate.

A row function never warns: a row that would (e.g. ``norm-mul`` with nothing to
scale) says so in ``info["warning"]``; :func:`one_row` issues it, the bootstrap counts
them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement

__all__ = ["MeasurementRows", "RowFunction", "estimate_of", "one_row", "row_info"]

#: A row function: ``rows(batch, **options) -> (frequencies, info)``.
RowFunction = Callable[..., tuple[np.ndarray, dict[str, Any]]]


@dataclass(frozen=True)
class MeasurementRows:
    """``B`` measurements of one oracle with the same ``n``, ``p`` and ``q``, one per row.

    Attributes
    ----------
    measurement : Measurement
        Supplies what the rows share: ``n``, ``p``, ``q``, ``d``, the oracle and its
        noise scale ``sigma``.
    counts : numpy.ndarray
        Support counts, shape ``(B, d)``.
    estimates : numpy.ndarray
        Raw unbiased estimates ``(c / n - q) / (p - q)``, shape ``(B, d)``.
    """

    measurement: Measurement
    counts: np.ndarray
    estimates: np.ndarray

    @classmethod
    def of(cls, m: Measurement) -> MeasurementRows:
        """Return the single row of ``m`` (its own arrays, not copies).

        Parameters
        ----------
        m : Measurement
            The measurement.
        """
        return cls(m, m.support_counts[None, :], m.estimates[None, :])

    @classmethod
    def from_counts(cls, m: Measurement, counts: np.ndarray) -> MeasurementRows:
        """Rows of support counts measured like ``m`` (estimates as Measurement computes them).

        Parameters
        ----------
        m : Measurement
            Supplies ``n``, ``p``, ``q`` and the oracle.
        counts : numpy.ndarray
            Support counts, shape ``(B, d)``.
        """
        counts = np.asarray(counts)
        return cls(m, counts, (counts / m.n - m.q) / (m.p - m.q))

    @property
    def size(self) -> int:
        """Number of rows ``B``."""
        return int(self.counts.shape[0])


def row_info(info: dict[str, Any], row: int) -> dict[str, Any]:
    """Row ``row``'s diagnostics: per-row arrays indexed, NumPy scalars made Python ones.

    Parameters
    ----------
    info : dict
        A row function's ``info``: each value a per-row array (length ``B``) or one
        value shared by every row.
    row : int
        The row wanted.
    """
    out = {}
    for key, value in info.items():
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value[row]
        out[key] = value.item() if isinstance(value, np.generic) else value
    return out


def one_row(
    rows_function: RowFunction, m: Measurement, name: str, stacklevel: int = 4, **options: Any
) -> tuple[np.ndarray, dict[str, Any]]:
    """Run a row function on the one row of ``m``; issue its warning if it has one.

    Parameters
    ----------
    rows_function : callable
        The method's row function.
    m : Measurement
        The measurement.
    name : str
        The method's name, for the warning.
    stacklevel : int, default 4
        Of the warning: 4 points at the caller of :func:`bayesldp.postprocess` when the
        method calls this function itself.
    **options
        The method's options.

    Returns
    -------
    frequencies : numpy.ndarray
        Length ``d``.
    info : dict
        The row's diagnostics (without ``warning``).
    """
    frequencies, info = rows_function(MeasurementRows.of(m), **options)
    out = row_info(info, 0)
    message = out.pop("warning", "")
    if message:
        warnings.warn(f"{name}: {message}", RuntimeWarning, stacklevel=stacklevel)
    return frequencies[0], out


def estimate_of(rows_function: RowFunction, m: Measurement, name: str, **options: Any) -> Estimate:
    """Return the :class:`Estimate` of a method that is its row function on one row.

    Parameters
    ----------
    rows_function : callable
        The method's row function.
    m : Measurement
        The measurement.
    name : str
        The method's name.
    **options
        The method's options.
    """
    frequencies, info = one_row(rows_function, m, name, 5, **options)
    return Estimate(frequencies=frequencies, method=name, measurement=m, info=info)
