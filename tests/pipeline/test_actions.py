"""A round's row actions in one plan (:func:`anycdc.spark.actions.round_actions`) against
the reference: each table's own plan (:mod:`tests.pipeline.reference_actions`, the union
the apply round built before), on the same changelog rows, through real Spark.

The tables cover what makes one table's actions differ from another's: a key and no key, a
key change, a TRUNCATE floor, renames, an SCD2 table's TRUNCATE, values that do not fit
their column, a key bound column, schema-qualified and odd names, a table that is not due.
"""

from __future__ import annotations

from typing import Any

import pytest

from anycdc.changelog import CHANGELOG_COLUMNS, Coordinates, event_to_row
from anycdc.config import PipelineConfig
from anycdc.event import ChangeEvent
from anycdc.spark.actions import COMMON_CHECKS_MAX, round_actions
from anycdc.spark.apply import TableApplier, TablePlan
from anycdc.spark.decode import changelog_schema
from anycdc.spark.key_bound import KEY_NUMBER_TYPE
from anycdc.spark.merge_sql import lit, table_condition
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.table_state import DueTable, TableState
from anycdc.spark.tombstones import table_tag
from tests.pipeline.helpers import ev
from tests.pipeline.reference_actions import bad_casts, table_actions

pytestmark = pytest.mark.spark

TYPES = {"id": "BIGINT", "name": "STRING", "qty": "TINYINT", "price": "DECIMAL(12,2)"}


def _position(pos: int) -> str:
    position = ev("insert", pos, {"id": 1}).position
    assert position is not None
    return position.sort_key()


def _events() -> list[ChangeEvent]:
    row = {"id": 1, "name": "a", "qty": 3, "price": "1.50"}
    return [
        # keyed: one before the TRUNCATE floor (dropped), a key change, a bad value, a
        # partial image, a delete, a split update's before half (not an action)
        ev("insert", 1, row),
        ev("insert", 3, {**row, "id": 2, "qty": 300}),
        ev("update", 4, {**row, "id": 5}, before=row),
        ev("update", 5, {"id": 5, "qty": 4}, partial=("after",)),
        ev("update", 6, {**row, "id": 5, "qty": 6}, split="before"),
        ev("delete", 7, {**row, "id": 2}),
        # a before image without its key (a format that sends only the changed columns):
        # the key changed from NULL, so the NULL key's row goes too
        ev("update", 8, {**row, "id": 6}, before={"name": "a"}),
        # no key: row identities
        ev("insert", 1, {"id": 9, "name": "x"}, table="loose", key=None),
        ev("delete", 2, {"id": 9, "name": "x"}, table="loose", key=None),
        # renamed: qty -> amount at position 5 (older images carry the old name)
        ev("insert", 2, {"id": 1, "qty": 8}, table="renamed"),
        ev("insert", 6, {"id": 2, "amount": 9}, table="renamed"),
        # SCD2: its TRUNCATE is an action
        ev("insert", 1, row, table="hist"),
        ev("truncate", 2, None, table="hist"),
        ev("update", 3, {**row, "qty": 120}, before=row, table="hist"),
        # a schema, an odd name, a table with the same name in another database
        ev("insert", 1, row, table="o'dd`t", database="pg", schema="public"),
        ev("insert", 1, row, table="o'dd`t", database="other"),
        # a key of two columns: a change of one of them is a delete and an upsert
        ev("insert", 1, {"id": 7, "name": "a"}, table="pairs", key=("id", "name")),
        ev(
            "update",
            2,
            {"id": 7, "name": "b"},
            before={"id": 7, "name": "a"},
            table="pairs",
            key=("id", "name"),
        ),
        ev("delete", 3, {"id": 7, "name": "b"}, table="pairs", key=("id", "name")),
        # not due
        ev("insert", 1, row, table="skipped"),
    ]


