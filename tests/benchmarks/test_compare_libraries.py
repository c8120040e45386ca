"""Where pure-LDP and multi-freq-ldpy differ from bayesldp for the 'same' method, and why.

Each test feeds both libraries the same support counts. Findings:

* pure-LDP ``normalization=2`` (simplex projection) equals our norm-sub / cls.
* pure-LDP ``normalization=1`` (additive) is one pass of norm-sub: it zeroes the
  negatives and shifts the positives once, so entries pushed below zero stay negative.
* pure-LDP ``normalization=3`` (threshold cut) always zeroes the item at which the
  running total first exceeds n *and the last item in sorted order* even when the total
  never exceeds n, and keeps negative estimates otherwise; our norm-cut clips negatives.
* multi-freq-ldpy ``MI`` (clip and renormalise) equals our norm-mul.
* multi-freq-ldpy ``IBU`` treats the UE count vector as one multinomial over d outputs
  with channel p/q, whose columns do not sum to 1 for UE; its fixed point is therefore not
  the MLE of UE's binomial counts (our ``mle``/``ibu``). For GRR the channel is a true
  multinomial and both converge to the same MLE.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesldp
from tests.helpers import zipf_frequencies

pytest.importorskip("pure_ldp", reason="needs the bench extra: pip install -e '.[bench]'")
pytest.importorskip("multi_freq_ldpy", reason="needs the bench extra: pip install -e '.[bench]'")


@pytest.fixture(scope="module")
def compare():
    from benchmarks import compare_libraries

    return compare_libraries


def oue_measurement(rng, d=128, n=50_000):
    return bayesldp.OUE(1.0, d).simulate(rng.multinomial(n, zipf_frequencies(d)), rng)


def test_pure_ldp_simplex_equals_norm_sub(compare, rng):
    m = oue_measurement(rng)
    theirs = compare.pure_ldp_estimates(m, 1.0, 2)
    np.testing.assert_allclose(theirs, bayesldp.postprocess(m, "norm-sub").frequencies, atol=1e-12)


def test_pure_ldp_additive_is_one_pass(compare, rng):
    m = oue_measurement(rng)
    theirs = compare.pure_ldp_estimates(m, 1.0, 1)
    ours = bayesldp.postprocess(m, "norm-sub").frequencies
    assert theirs.sum() == pytest.approx(1.0)
    assert theirs.min() < 0  # one pass leaves entries shifted below zero
    assert ours.min() >= 0
    # The first pass of Michelot's iteration is exactly their additive step.
    f = m.estimates
    pos = f > 0
    first = np.where(pos, f + (1 - f[pos].sum()) / pos.sum(), 0.0)
    np.testing.assert_allclose(theirs, first, atol=1e-12)


def test_pure_ldp_cut_keeps_negatives_when_total_small(compare):
    # Estimates whose positives sum below 1: no cut is needed.
    counts = np.array([600, 400, 200, 150, 100])
    m = bayesldp.Measurement.from_support_counts(counts, 2000, 0.5, 0.25)
    theirs = compare.pure_ldp_estimates(m, 1.0, 3)
    ours = bayesldp.postprocess(m, "norm-cut").frequencies
    assert theirs.min() < 0  # negatives survive their cut
    assert theirs[np.argmin(m.estimates)] == 0  # ... but the last sorted item is zeroed
    np.testing.assert_allclose(ours, np.maximum(m.estimates, 0))


def test_multi_freq_mi_equals_norm_mul(compare, rng):
    m = oue_measurement(rng)
    theirs = compare.multi_freq_estimates(m, "MI", 0)
    np.testing.assert_allclose(theirs, bayesldp.postprocess(m, "norm-mul").frequencies, atol=1e-12)


@pytest.mark.slow  # multi-freq-ldpy's IBU compiles for ~10 s on first use
def test_multi_freq_ibu_grr_matches_mle_but_not_for_oue(compare, rng):
    d, n = 16, 20_000
    counts = rng.multinomial(n, zipf_frequencies(d))
    grr = bayesldp.GRR(2.0, d).simulate(counts, rng)
    theirs = compare.multi_freq_estimates(grr, "IBU", 20_000)
    ours = bayesldp.postprocess(grr, "mle").frequencies
    np.testing.assert_allclose(theirs, ours, atol=2e-3)
    oue = bayesldp.OUE(2.0, d).simulate(counts, rng)
    theirs = compare.multi_freq_estimates(oue, "IBU", 20_000)
    ours = bayesldp.postprocess(oue, "mle").frequencies
    assert np.abs(theirs - ours).max() > 1e-3  # a different likelihood, a different optimum


@pytest.mark.slow  # a benchmark script; its functions are tested above
def test_compare_script_tiny(compare, tmp_path):
    args = compare.build_parser().parse_args(
        ["--domains", "32", "--users", "2000", "--subsample", "100", "--pp-domain", "32",
         "--pp-users", "5000", "--reps", "1", "--ibu-iters", "100",
         "--scaling-domains", "100", "300", "--out", str(tmp_path)]
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = compare.main(args)
    assert set(tables) == {"simulation", "postprocess", "scaling"}
    sim = tables["simulation"]
    assert sim["ours_over_theirs"].notna().sum() == 4  # 2 libraries x 2 oracles
    assert set(tables["scaling"]["method"]) == set(
        bayesldp.method_names(bayesian=False, needs_truth=False)
    )
    assert (tmp_path / "scaling.png").exists()
