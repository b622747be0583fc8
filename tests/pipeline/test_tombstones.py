"""Delete tombstones through real Spark and Delta: one store for every table, written once
per batch after the MERGEs, honoured until ``tombstone_retention_hours``, then purged."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import encode_all, ev, rows, run, system, write_messages

pytestmark = pytest.mark.spark


def _row(key: int, name: str) -> dict[str, Any]:
    return {"id": key, "name": name, "qty": 1, "price": Decimal("1.00")}


def _delta_rs(path: Path) -> Any:
    from deltalake import DeltaTable

    return DeltaTable(str(path))


def _writes(spark: Any, path: Path) -> list[str]:
    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").orderBy("version").collect()
    return [r["operation"] for r in history]


def test_one_tombstone_write_per_batch_for_all_tables(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1, "a")), ev("insert", 2, _row(2, "b")),
        ev("insert", 1, _row(7, "x"), table="invoices"),
        ev("delete", 3, _row(1, "a")),
        ev("delete", 4, _row(7, "x"), table="invoices"),
        ev("update", 5, _row(2, "b2")),
    ]))  # fmt: skip
    run(spark, src, out)
    stones = sorted(
        (r["table"], r["_key"], r["position"]) for r in system(spark, out, "tombstones")
    )
    assert [(t, k) for t, k, _ in stones] == [("shop/invoices", '["7"]'), ("shop/orders", '["1"]')]
    assert stones[0][2] > stones[1][2]  # positions kept (4 after 3), comparable as text
    # both tables' deletes: ONE append of one file, after the tables' writes
    assert _writes(spark, out / "_anycdc" / "tombstones") == ["WRITE"]
    store = _delta_rs(out / "_anycdc" / "tombstones")
    assert store.metadata().partition_columns == []  # no folder per table
    assert len(store.file_uris()) == 1
    assert [r["id"] for r in rows(spark, out)] == [2]
    assert rows(spark, out, table="invoices") == []


def test_a_store_partitioned_by_table_keeps_its_layout(spark: Any, tmp_path: Path) -> None:
    """A target whose tombstones an earlier anycdc partitioned by ``table``: its tombstones
    still guard, and new ones go into it by its own partitioning."""
    src, out = tmp_path / "in", tmp_path / "out"
    store_path = str(out / "_anycdc" / "tombstones")
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1, "a")), ev("delete", 5, _row(1, "a")),
    ]))  # fmt: skip
    run(spark, src, out)
    # the layout an earlier anycdc wrote: the same rows, a partition per table
    old = spark.read.format("delta").load(store_path).collect()
    spark.createDataFrame(old).write.format("delta").mode("overwrite").option(
        "overwriteSchema", "true"
    ).partitionBy("table").save(store_path)
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("update", 3, _row(1, "late")),  # older than the delete: stopped by the old store
        ev("insert", 1, _row(7, "x"), table="invoices"),
        ev("delete", 4, _row(7, "x"), table="invoices"),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out) == []
    assert rows(spark, out, table="invoices") == []
    assert _delta_rs(out / "_anycdc" / "tombstones").metadata().partition_columns == ["table"]
    stones = sorted((r["table"], r["_key"]) for r in system(spark, out, "tombstones"))
    assert stones == [("shop/invoices", '["7"]'), ("shop/orders", '["1"]')]
    folders = [p.name for p in (out / "_anycdc" / "tombstones").iterdir() if p.is_dir()]
    assert sum("invoices" in name and name.startswith("table=") for name in folders) == 1


def test_late_event_stopped_within_retention_and_applied_after_it(
    spark: Any, tmp_path: Path
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1, "a")), ev("delete", 5, _row(1, "a")),
    ]))  # fmt: skip
    run(spark, src, out)
    # within the retention: an older event of the deleted key changes nothing
    write_messages(
        src, "002.jsonl", encode_all("canonical-json", [ev("update", 3, _row(1, "late"))])
    )
    run(spark, src, out)
    assert rows(spark, out) == []
    # past it: the tombstone no longer counts, and the first batch of a run purges it
    time.sleep(1.5)
    write_messages(
        src, "003.jsonl", encode_all("canonical-json", [ev("update", 4, _row(1, "later"))])
    )
    run(spark, src, out, tombstone_retention_hours=0.0003)  # ~1 s
    assert [r["name"] for r in rows(spark, out)] == ["later"]
    assert system(spark, out, "tombstones") == []
    assert "DELETE" in _writes(spark, out / "_anycdc" / "tombstones")


def test_a_tombstone_guards_its_own_table_only(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1, "a")), ev("delete", 5, _row(1, "a")),
        ev("insert", 1, _row(2, "x"), table="invoices"),
    ]))  # fmt: skip
    run(spark, src, out)
    # one batch, both tables, the same key 1 at an older position than orders' delete
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("update", 3, _row(1, "late")),
        ev("insert", 3, _row(1, "other table"), table="invoices"),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out) == []
    assert sorted(r["name"] for r in rows(spark, out, table="invoices")) == ["other table", "x"]
