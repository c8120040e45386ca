"""The audit command: a verdict on one line, user errors on one line."""

from __future__ import annotations

import pytest

import bayesldp
from bayesldp.cli import main


def _cheat_grr():
    class CheatGRR(bayesldp.GRR):
        def privatize(self, values, rng):
            return bayesldp.GRR(2 * self.epsilon, self.domain_size).privatize(values, rng)

    return CheatGRR


def test_cli_audit_passes(capsys):
    code = main(["audit", "--oracle", "oue", "--epsilon", "1", "--d", "3", "--samples", "6000"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.count("\n") == 1 and "consistent with eps = 1" in out
    assert "eps_hat" in out and "lower bound" in out
    assert "3/3" in err  # the progress bar, on stderr


def test_cli_audit_flags_a_violation(capsys, monkeypatch):
    monkeypatch.setitem(bayesldp.ORACLES, "GRR", _cheat_grr())
    code = main(["audit", "--oracle", "GRR", "--epsilon", "1", "--d", "3", "--samples", "6000"])
    out, _ = capsys.readouterr()
    assert code == 1 and "VIOLATES eps = 1" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--oracle", "XYZ", "--epsilon", "1", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "0", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "-1", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "abc", "--d", "4"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "1"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--samples", "1"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--confidence", "1.5"],
        ["--oracle", "GRR", "--epsilon", "1", "--d", "4", "--seed", "-3"],
    ],
)
def test_cli_audit_user_errors(argv, capsys):
    with pytest.raises(SystemExit) as stop:  # every command: one line, exit code 2
        main(["audit", *argv])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "error" in err
    assert "Traceback" not in err
