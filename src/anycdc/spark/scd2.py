"""SCD2 mode: every target table keeps the history of its rows, with validity intervals.

Like Databricks' AUTO CDC "stored as SCD type 2": every version of a source
row is one row of the table, with the source columns plus

- ``_cdc_valid_from`` -- source commit time of the change that made the version;
- ``_cdc_valid_to`` -- commit time of the change that ended it (the key's next
  version, a delete, or a TRUNCATE); NULL while the version is current;
- ``_cdc_is_current`` -- true for the one live version of a key (none after a delete);
- ``_cdc_position``, ``_cdc_ts``, ``_cdc_op`` -- the version's own change, as in SCD1;
  ``_cdc_batch`` -- the micro-batch that added the version;
- ``_cdc_key`` -- the key as JSON text of its values (full-row hash for tables without a key);
- ``_cdc_seq`` -- the version's place in the key's history: the source position
  (``#`` + the event's index when a multi-row message gives several events one
  position; events without a position: ``~`` + batch + arrival coordinates, after
  every positioned one);
- ``_cdc_partial`` -- for a version made by a partial image, the columns the image
  carried (the others are filled from the previous version); NULL for full images.

A history row is identified by ``(_cdc_key, _cdc_seq)``. Per table and batch
(:meth:`Scd2Applier.apply`):

1. the batch's row actions (the SCD1 ones plus TRUNCATE events, bad casts set apart:
   :func:`~anycdc.spark.actions.round_actions`) are split into *versions* (insert,
   snapshot, update: one version each, the first arrival of a ``(key, seq)`` wins) and
   *end markers* (deletes; truncates end every key: the kinds of
   :data:`~anycdc.spark.action_rules.END_KINDS`);
2. the **touched keys** (keys of the batch's versions and deletes; every key when
   the batch holds a truncate) are read back from the table and the batch's
   versions that are not there yet are added to them;
3. for those keys the history is **recomputed** from scratch, ordered by
   ``_cdc_seq``: partial versions are re-filled from the version before them
   (a late older update changes what a later partial update inherits), and each
   version ends at the next row of the key's timeline (versions + deletes) or
   at the first truncate after it, whichever comes first (:meth:`Scd2Applier.history`,
   a frame: a fresh read, :mod:`anycdc.spark.reads`, lays it over a version of the
   table, without a write);
4. one MERGE on ``(_cdc_key, _cdc_seq)`` inserts the new versions and updates
   the existing ones whose interval or filled values changed -- nothing else is
   written, so a replayed batch (whose versions are all present) changes nothing;
5. the end markers are stored in ``_anycdc/scd2_ends/<db>/<table>`` (kept for
   as long as the history; idempotent on ``(key, seq, kind)``), because a late
   version that arrives after a delete must still be closed by it.

Because the result of step 3 is a function of the *set* of versions and end
markers only, out-of-order delivery (within or across batches), duplicates and
replays give the same history as in-order delivery, and one batch gives the
same table as many small ones (``_cdc_batch`` aside). Each Delta table gets at
most one write per batch in phase B (history: one MERGE; ends: one MERGE),
which keeps the pipeline's ``txnAppId``/``txnVersion`` idempotency intact.

Differences from SCD1, by design: a full image defines the version completely
(a column the image lacks -- e.g. one dropped at the source -- is NULL in that
version; older versions keep their values); events older than a TRUNCATE are
not dropped but slotted into history before it (closed by it); TRUNCATE closes
versions instead of deleting rows. Tables without a key use the SCD1 full-row
identity (``_cdc_row_key``): an update is the old row's version closed and the
new row's opened.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from anycdc.config import PipelineConfig
from anycdc.spark.action_rules import DELETE, END_KINDS, TRUNCATE, UPSERT
from anycdc.spark.apply import BATCH_COLUMN, with_batch
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.merge_sql import (
    create_table_of_sql,
    delta_ref,
    ends_merge_sql,
    history_merge_sql,
    image_value_sql,
    millis_of_timestamp_sql,
    q,
    timestamp_of_millis_sql,
)
from anycdc.spark.plan import TablePlan
from anycdc.spark.table_schema import META_COLUMNS, TableSchema

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

log = logging.getLogger("anycdc.scd2")

SCD2_META: Final = (
    ("_cdc_valid_from", "TIMESTAMP"),
    ("_cdc_valid_to", "TIMESTAMP"),
    ("_cdc_is_current", "BOOLEAN"),
    *META_COLUMNS,
    ("_cdc_key", "STRING"),
    ("_cdc_seq", "STRING"),
    ("_cdc_partial", "ARRAY<STRING>"),
)
ENDS_SCHEMA: Final = "_key STRING, seq STRING, ts_ms BIGINT, kind STRING, batch BIGINT"
ARRIVAL: Final = ("source", "partition", "offset", "event_index")
IN_NEW: Final = "_cdc_in_new"
"""A recomputed history row's column: a version the table does not hold yet."""
IN_CHANGED: Final = "_cdc_in_changed"
"""A recomputed history row's column: its interval or filled values differ from the table's."""


