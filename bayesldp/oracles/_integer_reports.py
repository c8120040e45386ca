"""Reports of one unsigned integer per user (GRR, HR), in the smallest dtype that fits."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp.oracles._arrow import arrow_integers
from bayesldp.oracles._base import FrequencyOracle


def unsigned_dtype(max_value: int) -> np.dtype:
    """Return the smallest unsigned integer dtype holding ``0 .. max_value``.

    Parameters
    ----------
    max_value : int
        Largest value the dtype must hold.

    Raises
    ------
    ValueError
        ``max_value`` does not fit in 64 bits.
    """
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_value <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"{max_value} does not fit in 64 bits")


class OneIntegerReports(FrequencyOracle):
    """Reports of one unsigned integer below ``self._report_bound`` per user."""

    @property
    def _report_bound(self) -> int:
        return self.domain_size

    @property
    def report_bits(self) -> int:
        """Bits of one report: ``ceil(log2 B)`` for one integer below the bound ``B``."""
        return (self._report_bound - 1).bit_length()

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, the smallest unsigned one holding the largest report."""
        return unsigned_dtype(self._report_bound - 1)

    def _check_values(self, r: np.ndarray, name: str) -> None:
        if r.max() >= self._report_bound:
            raise ValueError(
                f"{name} must lie in [0, {self._report_bound}) for {self.name}; "
                f"got maximum {r.max()}"
            )

    def _arrow_arrays(self, r: np.ndarray, pa: Any) -> list:
        return [pa.array(r)]

    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa: Any) -> np.ndarray:
        return arrow_integers(arrays[0], names[0], 0, self._report_bound, self.report_dtype)
