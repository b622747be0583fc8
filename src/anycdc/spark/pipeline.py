"""The streaming query: raw messages -> changelog -> Delta tables when due, exactly once.

Two steps, each idempotent on its own:

1. **ingest** (every micro-batch): decode the batch (Python workers), append its
   events to ``_anycdc/changelog`` (tagged with the batch id, ``ingest_batch``) and
   its bad messages to ``_anycdc/dead_letter`` — the only writes every table shares;
2. **apply** (the tables that are due, :mod:`anycdc.schedule`): read their pending
   changelog rows in one frame (the current batch from memory, older batches from the
   changelog), create/evolve each table's schema and apply TRUNCATEs (idempotent by
   themselves), fold every table's actions in one shuffle, then MERGE each table
   (``max_concurrent_tables`` at a time) with Delta's idempotent-write settings
   ``txnAppId`` = ``<query>:apply`` and ``txnVersion`` = the last ingest batch the
   apply covers: a table's MERGE and what it has been applied through commit
   together, so a crash between ingest and apply, between two tables, or inside an
   apply replays to the same tables; then its deleted keys (tombstones) and one row
   per table in ``_anycdc/applied`` (the ledger a restart reads).

A table that is not due waits (its rows are durable in the changelog); the run
applies every pending table before it ends, and a restarted run applies what an
earlier one left pending in its first batch. ``freshness: 0`` applies every table in
every batch.

Output layout under ``target``: ``<database>/<table>`` (one Delta table per
source table), ``_anycdc/changelog``, ``_anycdc/dead_letter``,
``_anycdc/batches`` (per batch and applied table: counts, last position, last
source time), ``_anycdc/applied`` (per apply and table: the ingest batch it is
applied through), ``_anycdc/tombstones/...`` (SCD2: ``_anycdc/scd2_ends/...``),
``_anycdc/checkpoint``.

The stages, in the order of the flow (source -> decode -> changelog -> plan -> apply ->
commit), each in a module of its own:

* this module, the **stream runner**: :class:`Pipeline` starts the query, runs it to its
  end (applying between batches on an interval trigger), flushes what is pending, and
  reports each batch (:mod:`anycdc.spark.batch_metrics`);
* **ingest** (:mod:`anycdc.spark.ingest`): decode, count, plan and append a micro-batch;
* the **apply round** (:mod:`anycdc.spark.apply_round`): the due tables' schema steps and
  writes, each table's state between applies in :mod:`anycdc.spark.table_state`, its
  SQL from :mod:`anycdc.spark.merge_sql`;
* the ``_anycdc`` **system tables** (:mod:`anycdc.spark.system_tables`): dead letters and
  batch records.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from anycdc.config import PipelineConfig
from anycdc.errors import RunFailed, one_line
from anycdc.metrics import PipelineMetrics
from anycdc.schedule import Schedule, backlog_seconds
from anycdc.spark.apply import TableApplier, TablePlan
from anycdc.spark.apply_outside import FLUSH_APP, OutsideApplies
from anycdc.spark.apply_round import (
    APPLIERS,
    APPLY_APP,
    MATERIALIZE_SOURCE,
    TXN_APP_ID,
    TXN_VERSION,
    ApplyRound,
    apply_settings,
)
from anycdc.spark.batch_metrics import (
    SKIP_CONTROL,
    SKIP_EXCLUDED,
    SKIP_NO_TABLE,
    SKIP_REASONS,
    BatchMetrics,
    batches_behind,
)
from anycdc.spark.ingest import CONTROL_OPS, ROW_OPS, Ingested, IngestStep, only_row
from anycdc.spark.ledger import Ledger, WriteId
from anycdc.spark.merge_sql import NOW_SQL
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.source import raw_stream
from anycdc.spark.system_tables import (
    BATCHES_SCHEMA,
    DEAD_LETTER_COLUMNS,
    SYSTEM_TABLES,
    SystemTables,
    dead_letter_rows,
)
from anycdc.spark.table_state import DETAIL_EVERY, TableState

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

log = logging.getLogger("anycdc.pipeline")
STOP_POLL_S: Final = 1
"""How often the runner looks for a stop request while the query runs."""


QUERY_LOGGERS: Final = (
    "org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution",  # Spark 4.1+
    "org.apache.spark.sql.execution.streaming.MicroBatchExecution",
)
"""The JVM loggers that report a query's end by an exception (with its traceback)."""
PY4J_CALLBACKS: Final = "py4j.clientserver"
"""The Python logger that reports an exception raised in a callback (``foreachBatch``)."""


