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
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from anycdc import event
from anycdc.config import PipelineConfig
from anycdc.devtools.chaos import crash_point
from anycdc.errors import RunFailed, one_line
from anycdc.metrics import SCHEMA_CHANGE, PipelineMetrics
from anycdc.redact import Redactor
from anycdc.schedule import Schedule, TableIdent, qualified_name
from anycdc.spark.apply import (
    IncompatibleSchema,
    TableApplier,
    TablePlan,
    TableResult,
    TableSummary,
    build_plans,
    fold_actions,
    lit,
    q,
    table_condition,
    with_batch,
)
from anycdc.spark.commit import DeltaTables, LogState
from anycdc.spark.decode import decode_frame
from anycdc.spark.key_bound import KEY_NUMBER_TYPE, KeyBound, bound_column, log_version, read_bound
from anycdc.spark.ledger import (
    INGEST_BATCH,
    NAMES_A_TABLE,
    PENDING_OPS,
    Applied,
    Ledger,
    WriteId,
    only_pending,
)
from anycdc.spark.maintenance import AUTO_COMPACT, TableDetail, Upkeep, table_properties
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.source import raw_stream
from anycdc.spark.tombstones import MAINTENANCE_EVERY, Tombstones, table_tag

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

log = logging.getLogger("anycdc.pipeline")

TXN_APP_ID: Final = "spark.databricks.delta.write.txnAppId"
TXN_VERSION: Final = "spark.databricks.delta.write.txnVersion"
MATERIALIZE_SOURCE: Final = "spark.databricks.delta.merge.materializeSource"
ROW_OPS: Final = tuple(sorted(op.value for op in event.ROW_OPS))
CONTROL_OPS: Final = tuple(sorted(op.value for op in event.CONTROL_OPS))
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
SKIP_CONTROL: Final = "control"
"""Heartbeats and transaction markers (:data:`anycdc.event.CONTROL_OPS`)."""
SKIP_NO_TABLE: Final = "no-table"
"""A DDL that names no table (``CREATE DATABASE``)."""
SKIP_EXCLUDED: Final = "excluded"
"""A change of a table that ``include``/``exclude`` leave out."""
SKIP_REASONS: Final = (SKIP_CONTROL, SKIP_NO_TABLE, SKIP_EXCLUDED)
"""Why a changelog row is applied to no table: the documented skips (README, Semantics)."""
DETAIL_EVERY: Final = 16
"""A table's size (DESCRIBE DETAIL: whether its MERGE is key-bounded) is read on its first
apply in a run, then every so many applies; properties and schema are known in between."""
APPLIERS: Final[dict[str, type[TableApplier]]] = {"scd1": TableApplier, "scd2": Scd2Applier}
"""The applier of each ``mode`` (a table's: :meth:`Pipeline.applier_kind`)."""
FLUSH_APP: Final = ":flush"
APPLY_APP: Final = ":apply"
"""The app id suffix of the tables' MERGEs: their version is the ingest batch applied through."""


def _first(frame: DataFrame) -> Row:
    """The single row of an aggregate (always present)."""
    row = frame.first()
    assert row is not None
    return row


@dataclass
class BatchMetrics:
    """What one micro-batch (or the final apply of a run) did: one log line, and
    ``_anycdc/batches``."""

    batch_id: int
    messages: int = 0
    events: int = 0
    bytes: int = 0
    """The size of the batch's messages."""
    dead_letters: int = 0
    tables: list[TableResult] = field(default_factory=list)
    """The tables applied (their MERGEs ran in this batch)."""
    deferred: int = 0
    """Tables with pending changes that were not due."""
    heartbeat_ts_ms: int | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds per stage of the batch (decode, plan, schema, log, apply), in order."""
    flush: bool = False
    """An apply outside a micro-batch: the end of a run, or tables due between batches."""
    ending: bool = False
    """The apply at the end of a run."""
    source_ts_ms: int | None = None
    """The newest source time of the batch's events (what the lag is measured from)."""
    finished: float = 0.0
    """When it ended (``time.monotonic()``)."""
    apply_seconds: float = 0.0
    """The part of ``seconds`` spent applying the tables that were due."""
    behind: float | None = None
    """Micro-batches of backlog after this one (:func:`batches_behind`), if known."""
    skipped: dict[str, int] = field(default_factory=dict)
    """The batch's changelog rows that no table takes, by reason (:data:`SKIP_REASONS`)."""
    excluded: dict[str, int] = field(default_factory=dict)
    """The batch's changes of tables ``include``/``exclude`` leave out, per table."""

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``phases[phase]``."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.monotonic() - started

    @property
    def applied_events(self) -> int:
        return sum(t.events for t in self.tables)

    def line(self) -> str:
        """One log line: what came in, what was applied and deferred, where the time went.

        >>> m = BatchMetrics(3, messages=10, events=12, seconds=2.0, deferred=4)
        >>> m.line().split(" (")[0]
        'batch 3: 10 messages, 12 events in 2.0s = 6 events/s; 0 tables applied, 4 deferred, 0 dead letters'
        """
        rate = self.events / self.seconds if self.seconds else 0.0
        head = f"batch {self.batch_id}"
        if self.flush:
            head = "final apply" if self.ending else "apply between batches"
        failed = sum(1 for t in self.tables if t.error)
        text = (
            f"{head}: {self.messages} messages, {self.events} events in {self.seconds:.1f}s = "
            f"{rate:,.0f} events/s; {len(self.tables) - failed} tables applied"
            f"{self._appended_text()}, "
            + (f"{failed} failed (events dead-lettered), " if failed else "")
            + f"{self.deferred} deferred, {self.dead_letters} dead letters ({self._phase_text()})"
        )
        newest = max(self.source_ts_ms or 0, self.heartbeat_ts_ms or 0)
        if newest:
            lag = (time.time() * 1000 - newest) / 1000
            # a replay of old data (or a simulated clock) is hours behind: say so plainly
            text += f", newest source change {_age(lag)} old"
        if self.behind:
            text += f", {self.behind:.0f} batches of backlog"
        return text

    def _appended_text(self) -> str:
        appended = sum(1 for t in self.tables if t.appended)
        return f" ({appended} by append)" if appended else ""

    def _phase_text(self) -> str:
        return ", ".join(f"{name} {secs:.1f}s" for name, secs in self.phases.items())


