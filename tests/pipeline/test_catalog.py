"""``--catalog`` / ``table_name``: target tables registered in the Spark catalog, by name."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import Column
from anycdc.values import LogicalType
from tests.pipeline.helpers import ORDER_COLUMNS, encode_all, ev, rows, run, write_messages

pytestmark = pytest.mark.spark


def test_tables_are_queryable_by_name_and_follow_schema_changes(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    template = "anycdc_test_{database}.{table}"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.10")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.20")}),
    ]))  # fmt: skip
    run(spark, src, out, table_name=template)
    table = spark.table("anycdc_test_shop.orders")
    assert sorted(r["id"] for r in table.collect()) == [1, 2]
    detail = spark.sql("DESCRIBE DETAIL anycdc_test_shop.orders").first()
    assert detail["location"].rstrip("/").endswith(str(out / "shop" / "orders"))

    wider = {**ORDER_COLUMNS, "note": Column(LogicalType("string"), "varchar(20)")}
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("update", 3, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.10"), "note": "x"},
           columns=wider),
        ev("delete", 4, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.20")}),
    ]))  # fmt: skip
    run(spark, src, out, table_name=template)  # a new run: the name is there already
    by_name = [
        {k: v for k, v in r.asDict().items() if not k.startswith("_cdc_")}
        for r in spark.table("anycdc_test_shop.orders").collect()
    ]
    assert (
        by_name
        == rows(spark, out)
        == [{"id": 1, "name": "a", "qty": 1, "price": Decimal("1.10"), "note": "x"}]
    )
