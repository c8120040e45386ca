"""The cases of the composable layer's speed benchmarks: a dataset and its measurement.

``zipf`` and ``hier`` (Zipf 1.5, d = 1024 unless given, n = 1e6), ``wordfreq`` and
``hier-wordfreq`` (d = 42,178, n = 1e6) and ``uscities`` (d = 976, n = 1.5e6), each
measured by OUE at eps = 1.
``bayes_layer_speed.py``, ``step_limit.py`` and ``gradient_cost.py`` take them from here,
and the quantiles of the bulk ESS that the first and the last report (:func:`ess_quantiles`).
"""

from __future__ import annotations

CASES = ("zipf", "wordfreq", "hier", "uscities", "hier-wordfreq")


def case_measurement(case: str, seed: int = 0, d: int | None = None):
    """Return a case's dataset and its OUE (eps = 1) measurement, simulated from ``seed``."""
    import numpy as np

    import bayesldp
    from bayesldp import datasets

    if case in ("zipf", "hier"):
        data = datasets.zipf(1.5, d or 1024, 1_000_000, rng=seed)
    elif case in ("wordfreq", "hier-wordfreq"):
        data = datasets.wordfreq_words() if d is None else datasets.wordfreq_words(d=d)
    elif case == "uscities":
        data = datasets.us_cities()
    else:
        raise ValueError(f"unknown case {case!r}; choose one of {', '.join(CASES)}")
    return data, bayesldp.OUE(1.0, data.d).simulate(data.counts, np.random.default_rng(seed))


def ess_quantiles(ess) -> dict[str, float]:
    """Return the 0.1% and 1% quantiles and the median of the bulk ESS (NaNs left out).

    The tail of the mixing beyond the single worst element, which a few elements with a
    split posterior set.
    """
    import numpy as np

    ess = np.asarray(ess, dtype=float)
    return {
        "ess_bulk_q001": float(np.nanquantile(ess, 0.001)),
        "ess_bulk_q01": float(np.nanquantile(ess, 0.01)),
        "ess_bulk_median": float(np.nanmedian(ess)),
    }
