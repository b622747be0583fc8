"""What each target table has been applied through: ``_anycdc/applied``, and the
pending changelog rows a run starts with.

Every apply appends one row per table it covered (``table`` — the table's folder
under the target —, its source names, ``through``: the last ingest batch whose
changelog rows it holds, counts, the newest position and source time, the freshness
target) and, when no table is left pending, one row without a table: everything is
applied through that batch (the *watermark*: a restart reads the changelog only
after it).

The ledger is written after the tables' MERGEs. The MERGEs themselves carry the same
``through`` as Delta's idempotent-write version (``<query>:apply``), so a crash between
a MERGE and its ledger row costs nothing but a harmless re-apply: the next apply of the
table reads its rows again from the stale ``through`` on, and the position guards of
the MERGE (and Delta's version check, when it is the same batch again) leave what is
already there unchanged.

>>> Ledger.SCHEMA.split(", ")[:3]
['query STRING', 'table STRING', 'database STRING']
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final, NamedTuple

from anycdc.config import PipelineConfig
from anycdc.event import TABLE_OPS
from anycdc.schedule import Schedule, TableIdent, qualified_name
from anycdc.spark.commit import append_once
from anycdc.spark.local_rows import local_frame
from anycdc.spark.merge_sql import NAMES_A_TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

INGEST_BATCH: Final = "ingest_batch"
"""The changelog column of the micro-batch that ingested a row (NULL: applied on ingest by a
``replay-dead-letters`` run, or written before deferred applies existed)."""
PENDING_OPS: Final = tuple(sorted(op.value for op in TABLE_OPS))
"""The ops of the changelog rows an apply takes: row changes, DDL and TRUNCATE."""


@dataclass(frozen=True)
class Applied:
    """One table's apply, as the ledger keeps it."""

    ident: TableIdent
    path: str
    through: int
    events: int = 0
    max_position: str | None = None
    max_ts_ms: int | None = None
    reason: str | None = None
    freshness_s: float | None = None


class WriteId(NamedTuple):
    """Delta's idempotent-write identity of a write (:func:`~anycdc.spark.commit.append_once`):
    a replay of the same pair is skipped (a micro-batch's system-table appends use
    ``(query, batch id)``, an apply outside a batch ``(query:flush, its start in ms)``).

    >>> WriteId("anycdc", 7).of("failed:/t")
    WriteId(app_id='anycdc:failed:/t', version=7)
    """

    app_id: str
    version: int

    def of(self, part: str) -> WriteId:
        """The same version under an app id of its own (a write per table of one apply)."""
        return WriteId(f"{self.app_id}:{part}", self.version)


