"""Files a user brings: FIMI transactions and CSV columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayesldp.datasets import files, load_csv, load_fimi

DATA = Path(__file__).resolve().parents[1] / "data"
TINY_DAT = DATA / "tiny.dat"
TINY_CSV = DATA / "tiny.csv"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


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
    monkeypatch.setattr(files, "_FIMI_CHUNK", 7)
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
