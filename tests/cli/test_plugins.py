"""Plugins reach the command line: methods and datasets of a user's own package.

A tiny package is written to a temporary folder: with a ``*.dist-info`` folder whose
``entry_points.txt`` declares the ``bayesldp.methods`` and ``bayesldp.datasets`` groups
(found by the real entry-point discovery, no installation, no network), or as a plain
module that ``--import`` loads. The command runs in a subprocess with that folder on its
path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

PLUGIN = '''"""A user's package: a method and a dataset for bayesldp."""

import numpy as np

import bayesldp
from bayesldp.datasets import Dataset, register_dataset
from bayesldp.methods.registry import postprocess, register_method


def js_ns(m):
    """Norm-Sub, then halfway to the uniform distribution."""
    f = postprocess(m, "norm-sub").frequencies
    return bayesldp.Estimate(0.5 * f + 0.5 / f.size, "js-ns", m)


def flat(d: int = 16, n: int = 1600, rng=0) -> Dataset:
    """The same number of users on every item."""
    return Dataset("flat", np.full(d, n // d), f"flat counts over d={d}")


def register_methods():
    register_method(name="js-ns", target=js_ns, summary="shrunk Norm-Sub", default=False)


def register_datasets():
    register_dataset(name="flat", builder=flat, kind="synthetic", note="plugin: flat counts")
'''
ENTRY_POINTS = """[bayesldp.methods]
ldp_plugin = ldp_plugin:register_methods

[bayesldp.datasets]
ldp_plugin = ldp_plugin:register_datasets
"""
GRID = ["--quick", "--quiet", "--reps", "1", "--epsilon", "1", "--datasets", "flat:d=16,n=1600"]


def _installed_plugin(folder: Path) -> Path:
    """Write the package and its distribution metadata (entry points) to ``folder``."""
    folder.mkdir()
    (folder / "ldp_plugin.py").write_text(PLUGIN)
    info = folder / "ldp_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ldp-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return folder


def _bayesldp(args: list[str], path: Path, cwd: Path | None = None):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "bayesldp.cli", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600,
    )  # fmt: skip


def _results(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "full_domain_mse" / "results.csv")


def test_a_method_and_a_dataset_from_entry_points_reach_the_command_line(tmp_path):
    # one command, both groups: the dataset "flat" and the method "js-ns" are the plugin's
    plugin = _installed_plugin(tmp_path / "site")
    args = ["experiment", "full_domain_mse", *GRID, "--no-dask", "--methods", "norm-sub,js-ns"]
    proc = _bayesldp([*args, "--out", str(tmp_path / "out")], plugin)
    assert proc.returncode == 0, proc.stderr
    results = _results(tmp_path / "out")
    assert set(results["dataset"]) == {"flat:d=16,n=1600"} and set(results["d"]) == {16}
    assert set(results["method"]) == {"norm-sub", "js-ns"}


def test_import_registers_a_users_module_here_and_on_the_dask_workers(tmp_path):
    """``--import MODULE`` (found in the current directory) before methods and datasets."""
    pytest.importorskip("distributed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "ldp_plugin.py").write_text(PLUGIN)
    (work / "my_ldp.py").write_text(
        "from ldp_plugin import register_datasets, register_methods\n\n"
        "register_methods()\nregister_datasets()\n"
    )
    args = ["experiment", "full_domain_mse", *GRID, "--workers", "1", "--import", "my_ldp"]
    args += ["--methods", "norm-sub,js-ns", "--out", str(tmp_path / "out")]
    proc = _bayesldp(args, tmp_path / "elsewhere", cwd=work)
    assert proc.returncode == 0, proc.stderr
    results = _results(tmp_path / "out")
    assert set(results["method"]) == {"norm-sub", "js-ns"}
    assert set(results["dataset"]) == {"flat:d=16,n=1600"}
    js = results.query("method == 'js-ns' and metric == 'sum'")["value"]
    assert js.round(12).tolist() == [1.0]
    # without it, the same command is a one-line error naming the method
    proc = _bayesldp([a for a in args if a not in ("--import", "my_ldp")], tmp_path, cwd=work)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "js-ns" in proc.stderr or "flat" in proc.stderr
