"""The code base passes ruff (lint and format), as part of the default test run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (pip install -e '.[test]')")
@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]])
def test_ruff(command):
    result = subprocess.run([RUFF, *command], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
