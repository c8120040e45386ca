"""How far apart MLE-Apx, CLS (= Norm-Sub) and the exact MLE are, in MSE against the truth.

The papers approximate the oracle's likelihood by a Gaussian (MLE-Apx, Eq. 13) and
show that MLE-Apx and CLS nearly coincide. This experiment adds the exact MLE of the
oracle's own likelihood (multinomial for GRR, product of binomials for OUE), solved in
closed form by ``mle`` and checked against the cvxpy solution (``mle@cvxpy``) on the
first ``cvxpy_reps`` repetitions, and IBU (EM for the same likelihood).

For each oracle, eps, dataset (Zipf(1.5) and uniform, drawn afresh in every repetition)
and repetition, the same measurement is post-processed by every method; the rows hold
the full-domain MSE against that repetition's true frequencies and the mean squared
distance between the methods themselves.

Seeding as in the first version of this study: one generator, ``default_rng(13)``, read
in the order oracle, eps, dataset, repetition. Each task starts from its place in that
stream (the stream is replayed once per process, which costs a few draws per task, not
a method call), so tasks can run in any order and on any worker; a changed grid is a
new configuration (``independent_tasks=False``).

Run ``bayesldp experiment mle_gap``; writes
``summary.csv``, the table ``mle_gap.md`` and ``figure.png`` (MSE against eps) from the
saved results.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesldp._io import atomic_open
from bayesldp.datasets import Dataset
from bayesldp.methods.registry import postprocess
from bayesldp.plotting import two_panel_rows
from bayesldp.runner import Config, Experiment, Grid, Row, Task, apply_methods
from bayesldp.runner._seeding import grid_seed

METHODS = ("base", "cls", "mle-apx", "mle", "ibu")
#: Methods whose estimates the others are compared with (mean squared distance).
ANCHORS = ("cls", "mle")


def draw(dataset: str, oracle: str, epsilon: float, rng: np.random.Generator):
    """Draw true counts afresh from ``dataset``'s law, then one round of the oracle."""
    from bayesldp.datasets import get_dataset
    from bayesldp.oracles import make_oracle

    counts = get_dataset(dataset, rng=rng).counts
    return counts, make_oracle(oracle, epsilon, counts.size).simulate(counts, rng)


@lru_cache(maxsize=8)
def _stream_states(config_json: str) -> dict[tuple, Any]:
    """Each cell's state of the study's one generator (replaying the draws in order)."""
    config = json.loads(config_json)
    rng = np.random.default_rng(config["seed"])
    states: dict[tuple, Any] = {}  # PCG64 states (numpy types them as two kinds)
    for oracle in config["oracles"]:
        for eps in config["epsilons"]:
            for dataset in config["datasets"]:
                for rep in range(config["reps"]):
                    states[(oracle, float(eps), dataset, rep)] = rng.bit_generator.state
                    draw(dataset, oracle, eps, rng)
    return states


def stream(task: Task) -> np.random.Generator:
    """Return a generator in the state the study's stream has at ``task``'s cell."""
    key = json.dumps(asdict(task.config), sort_keys=True, default=str)
    state = _stream_states(key)[(task.oracle, task.epsilon, task.dataset, task.rep)]
    bits = np.random.PCG64()
    bits.state = state
    return np.random.Generator(bits)


def seed(task: Task) -> np.random.SeedSequence:
    """One stream, default_rng(seed), read in the order oracle, eps, dataset, rep; methods' streams from SeedSequence([seed, crc32('experiment|dataset|eps|rep')]).

    Each task replays the stream to its place (:func:`stream`); the sequence returned
    here seeds only the methods that take ``rng`` (none of this study's).
    """  # noqa: E501 (the first line is the metadata's description of the seeding)
    return grid_seed(task)