class Ledger:
    """The ``_anycdc/applied`` table of a target (see the module docstring)."""

    SCHEMA: ClassVar[str] = (
        "query STRING, table STRING, database STRING, schema STRING, source_table STRING, "
        "through BIGINT, events BIGINT, max_position STRING, max_ts_ms BIGINT, "
        "reason STRING, freshness_s DOUBLE, applied_at TIMESTAMP"
    )

    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        self.spark = spark
        self.config = config
        self.path = f"{config.system_dir}/applied"
        self.changelog = f"{config.system_dir}/changelog"

    def table_id(self, path: str) -> str:
        root = self.config.target.rstrip("/") + "/"
        return path[len(root) :] if path.startswith(root) else path

    def _exists(self, path: str) -> bool:
        from delta.tables import DeltaTable

        return bool(DeltaTable.isDeltaTable(self.spark, path))

    # ------------------------------------------------------------------ read
    def load(self, schedule: Schedule) -> Schedule:
        """Fill ``schedule`` with what the ledger says each table is applied through and
        the changelog rows ingested after that (due at once: ``restart``)."""
        from pyspark.sql import functions as F

        watermark = -1
        if self._exists(self.path):
            rows = (
                self.spark.read.format("delta")
                .load(self.path)
                .filter(F.col("query") == self.config.query_name)
                .groupBy("database", "schema", "source_table")
                .agg(F.max("through").alias("through"))
                .collect()
            )
            for row in rows:
                if row["source_table"] is None:
                    watermark = int(row["through"])
                else:
                    ident = (row["database"], row["schema"], row["source_table"])
                    schedule.through[ident] = int(row["through"])
        if not self._exists(self.changelog):
            return schedule
        log_frame = self.spark.read.format("delta").load(self.changelog)
        if INGEST_BATCH not in log_frame.columns:
            return schedule  # written before deferred applies: every row was applied on ingest
        pending = pending_per_batch(log_frame, watermark).collect()
        now_ms = int(time.time() * 1000)
        for row in sorted(pending, key=lambda r: int(r[INGEST_BATCH])):
            ident = (row["database"], row["schema"], row["table"])
            if not self.config.wants_table(qualified_name(ident)):
                continue
            # a run that stopped with rows pending: they are applied in the first batch
            schedule.ingested(
                ident, int(row[INGEST_BATCH]), int(row["rows"]), now_ms, "restart",
                row["produced_ms"],
            )  # fmt: skip
        return schedule

    def pending_rows(self, idents: Sequence[TableIdent], schedule: Schedule) -> DataFrame:
        """The changelog rows of ``idents`` ingested after each one's ``through``
        (``schedule.through``), up to the last batch logged."""
        from pyspark.sql import functions as F

        lowest = min(schedule.through.get(ident, -1) for ident in idents)
        frame = (
            self.spark.read.format("delta")
            .load(self.changelog)
            .filter(F.col(INGEST_BATCH) > F.lit(lowest))
        )
        return only_pending(frame, idents, schedule, self.spark)

    # ------------------------------------------------------------------ write
    def record(self, applied: Iterable[Applied], watermark: int | None, app: WriteId) -> None:
        """Append one row per table applied (and the watermark, when nothing is pending)."""
        from pyspark.sql import functions as F

        query = self.config.query_name
        rows: list[tuple[object, ...]] = [
            (
                query, self.table_id(a.path), a.ident[0], a.ident[1], a.ident[2], a.through,
                a.events, a.max_position, a.max_ts_ms, a.reason, a.freshness_s, None,
            )
            for a in applied
        ]  # fmt: skip
        if watermark is not None:
            rows.append(
                (query, None, None, None, None, watermark, None, None, None, "all", None, None)
            )
        if not rows:
            return
        # one file: a few rows spread over the session's default parallelism made a file
        # per core, each a file every later read of the ledger opens
        frame = (
            local_frame(self.spark, rows, self.SCHEMA)
            .coalesce(1)
            .withColumn("applied_at", F.current_timestamp())
        )
        append_once(frame, self.path, app.app_id, int(app.version), merge_schema=False)


def pending_per_batch(changelog: DataFrame, after_batch: int = -1) -> DataFrame:
    """The changelog rows some table takes, ingested after ``after_batch``, per table and
    ingest batch: ``rows``, and ``produced_ms``, the oldest Kafka record time among them
    (NULL in a changelog written before it was kept). The one definition of a table's
    pending rows: the run's schedule on a restart, and ``anycdc status``."""
    from pyspark.sql import functions as F

    produced = (
        F.col("produced_ms") if "produced_ms" in changelog.columns else F.lit(None).cast("bigint")
    )
    return (
        changelog.filter(
            (F.col(INGEST_BATCH) > F.lit(after_batch))
            & F.expr(NAMES_A_TABLE)
            & F.col("op").isin(*PENDING_OPS)
        )
        .groupBy("database", "schema", "table", INGEST_BATCH)
        .agg(F.count(F.lit(1)).alias("rows"), F.min(produced).alias("produced_ms"))
    )


def only_pending(
    frame: DataFrame, idents: Sequence[TableIdent], schedule: Schedule, spark: SparkSession
) -> DataFrame:
    """``frame``'s rows of the tables ``idents`` ingested after each table's ``through``."""
    from pyspark.sql import functions as F

    tables = local_frame(
        spark,
        [(*ident, schedule.through.get(ident, -1)) for ident in idents],
        "_p_database STRING, _p_schema STRING, _p_table STRING, _p_through BIGINT",
    )
    joined = frame.join(
        F.broadcast(tables),
        F.col("database").eqNullSafe(F.col("_p_database"))
        & F.col("schema").eqNullSafe(F.col("_p_schema"))
        & (F.col("table") == F.col("_p_table")),
    )
    return joined.filter(F.col(INGEST_BATCH) > F.col("_p_through")).select(*frame.columns)


__all__ = ["INGEST_BATCH", "Applied", "Ledger", "WriteId", "only_pending", "pending_per_batch"]
