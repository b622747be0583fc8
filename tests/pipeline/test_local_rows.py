"""Driver-held rows as a local relation (:func:`anycdc.spark.local_rows.local_frame`)
against the reference, PySpark's ``createDataFrame`` of the same rows: the same rows and
types for every schema anycdc builds this way, names that are data included; and no
Spark job to collect them and no Python task for any query of them, where the reference
runs Python tasks."""

from __future__ import annotations

from typing import Any

import pytest

from anycdc.spark.actions import _SPEC_SCHEMA
from anycdc.spark.ledger import Ledger
from anycdc.spark.local_rows import LOCAL_TEXT_MAX, ddl_struct, local_frame, values_sql
from anycdc.spark.scd2 import ENDS_SCHEMA
from anycdc.spark.system_tables import BATCHES_SCHEMA

pytestmark = pytest.mark.spark

ODD = [
    "it's", "back\\slash", "\\'", "new\nline\ttab", "表 ü", "`tick`", "'; DROP TABLE x; --",
    "${x}", "%s", "", "\u0000nul", "\\u0041",
]  # fmt: skip
BIG = 2**63 - 1
SUBSTITUTE = "spark.sql.variable.substitute"

BATCH_ROWS = [
    (7, name, f"/t/{name}", BIG, 0, "pos'1", -(2**63), None, None, {"excluded": 3}, None)
    for name in ODD
] + [(8, None, None, 0, 0, None, None, None, None, {}, None)]  # fmt: skip
LEDGER_ROWS = [
    ("q", name, "db", None, name, 5, 10, "p", 1, "due", 60.5, None) for name in ODD
] + [("q", None, None, None, None, 9, None, None, None, "all", float("inf"), None)]  # fmt: skip
SPEC_ROWS = [
    (
        "t0", "db", None, name, [name, "id"], False, None, "b",
        [{"old": name, "new": "n", "pos": "1"}], True,
        [{"name": name, "type": "DECIMAL(12,2)"}], 3, False,
    )
    for name in ODD
] + [("t1", None, None, "x", [], True, None, None, [], False, [], 0, True)]  # fmt: skip
CASES: dict[str, tuple[str, list[tuple[Any, ...]]]] = {
    "batches": (BATCHES_SCHEMA, BATCH_ROWS),
    "ledger": (Ledger.SCHEMA, LEDGER_ROWS),
    "spec": (_SPEC_SCHEMA, SPEC_ROWS),
    "ends": (ENDS_SCHEMA, []),
}


def _shape(frame: Any) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_rows_and_types_of_the_reference(spark: Any, case: str) -> None:
    schema, rows = CASES[case]
    # in a session of Spark's defaults too: one that replaces ${name} in SQL texts
    spark.conf.set(SUBSTITUTE, "true")
    try:
        local = local_frame(spark, rows, schema)
        reference = spark.createDataFrame(rows, schema)
        assert _shape(local) == _shape(reference)
        assert local.collect() == reference.collect()
    finally:
        spark.conf.set(SUBSTITUTE, "false")


def test_a_local_relation_collected_without_a_job(spark: Any) -> None:
    schema = "name STRING, n BIGINT"
    rows = [(name, n) for n, name in enumerate(ODD)]
    tracker, context = spark.sparkContext.statusTracker(), spark.sparkContext

    def jobs(frame: Any, group: str) -> int:
        context.setJobGroup(group, "local rows")
        try:
            assert len(frame.collect()) == len(ODD)
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
        return len(tracker.getJobIdsForGroup(group))

    local = local_frame(spark, rows, schema)
    plan = local._jdf.queryExecution().optimizedPlan()
    assert plan.getClass().getSimpleName() == "LocalRelation"  # no RDD of Python rows
    assert jobs(local, "local-rows") == 0
    assert jobs(spark.createDataFrame(rows, schema), "local-rows-reference") >= 1


def test_rows_past_the_text_limit_through_the_reference(spark: Any) -> None:
    schema = "name STRING, n BIGINT"
    rows = [(f"{name}-{n}", n) for n in range(2_000) for name in ODD[:2]]
    assert len(values_sql(rows, ddl_struct(schema))) > LOCAL_TEXT_MAX
    frame = local_frame(spark, rows, schema)
    plan = frame._jdf.queryExecution().optimizedPlan().getClass().getSimpleName()
    assert plan != "LocalRelation"  # createDataFrame's rows, not a parsed text
    assert sorted(frame.collect()) == sorted(spark.createDataFrame(rows, schema).collect())
