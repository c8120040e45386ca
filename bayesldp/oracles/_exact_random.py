"""Exact random bits for the oracles' user side: Bernoulli flags, packed Bernoulli bits, subsets.

Every sampler here draws *exactly* the law it names, with the probability taken as the
float64 number given (a float is a dyadic rational ``M / 2^E``), from uniform 64-bit
words of the generator: no draw compares a low-precision random number with a rounded
threshold.

* :func:`bernoulli` (one flag per element) compares uniform 64-bit integers with the
  successive 64-digit blocks of the binary expansion of ``prob``; an element whose
  integer equals the block (probability :math:`2^{-64}`) draws the next block, until
  the expansion ends. The result is 1 with probability exactly ``prob``.
* :func:`bernoulli_packed` makes bits 64 at a time with bitwise operations on words
  (:func:`bernoulli_chain`): each bit lane compares a uniform 8-bit number ``U``,
  given by one bit of each of 8 uniform words, with the first 8 binary digits ``t``
  of ``prob``, most significant digit first. The lane is 1 if ``U < t`` (probability
  ``t / 256``), 0 if ``U > t``, and a lane with ``U = t`` (probability
  :math:`2^{-8}`) is resolved by :func:`bernoulli` with the remaining digits
  ``256 prob - t``. So each bit costs 8 random bits (plus 64 for one bit in 256), and
  the bits come packed.
* :func:`subsets` draws, for each row, a uniform subset of ``k`` items (by rejection of
  sorted iid draws when ``k`` is small, else by completing an iid Bernoulli mask with
  uniform rejection draws), optionally forced to hold or to avoid a given item.

``tests/oracles/test_exact_random.py`` checks the chain against all 256 digit patterns, the
threshold blocks against the exact rational, and the samplers' laws by chi-square.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "CHAIN_DIGITS",
    "bernoulli",
    "bernoulli_chain",
    "bernoulli_packed",
    "binary_digits",
    "random_words",
    "subsets",
]

#: Binary digits of the probability handled by the word-parallel chain.
CHAIN_DIGITS = 8
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
# Bit generators whose random_raw returns 64 uniform bits per call (MT19937 returns 32).
_RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64, np.random.Philox)


def random_words(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent uniform 64-bit words (``uint64``) from ``rng``.

    Uses the bit generator's raw output when it is 64 bits wide (PCG64, PCG64DXSM,
    SFC64, Philox), else ``rng.integers`` over the full 64-bit range.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    size : int
        Number of words.
    """
    if type(rng.bit_generator) in _RAW64:
        return rng.bit_generator.random_raw(int(size))
    return rng.integers(0, 2**64 - 1, size=int(size), dtype=np.uint64, endpoint=True)


def _dyadic(prob: float) -> tuple[int, int]:
    """``prob = M / 2^E`` exactly, for a float in [0, 1]."""
    if not 0.0 <= prob <= 1.0 or math.isnan(prob):
        raise ValueError(f"prob must lie in [0, 1], got {prob!r}")
    num, den = float(prob).as_integer_ratio()
    return num, den.bit_length() - 1


def binary_digits(prob: float, start: int, count: int) -> int:
    """Digits ``start+1 .. start+count`` of the binary expansion of ``prob`` as an integer.

    ``prob = sum_i b_i 2^-i``; the result is ``floor(prob 2^(start+count)) mod 2^count``.
    For ``prob = 1`` the expansion used is ``1.000...`` (so every digit is 0): callers
    treat 1 separately.

    Parameters
    ----------
    prob : float
        A probability in [0, 1]; its exact float64 value is expanded.
    start : int
        Number of leading digits skipped.
    count : int
        Number of digits returned.
    """
    num, exp = _dyadic(prob)
    shift = start + count
    value = (num << shift) >> exp if shift <= exp else num << (shift - exp)
    return value & ((1 << count) - 1)


def _remaining_digits(prob: float, start: int) -> bool:
    """Whether ``prob`` has a non-zero binary digit after digit ``start``."""
    num, exp = _dyadic(prob)
    return exp > start and (num & ((1 << (exp - start)) - 1)) != 0


