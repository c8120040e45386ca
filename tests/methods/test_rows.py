"""Each method's row function: several rows at once equal the public method row by row.

The public method is its row function run on one row, so what these tests check is
that the vectorised code gives every row the answer it would give that row alone
(``ibu``'s rows are its limit, the MLE; ``power``'s several rows are interpolated in
its exponent).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp
from bayesldp import datasets
from bayesldp.methods._likelihood import IBU_LIMIT_SDS
from bayesldp.methods._rows import MeasurementRows, row_info
from bayesldp.methods.registry import get_method, method_names, postprocess
from tests.helpers import toy_measurement, zipf_frequencies

WITH_ROWS = [name for name in method_names() if get_method(name).rows is not None]


def fixed_users(d: int, n: int) -> np.ndarray:
    """Return true counts summing to n, Zipf-shaped."""
    x = np.floor(zipf_frequencies(d, 1.2) * n).astype(np.int64)
    x[0] += n - x.sum()
    return x


def run_rows(name: str, ms: list, **options) -> np.ndarray:
    """Run the method's row function on the measurements' counts, as the bootstrap does."""
    spec = get_method(name)
    counts = np.stack([m.support_counts for m in ms])
    rows = MeasurementRows.from_counts(ms[0], counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, _ = spec.rows(rows, **spec.fixed_options, **options)
    return out


def one_by_one(name: str, ms: list) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ests = [postprocess(m, name) for m in ms]
    return np.stack([e.query_basis if e.query_basis is not None else e.frequencies for e in ests])


def assert_rows_match(name, out, ref, ms, *, rtol=1e-12):
    """Rows against the method run per row; ibu's rows are its limit, the MLE."""
    if name == "ibu":  # ibu stops close to its limit, not on it
        sd = np.sqrt(np.stack([m.variance() for m in ms]))
        assert np.max(np.abs(out - ref) / sd) <= IBU_LIMIT_SDS, name
    else:
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", WITH_ROWS)
def test_one_row_is_the_public_method(name):
    """Cheap: the row function on one row returns the public method's answer and info."""
    m = bayesldp.OUE(1.0, 40).simulate(fixed_users(40, 20_000), np.random.default_rng(5))
    spec = get_method(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = postprocess(m, name)
        out, info = spec.rows(MeasurementRows.of(m), **spec.fixed_options)
    expected = est.query_basis if est.query_basis is not None else est.frequencies
    if name == "ibu":
        assert_rows_match(name, out, expected[None, :], [m])
        return
    np.testing.assert_array_equal(out[0], expected)
    info = row_info(info, 0)
    info.pop("warning", None)
    assert info == {k: v for k, v in est.info.items() if k not in ("options", "backend")}


CASES = [pytest.param("OUE", 1024, 10**6, 1.0, marks=pytest.mark.slow), ("OUE", 300, 10**5, 1.0),
         ("GRR", 64, 10**5, 2.0), ("OUE", 16, 1000, 0.5), ("SUE", 200, 5000, 4.0),
         ("HR", 50, 20000, 1.0)]  # fmt: skip


@pytest.mark.parametrize(("oracle", "d", "n", "eps"), CASES)
def test_rows_equal_the_method_row_by_row(oracle, d, n, eps):
    rng = np.random.default_rng(3)
    o = bayesldp.make_oracle(oracle, eps, d)
    x = fixed_users(d, n)
    ms = [o.simulate(x, rng) for _ in range(6)]
    for name in WITH_ROWS:
        if name == "ibu":  # its rows are mle's; how near ibu stops: the slow test below
            continue
        tol = 1e-7 if name.startswith("power") else 1e-12  # power: interpolated in s
        assert_rows_match(name, run_rows(name, ms), one_by_one(name, ms), ms, rtol=tol)


def test_rows_take_the_special_branches():
    """Rows that take the methods' special branches, each against the method."""
    cases = [
        [-0.1, -0.2, -0.3, -0.05],  # nothing positive (norm-mul warns: uniform)
        [0.3, 0.2, 0.1, -0.05],  # positives sum <= 1 (norm-cut keeps them)
        [0.7, 0.7, 0.5, -0.9],  # one estimate set to zero then cut (norm-cut theta)
        [1.5, 0.2, 0.1, -0.8],  # largest above 1 (norm-cut gives zeros)
        [0.4, 0.4, 0.3, -0.1],  # ties at the norm-cut boundary
        [0.9, 0.3, 0.2, 0.1],  # norm-hyb: kept sum above 1, keep the largest
        [0.3, 0.3, 0.2, 0.2],  # consistent already
    ]
    ms = [toy_measurement(c) for c in cases]
    for name in WITH_ROWS:
        if name.startswith("power"):
            continue
        assert_rows_match(name, run_rows(name, ms), one_by_one(name, ms), ms, rtol=1e-7)


def test_rows_report_their_warnings_instead_of_warning():
    ms = [toy_measurement([-0.1, -0.2, -0.3]), toy_measurement([0.5, 0.3, 0.2])]
    rows = MeasurementRows.from_counts(ms[0], np.stack([m.support_counts for m in ms]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, info = get_method("norm-mul").rows(rows)
    assert info["warning"][0] and not info["warning"][1]
    np.testing.assert_allclose(out[0], 1 / 3)
    with pytest.warns(RuntimeWarning, match="norm-mul: no positive estimate"):
        postprocess(ms[0], "norm-mul")


@pytest.mark.slow
@pytest.mark.parametrize(("oracle", "eps"), [("OUE", 0.5), ("OUE", 1.0), ("OUE", 4.0),
                                             ("GRR", 0.5), ("GRR", 4.0)])  # fmt: skip
def test_ibu_stops_near_the_mle_its_rows_are(oracle, eps):
    """The papers' Zipf setting: ibu's answer is within IBU_LIMIT_SDS sds of mle's, item by item.

    OUE stops at max_iter before its tol; GRR meets its tol.
    """
    data = datasets.zipf(1.5, 1024, 10**6, rng=0)
    m = bayesldp.make_oracle(oracle, eps, data.d).simulate(data.counts, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ibu = postprocess(m, "ibu").frequencies
    rows = run_rows("ibu", [m])
    np.testing.assert_allclose(rows[0], postprocess(m, "mle").frequencies, rtol=1e-12, atol=1e-15)
    assert np.max(np.abs(ibu - rows[0]) / np.sqrt(m.variance())) <= IBU_LIMIT_SDS