def _age(seconds: float) -> str:
    """``4.1s``, ``12m``, ``5h``, ``3d`` (a lag in words a reader can take in at once).

    >>> _age(4.12), _age(720), _age(81112469.2)
    ('4.1s', '12m', '939d')
    """
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def batches_behind(progress: dict[str, Any], cap: int | None, messages: int) -> float | None:
    """Micro-batches still waiting after the current one, from the streaming query's last
    progress (Spark's ``lastProgress``: the batch before): a Kafka source reports how far
    its partitions are behind the latest offsets (on average), divided by what one batch
    takes (``cap``, else this batch's ``messages``), less the current batch. None when the
    source reports no such figure (a folder of files).

    >>> kafka = {"sources": [{"endOffset": {"t": {"0": 10, "1": 10}},
    ...          "metrics": {"avgOffsetsBehindLatest": "1000.0"}}]}
    >>> batches_behind(kafka, 400, 400)
    4.0
    >>> batches_behind({"sources": [{"metrics": {}}]}, 1, 1) is None
    True
    """
    waiting = None
    for source in progress.get("sources") or ():
        average = (source.get("metrics") or {}).get("avgOffsetsBehindLatest")
        if average is None:
            continue
        ends = source.get("endOffset")
        if isinstance(ends, str):
            ends = json.loads(ends)
        partitions = sum(len(p) for p in ends.values()) if isinstance(ends, dict) else 1
        waiting = (waiting or 0.0) + float(average) * max(1, partitions)
    if waiting is None:
        return None
    per_batch = cap or messages
    return max(0.0, waiting / per_batch - 1) if per_batch else 0.0


@dataclass
class KnownTable:
    """What this run knows of a target table between its applies (read once, then kept
    up to date by the run's own changes: anycdc is the table's only writer)."""

    columns: dict[str, str]
    """Column -> Spark type, with the ``_cdc_`` columns, as the table now is."""
    targets: dict[str, str] = field(default_factory=dict)
    """Source column -> its name in the table (:attr:`TableApplier.targets`)."""
    detail: TableDetail | None = None
    applies_since_detail: int = 0
    bound: KeyBound | None = None
    """No key above this as of a version (:mod:`anycdc.spark.key_bound`); None: not read."""
    log: LogState | None = None
    """The table's Delta log as the batched engine last read or wrote it
    (:mod:`anycdc.spark.commit`); None: not read yet."""


