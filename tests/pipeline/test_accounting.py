"""Every changelog row ends up applied, dead-lettered, skipped or pending (``anycdc audit``)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.event import ChangeEvent, Op, Position
from tests.pipeline.helpers import encode_all, ev, run, write_messages

pytestmark = pytest.mark.spark


def _marker(op: Op, pos: int, **fields: Any) -> ChangeEvent:
    return ChangeEvent(
        op=op, format="canonical-json", ts_ms=1_700_000_000_000 + pos, position=Position((pos,)),
        **fields,
    )  # fmt: skip


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run: applied rows, a bad cast, a message that does not decode, an excluded
    table, a heartbeat, transaction markers and a DDL naming no table (two batches)."""
    base = tmp_path_factory.mktemp("accounting")
    src, out = base / "in", base / "out"
    row = {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.00")}
    write_messages(src, "001.jsonl", [
        *encode_all("canonical-json", [
            _marker(Op.BEGIN, 1, tx="t1"),
            ev("insert", 2, row),
            ev("update", 3, {**row, "qty": 2}),
            ev("insert", 4, {**row, "id": 2, "qty": "not-a-number"}),  # a bad cast
            ev("insert", 5, {**row, "id": 9}, table="audit"),  # excluded
            _marker(Op.COMMIT, 6, tx="t1"),
        ]),
        b"{not json",
    ])  # fmt: skip
    # a malformed Canal message: a row change with an empty table name (once written to the
    # changelog and then never applied nor dead-lettered: now a dead letter at decode)
    [nameless] = encode_all("canal-json", [ev("insert", 12, {**row, "id": 5})])
    nameless = nameless.replace(b'"table":"orders"', b'"table":""')
    write_messages(src, "002.jsonl", [
        *encode_all("canonical-json", [
            _marker(Op.HEARTBEAT, 7),
            _marker(Op.DDL, 8, database="newdb", ddl="CREATE DATABASE newdb"),
            ev("delete", 9, {**row, "qty": 2}),
            ev("insert", 10, {**row, "id": 3}, table="items"),
        ]),
        nameless,
    ])  # fmt: skip
    run(spark, src, out, exclude=[r"shop\.audit"], max_files_per_trigger=1)
    return out


def test_every_changelog_row_has_one_outcome(spark: Any, lake: Path) -> None:
    from anycdc.spark.accounting import account

    result = account(spark, str(lake))
    tables = {t.table: t.as_dict() for t in result.tables}
    assert result.ok, result.as_dict()
    assert tables["shop.orders"] == {
        "table": "shop.orders", "rows": 4, "applied": 3, "dead_lettered": 1, "skipped": {},
        "pending": 0, "unaccounted": 0,
    }  # fmt: skip
    assert tables["shop.items"]["applied"] == 1
    assert tables["shop.audit"]["skipped"] == {"excluded": 1}
    assert tables["newdb"]["skipped"] == {"no-table": 1}  # names its database only
    assert tables["(no table)"]["skipped"] == {"control": 3}
    # `{not json` and the nameless row change: never in the changelog
    assert result.decode_dead_letters == 2
    dead = spark.read.format("delta").load(f"{lake}/_anycdc/dead_letter")
    [nameless] = dead.filter("error LIKE '%empty table name%'").collect()
    assert nameless["error"].startswith("canal-json: $.table: missing or empty table name")
    assert nameless["raw"] and nameless["table"] is None
    total = result.total()
    assert total.rows == 10 and total.rows == total.applied + total.dead_lettered + sum(
        total.skipped.values()
    )


def test_status_counts_the_skips(spark: Any, lake: Path) -> None:
    from anycdc.cli.status import collect

    assert collect(spark, str(lake))["skipped"] == {"control": 3, "excluded": 1, "no-table": 1}


def test_audit_finds_an_event_that_vanished(
    spark: Any, lake: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A changelog row no apply took (the pipeline's old bug: a row change with an empty
    table name) makes the audit fail and name where it came from."""
    import shutil

    from pyspark.sql import functions as F

    copy = tmp_path / "copy"
    shutil.copytree(lake, copy)

    changelog = spark.read.format("delta").load(f"{copy}/_anycdc/changelog")
    lost = (
        changelog.filter("`table` = 'orders' AND op = 'insert'")
        .limit(1)
        .withColumn("table", F.lit("ghost"))
        .withColumn("offset", F.col("offset") + 1000)
    )  # ingested in batch 0, which the run's watermark says every table is applied through
    lost.write.format("delta").mode("append").save(f"{copy}/_anycdc/changelog")
    capsys.readouterr()
    assert cli(["audit", "--target", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "audit: EVENTS UNACCOUNTED FOR" in out
    assert "offset 1002 event 0 (insert, ghost)" in out
    assert cli(["audit", "--target", str(lake), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["total"]["unaccounted"] == 0
