"""The ingest step of every micro-batch: decode it, append it to the changelog, plan it.

Where it sits: source -> **decode -> changelog -> plan** -> apply -> commit. The stream
runner (:mod:`anycdc.spark.pipeline`) hands each micro-batch of raw messages here: they are
decoded by Python workers (:func:`~anycdc.spark.decode.decode_frame`), counted (one job),
their tables summarized (:func:`~anycdc.spark.plan.summarize`, the plan job) and entered in
the schedule with their summaries, then
the batch is made durable: its events appended to ``_anycdc/changelog`` (tagged with the
batch id, ``ingest_batch``) and its bad messages to ``_anycdc/dead_letter``
(:mod:`anycdc.spark.system_tables`), each once per batch. What is due then is the apply
round's (:mod:`anycdc.spark.apply_round`), which combines the kept summaries of older
batches (and summarizes only rows a restart found pending).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from anycdc import event
from anycdc.config import PipelineConfig
from anycdc.redact import Redactor
from anycdc.schedule import Schedule, qualified_name
from anycdc.source.routing import AUTO, DetectionAdvice
from anycdc.spark.batch_metrics import SKIP_CONTROL, SKIP_NO_TABLE, BatchMetrics
from anycdc.spark.decode import decode_frame
from anycdc.spark.ledger import INGEST_BATCH, NAMES_A_TABLE, WriteId
from anycdc.spark.plan import TableSummary, summarize
from anycdc.spark.system_tables import SystemTables, dead_letter_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

log = logging.getLogger("anycdc.pipeline")

ROW_OPS: Final = tuple(sorted(op.value for op in event.ROW_OPS))
CONTROL_OPS: Final = tuple(sorted(op.value for op in event.CONTROL_OPS))


def only_row(frame: DataFrame) -> Row:
    """The single row of an aggregate (always present)."""
    row = frame.first()
    assert row is not None
    return row


@dataclass
class Ingested:
    """What the ingest step leaves for the apply round of its batch."""

    wanted: DataFrame
    """The batch's events that name a table (the cached batch, filtered)."""
    summary: list[TableSummary]
    """Its tables (:func:`~anycdc.spark.plan.summarize`): the plan, when the batch's rows are all that is due."""
    now_ms: int
    """When the batch's tables were entered in the schedule (what is due is decided at)."""


class IngestStep:
    """Decodes micro-batches and makes them durable (see the module docstring)."""

    def __init__(
        self,
        config: PipelineConfig,
        system: SystemTables,
        schedule: Callable[[], Schedule],
        keep_ledger: bool,
    ) -> None:
        self.config = config
        self.system = system
        self.schedule = schedule
        """The run's schedule (read from the ledger on first use, in the plan phase)."""
        self.keep_ledger = keep_ledger
        self._redactor = Redactor.from_config(config)
        """The ``tables:`` entries' excluded and masked columns (None: there are none)."""
        routing = config.routing
        detects = AUTO in {routing.default.format, *(r.format for r in routing.per_topic.values())}
        self._advice = DetectionAdvice(routing) if detects else None
        """Which detected topics carry one format (logged once each); None: none is detected."""

    def decode(self, raw: DataFrame, batch_id: int) -> DataFrame:
        """The micro-batch's messages decoded into changelog rows, tagged with the batch."""
        from pyspark.sql import functions as F

        return decode_frame(raw, self.config.routing, self._redactor).withColumn(
            INGEST_BATCH, F.lit(int(batch_id)).cast("bigint")
        )

    def ingest(
        self,
        spark: SparkSession,
        decoded: DataFrame,
        batch_id: int,
        metrics: BatchMetrics,
        app: WriteId,
    ) -> Ingested:
        """Count the decoded batch into ``metrics``, run the system tables' upkeep when due,
        enter its tables in the schedule (those ``include``/``exclude`` leave out are
        counted as excluded), then append it to the changelog and its bad messages to the
        dead letters (``app``: once per batch)."""
        from pyspark.sql import functions as F

        # the formats detected, per source, of the messages that decoded (a few pairs), in
        # the run's first batches (DetectionAdvice.listening)
        advice = self._advice if self._advice is not None and self._advice.listening else None
        formats = F.collect_set(
            F.when(
                F.col("error").isNull() & (F.col("event_index") == 0), F.array("source", "format")
            )
        )
        with metrics.timed("decode"):
            counts = only_row(
                decoded.agg(
                    F.count(F.lit(1)).alias("rows"),
                    F.sum(F.col("error").isNotNull().cast("int")).alias("errors"),
                    F.max(F.when(F.col("op").isin(*CONTROL_OPS), F.col("ts_ms"))).alias("hb"),
                    F.max(F.when(F.col("op").isin(*ROW_OPS), F.col("ts_ms"))).alias("ts"),
                    F.sum((F.col("event_index") == 0).cast("int")).alias("messages"),
                    F.sum(F.when(F.col("event_index") == 0, F.length("raw"))).alias("bytes"),
                    F.sum(F.col("op").isin(*CONTROL_OPS).cast("int")).alias(SKIP_CONTROL),
                    F.sum(
                        (
                            F.col("error").isNull()
                            & ~F.col("op").isin(*CONTROL_OPS)
                            & ~F.expr(f"coalesce({NAMES_A_TABLE}, false)")
                        ).cast("int")
                    ).alias(SKIP_NO_TABLE),
                    *([formats.alias("formats")] if advice is not None else []),
                )
            )
        if advice is not None:
            for line in advice.seen((source, fmt) for source, fmt in counts["formats"]):
                log.info("%s", line)
        metrics.events = int(counts["rows"] or 0) - int(counts["errors"] or 0)
        metrics.dead_letters = int(counts["errors"] or 0)
        metrics.heartbeat_ts_ms = counts["hb"]
        metrics.source_ts_ms = counts["ts"]
        metrics.messages = int(counts["messages"] or 0)
        metrics.bytes = int(counts["bytes"] or 0)
        metrics.skipped = {
            reason: int(counts[reason] or 0)
            for reason in (SKIP_CONTROL, SKIP_NO_TABLE)
            if counts[reason]
        }
        with metrics.timed("schema"):
            self.system.upkeep(spark)
        with metrics.timed("plan"):
            schedule = self.schedule()
            wanted = decoded.filter(F.col("error").isNull() & F.expr(NAMES_A_TABLE))
            summary = summarize(wanted)
            now_ms = int(time.time() * 1000)
            for table in summary:
                name = qualified_name(table.ident)
                if self.config.wants_table(name):
                    schedule.ingested(
                        table.ident, batch_id, table.rows, now_ms, table.urgency,
                        table.produced_ms, summary=table,
                    )  # fmt: skip
                else:
                    metrics.excluded[name] = table.rows
        with metrics.timed("log"):
            # the batch made durable: its events, then its bad messages (each once per batch)
            logged = decoded.filter(F.col("error").isNull())
            if not self.keep_ledger:
                logged = logged.withColumn(INGEST_BATCH, F.lit(None).cast("bigint"))
            self.system.append(logged, "changelog", app)
            if metrics.dead_letters:
                dead = decoded.filter(F.col("error").isNotNull())
                self.system.append(dead_letter_rows(dead), "dead_letter", app)
        return Ingested(wanted, summary, now_ms)
