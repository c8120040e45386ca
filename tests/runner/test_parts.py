"""A run's folder: verified parts, resuming, and a changed configuration."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesldp.runner import get_experiment, run
from bayesldp.runner._parts import prepare
from tests.helpers import FEW_METHODS, result_values, tiny_config


def test_resume_redoes_missing_and_damaged_parts_only(tmp_path):
    experiment = get_experiment("full_domain_mse")
    config = tiny_config("full_domain_mse", methods=FEW_METHODS, reps=3)
    first = run(experiment, config, tmp_path)
    assert (first.tasks, first.tasks_run) == (3, 3)
    parts = sorted((tmp_path / "parts").glob("*.csv"))
    parts[0].unlink()  # stopped before this part was written
    data = parts[1].read_bytes()
    parts[1].write_bytes(data[: len(data) // 2])  # truncated
    (tmp_path / "parts" / f"{parts[2].stem}.json").unlink()  # its record was never written
    again = run(experiment, config, tmp_path)
    assert again.tasks_run == 3
    pd.testing.assert_frame_equal(result_values(first.results), result_values(again.results))
    assert run(experiment, config, tmp_path).tasks_run == 0
    parts[1].write_bytes(data.replace(b",", b";", 1))  # same size, other content
    assert [t.key for t in prepare(experiment, config, tmp_path)] == [parts[1].stem]


def test_a_changed_configuration_is_refused_unless_restarted(tmp_path):
    experiment = get_experiment("mae")
    run(experiment, tiny_config("mae", methods=("base",)), tmp_path)
    other = tiny_config("mae", methods=("base", "norm-sub"))
    with pytest.raises(ValueError, match="another configuration"):
        run(experiment, other, tmp_path)
    result = run(experiment, other, tmp_path, restart=True)
    assert set(result.results["method"]) == {"base", "norm-sub"}
    # a grown grid keeps its parts
    grown = run(experiment, tiny_config("mae", methods=("base", "norm-sub"), reps=2), tmp_path)
    assert (grown.tasks, grown.tasks_run) == (2, 1)


def test_an_unwritable_folder_is_a_value_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match="out: cannot write to"):
        prepare(get_experiment("mae"), tiny_config("mae"), blocker / "out")
