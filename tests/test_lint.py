"""The code base passes ruff (lint and format) and mypy, as part of the default test run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAS_RUFF = importlib.util.find_spec("ruff") is not None
HAS_MYPY = importlib.util.find_spec("mypy") is not None


@pytest.mark.skipif(not HAS_RUFF, reason="ruff is not installed (pip install -e '.[test]')")
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not HAS_MYPY, reason="mypy is not installed (pip install -e '.[test]')")
def test_mypy(tmp_path):
    """Mypy is clean on bayesldp, bayesldp.models and bayesldp.experiments, as installed.

    models/ and experiments/ are installed as bayesldp.models and bayesldp.experiments,
    which mypy cannot see in the source tree: the package is rebuilt from links
    (bayesldp/'s files, models/ as bayesldp/models, experiments/ as
    bayesldp/experiments). The cache in the repository's .mypy_cache makes a second run
    take a few seconds.
    """
    package = tmp_path / "bayesldp"
    package.mkdir()
    for entry in (ROOT / "bayesldp").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for sub in ("models", "experiments"):
        (package / sub).symlink_to(ROOT / sub, target_is_directory=True)
    command = [
        sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
        "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "bayesldp",
    ]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
