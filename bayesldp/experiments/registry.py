"""The experiments: each one's grid per mode and its task (metrics of one cell).

Every task simulates the oracle once on the dataset's true counts, applies all
methods to the same measurement, and returns rows
``(method, metric, param, value, seconds, warning)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesldp import metrics
from bayesldp.experiments.runner import (
    Config,
    Task,
    apply_methods,
    is_real,
    simulate,
)

Row = tuple[str, str, float, float, float, str]

EPS_QUICK = (0.5, 1.0, 2.0)
EPS_PAPER = (0.2, 0.4, 0.7, 1.0, 1.5, 2.0)
SYNTHETIC = ("zipf", "beta")
REAL = ("wordfreq", "us_cities")
# Repetitions of the real datasets in the default/full grids (``real_reps`` caps them
# when it is below ``reps``). Measured in one process: a wordfreq task (d = 42,178) takes
# 0.1-0.3 s (power and power-ns ~0.06 s each), a us_cities task ~0.2 s, so the real data
# get the papers' 30 repetitions too.
REAL_REPS = 30


def _rows(est, seconds, notes, metric: str, param: float, values: dict) -> list[Row]:
    return [(m, metric, param, float(v), seconds[m], notes[m]) for m, v in values.items()]


def _simulate_all(task: Task, dataset, seq: np.random.SeedSequence):
    rng = np.random.default_rng(seq.spawn(1)[0])
    m = simulate(dataset, task.oracle, task.epsilon, rng)
    return apply_methods(m, task.methods)


# ---------------------------------------------------------------------------
# tasks


def _full_domain(task: Task, dataset, seq) -> list[Row]:
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    rows = _rows(est, sec, notes, "mse", np.nan, {m: metrics.mse(f, e) for m, e in est.items()})
    rows += _rows(est, sec, notes, "sum", np.nan, {m: e.total for m, e in est.items()})
    return rows


def _mae(task: Task, dataset, seq) -> list[Row]:
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    return _rows(est, sec, notes, "mae", np.nan, {m: metrics.mae(f, e) for m, e in est.items()})


def _set_value(task: Task, dataset, seq) -> list[Row]:
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    query_seed = seq.spawn(2)[1]
    for rho in task.params["rhos"]:
        # the same random sets for every method
        vals = {
            m: metrics.set_value_mse(
                f, e, rho, np.random.default_rng(query_seed), task.params["n_queries"]
            )
            for m, e in est.items()
        }
        rows += _rows(est, sec, notes, "set_mse", float(rho), vals)
    return rows


def synthetic_groups(d: int, n_groups: int = 50) -> dict[str, np.ndarray]:
    """A fixed random partition of the domain into ``n_groups`` sets (seed 0)."""
    labels = np.random.default_rng(0).integers(0, n_groups, size=d)
    return {f"g{k}": np.flatnonzero(labels == k) for k in range(n_groups)}


RANDOM_GROUPING = "random50"


def dataset_groups(dataset) -> dict[str, dict[str, np.ndarray]]:
    """The dataset's fixed sets (e.g. state, region), or a random partition if none."""
    if dataset.groups:
        return dataset.groups
    return {RANDOM_GROUPING: synthetic_groups(dataset.d)}


def main_grouping(groups: dict) -> str:
    """The grouping used when one is needed: ``state`` if there is one, else the first."""
    return "state" if "state" in groups else sorted(groups)[0]


def _fixed_set(task: Task, dataset, seq) -> list[Row]:
    """Mean squared error over each grouping's sets; ``param`` is the number of sets."""
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for grouping, sets in sorted(dataset_groups(dataset).items()):
        sets = [np.asarray(idx) for idx in sets.values() if len(idx)]
        vals = {
            m: float(np.mean([(e.subset(idx) - f[idx].sum()) ** 2 for idx in sets]))
            for m, e in est.items()
        }
        rows += [
            (m, f"fixed_mse:{grouping}", float(len(sets)), v, sec[m], notes[m])
            for m, v in vals.items()
        ]
    return rows


def _topk(task: Task, dataset, seq) -> list[Row]:
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for k in task.params["ks"]:
        if k <= dataset.d:
            vals = {m: metrics.topk_mse(f, e, k) for m, e in est.items()}
            rows += _rows(est, sec, notes, "topk_mse", float(k), vals)
    return rows