def quiet_expected_end(spark: SparkSession) -> None:
    """Silence the reports of the query's end by :class:`StopRequested`: it is the stop a
    user asked for, said in one line by the runner, not an error with two tracebacks."""
    logging.getLogger(PY4J_CALLBACKS).setLevel(logging.CRITICAL)
    try:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        level = jvm.org.apache.logging.log4j.Level.OFF
        for name in QUERY_LOGGERS:
            jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, level)
    except Exception as exc:  # a cluster's own logging setup: the reports stay, nothing else
        log.debug("query logs not silenced: %s", exc)


class StopRequested(Exception):
    """Raised by a micro-batch that began after :meth:`Pipeline.request_stop`: the batch is
    not processed, and the query ends without committing it."""


"""The app id suffix of an apply outside a micro-batch's system-table writes."""


class Pipeline:
    """Builds and runs the streaming query for one :class:`PipelineConfig`.

    Example (a folder of messages into Delta tables, everything there is, then stop)::

        from anycdc.spark.session import get_spark
        from anycdc.config import PipelineConfig
        Pipeline(get_spark(), PipelineConfig(source_dir="in", target="out")).run()

    ``keep_ledger=False`` (``replay-dead-letters``): every table is applied in the batch
    that ingests it, and nothing of the run's batches is recorded as pending.
    """

    def __init__(
        self,
        spark: SparkSession,
        config: PipelineConfig,
        on_batch: Callable[[BatchMetrics], None] | None = None,
        keep_ledger: bool = True,
    ) -> None:
        self.spark = spark
        if not keep_ledger:  # every table in the batch that ingests it: no target but 0
            config = config.with_overrides(
                freshness=0.0,
                table_freshness={},
                tables={p: replace(t, freshness=None) for p, t in config.tables.items()},
            )
        self.config = config
        self.on_batch = on_batch
        self.keep_ledger = keep_ledger
        self.history: list[BatchMetrics] = []
        """Each micro-batch of this run (what :meth:`run` returns)."""
        self.applies: list[BatchMetrics] = []
        """Each apply outside a micro-batch: between batches, and the final one."""
        self._lock = threading.Lock()  # a micro-batch, or an apply that must not overlap one
        self._report_lock = threading.Lock()
        self._schedule: Schedule | None = None
        self._failure: BaseException | None = None  # what stopped a batch (run-wide)
        self._query: StreamingQuery | None = None  # its progress tells a backlog
        self._stopping = threading.Event()  # request_stop: end after the batch in progress
        self.stopped_by: str | None = None
        """Why the run stopped before its end (:meth:`request_stop`), or None."""
        # the stages: each micro-batch is ingested, then the due tables are applied; both
        # write to the _anycdc tables
        self._system = SystemTables(spark, self.config)
        self._ingest = IngestStep(self.config, self._system, self.schedule, keep_ledger)
        self._round = ApplyRound(spark, self.config, self._system, self.schedule, keep_ledger)
        self._outside = OutsideApplies(
            spark,
            self.config,
            self._system,
            self._round,
            self.schedule,
            self._lock,
            self._report,
            beside=self.applies_beside_ingest,
        )
        self.known: dict[str, TableState] = self._round.known
        """Per table path: what this run knows of it (schema, properties, size)."""
        self.metrics = (
            PipelineMetrics(self.config.metrics_max_tables)
            if self.config.metrics_port is not None
            else None
        )
        """What :meth:`run` serves on ``metrics_port`` (None: not set)."""

    def applier_kind(self, plan: TablePlan) -> type[TableApplier | Scd2Applier]:
        """How the table is written: its current row per key (scd1) or every version
        (scd2), by its ``mode`` (its ``tables:`` entry's, else the run's)."""
        return self._round.applier_kind(plan)

    @property
    def applies_beside_ingest(self) -> bool:
        """The due tables are applied beside the next batch's ingest
        (:mod:`anycdc.spark.apply_beside`): ``apply_beside_ingest``, a ledger kept, and no
        freshness of 0 (those tables are applied in the batch that ingests them)."""
        return self.config.applies_beside_ingest and self.keep_ledger

    # ------------------------------------------------------------------ query
    def start(self) -> StreamingQuery:
        raw = raw_stream(self.spark, self.config)
        writer = (
            raw.writeStream.queryName(self.config.query_name)
            .option("checkpointLocation", self.config.checkpoint_dir)
            .foreachBatch(self.process_batch)
        )
        if self.config.trigger == "available-now":
            writer = writer.trigger(availableNow=True)
        else:
            interval = self.config.processing_interval
            assert interval is not None  # validate() accepts available-now or interval=<n><unit>
            writer = writer.trigger(processingTime=interval)
        self._query = writer.start()
        if self.metrics is not None:
            self.metrics.set_alive(True)
        return self._query

    def run(
        self,
        timeout: float | None = None,
        on_start: Callable[[StreamingQuery], None] | None = None,
    ) -> list[BatchMetrics]:
        """Start, wait until the query ends (available-now) or ``timeout`` seconds pass,
        then apply every table still pending (:meth:`flush`). Returns the micro-batches
        (:attr:`history`; the applies outside them are :attr:`applies`).

        ``on_start`` gets the running query first (e.g. to watch its ``lastProgress``).
        A failure of one table never gets here (its events are dead-lettered); what
        does concerns the whole run and raises :class:`~anycdc.errors.RunFailed`, one
        line that says what failed. With ``metrics_port``, :attr:`metrics` are served
        meanwhile (:mod:`anycdc.metrics`)."""
        if self.metrics is None:
            return self._run(timeout, on_start)
        port = self.config.metrics_port
        assert port is not None
        try:
            self.metrics.serve(port, self.config.metrics_address)
        except OSError as exc:
            raise RunFailed(f"the metrics server did not start: {one_line(exc)}") from None
        try:
            return self._run(timeout, on_start)
        finally:
            self.metrics.set_alive(False)
            self.metrics.stop()

    def _run(
        self, timeout: float | None, on_start: Callable[[StreamingQuery], None] | None
    ) -> list[BatchMetrics]:
        try:
            query = self.start()
        except Exception as exc:  # a bad checkpoint, an unreachable source, ...
            raise RunFailed(f"the stream did not start: {one_line(exc)}") from None
        stop = threading.Event()
        idle = None
        if self.config.trigger != "available-now":
            idle = threading.Thread(
                target=self._outside.idle, args=(query, stop), name="anycdc-idle", daemon=True
            )
            idle.start()
        try:
            if on_start is not None:
                on_start(query)
            self._await(query, timeout)
        finally:
            stop.set()
            if self._stopping.is_set():
                with self._lock:  # the batch in progress ends first; a later one refuses
                    pass
            if query.isActive:
                query.stop()
            if idle is not None:
                idle.join()
            self.settle()  # the round beside ingest in progress ends (it is cheaper whole)
        stopped = query.exception()
        if stopped is not None and not isinstance(self._failure, StopRequested):
            # the batch's own exception says what failed; the query's wraps it in a traceback
            cause = self._failure if self._failure is not None else stopped
            raise RunFailed(f"the stream stopped: {one_line(cause)}") from None
        if self._stopping.is_set():
            self._say_where_it_stands()
            return self.history
        try:
            self.flush()
        except Exception as exc:
            raise RunFailed(f"the final apply failed: {one_line(exc)}") from None
        return self.history

    def settle(self) -> None:
        """Wait for the apply beside ingest in progress, if any, and start no other (after
        the query has stopped: :meth:`run` does it before its final apply)."""
        self._outside.settle()

    def _await(self, query: StreamingQuery, timeout: float | None) -> None:
        """Wait until the query ends, ``timeout`` seconds pass or a stop is requested
        (checked every second: a signal handler runs between these waits)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopping.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            try:
                # whole seconds: pyspark's awaitTermination takes an int
                if query.awaitTermination(
                    STOP_POLL_S if left is None else max(1, min(STOP_POLL_S, int(left)))
                ):
                    return
            except Exception:  # the query ended by an exception: the caller reads it
                if query.isActive:
                    raise
                return

    def request_stop(self, why: str) -> None:
        """End the run soon and cleanly (a signal, a deploy): the micro-batch in progress
        finishes and commits, a batch that had not begun is left for the next run (it
        replays from the checkpoint), and the tables still pending wait in the changelog
        for the next run, which applies them once. Safe to call from a signal handler."""
        if self._stopping.is_set():
            return
        self.stopped_by = why
        self._stopping.set()
        log.warning(
            "stopping (%s): the batch in progress finishes, then the run ends; pending tables "
            "are applied by the next run (a second signal stops at once)",
            why,
        )

    def _say_where_it_stands(self) -> None:
        """The log's last word after :meth:`request_stop`: what is committed, what waits."""
        done = [m.batch_id for m in self.history]
        pending = self.schedule().pending
        log.warning(
            "stopped (%s): %s; %d table%s with changes pending in the changelog; run the same "
            "command again to resume (the checkpoint and the ledger say where)",
            self.stopped_by,
            f"last batch committed {max(done)}" if done else "no batch committed by this run",
            len(pending),
            "" if len(pending) == 1 else "s",
        )

    def flush(self) -> BatchMetrics | None:
        """Apply every table with pending changes now (the end of a run); None if none."""
        return self._outside.pending(ending=True)

    def schedule(self) -> Schedule:
        """The run's schedule, read from the ledger on first use."""
        if self._schedule is None:
            schedule = Schedule(self.config.freshness_policy)
            if self.keep_ledger:
                Ledger(self.spark, self.config).load(schedule)
            # what an earlier run left pending is in the changelog: an apply may cover it
            logged = [b for state in schedule.pending.values() for b in state.batches]
            if logged and self._outside.ingested_through is None:
                self._outside.ingested_through = max(logged)
            self._schedule = schedule
        return self._schedule

    # ------------------------------------------------------------------ one batch
    def process_batch(self, raw: DataFrame, batch_id: int) -> None:
        """One micro-batch (``foreachBatch``): its ingest (:mod:`anycdc.spark.ingest`), then
        the apply round of the tables that are due (:mod:`anycdc.spark.apply_round`)."""
        if self._stopping.is_set():
            # a batch after a stop request: not ingested, so not committed; the next run
            # replays it from the checkpoint (returning would mark its offsets done)
            self._failure = StopRequested(f"batch {batch_id} left for the next run")
            quiet_expected_end(raw.sparkSession)
            raise self._failure
        started = time.monotonic()
        spark = raw.sparkSession
        try:
            with self._lock, apply_settings(spark, self.config):
                metrics = self._process(spark, raw, batch_id)
        except BaseException as exc:
            self._failure = exc  # Spark hands the query a traceback of it: keep the original
            raise
        metrics.seconds = time.monotonic() - started
        # a table whose freshness would run out before the next decision is due now: that is
        # one batch's ingest away (an apply of many tables is not what the next batch costs)
        self.schedule().lookahead_ms = int((metrics.seconds - metrics.apply_seconds) * 1000)
        self._report(metrics)

    @property
    def reports(self) -> list[BatchMetrics]:
        """Every micro-batch and every apply outside one, in the order they ended."""
        return sorted(self.history + self.applies, key=lambda m: m.finished)

    def _report(self, metrics: BatchMetrics) -> None:
        with self._report_lock:  # a batch and an apply beside it may end together
            log.info("%s", metrics.line())
            metrics.finished = time.monotonic()
            (self.applies if metrics.flush else self.history).append(metrics)
            if self.metrics is not None:
                self._observe(self.metrics, metrics)
            if self.on_batch:
                self.on_batch(metrics)

    def _observe(self, metrics: PipelineMetrics, batch: BatchMetrics) -> None:
        """Hand the batch's counts, what waits and the Kafka lag to :attr:`metrics` (no Spark
        job: what the batch has counted already). A failure here stops nothing."""
        try:
            metrics.observe_batch(batch)
            schedule = self.schedule()
            with schedule.lock:
                metrics.observe_schedule(schedule)
            if not batch.flush:
                metrics.observe_progress(self._last_progress())
        except Exception as exc:
            log.warning("metrics not updated: %s", one_line(exc))

    def _process(self, spark: SparkSession, raw: DataFrame, batch_id: int) -> BatchMetrics:
        """Ingest the batch, then apply the tables due after it and record both."""
        metrics = BatchMetrics(batch_id)
        app = WriteId(self.config.query_name, batch_id)
        ingesting = time.monotonic()
        batch = self._ingest.ingest(spark, raw, batch_id, metrics, app)
        self._outside.ingested_through = batch_id  # its changelog rows are committed
        try:
            self._apply_due(spark, batch, batch_id, metrics, app, time.monotonic() - ingesting)
        finally:
            batch.release()
        self._ingest.applies_in_batch = metrics.own_rows_applied
        metrics.deferred = len(self.schedule().pending)
        with metrics.timed("log"):
            self._system.record_batch(spark, metrics, app)
        return metrics

    def _apply_due(
        self,
        spark: SparkSession,
        batch: Ingested,
        batch_id: int,
        metrics: BatchMetrics,
        app: WriteId,
        ingest_seconds: float,
    ) -> None:
        """Apply the tables due after the ingested ``batch``: in the micro-batch, or beside
        the next one's ingest (hand them to the worker, unless its round still runs: then
        they stay pending for the next decision)."""
        schedule = self.schedule()
        behind = metrics.behind = self._batches_behind(metrics.messages)
        catch_up = self.config.catch_up_batches
        with schedule.lock:
            schedule.behind(
                catching_up=bool(catch_up and behind is not None and behind > catch_up),
                # a shorter backlog (its last batch included): what reading it takes, at this pace
                backlog_s=backlog_seconds(behind, catch_up, ingest_seconds),
                now_ms=batch.now_ms,
            )
            due = schedule.due(batch.now_ms)
        if due and self._outside.beside:
            # this batch's rows are committed to the changelog: the round may cover them
            metrics.handed = len(due) if self._outside.hand_over(due, batch_id) else 0
        elif due:
            # only this batch's rows pending: its summary is the plan (and its cached rows,
            # where the engine cached them, the input)
            only_now = all(schedule.pending[ident].oldest_batch == batch_id for ident in due)
            applying = time.monotonic()
            summary = batch.summary if only_now else None
            self._round.apply(spark, due, batch_id, batch.wanted, summary, app, metrics)
            metrics.apply_seconds = time.monotonic() - applying
            schedule.apply_s = metrics.apply_seconds / len(due)

    def _batches_behind(self, messages: int) -> float | None:
        """How many micro-batches the stream is behind its source after this one (None:
        not known yet): from the last progress of the query (:func:`batches_behind`)."""
        progress = self._last_progress()
        if not progress:
            return None
        cap = self.config.max_offsets_per_trigger
        return batches_behind(progress, cap, messages)

    def _last_progress(self) -> dict[str, Any] | None:
        """The streaming query's last progress (of the batch before), if any."""
        query = self._query
        try:
            return query.lastProgress if query is not None else None
        except Exception:  # a query being stopped: no figure
            return None


