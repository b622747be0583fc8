"""What the run knows of each target table between its applies, and a due table's state in one.

Where it sits: source -> decode -> changelog -> plan -> **apply** -> commit. The apply round
(:mod:`anycdc.spark.apply_round`) keeps a :class:`TableState` per table path for the whole
run (its columns, properties, size, key bound and Delta log, read once and then kept up to
date by the run's own changes: anycdc is the table's only writer), and makes a
:class:`DueTable` for each table an apply writes: its applier (:mod:`anycdc.spark.apply`,
:mod:`anycdc.spark.scd2`), whose schema step (:mod:`anycdc.spark.table_schema`) it runs,
with that state. The round asks a due table what it needs (is the table still to be
created by its first write? can the write be an append?) through the methods here, never
through the applier's own attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from anycdc.spark.actions import ActionSpec, checked_columns
from anycdc.spark.apply import TableApplier
from anycdc.spark.commit import LogState
from anycdc.spark.key_bound import KeyBound, bound_column, log_version, read_bound
from anycdc.spark.maintenance import TableDetail
from anycdc.spark.plan import TablePlan
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.table_schema import TableSchema

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

DETAIL_EVERY: Final = 16
"""A table's size (DESCRIBE DETAIL: whether its MERGE is key-bounded) is read on its first
apply in a run, then every so many applies; properties and schema are known in between."""


@dataclass
class TableState:
    """What this run knows of a target table between its applies (read once, then kept
    up to date by the run's own changes: anycdc is the table's only writer)."""

    columns: dict[str, str]
    """Column -> Spark type, with the ``_cdc_`` columns, as the table now is."""
    targets: dict[str, str] = field(default_factory=dict)
    """Source column -> its name in the table (:attr:`TableSchema.targets`)."""
    detail: TableDetail | None = None
    applies_since_detail: int = 0
    bound: KeyBound | None = None
    """No key above this as of a version (:mod:`anycdc.spark.key_bound`); None: not read."""
    log: LogState | None = None
    """The table's Delta log as the batched engine last read or wrote it
    (:mod:`anycdc.spark.commit`); None: not read yet."""

    def committed_by_run(self, spark: SparkSession, path: str) -> None:
        """The run has just committed to the table itself (a schema change, TRUNCATE,
        VACUUM): its key bound holds at the table's new version (these only add columns
        or remove rows)."""
        if self.bound is not None:
            version = log_version(spark, path, after=self.bound.version)
            self.bound = KeyBound(self.bound.high, version if version is not None else -1)

    def vacuumed(self, spark: SparkSession, path: str) -> None:
        """The run has just vacuumed the table: its stamp changed (its detail is read again)."""
        self.detail = None
        self.committed_by_run(spark, path)


@dataclass
class DueTable:
    """A due table in one apply: its applier and what the run knows of it; after
    :meth:`align`, ready for its write."""

    applier: TableApplier | Scd2Applier
    """The table's write; its schema step is :attr:`schema`."""
    state: TableState
    types: dict[str, str]
    """Column -> Spark type of the source's columns."""
    floor: str | None = None
    """The position of the last TRUNCATE applied: older events are dropped."""
    bound_column: str | None = None
    """The key column whose bound can turn the MERGE into an append (scd1)."""
    schema_changed: bool = False
    """The schema step committed to the table (its key bound moves to the new version)."""

    @classmethod
    def schema_step(
        cls, applier: TableApplier | Scd2Applier, state: TableState | None, through: int
    ) -> DueTable:
        """Create or evolve the table (:meth:`TableSchema.ensure_schema`; no look at it
        when the run knows it) and bring ``state`` (None: the run's first apply of the
        table) up to date with its columns."""
        schema = applier.schema
        if state is None:
            types = schema.ensure_schema(through)
            state = TableState(schema.columns)
        else:
            types = schema.ensure_schema(through, state.columns, state.targets)
        changed = state.columns != schema.columns
        state.columns = schema.columns
        state.targets = schema.targets
        return cls(applier, state, types, schema_changed=changed)

    @property
    def schema(self) -> TableSchema:
        """The table's schema step (what the table is: columns, names, properties)."""
        return self.applier.schema

    @property
    def path(self) -> str:
        return self.schema.path

    @property
    def plan(self) -> TablePlan:
        return self.schema.plan

    @property
    def keeps_history(self) -> bool:
        """An SCD2 history table: a version per change, never a fold per key."""
        return self.schema.history

    @property
    def awaits_first_write(self) -> bool:
        """The table does not exist yet: its first write creates it (schema, properties and
        rows in one commit), else :meth:`create_if_unwritten` does."""
        return self.schema.unborn

    @property
    def created_in_this_apply(self) -> bool:
        """This apply created the table (or is about to, by its first write): nothing in it
        can match, so its write is an append."""
        return self.schema.created

    def create_if_unwritten(self) -> bool:
        """Create the table now if its first write has not (the apply wrote no row: all
        deleted, or dead-lettered), so that it exists as the run knows it; True if it did."""
        if not self.schema.unborn:
            return False
        self.schema.finish_create()
        return True

    def align(
        self, spark: SparkSession, through: int, properties: list[tuple[str, dict[str, str]]]
    ) -> None:
        """After :meth:`schema_step`: the table's detail (known, else read every
        :data:`DETAIL_EVERY` applies), its configured properties and clustering, its TRUNCATE,
        and the key column its bound is kept for. Its properties are added to ``properties``
        (for the VACUUMs that are due)."""
        schema, known, plan = self.schema, self.state, self.plan
        if schema.created:
            # what a new table holds is known: no look at it
            known.detail = schema.created_detail()
            known.applies_since_detail = 0
        elif known.detail is None or known.applies_since_detail >= DETAIL_EVERY:
            known.detail = schema.detail()  # the size: whether its MERGE is key-bounded
            known.applies_since_detail = 0
        schema.last_detail = known.detail
        known.applies_since_detail += 1
        props = known.detail.properties
        props.update(schema.align_properties(props))
        changed = self.schema_changed
        if schema.align_clustering(known.detail):
            known.detail = replace(
                known.detail,
                clustering=tuple(schema.target(c) for c in schema.settings.cluster_by),
            )
            changed = True
        floor = schema.truncate_position(props)
        if plan.truncate_position and (floor is None or plan.truncate_position > floor):
            self.applier.apply_truncate(plan.truncate_position, through)
            floor = plan.truncate_position
            props.update(schema.truncated_properties(floor))
            changed = True
        properties.append((schema.table_ref(), props))
        if changed:
            known.committed_by_run(spark, schema.path)
        self.floor = floor
        # history tables insert a version per change: no key bound turns that into an append
        self.bound_column = None if schema.history else bound_column(plan.key, self.types)

    def action_spec(self, tag: str) -> ActionSpec:
        """The row of the round's spec frame (:func:`~anycdc.spark.actions.round_actions`)
        for this table, tagged ``tag``: after :meth:`align`, its floor and key bound."""
        schema, plan = self.schema, self.plan
        renamed = schema.schema_changes == "evolve" and plan.renamed
        return ActionSpec(
            tag,
            plan.database,
            plan.schema,
            plan.table,
            schema.key_columns(),
            floor=None if schema.history else self.floor,
            bound=self.bound_column,
            renames=tuple(plan.renamed) if renamed else (),
            history=schema.history,
            checks=checked_columns(self.types),
        )

    def appendable(self, spark: SparkSession, stats: Row) -> bool:
        """Whether the table's pending changes are upserts of keys above all of its own
        (:mod:`anycdc.spark.key_bound`): then an append writes what the MERGE would."""
        if not self.bound_column or stats["deletes"] or stats["key_unknown"]:
            return False
        if stats["key_low"] is None:
            return False
        path, known = self.path, self.state
        bound = known.bound
        if bound is not None and log_version(spark, path, after=bound.version) != bound.version:
            bound = known.bound = None  # a commit the run did not make
        if bound is None:
            if stats["not_inserts"]:
                # an update of a row the source has: in the table, or about to be; reading
                # the bound (~4 jobs: the table's statistics) would buy nothing
                return False
            column = self.schema.target(self.bound_column)  # its name in the table
            bound = known.bound = read_bound(spark, path, self.schema.table_ref(), column)
        return bound.admits(int(stats["key_low"]))

    def raise_bound(self, spark: SparkSession, stats: Row, created: bool) -> None:
        """After the table's write: its bound with the keys the write brought, at the
        version the write made; forgotten when another commit came in between."""
        path, known = self.path, self.state
        high = int(stats["key_high"]) if stats["key_high"] is not None else None
        if created:
            # the run has just created it: it holds this write's keys and nothing else
            version = log_version(spark, path)
            known.bound = KeyBound(high, version) if version is not None else None
            return
        bound = known.bound
        if bound is None:
            return
        version = log_version(spark, path, after=bound.version)
        if version is not None and version - bound.version <= 1:
            # one commit: this write (none: Delta skipped it as already applied)
            known.bound = bound.raised(high, version)
        else:
            known.bound = None
