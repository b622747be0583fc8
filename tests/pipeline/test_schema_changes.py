"""``schema_changes: evolve | lenient | ignore | fail``: a rename, a drop, a re-added name and
a type narrowing, told by DDL (``ddl_*`` tables) or by the images alone (``img_*``), one
stream, one run, each table under its own mode (``tables:``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import accounted, encode_all, run, small_jvm_args, write_messages

pytestmark = pytest.mark.spark

MODES = ("evolve", "lenient", "ignore", "fail")
INT64, INT32, TEXT = LogicalType("int64"), LogicalType("int32"), LogicalType("string")


def _event(table: str, pos: int, row: dict[str, Any], op: str = "insert") -> ChangeEvent:
    types = {"id": INT64, "qty": INT32 if isinstance(row.get("qty"), int) else TEXT}
    columns = {name: Column(types.get(name, TEXT), None) for name in row}
    return ChangeEvent(
        op=Op(op), format="canonical-json", database="shop", table=table, key=("id",),
        after=row, columns=columns, ts_ms=1_700_000_000_000 + pos, position=Position((pos,)),
    )  # fmt: skip


def _ddl(table: str, pos: int, statement: str) -> ChangeEvent:
    return ChangeEvent(
        op=Op.DDL, format="canonical-json", database="shop", table=table,
        ddl=statement.format(table=f"shop.{table}"), ts_ms=1_700_000_000_000 + pos,
        position=Position((pos,)),
    )  # fmt: skip


def _stream(table: str, with_ddl: bool) -> Iterator[list[ChangeEvent]]:
    """Three batches: the rows; a rename, a drop and a narrowing; the old name re-added."""
    ddl = _ddl if with_ddl else (lambda *_: None)
    yield [
        _event(table, 1, {"id": 1, "name": "a", "qty": 1, "note": "n1"}),
        _event(table, 2, {"id": 2, "name": "b", "qty": 2, "note": "n2"}),
    ]
    yield [
        _event(table, 3, {"id": 1, "name": "a1", "qty": 1, "note": "n1"}, "update"),
        ddl(table, 4, "ALTER TABLE {table} RENAME COLUMN name TO title"),
        _event(table, 5, {"id": 3, "title": "c", "qty": 3, "note": "n3"}),
        ddl(table, 6, "ALTER TABLE {table} DROP COLUMN note"),
        _event(table, 7, {"id": 4, "title": "d", "qty": 4}),
        ddl(table, 8, "ALTER TABLE {table} MODIFY qty varchar(10)"),
        _event(table, 9, {"id": 5, "title": "e", "qty": "x5"}),
    ]
    yield [
        ddl(table, 10, "ALTER TABLE {table} ADD COLUMN name varchar(20)"),
        _event(table, 11, {"id": 6, "title": "f", "qty": "6", "name": "again"}),
    ]


def _write(src: Path) -> None:
    batches: list[list[ChangeEvent]] = [[], [], []]
    for mode in MODES:
        for with_ddl in (True, False):
            table = f"{'ddl' if with_ddl else 'img'}_{mode}"
            for i, events in enumerate(_stream(table, with_ddl)):
                batches[i] += [e for e in events if e is not None]
    for i, events in enumerate(batches, start=1):
        path = write_messages(src, f"{i:03d}.jsonl", encode_all("canonical-json", events))
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # read in this order


TABLES = {f"shop.*_{mode}": {"schema_changes": mode} for mode in MODES}


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("schema_changes")
    _write(base / "in")
    run(spark, base / "in", base / "out", tables=TABLES, max_files_per_trigger=1, freshness=0)
    return base / "out"


def _table(spark: Any, lake: Path, name: str) -> tuple[dict[str, str], dict[int, dict[str, Any]]]:
    frame = spark.read.format("delta").load(str(lake / "shop" / name))
    schema = {
        f.name: f.dataType.simpleString()
        for f in frame.schema.fields
        if not f.name.startswith("_cdc_")
    }
    rows = {r["id"]: {k: v for k, v in r.asDict().items() if k in schema} for r in frame.collect()}
    return schema, rows


def test_evolve_renames_drops_and_rewrites(spark: Any, lake: Path) -> None:
    schema, rows = _table(spark, lake, "ddl_evolve")
    assert schema == {"id": "bigint", "title": "string", "qty": "string", "name": "string"}
    # the update from before the rename lands in the renamed column; qty's values were
    # rewritten as text; the re-added `name` is a new column
    assert {i: (r["title"], r["qty"], r["name"]) for i, r in rows.items()} == {
        1: ("a1", "1", None), 2: ("b", "2", None), 3: ("c", "3", None), 4: ("d", "4", None),
        5: ("e", "x5", None), 6: ("f", "6", "again"),
    }  # fmt: skip
    history = spark.sql(f"DESCRIBE HISTORY delta.`{lake}/shop/ddl_evolve`").collect()
    operations = {r["operation"] for r in history}
    assert {"RENAME COLUMN", "DROP COLUMNS"} <= operations, operations
    # without DDL a rename is a new column (the images cannot tell it from a drop + add)
    schema, rows = _table(spark, lake, "img_evolve")
    assert schema == {
        "id": "bigint", "name": "string", "qty": "string", "note": "string", "title": "string",
    }  # fmt: skip
    assert rows[1]["name"] == "a1" and rows[3]["title"] == "c" and rows[5]["qty"] == "x5"


def test_lenient_keeps_columns_and_dead_letters_a_narrowing(spark: Any, lake: Path) -> None:
    for name in ("ddl_lenient", "img_lenient"):
        schema, rows = _table(spark, lake, name)
        assert schema == {"id": "bigint", "name": "string", "qty": "int", "note": "string"}
        assert sorted(rows) == [1, 2]  # batches 2 and 3 narrow qty: dead letters
        assert rows[1]["name"] == "a"


def test_ignore_keeps_the_first_schema(spark: Any, lake: Path) -> None:
    for name in ("ddl_ignore", "img_ignore"):
        schema, rows = _table(spark, lake, name)
        assert schema == {"id": "bigint", "name": "string", "qty": "int", "note": "string"}
        # title is never written; "x5" cannot be an INT (a bad cast: dead letter); "6" can
        assert {i: (r["name"], r["qty"]) for i, r in rows.items()} == {
            1: ("a1", 1), 2: ("b", 2), 3: (None, 3), 4: (None, 4), 6: ("again", 6),
        }  # fmt: skip


def test_fail_stops_that_table_only(spark: Any, lake: Path) -> None:
    dead = spark.read.format("delta").load(f"{lake}/_anycdc/dead_letter")
    for name in ("ddl_fail", "img_fail"):
        schema, rows = _table(spark, lake, name)
        assert schema == {"id": "bigint", "name": "string", "qty": "int", "note": "string"}
        assert sorted(rows) == [1, 2]
        errors = {r["error"] for r in dead.filter(f"`table` = 'shop.{name}'").collect()}
        assert errors and all("(schema_changes: fail)" in e for e in errors), errors
    # every event is somewhere: applied, or dead-lettered with its table
    report = accounted(spark, lake, pending=0, unaccounted=0)
    per_table = {t["table"]: t for t in report["tables"]}
    assert per_table["shop.ddl_fail"]["dead_lettered"] == 9  # batches 2-3: 5 rows, 4 DDL
    assert per_table["shop.ddl_evolve"]["dead_lettered"] == 0


@pytest.mark.faults
@pytest.mark.slow  # two runs, each in a JVM of its own: make test-slow
def test_a_kill_in_the_middle_of_a_rename(spark: Any, lake: Path, tmp_path: Path) -> None:
    """kill -9 right after the rename's ALTER, before the batch's rows: the restart finds
    the column renamed already and ends with the table an unbroken run gives."""
    from anycdc.faults import CRASH_ENV

    src, out = tmp_path / "in", tmp_path / "out"
    batches = list(_stream("ddl_evolve", with_ddl=True))
    for i, events in enumerate(batches, start=1):
        path = write_messages(
            src, f"{i:03d}.jsonl", encode_all("canonical-json", [e for e in events if e])
        )
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    command = [
        sys.executable, "-m", "anycdc", "run", "--source-dir", str(src), "--target", str(out),
        "--schema-changes", "evolve", "--freshness", "0", "--max-files-per-trigger", "1",
        "--master", "local[1]", *small_jvm_args(),
    ]  # fmt: skip
    killed = subprocess.run(
        command, env={**os.environ, CRASH_ENV: "renamed"}, start_new_session=True,
        capture_output=True, timeout=600,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    finished = subprocess.run(command, capture_output=True, timeout=600)
    assert finished.returncode == 0, finished.stderr.decode()[-2000:]
    assert _table(spark, out, "ddl_evolve") == _table(spark, lake, "ddl_evolve")