def bernoulli(prob: float, size: int, rng: np.random.Generator) -> np.ndarray:
    r"""``size`` independent flags, each True with probability exactly ``prob``.

    Parameters
    ----------
    prob : float
        Probability in ``[0, 1]`` (its exact float64 value is used).
    size : int
        Number of flags.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Boolean array of length ``size``.

    Notes
    -----
    Stage ``j`` compares a uniform 64-bit integer ``V`` with the ``j``-th block ``T_j``
    of 64 binary digits of ``prob``: ``V < T_j`` is 1, ``V > T_j`` is 0, and the ties
    go on to stage ``j + 1``; after the last non-zero digit a tie is 0. So
    :math:`P(1) = \sum_j T_j 2^{-64 j} = ` ``prob``.
    """
    num, exp = _dyadic(prob)
    size = int(size)
    if num == 0 or size == 0 or exp == 0:  # prob 0, no flags, or prob 1
        return np.full(size, exp == 0 and num == 1, dtype=bool)
    threshold = np.uint64(binary_digits(prob, 0, 64))
    draws = random_words(rng, size)
    out = draws < threshold
    undecided = np.flatnonzero(draws == threshold)  # probability 2^-64 each
    start = 64
    while undecided.size and start < exp:
        threshold = np.uint64(binary_digits(prob, start, 64))
        draws = random_words(rng, undecided.size)
        out[undecided] = draws < threshold
        undecided = undecided[draws == threshold]
        start += 64
    return out


def bernoulli_chain(
    words: np.ndarray, digits: int, n_digits: int = CHAIN_DIGITS
) -> tuple[np.ndarray, np.ndarray]:
    r"""Word-parallel Bernoulli bits from ``n_digits`` uniform words per 64 bits.

    Each bit lane compares a uniform number with the probability's digits ``b_i``,
    most significant first, lane ``j`` of row ``i`` being the lane's random digit
    ``R_i``: while the lane is undecided, ``R_i = 1`` keeps it undecided and ``R_i = 0``
    decides it, to 1 if ``b_i = 1`` and to 0 if ``b_i = 0``. Each digit decides half of
    the undecided lanes, in the direction of ``b_i``, so a lane ends 1 with probability
    :math:`\sum_i b_i 2^{-i}` and undecided (tied) with probability :math:`2^{-n}`:
    the law of comparing a uniform ``n``-bit integer with ``t``.

    Parameters
    ----------
    words : numpy.ndarray
        ``uint64`` array of shape ``(n_digits, W)`` of uniform random words. Row 0 may
        be reused as the returned ``ties``; the array is scratch afterwards.
    digits : int
        The probability's first ``n_digits`` binary digits as an integer
        ``t = sum_i b_i 2^(n_digits - i)``, ``0 <= t < 2^n_digits``.
    n_digits : int
        Number of digits (at least 1).

    Returns
    -------
    bits : numpy.ndarray
        ``uint64`` array of ``W`` words: the lanes decided 1. Given no tie, a lane is 1
        with probability ``t / 2^n_digits``; its law is exactly that of comparing a
        uniform ``n_digits``-bit integer ``U`` with ``t``: 1 iff ``U < t``.
    ties : numpy.ndarray
        ``uint64`` array of ``W`` words: the lanes that agreed on every digit
        (``U = t``, probability ``2^-n_digits``; disjoint from ``bits``), which the
        caller resolves with the probability's remaining digits.
    """
    b = [(digits >> (n_digits - 1 - i)) & 1 for i in range(n_digits)]  # b[0] = first digit
    width = words.shape[1]
    tied = words[0]  # after the first digit, the lanes that agree with it
    ones = np.invert(tied) if b[0] else None  # b = 1 and R = 0: decided 1
    scratch = np.empty(width, dtype=np.uint64)
    for i in range(1, n_digits):
        r = words[i]
        if b[i]:  # decided 1 where tied and R = 0; still tied where R = 1
            np.bitwise_and(tied, r, out=scratch)
            np.bitwise_xor(tied, scratch, out=tied)  # tied & ~R
            if ones is None:
                ones, tied = tied, scratch
                scratch = np.empty(width, dtype=np.uint64)
            else:
                np.bitwise_or(ones, tied, out=ones)
                tied, scratch = scratch, tied
        else:  # decided 0 where tied and R = 0; still tied where R = 1
            np.bitwise_and(tied, r, out=tied)
    if ones is None:
        ones = np.zeros(width, dtype=np.uint64)
    return ones, tied


