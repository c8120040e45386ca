"""The demo job: every method on the papers' default synthetic setting.

Computation only; :mod:`bayesldp.plotting` draws the result and :mod:`bayesldp.cli`
prints it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesldp import datasets, metrics
from bayesldp.oracles import make_oracle
from bayesldp.registry import method_names, postprocess


@dataclass(frozen=True)
class DemoConfig:
    """Settings of the demo (the papers' defaults)."""

    s: float = 1.5
    d: int = 1024
    n: int = 1_000_000
    epsilon: float = 1.0
    oracle: str = "OUE"
    reps: int = 5
    set_percent: float = 50.0
    n_queries: int = 10
    top_k: int = 10
    seed: int = 0
    methods: tuple[str, ...] = method_names(bayesian=False, needs_truth=False)


def run_demo(config: DemoConfig, progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Run every method ``config.reps`` times; return one row per (rep, method).

    Columns: ``rep``, ``method``, ``mse``, ``set_mse``, ``topk_mse``, ``sum``,
    ``seconds`` and ``warning`` (the text of any warning the method raised).
    """
    data = datasets.zipf(config.s, config.d, config.n, rng=config.seed)
    truth = data.frequencies
    oracle = make_oracle(config.oracle, config.epsilon, config.d)
    rows = []
    for rep, child in enumerate(np.random.SeedSequence(config.seed).spawn(config.reps)):
        rng = np.random.default_rng(child)
        m = oracle.simulate(data.counts, rng)
        query_seed = rng.integers(2**63)
        for method in config.methods:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                start = time.perf_counter()
                est = postprocess(m, method)
                seconds = time.perf_counter() - start
            rows.append(
                {
                    "rep": rep,
                    "method": method,
                    "mse": metrics.mse(truth, est),
                    "set_mse": metrics.set_value_mse(
                        truth,
                        est,
                        config.set_percent,
                        np.random.default_rng(query_seed),
                        config.n_queries,
                    ),
                    "topk_mse": metrics.topk_mse(truth, est, config.top_k),
                    "sum": est.total,
                    "seconds": seconds,
                    "warning": "; ".join(str(w.message) for w in caught),
                }
            )
        if progress is not None:
            progress(1)
    return pd.DataFrame(rows)


def summarise(results: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of each metric per method, in ``order`` (default: order of appearance)."""
    summary = results.groupby("method", sort=False)[
        ["mse", "set_mse", "topk_mse", "sum", "seconds"]
    ].mean()
    if order is not None:
        summary = summary.loc[[m for m in order if m in summary.index]]
    return summary.reset_index()
