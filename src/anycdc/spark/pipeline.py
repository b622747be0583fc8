"""The streaming query: raw messages -> changelog + dead letters -> Delta tables, exactly once.

One ``foreachBatch`` call per micro-batch:

1. decode the batch (Python workers) and cache it;
2. **phase A** (no idempotency settings): create/evolve each touched table's
   schema and apply TRUNCATEs — both idempotent by themselves (in SCD2 mode a
   TRUNCATE closes versions in phase B instead, see :mod:`anycdc.spark.scd2`);
3. **phase B** (``txnAppId`` = query name, ``txnVersion`` = batch id, set on
   the session): append the changelog and dead letters, MERGE every touched
   table (concurrently, ``max_concurrent_tables`` at a time) and its
   tombstones (SCD2: its history recomputation and end markers), append the
   batch's metrics. Each Delta table gets exactly one write per batch in this
   phase, so a batch replayed after a crash is skipped table by table by
   Delta, and the MERGE position guards make it harmless anyway;
4. log one line of metrics.

Output layout under ``target``: ``<database>/<table>`` (one Delta table per
source table), ``_anycdc/changelog``, ``_anycdc/dead_letter``,
``_anycdc/batches`` (per batch and table: counts, last position, last source
time), ``_anycdc/tombstones/...`` (SCD2: ``_anycdc/scd2_ends/...``),
``_anycdc/checkpoint``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from anycdc.config import PipelineConfig
from anycdc.spark.apply import (
    IncompatibleSchema,
    TableApplier,
    TablePlan,
    TableResult,
    build_plans,
    fold_actions,
    q,
    with_batch,
)
from anycdc.spark.decode import decode_frame
from anycdc.spark.maintenance import Upkeep, table_properties
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.source import raw_stream
from anycdc.spark.tombstones import MAINTENANCE_EVERY, Tombstones, table_tag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

log = logging.getLogger("anycdc.pipeline")

TXN_APP_ID: Final = "spark.databricks.delta.write.txnAppId"
TXN_VERSION: Final = "spark.databricks.delta.write.txnVersion"
MATERIALIZE_SOURCE: Final = "spark.databricks.delta.merge.materializeSource"
ROW_OPS: Final = ("insert", "update", "delete", "snapshot")
SYSTEM_TABLES: Final = ("changelog", "dead_letter", "batches", "tombstones")  # under _anycdc
DEAD_LETTER_COLUMNS: Final = (
    "source", "partition", "offset", "kafka_key", "raw", "format", "error",
)  # fmt: skip
BATCHES_SCHEMA: Final = (
    "batch_id BIGINT, table STRING, path STRING, events BIGINT, dead_letters BIGINT, "
    "max_position STRING, max_ts_ms BIGINT, heartbeat_ts_ms BIGINT, error STRING, "
    "processed_at TIMESTAMP"
)


def _first(frame: DataFrame) -> Row:
    """The single row of an aggregate (always present)."""
    row = frame.first()
    assert row is not None
    return row


@dataclass
class BatchMetrics:
    """What one micro-batch did (logged as one line, kept in ``_anycdc/batches``)."""

    batch_id: int
    messages: int = 0
    events: int = 0
    dead_letters: int = 0
    tables: list[TableResult] = field(default_factory=list)
    heartbeat_ts_ms: int | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds per stage of the batch (decode, plan, schema, log, apply), in order."""

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``phases[phase]``."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.monotonic() - started

    def line(self) -> str:
        newest = max((t.max_ts_ms or 0 for t in self.tables), default=0)
        newest = max(newest, self.heartbeat_ts_ms or 0)
        lag = f"{(time.time() * 1000 - newest) / 1000:.1f}s" if newest else "n/a"
        rate = self.events / self.seconds if self.seconds else 0.0
        return (
            f"batch {self.batch_id}: {self.messages} messages, {self.events} events, "
            f"{len(self.tables)} tables, {self.dead_letters} dead letters, "
            f"{rate:,.0f} events/s, {self.seconds:.1f}s ({self._phase_text()}), "
            f"max source lag {lag}"
        )

    def _phase_text(self) -> str:
        return ", ".join(f"{name} {secs:.1f}s" for name, secs in self.phases.items())


