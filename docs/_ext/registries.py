"""Tables and help texts generated from the code at build time, so that they cannot drift.

Three directives:

``.. bayesldp-methods::``
    The post-processing methods, one row per :class:`bayesldp.MethodSpec` of the method
    registry (:func:`bayesldp.method_names`, :func:`bayesldp.methods.registry.get_method`): its
    name, its one-line summary, the function that runs it, whether it is consistent
    (non-negative and summing to one), its natural interval and its backends.
``.. bayesldp-experiments::``
    The studies, one row per experiment of :func:`bayesldp.runner.find_experiments`:
    name, group, what it runs, what it reproduces and its own options.
``.. bayesldp-help:: [COMMAND ...]``
    The output of ``bayesldp [COMMAND ...] --help``, run as a subprocess of the
    interpreter building the documentation (``python -m bayesldp.cli``).

Used by ``docs/conf.py``; ``tests/test_docs.py`` calls :func:`method_rows` and
:func:`experiment_rows` without Sphinx.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Any

import apiref
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

#: Width of the captured help texts (argparse reads ``COLUMNS``).
HELP_COLUMNS = 88


def _function_targets() -> tuple[dict[int, str], dict[str, list[str]]]:
    """Return the documented target of every public function, by identity and by name."""
    by_id: dict[int, str] = {}
    by_name: dict[str, list[str]] = {}
    for module, rows in apiref.entries(apiref.public_modules()).items():
        for entry in rows:
            if entry.kind != "function":
                continue
            value = getattr(importlib.import_module(module), entry.name)
            by_id.setdefault(id(value), entry.target)
            targets = by_name.setdefault(entry.name, [])
            if entry.target not in targets:
                targets.append(entry.target)
    return by_id, by_name


def _function_role(function: Any, fixed: dict[str, Any], by_id: dict, by_name: dict) -> str:
    """Return the reST link to the public function behind a method (with fixed options)."""
    target = by_id.get(id(function))
    if target is None:  # a deferred import: the public function of the same name
        candidates = by_name.get(getattr(function, "__name__", ""), [])
        target = candidates[0] if len(candidates) == 1 else None
    if target is None:
        return ""
    options = ", ".join(f"{k}={v!r}" for k, v in fixed.items())
    short = target.rsplit(".", 1)[-1]
    if options:
        return f":py:func:`{short} <{target}>` (``{options}``)"
    return f":py:func:`{short} <{target}>`"


def method_rows() -> list[dict[str, Any]]:
    """Return one dict per registered method, in registration order.

    Keys: ``name``, ``summary``, ``function`` (a reST link, empty when the function is
    not public), ``consistent``, ``nonnegative``, ``interval``, ``backends``,
    ``bayesian``, ``needs_truth``.
    """
    import bayesldp
    from bayesldp.methods.registry import get_method

    by_id, by_name = _function_targets()
    rows = []
    for name in bayesldp.method_names():
        spec = get_method(name)
        rows.append(
            {
                "name": spec.name,
                "summary": spec.summary,
                "function": _function_role(spec.target, dict(spec.fixed_options), by_id, by_name),
                "consistent": spec.consistent,
                "nonnegative": spec.nonnegative,
                "interval": spec.interval,
                "backends": spec.available_backends(),
                "bayesian": spec.bayesian,
                "needs_truth": spec.needs_truth,
            }
        )
    return rows


def experiment_rows() -> list[dict[str, Any]]:
    """Return one dict per experiment: name, group, description, figure and options."""
    from bayesldp.runner import find_experiments

    rows = []
    for experiment in find_experiments().values():
        options = {
            key: (text, experiment.grid.params[key]) for key, text in experiment.options.items()
        }
        rows.append(
            {
                "name": experiment.name,
                "group": experiment.group,
                "description": experiment.description,
                "figure": experiment.figure,
                "options": options,
            }
        )
    return rows


def _escape(text: str) -> str:
    """Escape the characters reST would read as markup in a plain table cell."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]], widths: list[int]) -> list[str]:
    """Return the lines of a reST list-table."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :class: bayesldp-table",
        f"   :widths: {' '.join(str(w) for w in widths)}",
        "",
    ]
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            lines.append(("   * - " if i == 0 else "     - ") + (cell or ""))
    return lines


class _GeneratedDirective(SphinxDirective):
    """A directive whose content is reST built by :meth:`lines`."""

    has_content = False

    def lines(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        source = self.get_source_info()[0]
        self.state.nested_parse(StringList(self.lines(), source=source), 0, container)
        return container.children


class MethodsTable(_GeneratedDirective):
    """``.. bayesldp-methods::``: the method registry as a table."""

    def lines(self) -> list[str]:
        """Return the table's reST lines."""
        rows = []
        for row in method_rows():
            notes = []
            if row["bayesian"]:
                notes.append("Bayesian (PyMC)")
            if row["needs_truth"]:
                notes.append("needs the true counts")
            summary = _escape(row["summary"])
            if notes:
                summary += f" *({'; '.join(notes)})*"
            consistent = "yes" if row["consistent"] else ("≥ 0" if row["nonnegative"] else "no")
            rows.append(
                [
                    f"``{row['name']}``",
                    summary,
                    row["function"],
                    consistent,
                    row["interval"],
                    ", ".join(row["backends"]),
                ]
            )
        header = ["method", "what it does", "function", "consistent", "interval", "backends"]
        return _table(header, rows, [14, 38, 20, 10, 10, 10])


class ExperimentsTable(_GeneratedDirective):
    """``.. bayesldp-experiments::``: the experiments as a table, then their own options."""

    def lines(self) -> list[str]:
        """Return the table's reST lines and the list of the experiments' own options."""
        rows = []
        options = []
        for row in experiment_rows():
            rows.append(
                [
                    f"``{row['name']}``",
                    row["group"],
                    _escape(row["description"]),
                    _escape(row["figure"]),
                ]
            )
            if row["options"]:
                listed = "; ".join(
                    f"``--{key.replace('_', '-')}`` {_escape(text)} (default ``{default!r}``)"
                    for key, (text, default) in row["options"].items()
                )
                options.append(f"- ``{row['name']}``: {listed}")
        header = ["NAME", "group", "what it runs", "reproduces"]
        lines = _table(header, rows, [18, 10, 44, 28])
        if options:
            lines += ["", "Options of their own, besides the runner's:", "", *options]
        return lines


def command_help(args: list[str]) -> str:
    """Return the output of ``bayesldp ARGS --help``, run as a subprocess.

    Parameters
    ----------
    args : list of str
        The command and subcommand, e.g. ``["experiment"]``.
    """
    env = {**os.environ, "COLUMNS": str(HELP_COLUMNS), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "bayesldp.cli", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bayesldp {' '.join(args)} --help failed: {proc.stderr[-2000:]}")
    return proc.stdout


class CommandHelp(SphinxDirective):
    """``.. bayesldp-help:: [COMMAND ...]``: a command's ``--help``, captured at build time."""

    has_content = False
    optional_arguments = 10

    def run(self) -> list[nodes.Node]:
        """Return the help text as a literal block."""
        args = list(self.arguments)
        text = command_help(args).rstrip()
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app: Any) -> dict[str, Any]:
    """Register the three directives.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    """
    app.add_directive("bayesldp-methods", MethodsTable)
    app.add_directive("bayesldp-experiments", ExperimentsTable)
    app.add_directive("bayesldp-help", CommandHelp)
    return {"version": "1", "parallel_read_safe": True}
