"""bayesldp.plan: exact raw errors against simulation, users needed, hostile input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesldp
from bayesldp import make_oracle, plan
from bayesldp._plan_simulation import set_size, top_items
from bayesldp.planning import parse_query, prior_frequencies

#: |z| beyond which a Monte Carlo mean contradicts a prediction: with 24 (oracle, query)
#: cells a family-wise false alarm rate of about 0.2 % under the normal approximation.
Z_LIMIT = 4.0
QUERIES = ["full", ("set", 0.5), ("set", 0.1), ("top", 5)]


def _pilot(d: int, n: int) -> np.ndarray:
    """Return fixed true counts of ``n`` users: a Zipf(1.1) draw (skewed, some empty)."""
    w = np.arange(1, d + 1, dtype=np.float64) ** -1.1
    return np.random.default_rng(5).multinomial(n, w / w.sum())


def _raw_errors(oracle, counts, query, reps, rng) -> np.ndarray:
    """Squared error of the raw estimates' answer in ``reps`` exact simulated rounds."""
    n, d = int(counts.sum()), counts.size
    truth = counts / n
    kind, value = parse_query(query, d)
    out = np.empty(reps)
    for r in range(reps):
        est = oracle.simulate(counts, rng, exact=True).estimates
        if kind == "full":
            out[r] = np.mean((est - truth) ** 2)
        elif kind == "top":
            top = top_items(truth, int(value))[0]
            out[r] = np.mean((est[top] - truth[top]) ** 2)
        else:  # the mean over every set of the size: items and pairs counted directly
            size, e = set_size(d, value), est - truth
            pairs = e.sum() ** 2 - np.sum(e**2)
            out[r] = size / d * np.sum(e**2) + size * (size - 1) / (d * (d - 1)) * pairs
    return out


@pytest.mark.parametrize("name", list(bayesldp.ORACLES))
def test_predicted_raw_mse_matches_simulation_within_monte_carlo_error(name):
    """Every oracle, every query kind: |mean - predicted| < Z_LIMIT standard errors.

    The rounds are exact (``simulate(exact=True)`` privatizes every user of OLH, SS and
    HR), so the covariances between items that set queries sum are the real ones.
    """
    d, n, reps, eps = 50, 2000, 400, 1.0
    counts = _pilot(d, n)
    oracle = make_oracle(name, eps, d)
    rng = np.random.default_rng(list(bayesldp.ORACLES).index(name))
    for query in QUERIES:
        table = plan(d, eps, users=n, query=query, prior=counts, oracles=name,
                     methods="base", reps=2, rng=0)  # fmt: skip
        predicted = float(table["raw_mse"].iloc[0])
        errors = _raw_errors(oracle, counts, query, reps, rng)
        se = errors.std(ddof=1) / math.sqrt(reps)
        z = (errors.mean() - predicted) / se
        assert abs(z) < Z_LIMIT, (name, query, predicted, errors.mean(), se)
        assert se < 0.05 * predicted  # the test can tell a 20% error from noise


def test_raw_users_needed_round_trip():
    """The returned count reaches the target and one user fewer does not."""
    for query in QUERIES:
        table = plan(200, 0.5, target=2e-4, query=query, prior=1.2, methods="base", reps=2, rng=0)
        for _, row in table.iterrows():
            n = int(row["raw_users_needed"])
            again = plan(200, 0.5, users=[n, n - 1] if n > 1 else [n], query=query, prior=1.2,
                         oracles=row["oracle"], methods="base", reps=2, rng=0)  # fmt: skip
            assert again["raw_mse"].iloc[0] <= 2e-4
            if n > 1:
                assert again["raw_mse"].iloc[1] > 2e-4


def test_post_users_needed_round_trip():
    """Plugging the post-processed count back gives the target, within Monte Carlo error."""
    target = 3e-5
    kwargs = dict(query="full", prior=1.5, oracles="OUE", methods="norm-sub")
    table = plan(256, 1.0, target=target, reps=60, rng=0, **kwargs)
    row = table.iloc[0]
    assert row["post_bracketed"]
    assert row["post_users_needed"] < row["raw_users_needed"]  # norm-sub helps on Zipf
    check = plan(256, 1.0, users=int(row["post_users_needed"]), reps=200, rng=1, **kwargs)
    se = math.hypot(float(check["post_se"].iloc[0]), float(row["post_se"]))
    assert abs(float(check["post_mse"].iloc[0]) - target) < Z_LIMIT * se


def test_table_columns_curve_and_registry_order():
    table = plan(32, 2.0, users=[500, 5000], target=1e-3, query="top:3", methods=["base", "norm"],
                 reps=3, rng=0)  # fmt: skip
    assert list(dict.fromkeys(table["oracle"])) == list(bayesldp.ORACLES)
    assert len(table) == 2 * len(bayesldp.ORACLES)
    for column in ("report_bits", "raw_mse", "method", "post_mse", "post_se",
                   "raw_users_needed", "post_users_needed", "post_method"):  # fmt: skip
        assert column in table
    assert set(table["method"]) <= {"base", "norm"}
    raw = table.pivot(index="oracle", columns="users", values="raw_mse")
    np.testing.assert_allclose(raw[500], 10 * raw[5000])  # exactly 1/n
    curve = table.attrs["curve"]
    assert set(curve["oracle"]) == set(bayesldp.ORACLES)
    assert table.attrs["query"] == "top:3"


