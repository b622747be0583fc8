"""``anycdc detect``: per file and in total, as a table or as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anycdc.cli import main

CASES = Path(__file__).resolve().parents[1] / "cases"
FILES = [
    str(CASES / "maxwell-json" / "corpus_maxwell_tests_user.jsonl"),
    str(CASES / "aws-dms-json" / "docs_kafka_data.json"),
]


def test_json_gives_each_file_then_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--json", *FILES]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["file"] for line in lines] == [*FILES, None]
    assert lines[0]["formats"] == {"maxwell-json": 2} and lines[1]["formats"] == {"aws-dms-json": 1}
    assert lines[2] == {
        "file": None,
        "messages": 3,
        "formats": {"maxwell-json": 2, "aws-dms-json": 1},
        "unknown": 0,
    }


def test_the_table_has_a_total_row_for_several_files_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["detect", *FILES]) == 0
    assert "(total)" in capsys.readouterr().out
    assert main(["detect", FILES[0]]) == 0
    assert "(total)" not in capsys.readouterr().out
