"""``anycdc dead-letters`` on a target the pipeline wrote: a bad cast (a table's dead letter)
and messages that did not decode (no table), over two batches."""

from __future__ import annotations

import argparse
import base64
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import run_guarded
from anycdc.cli.dead_letters import COMMAND
from tests.pipeline.helpers import encode_all, ev, run, write_messages

pytestmark = pytest.mark.spark

GARBAGE = b"\x00\xff garbage"


@pytest.fixture(scope="module")
def target(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Batch 0: ``001.jsonl`` lines 1 (not JSON), 3 (not UTF-8), 4 (a bad cast of
    shop.orders); line 2 applies. Batch 1: ``002.jsonl`` line 1, of no known format."""
    root = tmp_path_factory.mktemp("dead_letters")
    src, out = root / "in", root / "out"
    good = ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")})
    bad = ev("insert", 2, {"id": 2, "name": "b", "qty": "not-a-number", "price": Decimal("1")})
    write_messages(src, "001.jsonl", [
        b"{not json", *encode_all("canonical-json", [good]), GARBAGE,
        *encode_all("canonical-json", [bad]),
    ])  # fmt: skip
    run(spark, src, out, max_files_per_trigger=1)
    write_messages(src, "002.jsonl", [b"[1, 2]"])
    run(spark, src, out, max_files_per_trigger=1)
    return out


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="anycdc")
    COMMAND.install(parser.add_subparsers())
    args = parser.parse_args(["dead-letters", *argv])
    code = run_guarded(args.handler, args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_lists_every_dead_letter_newest_first_with_its_coordinates_and_batch(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "--target", str(target), "--json")
    assert code == 0, err
    letters = [json.loads(line) for line in out.splitlines()]
    src = target.parent / "in"
    assert [(d["coordinates"], d["batch"], d["table"]) for d in letters] == [
        (f"{src}/002.jsonl:1", 1, None),
        (f"{src}/001.jsonl:4", 0, "shop.orders"),
        (f"{src}/001.jsonl:3", 0, None),
        (f"{src}/001.jsonl:1", 0, None),
    ]
    newest, cast, garbage, not_json = letters
    assert "format not recognised" in newest["error"] and newest["raw_text"] == "[1, 2]"
    assert cast["error"] == "shop.orders: qty: cannot cast not-a-number to INT"
    assert cast["format"] == "canonical-json" and '"qty":"not-a-number"' in cast["raw_text"]
    # the whole message, byte for byte; a text prefix only where it is UTF-8
    assert base64.b64decode(garbage["raw"]) == GARBAGE
    assert garbage["raw_text"] == "hex:" + GARBAGE.hex()
    assert "invalid JSON" in not_json["error"] and not_json["raw_text"] == "{not json"
    assert [d["failed_at"] for d in letters] == sorted(
        (d["failed_at"] for d in letters), reverse=True
    )


def test_table_view_table_filter_and_limit(
    target: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # a row on one line
    code, out, err = _cli(capsys, "--target", str(target), "--table", "shop.orders")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if "001.jsonl:4" in line]
    assert "shop.orders: qty: cannot cast not-a-number to INT" in line
    assert "canonical-json" in line and '{"op":"insert"' in line
    assert "002.jsonl" not in out and "not recognised" not in out
    assert out.splitlines()[-1] == "1 of 1 dead letters of shop.orders, newest first"
    # a long message is cut in the table view
    cell = line.split("│")[-2].strip()
    assert cell.endswith("…") and len(cell) <= 120

    code, out, err = _cli(capsys, "--target", str(target), "--limit", "1")
    assert code == 0 and "002.jsonl:1" in out and "001.jsonl" not in out, out
    assert "1 of 4 dead letters, newest first; --limit 4 (or 0) shows all" in out

    code, out, err = _cli(capsys, "--target", str(target), "--table", "shop.nope")
    assert code == 0 and out.startswith("no dead letters of shop.nope"), out
    assert "shop.orders; 3 of no table" in out


def test_a_folder_that_is_no_target_is_one_line_and_none_is_no_error(
    target: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "--target", str(target.parent / "in"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("anycdc: ") and "is not an anycdc target" in err
    code, out, err = _cli(capsys, "--target", str(tmp_path / "missing"))
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err, err
    (tmp_path / "clean" / "_anycdc" / "batches").mkdir(parents=True)  # a run, no bad message
    code, out, err = _cli(capsys, "--target", str(tmp_path / "clean"))
    assert (code, out, err) == (0, f"no dead letters in {tmp_path / 'clean'}\n", "")