class Scd2Schema(TableSchema):
    """The schema step of one SCD2 history table: the SCD1 table's
    (:class:`~anycdc.spark.table_schema.TableSchema`) with the history's metadata columns,
    its end-marker table, and no TRUNCATE floor."""

    meta_columns: ClassVar[tuple[tuple[str, str], ...]] = SCD2_META
    history: ClassVar[bool] = True
    created_by_first_write: ClassVar[bool] = False  # its apply reads the table it writes

    def __init__(self, spark: SparkSession, config: PipelineConfig, plan: TablePlan) -> None:
        super().__init__(spark, config, plan)
        self.ends_path = self.path.replace(
            config.target.rstrip("/"), config.system_dir + "/scd2_ends", 1
        )

    def ensure_schema(
        self,
        batch_id: int,
        known: Mapping[str, str] | None = None,
        known_targets: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Create or evolve the history table, and create its end-marker table.

        The end-marker table is created here (the schema step, idempotent by itself) so
        that the apply writes it exactly once; a table the run already knows has it.
        """
        types = super().ensure_schema(batch_id, known, known_targets)
        if known is None:
            statement = create_table_of_sql(delta_ref(self.ends_path), ENDS_SCHEMA)
            if self.dry is not None:  # planned: recorded, not run
                self.dry.append(statement)
            else:
                self.spark.sql(statement)
        return types

    def truncate_position(self, properties: dict[str, str] | None = None) -> str | None:
        """No truncate floor: older events are slotted into history, not dropped."""
        return None


@dataclass(frozen=True)
class Scd2Changes:
    """The versions and end markers of some row actions (:meth:`Scd2Applier.changes`)."""

    versions: DataFrame
    """One row per ``(_cdc_key, _cdc_seq)``, in the history table's columns."""
    ends: DataFrame
    """The deletes and truncates, once each: ``_key, seq, ts_ms, kind, batch``."""


@dataclass(frozen=True)
class Scd2History:
    """The touched keys' recomputed history (:meth:`Scd2Applier.history`)."""

    rows: DataFrame
    """Every version of the touched keys, recomputed: :attr:`columns`, then :data:`IN_NEW`
    and :data:`IN_CHANGED`."""
    touched: DataFrame | None
    """The touched keys (``_cdc_key``); None: every key (a truncate among the changes)."""
    truncated: bool
    """The changes hold a truncate."""
    columns: list[str]
    """The history table's columns, in order."""


class Scd2Applier:
    """Applies batches to one SCD2 history table (see the module docstring).

    Its schema step is :attr:`schema` (:class:`Scd2Schema`: the SCD1 table's schema
    evolution, with the history's columns); the round's row actions are SCD1's plus
    TRUNCATE events (:func:`~anycdc.spark.actions.round_actions`). Instead of the per-key
    fold + MERGE, the history recomputation of the touched keys; instead of TRUNCATE's
    delete, end markers.
    """

    def __init__(self, spark: SparkSession, config: PipelineConfig, plan: TablePlan) -> None:
        self.schema = Scd2Schema(spark, config, plan)
        self.spark = spark
        self.config = config
        self.plan = plan
        self.path = self.schema.path
        self.ends_path = self.schema.ends_path

    def apply_truncate(self, position: str, batch_id: int) -> None:
        """Nothing in phase A: a TRUNCATE is an end marker, applied by :meth:`apply`."""

    # ------------------------------------------------------------------ apply
    def apply(
        self, actions: DataFrame, types: dict[str, str], batch_id: int, has_deletes: bool = True
    ) -> None:
        """Add the batch's versions and end markers; recompute the touched keys' history."""
        from pyspark.sql import functions as F

        changes = self.changes(actions, types, batch_id)
        stored = self.spark.read.format("delta").load(self.ends_path)
        table = self.spark.read.format("delta").load(self.path)
        history = self.history(table, changes, stored, types)
        # only what is new or changed is written: a replayed batch changes nothing
        staged = history.rows.filter(F.col(IN_NEW) | F.col(IN_CHANGED)).drop(IN_CHANGED)
        self._write_history(staged, history.columns, types)
        if has_deletes or history.truncated:
            self._record_ends(changes.ends, batch_id)

    def changes(self, actions: DataFrame, types: dict[str, str], batch_id: int) -> Scd2Changes:
        """The versions and end markers of the row actions ``actions`` (step 1 of the module
        docstring), computed once each (each is read several times by :meth:`history`);
        ``batch_id``: the ``_cdc_batch`` of the versions (unless ``actions`` carry one)."""
        from pyspark.sql import functions as F

        actions = with_batch(actions, batch_id)
        acts = actions.withColumn("_seq", _seq(batch_id))
        # batch-sized, so cheap to hold
        versions = self._versions(acts.filter(F.col("kind") == UPSERT), types).localCheckpoint()
        ends = (
            _first_per(
                acts.filter(F.col("kind").isin(*END_KINDS)).select(
                    "_key", "_seq", "ts_ms", "kind", BATCH_COLUMN, *ARRIVAL
                ),
                ["_key", "_seq", "kind"],
            )
            .select(
                F.col("_key"),
                F.col("_seq").alias("seq"),
                F.col("ts_ms"),
                F.col("kind"),
                F.col(BATCH_COLUMN).alias("batch"),
            )
            .localCheckpoint()
        )
        return Scd2Changes(versions, ends)

    def history(
        self, table: DataFrame, changes: Scd2Changes, stored: DataFrame, types: dict[str, str]
    ) -> Scd2History:
        """The touched keys' history recomputed from scratch (steps 2 and 3 of the module
        docstring) out of ``table`` (the history table, or a read's version of it), the
        ``changes`` and the end markers ``stored`` before them (:data:`ENDS_SCHEMA`). The
        apply MERGEs its new and changed rows; a fresh read (:mod:`anycdc.spark.reads`) lays
        it over the table's version."""
        from pyspark.sql import functions as F

        versions, ends = changes.versions, changes.ends
        # truncates are few: taken to the driver, they end versions without a join
        batch_truncates, stored_truncates = (
            {
                (r["seq"], r["ts_ms"])
                for r in frame.filter(F.col("kind") == TRUNCATE).select("seq", "ts_ms").collect()
            }
            for frame in (ends, stored)
        )
        truncates = sorted(batch_truncates | stored_truncates, key=lambda t: t[0])
        deletes = (
            stored.filter(F.col("kind") == DELETE)
            .select("_key", "seq", "ts_ms")
            .unionByName(ends.filter(F.col("kind") == DELETE).select("_key", "seq", "ts_ms"))
        )
        touched = None  # a truncate may close any key's current version: every key is touched
        if batch_truncates:
            if self.schema.dry is None:
                log.info("%s: TRUNCATE in the batch: recomputing every key", self.plan.qualified)
        else:
            touched = (
                versions.select("_cdc_key")
                .unionByName(
                    ends.filter(F.col("kind") == DELETE).select(F.col("_key").alias("_cdc_key"))
                )
                .distinct()
            )
            deletes = deletes.join(touched, deletes["_key"] == touched["_cdc_key"], "left_semi")
        columns = self.columns(types)
        rows = self._recompute(
            table, versions, touched, deletes.dropDuplicates(["_key", "seq"]), truncates, types
        )
        return Scd2History(rows, touched, bool(batch_truncates), columns)

    def columns(self, types: dict[str, str]) -> list[str]:
        """The history table's columns, in order, for the source's columns ``types``."""
        return [*(self.schema.target(n) for n in types), *(name for name, _ in SCD2_META)]

    def _versions(self, upserts: DataFrame, types: dict[str, str]) -> DataFrame:
        """The batch's versions, typed, one per ``(key, seq)`` (first arrival wins)."""
        from pyspark.sql import functions as F

        first = _first_per(upserts, ["_key", "_seq"])
        ts = F.expr(timestamp_of_millis_sql("ts_ms"))
        return first.select(
            *[
                F.expr(image_value_sql("image", name, spark_type)).alias(self.schema.target(name))
                for name, spark_type in types.items()
            ],
            ts.alias("_cdc_valid_from"),
            F.lit(None).cast("timestamp").alias("_cdc_valid_to"),
            F.lit(True).alias("_cdc_is_current"),
            F.col("position").alias("_cdc_position"),
            ts.alias("_cdc_ts"),
            F.col("op").alias("_cdc_op"),
            F.col(BATCH_COLUMN).alias("_cdc_batch"),
            F.col("_key").alias("_cdc_key"),
            F.col("_seq").alias("_cdc_seq"),
            # sorted: the same image gives the same row whatever the message's column order
            F.when(F.col("full"), F.lit(None).cast("array<string>"))
            .otherwise(F.array_sort(F.map_keys("image")))
            .alias("_cdc_partial"),
        )

    def _recompute(
        self,
        table: DataFrame,
        versions: DataFrame,
        touched: DataFrame | None,
        deletes: DataFrame,
        truncates: list[tuple[str, int]],
        types: dict[str, str],
    ) -> DataFrame:
        """Recompute the touched keys' history (every key when ``touched`` is None) from
        their rows in ``table`` and the ``versions`` not there yet: the table's columns,
        then :data:`IN_NEW` and :data:`IN_CHANGED`. ``deletes``: those of the touched keys."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        columns = self.columns(types)
        table = table.select(*[F.col(q(c)) for c in columns])
        existing = table if touched is None else table.join(touched, "_cdc_key", "left_semi")
        existing = existing.localCheckpoint()  # one scan of the table, read twice below
        fresh = versions.join(
            existing.select("_cdc_key", "_cdc_seq"), ["_cdc_key", "_cdc_seq"], "left_anti"
        )
        timeline = (
            existing.withColumn(IN_NEW, F.lit(False))
            .unionByName(
                fresh.select(*[F.col(q(c)) for c in columns]).withColumn(IN_NEW, F.lit(True))
            )
            .withColumn("_cdc_in_end", F.lit(0))
        )
        # re-fill: per column, the value of the latest version at or before this one that
        # carried it (a struct keeps an explicit NULL apart from "not carried")
        upto = (
            Window.partitionBy("_cdc_key")
            .orderBy("_cdc_seq")
            .rowsBetween(Window.unboundedPreceding, Window.currentRow)
        )
        filled = {
            name: F.last(
                F.when(
                    F.col("_cdc_partial").isNull()
                    | F.array_contains(F.col("_cdc_partial"), F.lit(name)),
                    F.struct(F.col(q(self.schema.target(name))).alias("v")),
                ),
                ignorenulls=True,
            )
            .over(upto)
            .getField("v")
            for name in types
        }
        filled = {self.schema.target(name): value for name, value in filled.items()}
        # each version ends at the next row of its key's timeline: a version or a delete
        marks = deletes.select(
            F.col("_key").alias("_cdc_key"),
            F.col("seq").alias("_cdc_seq"),
            F.col("ts_ms").alias("_cdc_in_end_ms"),
            F.lit(1).alias("_cdc_in_end"),
        )
        ordered = Window.partitionBy("_cdc_key").orderBy("_cdc_seq", "_cdc_in_end")
        version_ms = F.expr(millis_of_timestamp_sql("_cdc_valid_from"))
        rows = timeline.withColumn("_cdc_in_end_ms", version_ms).unionByName(
            marks, allowMissingColumns=True
        )
        rows = rows.withColumn(
            "_cdc_in_next",
            F.lead(
                F.struct(F.col("_cdc_seq").alias("seq"), F.col("_cdc_in_end_ms").alias("ms"))
            ).over(ordered),
        ).filter(F.col("_cdc_in_end") == 0)
        # ... or at the first truncate after it, whichever comes first
        end = F.col("_cdc_in_next")
        if truncates:
            after = F.filter(
                F.array(
                    *[
                        F.struct(F.lit(seq).alias("seq"), F.lit(ms).cast("bigint").alias("ms"))
                        for seq, ms in truncates
                    ]
                ),
                lambda t: t.getField("seq") > F.col("_cdc_seq"),
            )
            end = F.least(end, F.try_element_at(after, F.lit(1)))
        rows = rows.withColumn("_cdc_in_stop", end)
        new_to = F.when(
            F.col("_cdc_in_stop").isNotNull(), F.expr(timestamp_of_millis_sql("_cdc_in_stop.ms"))
        ).otherwise(F.lit(None).cast("timestamp"))
        recomputed = {
            **filled,
            "_cdc_valid_to": new_to,
            "_cdc_is_current": F.col("_cdc_in_stop").isNull(),
        }
        return rows.select(
            *[
                recomputed[name].alias(name) if name in recomputed else F.col(q(name))
                for name in columns
            ],
            F.col(IN_NEW),
            _changed(recomputed).alias(IN_CHANGED),
        )

    def _write_history(self, staged: DataFrame, columns: list[str], types: dict[str, str]) -> None:
        """One MERGE on ``(_cdc_key, _cdc_seq)``: insert new versions, update changed ones."""
        # computed once, eagerly: the MERGE then reads a plain, already computed source
        # instead of re-planning and re-running the windows over the table it writes
        staged = staged.localCheckpoint(eager=True)
        if staged.isEmpty():
            return  # e.g. a replayed batch: nothing new, nothing to write
        updates = [*(self.schema.target(n) for n in types), "_cdc_valid_to", "_cdc_is_current"]
        view = f"anycdc_scd2_{abs(hash((self.path, id(staged))))}"
        statement = history_merge_sql(self.schema.table_ref(), view, updates, columns)
        staged.createOrReplaceTempView(view)
        try:
            self.spark.sql(statement)
        finally:
            self.spark.catalog.dropTempView(view)

    def _record_ends(self, ends: DataFrame, batch_id: int) -> None:
        """Store the batch's deletes and truncates (once each) for later recomputations."""
        view = f"anycdc_ends_{abs(hash((self.ends_path, batch_id)))}"
        ends.createOrReplaceTempView(view)
        try:
            self.spark.sql(ends_merge_sql(delta_ref(self.ends_path), view))
        finally:
            self.spark.catalog.dropTempView(view)


def _seq(batch_id: int) -> Column:
    """A version's place: the source position, else arrival (after every positioned event).

    Events of one message that share its position (Canal's ``data`` rows) are told
    apart by their index in the message, which a re-delivery keeps: ``#`` sorts
    after the bare position and before any longer position (``.``).
    """
    from pyspark.sql import functions as F

    def pad(name: str, width: int) -> Column:
        return F.lpad(F.col(name).cast("string"), width, "0")

    # the batch that ingested the event (one apply may cover several), else this one
    arrived_in = F.coalesce(F.col(INGEST_BATCH), F.lit(int(batch_id)).cast("bigint"))
    arrival = F.concat(
        F.lit("~"),
        F.lpad(arrived_in.cast("string"), 19, "0"),
        F.lit("/"),
        F.coalesce(F.col("source"), F.lit("")),
        F.lit("/"),
        pad("partition", 10),
        F.lit("/"),
        pad("offset", 19),
        F.lit("/"),
        pad("event_index", 10),
    )
    within = F.when(
        F.col("event_index") > 0,
        F.concat(F.col("position"), F.lit("#"), pad("event_index", 10)),
    ).otherwise(F.col("position"))
    return F.coalesce(within, arrival)


def _first_per(frame: DataFrame, keys: list[str]) -> DataFrame:
    """One row per ``keys``: the first to arrive (duplicates and replays collapse)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy(*keys).orderBy(*ARRIVAL)
    return frame.withColumn("_rn", F.row_number().over(order)).filter(F.col("_rn") == 1).drop("_rn")


def _changed(recomputed: dict[str, Any]) -> Column:
    """True when a recomputed value differs from the stored one (NULL-safe)."""
    from pyspark.sql import functions as F

    same = F.lit(True)
    for name, value in recomputed.items():
        same = same & value.eqNullSafe(F.col(q(name)))
    return ~same


__all__: Sequence[str] = [
    "ENDS_SCHEMA", "IN_CHANGED", "IN_NEW", "SCD2_META", "Scd2Applier", "Scd2Changes",
    "Scd2History", "Scd2Schema",
]  # fmt: skip
