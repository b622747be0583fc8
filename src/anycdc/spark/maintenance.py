"""Upkeep of the tables a long run writes: compaction of small files, and VACUUM.

A pipeline that runs for weeks writes every table in every micro-batch. Two things
would grow without bound:

- **small files**: each append or MERGE adds files; a table that mostly receives
  inserts gains a file or more per batch, and each later MERGE and reader lists and
  opens them all. Delta's *auto compaction* (``auto_compact``, on by default) folds
  them into bigger ones right after a write that leaves too many
  (``spark.databricks.delta.autoCompact.*``: 50 files below 64 MB by default);
- **unreferenced files**: a MERGE rewrites the files it touches, and the old ones
  stay on disk for time travel. VACUUM (``vacuum_every_hours``, default 24) deletes
  those no version younger than the retention needs (``vacuum_retain_hours``, or
  the table's ``delta.deletedFileRetentionDuration``: Delta's 7 days).

Each table remembers when it was last vacuumed (table property
:data:`LAST_VACUUM_PROPERTY`), so a pipeline restarted every few minutes (an
``available-now`` run from cron) does not vacuum on every start; at most
:data:`VACUUMS_PER_BATCH` tables are vacuumed in one micro-batch, the longest
waiting first, so tables created together do not all fall due in the same batch.
VACUUM and the property are idempotent: the pipeline runs them outside its
idempotent-write window, as it does schema changes.

>>> due({LAST_VACUUM_PROPERTY: "1000"}, now_ms=1000 + 3_600_000, every_hours=1.0)
True
>>> due({LAST_VACUUM_PROPERTY: "1000"}, now_ms=2000, every_hours=1.0)
False
>>> due({}, now_ms=5, every_hours=0.0)  # 0: never
False
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from anycdc.config import PipelineConfig
from anycdc.spark.merge_sql import (
    describe_detail_sql,
    set_properties_sql,
    show_properties_sql,
    vacuum_sql,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("anycdc.maintenance")

AUTO_COMPACT: Final = "spark.databricks.delta.autoCompact.enabled"
LAST_VACUUM_PROPERTY: Final = "anycdc.lastVacuumMs"
RETENTION_CHECK: Final = "spark.databricks.delta.retentionDurationCheck.enabled"
VACUUMS_PER_BATCH: Final = 4


def due(properties: Mapping[str, str], now_ms: int, every_hours: float) -> bool:
    """Whether a table with these properties is due for a VACUUM (never when
    ``every_hours`` is 0; a table never vacuumed is due)."""
    if every_hours <= 0:
        return False
    last = last_vacuum_ms(properties)
    return last is None or now_ms - last >= every_hours * 3_600_000


def last_vacuum_ms(properties: Mapping[str, str]) -> int | None:
    text = properties.get(LAST_VACUUM_PROPERTY)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None  # not ours to trust: vacuum, then write a good one


@dataclass(frozen=True)
class TableDetail:
    """What ``DESCRIBE DETAIL`` says of a Delta table that anycdc uses."""

    properties: dict[str, str]
    num_files: int
    size_bytes: int
    clustering: tuple[str, ...] = ()
    """Its liquid clustering columns (none: not clustered)."""


def table_detail(spark: SparkSession, table_ref: str) -> TableDetail:
    """A Delta table's properties, live files and their size, in one look at its log."""
    row = spark.sql(describe_detail_sql(table_ref)).first()
    if row is None:
        return TableDetail({}, 0, 0)
    return TableDetail(
        dict(row["properties"] or {}),
        int(row["numFiles"] or 0),
        int(row["sizeInBytes"] or 0),
        tuple(_field(row, "clusteringColumns") or ()),
    )


def _field(row: Any, name: str) -> Any:
    """A field of a Row, None when the Row has none (an older Delta's DESCRIBE DETAIL)."""
    try:
        return row[name]
    except (KeyError, ValueError):
        return None


def table_properties(spark: SparkSession, table_ref: str) -> dict[str, str]:
    """A Delta table's properties (``table_ref``: ``delta.`/path``` or a catalog name)."""
    return {row["key"]: row["value"] for row in spark.sql(show_properties_sql(table_ref)).collect()}


class Upkeep:
    """The VACUUMs that fall due (compaction is a session setting of each apply:
    :data:`AUTO_COMPACT`, set by the pipeline around its writes)."""

    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        self.spark = spark
        self.config = config

    def vacuum_due(
        self, tables: Iterable[tuple[str, Mapping[str, str]]], stamp_new: bool = False
    ) -> list[str]:
        """VACUUM the tables (``(table_ref, properties)``) that are due, the longest
        waiting first, at most :data:`VACUUMS_PER_BATCH`; returns the ones vacuumed.

        ``stamp_new``: a table never stamped is stamped, not vacuumed (the run's own system
        tables, created by appends that cannot set a property: young, nothing to remove,
        and a VACUUM lists every file of a table)."""
        now_ms = int(time.time() * 1000)
        every = self.config.vacuum_every_hours
        tables = list(tables)
        if stamp_new and every > 0:
            for ref, props in tables:
                if LAST_VACUUM_PROPERTY not in props:
                    try:
                        self._stamp(ref, now_ms)
                    except Exception as exc:  # py4j and Spark raise several types
                        log.warning("%s: not stamped, retried in a later batch: %s", ref, exc)
            tables = [(ref, props) for ref, props in tables if LAST_VACUUM_PROPERTY in props]
        waiting = [
            (last_vacuum_ms(props) or 0, ref) for ref, props in tables if due(props, now_ms, every)
        ]
        done = []
        for _, ref in sorted(waiting)[:VACUUMS_PER_BATCH]:
            if self.vacuum(ref, now_ms):
                done.append(ref)
        return done

    def vacuum(self, table_ref: str, now_ms: int | None = None) -> bool:
        """VACUUM one table and stamp it (:data:`LAST_VACUUM_PROPERTY`). A failure is
        logged and left for the next batch: upkeep never stops the stream."""
        started = time.monotonic()
        try:
            self._vacuum(table_ref)
            self._stamp(table_ref, now_ms if now_ms is not None else int(time.time() * 1000))
        except Exception as exc:  # py4j and Spark raise several types
            log.warning("%s: VACUUM failed, retried in a later batch: %s", table_ref, exc)
            return False
        log.info("%s: vacuumed in %.1fs", table_ref, time.monotonic() - started)
        return True

    def _stamp(self, table_ref: str, now_ms: int) -> None:
        self.spark.sql(set_properties_sql(table_ref, {LAST_VACUUM_PROPERTY: str(now_ms)}))

    def _vacuum(self, table_ref: str) -> None:
        retain = self.config.vacuum_retain_hours
        if retain is None:
            self.spark.sql(vacuum_sql(table_ref))
            return
        # an explicit retention is the user's decision: Delta's guard against one shorter
        # than the table's is lifted for this statement only
        before = self.spark.conf.get(RETENTION_CHECK, None)
        self.spark.conf.set(RETENTION_CHECK, "false")
        try:
            self.spark.sql(vacuum_sql(table_ref, retain))
        finally:
            if before is None:
                self.spark.conf.unset(RETENTION_CHECK)
            else:
                self.spark.conf.set(RETENTION_CHECK, before)


__all__ = [
    "AUTO_COMPACT",
    "LAST_VACUUM_PROPERTY",
    "VACUUMS_PER_BATCH",
    "TableDetail",
    "Upkeep",
    "due",
    "table_detail",
    "table_properties",
]
