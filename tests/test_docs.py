"""The documentation: the API reference covers the public API, and the guide's code runs.

``docs/_ext/apiref.py`` writes the reference pages from the ``__all__`` lists when the
documentation is built; these tests run that writer without Sphinx and read its
output. The public modules are found here independently (every module of
``bayesldp`` and ``bayesldp.models`` without a private part, apart from the studies of
``bayesldp.experiments``), so a writer that missed a module or a name would fail.
The Python code blocks of each user-guide page run, in order, as one script.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("bayesldp", "bayesldp.models")
EXCLUDED = "bayesldp.experiments"


def _load_apiref():
    spec = importlib.util.spec_from_file_location("apiref", ROOT / "docs" / "_ext" / "apiref.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["apiref"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def _public_all() -> dict[str, list[str]]:
    """Return ``{module: __all__}`` of every public module, found by walking the packages."""
    out = {}
    for root in ROOTS:
        package = importlib.import_module(root)
        names = [root] + [
            info.name for info in pkgutil.walk_packages(package.__path__, prefix=root + ".")
        ]
        for name in names:
            if any(part.startswith("_") for part in name.split(".")):
                continue
            if name == EXCLUDED or name.startswith(EXCLUDED + "."):
                continue
            module = importlib.import_module(name)
            if hasattr(module, "__all__"):
                out[name] = list(module.__all__)
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("api")
    written = _load_apiref().write_pages(out)
    assert (out / "index.rst").exists()
    return {name: path.read_text() for name, path in written.items()}


_ROW = re.compile(r"^   \* - :py:\w+:`(?P<name>[^ `]+) <(?P<target>[\w.]+)>`$", re.MULTILINE)
_DOCUMENTED = re.compile(
    r"^\.\. (?:autoclass|autoexception|autofunction|py:module):: (?P<target>[\w.]+)$",
    re.MULTILINE,
)
_DATA = re.compile(r"^\.\. py:data:: (?P<name>\w+)$", re.MULTILINE)


def _documented(module: str, text: str) -> list[str]:
    """Dotted names a page documents (data by bare name, under the page's module)."""
    return [m.group("target") for m in _DOCUMENTED.finditer(text)] + [
        f"{module}.{m.group('name')}" for m in _DATA.finditer(text)
    ]


def test_every_public_name_is_in_the_api_reference(pages):
    public = _public_all()
    assert public, "no public module found"
    assert set(pages) == set(public), "one page per public module, and no other"
    documented = {t for module, text in pages.items() for t in _documented(module, text)}
    missing, undocumented = [], []
    for module, names in public.items():
        rows = {m.group("name"): m.group("target") for m in _ROW.finditer(pages[module])}
        assert list(rows) == list(dict.fromkeys(names)), f"{module}: the table is not __all__"
        for name in names:
            if name not in rows:
                missing.append(f"{module}.{name}")
            elif rows[name] not in documented:
                undocumented.append(f"{module}.{name} -> {rows[name]}")
    assert not missing, f"public names without an entry: {missing}"
    assert not undocumented, f"entries linking to nothing documented: {undocumented}"


def test_the_reference_names_no_private_module(pages):
    for name, text in pages.items():
        assert not any(part.startswith("_") for part in name.split("."))
        targets = _documented(name, text) + [m.group("target") for m in _ROW.finditer(text)]
        private = [t for t in targets if any(p.startswith("_") for p in t.split(".")[:-1])]
        assert not private, f"{name}: {private}"


def test_each_object_is_documented_once(pages):
    targets = [t for module, text in pages.items() for t in _documented(module, text)]
    repeated = sorted({t for t in targets if targets.count(t) > 1})
    assert not repeated


_CODE_BLOCK = re.compile(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)
GUIDE = sorted(p for p in (ROOT / "docs" / "user_guide").glob("*.rst") if p.name != "index.rst")


@pytest.mark.parametrize("page", GUIDE, ids=lambda p: p.name)
def test_user_guide_code_blocks_run(page, tmp_path):
    """Each page's Python blocks, run in order as one script, as a reader would paste them."""
    blocks = [textwrap.dedent(b) for b in _CODE_BLOCK.findall(page.read_text())]
    if not blocks:
        pytest.skip("no Python code on this page")
    script = tmp_path / "page.py"
    script.write_text("\n".join(blocks))
    env = {**os.environ, "MPLBACKEND": "Agg", "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


# -- findings, not a log: README.md, paper/ and the user guide hold no lab-log wording ----

#: Wording of a lab log: a dated entry, a machine's load told as narrative, a run or
#: session referred to as "the previous one", a numbered work period, an issue's
#: figures. A load *column* of a timing table is fine (table rows are not searched for
#: loads); the history belongs in CHANGELOG.md.
LAB_LOG = {
    "a date": re.compile(r"\b20\d\d-[01]\d(?:-[0-3]\d)?\b"),
    "a machine load": re.compile(r"\bload(?: average)?(?: of| was| at| around)?\s*[~≈]\s*\d"),
    "a load in prose": re.compile(r"\(load\s*[~≈]?\s*\d"),
    "an earlier run": re.compile(
        r"\b(?:previous|earlier|last|former|prior)\s+(?:run|runs|session|sessions|measurement)\b",
        re.IGNORECASE,
    ),
    "a session": re.compile(r"\bsessions?\b", re.IGNORECASE),
    # (an upstream project's issue is cited as "#11")
    "an issue's figures": re.compile(r"\bissue\s+\d+\b", re.IGNORECASE),
    "a work period": re.compile(
        r"\b(?:work|development)\s+(?:period|round|phase)\b"
        r"|(?<![\w-])(?:period|round|phase)\s+\d+\b",
        re.IGNORECASE,
    ),
    "a day": re.compile(r"\b(?:yesterday|today|tonight|this morning|this afternoon)\b", re.I),
}
LOG_FREE = sorted(
    [ROOT / "README.md", *(ROOT / "paper").rglob("*.md"), *GUIDE, ROOT / "docs" / "index.rst"]
)


@pytest.mark.parametrize("path", LOG_FREE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_lab_log_wording(path):
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        in_table = line.lstrip().startswith("|")
        for what, pattern in LAB_LOG.items():
            if in_table and what == "a machine load":
                continue
            match = pattern.search(line)
            if match:
                found.append(f"line {number}: {what}: {match.group(0)!r}")
    assert not found, "lab-log wording (history goes to CHANGELOG.md):\n" + "\n".join(found)


def test_lab_log_patterns_catch_a_log():
    """The patterns find the wording they are for (so the test above can fail)."""
    log = (
        "On 2026-11-02 (load ~3.1) the previous run was slower; in session 4, "
        "issue 2 figures, work period 3, today."
    )
    caught = {what for what, pattern in LAB_LOG.items() if pattern.search(log)}
    assert caught == set(LAB_LOG)


def test_every_command_has_a_section_on_the_cli_page():
    """The command line page has a section, with its help, for each command of --help."""
    proc = subprocess.run(
        [sys.executable, "-m", "bayesldp.cli", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout.split("positional arguments:")[1].split("options:")[0]
    commands = re.findall(r"^    (\w+) ", block, re.MULTILINE)
    assert commands, "no command found in bayesldp --help"
    page = (ROOT / "docs" / "user_guide" / "cli.rst").read_text()
    missing = [c for c in commands if f".. bayesldp-help:: {c}\n" not in page]
    assert not missing, f"commands without a section on cli.rst: {missing}"