def _bias_variance(task: Task, dataset, seq) -> list[Row]:
    """``runs`` rounds in one task: per-rank sums of errors and squared errors."""
    f = dataset.frequencies
    order = np.lexsort((np.arange(f.size), -f))
    ranks = order[: task.params["ranks"]]
    sums: dict[str, np.ndarray] = {}
    sqs: dict[str, np.ndarray] = {}
    secs: dict[str, float] = {}
    runs = task.params["runs"]
    for child in seq.spawn(runs):
        est, sec, _ = _simulate_all(task, dataset, child)
        for m, e in est.items():
            err = np.asarray(e.frequencies)[ranks] - f[ranks]
            sums[m] = sums.get(m, 0) + err
            sqs[m] = sqs.get(m, 0) + err**2
            secs[m] = secs.get(m, 0.0) + sec[m]
    rows: list[Row] = []
    for m in sums:
        for r in range(ranks.size):
            rows.append((m, "sum_err", float(r + 1), float(sums[m][r]), secs[m], ""))
            rows.append((m, "sum_sq_err", float(r + 1), float(sqs[m][r]), secs[m], ""))
        rows.append((m, "runs", np.nan, float(runs), secs[m], ""))
    return rows


def base_mse_analytic(dataset, p: float, q: float) -> float:
    """Mean variance of the unbiased estimate (the NDSS paper's Eq. 5 for Base)."""
    f = dataset.frequencies
    var = (q * (1 - q) + f * (p - q) * (1 - p - q)) / (dataset.n * (p - q) ** 2)
    return float(np.mean(var))


def _n_prime(task: Task, dataset, seq) -> list[Row]:
    """n' = n * MSE_Base(n) / MSE_method: users Base needs to match a method's MSE.

    Base's (analytic) MSE is proportional to 1/n, so Base with n' users reaches the
    method's empirical MSE with n users.
    """
    rng = np.random.default_rng(seq.spawn(1)[0])
    m = simulate(dataset, task.oracle, task.epsilon, rng)
    est, sec, notes = apply_methods(m, task.methods)
    f = dataset.frequencies
    analytic = base_mse_analytic(dataset, m.p, m.q)
    rows: list[Row] = []
    for name, e in est.items():
        err = metrics.mse(f, e)
        rows.append((name, "mse", np.nan, err, sec[name], notes[name]))
        rows.append((name, "n_prime", np.nan, dataset.n * analytic / err, sec[name], ""))
    return rows


def _heavy_hitters(task: Task, dataset, seq) -> list[Row]:
    est, sec, notes = _simulate_all(task, dataset, seq)
    f = dataset.frequencies
    rows: list[Row] = []
    for t in task.params["thresholds"]:
        for m, e in est.items():
            score = metrics.heavy_hitters(f, e, t)
            rows.append((m, "precision", float(t), score.precision, sec[m], notes[m]))
            rows.append((m, "recall", float(t), score.recall, sec[m], ""))
            rows.append((m, "f_score", float(t), score.f_score, sec[m], ""))
    return rows


def _queries(dataset, est, rng_seed) -> dict[str, dict[str, float]]:
    """Errors of each method on the query types used to choose a method."""
    f = dataset.frequencies
    out: dict[str, dict[str, float]] = {"full": {}, "set50": {}, "set5": {}, "top10": {}}
    groups = dataset_groups(dataset)
    sets = [np.asarray(i) for i in groups[main_grouping(groups)].values() if len(i)]
    out["fixed"] = {}
    for m, e in est.items():
        out["full"][m] = metrics.mse(f, e)
        out["set50"][m] = metrics.set_value_mse(f, e, 50, np.random.default_rng(rng_seed), 10)
        out["set5"][m] = metrics.set_value_mse(f, e, 5, np.random.default_rng(rng_seed), 10)
        out["top10"][m] = metrics.topk_mse(f, e, min(10, f.size))
        out["fixed"][m] = float(np.mean([(e.subset(i) - f[i].sum()) ** 2 for i in sets]))
    return out