def task(task: Task, dataset: Dataset, seq: np.random.SeedSequence) -> list[Row]:
    """Every method on one measurement: MSE, distance to CLS and MLE, checks."""
    counts, m = draw(task.dataset, task.oracle, task.epsilon, stream(task))
    truth = counts / counts.sum()
    options = {"ibu": {"max_iter": task.params["ibu_max_iter"]}}
    fits, sec, notes = apply_methods(
        m, task.methods, seq, options=options, true_counts=dataset.counts
    )
    est = {name: fit.frequencies for name, fit in fits.items()}
    rows: list[Row] = []
    for name, f in est.items():
        values = {
            "mse": float(np.mean((f - truth) ** 2)),
            "msd_to_cls": float(np.mean((f - est["cls"]) ** 2)),
            "msd_to_mle": float(np.mean((f - est["mle"]) ** 2)),
        }
        if name == "ibu":
            values["converged"] = float(bool(fits["ibu"].info["converged"]))
        if name == "mle" and task.rep < task.params["cvxpy_reps"]:
            cvx = postprocess(m, "mle", backend="cvxpy", tol=1e-10, max_iter=200_000)
            values["cvxpy_mle_max_abs_diff"] = float(np.abs(cvx.frequencies - f).max())
        rows += [(name, k, np.nan, v, sec[name], notes[name]) for k, v in values.items()]
    return rows


def check(config: Config) -> None:
    """Check that ``cls`` and ``mle`` are among the methods (the distances need them)."""
    missing = [m for m in ANCHORS if m not in config.methods]
    if missing:
        raise ValueError(f"mle_gap compares every method with {' and '.join(ANCHORS)}: "
                         f"add {', '.join(missing)} to --methods")  # fmt: skip


def runs_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (oracle, eps, dataset, rep, method), one column per metric."""
    wide = results.pivot_table(
        index=["oracle", "epsilon", "dataset", "rep", "method"],
        columns="metric",
        values="value",
        aggfunc="first",
        sort=False,
    ).reset_index()
    return wide.rename(columns={"epsilon": "eps"})


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean (and standard error) per method, paired differences with the exact MLE."""
    keys = ["oracle", "eps", "dataset", "method"]
    # Paired with the exact MLE on the same measurement.
    mle_mse = runs[runs["method"] == "mle"].set_index(["oracle", "eps", "dataset", "rep"])["mse"]
    runs = runs.assign(
        mse_minus_mle=runs["mse"].to_numpy()
        - mle_mse.loc[
            list(zip(runs.oracle, runs.eps, runs.dataset, runs.rep, strict=True))
        ].to_numpy()
    )
    for column in ("cvxpy_mle_max_abs_diff", "converged"):
        if column not in runs:
            runs[column] = np.nan

    def se(x):
        return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan

    summary = runs.groupby(keys, sort=False).agg(
        mse=("mse", "mean"),
        mse_se=("mse", se),
        mse_minus_mle=("mse_minus_mle", "mean"),
        mse_minus_mle_se=("mse_minus_mle", se),
        msd_to_cls=("msd_to_cls", "mean"),
        msd_to_mle=("msd_to_mle", "mean"),
        cvxpy_mle_max_abs_diff=("cvxpy_mle_max_abs_diff", "max"),
        converged=("converged", "mean"),
        reps=("mse", "size"),
    )
    summary = summary.reset_index()
    summary["mse_over_mle"] = summary["mse"] / (summary["mse"] - summary["mse_minus_mle"])
    return summary


