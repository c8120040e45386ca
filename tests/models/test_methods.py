"""The models' methods, registered through the ``bayesldp.methods`` entry point."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

import bayesldp
from bayesldp.methods.registry import get_method

pytest.importorskip("pymc")

from bayesldp.models import _methods

NAMES = ("bayes-power", "bayes-power-zi", "bayes-consistent", "bayes-dirichlet", "bayes-hier")


def test_register_declares_the_five_methods_with_direct_references():
    _methods.register()
    _methods.register()  # an identical registration is left as it is
    assert tuple(spec.name for spec in _methods.SPECS) == NAMES
    for spec in _methods.SPECS:
        registered = get_method(spec.name)
        assert callable(spec.target) and spec.target.__module__.startswith("bayesldp.models.")
        # the same metadata as the registry's own declaration
        assert dataclasses.replace(registered, target=spec.target) == spec
        assert spec.bayesian and spec.interval == "normal" and not spec.default
    assert get_method("bayes-power-zi").fixed_options == {"zero_inflated": True}


def test_register_refuses_other_metadata_under_a_models_name(monkeypatch):
    changed = dataclasses.replace(_methods.SPECS[0], summary="something else")
    monkeypatch.setattr(_methods, "SPECS", (changed,))
    with pytest.raises(ValueError, match="bayes-power"):
        _methods.register()


def test_the_entry_point_is_declared():
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    entry_points = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
    assert entry_points["bayesldp.methods"]["models"] == "bayesldp.models._methods:register"
    assert set(NAMES) <= set(bayesldp.method_names(bayesian=True))
