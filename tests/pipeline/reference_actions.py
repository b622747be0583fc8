"""The reference for a round's row actions: one table's actions built by a plan of its own.

The apply round builds every due table's row actions in one plan
(:func:`anycdc.spark.actions.round_actions`, what differs between tables is data). These
functions build one table's, SQL text per table, as the round did before it had one plan:
the differential tests (tests/pipeline/test_actions.py) compare the two on the same
changelog rows. Test code only: the pipeline never builds actions a table at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anycdc.event import Op
from anycdc.spark.action_rules import TRUNCATE, UPSERT_OPS
from anycdc.spark.actions import checked_columns, upserts_and_deletes
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.merge_sql import ROW_KEY, bad_cast_sql, lit, row_key_sql
from anycdc.spark.table_schema import TableSchema


def table_actions(
    schema: TableSchema, events: Any, types: dict[str, str], floor: str | None
) -> Any:
    """One table's row changes as (key texts, kind, image, full, position, order ...), from
    ``events`` (its changelog rows); ``floor``: its last TRUNCATE's position (older events
    are dropped). A history table's (``schema.history``) has its TRUNCATEs as actions too,
    and no floor."""
    if schema.history:
        return _history_actions(schema, events, types)
    return _row_actions(schema, events, types, floor)


def _row_actions(schema: TableSchema, events: Any, types: dict[str, str], floor: str | None) -> Any:
    """The upserts and deletes of the row changes after ``floor`` (SQL text throughout)."""
    keys = schema.key_columns()
    ops = ", ".join(lit(op) for op in (*UPSERT_OPS, Op.DELETE.value))
    condition = f"op IN ({ops}) AND coalesce(split, '') <> 'before'"
    if floor is not None:
        condition += f" AND (position IS NULL OR position > {lit(floor)})"
    rows = events.where(condition)
    if schema.schema_changes == "evolve" and schema.plan.renamed:
        from pyspark.sql import functions as F

        # a change from before a rename carries the old name: it is the renamed column's
        rows = rows.withColumns(
            {
                image: F.expr(renamed_image(image, schema.plan.renamed))
                for image in ("before", "after")
            }
        )
    if keys == (ROW_KEY,):
        typed = types_map_sql(checked_columns(types))
        rows = rows.withColumn("before", _with_row_key("before", typed)).withColumn(
            "after", _with_row_key("after", typed)
        )

    def key_text(image: str) -> str:
        return f"to_json(array({', '.join(f'element_at({image}, {lit(k)})' for k in keys)}))"

    return upserts_and_deletes(rows, key_text)


def _history_actions(schema: TableSchema, events: Any, types: dict[str, str]) -> Any:
    """An SCD2 table's: the SCD1 row actions (no truncate floor) plus one ``truncate``
    action per TRUNCATE."""
    from pyspark.sql import functions as F

    rows = _row_actions(schema, events, types, None)
    truncates = events.filter(F.col("op") == Op.TRUNCATE.value).select(
        F.lit(None).cast("string").alias("_key"),
        F.lit(TRUNCATE).alias("kind"),
        F.lit(None).cast("map<string,string>").alias("image"),
        F.lit(True).alias("full"),
        F.col("position"),
        F.col("partition"),
        F.col("offset"),
        F.col("event_index"),
        ingest_batch(events),
        F.col("ts_ms"),
        F.col("op"),
        F.col("source"),
        F.col("format"),
    )
    return rows.unionByName(truncates)


def bad_casts(actions: Any, types: dict[str, str]) -> Any:
    """``actions`` with ``_bad``: why an upsert's image holds a value that its column's
    type cannot hold (NULL when none)."""
    from pyspark.sql import functions as F

    checks = [
        bad_cast_sql(f"element_at(image, {lit(name)})", lit(name), lit(target), target)
        for name, target in checked_columns(types)
    ]
    if not checks:
        return actions.withColumn("_bad", F.lit(None).cast("string"))
    reasons = f"concat_ws('; ', {', '.join(checks)})"
    return actions.withColumn("_bad", F.expr(f"nullif({reasons}, '')"))


def ingest_batch(frame: Any) -> Any:
    """The frame's :data:`~anycdc.spark.ledger.INGEST_BATCH` column (null where it has none):
    the order of arrival across the batches one apply covers."""
    from pyspark.sql import functions as F

    if INGEST_BATCH in frame.columns:
        return F.col(INGEST_BATCH)
    return F.lit(None).cast("bigint").alias(INGEST_BATCH)


def _with_row_key(image: str, types: str) -> Any:
    """Add a full-row identity to an image (tables without any key)."""
    from pyspark.sql import functions as F

    return F.expr(row_key_sql(image, types))


def types_map_sql(checks: Sequence[tuple[str, str]]) -> str:
    """SQL: a literal map column -> Spark type of ``checks`` (:func:`checked_columns`).

    >>> types_map_sql([("id", "INT")])
    "map('id', 'INT')"
    >>> types_map_sql([])
    'CAST(map() AS MAP<STRING, STRING>)'
    """
    if not checks:
        return "CAST(map() AS MAP<STRING, STRING>)"
    return f"map({', '.join(f'{lit(n)}, {lit(t)}' for n, t in checks)})"


def renamed_image(image: str, renames: list[tuple[str, str, str]]) -> str:
    """SQL: the map column ``image`` with each (old, new, position) rename applied to the
    rows from before its position (in order: a column renamed twice ends at the last name).

    >>> print(renamed_image("after", [("a", "b", "7")]))  # doctest: +NORMALIZE_WHITESPACE
    CASE WHEN position < '7' AND map_contains_key(after, 'a') THEN map_concat(map_filter(after,
    (k, v) -> k <> 'a'), map('b', element_at(after, 'a'))) ELSE after END
    """
    expr = image
    for old, new, position in renames:
        expr = (
            f"CASE WHEN position < {lit(position)} AND map_contains_key({expr}, {lit(old)}) "
            f"THEN map_concat(map_filter({expr}, (k, v) -> k <> {lit(old)}), "
            f"map({lit(new)}, element_at({expr}, {lit(old)}))) ELSE {expr} END"
        )
    return expr
