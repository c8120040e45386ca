"""The README as a new user reads it: its code runs as pasted, its links lead somewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
BASH_BLOCKS = re.findall(r"```bash\n(.*?)```", README, re.S)


def test_the_readme_fits_on_two_screens():
    assert len(README.splitlines()) <= 150


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_every_python_block_runs_as_pasted(block, tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr


def test_the_two_commands_come_first_and_ci_runs_the_test_command():
    first, second = BASH_BLOCKS[:2]
    assert "pip install ." in first and "bayesldp demo" in first
    assert 'pip install -e ".[test]"' in second and second.strip().endswith("pytest")
    assert second.strip() in (ROOT / ".ci" / "run").read_text()


def test_the_docs_command_is_the_one_ci_runs():
    docs = [b for b in BASH_BLOCKS if "sphinx" in b]
    assert docs, "the README shows how to build the documentation"
    build = docs[0].split("&&")[-1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert build.replace("-W", "-W --keep-going") in ci or build in ci


def test_every_relative_link_exists():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert not missing, missing
