"""The command line as a whole: one dialect, help for every option, cheap start, pipes."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bayesldp.cli import main
from bayesldp.cli._common import integer
from bayesldp.cli._experiment import run_parser
from bayesldp.cli._main import COMMANDS, build_parser
from bayesldp.runner import find_experiments

#: What ``--version`` and ``--help`` must not import (numpy comes with ``import bayesldp``).
HEAVY = ("scipy", "pandas", "pymc", "pytensor", "cvxpy", "dask", "distributed", "matplotlib",
         "tqdm", "bayesldp.runner", "bayesldp.experiments")  # fmt: skip


def _cli(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "bayesldp.cli", *args]


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser of the command line: the top level, each command, each experiment."""
    top = build_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    parsers = {"bayesldp": top, **{f"bayesldp {k}": p for k, p in sub.choices.items()}}
    parsers["bayesldp experiment all"] = run_parser("bayesldp experiment all", "all")
    for name, e in find_experiments().items():
        parsers[f"bayesldp experiment {name}"] = run_parser(name, e.description, e)
    return parsers


def test_every_option_has_help_and_one_spelling_per_concept():
    spellings: dict[str, set[str]] = {}
    for prog, parser in _parsers().items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help.strip(), f"{prog} {action.option_strings}"
            for option in action.option_strings:
                spellings.setdefault(action.dest, set()).add(option)
    # the old spellings are gone everywhere
    for old in ("--eps", "--domain-size", "--oracles", "--dataset", "--method", "--n-workers"):
        assert not any(old in s for s in spellings.values()), old
    for dest in ("epsilon", "d", "n", "oracle", "seed", "reps", "methods", "datasets"):
        assert spellings[dest] == {f"--{dest}"}, (dest, spellings[dest])


def test_the_top_level_help_is_plain_text_and_lists_every_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out and ":mod:" not in out
    listed = out.split("positional arguments:")[1].split("options:")[0]
    for command in COMMANDS:
        assert f"\n    {command} " in listed, command


def _help_commands():
    top = [[], ["demo"], ["experiment"], ["aggregate"], ["audit"], ["experiment", "all"]]
    return top + [["experiment", name] for name in find_experiments()]


@pytest.mark.parametrize("argv", _help_commands(), ids=lambda a: " ".join(a) or "bayesldp")
def test_every_help_text_renders(argv, capsys):
    """``--help`` works for every command and experiment (a ``%`` in a text once broke it)."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["demo", "--help"]])
def test_version_and_help_import_no_numerical_package(argv):
    """Imports are lazy: the numerical packages load when a command runs, not before."""
    code = (
        "import sys\nfrom bayesldp.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "loaded:"


def test_counts_read_integer_valued_floats(tmp_path, capsys):
    argv = ["audit", "--oracle", "GRR", "--epsilon", "1", "--d", "2e0", "--samples", "2e3"]
    assert main(argv) in (0, 1)
    assert "d 2)" in capsys.readouterr().out
    for bad in ("1.5e0", "abc", "nan", "inf", "1e"):
        with pytest.raises(SystemExit) as stop:
            main(["demo", "--n", bad, "--out", str(tmp_path)])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("bayesldp demo: error: argument --n") and len(err.splitlines()) == 1


@given(st.integers(min_value=0, max_value=10**18))
def test_integer_reads_every_spelling_of_an_integer(value):
    assert integer(str(value)) == value
    assert integer(f"{value:_}") == value
    assert integer(f"{value}.0") == value
    if value and value % 10**6 == 0:
        assert integer(f"{value // 10**6}e6") == value


@given(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not float(x).is_integer()))
def test_integer_refuses_what_is_not_a_whole_number(value):
    with pytest.raises(argparse.ArgumentTypeError, match="is not an integer"):
        integer(repr(value))


def test_a_stdout_closed_after_the_first_line_ends_quietly(tmp_path):
    """``bayesldp demo ... | head -1``: exit 141, no traceback on stderr."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the first line arrives at once
    argv = _cli(["demo", "--n", "2000", "--d", "16", "--reps", "1", "--methods", "base"])
    proc = subprocess.Popen(
        [*argv, "--quiet", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert b"d = 16" in proc.stdout.readline()
    proc.stdout.close()  # the table that follows the first line has no reader
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("buffered", [True, False])
def test_experiment_list_into_a_closed_pipe_ends_quietly(buffered):
    """No reader at all: the list's writes (or the flush at exit when buffered) fail."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONUNBUFFERED": "" if buffered else "1"}
    try:
        proc = subprocess.run(
            _cli(["experiment", "list"]), stdout=write, stderr=subprocess.PIPE, env=env
        )
    finally:
        os.close(write)
    assert proc.returncode == 141, proc.stderr.decode()
    assert proc.stderr == b""
