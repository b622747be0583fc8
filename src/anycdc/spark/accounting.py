"""Where every changelog row ended up: the pipeline's invariant, checked on a target.

Every row of ``_anycdc/changelog`` (one decoded event) has exactly one outcome:

``applied``
    its table's apply through the row's ingest batch committed (``_anycdc/applied``), and
    the row was not dead-lettered by it. This covers rows whose effect a later one replaced
    in the fold, replays a tombstone stopped and rows under a TRUNCATE: the table holds what
    they mean.
``dead_lettered``
    ``_anycdc/dead_letter`` holds it, with its table and the reason (its table failed, or
    a value does not cast to its column).
``skipped``
    applied to no table, for a documented reason (:data:`~anycdc.spark.batch_metrics.SKIP_REASONS`):
    ``control`` (heartbeats, transaction markers), ``no-table`` (a DDL naming no table),
    ``excluded`` (``include``/``exclude``; the pipeline records these per batch in
    ``_anycdc/batches``, since the run's settings are not on the target).
``pending``
    ingested after its table's last apply, and not yet due (the run's freshness): durable
    in the changelog, applied by the next run or batch that makes it due.
``unaccounted``
    none of these: an event the pipeline lost. ``anycdc audit`` fails on any.

Messages that did not decode never reach the changelog: they are dead letters of their
own (``decode_dead_letters``). A message that carries no event (a Kafka tombstone, a Canal
message with an empty ``data``) writes no row.

Rows ingested by ``replay-dead-letters`` (no ingest batch) are applied in the batch that
ingested them: ``applied`` unless dead-lettered again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from anycdc.event import CONTROL_OPS
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.merge_sql import NAMES_A_TABLE_OR_FALSE, QUALIFIED_NAME_SQL

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OUTCOMES: Final = ("applied", "dead_lettered", "skipped", "pending", "unaccounted")
NO_TABLE: Final = "(no table)"
"""The name :class:`TableAccount` gives the rows that name no database or table (a DDL
that names only its database is counted under the database's name)."""


@dataclass
class TableAccount:
    """One table's changelog rows by outcome (``skipped`` by reason).

    >>> a = TableAccount("shop.orders", rows=5, applied=3, dead_lettered=1, pending=1)
    >>> a.balanced, a.unaccounted
    (True, 0)
    """

    table: str
    rows: int = 0
    applied: int = 0
    dead_lettered: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    unaccounted: int = 0

    @property
    def balanced(self) -> bool:
        """rows = applied + dead-lettered + skipped + pending, nothing unaccounted."""
        accounted = self.applied + self.dead_lettered + sum(self.skipped.values()) + self.pending
        return self.unaccounted == 0 and accounted == self.rows

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table, "rows": self.rows, "applied": self.applied,
            "dead_lettered": self.dead_lettered, "skipped": dict(sorted(self.skipped.items())),
            "pending": self.pending, "unaccounted": self.unaccounted,
        }  # fmt: skip


@dataclass
class Accounting:
    """The whole target's account (:func:`account`)."""

    tables: list[TableAccount]
    decode_dead_letters: int
    """Messages dead-lettered before the changelog (they did not decode)."""
    examples: list[dict[str, Any]]
    """A few unaccounted rows' coordinates, to look them up."""

    @property
    def ok(self) -> bool:
        return all(t.balanced for t in self.tables)

    def total(self) -> TableAccount:
        whole = TableAccount("total")
        for t in self.tables:
            whole.rows += t.rows
            whole.applied += t.applied
            whole.dead_lettered += t.dead_lettered
            whole.pending += t.pending
            whole.unaccounted += t.unaccounted
            for reason, n in t.skipped.items():
                whole.skipped[reason] = whole.skipped.get(reason, 0) + n
        return whole

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "total": self.total().as_dict(),
            "decode_dead_letters": self.decode_dead_letters,
            "tables": [t.as_dict() for t in self.tables],
            "unaccounted_examples": self.examples,
        }


