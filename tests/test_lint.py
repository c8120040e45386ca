"""The code base passes ruff (lint and format), as part of the default test run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAS_RUFF = importlib.util.find_spec("ruff") is not None


@pytest.mark.skipif(not HAS_RUFF, reason="ruff is not installed (pip install -e '.[test]')")
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
