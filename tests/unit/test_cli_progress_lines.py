"""Long work says how it goes: a progress line every few seconds (decode, convert), each
step (simulate); ``--quiet`` drops the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from anycdc.cli import main
from anycdc.cli.base import PROGRESS_CHECK_EVERY, ProgressLine


def test_a_line_every_check_once_due(capsys: pytest.CaptureFixture[str]) -> None:
    line = ProgressLine("convert", True, every_s=0)
    for done in range(1, 3 * PROGRESS_CHECK_EVERY + 1):
        line.step(done, lambda: "so far")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(x.startswith("convert: so far, ") for x in lines)
    ProgressLine("convert", False, every_s=0).step(PROGRESS_CHECK_EVERY, lambda: "never")
    assert capsys.readouterr().err == ""


def test_simulate_and_convert_say_their_steps_or_keep_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sim"
    argv = ["simulate", "-f", "canal-json", "--events", "20", "--out", str(out)]
    assert main([*argv, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "simulate: simulating 20 changes" in err and "simulate: written" in err
    assert main([*argv, "--quiet"]) == 0
    assert "messages (" not in capsys.readouterr().err  # no summary line
    target = tmp_path / "out.jsonl"
    convert = ["convert", "--to", "maxwell-json", str(out / "messages"), str(target)]
    assert main([*convert, "--quiet"]) == 0
    assert "messages read" not in capsys.readouterr().err
    assert main([*convert, "--force"]) == 0
    assert "messages read" in capsys.readouterr().err
