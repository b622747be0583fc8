"""The ingest step of every micro-batch: decode it, append it to the changelog, plan it.

Where it sits: source -> **decode -> changelog -> plan** -> apply -> commit. The stream
runner (:mod:`anycdc.spark.pipeline`) hands each micro-batch of raw messages here. Its events
are appended to ``_anycdc/changelog`` (tagged with the batch id, ``ingest_batch``) and its bad
messages to ``_anycdc/dead_letter`` (:mod:`anycdc.spark.system_tables`), each once per batch;
its tables are entered in the schedule with their summaries
(:class:`~anycdc.spark.plan.TableSummary`). What is due then is the apply round's
(:mod:`anycdc.spark.apply_round`), which combines the kept summaries of older batches.

Two engines (``ingest_engine``), the same rows, counts and summaries:

* ``single-pass`` (the default): one Spark job decodes the batch and appends it to the
  changelog; the decode tasks count their own rows (:mod:`anycdc.spark.tally`) and an
  observation of the write brings the counts to the driver. Nothing is cached: an apply in
  the same batch reads the batch's rows back from the changelog, and a batch with dead
  letters is decoded a second time for them (only then);
* ``cached`` (the reference): the decoded batch is cached, counted (one job), summarized
  (:func:`~anycdc.spark.plan.summarize`, the plan job) and appended from the cache. It also
  serves ``replay-dead-letters`` (no batch ids in the changelog to read a batch back by), a
  batch the changelog already holds (a replay after a crash: Delta skips its append, so no
  write job would count it), and a batch likely to apply its own rows (the batch before
  applied a table that had nothing pending from before it, as a ``freshness`` of 0 does
  every batch; at first, a run with such a table): that apply reads the cache, which costs
  less than reading a small batch back from the changelog. A batch after a round of
  deferred tables (their rows pending from many batches) ingests single-pass.
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
from anycdc.spark.ledger import INGEST_BATCH, WriteId
from anycdc.spark.merge_sql import NAMES_A_TABLE, NAMES_A_TABLE_OR_FALSE
from anycdc.spark.plan import TableSummary, summarize
from anycdc.spark.system_tables import SystemTables, dead_letter_rows
from anycdc.spark.tally import TALLY_OP, BatchTally

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession

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

    wanted: DataFrame | None
    """The batch's events that name a table (the cached batch, filtered); None: read them
    from the changelog (the single-pass engine caches nothing)."""
    summary: list[TableSummary]
    """Its tables (:func:`~anycdc.spark.plan.summarize`): the plan, when the batch's rows are all that is due."""
    now_ms: int
    """When the batch's tables were entered in the schedule (what is due is decided at)."""
    cached: DataFrame | None = None
    """The cached decoded batch (the cached engine), until :meth:`release`."""

    def release(self) -> None:
        """Drop the cached copy of the batch (once its apply round is done)."""
        if self.cached is not None:
            self.cached.unpersist()
            self.cached = None


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

        self._kafka = config.source_dir is None
        """Records come from Kafka (else from files, whose tasks read several files)."""
        self.applies_in_batch = any(t <= 0 for t in config.freshness_policy.targets)
        """Whether the next batch is likely to apply a table of its own rows (set by the
        runner after each batch: :attr:`BatchMetrics.own_rows_applied
        <anycdc.spark.batch_metrics.BatchMetrics.own_rows_applied>`; at first, whether a
        table is applied every batch): then its rows are cached for that apply, which
        reading them back from the changelog costs more. Not whether the batch before
        applied a table at all: a round of deferred tables is followed by batches that apply
        none, the first of them the biggest (what arrived during the round): in one uniform
        run's event log, 481,078 events ingested cached at ~63 us an event, where its
        single-pass batches took ~36."""
        self.engines: dict[int, str] = {}
        """The engine that ingested each batch of this run (by batch id)."""
        self._logged_through: int | None = None
        """The last batch the changelog held for this query when the run began (-1: none)."""

    def decode(self, raw: DataFrame, batch_id: int, tally: bool = False) -> DataFrame:
        """The micro-batch's messages decoded into changelog rows, tagged with the batch
        (``tally``: with each decode task's tally row, :func:`decode_frame`)."""
        from pyspark.sql import functions as F

        return decode_frame(raw, self.config.routing, self._redactor, tally).withColumn(
            INGEST_BATCH, F.lit(int(batch_id)).cast("bigint")
        )

    def ingest(
        self,
        spark: SparkSession,
        raw: DataFrame,
        batch_id: int,
        metrics: BatchMetrics,
        app: WriteId,
    ) -> Ingested:
        """Decode the micro-batch ``raw``, count it into ``metrics``, run the system tables'
        upkeep when due, enter its tables in the schedule (those ``include``/``exclude``
        leave out are counted as excluded), and append it to the changelog and its bad
        messages to the dead letters (``app``: once per batch), by the ``ingest_engine``
        (see the module docstring). The caller :meth:`~Ingested.release`\\ s the result."""
        if (
            self.config.ingest_engine == "single-pass"
            and self.keep_ledger
            and not self.applies_in_batch
            and batch_id > self._changelog_through(spark, app)
        ):
            self.engines[batch_id] = "single-pass"
            return self._single_pass(spark, raw, batch_id, metrics, app)
        self.engines[batch_id] = "cached"
        decoded = self.decode(raw, batch_id).persist()
        try:
            batch = self._cached(spark, decoded, batch_id, metrics, app)
        except BaseException:
            decoded.unpersist()
            raise
        batch.cached = decoded
        return batch

    def _changelog_through(self, spark: SparkSession, app: WriteId) -> int:
        """The last batch of this query the changelog held when the run began (-1: none);
        read once a run (later batches are this run's own, each past the one before)."""
        if self._logged_through is None:
            path = f"{self.config.system_dir}/changelog"
            self._logged_through = self.system.delta_tables().txn_version(path, app.app_id)
        return self._logged_through

    def _single_pass(
        self,
        spark: SparkSession,
        raw: DataFrame,
        batch_id: int,
        metrics: BatchMetrics,
        app: WriteId,
    ) -> Ingested:
        """The single-pass engine: one job decodes and appends, the tasks' tallies count."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        self.schedule()  # read from the ledger before this batch is in the changelog
        observed = Observation(f"anycdc-ingest-{batch_id}")
        marker = F.col("op") == F.lit(TALLY_OP)
        decoded = self.decode(raw, batch_id, tally=True).observe(
            observed, F.collect_list(F.when(marker, F.col("raw"))).alias("tallies")
        )
        # one phase, "decode", as the cached engine's first: here it includes the append
        with metrics.timed("decode"):
            logged = decoded.filter(F.col("error").isNull() & ~marker)
            self.system.append(logged, "changelog", app)
        tally = BatchTally.merge(BatchTally.from_json(t) for t in observed.get["tallies"])
        self._count(tally, metrics)
        with metrics.timed("schema"):
            self.system.upkeep(spark)
        with metrics.timed("plan"):
            summary = tally.summaries()
            now_ms = self._schedule(summary, batch_id, metrics)
        if tally.errors:
            with metrics.timed("log"):
                # decoded again, for its dead letters only: the one job above kept no copy
                failing = raw.filter(self._failing_partitions(tally)) if self._kafka else raw
                dead = self.decode(failing, batch_id).filter(F.col("error").isNotNull())
                self.system.append(dead_letter_rows(dead), "dead_letter", app)
        return Ingested(None, summary, now_ms)

    @staticmethod
    def _failing_partitions(tally: BatchTally) -> Column:
        """The raw records of the Kafka partitions that had a dead letter. A Kafka batch's
        task reads one partition's offset range, so a filter by partition leaves each task
        its records in order: they decode as they did (a split update's halves included)."""
        from pyspark.sql import functions as F

        condition = F.lit(False)
        for source, partition in sorted({(s, p) for s, p, _ in tally.bad}, key=str):
            condition = condition | (
                F.col("source").eqNullSafe(F.lit(source))
                & F.col("partition").eqNullSafe(F.lit(partition))
            )
        return condition

    def _count(self, tally: BatchTally, metrics: BatchMetrics) -> None:
        """The batch's counts into ``metrics`` (and the formats detected, when listening)."""
        advice = self._advice if self._advice is not None and self._advice.listening else None
        if advice is not None:
            for line in advice.seen(
                (s, f) for s, f in tally.formats if s is not None and f is not None
            ):
                log.info("%s", line)
        metrics.events = tally.rows - tally.errors
        metrics.dead_letters = tally.errors
        metrics.heartbeat_ts_ms = tally.heartbeat_ts_ms
        metrics.source_ts_ms = tally.source_ts_ms
        metrics.messages = tally.messages
        metrics.bytes = tally.bytes
        skipped = {SKIP_CONTROL: tally.control, SKIP_NO_TABLE: tally.no_table}
        metrics.skipped = {reason: n for reason, n in skipped.items() if n}

    def _schedule(self, summary: list[TableSummary], batch_id: int, metrics: BatchMetrics) -> int:
        """Enter the batch's tables in the schedule (an excluded one is counted as such);
        returns when (what is due is decided at)."""
        schedule = self.schedule()
        now_ms = int(time.time() * 1000)
        with schedule.lock:  # an apply beside ingest may be marking tables applied
            for table in summary:
                name = qualified_name(table.ident)
                if self.config.wants_table(name):
                    schedule.ingested(
                        table.ident, batch_id, table.rows, now_ms, table.urgency,
                        table.produced_ms, summary=table,
                    )  # fmt: skip
                else:
                    metrics.excluded[name] = table.rows
        return now_ms

    def _cached(
        self,
        spark: SparkSession,
        decoded: DataFrame,
        batch_id: int,
        metrics: BatchMetrics,
        app: WriteId,
    ) -> Ingested:
        """The cached engine (the reference): Spark aggregates over the cached batch."""
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
                            & ~F.expr(NAMES_A_TABLE_OR_FALSE)
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
            wanted = decoded.filter(F.col("error").isNull() & F.expr(NAMES_A_TABLE))
            summary = summarize(wanted)
            now_ms = self._schedule(summary, batch_id, metrics)
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
