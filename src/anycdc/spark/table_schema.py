"""One target table's schema step: create or evolve it, its properties, layout and catalog name.

Where it sits: source -> decode -> changelog -> plan -> **apply** -> commit. The apply round
(:mod:`anycdc.spark.apply_round`) runs each due table's schema step before its write, outside
the idempotent-write window (each step is idempotent by itself): the batch's columns (logical
types) are merged into the table's schema — new columns are added as nullable, compatible
widenings follow, an incompatible change dead-letters that table's events with the reason
(``schema_changes``: evolve, ignore or fail); then its configured properties and clustering,
and the position of its last TRUNCATE. A new table is created by its first write where it
can be (one commit: :attr:`TableSchema.unborn`), else by a CREATE TABLE here.

The write that follows (:mod:`anycdc.spark.apply`, :mod:`anycdc.spark.scd2`) reads what this
step left: the table's columns by their names in the table and each source column's name
there (:attr:`TableSchema.targets`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from anycdc.config import PipelineConfig
from anycdc.faults import crash_point
from anycdc.naming import (
    ColumnNames,
    assign_columns,
    needs_column_mapping,
    shortened,
    source_comment,
    source_of,
)
from anycdc.spark.maintenance import LAST_VACUUM_PROPERTY, TableDetail, table_detail
from anycdc.spark.merge_sql import (
    ROW_KEY,
    add_columns_sql,
    alter_type_sql,
    as_text_sql,
    catalog_name_sql,
    cluster_by_sql,
    column_sql,
    comment_column_sql,
    create_database_sql,
    create_table_sql,
    delta_ref,
    drop_column_sql,
    register_table_sql,
    rename_column_sql,
    set_properties_sql,
)
from anycdc.spark.plan import IncompatibleSchema, TablePlan, settled_types
from anycdc.spark.sql_types import cast_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
TYPE_WIDENING: Final = {"delta.enableTypeWidening": "true"}
"""What a table gets before its first column is widened in place."""


class TableSchema:
    """The schema step of one Delta table at ``path`` (path-based or catalog), and what
    the table's write needs to know of it.

    This is the SCD1 table's (the current row per key);
    :class:`anycdc.spark.scd2.Scd2Schema` gives a history table its metadata columns,
    its end-marker table and no TRUNCATE floor.
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
        self.created = False  # by this run's apply: the table is empty until its first write
        self.unborn = False  # created, but only by the first write (:meth:`finish_create`)
        self.created_properties: dict[str, str] = {}
        """The properties a table this apply creates is created with."""
        self.unborn_columns: dict[str, str] = {}  # by source name, for :meth:`finish_create`
        self.columns: dict[str, str] = {}  # every column, as :meth:`ensure_schema` left them
        self.targets: dict[str, str] = {}
        """Source column -> its column in the table (:func:`anycdc.naming.assign_columns`)."""
        self.last_detail = TableDetail({}, 0, 0)  # as :meth:`detail` last read it
        self.dry: list[str] | None = None
        """When a list (:meth:`planned`): the statements the step would run, none run."""
        self._dry_fields: list[Any] | None = None  # the table's fields, as given to planned()
        self.carried: dict[str, str] = {}
        """A column the step renamed -> its name before (``planned``: where its values are)."""
        self.retyped: set[str] = set()
        """The columns (names in the table) the step rewrote for a type Delta cannot widen."""

    # ------------------------------------------------------------------ names
    def table_ref(self) -> str:
        """The table in SQL: ``delta.`/path```."""
        return delta_ref(self.path)

    def exists(self) -> bool:
        from delta.tables import DeltaTable

        if self.dry is not None:
            return self._dry_fields is not None
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
        if known is None and not self.exists():
            # a new table: a type that changes within its first apply settles as its mode says
            desired = self.desired_types(None, set() if self.schema_changes == "evolve" else None)
            self.targets = assign_columns(desired, seed, self.column_names())
            self.created_properties = self._creation_properties(desired)
            plain = not self.renamed_columns() and not any(
                name in self.created_properties for name in COLUMN_MAPPING
            )
            # a layout (partitions, clustering) is the CREATE TABLE's: the batched engine's
            # first write (commit.py) writes unpartitioned, unclustered files
            plain = plain and not (self.settings.partition_by or self.settings.cluster_by)
            if self.created_by_first_write and plain:
                self.unborn = True
                self.unborn_columns = desired
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
            current = {f.name: spark_ddl_type(f.dataType.simpleString().upper()) for f in fields}
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
                self._ddl(set_properties_sql(self.table_ref(), features))
            cols = [self._column_ddl(n, t) for n, t in additions.items()]
            self._ddl(add_columns_sql(self.table_ref(), cols))
            self._said("%s: added columns %s", self.plan.qualified, ", ".join(additions))
        if changes:
            self._ddl(set_properties_sql(self.table_ref(), TYPE_WIDENING))
            for name, target in changes.items():
                self._ddl(alter_type_sql(self.table_ref(), self.target(name), target))
            self._said("%s: widened %s", self.plan.qualified, changes)
        current.update(self._by_target(additions))
        current.update(self._by_target(changes))
        self.columns = dict(current)
        return {**by_source, **additions, **changes}

    def planned(self, fields: list[Any] | None) -> dict[str, str]:
        """What :meth:`ensure_schema` would make of the table whose fields (a Delta
        version's, ``StructField`` s) are ``fields`` (None: no table), touching nothing: the
        same return value, :attr:`columns` and :attr:`targets`, with :attr:`carried` and
        :attr:`retyped` saying where each column's values come from and :attr:`dry` the
        statements it would run. A fresh read (:mod:`anycdc.spark.reads`) runs it over
        the version it reads."""
        self.dry, self._dry_fields = [], fields
        return self.ensure_schema(0)

    def _said(self, message: str, *args: object) -> None:
        """Log what the step did (nothing, when :attr:`dry`: it did nothing)."""
        if self.dry is None:
            log.info(message, *args)

    def _ddl(self, statement: str) -> None:
        """Run a statement of the step (record it, when :attr:`dry`)."""
        if self.dry is not None:
            self.dry.append(statement)
        else:
            self.spark.sql(statement)

    def _refuse_changes(self, by_source: dict[str, str]) -> None:
        """``schema_changes: fail``: raise :class:`IncompatibleSchema` naming the first change
        the batch makes to the table (a new column, a type, a rename or drop in DDL)."""
        try:
            desired = self.desired_types(by_source)
        except IncompatibleSchema as exc:
            raise IncompatibleSchema(f"{exc} (schema_changes: fail)") from None
        found = changes_of(self.plan, by_source, desired)
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
        ref = self.table_ref()
        if self.last_detail is None or not all(
            self.last_detail.properties.get(k) == v for k, v in COLUMN_MAPPING.items()
        ):
            self._ddl(set_properties_sql(ref, COLUMN_MAPPING))
        keys = set(self.key_columns())
        for action, old, new in wanted:
            target = existing[old]
            if action == "drop":
                if old in keys:
                    log.warning(
                        "%s: key column %s dropped at the source: kept", plan.qualified, old
                    )
                    continue
                self._ddl(drop_column_sql(ref, target))
                del existing[old], by_source[old]
                current.pop(target, None)
                self._said("%s: column %s dropped (metadata only)", plan.qualified, old)
                continue
            assert new is not None
            others = {k: v for k, v in existing.items() if k != old}
            moved = assign_columns([new], others, self.column_names())[new]
            if moved != target:
                self._ddl(rename_column_sql(ref, target, moved))
                self.carried[moved] = self.carried.pop(target, target)
            # the comment names the source column where the table's name differs from it
            comment = source_comment(new) if moved != new else ""
            self._ddl(comment_column_sql(ref, moved, comment))
            existing[new] = moved
            del existing[old]
            by_source[new] = by_source.pop(old)
            current[moved] = current.pop(target)
            self._said("%s: column %s renamed to %s (metadata only)", plan.qualified, old, new)
            crash_point("renamed")  # the fault suite's moment: renamed, rows not yet written

    def _rewrite(
        self, types: dict[str, str], existing: dict[str, str], current: dict[str, str]
    ) -> None:
        """``schema_changes: evolve``: columns whose type changed in a way Delta cannot widen
        (a narrowing, BIGINT to STRING ...) are rewritten: every row's value cast, through
        its text, to the new type, as the source's ALTER did (a value that does not fit
        becomes NULL). One overwrite of the table, its schema replaced."""
        from pyspark.sql import functions as F

        if self.dry is not None:
            for name, kind in types.items():
                target = existing.get(name)
                if target is not None and target in current:
                    current[target] = kind
                    self.retyped.add(target)
            self.dry.append(f"rewrite {', '.join(types)}")
            return
        frame = self.spark.read.format("delta").load(self.path)
        fields = {f.name: f for f in frame.schema.fields}
        for name, kind in types.items():
            target = existing.get(name)
            if target is None or target not in fields:
                continue
            text = as_text_sql(target)
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
        return column_sql(target, spark_type, None if target == source else source_comment(source))

    def _schema_fields(self) -> list[Any]:
        if self.dry is not None and self._dry_fields is not None:
            return self._dry_fields
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
        cols += [column_sql(n, t) for n, t in self.meta_columns]
        partitioned, clustered = [], []
        if self.settings.partition_by:
            partitioned = self._layout_columns("partition_by", columns)
        elif self.settings.cluster_by:
            clustered = self._layout_columns("cluster_by", columns)
        statement = create_table_sql(
            self.table_ref(), cols, self.created_properties, partitioned, clustered
        )
        if self.dry is not None:
            self.dry.append(statement)
            return
        self.spark.sql(statement)
        log.info("%s: created %s", self.plan.qualified, self.path)

    def _layout_columns(self, key: str, columns: Mapping[str, str]) -> list[str]:
        """The table columns of the ``tables:`` entry's ``partition_by`` or
        ``cluster_by`` (source names); a name the table has not is the table's error."""
        wanted: tuple[str, ...] = getattr(self.settings, key)
        missing = [name for name in wanted if name not in columns]
        if missing:
            raise IncompatibleSchema(
                f"tables.{self.settings.pattern}.{key}: no column {missing[0]!r} in the table "
                f"(it has {', '.join(sorted(columns))})"
            )
        return [self.target(name) for name in wanted]

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
        self.spark.sql(cluster_by_sql(self.table_ref(), targets))
        log.info("%s: clustered by %s", self.plan.qualified, ", ".join(targets))
        return True

    def finish_create(self) -> None:
        """Create the table now if its first write has not (the apply wrote no row: all
        deleted, or dead-lettered), so that it exists as the run knows it."""
        if self.unborn:
            self._create(self.unborn_columns)
            self.unborn = False

    def register(self) -> str:
        """Register the table in the Spark catalog (``table_name``) as an external Delta
        table at its path; an existing name is left as it is. Returns the quoted name."""
        parts = self.config.catalog_name(*self._ident())
        if len(parts) > 1:
            self.spark.sql(create_database_sql(parts[:-1]))
        self.spark.sql(register_table_sql(parts, self.path))
        return catalog_name_sql(parts)

    def _ident(self) -> tuple[str | None, str | None, str]:
        return self.plan.database, self.plan.schema, self.plan.table

    def properties(self) -> dict[str, str]:
        """The table's properties ({} while it does not exist)."""
        return self.detail().properties

    def detail(self) -> TableDetail:
        """The table's properties, file count and size (nothing while it does not exist);
        kept as :attr:`last_detail`, whose size decides whether a MERGE is key-bounded."""
        self.last_detail = (
            table_detail(self.spark, self.table_ref()) if self.exists() else TableDetail({}, 0, 0)
        )
        return self.last_detail

    def created_detail(self) -> TableDetail:
        """What :meth:`detail` would say of the table this schema step just created (no files,
        the properties it was created with), without a look at it."""
        clustering = tuple(self.target(c) for c in self.settings.cluster_by)
        return TableDetail(dict(self.created_properties), 0, 0, clustering)

    def truncated_properties(self, position: str) -> dict[str, str]:
        """The properties :meth:`~anycdc.spark.apply.TableApplier.apply_truncate` sets (for
        what the run knows of the table)."""
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
            self.created_properties.update(wanted)  # given to the table as it is created
        elif wanted:
            self.spark.sql(set_properties_sql(self.table_ref(), wanted))
            log.info("%s: set table properties %s", self.plan.qualified, ", ".join(wanted))
        return wanted

    def truncate_position(self, properties: dict[str, str] | None = None) -> str | None:
        """The position of the last TRUNCATE applied (from ``properties`` when given)."""
        props = self.properties() if properties is None else properties
        return props.get(TRUNCATE_PROPERTY)