@dataclass
class Prepared:
    """A due table after its schema step: ready for its MERGE."""

    applier: TableApplier
    types: dict[str, str]
    """Column -> Spark type of the source's columns."""
    floor: str | None
    """The position of the last TRUNCATE applied: older events are dropped."""
    bound_column: str | None = None
    """The key column whose bound can turn the MERGE into an append (scd1)."""


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
        self._lock = threading.Lock()
        self._registered: set[str] = set()  # tables this run has put in the catalog
        self._batches_run = 0  # this run's batches (upkeep of the system tables)
        self._schedule: Schedule | None = None
        self.known: dict[str, KnownTable] = {}
        """Per table path: what this run knows of it (schema, properties, size)."""
        self._failure: BaseException | None = None  # what stopped a batch (run-wide)
        self._tables: DeltaTables | None = None  # the batched engine's transactions
        self._query: StreamingQuery | None = None  # its progress tells a backlog
        self._redactor = Redactor.from_config(self.config)
        """The ``tables:`` entries' excluded and masked columns (None: there are none)."""
        self.metrics = (
            PipelineMetrics(self.config.metrics_max_tables)
            if self.config.metrics_port is not None
            else None
        )
        """What :meth:`run` serves on ``metrics_port`` (None: not set)."""

    def applier_kind(self, plan: TablePlan) -> type[TableApplier]:
        """How the table is written: its current row per key (scd1) or every version
        (scd2), by its ``mode`` (its ``tables:`` entry's, else the run's)."""
        return APPLIERS[self.config.table_settings(plan.ident).mode]

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
                target=self._idle_applies, args=(query, stop), name="anycdc-idle", daemon=True
            )
            idle.start()
        try:
            if on_start is not None:
                on_start(query)
            query.awaitTermination(int(timeout) if timeout is not None else None)
        finally:
            stop.set()
            if query.isActive:
                query.stop()
            if idle is not None:
                idle.join()
        stopped = query.exception()
        if stopped is not None:
            # the batch's own exception says what failed; the query's wraps it in a traceback
            cause = self._failure if self._failure is not None else stopped
            raise RunFailed(f"the stream stopped: {one_line(cause)}") from None
        try:
            self.flush()
        except Exception as exc:
            raise RunFailed(f"the final apply failed: {one_line(exc)}") from None
        return self.history

    def flush(self) -> BatchMetrics | None:
        """Apply every table with pending changes now (the end of a run); None if none."""
        return self._apply_pending(ending=True)

    def _apply_pending(self, ending: bool, wait: bool = True) -> BatchMetrics | None:
        """Apply the due tables (every pending one when ``ending``) outside a micro-batch:
        through the last batch ingested, with an idempotent-write id of its own for the
        system tables (a batch's own used ``(query, batch)``). None when nothing is due or
        (``wait=False``) a batch is running."""
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            schedule = self.schedule()
            due = schedule.due(int(time.time() * 1000), ending=ending)
            if not due:
                return None
            started = time.monotonic()
            through = max(max(schedule.pending[ident].batches) for ident in due)
            metrics = BatchMetrics(through, flush=True, ending=ending)
            app = WriteId(self.config.query_name + FLUSH_APP, int(time.time() * 1000))
            with self._session_settings(self.spark):
                self._apply(self.spark, due, through, None, None, app, metrics)
            metrics.deferred = len(schedule.pending)
            self._record_batch(self.spark, metrics, app)
            metrics.seconds = time.monotonic() - started
        finally:
            self._lock.release()
        self._report(metrics)
        return metrics

    def _idle_applies(self, query: StreamingQuery, stop: threading.Event) -> None:
        """On an interval trigger, apply the tables that fall due while no batch comes (a
        source gone quiet runs no micro-batch: its pending tables would wait for one)."""
        policy = self.config.freshness_policy
        targets = list(policy.targets)
        tick = min(30.0, max(1.0, min(t for t in targets if t > 0) / 4 if any(targets) else 30.0))
        while not stop.wait(tick):
            if not query.isActive:
                return
            try:
                self._apply_pending(ending=False, wait=False)
            except Exception as exc:  # py4j and Spark raise several types; the next tick retries
                log.warning("apply between batches failed, retried later: %s", exc)

    def schedule(self) -> Schedule:
        """The run's schedule, read from the ledger on first use."""
        if self._schedule is None:
            schedule = Schedule(self.config.freshness_policy)
            if self.keep_ledger:
                Ledger(self.spark, self.config).load(schedule)
            self._schedule = schedule
        return self._schedule

    # ------------------------------------------------------------------ one batch
    def process_batch(self, raw: DataFrame, batch_id: int) -> None:
        from pyspark.sql import functions as F

        started = time.monotonic()
        spark = raw.sparkSession
        decoded = (
            decode_frame(raw, self.config.routing, self._redactor)
            .withColumn(INGEST_BATCH, F.lit(int(batch_id)).cast("bigint"))
            .persist()
        )
        try:
            with self._lock, self._session_settings(spark):
                metrics = self._process(spark, decoded, batch_id)
        except BaseException as exc:
            self._failure = exc  # Spark hands the query a traceback of it: keep the original
            raise
        finally:
            decoded.unpersist()
        metrics.seconds = time.monotonic() - started
        # a table whose freshness would run out before the next decision is due now: that is
        # one batch's ingest away (an apply of many tables is not what the next batch costs)
        self.schedule().lookahead_ms = int((metrics.seconds - metrics.apply_seconds) * 1000)
        self._report(metrics)

    @contextmanager
    def _session_settings(self, spark: SparkSession) -> Iterator[None]:
        """What every apply needs of its session, set for the ``with`` block and put back
        after it (an apply outside a batch runs on the caller's own session)."""
        settings = {
            # partial images are overlaid with map_concat: the newer value of a column wins
            "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
            # Delta copies a MERGE source it cannot prove deterministic before merging; ours
            # is (a pure function of the batch's offsets, folded in a total order) and already
            # cached: the copy is a job and a local checkpoint per table per apply for nothing
            MATERIALIZE_SOURCE: "none",
            AUTO_COMPACT: "true" if self.config.auto_compact else "false",
        }
        before: dict[str, str | None] = {name: spark.conf.get(name, None) for name in settings}
        for name, value in settings.items():
            spark.conf.set(name, value)
        try:
            yield
        finally:
            for name, old in before.items():
                if old is None:
                    spark.conf.unset(name)
                else:
                    spark.conf.set(name, old)

    @property
    def reports(self) -> list[BatchMetrics]:
        """Every micro-batch and every apply outside one, in the order they ended."""
        return sorted(self.history + self.applies, key=lambda m: m.finished)

    def _report(self, metrics: BatchMetrics) -> None:
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
            metrics.observe_schedule(self.schedule())
            if not batch.flush:
                metrics.observe_progress(self._last_progress())
        except Exception as exc:
            log.warning("metrics not updated: %s", one_line(exc))

    def _process(self, spark: SparkSession, decoded: DataFrame, batch_id: int) -> BatchMetrics:
        from pyspark.sql import functions as F

        metrics = BatchMetrics(batch_id)
        with metrics.timed("decode"):
            counts = _first(
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
                )
            )
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
        app = WriteId(self.config.query_name, batch_id)
        with metrics.timed("schema"):
            self._system_upkeep(spark)
        with metrics.timed("plan"):
            schedule = self.schedule()
            wanted = decoded.filter(F.col("error").isNull() & F.expr(NAMES_A_TABLE))
            summary = self._summary(wanted)
            now_ms = int(time.time() * 1000)
            for table in summary:
                name = qualified_name(table.ident)
                if self.config.wants_table(name):
                    schedule.ingested(
                        table.ident, batch_id, table.rows, now_ms, table.urgency,
                        table.produced_ms,
                    )  # fmt: skip
                else:
                    metrics.excluded[name] = table.rows
        with metrics.timed("log"):
            # the batch made durable: its events, then its bad messages (each once per batch)
            logged = decoded.filter(F.col("error").isNull())
            if not self.keep_ledger:
                logged = logged.withColumn(INGEST_BATCH, F.lit(None).cast("bigint"))
            self._append(logged, "changelog", app)
            if metrics.dead_letters:
                dead = decoded.filter(F.col("error").isNotNull())
                self._append(dead_letter_rows(dead), "dead_letter", app)
        metrics.behind = self._batches_behind(metrics.messages)
        schedule.catching_up = bool(
            self.config.catch_up_batches
            and metrics.behind is not None
            and metrics.behind > self.config.catch_up_batches
        )
        due = schedule.due(now_ms)
        if due:
            # only this batch's rows pending: its summary is the plan, its cached rows the input
            only_now = all(schedule.pending[ident].oldest_batch == batch_id for ident in due)
            applying = time.monotonic()
            self._apply(spark, due, batch_id, wanted, summary if only_now else None, app, metrics)
            metrics.apply_seconds = time.monotonic() - applying
        metrics.deferred = len(schedule.pending)
        with metrics.timed("log"):
            self._record_batch(spark, metrics, app)
        return metrics

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

    def _summary(self, wanted: DataFrame) -> list[TableSummary]:
        """The plan job: per table, its distinct column lists with the first position each
        came at, the image column names, key, truncate and DDL, and its number of rows."""
        from pyspark.sql import functions as F

        table = ("database", "schema", "table")
        no_names = F.array().cast("array<string>")
        # a changelog written by an earlier version has no record times
        produced = (
            F.col("produced_ms") if "produced_ms" in wanted.columns else F.lit(None).cast("bigint")
        )
        # two stages in one job: per distinct column list first (few), then per table
        per_columns = (
            wanted.filter(F.col("op").isin(*PENDING_OPS))
            .groupBy(*table, "columns")
            .agg(
                F.count(F.lit(1)).alias("rows"),
                F.min(F.coalesce(F.col("position"), F.lit(""))).alias("position"),
                # formats without types still name their columns in the images
                F.array_distinct(
                    F.flatten(
                        F.collect_set(
                            F.array_union(
                                F.coalesce(F.map_keys("after"), no_names),
                                F.coalesce(F.map_keys("before"), no_names),
                            )
                        )
                    )
                ).alias("image_columns"),
                F.max("key").alias("key"),
                F.max(F.col("row_id").isNotNull()).alias("has_row_id"),
                F.max(F.when(F.col("op") == "truncate", F.col("position"))).alias(
                    "truncate_position"
                ),
                F.max(F.col("op").isin(*ROW_OPS)).alias("has_rows"),
                F.min(produced).alias("produced_ms"),
                F.collect_list(
                    F.when(F.col("op") == "ddl", F.struct(F.col("position"), F.col("ddl")))
                ).alias("ddl"),
            )
        )
        rows = (
            per_columns.groupBy(*table)
            .agg(
                F.sum("rows").alias("rows"),
                F.collect_list(F.struct("position", "columns")).alias("sightings"),
                F.array_distinct(F.flatten(F.collect_list("image_columns"))).alias("image_columns"),
                F.max("key").alias("key"),
                F.max("has_row_id").alias("has_row_id"),
                F.max("truncate_position").alias("truncate_position"),
                F.max("has_rows").alias("has_rows"),
                F.min("produced_ms").alias("produced_ms"),
                F.flatten(F.collect_list("ddl")).alias("ddl"),
            )
            .collect()
        )
        return [TableSummary.from_row(row) for row in rows]

    # ------------------------------------------------------------------ apply
    def _apply(
        self,
        spark: SparkSession,
        due: list[TableIdent],
        through: int,
        current: DataFrame | None,
        summary: list[TableSummary] | None,
        app: WriteId,
        metrics: BatchMetrics,
    ) -> None:
        """Bring the ``due`` tables up to date through ingest batch ``through``: their
        pending rows (``current``: this batch's, in memory; older ones from the changelog),
        one plan and schema step per table, one fold, a MERGE each, then the tombstones and
        the ledger (written with ``app``, the idempotent-write id of this batch or flush)."""
        from pyspark.sql import functions as F

        schedule = self.schedule()
        ledger = Ledger(spark, self.config)
        reasons = {
            ident: schedule.reason(ident, int(time.time() * 1000), current is None) for ident in due
        }
        older = [ident for ident in due if (schedule.pending[ident].oldest_batch or 0) < through]
        if current is None or older:
            frames = [ledger.pending_rows(due, schedule).filter(F.col(INGEST_BATCH) <= through)]
            if current is not None:
                frames = [frames[0].filter(F.col(INGEST_BATCH) < through)]
                frames.append(only_pending(current, due, schedule, spark))
            pending = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
            pending = pending.persist()
        else:
            pending = only_pending(current, due, schedule, spark) if summary is None else current
        try:
            with metrics.timed("plan"):
                tables = summary if summary is not None else self._summary(pending)
                wanted_tables = [t for t in tables if t.ident in set(due)]
                plans = {
                    ident: plan
                    for ident, plan in build_plans(wanted_tables, self.config).items()
                    if self.config.wants_table(plan.qualified)
                }
            with metrics.timed("schema"):
                prepared, failed = self._prepare(spark, plans, through)
            failures = []
            with metrics.timed("log"):
                for plan, reason in failed:
                    failures.append(self._dead_letter_table(pending, plan, reason, app))
            with metrics.timed("apply"):
                results = self._merge_all(pending, prepared, through, app)
            results += failures
            metrics.tables += results
        finally:
            if pending is not current:
                pending.unpersist()
        by_table = {r.table: r for r in results}
        policy = self.config.freshness_policy
        applied = []
        for ident in due:
            name = qualified_name(ident)
            result = by_table.get(name)
            applied.append(
                Applied(
                    ident,
                    self.config.table_path(*ident),
                    through,
                    events=result.events if result else 0,
                    max_position=result.max_position if result else None,
                    max_ts_ms=result.max_ts_ms if result else None,
                    reason=reasons.get(ident),
                    freshness_s=policy.target_s(name),
                )
            )
        schedule.applied(due, through)
        crash_point("before-ledger")
        if self.keep_ledger:
            with metrics.timed("log"):
                watermark = through if not schedule.pending else None
                ledger.record(applied, watermark, app)

    def _prepare(
        self, spark: SparkSession, plans: dict[TableIdent, TablePlan], through: int
    ) -> tuple[list[Prepared], list[tuple[TablePlan, str]]]:
        """Each due table's schema step (create, evolve), properties and TRUNCATE: all
        idempotent by themselves, so outside the idempotent-write window. What the run
        knows of a table (:class:`KnownTable`) spares it a look at the table per apply."""
        prepared = []
        failed: list[tuple[TablePlan, str]] = []
        properties: list[tuple[str, dict[str, str]]] = []
        for plan in plans.values():
            try:
                item = self._prepare_one(spark, plan, through, properties)
            except IncompatibleSchema as exc:
                failed.append((plan, self._failed(plan, f"{SCHEMA_CHANGE}: {exc}")))
                continue
            except Exception as exc:  # whatever Spark or Delta raise: this table only
                failed.append((plan, self._failed(plan, one_line(exc))))
                continue
            if item is not None:
                prepared.append(item)
        # upkeep is idempotent: outside the idempotent-write window, like the schema changes
        vacuumed = set(Upkeep(spark, self.config).vacuum_due(properties))
        for item in prepared:
            if item.applier.table_ref() in vacuumed:
                self.known[item.applier.path].detail = None  # its stamp changed: read it again
                self._own_commits(item.applier.path)
        return prepared, failed

    def _own_commits(self, path: str) -> None:
        """The run has just committed to the table itself (a schema change, TRUNCATE,
        VACUUM): its key bound holds at the table's new version (these only add columns
        or remove rows)."""
        known = self.known.get(path)
        if known is not None and known.bound is not None:
            version = log_version(self.spark, path, after=known.bound.version)
            known.bound = KeyBound(known.bound.high, version if version is not None else -1)

    def _failed(self, plan: TablePlan, reason: str) -> str:
        """Log one line for a table that failed and forget what the run knew of it (its
        next apply looks at it afresh); returns ``reason``."""
        log.warning(
            "%s: %s (its events of this apply are dead-lettered; the other tables go on)",
            plan.qualified,
            reason,
        )
        self.known.pop(self.config.table_path(plan.database, plan.schema, plan.table), None)
        return reason

    def _prepare_one(
        self,
        spark: SparkSession,
        plan: TablePlan,
        through: int,
        properties: list[tuple[str, dict[str, str]]],
    ) -> Prepared | None:
        """One table's schema step, properties and TRUNCATE (see :meth:`_prepare`); None
        for DDL of a table that has no row yet. Its properties are added to ``properties``
        (for the VACUUMs that are due)."""
        applier = self.applier_kind(plan)(spark, self.config, plan)
        known = self.known.get(applier.path)
        if not plan.has_rows and known is None and not applier.exists():
            return None  # DDL for a table we have no row of yet: its first rows carry the schema
        if known is None:
            types = applier.ensure_schema(through)
        else:
            types = applier.ensure_schema(through, known.columns, known.targets)
        if not applier.unborn:  # else once its first write has created it
            self._register(applier)
        if known is None:
            known = self.known[applier.path] = KnownTable(applier.columns)
        changed = known.columns != applier.columns
        known.columns = applier.columns
        known.targets = applier.targets
        if applier.created:
            # what a new table holds is known: no look at it
            known.detail = applier.created_detail()
            known.applies_since_detail = 0
        elif known.detail is None or known.applies_since_detail >= DETAIL_EVERY:
            known.detail = applier.detail()  # the size: whether its MERGE is key-bounded
            known.applies_since_detail = 0
        applier.last_detail = known.detail
        known.applies_since_detail += 1
        props = known.detail.properties
        props.update(applier.align_properties(props))
        if applier.align_clustering(known.detail):
            known.detail = replace(
                known.detail,
                clustering=tuple(applier.target(c) for c in applier.settings.cluster_by),
            )
            changed = True
        floor = applier.truncate_position(props)
        if plan.truncate_position and (floor is None or plan.truncate_position > floor):
            applier.apply_truncate(plan.truncate_position, through)
            floor = plan.truncate_position
            props.update(applier.truncated_properties(floor))
            changed = True
        properties.append((applier.table_ref(), props))
        if changed:
            self._own_commits(applier.path)
        # history tables insert a version per change: no key bound turns that into an append
        column = None if applier.history else bound_column(plan.key, types)
        return Prepared(applier, types, floor, column)

    def _system_upkeep(self, spark: SparkSession) -> None:
        """Expired tombstones and the ``_anycdc`` tables' VACUUMs: in the first batch of a
        run, then every :data:`MAINTENANCE_EVERY` batches (idempotent, no write window)."""
        if self._batches_run % MAINTENANCE_EVERY == 0:
            Tombstones(spark, self.config).maintain()
            Upkeep(spark, self.config).vacuum_due(self._system_tables(), stamp_new=True)
        self._batches_run += 1

    def _system_tables(self) -> list[tuple[str, dict[str, str]]]:
        """The ``_anycdc`` tables that exist, with their properties (for VACUUM)."""
        from delta.tables import DeltaTable

        found = []
        for name in SYSTEM_TABLES:
            path = f"{self.config.system_dir}/{name}"
            if DeltaTable.isDeltaTable(self.spark, path):
                ref = f"delta.{q(path)}"
                found.append((ref, table_properties(self.spark, ref)))
        return found

    def _register(self, applier: TableApplier) -> None:
        """Put the table in the Spark catalog (``table_name``), once per run and table."""
        if self.config.table_name and applier.path not in self._registered:
            name = applier.register()
            self._registered.add(applier.path)  # one thread per table: no race on a path
            log.info("%s: in the catalog as %s", applier.plan.qualified, name)

    @contextmanager
    def _txn(self, spark: SparkSession, write: WriteId) -> Iterator[None]:
        """Delta's idempotent-write settings on the session (MERGE honours only those)."""
        spark.conf.set(TXN_APP_ID, write.app_id)
        spark.conf.set(TXN_VERSION, str(int(write.version)))
        try:
            yield
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)

    def _merge_all(
        self,
        wanted: DataFrame,
        prepared: list[Prepared],
        through: int,
        app: WriteId,
    ) -> list[TableResult]:
        """Fold every prepared table's actions in one shuffle, MERGE each table with the
        version ``through`` (``<query>:apply``), then record the deleted keys (``app``)."""
        from pyspark.sql import functions as F

        if not prepared:
            return []
        # every table's actions in one cached frame: counted, folded and read by each
        # table's write without recomputing the filters and casts per use
        actions = with_batch(self._all_actions(wanted, prepared), through)
        actions = actions.localCheckpoint(eager=True)
        folded = None
        try:
            stats = self._action_stats(actions)
            current = [table_tag(i) for i, item in enumerate(prepared) if not item.applier.history]
            if current:  # the tables of one row per key (scd1); history tables keep every version
                store = Tombstones(wanted.sparkSession, self.config)
                tables = store.table_ids([item.applier.path for item in prepared])
                # one shuffle folds every table's keys and one read of the tombstones
                # guards them all; each MERGE then reads its slice
                ok = actions.filter(F.col("_bad").isNull())
                if len(current) < len(prepared):  # some are history tables: not theirs
                    ok = ok.filter(F.col("_t").isin(current))
                ok = ok.drop("_bad")
                folded = store.guard(fold_actions(ok, by=("_t", "_key")), tables)
                folded = with_batch(folded, through).localCheckpoint(eager=True)

            def apply_one(index: int) -> TableResult:
                item = prepared[index]
                started = time.monotonic()
                try:
                    result = self._apply_table(
                        item, actions, folded, index, stats.get(index), through
                    )
                except Exception as exc:  # whatever Spark or Delta raise: this table only
                    plan = item.applier.plan
                    reason = self._failed(plan, one_line(exc))
                    return self._dead_letter_table(wanted, plan, reason, app)
                result.seconds = time.monotonic() - started
                return result

            workers = min(self.config.max_concurrent_tables, len(prepared))
            with self._txn(
                wanted.sparkSession, WriteId(self.config.query_name + APPLY_APP, through)
            ):
                if workers == 1:
                    results = [apply_one(i) for i in range(len(prepared))]
                else:
                    with ThreadPoolExecutor(workers, thread_name_prefix="anycdc-merge") as pool:
                        results = list(pool.map(apply_one, range(len(prepared))))
            if folded is not None and any(r.deletes and not r.error for r in results):
                # after every MERGE: a tombstone never stands for a delete not yet applied
                # (nor for one of a table that failed: its replay must still apply it)
                ok_tags = [table_tag(i) for i, r in enumerate(results) if not r.error]
                applied = folded.filter(F.col("_t").isin(ok_tags))
                store.record(self._deleted_keys(applied, tables), app)
            return results
        except BaseException:
            for item in prepared:
                if item.applier.unborn:  # not written: what the run knows of it is not so
                    self.known.pop(item.applier.path, None)
            raise
        finally:
            if folded is not None:
                folded.unpersist()
            actions.unpersist()

    def _all_actions(self, wanted: DataFrame, prepared: list[Prepared]) -> DataFrame:
        """Every table's row actions, tagged ``_t`` (:func:`table_tag` of its index in
        ``prepared``), each with ``_bad`` (why it cannot be cast to its column, or null)."""
        frames = []
        for index, item in enumerate(prepared):
            applier = item.applier
            events = wanted.where(table_condition(applier.plan))
            actions = applier.bad_casts(applier.actions(events, item.types, item.floor), item.types)
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
        # each table's slice is a few partitions of the cached batch: a task per slice
        # would be thousands of tiny tasks
        width = int(self.spark.conf.get("spark.sql.shuffle.partitions") or 4)
        return union.coalesce(max(1, width))

    @staticmethod
    def _deleted_keys(folded: DataFrame, tables: DataFrame) -> DataFrame:
        """Every table's deleted keys with their position (``table``, ``_key``, ``position``)."""
        from pyspark.sql import functions as F

        deleted = folded.filter(F.col("st.kind") == "delete").select(
            "_t", "_key", F.col("st.pos").alias("position")
        )
        return deleted.join(F.broadcast(tables), "_t").drop("_t")

    @staticmethod
    def _action_stats(actions: DataFrame) -> dict[int, Row]:
        """Counts, newest position and time per table, for all tables in one job (a
        job per table costs more than the table's MERGE when batches are small)."""
        from pyspark.sql import functions as F

        ok = F.col("_bad").isNull()
        upsert = ok & (F.col("kind") == "upsert")
        key_number = F.when(upsert, F.col("_kv"))
        rows = (
            actions.groupBy("_t")
            .agg(
                F.sum(ok.cast("int")).alias("n"),
                F.sum(((F.col("kind") == "delete") & ok).cast("int")).alias("deletes"),
                F.sum((~ok).cast("int")).alias("bad"),
                F.max(F.when(ok, F.col("position"))).alias("pos"),
                F.max(F.when(ok, F.col("ts_ms"))).alias("ts"),
                F.min(F.when(ok, F.col("ts_ms"))).alias("ts_min"),
                # the key bound's inputs (a MERGE or an append: _apply_table)
                F.min(key_number).cast("string").alias("key_low"),
                F.max(key_number).cast("string").alias("key_high"),
                F.sum((upsert & F.col("_kv").isNull()).cast("int")).alias("key_unknown"),
                F.sum((upsert & (F.col("op") != "insert")).cast("int")).alias("not_inserts"),
            )
            .collect()
        )
        return {int(row["_t"]): row for row in rows}

    def _apply_table(
        self,
        item: Prepared,
        actions: DataFrame,
        folded: DataFrame | None,
        index: int,
        stats: Row | None,
        through: int,
    ) -> TableResult:
        from pyspark.sql import functions as F

        applier, types = item.applier, item.types
        plan = applier.plan
        mine = F.col("_t") == F.lit(table_tag(index))
        n = int(stats["n"] or 0) if stats else 0
        deletes = int(stats["deletes"] or 0) if stats else 0
        dead = int(stats["bad"] or 0) if stats else 0
        # the MERGE first: when it fails, every event of the table is dead-lettered instead
        appended = False
        created_now = applier.unborn
        if n and folded is not None and not applier.history:
            created = applier.created
            append = self._appendable(item, stats) if stats and not created else False
            mine_folded = folded.filter(mine).drop("_t")
            if not self._commit_batched(item, mine_folded, through, created or append):
                applier.merge(mine_folded, types, through, guarded=True, append=append)
            appended = created or append
            if stats and item.bound_column:
                self._raise_bound(item, stats, created)
        elif n:
            good = actions.filter(mine & F.col("_bad").isNull()).drop("_t", "_bad")
            applier.apply(good, types, through, has_deletes=bool(deletes))
        if applier.unborn:
            applier.finish_create()  # no row written: it exists all the same
        if created_now:
            self._register(applier)
        if dead:
            bad = actions.filter(mine & F.col("_bad").isNotNull()).withColumn(
                "kafka_key", F.lit(None).cast("binary")
            )
            # several writers append to dead_letter in one apply: each needs its own app id
            self._append(
                dead_letter_rows(bad, plan.qualified, F.col("_bad")),
                "dead_letter",
                WriteId(f"{self.config.query_name}:dead:{applier.path}", through),
            )
        return TableResult(
            table=plan.qualified,
            path=applier.path,
            events=n,
            deletes=deletes,
            upserts=n - deletes,
            dead_letters=dead,
            max_position=stats["pos"] if stats else None,
            max_ts_ms=stats["ts"] if stats else None,
            min_ts_ms=stats["ts_min"] if stats else None,
            appended=appended,
        )

    def _commit_batched(
        self, item: Prepared, folded: DataFrame, through: int, append: bool
    ) -> bool:
        """Write the table's folded actions with the batched engine
        (:meth:`TableApplier.commit_batched`; a table this write creates:
        :meth:`TableApplier.create_batched`); False where the MERGE writes them instead:
        ``apply_engine: merge``, a table over ``rewrite_max_mb`` (then rewritten whole it
        would cost more than the MERGE), a rewrite of a table with the change data feed on
        (the MERGE writes its update and delete rows; an append needs none)."""
        applier = item.applier
        if self.config.apply_engine != "batched":
            return False
        known = self.known[applier.path]
        tables = self._delta_tables()
        app_id = self.config.query_name + APPLY_APP
        if applier.unborn:
            known.log = applier.create_batched(folded, item.types, through, tables, app_id)
            return True
        snapshot, state = tables.state(applier.path, known.log)
        known.log = state
        if not append and (
            state.size_bytes > self.config.rewrite_max_mb * 2**20 or tables.change_feed(snapshot)
        ):
            return False
        known.log = applier.commit_batched(
            folded, item.types, through, tables, state, app_id, append=append, snapshot=snapshot
        )
        applier.created = False
        return True

    def _delta_tables(self) -> DeltaTables:
        if self._tables is None:
            self._tables = DeltaTables(self.spark)
        return self._tables

    def _appendable(self, item: Prepared, stats: Row) -> bool:
        """Whether the table's pending changes are upserts of keys above all of its own
        (:mod:`anycdc.spark.key_bound`): then an append writes what the MERGE would."""
        if not item.bound_column or stats["deletes"] or stats["key_unknown"]:
            return False
        if stats["key_low"] is None:
            return False
        path = item.applier.path
        known = self.known[path]
        bound = known.bound
        if (
            bound is not None
            and log_version(self.spark, path, after=bound.version) != bound.version
        ):
            bound = known.bound = None  # a commit the run did not make
        if bound is None:
            if stats["not_inserts"]:
                # an update of a row the source has: in the table, or about to be; reading
                # the bound (~4 jobs: the table's statistics) would buy nothing
                return False
            column = item.applier.target(item.bound_column)  # its name in the table
            bound = known.bound = read_bound(self.spark, path, item.applier.table_ref(), column)
        return bound.admits(int(stats["key_low"]))

    def _raise_bound(self, item: Prepared, stats: Row, created: bool) -> None:
        """After the table's write: its bound with the keys the write brought, at the
        version the write made; forgotten when another commit came in between."""
        path = item.applier.path
        known = self.known[path]
        high = int(stats["key_high"]) if stats["key_high"] is not None else None
        if created:
            # the run has just created it: it holds this write's keys and nothing else
            version = log_version(self.spark, path)
            known.bound = KeyBound(high, version) if version is not None else None
            return
        bound = known.bound
        if bound is None:
            return
        version = log_version(self.spark, path, after=bound.version)
        if version is not None and version - bound.version <= 1:
            # one commit: this write (none: Delta skipped it as already applied)
            known.bound = bound.raised(high, version)
        else:
            known.bound = None

    # ------------------------------------------------------------------ system tables
    def _append(self, frame: DataFrame, name: str, app: WriteId) -> None:
        """Append to a system table once per ``app`` (Delta skips a replayed pair); one
        written by an earlier version of anycdc gains the newer columns."""
        path = f"{self.config.system_dir}/{name}"
        writer = frame.write.format("delta").mode("append").options(**app.options())
        writer.option("mergeSchema", "true").save(path)

    def _dead_letter_table(
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
                self._append(events, "dead_letter", app.of(f"failed:{path}"))
        finally:
            events.unpersist()
        return TableResult(plan.qualified, path, dead_letters=count, error=reason)

    def _record_batch(self, spark: SparkSession, metrics: BatchMetrics, app: WriteId) -> None:
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
        frame = spark.createDataFrame(rows, BATCHES_SCHEMA).withColumn(
            "processed_at", F.current_timestamp()
        )
        self._append(frame, "batches", app)


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
    started = _first(spark.sql("SELECT current_timestamp() AS now"))["now"]
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
