"""Deleted keys, remembered so that a late older event cannot resurrect a row.

One Delta table for the whole target, ``_anycdc/tombstones`` (``table`` — the
source table's folder under the target, or its hash where that would be too long for a
partition folder name —, ``_key``, ``position``, ``deleted_at``, ``through``: the
ingest batch the apply that deleted it covered, NULL in a store written before it was
kept). A micro-batch appends
the keys its deletes removed (those whose folded state is a delete:
:data:`~anycdc.spark.action_rules.DELETED`), all tables at once, after every table's MERGE has
committed: one write of one file per batch however many tables saw deletes, and never a
tombstone for a delete that is not applied yet (a crash in between replays the batch,
whose MERGEs Delta then skips and whose tombstones it appends).

The table is not partitioned: readers take every table's live tombstones in one read
(:meth:`Tombstones.guard`), and a partition per table made each append a folder and a
file for every table with deletes (on a local disk each costs forked ``chmod``
processes: ~60 ms a table). A store made partitioned by ``table`` (by an earlier anycdc)
keeps its layout: Delta appends to it by its own partitioning, and the ids are the same.

Readers take the newest position per key among the tombstones younger than
``tombstone_retention_hours`` (the pipeline once per batch for all its tables,
:meth:`Tombstones.guard`); :meth:`Tombstones.maintain` deletes the expired
ones and compacts the small files of the per-batch appends. A read of a table as of an
earlier cut (:mod:`anycdc.spark.reads`) takes only those of the applies its Delta version
holds (``through``).

>>> Tombstones.SCHEMA
'table STRING, _key STRING, position STRING, deleted_at TIMESTAMP, through BIGINT'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Final

from anycdc.config import PipelineConfig
from anycdc.naming import partition_value
from anycdc.spark.commit import append_by_writer, append_once
from anycdc.spark.local_rows import local_frame
from anycdc.spark.merge_sql import delete_expired_sql, delta_ref, expiry_sql, optimize_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from anycdc.spark.ledger import WriteId

MAINTENANCE_EVERY: Final = 32  # batches between two purges (and the first batch of a run)


def table_tag(index: int) -> str:
    """The ``_t`` value that tags a table's rows in a batch's shared frames.

    A string, not the int: Spark compiles an int literal into the generated code of every
    plan that filters on it, so each table's MERGE (in each batch) compiled classes of its
    own; a string literal is passed to that code by reference, so tables of one shape share
    them (measured: ~10 compiles per MERGE before, none once warm).

    >>> table_tag(7)
    '7'
    """
    return str(index)


class Tombstones:
    """The target's tombstone table (see the module docstring)."""

    SCHEMA: ClassVar[str] = (
        "table STRING, _key STRING, position STRING, deleted_at TIMESTAMP, through BIGINT"
    )

    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        self.spark = spark
        self.config = config
        self.path = f"{config.system_dir}/tombstones"

    def table_id(self, table_path: str) -> str:
        """A source table's id in the tombstone table: its folder under the target (a
        hash of it when that is too long for the partition's folder name)."""
        root = self.config.target.rstrip("/") + "/"
        folder = table_path[len(root) :] if table_path.startswith(root) else table_path
        return partition_value(folder, "table")

    def exists(self) -> bool:
        from delta.tables import DeltaTable

        return bool(DeltaTable.isDeltaTable(self.spark, self.path))

    def live(self, through: int | None = None, keep_through: bool = False) -> DataFrame | None:
        """The tombstones within the retention, as read now (``table``, ``_key``,
        ``position``; ``keep_through``: and ``through``, NULL in a store that did not say
        it); None while no table has had a delete. ``through``: only those of the applies
        through that ingest batch (and those of a store that did not say)."""
        from pyspark.sql import functions as F

        if not self.exists():
            return None
        # expired tombstones stop counting at once, whenever maintenance deletes them
        frame = self.spark.read.format("delta").load(self.path)
        frame = frame.filter(F.col("deleted_at") >= F.expr(expiry_sql(self._hours())))
        if through is not None and "through" in frame.columns:
            frame = frame.filter(F.col("through").isNull() | (F.col("through") <= through))
        if keep_through:
            kept = F.col("through") if "through" in frame.columns else F.lit(None).cast("bigint")
            return frame.select("table", "_key", "position", kept.alias("through"))
        return frame.select("table", "_key", "position")

    def table_ids(
        self, table_paths: Sequence[str], throughs: Sequence[int | None] | None = None
    ) -> DataFrame:
        """``_t`` (:func:`table_tag` of an index into ``table_paths``) -> that table's
        ``table`` id; with ``throughs``, each table's ``_through`` too: only the tombstones
        of its applies through that ingest batch count for it (None: all, as
        :meth:`live`'s ``through``)."""
        if throughs is None:
            ids = [(table_tag(i), self.table_id(path)) for i, path in enumerate(table_paths)]
            return local_frame(self.spark, ids, "_t STRING, table STRING")
        rows = [
            (table_tag(i), self.table_id(path), through)
            for i, (path, through) in enumerate(zip(table_paths, throughs, strict=True))
        ]
        return local_frame(self.spark, rows, "_t STRING, table STRING, _through BIGINT")

    def guard(self, folded: DataFrame, tables: DataFrame, through: int | None = None) -> DataFrame:
        """``folded`` (per ``_t`` and ``_key``, final state ``st``) without the keys whose
        final position is not after their newest live tombstone: one read of the store
        for every table of the batch instead of one inside each table's MERGE.
        ``tables`` maps ``_t`` to the ``table`` id (:meth:`table_ids`); ``through``: as
        for :meth:`live`."""
        from pyspark.sql import functions as F

        live = self.live(through, keep_through="_through" in tables.columns)
        if live is None:
            return folded
        live = live.join(F.broadcast(tables), "table")
        if "_through" in tables.columns:
            live = live.filter(
                F.col("_through").isNull()
                | F.col("through").isNull()
                | (F.col("through") <= F.col("_through"))
            )
        newest = live.groupBy("_t", "_key").agg(F.max("position").alias("_tomb_pos"))
        return (
            folded.join(newest, ["_t", "_key"], "left")
            .filter(F.col("_tomb_pos").isNull() | (F.col("st.pos") > F.col("_tomb_pos")))
            .drop("_tomb_pos")
        )

    def guard_table(self, folded: DataFrame, table_path: str) -> DataFrame:
        """:meth:`guard` for one table's folded actions (no ``_t``)."""
        from pyspark.sql import functions as F

        tagged = folded.withColumn("_t", F.lit(table_tag(0)))
        return self.guard(tagged, self.table_ids([table_path])).drop("_t")

    def record(self, deleted: DataFrame, app: WriteId | None = None) -> None:
        """Append deleted keys (``table``, ``_key``, ``position``, ``through``): one write of
        one file, stamped now; ``app``: Delta's idempotent-write (app id, version) of the
        write."""
        from pyspark.sql import functions as F

        # one file: a batch's deleted keys are few next to its rows, and each file is a
        # file the readers open until maintenance compacts them
        rows = deleted.select(
            "table",
            "_key",
            "position",
            F.current_timestamp().alias("deleted_at"),
            F.col("through").cast("bigint").alias("through"),
        ).coalesce(1)
        # merge_schema: a store written before ``through`` was kept; maintain() compacts
        if app is None:
            append_by_writer(rows, self.path, None, None)
        else:
            append_once(rows, self.path, app.app_id, int(app.version))

    def maintain(self) -> None:
        """Delete the expired tombstones and compact the files. Idempotent: the pipeline
        runs it outside the idempotent-write window."""
        if not self.exists():
            return
        table = delta_ref(self.path)
        self.spark.sql(delete_expired_sql(table, "deleted_at", self._hours()))
        self.spark.sql(optimize_sql(table))

    def _hours(self) -> float:
        return float(self.config.tombstone_retention_hours)


__all__ = ["MAINTENANCE_EVERY", "Tombstones"]
