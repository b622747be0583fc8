"""The writes to ``_anycdc`` besides the ledger: the changelog append, dead letters, batch records.

Where it sits: source -> decode -> **changelog** -> plan -> apply -> commit, and after each
apply. The ingest step (:mod:`anycdc.spark.ingest`) appends a batch's events to
``_anycdc/changelog`` and its bad messages to ``_anycdc/dead_letter``; the apply round
(:mod:`anycdc.spark.apply_round`) dead-letters the events of a table that failed; the stream
runner (:mod:`anycdc.spark.pipeline`) records each batch and apply in ``_anycdc/batches``.
Every append is idempotent per :class:`~anycdc.spark.ledger.WriteId` (Delta skips a replayed
pair). The upkeep of these tables (expired tombstones, VACUUM) runs here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from anycdc.config import PipelineConfig
from anycdc.spark.actions import MESSAGE_COORDINATES
from anycdc.spark.apply import TableResult
from anycdc.spark.batch_metrics import SKIP_EXCLUDED, BatchMetrics
from anycdc.spark.commit import DeltaTables, append_once, session_tables
from anycdc.spark.ledger import INGEST_BATCH, WriteId
from anycdc.spark.local_rows import local_frame
from anycdc.spark.maintenance import Upkeep, table_properties
from anycdc.spark.merge_sql import delta_ref, table_condition
from anycdc.spark.plan import TablePlan
from anycdc.spark.tombstones import MAINTENANCE_EVERY, Tombstones

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

SYSTEM_TABLES: Final = ("changelog", "dead_letter", "batches", "tombstones", "applied")
DEAD_LETTER_COLUMNS: Final = (
    "source", "partition", "offset", "event_index", "table", "kafka_key", "raw", "format",
    "error",
)  # fmt: skip
"""``event_index`` and ``table`` (qualified; NULL for a message that did not decode) tie a
dead letter of an apply to its changelog row (:mod:`anycdc.spark.accounting`)."""
BATCHES_SCHEMA: Final = (
    "batch_id BIGINT, table STRING, path STRING, events BIGINT, dead_letters BIGINT, "
    "max_position STRING, max_ts_ms BIGINT, heartbeat_ts_ms BIGINT, error STRING, "
    "skipped MAP<STRING, BIGINT>, processed_at TIMESTAMP"
)
"""One row per applied table, one per excluded table (``path`` NULL, ``skipped``
``{excluded: N}``) and one for the batch (``table`` NULL; ``skipped``: its changelog rows
no table takes, by :data:`SKIP_REASONS`)."""

STATS_COLUMNS_PROPERTY: Final = "delta.dataSkippingStatsColumns"
CHANGELOG_STATS_COLUMNS: Final = (
    "ingest_batch", "source", "partition", "offset", "database", "schema", "table", "ts_ms",
    "produced_ms",
)  # fmt: skip
"""The changelog columns Delta keeps file statistics of (:data:`STATS_COLUMNS_PROPERTY`,
set when anycdc creates the changelog): what its reads filter by (the pending rows by
``ingest_batch``; a message by its coordinates; a table; a time). Delta's default (the first
32 columns) also kept the minimum and maximum of every other string (``position``, ``tx``,
``ddl``, ``row_id`` ...), an expression over each row of each write that no read uses. Side
by side, 400,000 changelog rows appended took 2.95-3.52 s with it and 2.65-2.93 s with five
such columns. In the catch-up bench, side by side: ingest ~3% faster detected, within noise
named."""
CHECKPOINT_INTERVAL_PROPERTY: Final = "delta.checkpointInterval"
SYSTEM_CHECKPOINT_INTERVAL: Final = 100
"""Commits between two checkpoints of the changelog and the batch records (Delta's default:
10), each appended once by every micro-batch. A checkpoint rebuilds the table's state inside
the micro-batch that commits it: ~1.0 s against ~0.3 s for an append of a small changelog
(~4 s for a sustained run's), ~1.4 s for the batch records, 4.5 s the first time in a JVM.
Reads replay the commits since the last checkpoint instead: side by side, a read of a
changelog 40-60 commits past its checkpoint took what one 0-9 past took (median 0.47 s
against 0.49 s)."""
CREATED_WITH: Final = {
    "changelog": {
        STATS_COLUMNS_PROPERTY: ",".join(CHANGELOG_STATS_COLUMNS),
        CHECKPOINT_INTERVAL_PROPERTY: str(SYSTEM_CHECKPOINT_INTERVAL),
    },
    "batches": {CHECKPOINT_INTERVAL_PROPERTY: str(SYSTEM_CHECKPOINT_INTERVAL)},
}
"""The properties of a system table anycdc creates, by name (the others: Delta's defaults)."""


def dead_letter_rows(
    frame: DataFrame, table: str | None = None, reason: Column | None = None
) -> DataFrame:
    """``frame``'s rows as ``_anycdc/dead_letter`` rows (:data:`DEAD_LETTER_COLUMNS` and
    ``failed_at``): of a message that did not decode (its ``error``), or of ``table``'s
    events an apply could not write, with ``reason`` after the table's name."""
    from pyspark.sql import functions as F

    columns: dict[str, Column] = {}
    if table is not None:
        columns["table"] = F.lit(table)
        columns["error"] = F.concat(
            F.lit(f"{table}: "), reason if reason is not None else F.lit("")
        )
    return frame.withColumns(columns).select(
        *DEAD_LETTER_COLUMNS, F.current_timestamp().alias("failed_at")
    )


def with_messages(actions: DataFrame, rows: DataFrame) -> DataFrame:
    """``actions`` (a few: those an apply dead-letters) with the ``raw`` message and
    ``kafka_key`` of their changelog rows ``rows`` (the apply's pending rows), matched by
    coordinates and ingest batch: the row actions do not carry the message
    (:data:`~anycdc.spark.actions.ACTION_COLUMNS`), so it is read back only for the actions
    that need it: the changelog side is read once, its ``raw`` column only for the batches
    the apply covers. Every action is kept (outer join), found or not."""
    from pyspark.sql import functions as F

    on = list(MESSAGE_COORDINATES)
    batch = INGEST_BATCH in rows.columns and INGEST_BATCH in actions.columns
    message = rows.select(
        *on, *([INGEST_BATCH] if batch else []), F.col("raw"), F.col("kafka_key")
    ).withColumnsRenamed({c: f"_m_{c}" for c in (*on, INGEST_BATCH)})
    keys = actions.drop("raw", "kafka_key").alias("a")
    condition = [F.col(f"a.{c}").eqNullSafe(F.col(f"_m_{c}")) for c in on]
    if batch:
        condition.append(F.col(f"a.{INGEST_BATCH}").eqNullSafe(F.col(f"_m_{INGEST_BATCH}")))
    # the actions' side is the one kept, so it cannot be the broadcast one
    joined = keys.join(message, condition, "left_outer")
    return joined.select("a.*", "raw", "kafka_key")


class SystemTables:
    """The run's appends to the ``_anycdc`` tables (one per target) and their upkeep."""

    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        self.spark = spark
        self.config = config
        self._batches_run = 0  # this run's batches (upkeep of the system tables)
        self._tables: DeltaTables | None = None

    def append(self, frame: DataFrame, name: str, app: WriteId) -> None:
        """Append to a system table once per ``app`` (:func:`~anycdc.spark.commit.append_once`:
        a replayed pair is skipped; one written by an earlier version of anycdc gains the
        newer columns)."""
        path = f"{self.config.system_dir}/{name}"
        append_once(
            frame, path, app.app_id, int(app.version), tables=self.delta_tables(),
            created_with=CREATED_WITH.get(name),
        )  # fmt: skip

    def delta_tables(self) -> DeltaTables:
        """The session's Delta logs over py4j (made once: it looks up ~20 JVM classes)."""
        if self._tables is None:
            self._tables = session_tables(self.spark)
        return self._tables

    def dead_letter_table(
        self, frame: DataFrame, plan: TablePlan, reason: str, app: WriteId
    ) -> TableResult:
        """Dead-letter every event of ``plan``'s table in ``frame`` (its pending rows) with
        ``reason``: the table failed in this apply. Written once per table and apply (a
        replay after a crash writes nothing twice); ``replay-dead-letters`` applies them
        once the cause is fixed."""
        from pyspark.sql import functions as F

        path = self.config.table_path(plan.database, plan.schema, plan.table)
        events = dead_letter_rows(
            frame.where(table_condition(plan)), plan.qualified, F.lit(reason)
        ).persist()
        try:
            count = events.count()
            if count:
                self.append(events, "dead_letter", app.of(f"failed:{path}"))
        finally:
            events.unpersist()
        return TableResult(plan.qualified, path, dead_letters=count, error=reason)

    def record_batch(self, spark: SparkSession, metrics: BatchMetrics, app: WriteId) -> None:
        """One row per applied table, one per excluded table and one for the batch itself
        (no table): :data:`BATCHES_SCHEMA`."""
        from pyspark.sql import functions as F

        rows: list[tuple[Any, ...]] = [
            (
                metrics.batch_id, t.table, t.path, t.events, t.dead_letters, t.max_position,
                t.max_ts_ms, metrics.heartbeat_ts_ms, t.error, None, None,
            )
            for t in metrics.tables
        ]  # fmt: skip
        rows += [
            (metrics.batch_id, name, None, 0, 0, None, None, None, None, {SKIP_EXCLUDED: n},
             None)
            for name, n in sorted(metrics.excluded.items())
        ]  # fmt: skip
        rows.append(
            (metrics.batch_id, None, None, metrics.events, metrics.dead_letters, None,
             metrics.source_ts_ms, metrics.heartbeat_ts_ms, None, metrics.skipped or None, None)
        )  # fmt: skip
        frame = local_frame(spark, rows, BATCHES_SCHEMA).withColumn(
            "processed_at", F.current_timestamp()
        )
        self.append(frame, "batches", app)

    def upkeep(self, spark: SparkSession) -> None:
        """Expired tombstones and the ``_anycdc`` tables' VACUUMs: in the first batch of a
        run, then every :data:`MAINTENANCE_EVERY` batches (idempotent, no write window)."""
        if self._batches_run % MAINTENANCE_EVERY == 0:
            Tombstones(spark, self.config).maintain()
            Upkeep(spark, self.config).vacuum_due(self._existing(), stamp_new=True)
        self._batches_run += 1

    def _existing(self) -> list[tuple[str, dict[str, str]]]:
        """The ``_anycdc`` tables that exist, with their properties (for VACUUM)."""
        from delta.tables import DeltaTable

        found = []
        for name in SYSTEM_TABLES:
            path = f"{self.config.system_dir}/{name}"
            if DeltaTable.isDeltaTable(self.spark, path):
                ref = delta_ref(path)
                found.append((ref, table_properties(self.spark, ref)))
        return found
