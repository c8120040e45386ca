r"""Subset selection (SS): each user reports a set of ``k`` items.

With probability :math:`p = k e^\varepsilon / (k e^\varepsilon + d - k)` the set holds
the user's value and ``k - 1`` other items chosen uniformly, otherwise ``k`` items
chosen uniformly from the others. The number of items of a given set that one report
holds is a mixture of hypergeometric counts, which gives the exact variance of a set's
summed support counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp._validation import check_int
from bayesldp.measurement import Measurement
from bayesldp.oracles._arrow import arrow_integers
from bayesldp.oracles._base import FrequencyOracle, register_oracle
from bayesldp.oracles._blocks import bincount
from bayesldp.oracles._exact_random import bernoulli, subsets
from bayesldp.oracles._integer_reports import unsigned_dtype
from bayesldp.oracles._probabilities import exp_ratios

__all__ = ["SS"]


def hypergeometric_moments(population: int, successes: int, draws: int) -> tuple[float, float]:
    """Mean and second moment of a hypergeometric count.

    Parameters
    ----------
    population : int
        Items to draw from.
    successes : int
        Items of the population that count.
    draws : int
        Items drawn without replacement.

    Returns
    -------
    tuple of float
        The mean and the second moment (variance plus squared mean) of the number of
        counted items drawn.
    """
    if draws <= 0 or successes <= 0:
        return 0.0, 0.0
    share = successes / population
    mean = draws * share
    var = 0.0
    if population > 1:
        var = draws * share * (1 - share) * (population - draws) / (population - 1)
    return mean, var + mean * mean


def mixed_hypergeometric_variance(
    d: int, k: int, p: float, shift: int, successes: np.ndarray
) -> np.ndarray:
    """Variance of the number of set items in one SS report, for each set size.

    With probability ``p`` the report holds the user's value (counted ``shift`` times:
    1 when it is in the set) and ``k - 1`` of the other ``d - 1`` items, otherwise ``k``
    of them; ``successes`` are the set's items among those others.

    Parameters
    ----------
    d, k : int
        Domain size and report size.
    p : float
        Probability that the report holds the user's value.
    shift : int
        1 if the user's value is in the set, else 0.
    successes : numpy.ndarray of int
        Set items among the other ``d - 1``, one per set.

    Returns
    -------
    numpy.ndarray
        One variance per set.
    """
    out = np.empty(successes.size)
    for i, a in enumerate(successes):
        m1, s1 = hypergeometric_moments(d - 1, int(a), k - 1)
        m0, s0 = hypergeometric_moments(d - 1, int(a), k)
        e1 = p * (m1 + shift) + (1 - p) * m0
        e2 = p * (s1 + 2 * shift * m1 + shift * shift) + (1 - p) * s0
        out[i] = e2 - e1 * e1
    return out


@register_oracle
class SS(FrequencyOracle):
    r"""Subset selection (Ye and Barg; Wang et al. 2016).

    Each user reports a subset of ``k`` items. With probability :math:`p = k
    e^\varepsilon / (k e^\varepsilon + d - k)` the subset holds the user's value plus
    ``k - 1`` others chosen uniformly; otherwise it holds ``k`` items chosen uniformly
    from the others. Then :math:`q = p (k-1)/(d-1) + (1-p) k / (d-1)`. Reports: the
    ``k`` items in increasing order (the order carries no information), shape
    ``(n, k)``, the smallest unsigned dtype holding ``d - 1``.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items, at least 2.
    k : int, optional
        Subset size in ``[1, d - 1]``; by default ``max(1, round(d / (e^eps + 1)))``.

    Notes
    -----
    Subsets are drawn exactly (the exact subset sampler): for small
    ``k`` (``k (k-1) <= d - 1``) by rejection of sorted iid draws, ``O(k log k)`` per
    user; otherwise from a Bernoulli mask completed by rejection, ``O(d)`` per user.
    """

    name = "SS"
    parameter_names = ("k",)
    exact_counts_simulation = False

    def __init__(self, epsilon: float, domain_size: int, k: int | None = None) -> None:
        super().__init__(epsilon, domain_size)
        d = self.domain_size
        if d < 2:
            raise ValueError("domain_size must be at least 2 for SS")
        if k is None:  # round(d / (e^eps + 1))
            k = max(1, round(d * exp_ratios(self.epsilon, 1.0, 1.0)[1]))
        self.k = check_int(k, "k", minimum=1, maximum=d - 1)
        self._method = "reject" if self.k * (self.k - 1) <= d - 1 else "mask"

    @property
    def p(self) -> float:
        r"""Probability :math:`k e^\varepsilon / (k e^\varepsilon + d - k)` of the true value."""
        return exp_ratios(self.epsilon, self.k, self.domain_size - self.k)[0]

    @property
    def q(self) -> float:
        r"""Probability :math:`p (k-1)/(d-1) + (1-p) k/(d-1)` of holding a given other item."""
        d, k = self.domain_size, self.k
        p, scale = exp_ratios(self.epsilon, k, d - k)
        miss = (d - k) * scale  # 1 - p, without cancellation when p is near 1
        return p * (k - 1) / (d - 1) + miss * k / (d - 1)

    @classmethod
    def _count_sum_variances(
        cls,
        m: Measurement,
        a: np.ndarray,
        masks: np.ndarray,
        frequencies: np.ndarray,
        x_set: np.ndarray,
    ) -> np.ndarray:
        r"""Mixed hypergeometric counts: :math:`x_S V_1 + (n - x_S) V_0`.

        With report size :math:`k = q(d-1) + p`, a user holding ``u`` reports ``u`` plus
        ``k - 1`` of the other ``d - 1`` items with probability ``p``, else ``k`` of
        them, so the number of set items in its report is a mixture of hypergeometric
        counts, of variance :math:`V_1` for ``u`` in the set and :math:`V_0` otherwise.
        """
        d, n, p, q = m.domain_size, m.n, m.p, m.q
        k = round(q * (d - 1) + p)
        sizes = a.astype(np.int64)
        v1 = mixed_hypergeometric_variance(d, k, p, 1, np.maximum(sizes - 1, 0))
        v0 = mixed_hypergeometric_variance(d, k, p, 0, sizes)
        return x_set * v1 + (n - x_set) * v0

    @property
    def report_dtype(self) -> np.dtype:
        """The dtype of the reports, the smallest unsigned one holding ``d - 1``."""
        return unsigned_dtype(self.domain_size - 1)

    @property
    def report_bits(self) -> int:
        """Bits of one report: ``k`` items of ``ceil(log2 d)`` bits each."""
        return self.k * (self.domain_size - 1).bit_length()

    @property
    def report_shape(self) -> tuple[int, ...]:
        """The shape of one report, ``(k,)``."""
        return (self.k,)

    @property
    def _privatize_cells(self) -> int:
        return self.domain_size if self._method == "mask" else self.k

    @property
    def _count_cells(self) -> int:
        return self.k

    def _privatize_block(self, v: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        include = bernoulli(self.p, v.size, rng)
        sets = subsets(v, include, self.domain_size, self.k, rng, method=self._method)
        np.copyto(out, sets, casting="unsafe")

    def _check_values(self, r: np.ndarray, name: str) -> None:
        if r.max() >= self.domain_size:
            raise ValueError(
                f"{name} must lie in [0, {self.domain_size}) for SS; got maximum {r.max()}"
            )
        if self.k > 1 and not np.all(r[:, 1:] > r[:, :-1]):
            raise ValueError(
                f"{name}: each SS report must list its {self.k} items in strictly "
                "increasing order (sorted, no repeats)"
            )

    def _supports(self, r: np.ndarray, items: np.ndarray) -> np.ndarray:
        return (r[:, :, None] == items[None, None, :]).any(axis=1)

    def _block_counts(self, r: np.ndarray) -> np.ndarray:
        return bincount(r, self.domain_size)

    def _arrow_arrays(self, r: np.ndarray, pa: Any) -> list:
        flat = pa.array(np.ascontiguousarray(r).reshape(-1))
        return [pa.FixedSizeListArray.from_arrays(flat, self.k)]

    def _from_arrow_arrays(self, arrays: list, names: tuple[str, ...], pa: Any) -> np.ndarray:
        arr, name = arrays[0], names[0]
        if not (
            pa.types.is_list(arr.type)
            or pa.types.is_large_list(arr.type)
            or pa.types.is_fixed_size_list(arr.type)
        ):
            raise ValueError(f"column {name!r} must hold lists of {self.k} items, got {arr.type}")
        import pyarrow.compute as pc

        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        if lengths.size and (lengths.min() != self.k or lengths.max() != self.k):
            raise ValueError(f"column {name!r}: every report must hold {self.k} items")
        flat = arrow_integers(arr.flatten(), name, 0, self.domain_size, self.report_dtype)
        return flat.reshape(-1, self.k)