def changes_of(
    plan: TablePlan, by_source: Mapping[str, str], desired: Mapping[str, str]
) -> list[str]:
    """What a batch changes in a table whose source columns have the types ``by_source``
    when they are to be ``desired``: new columns, types, then the DDL's renames and drops
    of the table's columns (what ``schema_changes: fail`` refuses).

    >>> plan = TablePlan("shop", None, "orders", renamed=[("a", "b", "7")], dropped=["c"])
    >>> changes_of(plan, {"a": "INT", "c": "INT", "n": "INT"}, {"n": "BIGINT", "x": "DATE"})
    ['new column x', 'column n: INT to BIGINT', 'column a renamed to b', 'column c dropped']
    """
    found = [f"new column {name}" for name in desired if name not in by_source]
    found += [
        f"column {name}: {by_source[name]} to {kind}"
        for name, kind in desired.items()
        if name in by_source and by_source[name] != kind
    ]
    found += [f"column {old} renamed to {new}" for old, new, _ in plan.renamed if old in by_source]
    found += [f"column {name} dropped" for name in plan.dropped if name in by_source]
    return found


def spark_ddl_type(simple: str) -> str:
    """Spark's simpleString (``decimal(20,0)``, ``timestamp_ntz``) -> our DDL spelling.

    >>> spark_ddl_type("decimal(20,0)"), spark_ddl_type("long"), spark_ddl_type("integer")
    ('DECIMAL(20,0)', 'BIGINT', 'INT')
    """
    text = simple.upper()
    return {"INTEGER": "INT", "BYTE": "TINYINT", "SHORT": "SMALLINT", "LONG": "BIGINT"}.get(
        text, text
    )
