"""Apply one micro-batch of changelog rows to one Delta table.

Where it sits: source -> decode -> changelog -> plan -> **apply** -> commit. The pipeline's
apply round (:mod:`anycdc.spark.apply_round`) makes one applier per due table from its
:class:`~anycdc.spark.plan.TablePlan`; the SQL text is built by
:mod:`anycdc.spark.merge_sql`. Per table and batch:

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
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from anycdc.config import PipelineConfig
from anycdc.event import Op
from anycdc.faults import crash_point
from anycdc.naming import (
    ColumnNames,
    assign_columns,
    needs_column_mapping,
    shortened,
    source_comment,
    source_of,
)
from anycdc.spark.actions import (
    ROW_KEY,
    UPSERT_OPS,
    bad_cast_sql,
    checked_columns,
    row_key_sql,
    types_map_sql,
    upserts_and_deletes,
)
from anycdc.spark.commit import DeltaTables, LogState
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.maintenance import LAST_VACUUM_PROPERTY, TableDetail, table_detail
from anycdc.spark.merge_sql import (
    STAGE_BATCH,
    STAGE_FULL,
    STAGE_HAS,
    STAGE_KIND,
    STAGE_OP,
    STAGE_POS,
    STAGE_TS,
    STAGED_META,
    delta_ref,
    has_exact_bounds,
    lit,
    merge_statement,
    property_list,
    q,
    range_bound_sql,
    range_text_sql,
    renamed_image,
    rewrite_sql,
    table_condition,
)
from anycdc.spark.plan import (
    IncompatibleSchema,
    TablePlan,
    TableSummary,
    build_plans,
    settled_types,
)
from anycdc.spark.sql_types import cast_sql
from anycdc.spark.tombstones import Tombstones

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("anycdc.apply")

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
BATCH_COLUMN: Final = "_batch"  # the micro-batch id, carried in the MERGE source's rows


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
        return delta_ref(self.path)

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
                    f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ({property_list(features)})"
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
            self.spark.sql(f"ALTER TABLE {ref} SET TBLPROPERTIES ({property_list(COLUMN_MAPPING)})")
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
            f"{layout} TBLPROPERTIES ({property_list(self._created_properties)})"
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
                f"ALTER TABLE {self._table_ref()} SET TBLPROPERTIES ({property_list(wanted)})"
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
        ops = ", ".join(lit(op) for op in (*UPSERT_OPS, Op.DELETE.value))
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
            typed = types_map_sql(checked_columns(types))
            rows = rows.withColumn("before", _with_row_key("before", typed)).withColumn(
                "after", _with_row_key("after", typed)
            )

        def key_text(image: str) -> str:
            return f"to_json(array({', '.join(f'element_at({image}, {lit(k)})' for k in keys)}))"

        return upserts_and_deletes(rows, key_text)

    def bad_casts(self, actions: DataFrame, types: dict[str, str]) -> DataFrame:
        """Upserts whose image holds a value that its column's type cannot hold."""
        from pyspark.sql import functions as F

        checks = [
            bad_cast_sql(f"element_at(image, {lit(name)})", lit(name), lit(target), target)
            for name, target in checked_columns(types)
        ]
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
            *[f"{staged} AS {name}" for name, staged in STAGED_META.items()],
        )

    def rewritten(self, existing: DataFrame, staged: DataFrame, types: dict[str, str]) -> DataFrame:
        """The rows of ``existing`` (files of the table) after the staged actions: what the
        MERGE of :meth:`_merge_staged` leaves of them, as one frame in the table's columns:
        one full outer join on the key (``<=>``, as the MERGE matches), its SQL text from
        :func:`~anycdc.spark.merge_sql.rewrite_sql` (a handful of calls into the JVM per
        table whatever its width)."""
        from pyspark.sql import functions as F

        keys = [self.target(k) for k in self.key_columns()]
        on, kept, values = rewrite_sql(existing.columns, keys, self.source_columns(types))
        table = existing.withColumn("_cdc_t_present", F.lit(True)).alias("t")
        joined = table.join(staged.alias("s"), F.expr(on), "full_outer")
        return joined.where(kept).selectExpr(*values)

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
        Returns the table's state after the commit (no longer :attr:`created`)."""
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

        state = tables.commit(self.path, known, build, app_id, batch_id, snapshot)
        self.created = False  # written: from now on its rows can match, as after merge()
        return state

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
        """One MERGE of the staged rows, every clause guarded by the position
        (:func:`~anycdc.spark.merge_sql.merge_statement`)."""
        keys = [self.target(k) for k in self.key_columns()]
        ranges = self.key_ranges(staged, types)
        view = f"anycdc_stage_{abs(hash((self.path, batch_id)))}"
        statement = merge_statement(
            self._table_ref(), view, keys, ranges, self.source_columns(types)
        )
        staged.createOrReplaceTempView(view)
        try:
            self.spark.sql(statement)
        finally:
            self.spark.catalog.dropTempView(view)

    def source_columns(self, types: Mapping[str, str]) -> dict[str, bool]:
        """Each column of ``types`` (source names) by its name in the table -> whether the
        source still has it (False: dropped or renamed at the source, its values kept)."""
        known = set(self.plan.columns) | {ROW_KEY}
        return {self.target(name): name in known for name in types}

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


def ingest_batch(frame: DataFrame) -> Any:
    """The frame's :data:`~anycdc.spark.ledger.INGEST_BATCH` column (null where it has none):
    the order of arrival across the batches one apply covers."""
    from pyspark.sql import functions as F

    if INGEST_BATCH in frame.columns:
        return F.col(INGEST_BATCH)
    return F.lit(None).cast("bigint").alias(INGEST_BATCH)


def _with_row_key(image: str, types: str) -> Any:
    """Add a full-row identity to an image (tables without any key)."""
    from pyspark.sql import functions as F

    return F.expr(row_key_sql(image, types))


def _ddl_type(simple: str) -> str:
    """Spark's simpleString (``decimal(20,0)``, ``timestamp_ntz``) -> our DDL spelling."""
    text = simple.upper()
    return {"INTEGER": "INT", "BYTE": "TINYINT", "SHORT": "SMALLINT", "LONG": "BIGINT"}.get(
        text, text
    )


def describe(types: dict[str, str]) -> str:
    return json.dumps(types)


# the plan's and the SQL builder's names that callers have always imported from here
__all__: Sequence[str] = [
    "IncompatibleSchema",
    "TableApplier",
    "TablePlan",
    "TableResult",
    "TableSummary",
    "build_plans",
    "fold_actions",
    "ingest_batch",
    "lit",
    "q",
    "renamed_image",
    "settled_types",
    "table_condition",
]
