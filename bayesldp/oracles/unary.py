r"""Unary encoding: each user reports ``d`` independent bits, packed 8 per byte (OUE, SUE).

Bit ``v`` is 1 with probability ``p`` for the user's own value and ``q`` for every other
value, independently, so the support counts are independent binomials and a round is
simulated exactly in O(d). OUE (optimized unary encoding) takes :math:`p = 1/2`,
:math:`q = 1/(e^\varepsilon + 1)`; SUE (symmetric unary encoding, basic RAPPOR) takes
:math:`p = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)` and :math:`q = 1 - p`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp.oracles._arrow import arrow_integers
from bayesldp.oracles._base import FrequencyOracle, register_oracle
from bayesldp.oracles._blocks import blocks, rows_per_block
from bayesldp.oracles._exact_random import bernoulli, bernoulli_packed
from bayesldp.oracles._probabilities import exp_ratios

__all__ = ["OUE", "SUE"]


class _UnaryEncoding(FrequencyOracle):
    """Unary encoding: each user reports ``d`` bits, packed 8 per byte.

    Bit ``v`` is 1 with probability ``p`` for the user's own value and ``q`` for every
    other value, independently. Reports: ``uint8`` of shape ``(n, ceil(d/8))`` in
    ``numpy.packbits`` order (item ``j`` is bit ``7 - j % 8`` of byte ``j // 8``);
    padding bits are 0. ``numpy.unpackbits(reports, axis=1, count=d)`` gives the bits.
    """

    bootstrap_simulation = "exact"  # the bits are independent: the binomials are exact

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, ``uint8``."""
        return np.dtype(np.uint8)

    @property
    def report_bits(self) -> int:
        """Bits of one report: ``d``, one per item."""
        return self.domain_size

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one report, ``(ceil(d/8),)`` bytes."""
        return (-(-self.domain_size // 8),)

    @property
    def _pad_mask(self) -> int:
        """Bits of the last byte that hold items (the rest are padding)."""
        used = self.domain_size - 8 * (self.report_shape[0] - 1)
        return (0xFF << (8 - used)) & 0xFF

    @property
    def _privatize_cells(self) -> int:
        return self.domain_size

    @property
    def _count_cells(self) -> int:
        return self.domain_size

    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        rows, width = out.shape
        out[:] = bernoulli_packed(self.q, rows * width, rng).reshape(rows, width)
        out[:, -1] &= self._pad_mask
        own = bernoulli(self.p, rows, rng)
        byte = v >> 3
        bit = (0x80 >> (v & 7)).astype(np.uint8)
        idx = np.arange(rows)
        cur = out[idx, byte]
        out[idx, byte] = np.where(own, cur | bit, cur & ~bit)

    def _check_values(self, r: np.ndarray, name: str) -> None:
        pad = self._pad_mask
        if pad != 0xFF and np.any(r[:, -1] & (~pad & 0xFF)):
            raise ValueError(f"{name}: padding bits beyond item {self.domain_size - 1} must be 0")

    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        byte = r[:, items >> 3]
        return (byte & (0x80 >> (items & 7)).astype(np.uint8)[None, :]) != 0

    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        bits = np.unpackbits(r, axis=1, count=self.domain_size)
        return bits.sum(axis=0, dtype=np.int64)

    def _arrow_arrays(self, r: np.ndarray, pa: Any) -> list:
        width = self.report_shape[0]
        buf = pa.py_buffer(np.ascontiguousarray(r))
        return [pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), r.shape[0], [None, buf])]

    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa: Any) -> np.ndarray:
        arr, name = arrays[0], names[0]
        d, width = self.domain_size, self.report_shape[0]
        if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            return self._pack_indices(arr, name)
        if arr.type != pa.binary(width):
            try:
                arr = arr.cast(pa.binary(width))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                raise ValueError(
                    f"column {name!r} must hold {width}-byte packed bits for d={d}, got {arr.type}"
                ) from err
        data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        start = arr.offset * width
        return data[start : start + len(arr) * width].reshape(-1, width)

    def _pack_indices(self, arr: Any, name: str) -> np.ndarray:
        """Convert a list column of set-bit indices (files from elsewhere) to packed bits."""
        d, width = self.domain_size, self.report_shape[0]
        import pyarrow.compute as pc

        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        idx = arrow_integers(arr.flatten(), name, 0, d, np.int64)
        out = np.empty((len(arr), width), dtype=np.uint8)
        ends = np.cumsum(lengths)
        for sl in blocks(len(arr), rows_per_block(d)):
            lo = int(ends[sl.start - 1]) if sl.start else 0
            hi = int(ends[sl.stop - 1])
            rows = np.repeat(np.arange(sl.stop - sl.start), lengths[sl])
            bits = np.zeros((sl.stop - sl.start, d), dtype=bool)
            bits[rows, idx[lo:hi]] = True
            if np.count_nonzero(bits) != hi - lo:
                raise ValueError(f"column {name!r}: a report lists an item twice")
            out[sl] = np.packbits(bits, axis=1)
        return out


@register_oracle
class OUE(_UnaryEncoding):
    r"""Optimized unary encoding: :math:`p = 1/2`, :math:`q = 1/(e^\varepsilon + 1)`.

    Reports: the ``d`` bits packed, ``uint8`` of shape ``(n, ceil(d/8))``.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items.
    """

    name = "OUE"

    @property
    def p(self) -> float:
        """Probability 1/2 that the bit of the user's own value is 1."""
        return 0.5

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^\varepsilon + 1)` that the bit of another item is 1."""
        return exp_ratios(self.epsilon, 1.0, 1.0)[1]


@register_oracle
class SUE(_UnaryEncoding):
    r"""Symmetric unary encoding (basic RAPPOR).

    :math:`p = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`, :math:`q = 1 - p`.
    Reports: the ``d`` bits packed, ``uint8`` of shape ``(n, ceil(d/8))``.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items.
    """

    name = "SUE"

    @property
    def p(self) -> float:
        r"""Probability :math:`e^{\varepsilon/2}/(e^{\varepsilon/2}+1)` that the own bit is 1."""
        return exp_ratios(self.epsilon / 2, 1.0, 1.0)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`1 / (e^{\varepsilon/2} + 1)` that the bit of another item is 1."""
        return exp_ratios(self.epsilon / 2, 1.0, 1.0)[1]
