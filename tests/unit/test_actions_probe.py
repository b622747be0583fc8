"""python -m anycdc.bench.actions_probe: a folder that is not a run's target is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from anycdc.bench.actions_probe import main


def test_a_folder_without_a_changelog_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--target", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert (
        out == f"actions_probe: --target {tmp_path}: no changelog at {tmp_path}/_anycdc/changelog\n"
    )


def test_rounds_below_one_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "_anycdc" / "changelog" / "_delta_log").mkdir(parents=True)
    assert main(["--target", str(tmp_path), "--rounds", "0"]) == 2
    assert capsys.readouterr().out == "actions_probe: --rounds: at least 1\n"
