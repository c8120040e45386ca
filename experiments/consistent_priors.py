"""Which count prior should a consistent Bayesian oracle use? Point-estimate comparison.

For each repetition (Zipf, OUE, the papers' setting by default) the parameters of each
prior family are set to the mode of the log target that ``bayes-consistent`` samples
(``bayesldp.models.consistent._exact_total.log_target``: the items' evidence plus the normal term
for the known total), then the counts are conditioned on the total by exponential
tilting and the tilted posterior means are scored against the truth:

- ``power-tilt``: Calibrate's :math:`x^{-s}` on ``1..n`` (its exponent fitted to the
  items only, as in the first version of ``bayes-consistent``; with the total term no
  exponent fits, see ``paper/bayes.md``);
- ``lomax-tilt``: the shifted power law :math:`(1 + x/c)^{-s}` on ``0..n`` (what
  ``bayes-consistent`` uses, here at the mode instead of averaged over the posterior);
- ``betaprime-tilt``: :math:`x^a (1 + x/c)^{-(s + a)}`, a third parameter for the low end;
- ``oracle-tilt``: the histogram of the true counts as the prior (not a method: a bound on
  what a better prior family could gain);

beside ``power-ns`` and ``norm-sub`` (the grid's methods). Seeding as in the first
version of this study: repetition ``r`` simulates with ``default_rng([seed, r])``.

Run ``bayesldp experiment consistent_priors``; ``summary.csv`` holds the mean of every
metric per prior and method, ``figure.png`` the MSE of each repetition.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import logsumexp

from bayesldp import metrics
from bayesldp.datasets import Dataset
from bayesldp.models._counts import CountGrid, ItemMoments
from bayesldp.models.consistent._exact_total import Problem
from bayesldp.plotting import dot_plot
from bayesldp.runner import Experiment, Grid, Row, Task, apply_methods

PRIORS = ("power-tilt", "lomax-tilt", "betaprime-tilt", "oracle-tilt")
BASELINES = ("power-ns", "norm-sub")


def _log_mass(grid: CountGrid, family: str, theta) -> np.ndarray:
    x = grid.x
    if family == "power":
        (s,) = theta
        lm = np.where(x >= 1, -s * np.log(np.maximum(x, 1.0)), -np.inf)
    elif family == "lomax":
        s, log_c = theta
        lm = -s * np.log1p(x / math.exp(log_c))
    elif family == "betaprime":
        s, log_c, log_a = theta
        c, a = math.exp(log_c), math.exp(log_a)
        lm = a * np.log(np.maximum(x, 0.5) / c) - (s + a) * np.log1p(x / c)
    else:
        raise ValueError(f"unknown prior family {family!r}")
    lm = lm + grid.log_width
    return lm - logsumexp(lm)


def _target(problem: Problem, log_mass: np.ndarray, with_total: bool) -> float:
    mom = ItemMoments(
        problem.grid, log_mass, problem.sigma_c, float(problem.y.min()), float(problem.y.max())
    )
    y = problem.y
    total = float(mom.log_evidence(y).sum())
    if not with_total:
        return total
    mean, var = float(mom.mean(y).sum()), float(mom.variance(y).sum())
    return total - 0.5 * (problem.n - mean) ** 2 / var - 0.5 * math.log(2 * math.pi * var)


def _tilted_means(problem: Problem, log_mass: np.ndarray, span: float = 12.0):
    sc, y, n = problem.sigma_c, problem.y, problem.n
    mom = ItemMoments(
        problem.grid, log_mass, sc, float(y.min()) - span * sc, float(y.max()) + span * sc
    )
    shift = optimize.brentq(lambda h: mom.mean(y + h).sum() - n, -span * sc, span * sc)
    return mom.mean(y + shift) / n, shift / sc


def _fit(problem: Problem, family: str, start, with_total: bool):
    def neg(theta):
        value = _target(problem, _log_mass(problem.grid, family, theta), with_total)
        return -value if np.isfinite(value) else 1e300

    res = optimize.minimize(neg, np.asarray(start, dtype=float), method="Nelder-Mead",
                            options={"maxiter": 600, "xatol": 1e-4, "fatol": 1e-6})  # fmt: skip
    return res.x


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """One repetition: each prior family's tilted posterior mean, and the baselines."""
    truth = dataset.frequencies
    m = task.simulate(dataset, np.random.default_rng(seq))
    problem = Problem.from_counts(m.estimates * m.n, m.sigma * m.n, m.n)
    est, params, notes = {}, {}, {}

    def fitted(name, fit):
        # the fits' optimisers probe parameters where sums overflow: warnings kept per prior
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fit()
        # whole, one warning per line, as the runner writes the methods' warnings
        notes[name] = "\n".join(sorted({str(w.message) for w in caught}))
        return out

    def power_tilt():
        (s_pow,) = _fit(problem, "power", [1.5], with_total=False)
        params["power-tilt"] = {"s": s_pow}
        return _tilted_means(problem, _log_mass(problem.grid, "power", [s_pow]))

    def lomax_tilt():
        lomax = _fit(problem, "lomax", [1.7, math.log(15.0)], with_total=True)
        params["lomax-tilt"] = {"s": lomax[0], "c": math.exp(lomax[1])}
        return _tilted_means(problem, _log_mass(problem.grid, "lomax", lomax))

    def betaprime_tilt():
        s0, log_c0 = params["lomax-tilt"]["s"], math.log(params["lomax-tilt"]["c"])
        bp = _fit(problem, "betaprime", [s0, log_c0, math.log(0.3)], with_total=True)
        params["betaprime-tilt"] = {"s": bp[0], "c": math.exp(bp[1]), "a": math.exp(bp[2])}
        return _tilted_means(problem, _log_mass(problem.grid, "betaprime", bp))

    def oracle_tilt():
        cells = np.clip(np.searchsorted(problem.grid.x, dataset.counts), 0,
                        problem.grid.x.size - 1)  # fmt: skip
        hist = np.bincount(cells, minlength=problem.grid.x.size) + 1e-12
        return _tilted_means(problem, np.log(hist / hist.sum()))

    for name, fit in zip(PRIORS, (power_tilt, lomax_tilt, betaprime_tilt, oracle_tilt),
                         strict=True):  # fmt: skip
        est[name] = fitted(name, fit)
    rows: list[Row] = []
    for name, (f, shift) in est.items():
        rows.append((name, "mse", np.nan, metrics.mse(truth, f), np.nan, notes[name]))
        rows.append((name, "tilt_sigma", np.nan, float(shift), np.nan, ""))
        for key, value in params.get(name, {}).items():
            rows.append((name, key, np.nan, float(value), np.nan, ""))
    fits, seconds, warned = apply_methods(m, task.methods, seq, true_counts=dataset.counts)
    for name, e in fits.items():
        rows.append((name, "mse", np.nan, metrics.mse(truth, e), seconds[name], warned[name]))
    return rows


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Mean of every metric per prior and method; the MSE of every repetition."""
    summary = results.pivot_table(index="method", columns="metric", values="value")
    order = [m for m in (*PRIORS, *BASELINES) if m in summary.index]
    order += [m for m in summary.index if m not in order]
    dot_plot(results, [("mse", "full-domain MSE")], folder / "figure.png",
             title="prior families at their mode, tilted to the total")  # fmt: skip
    return summary.reindex(order).reset_index()


EXPERIMENT = Experiment(
    name="consistent_priors",
    description="which count prior should a consistent Bayesian oracle use? (paper/bayes.md)",
    figure="paper/bayes.md, prior families",
    task=task,
    grid=Grid(("zipf",), (1.0,), reps=8, methods=BASELINES),
    quick=Grid(("zipf:d=128,n=100000",), (1.0,), reps=2, methods=BASELINES),
    plot=plot,
    seed="rep",
    group="bayes",
)
