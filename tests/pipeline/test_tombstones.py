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
    # both tables' deletes: ONE append, after the tables' writes
    assert _writes(spark, out / "_anycdc" / "tombstones") == ["WRITE"]
    assert [r["id"] for r in rows(spark, out)] == [2]
    assert rows(spark, out, table="invoices") == []


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
