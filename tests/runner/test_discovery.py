"""Finding the experiments: every module of bayesldp.experiments that declares one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bayesldp.runner import find_experiments, get_experiment

ROOT = Path(__file__).resolve().parents[2]


def test_the_experiments_are_found_by_scanning_the_package():
    experiments = find_experiments()
    modules = {p.stem for p in (ROOT / "experiments").glob("*.py")} - {"__init__"}
    # reports over saved results declare no experiment
    assert set(experiments) == modules - {"claims", "bayes_grid"}
    assert all(e.name == name for name, e in experiments.items())
    papers = {name for name, e in experiments.items() if e.group == "papers"}
    assert papers == {
        "full_domain_mse", "set_value_mse", "fixed_set", "topk", "mae", "bias_variance",
        "n_prime", "heavy_hitters", "choose_method",
    }  # fmt: skip
    # the studies that were standalone scripts run through the runner too
    studies = {"interval_coverage": "intervals", "heavy_hitter_fwer": "intervals",
               "bootstrap_diagnostics": "intervals", "eb_accuracy": "eb"}  # fmt: skip
    assert {name: experiments[name].group for name in studies} == studies


def test_an_unknown_experiment_names_the_others():
    with pytest.raises(ValueError, match=r"unknown experiment 'nope'; choose one of .*mae"):
        get_experiment("nope")


def test_experiment_modules_have_no_script_entry_and_no_all():
    for path in (ROOT / "experiments").glob("*.py"):
        text = path.read_text()
        if path.stem in find_experiments():
            assert "def main(" not in text and "__main__" not in text, path.name
        assert "__all__" not in text, path.name


def test_importing_the_library_loads_no_experiment():
    code = "import sys, bayesldp, bayesldp.runner; print(any("
    code += "m.startswith('bayesldp.experiments') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
