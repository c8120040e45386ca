"""The statistical queries of an Estimate: intervals, bootstrap, heavy hitters, top k.

:class:`DefaultInference` is the :class:`bayesldp.estimate.Inference` that
:meth:`Estimate.interval`, :meth:`~Estimate.bootstrap`, :meth:`~Estimate.heavy_hitters`
and :meth:`~Estimate.top_k_probability` delegate to. It lives here, above
:mod:`bayesldp.intervals` and :mod:`bayesldp.selection` (which re-run methods through
the registry, and the methods make Estimates), so that :mod:`bayesldp.estimate` imports
none of them. Importing this module installs it; ``import bayesldp`` does. The modules
that do the work are imported on first use, so that ``import bayesldp`` stays light
(they load :mod:`scipy.stats`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesldp._validation import check_k
from bayesldp.estimate import Estimate, set_inference

__all__ = ["DefaultInference"]


class DefaultInference:
    """Estimate's queries answered by :mod:`bayesldp.intervals` and :mod:`bayesldp.selection`.

    See the :class:`~bayesldp.Estimate` methods of the same names for what each does.
    """

    def interval(
        self, estimate: Estimate, indices, prob: float = 0.9, method: str | None = None
    ) -> Any:
        """:func:`bayesldp.intervals.estimate_interval` (an ``Interval``).

        Parameters
        ----------
        estimate : Estimate
            The estimate asked about.
        indices : array_like of int or bool mask
            Items in the set.
        prob : float, default 0.9
            Nominal coverage, in (0, 1).
        method : str, optional
            The interval kind; None for the estimate's natural one.
        """
        from bayesldp.intervals import estimate_interval

        return estimate_interval(estimate, indices, prob, method)

    def bootstrap(self, estimate: Estimate, n_replicates: int = 200, rng: Any = 0) -> Any:
        """Return a new :class:`bayesldp.intervals.ParametricBootstrap` of ``estimate``.

        Parameters
        ----------
        estimate : Estimate
            The estimate to replicate (a registered, non-Bayesian method).
        n_replicates : int, default 200
            Number of replicates, at least 2.
        rng : numpy.random.Generator or int, default 0
            Seed of the replicates (a Generator gives one).
        """
        from bayesldp.intervals import ParametricBootstrap

        return ParametricBootstrap(estimate, n_replicates, rng)

    def heavy_hitters(self, estimate: Estimate, threshold: float, alpha: float = 0.05) -> Any:
        """:func:`bayesldp.selection.estimate_heavy_hitters` (a ``HeavyHitters``).

        Parameters
        ----------
        estimate : Estimate
            The estimate asked about.
        threshold : float
            In (0, 1].
        alpha : float, default 0.05
            In (0, 1).
        """
        from bayesldp.selection import estimate_heavy_hitters

        return estimate_heavy_hitters(estimate, threshold, alpha)

    def top_k_probability(self, estimate: Estimate, k: int) -> np.ndarray:
        """From the posterior draws if the estimate has them, else its bootstrap (cached).

        Parameters
        ----------
        estimate : Estimate
            The estimate asked about; ``post-pos`` draws are clipped at 0 first.
        k : int
            In ``[1, d]``.

        Returns
        -------
        numpy.ndarray
            Per-item probability of being among the ``k`` largest; sums to ``k``.
        """
        from bayesldp.intervals import ParametricBootstrap
        from bayesldp.selection import top_k_probability

        k = check_k(k, estimate.domain_size)
        unc = estimate.uncertainty
        if unc is None or isinstance(unc, ParametricBootstrap):
            unc = estimate.bootstrap()
        return top_k_probability(unc, k, clip=estimate.query_basis is not None)


set_inference(DefaultInference())