def _choose_method(task: Task, dataset, seq) -> list[Row]:
    """NDSS Section 'choosing the method on a synthetic dataset'.

    The estimate is made consistent (Norm-Sub or PowerNS), a synthetic dataset with the
    same n and fixed sets is drawn from it, the collection is simulated on it
    ``synthetic_reps`` times, and each method's error is measured against the synthetic
    truth. Rows hold the errors on the true data (param 0) and on each synthetic fit
    (param 1 = norm-sub, 2 = power-ns), so the choice can be compared with the best.
    """
    from bayesldp.datasets import Dataset

    seeds = seq.spawn(3 + 2 * task.params["synthetic_reps"])
    rng = np.random.default_rng(seeds[0])
    m = simulate(dataset, task.oracle, task.epsilon, rng)
    est, sec, notes = apply_methods(m, task.methods)
    rows: list[Row] = []
    for query, vals in _queries(dataset, est, seeds[1]).items():
        rows += [(k, f"{query}", 0.0, v, sec[k], notes[k]) for k, v in vals.items()]
    fit_rng = np.random.default_rng(seeds[2])
    for code, fit in ((1.0, "norm-sub"), (2.0, "power-ns")):
        from bayesldp.registry import postprocess

        probs = np.clip(np.asarray(postprocess(m, fit).frequencies, dtype=float), 0, None)
        probs = probs / probs.sum()
        synth = Dataset(
            f"synthetic-{fit}",
            fit_rng.multinomial(dataset.n, probs),
            f"fitted to {fit}",
            groups=dataset_groups(dataset),
        )
        acc: dict[str, dict[str, float]] = {}
        reps = task.params["synthetic_reps"]
        start = 3 + (int(code) - 1) * reps
        for child in seeds[start : start + reps]:
            r = np.random.default_rng(child)
            sm = simulate(synth, task.oracle, task.epsilon, r)
            sest, _, _ = apply_methods(sm, task.methods)
            for query, vals in _queries(synth, sest, child).items():
                for k, v in vals.items():
                    acc.setdefault(query, {}).setdefault(k, 0.0)
                    acc[query][k] += v / reps
        for query, vals in acc.items():
            rows += [(k, query, code, v, np.nan, "") for k, v in vals.items()]
    return rows


# ---------------------------------------------------------------------------
# registry


@dataclass(frozen=True)
class Experiment:
    """An experiment: its task and how its grid depends on the mode."""

    name: str
    description: str
    task: Callable[[Task, Any, np.random.SeedSequence], list[Row]]
    grid: Callable[[str], dict[str, Any]]
    figure: str


def _grid_eps(
    datasets=SYNTHETIC + REAL, real_reps=REAL_REPS, params=None, quick_datasets=SYNTHETIC
):
    def grid(mode: str) -> dict[str, Any]:
        quick = mode == "quick"
        return {
            "datasets": quick_datasets if quick else datasets,
            "epsilons": EPS_QUICK if quick else EPS_PAPER,
            "reps": 2 if quick else 30,
            "real_reps": 1 if quick else real_reps,
            "params": dict(params or {}),
        }

    return grid