def table(summary: pd.DataFrame) -> str:
    """Markdown table: MSE (x1e-6) per method, and distance between the methods."""
    methods = list(dict.fromkeys(summary["method"]))
    lines = [
        "| oracle | eps | data | " + " | ".join(methods) + " "
        "| cls - mle (paired) | mle-apx - mle (paired) "
        "| MSD(mle-apx, cls) | MSD(mle-apx, mle) | MSD(mle, cls) | ibu converged "
        "| cvxpy vs numpy mle |",
        "|---|---|---|" + "---|" * len(methods) + "---|---|---|---|---|---|---|",
    ]
    for (oracle, eps, dataset), g in summary.groupby(["oracle", "eps", "dataset"], sort=False):
        g = g.set_index("method")

        def cell(name, g=g):
            return f"{g.loc[name, 'mse'] * 1e6:.4g} ± {g.loc[name, 'mse_se'] * 1e6:.2g}"

        def paired(name, g=g):
            if name not in g.index:
                return ""
            diff, err = g.loc[name, "mse_minus_mle"] * 1e6, g.loc[name, "mse_minus_mle_se"] * 1e6
            return f"{diff:+.3g} ± {err:.2g}"

        def value(name, column, fmt, g=g):
            return format(g.loc[name, column], fmt) if name in g.index else ""

        lines.append(
            f"| {oracle} | {eps:g} | {dataset} | "
            + " | ".join(cell(name) for name in methods)
            + f" | {paired('cls')} | {paired('mle-apx')}"
            + f" | {value('mle-apx', 'msd_to_cls', '.2e')}"
            + f" | {value('mle-apx', 'msd_to_mle', '.2e')}"
            + f" | {value('mle', 'msd_to_cls', '.2e')} | {value('ibu', 'converged', '.0%')}"
            + f" | {value('mle', 'cvxpy_mle_max_abs_diff', '.1e')} |"
        )
    return "\n".join(lines) + "\n"


def plot(results: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Write ``mle_gap.md``, plot MSE against eps per (oracle, dataset); return the summary."""
    runs = runs_table(results)
    summary = summarise(runs)
    sizes = results.groupby("dataset")[["n", "d"]].first()
    data = ", ".join(f"{ds} (n = {r.n:,}, d = {r.d:,})" for ds, r in sizes.iterrows())
    header = (
        f"Full-domain MSE x 1e6 (mean ± s.e. over {runs['rep'].nunique()} repetitions); "
        f"data: {data}, drawn afresh in every repetition; 'cls - mle' and 'mle-apx - mle': "
        "mean paired difference in MSE x 1e6 (same measurement) ± its s.e.; MSD = mean "
        "squared difference between two methods' estimates; 'cvxpy vs numpy mle': largest "
        "|cvxpy - numpy| of the exact MLE over the repetitions where it was solved; IBU is "
        "run with SQUAREM and tol 1e-10, and 'ibu converged' is the share of runs that met "
        "tol.\n\n"
    )
    with atomic_open(folder / "mle_gap.md") as fh:
        fh.write(header + table(summary))
    mse = results[results["metric"] == "mse"].copy()
    mse["row"] = mse["oracle"] + ", " + mse["dataset"]
    two_panel_rows(mse, "mse", "epsilon", folder / "figure.png", "full-domain MSE", "epsilon",
                   row_key="row")  # fmt: skip
    return summary


_PARAMS = {"cvxpy_reps": 2, "ibu_max_iter": 100_000}

EXPERIMENT = Experiment(
    name="mle_gap",
    description="MLE-Apx, CLS and the exact MLE (and IBU): MSE and distances, OUE and GRR",
    figure="paper/convex.md",
    task=task,
    grid=Grid(
        ("zipf", "uniform"),
        (0.5, 1.0, 2.0),
        reps=30,
        methods=METHODS,
        oracles=("OUE", "GRR"),
        seed=13,
        params=_PARAMS,
    ),
    quick=Grid(
        ("zipf:d=64,n=20000", "uniform:d=64,n=20000"),
        (1.0,),
        reps=2,
        methods=METHODS,
        oracles=("OUE", "GRR"),
        seed=13,
        params={"cvxpy_reps": 1, "ibu_max_iter": 2000},
    ),
    plot=plot,
    seed=seed,
    group="convex",
    options={
        "cvxpy_reps": "repetitions where the cvxpy MLE is solved too",
        "ibu_max_iter": "EM-step limit of IBU (its default of 1e4 stops far from the MLE for "
        "OUE, d = 1024, n = 1e6)",
    },
    independent_tasks=False,
    check=check,
)