def bernoulli_packed(prob: float, nbytes: int, rng: np.random.Generator) -> np.ndarray:
    """``8 * nbytes`` independent bits, each 1 with probability exactly ``prob``, packed.

    Parameters
    ----------
    prob : float
        Probability in ``[0, 1]``.
    nbytes : int
        Number of bytes to return.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``uint8`` array of ``nbytes`` bytes. The bits are independent and identically
        distributed, so their order within and across bytes carries no meaning.

    Notes
    -----
    See the module docstring: :func:`bernoulli_chain` on the first 8 binary digits of
    ``prob`` (fewer when the expansion ends sooner), then :func:`bernoulli` with the
    remaining digits for the bits that tied. Cost: 8 random bits per bit, plus 64 for
    one bit in 256.
    """
    num, exp = _dyadic(prob)
    nbytes = int(nbytes)
    n_words = -(-nbytes // 8)
    if num == 0 or nbytes == 0 or exp == 0:  # prob 0, no bytes, or prob 1
        return np.full(nbytes, 0xFF if exp == 0 and num == 1 else 0, dtype=np.uint8)
    rest = _remaining_digits(prob, CHAIN_DIGITS)
    if rest:
        n_digits = CHAIN_DIGITS
    else:  # the expansion ends within the chain: drop trailing zero digits, no ties
        n_digits = min(exp, CHAIN_DIGITS)
    digits = binary_digits(prob, 0, n_digits)
    words = random_words(rng, n_digits * n_words).reshape(n_digits, n_words)
    bits, ties = bernoulli_chain(words, digits, n_digits)
    if rest:
        # Resolve the tied bits with the remaining digits, one set bit per word per pass
        # (most tied words hold a single tied bit).
        remainder = prob * 2.0**CHAIN_DIGITS - digits  # exact: the remaining digits
        (where,) = np.nonzero(ties != 0)
        tied = ties[where]
        zero = np.uint64(0)
        while where.size:
            lowest = tied & np.negative(tied)  # two's complement: the lowest set bit
            tied ^= lowest
            # `where` holds each word once, so the fancy in-place OR is well defined
            bits[where] |= np.where(bernoulli(remainder, where.size, rng), lowest, zero)
            left = tied != 0
            where, tied = where[left], tied[left]
    return bits.view(np.uint8)[:nbytes]


def _others_to_items(draws: np.ndarray, avoid: np.ndarray) -> np.ndarray:
    """Map indices in ``[0, d-1)`` onto the items ``[0, d)`` other than ``avoid`` (per row)."""
    return draws + (draws >= avoid)


def _subsets_reject(
    avoid: np.ndarray, include: np.ndarray, d: int, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Sorted iid draws, rows with a repeat drawn again (exact; for small k)."""
    rows = avoid.size
    out = np.empty((rows, k), dtype=np.int64)
    todo = np.arange(rows)
    while todo.size:
        draws = rng.integers(0, d - 1, size=(todo.size, k))
        items = _others_to_items(draws, avoid[todo, None])
        inc = include[todo]
        items[inc, 0] = avoid[todo][inc]
        items.sort(axis=1)
        repeat = (items[:, 1:] == items[:, :-1]).any(axis=1) if k > 1 else np.zeros(0, bool)
        keep = ~repeat if k > 1 else np.ones(todo.size, dtype=bool)
        out[todo[keep]] = items[keep]
        todo = todo[~keep]
    return out


def _subsets_mask(
    avoid: np.ndarray, include: np.ndarray, d: int, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw an iid Bernoulli mask with at most k items, completed by uniform rejection draws."""
    rows = avoid.size
    m = d - 1
    target = k - include.astype(np.int64)  # items to choose among the d - 1 others
    width = -(-d // 8)
    # Any inclusion probability gives, given its size, a uniform subset; aim a little
    # below k (resolution 2^-digits), so that few masks overshoot (those are drawn
    # again) and few items are left to add one by one.
    spread = math.sqrt(k * (1 - k / d))
    digits = min(16, max(CHAIN_DIGITS, math.ceil(math.log2(4 * m / max(spread, 1.0)))))
    scale = 1 << digits
    prob = math.floor(scale * max(0.0, k - 1.5 * spread - 1) / m) / scale
    byte = avoid >> 3
    bit = (0x80 >> (avoid & 7)).astype(np.uint8)
    packed = np.empty((rows, width), dtype=np.uint8)
    count = np.empty(rows, dtype=np.int64)
    todo = np.arange(rows)
    while todo.size:  # the rows whose mask holds too many items are drawn again
        part = bernoulli_packed(prob, todo.size * width, rng).reshape(todo.size, width)
        if d % 8:
            part[:, -1] &= (0xFF << (8 - d % 8)) & 0xFF
        part[np.arange(todo.size), byte[todo]] &= ~bit[todo]
        got = np.bitwise_count(part).sum(axis=1, dtype=np.int64)
        packed[todo] = part
        count[todo] = got
        todo = todo[got > target[todo]]
    mask = np.unpackbits(packed, axis=1, count=d).view(bool)
    del packed
    flat = mask.reshape(-1)
    need = target - count
    active = np.flatnonzero(need > 0)
    while active.size:
        # Sequential rejection: each row's candidates c_1, c_2, ... in turn, c_i accepted
        # if the row still needs items and c_i is in neither the subset nor an earlier
        # candidate of the row. Many rows: candidate by candidate over all rows; few
        # rows: many candidates per row at once, repeats found by a stable sort.
        left = need[active]
        cols = math.ceil(1.2 * int(left.max()) * m / (m - k + 1)) + 8
        if active.size >= cols:
            draws = rng.integers(0, m, size=(int(left.max()), active.size))
            cells = active * d + _others_to_items(draws, avoid[active])
            for col in cells:
                ok = ~flat[col]
                ok &= left > 0
                flat[col[ok]] = True
                left -= ok
        else:
            draws = rng.integers(0, m, size=(active.size, cols))
            cells = (active * d)[:, None] + _others_to_items(draws, avoid[active, None])
            order = np.argsort(cells, axis=1, kind="stable")
            ranked = np.take_along_axis(cells, order, axis=1)
            repeat = np.zeros(cells.shape, dtype=bool)
            np.put_along_axis(repeat, order[:, 1:], ranked[:, 1:] == ranked[:, :-1], axis=1)
            ok = ~flat[cells]
            ok &= ~repeat
            ok &= np.cumsum(ok, axis=1) <= left[:, None]
            flat[cells[ok]] = True
            left -= ok.sum(axis=1)
        need[active] = left
        active = active[left > 0]
    mask[np.arange(rows), avoid] = include
    chosen = np.flatnonzero(flat).reshape(rows, k)
    chosen -= (np.arange(rows) * d)[:, None]
    return chosen


def subsets(
    avoid: Any,
    include: Any,
    d: int,
    k: int,
    rng: np.random.Generator,
    *,
    method: str = "auto",
) -> np.ndarray:
    r"""One uniformly random ``k``-subset of ``[0, d)`` per row, sorted ascending.

    Row ``r`` is a uniform ``k``-subset among those holding ``avoid[r]`` when
    ``include[r]`` is True, else among those not holding it.

    Parameters
    ----------
    avoid : array_like of int
        One item in ``[0, d)`` per row.
    include : array_like of bool
        Whether the row's subset holds its ``avoid`` item.
    d : int
        Domain size (``>= 2``).
    k : int
        Subset size, ``1 <= k <= d - 1``.
    rng : numpy.random.Generator
        Source of randomness.
    method : {"auto", "reject", "mask"}
        ``"reject"``: ``k`` (or ``k - 1``) iid uniform draws among the other items,
        sorted, the rows with a repeat drawn again (accepted with probability about
        :math:`e^{-k^2/2d}`; cost :math:`O(k \log k)` per row, no ``d``-sized work).
        ``"mask"``: an iid Bernoulli mask over the domain with a probability just
        below ``k/d`` (masks with too many items are drawn again), completed to ``k``
        items by uniform draws rejected when already present; cost ``O(d)`` per row
        (one byte per cell). ``"auto"`` takes ``"reject"`` when ``k (k-1) <= d - 1``.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(rows, k)``, each row strictly increasing.

    Notes
    -----
    Both methods are exact: every step treats the candidate items symmetrically, so
    the subset's law is invariant under permutations of the other items, hence
    uniform; conditioning iid draws on being distinct keeps this symmetry, and adding
    an item uniform over the complement of a uniform ``j``-subset gives a uniform
    ``(j+1)``-subset.
    """
    avoid = np.asarray(avoid, dtype=np.int64)
    include = np.asarray(include, dtype=bool)
    if not 1 <= k <= d - 1:
        raise ValueError(f"k must lie in [1, {d - 1}], got {k}")
    if method == "auto":
        method = "reject" if k * (k - 1) <= d - 1 else "mask"
    if method == "reject":
        return _subsets_reject(avoid, include, d, k, rng)
    if method == "mask":
        return _subsets_mask(avoid, include, d, k, rng)
    raise ValueError(f"unknown method {method!r}; choose auto, reject or mask")
