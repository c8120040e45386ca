"""Helpers shared by test modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from bayesldp import Measurement

ROOT = Path(__file__).resolve().parents[1]

# Dyadic oracle parameters: with n = 4000, f~ = c / 1000 - 1 exactly, so a catalogue
# case can be written directly as the estimates it should produce.
P_TOY, Q_TOY, N_TOY = 0.5, 0.25, 4000


def toy_measurement(estimates) -> Measurement:
    """Return a Measurement whose raw estimates are exactly ``estimates`` (multiples of 1e-3)."""
    f = np.asarray(estimates, dtype=float)
    counts = np.rint(1000 * (f + 1)).astype(np.int64)
    if np.any(counts < 0) or np.any(counts > N_TOY):
        raise ValueError("toy estimates must lie in [-1, 3]")
    m = Measurement.from_support_counts(counts, N_TOY, P_TOY, Q_TOY, oracle="OUE")
    np.testing.assert_allclose(m.estimates, f, atol=1e-12)
    return m


def zipf_frequencies(d: int, s: float = 1.5) -> np.ndarray:
    """Zipf frequencies over ``d`` items."""
    w = np.arange(1, d + 1, dtype=float) ** (-s)
    return w / w.sum()


def check_logp(kind, measurements, frequency_vectors, reference, *, rtol=1e-9, atol=1e-7):
    """PyMC's ``check_logp`` idea for :func:`bayesldp.models.ldp_likelihood`.

    Builds one model whose frequency vector is data, compiles the log-density of the
    counts once, and compares it with ``reference(m, f)`` (an independent scipy sum) at
    every measurement and frequency vector, swapping them in with ``set_measurement``
    and ``pm.set_data``: the same compiled function serves every case. Returns it.
    """
    import pymc as pm

    from bayesldp.models import ldp_likelihood, set_measurement

    d = measurements[0].domain_size
    with pm.Model(coords={"item": np.arange(d)}) as model:
        f = pm.Data("f", np.asarray(frequency_vectors[0], dtype=float), dims="item")
        ldp_likelihood("c", f, measurements[0], kind=kind)
    logp = model.compile_logp(vars=[model["c"]], jacobian=False)
    for m in measurements:
        set_measurement(model, "c", m)
        for fv in frequency_vectors:
            pm.set_data({"f": np.asarray(fv, dtype=float)}, model=model)
            expected = reference(m, np.asarray(fv, dtype=float))
            np.testing.assert_allclose(float(logp({})), expected, rtol=rtol, atol=atol)
    return logp


def run_script_rows(name: str, *args: str) -> list[dict]:
    """Run ``benchmarks/<name>`` in a subprocess; return the JSON rows it prints."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / name), *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.strip().splitlines() if line[:1] == "{"]


#: A tiny dataset and a few methods from both of the papers' panels, for runner tests.
TINY_DATA = "zipf:d=48,n=20000"
FEW_METHODS = ("base", "base-pos", "post-pos", "norm", "norm-sub", "base-cut", "norm-hyb",
               "mle-apx", "power", "power-ns")  # fmt: skip


def tiny_config(name: str, **overrides):
    """Return the quick configuration of experiment ``name`` on TINY_DATA, one rep, eps 1."""
    from bayesldp.runner import build_config, get_experiment

    options = {"datasets": (TINY_DATA,), "reps": 1, "epsilons": (1.0,)}
    options.update(overrides)
    return build_config(get_experiment(name), "quick", **options)


def result_values(results):
    """Return the cells, methods, metrics and values of results rows, in a fixed order."""
    cols = ["oracle", "dataset", "epsilon", "rep", "method", "metric", "param", "value"]
    return results[cols].sort_values(cols[:-1]).reset_index(drop=True)
