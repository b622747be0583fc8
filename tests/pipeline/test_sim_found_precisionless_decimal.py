"""Found by the simulator (it was PIPELINE_GAPS ``precisionless-decimal``): a DECIMAL without
a precision widened a DECIMAL(p,s) column to DECIMAL(38,18), and the column type depended on
batch boundaries.

Some formats cannot always say a DECIMAL's precision: DataWorks has no precision at all,
DTS Avro has none for a NULL value. Such a type now keeps a DECIMAL(p,s) column as it is and
types a new column as ``decimal_default``; a batch's types are folded in source order, so
one batch and two give the same column type.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, ev, run, write_messages

pytestmark = pytest.mark.spark

LOOSE = {
    "id": Column(LogicalType("int64"), "bigint"),
    "price": Column(LogicalType("decimal"), "DOUBLE"),
}
TYPED = {
    "id": Column(LogicalType("int64"), "bigint"),
    "price": Column(LogicalType("decimal", 14, 4), "decimal(14,4)"),
}


def _price_type(spark: Any, target: Path) -> str:
    frame = spark.read.format("delta").load(str(target / "shop" / "orders"))
    return str(frame.schema["price"].dataType.simpleString())


def test_one_batch_and_two_batches_give_the_same_column_type(spark: Any, tmp_path: Path) -> None:
    alter = ChangeEvent(
        op=Op.DDL, format="canonical-json", database="shop", table="orders",
        ddl="ALTER TABLE `shop`.`orders` MODIFY COLUMN `price` decimal(18,4)", position=Position((2,)),
    )  # fmt: skip
    first = [ev("insert", 1, {"id": 1, "price": Decimal("1.5")}, columns=LOOSE)]
    rest = [alter, ev("insert", 3, {"id": 2, "price": Decimal("2.25")}, columns=LOOSE)]
    one, two = tmp_path / "one", tmp_path / "two"
    write_messages(one / "in", "001.jsonl", encode_all("canonical-json", first + rest))
    run(spark, one / "in", one / "out")
    write_messages(two / "in", "001.jsonl", encode_all("canonical-json", first))
    run(spark, two / "in", two / "out")
    write_messages(two / "in", "002.jsonl", encode_all("canonical-json", rest))
    run(spark, two / "in", two / "out")
    assert _price_type(spark, one / "out") == _price_type(spark, two / "out")


def test_a_null_without_precision_keeps_the_column_type(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, {"id": 1, "price": Decimal("1.5000")}, columns=TYPED),
    ]))  # fmt: skip
    run(spark, src, out)
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("insert", 2, {"id": 2, "price": None}, columns=LOOSE),  # DTS Avro: a NULL DECIMAL
    ]))  # fmt: skip
    run(spark, src, out)
    assert _price_type(spark, out) == "decimal(14,4)"
