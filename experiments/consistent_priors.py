"""Which count prior should a consistent Bayesian oracle use? Point-estimate comparison.

For each repetition (Zipf, OUE, the papers' setting by default) the parameters of each
prior family are set to the mode of the log target that ``bayes-consistent`` samples
(:func:`bayesldp.models.lomax.log_target`: the items' evidence plus the normal term
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

beside ``power-ns`` and ``norm-sub``. Repetitions are written as separate files
(atomically), so an interrupted run resumes.

Run ``python experiments/consistent_priors.py --reps 8``.
"""

from __future__ import annotations

import argparse
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import logsumexp
from tqdm import tqdm

import bayesldp
from bayesldp import datasets, metrics
from bayesldp.io import write_csv
from bayesldp.models import lomax as S

PRIORS = ("power-tilt", "lomax-tilt", "betaprime-tilt", "oracle-tilt")
BASELINES = ("power-ns", "norm-sub")


def _log_mass(grid: S.CountGrid, family: str, theta) -> np.ndarray:
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


def _target(problem: S.Problem, log_mass: np.ndarray, with_total: bool) -> float:
    mom = S.ItemMoments(
        problem.grid, log_mass, problem.sigma_c, float(problem.y.min()), float(problem.y.max())
    )
    y = problem.y
    total = float(mom.log_evidence(y).sum())
    if not with_total:
        return total
    mean, var = float(mom.mean(y).sum()), float(mom.variance(y).sum())
    return total - 0.5 * (problem.n - mean) ** 2 / var - 0.5 * math.log(2 * math.pi * var)


def _tilted_means(problem: S.Problem, log_mass: np.ndarray, span: float = 12.0):
    sc, y, n = problem.sigma_c, problem.y, problem.n
    mom = S.ItemMoments(
        problem.grid, log_mass, sc, float(y.min()) - span * sc, float(y.max()) + span * sc
    )
    shift = optimize.brentq(lambda h: mom.mean(y + h).sum() - n, -span * sc, span * sc)
    return mom.mean(y + shift) / n, shift / sc


def _fit(problem: S.Problem, family: str, start, with_total: bool):
    def neg(theta):
        value = _target(problem, _log_mass(problem.grid, family, theta), with_total)
        return -value if np.isfinite(value) else 1e300

    res = optimize.minimize(neg, np.asarray(start, dtype=float), method="Nelder-Mead",
                            options={"maxiter": 600, "xatol": 1e-4, "fatol": 1e-6})  # fmt: skip
    return res.x


def run_rep(args: argparse.Namespace, rep: int) -> list[dict]:
    """One repetition: rows (rep, method, metric, value)."""
    data = datasets.zipf(args.s, args.d, args.n, rng=args.seed)
    truth = data.frequencies
    m = bayesldp.make_oracle(args.oracle, args.epsilon, args.d).simulate(
        data.counts, np.random.default_rng([args.seed, rep])
    )
    problem = S.Problem.from_counts(m.estimates * m.n, m.sigma * m.n, m.n)
    rows, est = [], {}
    (s_pow,) = _fit(problem, "power", [1.5], with_total=False)
    est["power-tilt"] = _tilted_means(problem, _log_mass(problem.grid, "power", [s_pow]))
    lomax = _fit(problem, "lomax", [1.7, math.log(15.0)], with_total=True)
    est["lomax-tilt"] = _tilted_means(problem, _log_mass(problem.grid, "lomax", lomax))
    bp = _fit(problem, "betaprime", [lomax[0], lomax[1], math.log(0.3)], with_total=True)
    est["betaprime-tilt"] = _tilted_means(problem, _log_mass(problem.grid, "betaprime", bp))
    cells = np.clip(np.searchsorted(problem.grid.x, data.counts), 0, problem.grid.x.size - 1)
    hist = np.bincount(cells, minlength=problem.grid.x.size) + 1e-12
    est["oracle-tilt"] = _tilted_means(problem, np.log(hist / hist.sum()))
    params = {
        "power-tilt": {"s": s_pow},
        "lomax-tilt": {"s": lomax[0], "c": math.exp(lomax[1])},
        "betaprime-tilt": {"s": bp[0], "c": math.exp(bp[1]), "a": math.exp(bp[2])},
    }
    for name, (f, shift) in est.items():
        rows.append({"rep": rep, "method": name, "metric": "mse", "value": metrics.mse(truth, f)})
        rows.append({"rep": rep, "method": name, "metric": "tilt_sigma", "value": shift})
        for key, value in params.get(name, {}).items():
            rows.append({"rep": rep, "method": name, "metric": key, "value": float(value)})
    for name in BASELINES:
        f = bayesldp.postprocess(m, name).frequencies
        rows.append({"rep": rep, "method": name, "metric": "mse", "value": metrics.mse(truth, f)})
    return rows


def main(args: argparse.Namespace) -> pd.DataFrame:
    """Run (or resume) the repetitions; write the runs and a summary."""
    out = Path(args.out)
    for rep in tqdm(range(args.reps), desc="repetitions", disable=args.quiet):
        part = out / "parts" / f"rep{rep:03d}.csv"
        if not part.exists():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                write_csv(part, pd.DataFrame(run_rep(args, rep)))
    frame = pd.concat([pd.read_csv(out / "parts" / f"rep{r:03d}.csv") for r in range(args.reps)])
    write_csv(out / "runs.csv", frame)
    summary = frame.pivot_table(index="method", columns="metric", values="value", aggfunc="mean")
    summary = summary.reindex([m for m in (*PRIORS, *BASELINES) if m in summary.index])
    write_csv(out / "summary.csv", summary.reset_index())
    return summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--s", type=float, default=1.5)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--oracle", default="OUE")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="paper/results/consistent_priors")
    parser.add_argument("--quiet", action="store_true")
    return parser


if __name__ == "__main__":
    table = main(build_parser().parse_args())
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(table.to_string())