def _due(spark: Any, config: PipelineConfig) -> list[DueTable]:
    def plan(table: str, database: str = "shop", **more: Any) -> TablePlan:
        more.setdefault("key", ("id",))
        return TablePlan(database, more.pop("schema", None), table, **more)

    items = [
        (TableApplier, plan("orders"), TYPES, _position(2), "id"),
        (TableApplier, plan("loose", key=None), {"id": "BIGINT", "name": "STRING"}, None, None),
        (
            TableApplier,
            plan("renamed", renamed=[("qty", "amount", _position(5))]),
            {"id": "BIGINT", "amount": "TINYINT"},
            None,
            "id",
        ),
        (Scd2Applier, plan("hist"), TYPES, None, None),
        (TableApplier, plan("o'dd`t", "pg", schema="public"), TYPES, None, None),
        (
            TableApplier,
            plan("pairs", key=("id", "name")),
            {"id": "BIGINT", "name": "STRING"},
            None,
            None,
        ),
    ]
    return [
        DueTable(kind(spark, config, p), TableState({}), types, floor=floor, bound_column=bound)
        for kind, p, types, floor, bound in items
    ]


def _reference(wanted: Any, prepared: list[DueTable]) -> Any:
    """The union of a plan per table (the apply round's before one plan)."""
    frames = []
    for index, item in enumerate(prepared):
        events = wanted.where(table_condition(item.plan))
        actions = bad_casts(table_actions(item.schema, events, item.types, item.floor), item.types)
        key_number = (
            f"CAST(element_at(image, {lit(item.bound_column)}) AS {KEY_NUMBER_TYPE})"
            if item.bound_column
            else f"CAST(NULL AS {KEY_NUMBER_TYPE})"
        )
        frames.append(
            actions.selectExpr(f"{lit(table_tag(index))} AS _t", "*", f"{key_number} AS _kv")
        )
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _sorted(frame: Any) -> list[str]:
    return sorted(repr(sorted(row.asDict(recursive=True).items())) for row in frame.collect())


@pytest.mark.parametrize("common", [COMMON_CHECKS_MAX, 1], ids=["checks-in-code", "lambda-too"])
def test_one_plan_gives_each_table_the_actions_of_its_own_plan(
    spark: Any, tmp_path: Any, common: int
) -> None:
    """With the round's checks all tested in generated code, and with one of them only
    (the others, and the one bad value, through the lambda: a round of many tables)."""
    config = PipelineConfig.from_mapping(
        {
            "target": str(tmp_path),
            "schema_changes": "evolve",
            "tables": {"shop.hist": {"mode": "scd2"}},
        }
    )
    rows = [
        event_to_row(event, Coordinates("t", 0, offset), 0)
        for offset, event in enumerate(_events())
    ]
    from pyspark.sql.types import StructType

    # the changelog schema built without a session is the one Spark reads from its DDL
    ddl = ", ".join(f"`{name}` {kind}" for name, kind in CHANGELOG_COLUMNS)
    assert changelog_schema() == StructType.fromDDL(ddl)
    wanted = spark.createDataFrame(rows, changelog_schema())
    prepared = _due(spark, config)
    specs = [item.action_spec(table_tag(i)) for i, item in enumerate(prepared)]
    one = round_actions(spark, wanted, specs, common)
    reference = _reference(wanted, prepared)
    assert one.columns == reference.columns
    got = _sorted(one)
    assert got == _sorted(reference)
    # and the cases are there: a dropped event would pass the comparison as well
    kinds = {(r["_t"], r["kind"]) for r in one.collect()}
    assert ("3", "truncate") in kinds and ("1", "delete") in kinds and ("0", "delete") in kinds
    bad = [r["_bad"] for r in one.collect() if r["_bad"]]
    assert bad == ["qty: cannot cast 300 to TINYINT"]
    assert len(got) == 19
    assert ("delete", "[null]") in {(r["kind"], r["_key"]) for r in one.collect() if r["_t"] == "0"}
    pairs = sorted((r["kind"], r["_key"]) for r in one.collect() if r["_t"] == "5")
    assert pairs == [
        ("delete", '["7","a"]'), ("delete", '["7","b"]'), ("upsert", '["7","a"]'), ("upsert", '["7","b"]')
    ]  # fmt: skip
    images = {(r["_t"], r["kind"]): r["image"] for r in one.collect()}
    assert images[("1", "delete")]["_cdc_row_key"]  # the keyless row's identity
    assert {frozenset(r["image"]) for r in one.collect() if r["_t"] == "2"} == {
        frozenset(("id", "amount"))
    }
