"""Inserts above a table's keys are appended, not rewritten (issue: many tables, cheaper applies).

Through real Spark and Delta, read back with delta-rs: a new table is created by its first
write (one commit: schema, properties, rows), or, when it gets no write (its rows
dead-lettered), empty with its schema and properties; a table whose pending changes are
inserts of keys above its own gets a Delta WRITE (an append) and the same rows a rewrite
would give; an update, a delete or a key at or under the table's largest takes the apply
engine's rewrite (the batched engine's, or a MERGE);
a commit the run did not make (another writer) makes the run read the table's keys again
before it appends, so a key that writer added is never written twice.
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.spark.maintenance import LAST_VACUUM_PROPERTY
from anycdc.spark.table_schema import META_COLUMNS
from tests.pipeline.helpers import encode_all, ev, write_messages, writes

pytestmark = pytest.mark.spark
META = [name for name, _ in META_COLUMNS]


def _row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i, "price": Decimal(f"{i}.00")}


def _write(src: Path, name: str, events: list[Any]) -> None:
    write_messages(src, name, encode_all("canonical-json", events))
    for second, path in enumerate(sorted(src.iterdir())):  # oldest first: by name
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))


def _table(table: Path) -> list[tuple[Any, ...]]:
    from deltalake import DeltaTable

    data = DeltaTable(str(table)).to_pyarrow_table(columns=["id", "name", "qty"]).to_pylist()
    return sorted((r["id"], r["name"], r["qty"]) for r in data)


def test_inserts_above_the_tables_keys_are_appended(spark: Any, tmp_path: Path) -> None:
    from anycdc.spark.pipeline import Pipeline

    src, out = tmp_path / "in", tmp_path / "out"
    table = out / "shop" / "orders"
    _write(src, "001.jsonl", [ev("insert", p, _row(p, "a")) for p in (1, 2, 3)])
    _write(src, "002.jsonl", [ev("insert", p, _row(p, "b")) for p in (4, 5, 6)])
    _write(src, "003.jsonl", [ev("insert", 7, _row(7, "c")), ev("update", 8, _row(2, "u"))])
    _write(src, "004.jsonl", [ev("insert", 9, _row(9, "d")), ev("delete", 10, _row(9, "d"))])
    _write(src, "005.jsonl", [ev("insert", 11, _row(10, "e"))])
    config = PipelineConfig.from_mapping(
        {"source_dir": str(src), "target": str(out), "max_files_per_trigger": 1, "freshness": 0}
    )
    pipeline = Pipeline(spark, config)
    batches = list(pipeline.run())
    assert [[t.appended for t in b.tables] for b in batches] == [
        [True], [True], [False], [False], [True],
    ]  # fmt: skip
    # created by its first write, appended, rewritten (an update), rewritten (a delete), appended
    assert writes(table) == ["create", "append", "rewrite", "rewrite", "append"]
    assert _table(table) == [
        (1, "a", 1), (2, "u", 2), (3, "a", 3), (4, "b", 4), (5, "b", 5), (6, "b", 6),
        (7, "c", 7), (10, "e", 10),
    ]  # fmt: skip

    # another writer adds key 20 behind the run's back (as a replay or a user might)
    spark.sql(
        f"INSERT INTO delta.`{table}` (id, name, qty, price, _cdc_position) "
        "VALUES (20, 'other', 20, 20.00, '0')"
    )
    _write(src, "006.jsonl", [ev("insert", 12, _row(15, "f")), ev("insert", 13, _row(20, "g"))])
    again = pipeline.run()[len(batches) :]  # run() returns the pipeline's every batch
    # the run saw a commit it did not make, read the keys again (20), and rewrote
    assert [[t.appended for t in b.tables] for b in again] == [[False]]
    assert writes(table)[-2:] == ["append", "rewrite"]
    assert [r for r in _table(table) if r[0] >= 15] == [(15, "f", 15), (20, "g", 20)]

    # a new run reads the table's keys once, then appends what lies above them
    _write(src, "007.jsonl", [ev("insert", 14, _row(21, "h"))])
    fresh = Pipeline(spark, config).run()
    assert [[t.appended for t in b.tables] for b in fresh] == [[True]]
    assert writes(table)[-1] == "append"
    assert _table(table)[-1] == (21, "h", 21)


def test_a_new_table_without_rows_to_write_exists_with_its_properties(
    spark: Any, tmp_path: Path
) -> None:
    from deltalake import DeltaTable

    from anycdc.spark.pipeline import Pipeline

    src, out = tmp_path / "in", tmp_path / "out"
    # one table's first changes cancel out (insert then delete), another's is one row, a
    # third's only row cannot be written (dead-lettered: a value its column cannot hold)
    bad = {"id": 7, "name": "z", "qty": "not-a-number", "price": Decimal("1.00")}
    _write(src, "001.jsonl", [
        ev("insert", 1, _row(1, "a")), ev("delete", 2, _row(1, "a")),
        ev("insert", 3, _row(5, "x"), table="items"),
        ev("insert", 4, bad, table="lines"),
    ])  # fmt: skip
    config = PipelineConfig.from_mapping({
        "source_dir": str(src), "target": str(out), "freshness": 0,
        "table_properties": {"delta.appendOnly": "false", "owner.team": "data"},
    })  # fmt: skip
    Pipeline(spark, config).run()
    for name, operations, content in (
        ("orders", ["create"], []),  # its first write, of no row
        ("items", ["create"], [(5, "x", 5)]),
        ("lines", ["create empty"], []),  # no write at all: created as the run knows it
    ):
        table = out / "shop" / name
        assert writes(table) == operations, name
        assert _table(table) == content, name
        properties = DeltaTable(str(table)).metadata().configuration
        assert properties["owner.team"] == "data" and LAST_VACUUM_PROPERTY in properties
        columns = [f.name for f in DeltaTable(str(table)).schema().fields]
        assert columns == ["id", "name", "qty", "price", *META], name