def replay_dead_letters(spark: SparkSession, config: PipelineConfig) -> tuple[int, int]:
    """Re-run the dead letters through the pipeline (after a fix or an option change).

    Messages that now decode and apply are removed from ``_anycdc/dead_letter``;
    the others stay, and so do those without their message (``raw`` NULL: a table whose
    ``tables:`` entry excludes or masks columns) (a message that fails again — it does not decode, or its table
    still fails — is recorded again with the reason). Returns ``(replayed,
    still_failing)``; a failure of the whole replay raises :class:`RunFailed`.
    """
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from anycdc.decoding import MessageDecoder
    from anycdc.errors import AnyCdcError
    from anycdc.source.routing import DecodeRoute

    path = f"{config.system_dir}/dead_letter"
    if not DeltaTable.isDeltaTable(spark, path):
        return 0, 0
    dead = spark.read.format("delta").load(path).collect()
    routing = config.routing
    decoders: dict[DecodeRoute, MessageDecoder] = {}
    fixed = []
    for row in dead:
        if row["raw"] is None:
            # a redacted table's (tables: exclude_columns, mask_columns): its message is not
            # kept, so it stays, to be replayed from the source (would decode as a tombstone)
            continue
        route = routing.route(row["source"] or "")
        decoder = decoders.get(route)
        if decoder is None:
            decoder = decoders[route] = MessageDecoder(route.format, route.option_map)
        try:
            decoder.decode(row["raw"], row["kafka_key"])
        except AnyCdcError:
            continue
        fixed.append(row)
    if not fixed:
        return 0, len(dead)
    raw = spark.createDataFrame(
        [(r["source"], r["partition"], r["offset"], r["kafka_key"], r["raw"]) for r in fixed],
        "source STRING, partition INT, offset BIGINT, key BINARY, value BINARY",
    )
    started = only_row(spark.sql(NOW_SQL))["now"]
    replay = config.with_overrides(query_name=f"{config.query_name}-replay")
    # a fresh, increasing version: each replay is a new idempotent unit of work
    try:
        Pipeline(spark, replay, keep_ledger=False).process_batch(raw, int(time.time() * 1000))
    except Exception as exc:
        raise RunFailed(f"the replay failed: {one_line(exc)}") from None
    coords = {(r["source"], r["partition"], r["offset"]) for r in fixed}
    condition = F.lit(False)
    for source, partition, offset in coords:
        condition = condition | (
            (F.col("source") == source) & (F.col("partition") == partition) & (F.col("offset") == offset)
        )  # fmt: skip
    # a message that failed again during the replay was recorded afresh: keep that record
    again = spark.read.format("delta").load(path).filter(F.col("failed_at") >= F.lit(started))
    failed_again = (
        again.filter(condition).select("source", "partition", "offset").distinct().count()
    )
    condition = condition & (F.col("failed_at") < F.lit(started))
    DeltaTable.forPath(spark, path).delete(condition)
    return len(fixed) - failed_again, len(dead) - len(fixed) + failed_again


# what other modules and tests import from here, wherever it now lives
__all__: Sequence[str] = [
    "APPLIERS",
    "APPLY_APP",
    "BATCHES_SCHEMA",
    "CONTROL_OPS",
    "DEAD_LETTER_COLUMNS",
    "DETAIL_EVERY",
    "FLUSH_APP",
    "MATERIALIZE_SOURCE",
    "ROW_OPS",
    "SKIP_CONTROL",
    "SKIP_EXCLUDED",
    "SKIP_NO_TABLE",
    "SKIP_REASONS",
    "SYSTEM_TABLES",
    "TXN_APP_ID",
    "TXN_VERSION",
    "BatchMetrics",
    "Pipeline",
    "TableState",
    "batches_behind",
    "dead_letter_rows",
    "replay_dead_letters",
]
