"""The method registry: callables, not strings; plugins through entry points; errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bayesldp
from bayesldp.methods.registry import (
    MethodSpec,
    get_method,
    method_names,
    parse_method,
    postprocess,
    register_method,
)
from tests.helpers import toy_measurement


def test_every_spec_holds_callables():
    for name in method_names():
        spec = get_method(name)
        assert callable(spec.target), name
        assert all(callable(f) for f in spec.backends.values()), name
        assert spec.rows is None or callable(spec.rows), name
    with pytest.raises(ValueError, match="target must be a callable"):
        MethodSpec("by-name", "mypackage.module:function", "a string is refused")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cvxpy backend must be a callable"):
        MethodSpec("x", bayesldp.methods.base, "s", backends={"cvxpy": "bayesldp.convex:cls"})  # type: ignore[dict-item]


def test_the_core_registers_first_and_the_defaults():
    names = method_names()
    assert names[:3] == ("base", "base-pos", "post-pos")
    assert names.index("oracle-bayes") < names.index("bayes-power")
    # every method that runs on a measurement alone defaults to the calibrated normal
    # interval (posterior intervals undercover data-independent sets; paper/intervals.md)
    for name in method_names(needs_truth=False):
        assert get_method(name).interval == "normal", name
    assert get_method("oracle-bayes").interval == "posterior"


def test_unknown_names_and_backends_list_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown method 'nope'; choose one of base, base-pos"):
        get_method("nope")
    with pytest.raises(ValueError, match="has no 'cvxpy' backend; it offers numpy"):
        parse_method("norm@cvxpy")
    with pytest.raises(ValueError, match="already registered"):
        register_method(get_method("base"))


def test_option_names_come_from_the_functions_signature():
    assert get_method("norm-hyb").options() == ("alpha",)
    assert get_method("oue-zero").options() == ()  # alpha is fixed by the name
    assert get_method("eb-npmle").accepts("rng")  # read through its deferred import
    pytest.importorskip("cvxpy")
    assert "solver" in get_method("norm-sub").options("cvxpy")


def test_the_row_function_is_used_only_for_options_it_takes():
    spec = get_method("ibu")
    assert spec.row_function("numpy", {}) is spec.rows
    assert spec.row_function("numpy", {"likelihood": "binomial"}) is spec.rows
    assert spec.row_function("numpy", {"max_iter": 10}) is None  # the iteration itself
    assert get_method("mle").row_function("cvxpy", {}) is None
    assert get_method("eb-npmle").row_function("numpy", {}) is None


def test_norm_sub_has_the_cvxpy_backend_of_cls():
    """Issue 36: norm-sub is the same problem as cls, so it takes backend="cvxpy" too."""
    pytest.importorskip("cvxpy")
    m = bayesldp.OUE(1.0, 40).simulate(np.arange(40) * 30 + 5, np.random.default_rng(0))
    solved = postprocess(m, "norm-sub", backend="cvxpy")
    assert solved.method == "norm-sub" and solved.info["backend"] == "cvxpy"
    closed_form = postprocess(m, "norm-sub").frequencies
    np.testing.assert_allclose(solved.frequencies, closed_form, atol=1e-8)
    assert postprocess(m, "norm-sub@cvxpy").info["backend"] == "cvxpy"


PLUGIN = '''
import bayesldp
from bayesldp.methods.registry import MethodSpec, register_method


def halve(m):
    """Half the raw estimates."""
    return bayesldp.Estimate(m.estimates / 2, "halve-plugin", m)


def register():
    register_method(MethodSpec("halve-plugin", halve, "half the raw estimates", default=False))
'''

BROKEN = "raise ImportError('this plugin is broken')\n"


def test_a_plugin_registers_through_its_entry_point(tmp_path):
    """A tiny installed package: its entry point registers its method on the first lookup."""
    (tmp_path / "halve_plugin.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "broken_plugin.py").write_text(BROKEN)
    info = tmp_path / "halve_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: halve-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[bayesldp.methods]\nhalve = halve_plugin:register\nbroken = broken_plugin\n"
    )
    code = textwrap.dedent(
        """
        import sys, warnings
        sys.path.insert(0, sys.argv[1])
        import bayesldp
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = bayesldp.method_names()
        m = bayesldp.Measurement.from_support_counts([60, 20, 20], n=100, p=0.5, q=0.25)
        print(names.index("halve-plugin") > names.index("oracle-bayes"))
        print(bayesldp.postprocess(m, "halve-plugin").frequencies.round(2).tolist())
        print([str(w.message) for w in caught])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "True"
    assert lines[1] == "[0.7, -0.1, -0.1]"
    assert "could not load the methods of plugin 'broken'" in lines[2]
    assert "this plugin is broken" in lines[2]


def test_postprocess_records_options_for_a_rerun():
    m = toy_measurement([0.5, 0.3, 0.2])
    est = postprocess(m, "base-cut", alpha=0.5)
    assert est.info["options"] == {"alpha": 0.5} and est.info["backend"] == "numpy"
    with pytest.raises(ValueError, match=r"oue-zero.*alpha"):  # fixed by the name
        postprocess(m, "oue-zero", alpha=0.5)
    with pytest.raises(ValueError, match="unknown option"):
        postprocess(m, "norm", alpha=0.5)
