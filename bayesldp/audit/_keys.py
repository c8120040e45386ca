"""Reports as keys: one comparable key per user, counted per input and per half.

A report is compared as the bytes it is transmitted as (dtype, order and layout all
count). Keys wider than :data:`MAX_KEY_BYTES` are compared through a 16-byte BLAKE2b
digest.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

#: Reports wider than this many bytes are compared through a 16-byte BLAKE2b digest.
MAX_KEY_BYTES = 64


def report_keys(out: Any, n: int, name: str) -> np.ndarray:
    """One key per user, such that keys are equal exactly when the bytes are equal.

    ``out`` is an ndarray whose first axis is users (row ``i`` of
    ``np.ascontiguousarray(out).reshape(n, -1)`` is user ``i``'s bytes), or a list or
    tuple of ``bytes``. Returns a 1-D void array (fixed width) or object array of bytes.
    """
    if isinstance(out, np.ndarray):
        if out.dtype.hasobject:
            raise ValueError(
                f"{name} returned an object array; return a numeric array or a list of bytes"
            )
        if out.ndim == 0 or out.shape[0] != n:
            raise ValueError(
                f"{name} returned an array of shape {out.shape}; its first axis must be "
                f"the {n} users"
            )
        rows = np.ascontiguousarray(out).reshape(n, -1)
        width = rows.shape[1] * rows.dtype.itemsize
        if width == 0:
            return np.full(n, b"", dtype=object)
        keys = rows.view(np.dtype((np.void, width))).reshape(n)
        if width > MAX_KEY_BYTES:
            return digest(keys)
        return keys
    if isinstance(out, list | tuple):
        if len(out) != n:
            raise ValueError(f"{name} returned {len(out)} reports for {n} users")
        if not all(isinstance(x, bytes) for x in out):
            raise ValueError(f"{name} returned a sequence whose items are not all bytes")
        keys = np.empty(n, dtype=object)
        keys[:] = list(out)
        return keys
    raise ValueError(
        f"{name} must return a numpy array (first axis = users) or a list of bytes, "
        f"got {type(out).__name__}"
    )


def digest(keys: np.ndarray) -> np.ndarray:
    """16-byte BLAKE2b digests of wide keys (equal bytes give equal digests)."""
    out = np.empty(keys.size, dtype=np.dtype((np.void, 16)))
    view = out.view(np.uint8).reshape(keys.size, 16)
    for i, key in enumerate(keys):
        view[i] = np.frombuffer(hashlib.blake2b(key.tobytes(), digest_size=16).digest(), np.uint8)
    return out


def as_bytes_objects(keys: np.ndarray) -> np.ndarray:
    if keys.dtype == object:
        return keys
    out = np.empty(keys.size, dtype=object)
    out[:] = [k.tobytes() for k in keys]
    return out


def unique_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)``, sorting short byte keys as integers."""
    width = keys.dtype.itemsize
    if keys.dtype.kind != "V" or width > 8:
        return np.unique(keys, return_inverse=True)
    padded = np.zeros((keys.size, 8), dtype=np.uint8)
    padded[:, :width] = keys.view(np.uint8).reshape(keys.size, width)
    ints, inverse = np.unique(padded.view(np.uint64).reshape(-1), return_inverse=True)
    back = np.ascontiguousarray(ints.view(np.uint8).reshape(-1, 8)[:, :width])
    return back.view(keys.dtype).reshape(-1), inverse


def concat_keys(chunks: list[np.ndarray]) -> np.ndarray:
    if len({(k.dtype.kind, k.dtype.itemsize) for k in chunks}) > 1:
        chunks = [as_bytes_objects(k) for k in chunks]  # e.g. widths differ
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def group_counts(
    keys: list[np.ndarray], selection: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Count each distinct key per input and half.

    Returns the distinct keys (as one array) and counts of shape
    ``(len(keys), 2, n_keys)``: ``[:, 0]`` the selection half, ``[:, 1]`` the rest.
    """
    uniq, inverse = unique_keys(concat_keys(keys))
    counts = np.zeros((len(keys), 2, uniq.size), dtype=np.int64)
    start = 0
    for g, (k, sel) in enumerate(zip(keys, selection, strict=True)):
        inv = inverse[start : start + k.size]
        counts[g, 0] = np.bincount(inv[sel], minlength=uniq.size)
        counts[g, 1] = np.bincount(inv[~sel], minlength=uniq.size)
        start += k.size
    return uniq, counts


def describe_bytes(key: bytes, layouts: set) -> str:
    """Return the report's values if all reports share one dtype and width, else its bytes."""
    if len(layouts) == 1 and None not in layouts:
        ((dtype, items),) = layouts
        dt = np.dtype(dtype)
        if len(key) == dt.itemsize * items and len(key) <= MAX_KEY_BYTES:
            values = np.frombuffer(key, dtype=dt)
            return f"report {values.tolist()} ({dt.name})"
        if dt.itemsize * items > MAX_KEY_BYTES:
            return f"report with BLAKE2b digest 0x{key.hex()}"
    return "0x" + key.hex() if len(key) <= 32 else f"0x{key[:32].hex()}... ({len(key)} bytes)"


def key_bytes(key: Any) -> bytes:
    return key if isinstance(key, bytes) else key.tobytes()
