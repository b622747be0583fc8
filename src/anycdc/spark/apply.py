"""Apply one micro-batch of changelog rows to one Delta table.

Per table and batch:

1. **schema**: the batch's columns (logical types) are merged into the table's
   schema — new columns are added as nullable, compatible widenings follow,
   an incompatible change dead-letters that table's events with the reason;
2. **actions**: every row change becomes an *upsert* (insert, snapshot, update)
   or a *delete* keyed by the primary key; an update that changes the key also
   deletes the old key; events older than the table's TRUNCATE position are
   dropped; values that cannot be cast to their column go to dead letters;
3. **fold**: per key, actions are sorted by source position (then Kafka
   partition/offset) and folded: the last full image wins, partial images are
   overlaid on what came before, a delete resets;
4. **merge**: one MERGE whose every clause requires the incoming position to be
   greater than the row's ``_cdc_position`` (and than the key's delete
   tombstone), so replays and late older events change nothing; into a big table
   (``key_range_min_mb``) it reads only the files whose key range overlaps the
   batch's keys (:meth:`TableApplier.key_ranges`);
5. **tombstones**: the pipeline appends every table's deleted keys with their
   position to ``_anycdc/tombstones`` (:mod:`anycdc.spark.tombstones`) once
   the batch's MERGEs have committed.

The pipeline runs schema changes and truncates first (idempotent by
themselves), then sets ``txnAppId``/``txnVersion`` as session settings (MERGE
honours only those) for the window in which every Delta table gets exactly
one write for the batch, so a batch replayed after a crash is skipped table by
table; the position guards make a replay harmless even where Delta would run
it again.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final

from anycdc.config import PipelineConfig
from anycdc.devtools.chaos import crash_point
from anycdc.naming import (
    ColumnNames,
    assign_columns,
    needs_column_mapping,
    shortened,
    source_comment,
    source_of,
)
from anycdc.schedule import TableIdent
from anycdc.spark.commit import DeltaTables, LogState
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.maintenance import LAST_VACUUM_PROPERTY, TableDetail, table_detail
from anycdc.spark.sql_types import cast_sql, settle_type
from anycdc.spark.tombstones import Tombstones

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("anycdc.apply")

ROW_KEY: Final = "_cdc_row_key"  # full-row identity for tables without a key
META_COLUMNS: Final = (
    ("_cdc_position", "STRING"),
    ("_cdc_ts", "TIMESTAMP"),
    ("_cdc_op", "STRING"),
    ("_cdc_batch", "BIGINT"),
)
TRUNCATE_PROPERTY: Final = "anycdc.truncatePosition"
SOURCE_TABLE_PROPERTY: Final = "anycdc.sourceTable"
"""The source table's full name (JSON list: database, schema, table), on a table whose
folder name had to be shortened (:func:`anycdc.naming.path_segment`)."""
TIMESTAMP_NTZ_FEATURE: Final = {"delta.feature.timestampNtz": "supported"}
COLUMN_MAPPING: Final = {"delta.columnMapping.mode": "name"}
"""What a table whose column names Delta rejects gets (Delta raises the protocol itself:
reader 2, writer 5). Only where needed: delta-rs' Arrow dataset reads such a table's
columns as NULLs, and some engines cannot read it at all; under ``column_names: portable``
no name needs it (:func:`anycdc.naming.portable_name`)."""
HISTORY_MARKER: Final = "_cdc_is_current"  # only SCD2 history tables have it
UPSERT_OPS: Final = ("insert", "snapshot", "update")
BATCH_COLUMN: Final = "_batch"  # the micro-batch id, carried in the MERGE source's rows
# The staged MERGE source holds the target's columns under their target names next to
# these: all in anycdc's ``_cdc_`` namespace, which no target column of a source takes.
STAGE_KIND: Final = "_cdc_in_kind"
STAGE_FULL: Final = "_cdc_in_full"
STAGE_POS: Final = "_cdc_in_pos"
STAGE_TS: Final = "_cdc_in_ts"
STAGE_OP: Final = "_cdc_in_op"
STAGE_BATCH: Final = "_cdc_in_batch"
STAGE_HAS: Final = "_cdc_in_has_"


def q(name: str) -> str:
    """Quote an identifier (names come from messages: they are data)."""
    return "`" + name.replace("`", "``") + "`"


def lit(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# Key ranges: a key column's smallest and largest value in a batch are read as exact text
# and written back into the MERGE condition as bounds that Delta's data skipping compares
# with each file's min/max statistics. Dates and timestamps travel as day and microsecond
# counts (a timestamp's text would depend on the session time zone and its DST folds), a
# zone-less timestamp as its text when that has four-digit years; types without an exact
# round trip (BINARY, FLOAT, BOOLEAN) get no bounds.
_EXACT_TEXT: Final = re.compile(
    r"STRING|TINYINT|SMALLINT|INT|BIGINT|DECIMAL\(\d+,\d+\)|TIMESTAMP_NTZ"
)
_COUNTED: Final = {
    "DATE": ("unix_date", "date_from_unix_date"),
    "TIMESTAMP": ("unix_micros", "timestamp_micros"),
}
_NTZ_TEXT: Final = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?")


def has_exact_bounds(spark_type: str) -> bool:
    """Whether a key column of ``spark_type`` gets bounds (:func:`range_text_sql`).

    >>> has_exact_bounds("DECIMAL(12,2)"), has_exact_bounds("TIMESTAMP"), has_exact_bounds("BINARY")
    (True, True, False)
    """
    return spark_type in _COUNTED or _EXACT_TEXT.fullmatch(spark_type) is not None


def range_text_sql(spark_type: str, column: str) -> str:
    """SQL of ``column``'s value (of a type with :func:`has_exact_bounds`) as a text that
    :func:`range_bound_sql` turns back into the same value.

    >>> range_text_sql("DATE", "min(`d`)")
    'CAST(unix_date(min(`d`)) AS STRING)'
    """
    if spark_type in _COUNTED:
        return f"CAST({_COUNTED[spark_type][0]}({column}) AS STRING)"
    return f"CAST({column} AS STRING)"


def range_bound_sql(spark_type: str, text: str) -> str | None:
    """A constant of ``spark_type`` from a text of :func:`range_text_sql` (None where it
    could not be read back exactly).

    >>> range_bound_sql("DECIMAL(12,2)", "7.50"), range_bound_sql("TIMESTAMP", "1000")
    ("CAST('7.50' AS DECIMAL(12,2))", 'timestamp_micros(1000)')
    >>> range_bound_sql("TIMESTAMP_NTZ", "+10000-01-01 00:00:00") is None
    True
    """
    if spark_type == "TIMESTAMP_NTZ" and not _NTZ_TEXT.fullmatch(text):
        return None
    if spark_type in _COUNTED:
        return f"{_COUNTED[spark_type][1]}({int(text)})"
    if spark_type == "STRING":
        return lit(text)
    return f"CAST({lit(text)} AS {spark_type})"


@dataclass
class TablePlan:
    """What the batch holds for one source table."""

    database: str | None
    schema: str | None
    table: str
    # name -> the logical types the batch gave it, in source order (first-seen column order)
    columns: dict[str, list[str]] = field(default_factory=dict)
    key: tuple[str, ...] | None = None
    row_id: bool = False  # events carry a vendor row identity
    truncate_position: str | None = None
    has_rows: bool = False
    dropped: list[str] = field(default_factory=list)  # DROP COLUMN (DDL)
    renamed: list[tuple[str, str, str]] = field(default_factory=list)
    """RENAME COLUMN (DDL): (old, new, the DDL's position)."""

    @property
    def qualified(self) -> str:
        return ".".join(p for p in (self.database, self.schema, self.table) if p)

    @property
    def ident(self) -> TableIdent:
        return (self.database, self.schema, self.table)

    def see(self, name: str, logical: str) -> None:
        """Record that ``name`` came with type ``logical`` (after what came before)."""
        seen = self.columns.setdefault(name, [])
        if not seen or seen[-1] != logical:
            seen.append(logical)


@dataclass
class TableResult:
    """What applying one table's batch did (for metrics and ``status``)."""

    table: str
    path: str
    events: int = 0
    upserts: int = 0
    deletes: int = 0
    dead_letters: int = 0
    max_position: str | None = None
    max_ts_ms: int | None = None
    min_ts_ms: int | None = None
    """The oldest source time the apply held (how stale the table was when it ran)."""
    error: str | None = None
    appended: bool = False
    """Written by an append, not a MERGE (nothing in the table could match)."""
    seconds: float = 0.0
    """The wall time of the table's write (its share of the batch's ``apply`` phase)."""


class IncompatibleSchema(Exception):
    """A column's new type cannot hold the old data nor the old type the new data."""


def settled_types(
    columns: dict[str, list[str]],
    current: dict[str, str],
    decimal_default: tuple[int, int],
    retyped: set[str] | None = None,
    keep: bool = False,
) -> dict[str, str]:
    """Column -> Spark type: each column's logical types folded, in order, over its
    ``current`` Spark type (:func:`~anycdc.spark.sql_types.settle_type`). A type that is
    not a widening raises :class:`IncompatibleSchema`; given ``retyped``, it starts the
    column afresh at the new type and adds its name there (``schema_changes: evolve``);
    with ``keep``, the column keeps the type it had (``ignore``: values are cast to it).

    >>> settled_types({"p": ["decimal", "decimal(18,4)"], "n": ["int32"]}, {"n": "BIGINT"}, (38, 18))
    {'p': 'DECIMAL(38,18)', 'n': 'BIGINT'}
    >>> narrowed: set[str] = set()
    >>> settled_types({"n": ["string"]}, {"n": "BIGINT"}, (38, 18), narrowed), narrowed
    ({'n': 'STRING'}, {'n'})
    """
    settled_all = {}
    for name, logicals in columns.items():
        settled: str | None = current.get(name)
        for logical in logicals:
            before = settled
            settled = settle_type(before, logical, decimal_default)
            if settled is None and keep:
                settled = before
            elif settled is None and retyped is not None:
                settled = settle_type(None, logical, decimal_default)
                retyped.add(name)
            if settled is None:
                raise IncompatibleSchema(f"column {name}: cannot change {before} to {logical}")
        if settled is not None:
            settled_all[name] = settled
    return settled_all


@dataclass(frozen=True)
class TableSummary:
    """What an apply's pending rows say of one source table: the hand-off from the plan
    job (one aggregate over every due table's rows) to :func:`build_plans`.

    >>> row = {"database": "shop", "schema": None, "table": "orders", "rows": 2,
    ...        "sightings": [{"position": "7", "columns": [{"name": "id", "type": "int64"}]}],
    ...        "key": ["id"], "ddl": [], "image_columns": ["id", "note"]}
    >>> summary = TableSummary.from_row(row)
    >>> summary.ident, summary.sightings, summary.urgency
    (('shop', None, 'orders'), (('7', (('id', 'int64'),)),), None)
    """

    database: str | None
    schema: str | None
    table: str
    rows: int = 0
    sightings: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    """Each distinct column list (name, logical type) with the first position it came at."""
    ddl: tuple[tuple[str, str], ...] = ()
    """Each DDL statement with its position."""
    image_columns: tuple[str, ...] = ()
    """Every column an image names (formats without types still name their columns)."""
    key: tuple[str, ...] | None = None
    has_row_id: bool = False
    truncate_position: str | None = None
    has_rows: bool = False
    produced_ms: int | None = None
    """The Kafka record time of the table's oldest row (None: a source without one)."""

    @property
    def ident(self) -> TableIdent:
        return (self.database, self.schema, self.table)

    @property
    def urgency(self) -> str | None:
        """Why the table is due at once whatever its freshness (DDL, TRUNCATE), or None."""
        return "ddl" if self.ddl else "truncate" if self.truncate_position else None

    @classmethod
    def from_row(cls, row: Any) -> TableSummary:
        """From a row of the plan job (a Spark ``Row`` or a mapping with its fields)."""

        def field_of(name: str) -> Any:
            try:
                return row[name]
            except (KeyError, ValueError):  # a Row raises ValueError for a missing field
                return None

        return cls(
            row["database"],
            row["schema"],
            row["table"],
            rows=int(field_of("rows") or 0),
            sightings=tuple(
                (s["position"] or "", tuple((c["name"], c["type"]) for c in s["columns"]))
                for s in field_of("sightings") or ()
                if s["columns"]
            ),
            ddl=tuple((d["position"] or "", d["ddl"]) for d in field_of("ddl") or () if d["ddl"]),
            image_columns=tuple(field_of("image_columns") or ()),
            key=tuple(field_of("key")) if field_of("key") else None,
            has_row_id=bool(field_of("has_row_id")),
            truncate_position=field_of("truncate_position"),
            has_rows=bool(field_of("has_rows")),
            produced_ms=field_of("produced_ms"),
        )


def build_plans(
    summaries: Iterable[TableSummary], config: PipelineConfig
) -> dict[TableIdent, TablePlan]:
    """Merge the apply's table summaries into one plan per table.

    A summary holds every distinct column list of its table with the first source
    position it came at (``sightings``) and the DDL statements with theirs: column types
    and DDL are folded in source order, so a table ends with the same schema however its
    stream is cut into batches.
    """
    plans: dict[TableIdent, TablePlan] = {}
    for summary in summaries:
        ident = summary.ident
        plan = plans.get(ident)
        if plan is None:
            plan = plans[ident] = TablePlan(*ident)
        steps: list[tuple[str, int, Any]] = [
            (position, 0, columns) for position, columns in summary.sightings
        ]
        steps += [(position, 1, text) for position, text in summary.ddl]
        for position, kind, item in sorted(steps, key=lambda step: step[:2]):
            if kind == 0:
                for name, logical in item:
                    plan.see(name, logical)
            else:
                _apply_ddl(plan, item, position)
        gone = set(plan.dropped) | {old for old, _, _ in plan.renamed}
        for name in summary.image_columns:
            if name not in plan.columns and name not in gone:
                plan.see(name, "unknown")  # untyped: kept as text
        plan.has_rows = plan.has_rows or summary.has_rows
        if summary.key:
            plan.key = summary.key
        if summary.has_row_id:
            plan.row_id = True
        if summary.truncate_position and (
            plan.truncate_position is None or summary.truncate_position > plan.truncate_position
        ):
            plan.truncate_position = summary.truncate_position
    for plan in plans.values():
        # a tables: entry's primary_key, else primary_keys (PipelineConfig.table_settings)
        override = config.table_settings(plan.ident).primary_key
        if override:
            plan.key = override
    return plans


class TableApplier:
    """Applies batches to one Delta table at ``path`` (path-based or catalog).

    This is the SCD1 applier (the table holds the current row per key);
    :class:`anycdc.spark.scd2.Scd2Applier` overrides the metadata columns,
    :meth:`apply` and the truncate hooks to keep history instead.
    """

    meta_columns: ClassVar[tuple[tuple[str, str], ...]] = META_COLUMNS
    """The ``_cdc_`` columns this mode adds to every table (name, Spark type)."""
    history: ClassVar[bool] = False
    """True for SCD2 history tables (they carry :data:`HISTORY_MARKER`)."""
    created_by_first_write: ClassVar[bool] = True
    """A new table is created by its first write (one commit, its schema and properties
    given to it), not by a CREATE TABLE before it (two commits)."""

    def __init__(self, spark: SparkSession, config: PipelineConfig, plan: TablePlan) -> None:
        self.spark = spark
        self.config = config
        self.plan = plan
        self.path = config.table_path(plan.database, plan.schema, plan.table)
        self.settings = config.table_settings(plan.ident)
        """The table's own settings (its ``tables:`` entry over the run-wide ones)."""
        self.tombstones = Tombstones(spark, config)
        self.created = False  # by this applier: the table is empty until its first write
        self.unborn = False  # created, but only by the first write (:meth:`finish_create`)
        self._created_properties: dict[str, str] = {}
        self._unborn_columns: dict[str, str] = {}  # by source name, for :meth:`finish_create`
        self.columns: dict[str, str] = {}  # every column, as :meth:`ensure_schema` left them
        self.targets: dict[str, str] = {}
        """Source column -> its column in the table (:func:`anycdc.naming.assign_columns`)."""
        self.last_detail = TableDetail({}, 0, 0)  # as :meth:`detail` last read it

    # ------------------------------------------------------------------ helpers
    def _table_ref(self) -> str:
        return f"delta.{q(self.path)}"

    def exists(self) -> bool:
        return self._exists()

    def _exists(self) -> bool:
        from delta.tables import DeltaTable

        return bool(DeltaTable.isDeltaTable(self.spark, self.path))

    def key_columns(self) -> tuple[str, ...]:
        """The key's source column names (the full-row hash for a table without a key)."""
        if self.plan.key:
            return self.plan.key
        return (ROW_KEY,)

    def target(self, source: str) -> str:
        """The table's column for the source column ``source``."""
        return self.targets.get(source, source)

    def column_names(self) -> ColumnNames:
        """How this table's new columns are named (``column_names``: its ``tables:`` entry's,
        else the run's)."""
        return self.settings.column_names

    def renamed_columns(self) -> dict[str, str]:
        """Target -> source of the columns whose name is not their source's."""
        return {t: s for s, t in self.targets.items() if s != t}

    # ------------------------------------------------------------------ schema
    @property
    def schema_changes(self) -> str:
        """What a schema change of the source does to the table (``schema_changes``: its
        ``tables:`` entry's, else the run's)."""
        return self.settings.schema_changes

    def desired_types(
        self, current: dict[str, str] | None = None, retyped: set[str] | None = None
    ) -> dict[str, str]:
        """Column -> Spark type once the batch's types are folded over ``current``'s
        (``retyped``, and ``ignore``'s keeping of a type: see :func:`settled_types`)."""
        current = current or {}
        keep = self.schema_changes == "ignore"
        desired = settled_types(
            self.plan.columns, current, self.config.decimal_default, retyped, keep
        )
        if not self.plan.key:
            desired = {ROW_KEY: "STRING", **desired}
        for key in self.key_columns():
            desired.setdefault(key, current.get(key, "STRING"))
        return desired

    def ensure_schema(
        self,
        batch_id: int,
        known: Mapping[str, str] | None = None,
        known_targets: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Create or evolve the table; returns source column -> Spark type of the source's
        columns as the table now has them (:attr:`columns` gets every column by its name in
        the table, ``_cdc_`` ones too; :attr:`targets` each source column's name there).

        ``known``, ``known_targets``: the table's columns and names as the run last left
        them (no look at the table; nothing at all happens when the batch brings no new
        column or type)."""
        seed = {} if self.plan.key else {ROW_KEY: ROW_KEY}
        if known is None and not self._exists():
            # a new table: a type that changes within its first apply settles as its mode says
            desired = self.desired_types(None, set() if self.schema_changes == "evolve" else None)
            self.targets = assign_columns(desired, seed, self.column_names())
            self._created_properties = self._creation_properties(desired)
            plain = not self.renamed_columns() and not any(
                name in self._created_properties for name in COLUMN_MAPPING
            )
            # a layout (partitions, clustering) is the CREATE TABLE's: the batched engine's
            # first write (commit.py) writes unpartitioned, unclustered files
            plain = plain and not (self.settings.partition_by or self.settings.cluster_by)
            if self.created_by_first_write and plain:
                self.unborn = True
                self._unborn_columns = desired
            else:
                # a renamed column's comment and column mapping take the CREATE TABLE
                self._create(desired)
            self.created = True
            self.columns = {**self._by_target(desired), **dict(self.meta_columns)}
            return desired
        meta = {name for name, _ in self.meta_columns}
        if known is not None:
            current = dict(known)
            existing = dict(known_targets or {})
        else:
            fields = self._schema_fields()
            current = {f.name: _ddl_type(f.dataType.simpleString().upper()) for f in fields}
            existing = {
                source_of(f.name, f.metadata.get("comment")): f.name
                for f in fields
                if f.name not in meta
            }
        if (HISTORY_MARKER in current) != self.history:
            # SCD1 rows and SCD2 history cannot share a table: refuse rather than corrupt it
            written = "scd2 (history)" if HISTORY_MARKER in current else "scd1"
            raise IncompatibleSchema(
                f"table was written in {written} mode; run it with that mode or use a new target"
            )
        by_source = {source: current[target] for source, target in existing.items()}
        mode = self.schema_changes
        if mode == "ignore":
            # the table keeps its schema: values of columns it lacks are not written, and
            # a value its column's type cannot hold is a dead letter (a bad cast)
            self.targets = assign_columns((), {**seed, **existing})
            self.columns = dict(current)
            return by_source
        if mode == "fail":
            self._refuse_changes(by_source)
        if mode == "evolve":
            self._rename_and_drop(current, existing, by_source)
        retyped: set[str] = set()
        desired = self.desired_types(by_source, retyped if mode == "evolve" else None)
        if retyped:
            self._rewrite({name: desired[name] for name in sorted(retyped)}, existing, current)
            by_source.update({name: desired[name] for name in retyped})
        self.targets = assign_columns(desired, {**seed, **existing}, self.column_names())
        additions = {k: v for k, v in desired.items() if k not in by_source}
        changes = {k: v for k, v in desired.items() if k in by_source and by_source[k] != v}
        if additions:
            features = {}
            if any(needs_column_mapping(self.target(n)) for n in additions):
                # an existing table gets column mapping when a name first needs it
                features.update(COLUMN_MAPPING)
            if any("TIMESTAMP_NTZ" in t for t in additions.values()):
                # Delta adds the feature itself at CREATE, not for a column added later
                features.update(TIMESTAMP_NTZ_FEATURE)
            if features:
                self.spark.sql(
                    f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ({_property_list(features)})"
                )
            cols = ", ".join(self._column_ddl(n, t) for n, t in additions.items())
            self.spark.sql(f"ALTER TABLE {self._table_ref()} ADD COLUMNS ({cols})")
            log.info("%s: added columns %s", self.plan.qualified, ", ".join(additions))
        if changes:
            self.spark.sql(
                f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"
            )
            for name, target in changes.items():
                self.spark.sql(
                    f"ALTER TABLE {self._table_ref()} ALTER COLUMN {q(self.target(name))} TYPE {target}"
                )
            log.info("%s: widened %s", self.plan.qualified, changes)
        current.update(self._by_target(additions))
        current.update(self._by_target(changes))
        self.columns = dict(current)
        return {**by_source, **additions, **changes}

    def _refuse_changes(self, by_source: dict[str, str]) -> None:
        """``schema_changes: fail``: raise :class:`IncompatibleSchema` naming the first change
        the batch makes to the table (a new column, a type, a rename or drop in DDL)."""
        plan = self.plan
        try:
            desired = self.desired_types(by_source)
        except IncompatibleSchema as exc:
            raise IncompatibleSchema(f"{exc} (schema_changes: fail)") from None
        found = [f"new column {name}" for name in desired if name not in by_source]
        found += [
            f"column {name}: {by_source[name]} to {kind}"
            for name, kind in desired.items()
            if name in by_source and by_source[name] != kind
        ]
        found += [
            f"column {old} renamed to {new}" for old, new, _ in plan.renamed if old in by_source
        ]
        found += [f"column {name} dropped" for name in plan.dropped if name in by_source]
        if found:
            raise IncompatibleSchema(f"{'; '.join(found)} (schema_changes: fail)")

    def _rename_and_drop(
        self, current: dict[str, str], existing: dict[str, str], by_source: dict[str, str]
    ) -> None:
        """``schema_changes: evolve``: the DDL's renames (in source order), then its drops, as
        Delta column-mapping renames and drops (metadata only: no file is rewritten, and
        earlier versions keep the old names). ``current``, ``existing`` and ``by_source``
        follow. A key column is never dropped (its rows could not be told apart)."""
        plan = self.plan
        steps: list[tuple[str, str, str | None]] = [
            ("rename", old, new) for old, new, _ in plan.renamed
        ]
        steps += [("drop", name, None) for name in plan.dropped]
        wanted = [
            step for step in steps
            if step[1] in existing and (step[0] == "drop" or step[2] not in existing)
        ]  # fmt: skip
        if not wanted:
            return
        ref = self._table_ref()
        if self.last_detail is None or not all(
            self.last_detail.properties.get(k) == v for k, v in COLUMN_MAPPING.items()
        ):
            self.spark.sql(
                f"ALTER TABLE {ref} SET TBLPROPERTIES ({_property_list(COLUMN_MAPPING)})"
            )
        keys = set(self.key_columns())
        for action, old, new in wanted:
            target = existing[old]
            if action == "drop":
                if old in keys:
                    log.warning(
                        "%s: key column %s dropped at the source: kept", plan.qualified, old
                    )
                    continue
                self.spark.sql(f"ALTER TABLE {ref} DROP COLUMN {q(target)}")
                del existing[old], by_source[old]
                current.pop(target, None)
                log.info("%s: column %s dropped (metadata only)", plan.qualified, old)
                continue
            assert new is not None
            others = {k: v for k, v in existing.items() if k != old}
            moved = assign_columns([new], others, self.column_names())[new]
            if moved != target:
                self.spark.sql(f"ALTER TABLE {ref} RENAME COLUMN {q(target)} TO {q(moved)}")
            # the comment names the source column where the table's name differs from it
            comment = source_comment(new) if moved != new else ""
            self.spark.sql(f"ALTER TABLE {ref} ALTER COLUMN {q(moved)} COMMENT {lit(comment)}")
            existing[new] = moved
            del existing[old]
            by_source[new] = by_source.pop(old)
            current[moved] = current.pop(target)
            log.info("%s: column %s renamed to %s (metadata only)", plan.qualified, old, new)
            crash_point("renamed")  # the fault suite's moment: renamed, rows not yet written

    def _rewrite(
        self, types: dict[str, str], existing: dict[str, str], current: dict[str, str]
    ) -> None:
        """``schema_changes: evolve``: columns whose type changed in a way Delta cannot widen
        (a narrowing, BIGINT to STRING ...) are rewritten: every row's value cast, through
        its text, to the new type, as the source's ALTER did (a value that does not fit
        becomes NULL). One overwrite of the table, its schema replaced."""
        from pyspark.sql import functions as F

        frame = self.spark.read.format("delta").load(self.path)
        fields = {f.name: f for f in frame.schema.fields}
        for name, kind in types.items():
            target = existing.get(name)
            if target is None or target not in fields:
                continue
            text = f"CAST({q(target)} AS STRING)"
            frame = frame.withColumn(
                target, F.expr(cast_sql(text, kind)).alias(target, metadata=fields[target].metadata)
            )
            current[target] = kind
        frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
            self.path
        )
        log.info("%s: rewrote %s for their new types", self.plan.qualified, ", ".join(types))

    def _by_target(self, types: Mapping[str, str]) -> dict[str, str]:
        """``types`` (by source column) by the columns' names in the table."""
        return {self.target(name): spark_type for name, spark_type in types.items()}

    def _column_ddl(self, source: str, spark_type: str) -> str:
        """A column's definition; a renamed column names its source in its comment."""
        target = self.target(source)
        ddl = f"{q(target)} {spark_type}"
        return ddl if target == source else f"{ddl} COMMENT {lit(source_comment(source))}"

    def _schema_fields(self) -> list[Any]:
        return list(self.spark.read.format("delta").load(self.path).schema.fields)

    def _creation_properties(self, columns: dict[str, str]) -> dict[str, str]:
        """The properties a new table with ``columns`` (by source name) is created with."""
        # a new table has nothing to vacuum: its first VACUUM is due a full interval later
        properties = {
            **self.settings.table_properties,
            LAST_VACUUM_PROPERTY: str(int(time.time() * 1000)),
        }
        if any(needs_column_mapping(self.target(n)) for n in columns):
            properties.update(COLUMN_MAPPING)
        if any(shortened(part) for part in self._ident() if part):
            properties[SOURCE_TABLE_PROPERTY] = json.dumps(list(self._ident()), ensure_ascii=False)
        return properties

    def _create(self, columns: dict[str, str]) -> None:
        cols = [self._column_ddl(n, t) for n, t in columns.items()]
        cols += [f"{q(n)} {t}" for n, t in self.meta_columns]
        layout = ""
        if self.settings.partition_by:
            layout = f" PARTITIONED BY ({self._layout_columns('partition_by', columns)})"
        elif self.settings.cluster_by:
            layout = f" CLUSTER BY ({self._layout_columns('cluster_by', columns)})"
        self.spark.sql(
            f"CREATE TABLE IF NOT EXISTS {self._table_ref()} ({', '.join(cols)}) USING delta"
            f"{layout} TBLPROPERTIES ({_property_list(self._created_properties)})"
        )
        log.info("%s: created %s", self.plan.qualified, self.path)

    def _layout_columns(self, key: str, columns: Mapping[str, str]) -> str:
        """The quoted table columns of the ``tables:`` entry's ``partition_by`` or
        ``cluster_by`` (source names); a name the table has not is the table's error."""
        wanted: tuple[str, ...] = getattr(self.settings, key)
        missing = [name for name in wanted if name not in columns]
        if missing:
            raise IncompatibleSchema(
                f"tables.{self.settings.pattern}.{key}: no column {missing[0]!r} in the table "
                f"(it has {', '.join(sorted(columns))})"
            )
        return ", ".join(q(self.target(name)) for name in wanted)

    def align_clustering(self, detail: TableDetail) -> bool:
        """Give an existing table the entry's ``cluster_by`` when its clustering columns
        differ (``ALTER TABLE ... CLUSTER BY``: files written from then on, and ``OPTIMIZE``,
        cluster by them; none are rewritten now). True when it was changed."""
        wanted = self.settings.cluster_by
        if not wanted or self.created:
            return False
        targets = tuple(self.target(name) for name in wanted)
        if tuple(c.lower() for c in detail.clustering) == tuple(t.lower() for t in targets):
            return False
        self._layout_columns("cluster_by", self.targets)  # by source name
        self.spark.sql(
            f"ALTER TABLE {self._table_ref()} CLUSTER BY ({', '.join(q(t) for t in targets)})"
        )
        log.info("%s: clustered by %s", self.plan.qualified, ", ".join(targets))
        return True

    def finish_create(self) -> None:
        """Create the table now if its first write has not (the apply wrote no row: all
        deleted, or dead-lettered), so that it exists as the run knows it."""
        if self.unborn:
            self._create(self._unborn_columns)
            self.unborn = False

    def register(self) -> str:
        """Register the table in the Spark catalog (``table_name``) as an external Delta
        table at its path; an existing name is left as it is. Returns the quoted name."""
        parts = [q(p) for p in self.config.catalog_name(*self._ident())]
        if len(parts) > 1:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {'.'.join(parts[:-1])}")
        name = ".".join(parts)
        self.spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING delta LOCATION {lit(self.path)}")
        return name

    def _ident(self) -> tuple[str | None, str | None, str]:
        return self.plan.database, self.plan.schema, self.plan.table

    def properties(self) -> dict[str, str]:
        """The table's properties ({} while it does not exist)."""
        return self.detail().properties

    def detail(self) -> TableDetail:
        """The table's properties, file count and size (nothing while it does not exist);
        kept as :attr:`last_detail`, whose size decides whether a MERGE is key-bounded."""
        self.last_detail = (
            table_detail(self.spark, self._table_ref()) if self._exists() else TableDetail({}, 0, 0)
        )
        return self.last_detail

    def created_detail(self) -> TableDetail:
        """What :meth:`detail` would say of the table this applier just created (no files,
        the properties it was created with), without a look at it."""
        clustering = tuple(self.target(c) for c in self.settings.cluster_by)
        return TableDetail(dict(self._created_properties), 0, 0, clustering)

    def truncated_properties(self, position: str) -> dict[str, str]:
        """The properties :meth:`apply_truncate` sets (for what the run knows of the table)."""
        return {TRUNCATE_PROPERTY: position}

    def align_properties(self, current: dict[str, str]) -> dict[str, str]:
        """Set the configured ``table_properties`` (the run's and the table's entry's) that ``current`` (the table's) lacks or
        holds otherwise (names and values compared without case, as Delta spells its own
        names its way); returns what was set."""
        have = {k.lower(): v.lower() for k, v in current.items()}
        wanted = {
            k: v
            for k, v in self.settings.table_properties.items()
            if have.get(k.lower()) != v.lower()
        }
        if wanted and self.unborn:
            self._created_properties.update(wanted)  # given to the table as it is created
        elif wanted:
            self.spark.sql(
                f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ({_property_list(wanted)})"
            )
            log.info("%s: set table properties %s", self.plan.qualified, ", ".join(wanted))
        return wanted

    def table_ref(self) -> str:
        """The table in SQL: ``delta.`/path```."""
        return self._table_ref()

    def truncate_position(self, properties: dict[str, str] | None = None) -> str | None:
        """The position of the last TRUNCATE applied (from ``properties`` when given)."""
        props = self.properties() if properties is None else properties
        return props.get(TRUNCATE_PROPERTY)

    # ------------------------------------------------------------------ actions
    def actions(self, events: DataFrame, types: dict[str, str], floor: str | None) -> DataFrame:
        """Row changes as (key texts, kind, image, full, position, order ...).

        SQL text throughout: a few calls into the JVM per table, whatever its key (an
        apply of hundreds of tables builds hundreds of these)."""
        keys = self.key_columns()
        ops = ", ".join(lit(op) for op in (*UPSERT_OPS, "delete"))
        condition = f"op IN ({ops}) AND coalesce(split, '') <> 'before'"
        if floor is not None:
            condition += f" AND (position IS NULL OR position > {lit(floor)})"
        rows = events.where(condition)
        if self.schema_changes == "evolve" and self.plan.renamed:
            from pyspark.sql import functions as F

            # a change from before a rename carries the old name: it is the renamed column's
            rows = rows.withColumns(
                {
                    image: F.expr(renamed_image(image, self.plan.renamed))
                    for image in ("before", "after")
                }
            )
        if keys == (ROW_KEY,):
            rows = rows.withColumn("before", _with_row_key("before")).withColumn(
                "after", _with_row_key("after")
            )
        batch = INGEST_BATCH if INGEST_BATCH in rows.columns else "CAST(NULL AS BIGINT)"
        order = ["position", "partition", "offset", "event_index", f"{batch} AS {INGEST_BATCH}"]
        tail = ["ts_ms", "raw", "source", "format"]

        def key_text(image: str) -> str:
            return f"to_json(array({', '.join(f'element_at({image}, {lit(k)})' for k in keys)}))"

        upserts = rows.where("op <> 'delete'").selectExpr(
            f"{key_text('after')} AS _key", "'upsert' AS kind", "after AS image",
            "NOT array_contains(partial, 'after') AS full", *order, *tail, "op",
        )  # fmt: skip
        changed_key = f"{key_text('before')} <> {key_text('after')}"
        deletes = rows.where(
            f"op = 'delete' OR (op = 'update' AND before IS NOT NULL AND {changed_key})"
        ).selectExpr(
            f"{key_text('before')} AS _key", "'delete' AS kind", "before AS image",
            "true AS full", *order, *tail, "'delete' AS op",
        )  # fmt: skip
        return upserts.unionByName(deletes)

    def bad_casts(self, actions: DataFrame, types: dict[str, str]) -> DataFrame:
        """Upserts whose image holds a value that its column's type cannot hold."""
        from pyspark.sql import functions as F

        checks = []
        for name, target in types.items():
            if target == "STRING" or name == ROW_KEY:
                continue
            text = f"element_at(image, {lit(name)})"
            checks.append(
                f"CASE WHEN {text} IS NOT NULL AND {cast_sql(text, target)} IS NULL "
                f"THEN {lit(name + ': cannot cast ')} || substr({text}, 1, 80) || {lit(' to ' + target)} END"
            )
        if not checks:
            return actions.withColumn("_bad", F.lit(None).cast("string"))
        reasons = f"concat_ws('; ', {', '.join(checks)})"
        return actions.withColumn("_bad", F.expr(f"nullif({reasons}, '')"))

    def fold(self, actions: DataFrame) -> DataFrame:
        """Per key, fold the ordered actions into one final action (:func:`fold_actions`)."""
        return fold_actions(actions)

    # ------------------------------------------------------------------ apply
    def apply(
        self, actions: DataFrame, types: dict[str, str], batch_id: int, has_deletes: bool = True
    ) -> None:
        """Apply the batch's good actions: fold them per key, then one guarded MERGE
        (the pipeline folds every table at once and calls :meth:`merge` itself)."""
        self.merge(self.fold(actions), types, batch_id)

    # ------------------------------------------------------------------ merge
    def merge(
        self,
        folded: DataFrame,
        types: dict[str, str],
        batch_id: int,
        guarded: bool = False,
        append: bool = False,
    ) -> None:
        """Write the folded actions: one MERGE guarded by positions and tombstones, or an
        append where nothing in the table can match (a table this run just created, or
        ``append``: the caller knows every key is above the table's, see
        :mod:`anycdc.spark.key_bound`). ``guarded``: the caller has already dropped what
        the tombstones stop (:meth:`~anycdc.spark.tombstones.Tombstones.guard`)."""
        staged = self.staged(folded, types, batch_id, guarded)
        if self.created or append:
            # nothing to match: an append (~3 jobs) does what the MERGE (~8-11) would
            rows = self.inserted(staged, types)
            if self.unborn:
                from pyspark.sql import functions as F

                # the table's first commit: schema (every column as the table is declared),
                # properties and rows at once; a table someone created meanwhile fails it
                writer = (
                    rows.select(*[F.col(q(n)).cast(t).alias(n) for n, t in self.columns.items()])
                    .writeTo(self._table_ref())
                    .using("delta")
                )
                for name, value in self._created_properties.items():
                    writer = writer.tableProperty(name, value)
                writer.create()
                self.unborn = False
                log.info("%s: created %s", self.plan.qualified, self.path)
            else:
                rows.write.format("delta").mode("append").save(self.path)
            self.created = False
        else:
            self._merge_staged(staged, types, batch_id)

    def staged(
        self, folded: DataFrame, types: dict[str, str], batch_id: int, guarded: bool = False
    ) -> DataFrame:
        """The folded actions as the write reads them: the values cast to their columns under
        their names in the table, with the ``_cdc_in_`` columns (kind, full image, which
        columns the image has, position, time, op, batch)."""
        source = folded if guarded else self.tombstones.guard_table(folded, self.path)
        source = with_batch(source, batch_id)
        # one SQL projection (a call into the JVM per table, not per column): the values
        # under their names in the table (source names are the images' keys)
        projections = [f"st.kind AS {STAGE_KIND}", f"st.full AS {STAGE_FULL}"]
        for name, spark_type in types.items():
            text = f"element_at(st.row, {lit(name)})"
            target = self.target(name)
            projections.append(f"{cast_sql(text, spark_type)} AS {q(target)}")
            projections.append(f"map_contains_key(st.row, {lit(name)}) AS {q(STAGE_HAS + target)}")
        projections += [
            f"nullif(st.pos, '') AS {STAGE_POS}",
            f"timestamp_millis(st.ts) AS {STAGE_TS}",
            f"st.op AS {STAGE_OP}",
            f"{BATCH_COLUMN} AS {STAGE_BATCH}",
        ]
        return source.selectExpr(*projections)

    def inserted(self, staged: DataFrame, types: dict[str, str]) -> DataFrame:
        """The rows an append writes: every upsert of ``staged`` (:meth:`staged`)."""
        return staged.where(f"{STAGE_KIND} = 'upsert'").selectExpr(
            *[q(self.target(name)) for name in types],
            f"{STAGE_POS} AS _cdc_position",
            f"{STAGE_TS} AS _cdc_ts",
            f"{STAGE_OP} AS _cdc_op",
            f"{STAGE_BATCH} AS _cdc_batch",
        )

    def rewritten(self, existing: DataFrame, staged: DataFrame, types: dict[str, str]) -> DataFrame:
        """The rows of ``existing`` (files of the table) after the staged actions: what the
        MERGE of :meth:`_merge_staged` leaves of them, as one frame in the table's columns.

        One full outer join on the key (``<=>``, as the MERGE matches): an action applies
        where no row has its key or where it is newer than the row (the same position guard
        as every MERGE clause); a delete drops the row, an upsert replaces the columns its
        image has (all of them for a full image), an unmatched upsert is a new row, and a
        row no newer action reaches stays as it was. Built as SQL text: a handful of calls
        into the JVM per table whatever its width."""
        from pyspark.sql import functions as F

        keys = [self.target(k) for k in self.key_columns()]
        table = existing.withColumn("_cdc_t_present", F.lit(True)).alias("t")
        on = " AND ".join(f"t.{q(k)} <=> s.{q(k)}" for k in keys)
        joined = table.join(staged.alias("s"), F.expr(on), "full_outer")
        row = "coalesce(t._cdc_t_present, false)"
        pos = f"s.{STAGE_POS}"
        newer = f"({pos} IS NULL OR t._cdc_position IS NULL OR {pos} > t._cdc_position)"
        applies = f"(s.{STAGE_KIND} IS NOT NULL AND (NOT {row} OR {newer}))"
        known = set(self.plan.columns) | {ROW_KEY}
        by_target = {self.target(name): name for name in types}
        meta = {
            "_cdc_position": STAGE_POS,
            "_cdc_ts": STAGE_TS,
            "_cdc_op": STAGE_OP,
            "_cdc_batch": STAGE_BATCH,
        }
        columns = []
        for column in existing.columns:
            mine, theirs = f"t.{q(column)}", f"s.{q(column)}"
            if column in meta:
                value = f"CASE WHEN {applies} THEN s.{meta[column]} ELSE {mine} END"
            elif column not in by_target:
                value = mine  # a column no action knows of
            elif column in keys:
                value = f"CASE WHEN {row} THEN {mine} ELSE {theirs} END"
            elif by_target[column] not in known:
                # a column dropped or renamed at the source: kept, written only by a change
                # that still carries it (one from before the DDL), filled by an insert
                has = f"s.{q(STAGE_HAS + column)}"
                value = (
                    f"CASE WHEN {applies} AND {has} THEN {theirs} WHEN {row} THEN {mine} "
                    f"ELSE {theirs} END"
                )
            else:
                given = f"(s.{STAGE_FULL} OR s.{q(STAGE_HAS + column)} OR NOT {row})"
                value = f"CASE WHEN {applies} AND {given} THEN {theirs} ELSE {mine} END"
            columns.append(f"{value} AS {q(column)}")
        upsert = f"s.{STAGE_KIND} = 'upsert'"
        kept = f"({row} AND NOT ({applies} AND NOT {upsert})) OR (NOT {row} AND {upsert})"
        return joined.where(kept).selectExpr(*columns)

    def commit_batched(
        self,
        folded: DataFrame,
        types: dict[str, str],
        batch_id: int,
        tables: DeltaTables,
        known: LogState | None,
        app_id: str,
        append: bool = False,
        snapshot: Any = None,
    ) -> LogState:
        """The batched engine's write (:mod:`anycdc.spark.commit`): the table's files and
        the folded actions (tombstones already applied) rewritten by one Spark job and
        committed, with the apply's ``(app_id, batch_id)``, through Delta's transaction;
        ``append``: no key of the batch is in the table (nothing is read or replaced);
        ``snapshot``: the Delta snapshot ``known`` is at, when the caller just read it.
        Returns the table's state after the commit."""
        from pyspark.sql import DataFrame as Frame

        staged = self.staged(folded, types, batch_id, guarded=True)

        def build(snapshot: Any, state: LogState) -> tuple[DataFrame | None, list[str]]:
            order = [str(f["name"]) for f in json.loads(snapshot.schema().json())["fields"]]
            if append or not state.files:
                rows = self.inserted(staged, types)
                replaced: list[str] = []
            else:
                replaced = list(state.files)
                existing = Frame(tables.files_frame(snapshot, state, replaced), self.spark)
                rows = self.rewritten(existing, staged, types)
            # a small table stays one file: the rewrite compacts what appends left
            return rows.selectExpr(*[q(name) for name in order]).coalesce(1), replaced

        return tables.commit(self.path, known, build, app_id, batch_id, snapshot)

    def create_batched(
        self,
        folded: DataFrame,
        types: dict[str, str],
        batch_id: int,
        tables: DeltaTables,
        app_id: str,
    ) -> LogState:
        """The batched engine's first write of a table that does not exist yet
        (:attr:`unborn`): created with its columns, properties and rows in one commit
        that carries the apply's ``(app_id, batch_id)`` (:meth:`DeltaTables.create`)."""
        staged = self.staged(folded, types, batch_id, guarded=True)
        rows = self.inserted(staged, types).selectExpr(
            *[
                f"CAST({q(name)} AS {spark_type}) AS {q(name)}"
                for name, spark_type in self.columns.items()
            ]
        )
        state = tables.create(
            self.path, rows.coalesce(1), self._created_properties, app_id, batch_id
        )
        self.unborn = self.created = False
        log.info("%s: created %s", self.plan.qualified, self.path)
        return state

    def _merge_staged(self, staged: DataFrame, types: dict[str, str], batch_id: int) -> None:
        """One MERGE of the staged rows, every clause guarded by the position."""
        keys = [self.target(k) for k in self.key_columns()]
        on = " AND ".join([f"t.{q(k)} <=> s.{q(k)}" for k in keys] + self.key_ranges(staged, types))
        pos = f"s.{STAGE_POS}"
        newer = f"({pos} IS NULL OR t._cdc_position IS NULL OR {pos} > t._cdc_position)"
        # a column dropped at the source keeps its values (only a change carrying it writes it)
        known = set(self.plan.columns) | {ROW_KEY}
        sets = {}
        for name in types:
            target = self.target(name)
            if target in keys:
                continue
            col, has = q(target), q(STAGE_HAS + target)
            if name not in known:  # dropped or renamed at the source: a change that has it
                sets[col] = f"CASE WHEN s.{has} THEN s.{col} ELSE t.{col} END"
                continue
            sets[col] = f"CASE WHEN s.{STAGE_FULL} OR s.{has} THEN s.{col} ELSE t.{col} END"
        meta = {
            "_cdc_position": pos,
            "_cdc_ts": f"s.{STAGE_TS}",
            "_cdc_op": f"s.{STAGE_OP}",
            "_cdc_batch": f"s.{STAGE_BATCH}",
        }
        inserts = {q(self.target(name)): f"s.{q(self.target(name))}" for name in types}
        inserts.update(meta)
        update_set = ", ".join(f"{k} = {v}" for k, v in {**sets, **meta}.items())
        insert_cols = ", ".join(inserts)
        insert_vals = ", ".join(inserts.values())
        kind = f"s.{STAGE_KIND}"
        view = f"anycdc_stage_{abs(hash((self.path, batch_id)))}"
        staged.createOrReplaceTempView(view)
        try:
            self.spark.sql(
                f"MERGE INTO {self._table_ref()} t USING {view} s ON {on} "
                f"WHEN MATCHED AND {kind} = 'delete' AND {newer} THEN DELETE "
                f"WHEN MATCHED AND {kind} = 'upsert' AND {newer} THEN UPDATE SET {update_set} "
                f"WHEN NOT MATCHED AND {kind} = 'upsert' THEN INSERT ({insert_cols}) VALUES ({insert_vals})"
            )
        finally:
            self.spark.catalog.dropTempView(view)

    def key_ranges(self, staged: DataFrame, types: dict[str, str]) -> list[str]:
        """Conditions on the target's key columns that every row the batch can match
        meets — each key column between the batch's smallest and largest value — so that
        the MERGE reads only the files whose statistics overlap them.

        Only for a table with more than one file and of at least ``key_range_min_mb``
        (:attr:`last_detail`); none for a column the batch has a NULL in (``<=>`` matches NULL
        keys), for a type without exact bounds (:func:`range_text_sql`), or for tables
        keyed by the full-row hash (its order says nothing).
        """
        from pyspark.sql import functions as F

        size = self.last_detail
        if not self.plan.key or size.num_files < 2:
            return []
        if size.size_bytes < self.config.key_range_min_mb * 2**20:
            return []
        bounded = [
            (self.target(key), types[key]) for key in self.plan.key if has_exact_bounds(types[key])
        ]
        if not bounded:
            return []
        aggregates = []
        for index, (key, spark_type) in enumerate(bounded):
            for end in ("min", "max"):
                text = range_text_sql(spark_type, f"{end}({q(key)})")
                aggregates.append(F.expr(text).alias(f"{end}{index}"))
            aggregates.append(F.expr(f"bool_or({q(key)} IS NULL)").alias(f"null{index}"))
        found = staged.agg(*aggregates).first()
        if found is None:
            return []
        conditions = []
        for index, (key, spark_type) in enumerate(bounded):
            low, high = found[f"min{index}"], found[f"max{index}"]
            if found[f"null{index}"] or low is None or high is None:
                continue
            bounds = range_bound_sql(spark_type, low), range_bound_sql(spark_type, high)
            if bounds[0] is not None and bounds[1] is not None:
                conditions.append(f"t.{q(key)} >= {bounds[0]}")
                conditions.append(f"t.{q(key)} <= {bounds[1]}")
        return conditions

    # ------------------------------------------------------------------ truncate
    def apply_truncate(self, position: str, batch_id: int) -> None:
        """Empty the table of rows older than the TRUNCATE; remember its position.

        Runs outside the idempotent-write window (see the pipeline): it is idempotent by itself.
        """
        if self.unborn:
            # nothing in it yet: the position goes with the table as it is created
            self._created_properties[TRUNCATE_PROPERTY] = position
            return
        self.spark.sql(
            f"DELETE FROM {self._table_ref()} WHERE _cdc_position IS NULL "
            f"OR _cdc_position < {lit(position)}"
        )
        self.spark.sql(
            f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ({lit(TRUNCATE_PROPERTY)} = {lit(position)})"
        )


def _property_list(properties: dict[str, str]) -> str:
    """``'k' = 'v', ...`` for TBLPROPERTIES (names and values are the user's: quoted)."""
    return ", ".join(f"{lit(k)} = {lit(v)}" for k, v in properties.items())


def table_condition(plan: TablePlan) -> str:
    """SQL of "the event is of ``plan``'s source table" over changelog rows.

    >>> print(table_condition(TablePlan("shop", None, "orders")))
    database <=> 'shop' AND schema IS NULL AND `table` = 'orders'
    """
    parts = [
        f"{column} <=> {lit(value)}" if value is not None else f"{column} IS NULL"
        for column, value in (("database", plan.database), ("schema", plan.schema))
    ]
    return " AND ".join([*parts, f"`table` = {lit(plan.table)}"])


def with_batch(frame: DataFrame, batch_id: int) -> DataFrame:
    """``frame`` with the batch id as a column (:data:`BATCH_COLUMN`), unless it has one.

    The pipeline adds it before it caches a batch's folded actions, so the MERGEs read
    it as data: as a literal in the MERGE it would be compiled into every table's
    generated code, in every batch (see :func:`~anycdc.spark.tombstones.table_tag`).
    """
    from pyspark.sql import functions as F

    if BATCH_COLUMN in frame.columns:
        return frame
    return frame.withColumn(BATCH_COLUMN, F.lit(int(batch_id)).cast("bigint"))


def fold_actions(actions: DataFrame, by: Sequence[str] = ("_key",)) -> DataFrame:
    """Per ``by`` (the key; the pipeline adds the table), fold the actions, ordered by
    source position then arrival, into one final state ``st``: the last full image
    wins, partial images are overlaid on what came before, a delete resets."""
    from pyspark.sql import functions as F

    # maps are not orderable: sort with a comparator on the ordering struct only
    ordered = actions.groupBy(*by).agg(
        F.expr(
            "array_sort(collect_list(struct(struct(coalesce(position, '') AS p, "
            f"coalesce({INGEST_BATCH}, -1) AS b, source, "
            "partition, offset, event_index) AS o, kind, image, full, ts_ms, op, "
            "coalesce(position, '') AS position)), "
            "(l, r) -> CASE WHEN l.o < r.o THEN -1 WHEN l.o > r.o THEN 1 ELSE 0 END)"
        ).alias("evs")
    )
    empty = "cast(map() as map<string,string>)"
    state = (
        f"named_struct('kind', 'none', 'row', {empty}, 'full', false, 'pos', '', 'ts', "
        "cast(null as bigint), 'op', cast(null as string))"
    )
    step = (
        "(s, e) -> CASE "
        "WHEN e.kind = 'delete' THEN named_struct('kind', 'delete', 'row', e.image, "
        "'full', true, 'pos', e.position, 'ts', e.ts_ms, 'op', e.op) "
        "WHEN e.full THEN named_struct('kind', 'upsert', 'row', e.image, 'full', true, "
        "'pos', e.position, 'ts', e.ts_ms, 'op', e.op) "
        "ELSE named_struct('kind', 'upsert', 'row', map_concat(s.row, e.image), "
        "'full', s.full OR s.kind = 'delete', 'pos', e.position, 'ts', e.ts_ms, 'op', e.op) END"
    )
    return ordered.select(*by, F.expr(f"aggregate(evs, {state}, {step})").alias("st"))


def renamed_image(image: str, renames: list[tuple[str, str, str]]) -> str:
    """SQL: the map column ``image`` with each (old, new, position) rename applied to the
    rows from before its position (in order: a column renamed twice ends at the last name).

    >>> print(renamed_image("after", [("a", "b", "7")]))  # doctest: +NORMALIZE_WHITESPACE
    CASE WHEN position < '7' AND map_contains_key(after, 'a') THEN map_concat(map_filter(after,
    (k, v) -> k <> 'a'), map('b', element_at(after, 'a'))) ELSE after END
    """
    expr = image
    for old, new, position in renames:
        expr = (
            f"CASE WHEN position < {lit(position)} AND map_contains_key({expr}, {lit(old)}) "
            f"THEN map_concat(map_filter({expr}, (k, v) -> k <> {lit(old)}), "
            f"map({lit(new)}, element_at({expr}, {lit(old)}))) ELSE {expr} END"
        )
    return expr


def _apply_ddl(plan: TablePlan, statement: str, position: str = "") -> None:
    """Fold an ALTER TABLE into the plan: added/retyped columns; drops and renames recorded
    (what they do to the table is ``schema_changes``'s: :meth:`TableApplier.ensure_schema`)."""
    from anycdc.ddl import column_changes
    from anycdc.typemap import sql_type

    for change in column_changes(statement):
        if change.action == "add" and change.type:
            plan.see(change.column, str(sql_type(change.type)))
        elif change.action == "retype" and change.type:
            logical = sql_type(change.type)
            if logical.name != "unknown":
                plan.see(change.column, str(logical))
        elif change.action == "drop":
            plan.dropped.append(change.column)
            plan.columns.pop(change.column, None)
        elif change.action == "rename" and change.new_name:
            plan.renamed.append((change.column, change.new_name, position))
            plan.columns.pop(change.column, None)


def ingest_batch(frame: DataFrame) -> Any:
    """The frame's :data:`~anycdc.spark.ledger.INGEST_BATCH` column (null where it has none):
    the order of arrival across the batches one apply covers."""
    from pyspark.sql import functions as F

    if INGEST_BATCH in frame.columns:
        return F.col(INGEST_BATCH)
    return F.lit(None).cast("bigint").alias(INGEST_BATCH)


def _with_row_key(image: str) -> Any:
    """Add a full-row identity to an image (tables without any key)."""
    from pyspark.sql import functions as F

    # sorted entries: the same row hashes the same whatever the column order of the message;
    # NULLs left out: a row written before an ADD COLUMN has the same identity after it
    content = f"to_json(array_sort(map_entries(map_filter({image}, (k, v) -> v IS NOT NULL))))"
    return F.expr(
        f"CASE WHEN {image} IS NULL THEN {image} "
        f"ELSE map_concat({image}, map({lit(ROW_KEY)}, sha2({content}, 256))) END"
    )


def _ddl_type(simple: str) -> str:
    """Spark's simpleString (``decimal(20,0)``, ``timestamp_ntz``) -> our DDL spelling."""
    text = simple.upper()
    return {"INTEGER": "INT", "BYTE": "TINYINT", "SHORT": "SMALLINT", "LONG": "BIGINT"}.get(
        text, text
    )


def describe(types: dict[str, str]) -> str:
    return json.dumps(types)


__all__: Sequence[str] = [
    "TableApplier",
    "TablePlan",
    "TableResult",
    "TableSummary",
    "build_plans",
    "fold_actions",
    "ingest_batch",
    "lit",
    "q",
    "settled_types",
    "table_condition",
]
