"""The schema step, dry (``TableSchema.planned``): what a fresh read lays the table's rows
into, without a statement run (no Spark session is given: one call on it would fail).

The same plan over the same fields as the apply's step: new columns, a widening, a rename
and a drop under ``schema_changes: evolve``, a new table, and a mode switch refused.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.types import DecimalType, IntegerType, LongType, StringType, StructField

from anycdc.config import PipelineConfig
from anycdc.spark.plan import IncompatibleSchema, TablePlan
from anycdc.spark.table_schema import HISTORY_MARKER, META_COLUMNS, TableSchema

META = [
    StructField(name, {"STRING": StringType(), "BIGINT": LongType()}.get(kind, StringType()))
    for name, kind in META_COLUMNS
]


def _schema(mode: str, plan: TablePlan) -> TableSchema:
    config = PipelineConfig(target="/lake", schema_changes=mode)
    return TableSchema(None, config, plan)  # type: ignore[arg-type]  # never touched


def _fields(*extra: Any) -> list[Any]:
    return [
        StructField("id", LongType()),
        StructField("name", StringType()),
        StructField("qty", IntegerType()),
        *extra,
        *META,
    ]


def test_new_columns_a_widening_a_rename_and_a_drop_are_planned_not_run() -> None:
    plan = TablePlan("shop", None, "orders", key=("id",), has_rows=True)
    for name, logical in (("id", "int64"), ("title", "string"), ("qty", "int64")):
        plan.see(name, logical)
    plan.see("price", "decimal(10,2)")
    plan.renamed.append(("name", "title", "0005"))
    plan.dropped.append("note")
    schema = _schema("evolve", plan)
    types = schema.planned(_fields(StructField("note", StringType())))
    assert types["title"] == "STRING" and types["qty"] == "BIGINT"
    assert types["price"].startswith("DECIMAL(10,2")
    assert schema.carried == {"title": "name"}  # its values are the old column's
    assert "note" not in schema.columns and "title" in schema.columns
    assert schema.columns["qty"] == "BIGINT"
    statements = " ".join(schema.dry or [])
    assert "RENAME COLUMN" in statements and "DROP COLUMN" in statements
    assert "ADD COLUMNS" in statements and "ALTER COLUMN" in statements


def test_a_table_not_there_is_planned_as_its_first_write_would_create_it() -> None:
    plan = TablePlan("shop", None, "orders", key=("id",), has_rows=True)
    plan.see("id", "int64")
    plan.see("name", "string")
    schema = _schema("lenient", plan)
    assert schema.planned(None) == {"id": "BIGINT", "name": "STRING"}
    assert list(schema.columns)[:2] == ["id", "name"]
    assert [n for n, _ in META_COLUMNS] == list(schema.columns)[2:]
    assert schema.dry == []  # created by its first write: no statement before it


def test_a_history_table_is_refused_as_the_apply_refuses_it() -> None:
    plan = TablePlan("shop", None, "orders", key=("id",), has_rows=True)
    plan.see("id", "int64")
    with pytest.raises(IncompatibleSchema, match="scd2"):
        _schema("lenient", plan).planned(_fields(StructField(HISTORY_MARKER, StringType())))


def test_decimal_fields_read_back_in_the_step_spelling() -> None:
    plan = TablePlan("shop", None, "orders", key=("id",), has_rows=True)
    plan.see("id", "int64")
    plan.see("price", "decimal(12,2)")
    schema = _schema("lenient", plan)
    types = schema.planned(_fields(StructField("price", DecimalType(12, 2))))
    assert types["price"] == "DECIMAL(12,2)" and schema.dry == []