def _grid_set(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    rhos = (10, 50, 90, 1, 5) if quick else tuple(range(10, 100, 10)) + tuple(range(1, 11))
    return {
        "datasets": SYNTHETIC if quick else (*SYNTHETIC, "us_cities"),
        "epsilons": (1.0,),
        "reps": 2 if quick else 30,
        "real_reps": 1 if quick else REAL_REPS,
        "params": {"rhos": rhos, "n_queries": 5 if quick else 10},
    }


def _grid_fixed(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    return {
        # the papers' fixed sets are US states and regions (us_cities); Zipf has none,
        # so it gets a fixed random partition into 50 sets
        "datasets": ("us_cities", "zipf"),
        "epsilons": EPS_QUICK if quick else EPS_PAPER,
        "reps": 2 if quick else 30,
        "real_reps": 1 if quick else REAL_REPS,
        "params": {},
    }


def _grid_bv(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    return {
        "datasets": ("zipf",),
        "epsilons": (1.0,),
        "reps": 2 if quick else 10,  # chunks
        "real_reps": 10,
        "params": {"runs": 5 if quick else 30, "ranks": 100},
    }


def _grid_nprime(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    ns = (100_000, 1_000_000) if quick else (30_000, 100_000, 300_000, 1_000_000, 3_000_000)
    return {
        "datasets": tuple(f"zipf:n={n}" for n in ns),
        "epsilons": (1.0,),
        "reps": 2 if quick else 30,
        "real_reps": 30,
        "params": {},
    }


def _grid_hh(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    return {
        "datasets": ("zipf",) if quick else ("zipf", "wordfreq"),
        "epsilons": EPS_QUICK if quick else (0.5, 1.0, 2.0, 3.0, 4.0, 5.0),
        "reps": 2 if quick else 30,
        "real_reps": 1 if quick else REAL_REPS,
        "params": {
            "thresholds": (0.001, 0.002, 0.005, 0.01)
            if quick
            else (0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02),
            "extra_methods": ("oue-zero",),
        },
    }


def _grid_choose(mode: str) -> dict[str, Any]:
    quick = mode == "quick"
    return {
        "datasets": ("zipf",) if quick else (*SYNTHETIC, "us_cities"),
        "epsilons": (1.0,) if quick else (0.5, 1.0, 2.0),
        "reps": 1 if quick else 10,
        "real_reps": 10,  # as "reps": each task fits and simulates 2 x 3 synthetic sets
        "params": {"synthetic_reps": 1 if quick else 3},
    }


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "full_domain_mse",
            "full-domain MSE vs eps",
            _full_domain,
            _grid_eps(quick_datasets=(*SYNTHETIC, "wordfreq")),
            "long paper Fig. 3-4; NDSS Fig. 3",
        ),
        Experiment(
            "set_value_mse",
            "random set-value MSE vs set size rho (10-90% and 1-10%), eps = 1",
            _set_value,
            _grid_set,
            "long paper Fig. 5-6",
        ),
        Experiment(
            "fixed_set",
            "fixed-set queries vs eps (us_cities: states, census regions and divisions; "
            "Zipf: a random partition into 50 sets)",
            _fixed_set,
            _grid_fixed,
            "NDSS Fig. 8",
        ),
        Experiment(
            "topk",
            "top-k MSE vs k (eps = 1) and vs eps (k = 10)",
            _topk,
            _grid_eps(params={"ks": (2, 4, 8, 10, 16, 32)}),
            "long paper Fig. 7-8",
        ),
        Experiment(
            "mae",
            "full-domain MAE vs eps",
            _mae,
            _grid_eps(datasets=SYNTHETIC),
            "long paper Fig. 10 (appendix)",
        ),
        Experiment(
            "bias_variance",
            "empirical bias and variance per rank (Zipf, eps = 1)",
            _bias_variance,
            _grid_bv,
            "NDSS Fig. 4",
        ),
        Experiment(
            "n_prime",
            "n': users Base needs for the same MSE, vs n (Zipf, eps = 1)",
            _n_prime,
            _grid_nprime,
            "NDSS Fig. 5",
        ),
        Experiment(
            "heavy_hitters",
            "heavy-hitter precision/recall/F vs threshold and vs eps (Calibrate)",
            _heavy_hitters,
            _grid_hh,
            "Calibrate Fig. 5-8",
        ),
        Experiment(
            "choose_method",
            "choosing a method with a synthetic dataset fitted to the estimate",
            _choose_method,
            _grid_choose,
            "NDSS Fig. 9",
        ),
    )
}


def build_config(
    name: str,
    mode: str = "default",
    *,
    methods: tuple[str, ...] | None = None,
    datasets: tuple[str, ...] | None = None,
    epsilons: tuple[float, ...] | None = None,
    reps: int | None = None,
    oracle: str = "OUE",
    seed: int = 0,
    params: dict[str, Any] | None = None,
    skip_unavailable: bool = True,
) -> Config:
    """The configuration of experiment ``name`` in ``mode`` with optional overrides.

    Real datasets whose loaders are not available are skipped with a warning
    (unless named explicitly in ``datasets``).
    """
    from bayesldp.experiments.runner import dataset_available, default_methods

    if name not in EXPERIMENTS:
        raise ValueError(f"name: unknown experiment {name!r}; choose from {sorted(EXPERIMENTS)}")
    if mode not in ("quick", "default", "full"):
        raise ValueError(f"mode must be quick, default or full, got {mode!r}")
    grid = EXPERIMENTS[name].grid(mode)
    grid_params = dict(grid["params"])
    extra = tuple(grid_params.pop("extra_methods", ()))
    chosen = tuple(methods) if methods else default_methods() + extra
    if datasets:
        ds = tuple(datasets)
    else:
        ds = tuple(d for d in grid["datasets"] if dataset_available(d))
    if reps is not None and reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps!r}")
    grid_params.update(params or {})
    n_reps = reps if reps is not None else grid["reps"]
    real = any(is_real(d) for d in ds)
    if reps is None and grid["real_reps"] < n_reps and real:
        grid_params["real_reps"] = grid["real_reps"]
    return Config(
        experiment=name,
        datasets=ds,
        epsilons=tuple(float(e) for e in (epsilons or grid["epsilons"])),
        reps=n_reps,
        methods=chosen,
        oracle=oracle,
        seed=seed,
        mode=mode,
        params=grid_params,
    )