def test_report_bits_of_each_family():
    d = 1024
    assert make_oracle("GRR", 1.0, d).report_bits == 10
    assert make_oracle("OUE", 1.0, d).report_bits == d
    assert make_oracle("HR", 1.0, d).report_bits == 11  # K = 2048 columns
    ss = make_oracle("SS", 1.0, d)
    assert ss.report_bits == ss.k * 10
    olh = make_oracle("OLH", 1.0, d)
    assert olh.report_bits == math.ceil(math.log2(olh.g)) + 62


def test_prior_forms():
    np.testing.assert_allclose(prior_frequencies(None, 4), 0.25)
    np.testing.assert_allclose(prior_frequencies("uniform", 4), 0.25)
    z = prior_frequencies(1.0, 3)
    np.testing.assert_allclose(z, np.array([1, 1 / 2, 1 / 3]) / (11 / 6))
    np.testing.assert_allclose(prior_frequencies([2, 0, 2], 3), [0.5, 0, 0.5])


# ---------------------------------------------------------------------------
# hostile input

SMALL = dict(users=100, oracles="GRR", methods="base", reps=2, rng=0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"domain_size": 0}, "domain_size"),
        ({"domain_size": -3}, "domain_size"),
        ({"domain_size": 1}, "domain_size"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"users": 0}, "users"),
        ({"users": -5}, "users"),
        ({"users": None}, "users"),  # and no target either
        ({"target": 0.0}, "target"),
        ({"target": -1e-3}, "target"),
        ({"query": "median"}, "query"),
        ({"query": ("set", 0.0)}, "query"),
        ({"query": ("set", 1.5)}, "query"),
        ({"query": "set:-0.2"}, "query"),
        ({"query": ("top", 9)}, "query"),
        ({"query": "top:0"}, "query"),
        ({"query": "top"}, "query"),
        ({"oracles": "XYZ"}, "oracles"),
        ({"oracles": []}, "oracles"),
        ({"methods": "nope"}, "methods"),
        ({"prior": [1, 2]}, "prior"),
        ({"prior": -1.0}, "prior"),
        ({"prior": [0] * 8}, "prior"),
        ({"reps": 1}, "reps"),
    ],
)
def test_bad_arguments_are_value_errors_naming_them(kwargs, name):
    args = {"domain_size": 8, "epsilon": 1.0, **SMALL, **kwargs}
    with pytest.raises(ValueError, match=name):
        plan(args.pop("domain_size"), args.pop("epsilon"), **args)


HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=10),
    st.tuples(st.text(max_size=4), st.floats(allow_nan=True, allow_infinity=True)),
)
ARGUMENTS = ("domain_size", "epsilon", "users", "target", "query", "prior", "oracles", "reps",
             "methods")  # fmt: skip


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(argument=st.sampled_from(ARGUMENTS), value=HOSTILE)
def test_hostile_input_is_a_value_error_naming_the_argument_or_a_valid_table(argument, value):
    args = {"domain_size": 8, "epsilon": 1.0, **SMALL, argument: value}
    if argument == "users" and value is None:
        args["target"] = 1e-2
    if argument == "domain_size" and isinstance(value, int) and value > 64:
        return  # a valid but large domain: not hostile, only slow
    try:
        table = plan(args.pop("domain_size"), args.pop("epsilon"), **args)
    except ValueError as err:
        assert argument in str(err) or argument.rstrip("s") in str(err), (argument, value, err)
        return
    assert len(table) >= 1
    assert np.isfinite(table["raw_mse"]).all() and (table["raw_mse"] >= 0).all()
    assert np.isfinite(table["post_mse"]).all()


@pytest.mark.parametrize("name", list(bayesldp.ORACLES))
def test_random_set_variance_is_the_average_over_every_set(name):
    """Enumerate every set of 3 of 7 items: the mean of the exact set variances."""
    from itertools import combinations

    from bayesldp.intervals import subset_count_variances

    d, size, n = 7, 3, 1000
    f = np.random.default_rng(1).dirichlet(np.ones(d))
    oracle = make_oracle(name, 0.8, d)
    counts = np.zeros(d, dtype=np.int64)
    counts[0] = n
    m = oracle.measurement(counts, n)
    masks = np.zeros((35, d), dtype=bool)
    for i, items in enumerate(combinations(range(d), size)):
        masks[i, list(items)] = True
    expected = subset_count_variances(m, masks, f).mean()
    cls = bayesldp.oracles.oracle_class(name)
    np.testing.assert_allclose(cls.random_set_count_variance(m, size, f), expected, rtol=1e-12)
