"""``table_properties``: every target table gets them at creation, an existing table when
one differs — once, not in every batch — and they do what Delta says (a change feed here)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import encode_all, ev, run, write_messages

pytestmark = pytest.mark.spark

CDF = {"delta.enableChangeDataFeed": "true"}


def _row(n: int, name: str = "a") -> dict[str, Any]:
    return {"id": n, "name": name, "qty": n, "price": Decimal("1.00")}


def _properties(spark: Any, table: Path) -> dict[str, str]:
    return dict(spark.sql(f"DESCRIBE DETAIL delta.`{table}`").first()["properties"])


def _property_commits(spark: Any, table: Path) -> int:
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()
    return sum(1 for r in history if r["operation"] == "SET TBLPROPERTIES")


def test_new_and_existing_tables_get_the_configured_properties(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    orders, items = out / "shop" / "orders", out / "shop" / "items"
    write_messages(src, "000.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1)), ev("insert", 2, _row(2), table="items"),
    ]))  # fmt: skip
    run(spark, src, out, table_properties={})
    assert "delta.enableChangeDataFeed" not in _properties(spark, orders)

    # a later run with the properties: the existing tables get them, before the batch's writes
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("update", 3, _row(1, "b"), before=_row(1)), ev("insert", 4, _row(3), table="items"),
    ]))  # fmt: skip
    retention = {"delta.logRetentionDuration": "interval 60 days"}
    run(spark, src, out, table_properties={**CDF, **retention})
    for table in (orders, items):
        assert _properties(spark, table).items() >= {**CDF, **retention}.items()
    history = spark.sql(f"DESCRIBE HISTORY delta.`{orders}`").collect()
    enabled = min(r["version"] for r in history if r["operation"] == "SET TBLPROPERTIES")
    changes = (
        spark.read.format("delta").option("readChangeFeed", "true")
        .option("startingVersion", enabled).load(str(orders))
        .filter("_change_type = 'update_postimage'").collect()
    )  # fmt: skip
    assert [(r["id"], r["name"]) for r in changes] == [(1, "b")]

    # the same settings again (spelled in other cases): nothing to set, no commit per batch
    before = _property_commits(spark, orders)
    write_messages(src, "002.jsonl", encode_all("canonical-json", [ev("insert", 5, _row(4))]))
    run(spark, src, out, table_properties={"DELTA.enableChangeDataFeed": "TRUE", **retention})
    assert _property_commits(spark, orders) == before

    # a table created under the setting has it from its first version
    write_messages(src, "003.jsonl", encode_all("canonical-json", [
        ev("insert", 6, _row(9), table="fresh"),
    ]))  # fmt: skip
    run(spark, src, out, table_properties=CDF)
    fresh = out / "shop" / "fresh"
    assert _properties(spark, fresh).items() >= CDF.items()
    assert _property_commits(spark, fresh) == 0