def account(spark: SparkSession, target: str, query_name: str = "anycdc") -> Accounting:
    """Classify every changelog row of the run ``query_name`` under ``target`` (see the
    module docstring); a few Spark jobs over the system tables, nothing written."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    system = f"{target.rstrip('/')}/_anycdc"

    def load(name: str) -> DataFrame | None:
        path = f"{system}/{name}"
        return (
            spark.read.format("delta").load(path) if DeltaTable.isDeltaTable(spark, path) else None
        )

    changelog = load("changelog")
    if changelog is None:
        raise FileNotFoundError(f"no anycdc run found under {target} (missing _anycdc/changelog)")
    qualified = F.expr(QUALIFIED_NAME_SQL)
    ingest = F.col(INGEST_BATCH) if INGEST_BATCH in changelog.columns else F.lit(None)
    rows = changelog.select(
        "source", "partition", "offset", "event_index", "op", "database", "schema", "table",
        qualified.alias("qualified"), ingest.cast("bigint").alias("ingest"),
        F.expr(NAMES_A_TABLE_OR_FALSE).alias("named"),
    )  # fmt: skip
    dead_all = load("dead_letter")
    decode_dead = 0
    if dead_all is not None:
        table = F.col("table") if "table" in dead_all.columns else F.lit(None).cast("string")
        index = F.col("event_index") if "event_index" in dead_all.columns else F.lit(None)
        dead = dead_all.select(
            F.col("source").alias("d_source"), F.col("partition").alias("d_partition"),
            F.col("offset").alias("d_offset"), index.cast("int").alias("d_index"),
            table.alias("d_table"), F.col("error").alias("d_error"),
        )  # fmt: skip
        # a dead letter of an apply names its table (before ``table`` was a column, its
        # error began with the table's name) and, since then, the event's index
        match = (
            F.col("source").eqNullSafe(F.col("d_source"))
            & F.col("partition").eqNullSafe(F.col("d_partition"))
            & F.col("offset").eqNullSafe(F.col("d_offset"))
            & (F.col("d_index").isNull() | (F.col("d_index") == F.col("event_index")))
            & (
                (F.col("d_table") == F.col("qualified"))
                | (
                    F.col("d_table").isNull()
                    & F.col("d_error").startswith(F.concat(F.col("qualified"), F.lit(": ")))
                )
            )
        )
        keys = ["source", "partition", "offset", "event_index"]
        lettered = (
            rows.join(dead, match, "left_semi").select(*keys).distinct()
            .withColumn("lettered", F.lit(True))
        )  # fmt: skip
        # the messages that did not decode: no changelog row is theirs
        decode_dead = dead.join(rows, match, "left_anti").count()
        rows = rows.join(lettered, keys, "left")
    else:
        rows = rows.withColumn("lettered", F.lit(None).cast("boolean"))
    applied = load("applied")
    batches = load("batches")
    watermark = -1
    if applied is not None:
        mine = applied.filter(F.col("query") == query_name)
        marks = mine.filter(F.col("source_table").isNull()).agg(F.max("through")).first()
        watermark = int(marks[0]) if marks and marks[0] is not None else -1
        through = (
            mine.filter(F.col("source_table").isNotNull())
            .groupBy("database", "schema", "source_table")
            .agg(F.max("through").alias("through"))
        )
        rows = (
            rows.alias("r")
            .join(
                through.alias("a"),
                F.col("r.database").eqNullSafe(F.col("a.database"))
                & F.col("r.schema").eqNullSafe(F.col("a.schema"))
                & (F.col("r.table") == F.col("a.source_table")),
                "left",
            )
            .select("r.*", "a.through")
        )
    else:
        rows = rows.withColumn("through", F.lit(None).cast("bigint"))
    if batches is not None and "skipped" in batches.columns:
        excluded = batches.filter(
            F.col("table").isNotNull() & F.col("skipped").getItem("excluded").isNotNull()
        ).select(F.col("batch_id").alias("x_batch"), F.col("table").alias("x_table"))
        excluded_tables = excluded.select("x_table").distinct().withColumn("x_any", F.lit(True))
        rows = rows.join(
            excluded.withColumn("x_batch_hit", F.lit(True)),
            (F.col("qualified") == F.col("x_table")) & (F.col("ingest") == F.col("x_batch")),
            "left",
        ).drop("x_batch", "x_table")
        rows = rows.join(excluded_tables, F.col("qualified") == F.col("x_table"), "left").drop(
            "x_table"
        )
        is_excluded = F.coalesce(F.col("x_batch_hit"), F.lit(False)) | (
            F.col("ingest").isNull() & F.coalesce(F.col("x_any"), F.lit(False))
        )
    else:
        is_excluded = F.lit(False)
    control = sorted(op.value for op in CONTROL_OPS)
    outcome = (
        F.when(F.col("op").isin(*control), F.lit("skipped:control"))
        .when(~F.col("named"), F.lit("skipped:no-table"))
        .when(F.coalesce(F.col("lettered"), F.lit(False)), F.lit("dead_lettered"))
        .when(is_excluded, F.lit("skipped:excluded"))
        .when(F.col("ingest").isNull(), F.lit("applied"))
        .when(F.col("through") >= F.col("ingest"), F.lit("applied"))
        .when(F.col("ingest") <= F.lit(watermark), F.lit("unaccounted"))
        .otherwise(F.lit("pending"))
    )
    classified = rows.withColumn("outcome", outcome).persist()
    try:
        counts = (
            classified.groupBy(
                F.when(F.col("qualified") != "", F.col("qualified")).alias("t"), "outcome"
            )
            .count()
            .collect()
        )
        examples = [
            {k: row[k] for k in ("source", "partition", "offset", "event_index", "op", "table")}
            for row in classified.filter(F.col("outcome") == "unaccounted").limit(5).collect()
        ]
    finally:
        classified.unpersist()
    return Accounting(_tables(counts), decode_dead, examples)


def _tables(counts: list[Any]) -> list[TableAccount]:
    """Per-table accounts from ``(t, outcome, count)`` rows."""
    accounts: dict[str, TableAccount] = {}
    for row in counts:
        name = row["t"] or NO_TABLE
        acc = accounts.setdefault(name, TableAccount(name))
        n = int(row["count"])
        acc.rows += n
        kind, _, reason = str(row["outcome"]).partition(":")
        if kind == "skipped":
            acc.skipped[reason] = acc.skipped.get(reason, 0) + n
        else:
            setattr(acc, kind, getattr(acc, kind) + n)
    return [accounts[name] for name in sorted(accounts)]


def skipped_by_reason(batches: DataFrame) -> Mapping[str, int]:
    """The ``skipped`` counts of ``_anycdc/batches`` summed per reason (what ``status`` shows)."""
    from pyspark.sql import functions as F

    if "skipped" not in batches.columns:
        return {}
    rows = (
        batches.select(F.explode("skipped").alias("reason", "n"))
        .groupBy("reason")
        .agg(F.sum("n").alias("n"))
        .collect()
    )
    return {row["reason"]: int(row["n"]) for row in sorted(rows, key=lambda r: r["reason"])}
