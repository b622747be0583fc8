"""End-to-end semantics of ``anycdc run`` through real Spark and Delta (one test per rule)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import Column
from anycdc.values import LogicalType
from tests.pipeline.helpers import (
    ORDER_COLUMNS,
    accounted,
    encode_all,
    ev,
    rows,
    run,
    system,
    write_messages,
)

pytestmark = pytest.mark.spark


def _canonical(events: list) -> list[bytes]:
    return encode_all("canonical-json", events)


def test_greatest_position_wins_within_and_across_batches(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.10")}),
        ev("update", 5, {"id": 1, "name": "newest", "qty": 5, "price": Decimal("5.50")}),
        ev("update", 3, {"id": 1, "name": "late-older", "qty": 3, "price": Decimal("3.30")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.20")}),
        ev("delete", 6, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.20")}),
    ]))  # fmt: skip
    run(spark, src, out)
    # a later batch replays older events: none may overwrite newer state or resurrect id 2
    write_messages(src, "002.jsonl", _canonical([
        ev("update", 4, {"id": 1, "name": "replayed", "qty": 4, "price": Decimal("4.40")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.20")}),
        ev("update", 5, {"id": 2, "name": "late-update-after-delete", "qty": 9, "price": Decimal("9.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out) == [{"id": 1, "name": "newest", "qty": 5, "price": Decimal("5.50")}]


def test_partial_update_fills_missing_columns_from_current_row(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.10")}),
    ]))  # fmt: skip
    run(spark, src, out)
    write_messages(src, "002.jsonl", _canonical([
        ev("update", 2, {"id": 1, "qty": 7}, partial=("after",)),
        ev("update", 3, {"id": 1, "name": None}, partial=("after",)),
        ev("insert", 4, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.00")}),
        ev("update", 5, {"id": 2, "price": Decimal("2.50")}, partial=("after",)),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out) == [
        {"id": 1, "name": None, "qty": 7, "price": Decimal("1.10")},
        {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.50")},
    ]


def test_primary_key_change_removes_old_key(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
        ev("update", 2, {"id": 10, "name": "a", "qty": 1, "price": Decimal("1.00")},
           before={"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    assert [r["id"] for r in rows(spark, out)] == [10]


def test_snapshot_merges_with_overlapping_incremental_changes(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("update", 20, {"id": 1, "name": "incremental", "qty": 2, "price": Decimal("2.00")}),
        ev("delete", 21, {"id": 3, "name": "c", "qty": 3, "price": Decimal("3.00")}),
    ]))  # fmt: skip
    write_messages(src, "002.jsonl", _canonical([
        ev("snapshot", 10, {"id": 1, "name": "snapshot-old", "qty": 1, "price": Decimal("1.00")}),
        ev("snapshot", 10, {"id": 2, "name": "snapshot", "qty": 1, "price": Decimal("1.00")}),
        ev("snapshot", 10, {"id": 3, "name": "deleted-later", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out, max_files_per_trigger=1)
    assert [(r["id"], r["name"]) for r in rows(spark, out)] == [(1, "incremental"), (2, "snapshot")]


def test_truncate_respects_position(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 1, "price": Decimal("1.00")}),
        ev("truncate", 3, None, key=None),
        ev("insert", 4, {"id": 3, "name": "after-truncate", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    write_messages(src, "002.jsonl", _canonical([
        ev("update", 2, {"id": 2, "name": "late", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    assert [r["id"] for r in rows(spark, out)] == [3]


def test_new_columns_and_widening_evolve_the_schema(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    wider = {**ORDER_COLUMNS, "qty": Column(LogicalType("int64"), "bigint"),
             "note": Column(LogicalType("string"), "text")}  # fmt: skip
    write_messages(src, "002.jsonl", _canonical([
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2**40, "price": Decimal("2.00"), "note": "hi"},
           columns=wider),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out) == [
        {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00"), "note": None},
        {"id": 2, "name": "b", "qty": 2**40, "price": Decimal("2.00"), "note": "hi"},
    ]
    schema = {f.name: f.dataType.simpleString() for f in
              spark.read.format("delta").load(str(out / "shop" / "orders")).schema.fields}  # fmt: skip
    assert schema["qty"] == "bigint" and schema["price"] == "decimal(12,2)"


def test_table_without_primary_key_uses_full_row_identity(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}, key=None),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 1, "price": Decimal("1.00")}, key=None),
        ev("update", 3, {"id": 2, "name": "b2", "qty": 1, "price": Decimal("1.00")},
           before={"id": 2, "name": "b", "qty": 1, "price": Decimal("1.00")}, key=None),
        ev("delete", 4, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}, key=None),
    ]))  # fmt: skip
    run(spark, src, out)
    assert [(r["id"], r["name"]) for r in rows(spark, out)] == [(2, "b2")]


def test_bad_messages_go_to_dead_letters_and_the_stream_goes_on(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    good = _canonical([ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")})])
    bad_cast = _canonical(
        [ev("insert", 2, {"id": 2, "name": "b", "qty": "not-a-number", "price": Decimal("1")})]
    )
    write_messages(src, "001.jsonl", [b"{not json", *good, b"\x00\xff garbage", *bad_cast])
    run(spark, src, out)
    assert [r["id"] for r in rows(spark, out)] == [1]
    dead = sorted(system(spark, out, "dead_letter"), key=lambda r: r["offset"])
    assert [r["offset"] for r in dead] == [1, 3, 4]
    assert all(r["source"].endswith("001.jsonl") and r["raw"] for r in dead)
    assert "qty: cannot cast" in dead[2]["error"]
    # an apply's row actions do not carry the message: it is read back for its dead letter
    assert [bytes(r["raw"]) for r in dead] == [b"{not json", b"\x00\xff garbage", *bad_cast]
    # the bad cast's dead letter is its changelog row's outcome; the others never got there
    assert accounted(spark, out, applied=1, dead_lettered=1)["decode_dead_letters"] == 2


def test_replayed_batch_changes_nothing_twice(spark: Any, tmp_path: Path) -> None:
    """Simulate a crash after the Delta commits but before the checkpoint commit."""
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
        ev("delete", 2, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
        ev("insert", 3, {"id": 2, "name": "b", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    before = rows(spark, out)
    changelog = len(system(spark, out, "changelog"))
    commits = out / "_anycdc" / "checkpoint" / "commits"
    for path in commits.iterdir():
        path.unlink()  # the batch was not marked done: Spark runs it again
    run(spark, src, out)
    assert rows(spark, out) == before
    assert len(system(spark, out, "changelog")) == changelog == 3


def test_replay_dead_letters_applies_messages_after_an_option_change(
    spark: Any, tmp_path: Path
) -> None:
    """Messages dead-lettered under a wrong format setting apply once it is fixed."""
    from anycdc.config import PipelineConfig
    from anycdc.spark.pipeline import replay_dead_letters

    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.00")}),
    ]))  # fmt: skip
    run(spark, src, out, format="dataworks-json")  # wrong: every message is dead-lettered
    assert len(system(spark, out, "dead_letter")) == 2
    config = PipelineConfig.from_mapping({"source_dir": str(src), "target": str(out)})
    assert replay_dead_letters(spark, config) == (2, 0)
    assert [r["id"] for r in rows(spark, out)] == [1, 2]
    assert system(spark, out, "dead_letter") == []
    accounted(spark, out, applied=2, dead_lettered=0)  # the replay's rows, applied on ingest


def test_one_batch_and_many_batches_give_identical_tables(spark: Any, tmp_path: Path) -> None:
    from anycdc.simulate import Workload

    workload = Workload(seed=7, rows=5, events=60)
    messages = _canonical(list(workload.events("canonical-json")))
    src = tmp_path / "in"
    for index in range(0, len(messages), 15):  # 6 files: one micro-batch each below
        write_messages(src, f"{index:05d}.jsonl", messages[index : index + 15])
    one, many = tmp_path / "one", tmp_path / "many"
    run(spark, src, one)
    history = run(spark, src, many, max_files_per_trigger=1, freshness=0)
    assert len(history) > 1
    for table in workload.tables:
        assert rows(spark, one, table.name) == rows(spark, many, table.name)
        assert len(rows(spark, one, table.name)) == len(workload.truth[table.qualified])


def _mongo(op: str, record: str, value: str, where: str | None, n: int) -> bytes:
    import json

    return json.dumps(
        {
            "id": n, "op": op, "dbType": "MongoDB", "db": "app", "coll": "users",
            "value": value, "where": where, "recordType": record, "extra": record,
            "es": 1684315111000 + n, "ts": 1684315111100 + n, "clusterTime": f"1684344064:{n}",
        }
    ).encode()  # fmt: skip


def test_mongodb_set_and_unset_patch_the_stored_document(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    oid = 'ObjectId("64650cf67dc36a464e76e583")'
    other = 'ObjectId("64650cf67dc36a464e76e584")'
    write_messages(src, "001.jsonl", [
        _mongo("INSERT", "insert", f'{{"_id": {oid}, "c1": "baz", "n": 1, "tags": ["a"]}}', None, 1),
        _mongo("INSERT", "insert", f'{{"_id": {other}, "c1": "x", "n": 2}}', None, 2),
        _mongo("UPDATE", "update", '{"$set": {"c1": "aaa", "n": 5}}', f'{{"_id": {oid}}}', 3),
        _mongo("UPDATE", "update", '{"$unset": {"c1": true}, "$set": {"column1": "new"}}',
               f'{{"_id": {oid}}}', 4),
        _mongo("UPDATE", "update", '{"$inc": {"n": 1}}', f'{{"_id": {other}}}', 5),
        _mongo("UPDATE", "replace", f'{{"_id": {other}, "c1": "replaced"}}', f'{{"_id": {other}}}', 6),
    ])  # fmt: skip
    run(spark, src, out)
    got = {r["_id"]: r for r in rows(spark, out, "users", "app")}
    assert got["64650cf67dc36a464e76e583"]["c1"] is None
    assert got["64650cf67dc36a464e76e583"]["n"] == 5
    assert got["64650cf67dc36a464e76e583"]["column1"] == "new"
    assert got["64650cf67dc36a464e76e583"]["tags"] == '["a"]'
    assert got["64650cf67dc36a464e76e584"]["c1"] == "replaced"
    assert got["64650cf67dc36a464e76e584"]["n"] is None  # a replace is the whole new document
    dead = system(spark, out, "dead_letter")
    assert len(dead) == 1 and "$inc" in dead[0]["error"]


def test_ddl_adds_columns_and_a_dropped_column_keeps_its_values(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    without_qty = {k: v for k, v in ORDER_COLUMNS.items() if k != "qty"}
    write_messages(src, "002.jsonl", _canonical([
        ev("ddl", 2, None, key=None, ddl="ALTER TABLE `shop`.`orders` ADD COLUMN `note` varchar(20) NULL"),
        ev("ddl", 3, None, key=None, ddl="ALTER TABLE shop.orders DROP COLUMN qty"),
        ev("update", 4, {"id": 1, "name": "a2", "price": Decimal("1.50")}, columns=without_qty),
        ev("insert", 5, {"id": 2, "name": "b", "price": Decimal("2.00")}, columns=without_qty),
    ]))  # fmt: skip
    run(spark, src, out)
    frame = spark.read.format("delta").load(str(out / "shop" / "orders"))
    assert dict(frame.dtypes)["note"] == "string"
    assert rows(spark, out) == [
        {"id": 1, "name": "a2", "qty": 1, "price": Decimal("1.50"), "note": None},
        {"id": 2, "name": "b", "qty": None, "price": Decimal("2.00"), "note": None},
    ]


def test_an_incompatible_change_dead_letters_that_table_only(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}),
    ]))  # fmt: skip
    run(spark, src, out)
    binary_price = {**ORDER_COLUMNS, "price": Column(LogicalType("binary"), "blob")}
    write_messages(src, "002.jsonl", _canonical([
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": b"\x01"}, columns=binary_price),
        ev("insert", 3, {"id": 7, "name": "other", "qty": 7, "price": Decimal("7.00")},
           table="items"),
    ]))  # fmt: skip
    run(spark, src, out)
    [dead] = system(spark, out, "dead_letter")
    assert "shop.orders: incompatible schema change: column price: cannot change" in dead["error"]
    assert dead["format"] == "canonical-json" and dead["offset"] == 1  # line 1 of 002.jsonl
    assert dead["source"].endswith("002.jsonl")
    assert dead["table"] == "shop.orders"  # ties the dead letter to its changelog row
    accounted(spark, out, applied=2, dead_lettered=1)
    assert rows(spark, out, "items") == [
        {"id": 7, "name": "other", "qty": 7, "price": Decimal("7.00")}
    ]
    # a NULL of no known type says nothing of the column: applied, not a conflict
    write_messages(src, "003.jsonl", _canonical([
        ev("update", 4, {"id": 1, "name": "a2", "qty": None, "price": Decimal("1.00")},
           columns={**ORDER_COLUMNS, "qty": Column(LogicalType("unknown"), "null")}),
    ]))  # fmt: skip
    run(spark, src, out)
    assert len(system(spark, out, "dead_letter")) == 1
    assert rows(spark, out) == [{"id": 1, "name": "a2", "qty": None, "price": Decimal("1.00")}]