class Pipeline:
    """Builds and runs the streaming query for one :class:`PipelineConfig`.

    Example (a folder of messages into Delta tables, everything there is, then stop)::

        from anycdc.spark.session import get_spark
        from anycdc.config import PipelineConfig
        Pipeline(get_spark(), PipelineConfig(source_dir="in", target="out")).run()
    """

    def __init__(
        self,
        spark: SparkSession,
        config: PipelineConfig,
        on_batch: Callable[[BatchMetrics], None] | None = None,
    ) -> None:
        self.spark = spark
        self.config = config
        self.on_batch = on_batch
        self.history: list[BatchMetrics] = []
        self._lock = threading.Lock()
        self._registered: set[str] = set()  # tables this run has put in the catalog
        self._batches_run = 0  # this run's batches (tombstone upkeep)

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
        return writer.start()

    def run(
        self,
        timeout: float | None = None,
        on_start: Callable[[StreamingQuery], None] | None = None,
    ) -> list[BatchMetrics]:
        """Start, and wait until the query ends (available-now) or ``timeout`` seconds pass.

        ``on_start`` gets the running query first (e.g. to watch its ``lastProgress``)."""
        query = self.start()
        try:
            if on_start is not None:
                on_start(query)
            query.awaitTermination(int(timeout) if timeout is not None else None)
        finally:
            if query.isActive:
                query.stop()
        if query.exception() is not None:
            raise RuntimeError(f"streaming query failed: {query.exception()}")
        return self.history

    # ------------------------------------------------------------------ one batch
    def process_batch(self, raw: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        spark = raw.sparkSession
        # partial images are overlaid with map_concat: the newer value of a column wins
        spark.conf.set("spark.sql.mapKeyDedupPolicy", "LAST_WIN")
        # Delta copies a MERGE source it cannot prove deterministic before merging; ours is
        # (a pure function of the batch's offsets, folded in a total order) and already
        # cached: the copy is a job and a local checkpoint per table per batch for nothing
        spark.conf.set(MATERIALIZE_SOURCE, "none")
        Upkeep(spark, self.config).set_auto_compaction()
        decoded = decode_frame(raw, self.config.routing).persist()
        try:
            metrics = self._process(spark, decoded, batch_id)
        finally:
            decoded.unpersist()
        metrics.seconds = time.monotonic() - started
        log.info("%s", metrics.line())
        with self._lock:
            self.history.append(metrics)
        if self.on_batch:
            self.on_batch(metrics)

    def _process(self, spark: SparkSession, decoded: DataFrame, batch_id: int) -> BatchMetrics:
        from pyspark.sql import functions as F

        metrics = BatchMetrics(batch_id)
        with metrics.timed("decode"):
            counts = _first(
                decoded.agg(
                    F.count(F.lit(1)).alias("rows"),
                    F.sum(F.col("error").isNotNull().cast("int")).alias("errors"),
                    F.max(
                        F.when(F.col("op").isin("heartbeat", "begin", "commit"), F.col("ts_ms"))
                    ).alias("hb"),
                    F.sum((F.col("event_index") == 0).cast("int")).alias("messages"),
                )
            )
        metrics.events = int(counts["rows"] or 0) - int(counts["errors"] or 0)
        metrics.dead_letters = int(counts["errors"] or 0)
        metrics.heartbeat_ts_ms = counts["hb"]
        metrics.messages = int(counts["messages"] or 0)

        wanted = decoded.filter(F.col("error").isNull() & F.col("table").isNotNull())
        with metrics.timed("plan"):
            plans = {
                ident: plan
                for ident, plan in build_plans(self._summary(wanted), self.config).items()
                if self.config.wants_table(plan.qualified)
            }
        with metrics.timed("schema"):
            prepared, failed = self._phase_a(spark, plans, batch_id)

        spark.conf.set(TXN_APP_ID, self.config.query_name)
        spark.conf.set(TXN_VERSION, str(batch_id))
        try:
            with metrics.timed("log"):
                self._append(decoded.filter(F.col("error").isNull()), "changelog")
                dead = decoded.filter(F.col("error").isNotNull()).select(
                    *DEAD_LETTER_COLUMNS, F.current_timestamp().alias("failed_at")
                )
                if failed:
                    dead = dead.unionByName(self._schema_dead_letters(wanted, failed))
                if metrics.dead_letters or failed:
                    self._append(dead, "dead_letter")
            with metrics.timed("apply"):
                metrics.tables = self._phase_b(wanted, prepared, batch_id)
            metrics.tables += [
                TableResult(plan.qualified, "", error=reason) for plan, reason in failed
            ]
            with metrics.timed("log"):
                self._append(self._batch_rows(spark, metrics), "batches")
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)
        return metrics

    def _summary(self, wanted: DataFrame) -> list[Any]:
        """Per table: its distinct column lists with the first position each came at, the
        image column names, key, truncate and DDL (see :func:`build_plans`)."""
        from pyspark.sql import functions as F

        table = ("database", "schema", "table")
        no_names = F.array().cast("array<string>")
        # two stages in one job: per distinct column list first (few), then per table
        per_columns = (
            wanted.filter(F.col("op").isin(*ROW_OPS, "truncate", "ddl"))
            .groupBy(*table, "columns")
            .agg(
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
                F.collect_list(
                    F.when(F.col("op") == "ddl", F.struct(F.col("position"), F.col("ddl")))
                ).alias("ddl"),
            )
        )
        return (
            per_columns.groupBy(*table)
            .agg(
                F.collect_list(F.struct("position", "columns")).alias("sightings"),
                F.array_distinct(F.flatten(F.collect_list("image_columns"))).alias("image_columns"),
                F.max("key").alias("key"),
                F.max("has_row_id").alias("has_row_id"),
                F.max("truncate_position").alias("truncate_position"),
                F.max("has_rows").alias("has_rows"),
                F.flatten(F.collect_list("ddl")).alias("ddl"),
            )
            .collect()
        )

    # ------------------------------------------------------------------ phases
    def _phase_a(
        self, spark: SparkSession, plans: dict[Any, TablePlan], batch_id: int
    ) -> tuple[list[tuple[TableApplier, dict[str, str], str | None]], list[tuple[TablePlan, str]]]:
        prepared = []
        failed: list[tuple[TablePlan, str]] = []
        properties: list[tuple[str, dict[str, str]]] = []
        for plan in plans.values():
            # scd2 keeps history rows; scd1 (default) the current row per key
            kind = Scd2Applier if self.config.mode == "scd2" else TableApplier
            applier = kind(spark, self.config, plan)
            if not plan.has_rows and not applier.exists():
                continue  # DDL for a table we have no row of yet: its first rows carry the schema
            try:
                types = applier.ensure_schema(batch_id)
                self._register(applier)
            except IncompatibleSchema as exc:
                log.warning("%s: %s (events dead-lettered)", plan.qualified, exc)
                failed.append((plan, f"incompatible schema change: {exc}"))
                continue
            props = applier.detail().properties  # the size: whether its MERGE is key-bounded
            applier.align_properties(props)
            properties.append((applier.table_ref(), props))
            floor = applier.truncate_position(props)
            if plan.truncate_position and (floor is None or plan.truncate_position > floor):
                applier.apply_truncate(plan.truncate_position, batch_id)
                floor = plan.truncate_position
            prepared.append((applier, types, floor))
        # upkeep is idempotent: outside the idempotent-write window, like the schema changes
        upkeep = Upkeep(spark, self.config)
        if self._batches_run % MAINTENANCE_EVERY == 0:  # the first batch of a run, then so often
            Tombstones(spark, self.config).maintain()
            properties += self._system_tables()
        upkeep.vacuum_due(properties)
        self._batches_run += 1
        return prepared, failed

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
            self._registered.add(applier.path)
            log.info("%s: in the catalog as %s", applier.plan.qualified, name)

    def _phase_b(
        self,
        wanted: DataFrame,
        prepared: list[tuple[TableApplier, dict[str, str], str | None]],
        batch_id: int,
    ) -> list[TableResult]:
        from pyspark.sql import functions as F

        if not prepared:
            return []
        # every table's actions in one cached frame: counted, folded and read by each
        # table's write without recomputing the batch's filters and casts per use
        actions = with_batch(self._all_actions(wanted, prepared), batch_id)
        actions = actions.localCheckpoint(eager=True)
        folded = None
        try:
            stats = self._action_stats(actions)
            if self.config.mode == "scd1":
                # the batch's session: it holds the idempotency settings
                store = Tombstones(wanted.sparkSession, self.config)
                tables = store.table_ids([applier.path for applier, _, _ in prepared])
                # one shuffle folds every table's keys and one read of the tombstones
                # guards them all; each MERGE then reads its slice
                ok = actions.filter(F.col("_bad").isNull()).drop("_bad")
                folded = store.guard(fold_actions(ok, by=("_t", "_key")), tables)
                folded = with_batch(folded, batch_id).localCheckpoint(eager=True)

            def apply_one(index: int) -> TableResult:
                applier, types, _ = prepared[index]
                return self._apply_table(
                    applier, types, actions, folded, index, stats.get(index), batch_id
                )

            workers = min(self.config.max_concurrent_tables, len(prepared))
            if workers == 1:
                results = [apply_one(i) for i in range(len(prepared))]
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="anycdc-merge") as pool:
                    results = list(pool.map(apply_one, range(len(prepared))))
            if folded is not None and any(r.deletes for r in results):
                # after every MERGE: a tombstone never stands for a delete not yet applied
                store.record(self._deleted_keys(folded, tables))
            return results
        finally:
            if folded is not None:
                folded.unpersist()
            actions.unpersist()

    def _all_actions(
        self,
        wanted: DataFrame,
        prepared: list[tuple[TableApplier, dict[str, str], str | None]],
    ) -> DataFrame:
        """Every table's row actions, tagged ``_t`` (:func:`table_tag` of its index in
        ``prepared``), each with ``_bad`` (why it cannot be cast to its column, or null)."""
        from pyspark.sql import functions as F

        frames = []
        for index, (applier, types, floor) in enumerate(prepared):
            plan = applier.plan
            events = wanted.filter(
                F.col("database").eqNullSafe(F.lit(plan.database))
                & F.col("schema").eqNullSafe(F.lit(plan.schema))
                & (F.col("table") == F.lit(plan.table))
            )
            actions = applier.bad_casts(applier.actions(events, types, floor), types)
            frames.append(actions.select(F.lit(table_tag(index)).alias("_t"), "*"))
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
        rows = (
            actions.groupBy("_t")
            .agg(
                F.sum(ok.cast("int")).alias("n"),
                F.sum(((F.col("kind") == "delete") & ok).cast("int")).alias("deletes"),
                F.sum((~ok).cast("int")).alias("bad"),
                F.max(F.when(ok, F.col("position"))).alias("pos"),
                F.max(F.when(ok, F.col("ts_ms"))).alias("ts"),
            )
            .collect()
        )
        return {int(row["_t"]): row for row in rows}

    def _apply_table(
        self,
        applier: TableApplier,
        types: dict[str, str],
        actions: DataFrame,
        folded: DataFrame | None,
        index: int,
        stats: Row | None,
        batch_id: int,
    ) -> TableResult:
        from pyspark.sql import functions as F

        plan = applier.plan
        mine = F.col("_t") == F.lit(table_tag(index))
        n = int(stats["n"] or 0) if stats else 0
        deletes = int(stats["deletes"] or 0) if stats else 0
        dead = int(stats["bad"] or 0) if stats else 0
        if dead:
            bad = actions.filter(mine & F.col("_bad").isNotNull())
            self._append(
                bad.select(
                    "source",
                    "partition",
                    "offset",
                    F.lit(None).cast("binary").alias("kafka_key"),
                    "raw",
                    "format",
                    F.concat(F.lit(f"{plan.qualified}: "), F.col("_bad")).alias("error"),
                    F.current_timestamp().alias("failed_at"),
                ),
                "dead_letter",
                app_suffix=f":{applier.path}",
            )
        if n and folded is not None:
            applier.merge(folded.filter(mine).drop("_t"), types, batch_id, guarded=True)
        elif n:
            good = actions.filter(mine & F.col("_bad").isNull()).drop("_t", "_bad")
            applier.apply(good, types, batch_id, has_deletes=bool(deletes))
        return TableResult(
            table=plan.qualified,
            path=applier.path,
            events=n,
            deletes=deletes,
            upserts=n - deletes,
            dead_letters=dead,
            max_position=stats["pos"] if stats else None,
            max_ts_ms=stats["ts"] if stats else None,
        )

    # ------------------------------------------------------------------ system tables
    def _append(self, frame: DataFrame, name: str, app_suffix: str = "") -> None:
        path = f"{self.config.system_dir}/{name}"
        writer = frame.write.format("delta").mode("append")
        if app_suffix:
            # several writers append to dead_letter in one batch: each needs its own app id
            spark = frame.sparkSession
            writer = writer.option("txnAppId", self.config.query_name + app_suffix).option(
                "txnVersion", spark.conf.get(TXN_VERSION)
            )
        writer.save(path)

    def _schema_dead_letters(
        self, wanted: DataFrame, failed: list[tuple[TablePlan, str]]
    ) -> DataFrame:
        from pyspark.sql import functions as F

        frame = wanted.limit(0).select(
            *DEAD_LETTER_COLUMNS, F.current_timestamp().alias("failed_at")
        )
        for plan, reason in failed:
            frame = frame.unionByName(
                wanted.filter(
                    F.col("database").eqNullSafe(F.lit(plan.database))
                    & F.col("schema").eqNullSafe(F.lit(plan.schema))
                    & (F.col("table") == F.lit(plan.table))
                ).select(
                    "source", "partition", "offset", "kafka_key", "raw", "format",
                    F.lit(f"{plan.qualified}: {reason}").alias("error"),
                    F.current_timestamp().alias("failed_at"),
                )
            )  # fmt: skip
        return frame

    def _batch_rows(self, spark: SparkSession, metrics: BatchMetrics) -> DataFrame:
        rows: list[tuple[Any, ...]] = [
            (
                metrics.batch_id, t.table, t.path, t.events, t.dead_letters, t.max_position,
                t.max_ts_ms, metrics.heartbeat_ts_ms, t.error, None,
            )
            for t in metrics.tables
        ] or [
            (metrics.batch_id, None, None, 0, metrics.dead_letters, None, None,
             metrics.heartbeat_ts_ms, None, None)
        ]  # fmt: skip
        frame = spark.createDataFrame(rows, BATCHES_SCHEMA)
        from pyspark.sql import functions as F

        return frame.withColumn("processed_at", F.current_timestamp())


def replay_dead_letters(spark: SparkSession, config: PipelineConfig) -> tuple[int, int]:
    """Re-run the dead letters through the pipeline (after a fix or an option change).

    Messages that now decode and apply are removed from ``_anycdc/dead_letter``;
    the others stay (a message that fails again for a new reason is recorded
    again with that reason). Returns ``(replayed, still_failing)``.
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
    Pipeline(spark, replay).process_batch(raw, int(time.time() * 1000))
    coords = {(r["source"], r["partition"], r["offset"]) for r in fixed}
    condition = F.lit(False)
    for source, partition, offset in coords:
        condition = condition | (
            (F.col("source") == source) & (F.col("partition") == partition) & (F.col("offset") == offset)
        )  # fmt: skip
    # a message that failed again during the replay was recorded afresh: keep that record
    condition = condition & (F.col("failed_at") < F.lit(started))
    DeltaTable.forPath(spark, path).delete(condition)
    return len(fixed), len(dead) - len(fixed)
