"""The queries a user will publish, parsed once for ``choose_method`` and ``plan``.

A query is ``"full"`` (every frequency), a random set of a fraction of the items
(``("set", r)`` or ``"set:r"``), the ``k`` largest items (``("top", k)`` or ``"top:k"``),
the items reaching a threshold (``("heavy", t)`` or ``"heavy:t"``), or a fixed grouping
(a list of index arrays, or a mapping whose values are). A set query covers
:func:`set_size` items, the rule of :func:`bayesldp.metrics.random_subsets`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesldp._validation import (
    check_float,
    check_indices,
    check_int,
    check_k,
    check_probability,
)

#: Every query kind, in the order the error messages list them.
QUERY_KINDS: tuple[str, ...] = ("full", "set", "top", "heavy", "groups")
#: The argument names the error messages give for each kind's parameter.
_NAMES = {"set": "query (set fraction)", "top": "query (top k)", "heavy": "query (heavy threshold)"}


@dataclass(frozen=True)
class Query:
    """What will be published: a parsed query.

    Attributes
    ----------
    kind : {"full", "set", "top", "heavy", "groups"}
        The query type.
    value : float or int or None
        The set fraction, ``k`` or the threshold; None for ``"full"`` and ``"groups"``.
    groups : tuple of numpy.ndarray
        The item indices of each group (``"groups"`` only).
    """

    kind: str
    value: float | int | None = None
    groups: tuple[np.ndarray, ...] = ()

    def __str__(self) -> str:
        """``full``, ``set:0.5``, ``top:10``, ``heavy:0.01`` or ``groups:N``."""
        if self.kind == "full":
            return "full"
        if self.kind == "groups":
            return f"groups:{len(self.groups)}"
        return f"{self.kind}:{self.value:g}"


def set_size(domain_size: int, fraction: float) -> int:
    """Return the items of a set query covering ``fraction`` of ``domain_size`` items.

    ``max(1, round(d * percent / 100))`` with ``percent = 100 * fraction``, as
    :func:`bayesldp.metrics.random_subsets` sizes its sets.
    """
    return max(1, round(domain_size * (fraction * 100) / 100))


def random_set_masks(
    shape: tuple[int, ...], domain_size: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Draw uniform random sets of ``size`` items, as boolean masks of ``(*shape, d)``.

    Each set takes the ``size`` items of smallest uniform key, so every set of that size
    is equally likely.
    """
    keys = rng.random((*shape, domain_size))
    chosen = np.argpartition(keys, size - 1, axis=-1)[..., :size]
    masks = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(masks, chosen, True, axis=-1)
    return masks


def _unknown(query: Any, kinds: Sequence[str]) -> ValueError:
    """Return the error for a query that is none of ``kinds``."""
    forms = {
        "full": "'full'",
        "set": "('set', fraction)",
        "top": "('top', k)",
        "heavy": "('heavy', threshold)",
        "groups": "a non-empty list of index arrays",
    }
    return ValueError(
        f"unknown query {query!r:.80}; give " + ", ".join(forms[k] for k in kinds if k in forms)
    )


def parse_query(query: Any, domain_size: int, kinds: Sequence[str] = QUERY_KINDS) -> Query:
    """Check ``query`` against a domain of ``domain_size`` items and return it parsed.

    Parameters
    ----------
    query : str, tuple, list or mapping
        ``"full"``; ``("set", r)`` or ``"set:r"`` with ``r`` in (0, 1]; ``("top", k)`` or
        ``"top:k"`` with ``k`` an integer in ``[1, d]``; ``("heavy", t)`` or ``"heavy:t"``
        with ``t`` in (0, 1); or a fixed grouping (a list of index arrays, or a mapping
        whose values are), each group non-empty.
    domain_size : int
        The number of items ``d``.
    kinds : sequence of str, default all
        The query kinds the caller accepts.

    Returns
    -------
    Query

    Raises
    ------
    ValueError
        Naming ``query`` (an unknown or unaccepted kind, or its parameter) or ``groups``.
    """
    d = check_int(domain_size, "domain_size", minimum=1)
    value: Any = None
    if isinstance(query, str):
        kind, colon, text = query.strip().partition(":")
        if colon:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"query parameter must be a number, got {query!r}") from None
            if kind == "top" and value.is_integer():
                value = int(value)
    elif isinstance(query, tuple) and len(query) == 2 and isinstance(query[0], str):
        kind, value = query
        if kind == "full":
            raise ValueError(f"query 'full' takes no parameter, got {query!r:.80}")
    else:
        if isinstance(query, Mapping):
            query = list(query.values())
        if "groups" not in kinds or not (
            isinstance(query, list | tuple) and query and not isinstance(query[0], str)
        ):
            raise _unknown(query, kinds)
        groups = tuple(check_indices(g, d, f"groups[{i}]") for i, g in enumerate(query))
        if any(g.size == 0 for g in groups):
            raise ValueError("groups: every group must hold at least one item")
        return Query("groups", None, groups)
    if kind not in kinds or kind == "groups":
        raise _unknown(query, kinds)
    if kind == "full":
        if value is not None:
            raise ValueError(f"query 'full' takes no parameter, got {query!r}")
        return Query("full")
    if value is None:
        example = 0.5 if kind == "set" else 10
        raise ValueError(f"query {kind!r} needs a parameter, e.g. '{kind}:{example}'")
    name = _NAMES[kind]
    if kind == "set":
        return Query("set", check_float(value, name, minimum=0.0, maximum=1.0, strict_minimum=True))
    if kind == "top":
        return Query("top", check_k(value, d, name))
    return Query("heavy", check_probability(value, name))


def set_loss(errors: np.ndarray, size: int) -> np.ndarray:
    r"""Exact expected squared error of a uniformly random ``size``-set's sum, per row.

    :math:`\frac sd \sum e^2 + \frac{s(s-1)}{d(d-1)}((\sum e)^2 - \sum e^2)`.

    Parameters
    ----------
    errors : numpy.ndarray
        Per-item errors, shape ``(B, d)``.
    size : int
        The set size ``s``, in ``[1, d]``.

    Returns
    -------
    numpy.ndarray
        Shape ``(B,)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesldp._query import set_loss
    >>> float(set_loss(np.array([[1.0, -1.0]]), 2)[0])
    0.0
    """
    d = errors.shape[1]
    s2 = np.einsum("ij,ij->i", errors, errors)
    s1 = errors.sum(axis=1)
    pairs = size * (size - 1) / (d * (d - 1)) if d > 1 else 0.0
    return size / d * s2 + pairs * (s1**2 - s2)


def top_items(frequencies: np.ndarray, k: int) -> np.ndarray:
    """Return the ``k`` items with the largest frequencies, ties by index (per row)."""
    f = np.atleast_2d(frequencies)
    index = np.broadcast_to(np.arange(f.shape[1]), f.shape)
    return np.lexsort((index, -f), axis=-1)[:, :k]
