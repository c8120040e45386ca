r"""Intervals for subset sums of an estimate's frequencies.

Four kinds of interval back :meth:`bayesldp.Estimate.interval`:

``"normal"``
    The raw unbiased estimate of the set's frequency plus or minus a normal quantile
    times its exact standard deviation (:func:`subset_variance`: the oracle's variance,
    covariances between items included, at plug-in frequencies). Centred at the raw
    estimate whatever method produced the Estimate; ``post-pos`` clips it at 0 like its
    answers. The natural (default) interval of every non-Bayesian method: calibrated for
    every set chosen independently of the data. When the method's own answer lies
    outside it, the interval's note says so.
``"bootstrap"`` and ``"percentile"``
    A parametric bootstrap (:class:`ParametricBootstrap`): support counts are simulated
    from the fitted frequencies, the same method is re-run on each replicate with the
    same options, and the interval is the basic (pivotal) bootstrap interval
    :math:`[T - (q_{hi} - \theta^*), T - (q_{lo} - \theta^*)]` (``"bootstrap"``) or the
    quantiles of the replicates themselves (``"percentile"``). Where these are known to
    undercover (methods that clip at 0, near 0), a RuntimeWarning says so.
``"posterior"``
    Quantiles of posterior draws, for estimates that carry an ``uncertainty`` (the
    Bayesian methods, empirical Bayes); their natural interval.

Every interval is intersected with ``[0, 1]``, where a set's frequency lies (this can
only raise coverage). Coverage measured in simulation is in ``paper/intervals.md``
(``experiments/interval_coverage.py``).

Where they live: the :class:`Interval` type in ``_interval.py``, exact set variances and
the normal interval in ``_variance.py``, the parametric bootstrap in ``_bootstrap.py``,
intervals of many sets, the natural kind and the notes in ``_sets.py``.
"""

from bayesldp.intervals._bootstrap import ParametricBootstrap
from bayesldp.intervals._interval import Interval
from bayesldp.intervals._sets import available_intervals, set_intervals
from bayesldp.intervals._variance import normal_interval, subset_count_variances, subset_variance

__all__ = [
    "Interval",
    "ParametricBootstrap",
    "available_intervals",
    "normal_interval",
    "set_intervals",
    "subset_count_variances",
    "subset_variance",
]
