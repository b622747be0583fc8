"""The plan step: what an apply's pending changelog rows say of each source table.

Where it sits: source -> decode -> changelog -> **plan** -> apply -> commit. The ingest step
(:mod:`anycdc.spark.ingest`) summarizes a batch's (or an apply's) rows into one
:class:`TableSummary` per table; :func:`build_plans` folds them, columns and DDL in source
order, into one :class:`TablePlan` per table, which the appliers
(:mod:`anycdc.spark.apply`, :mod:`anycdc.spark.scd2`) turn into schema changes and writes.
The plan job (:func:`summarize`) is this module's one Spark job: each batch's, at ingest
(its summaries are kept for the apply, :meth:`TableSummary.combine`), and an apply's over
rows a restart found pending; the rest is plain data from its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anycdc import event
from anycdc.config import PipelineConfig
from anycdc.schedule import TableIdent
from anycdc.spark.ledger import PENDING_OPS
from anycdc.spark.sql_types import settle_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
            sightings=first_sightings(
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

    @classmethod
    def combine(cls, parts: Sequence[TableSummary]) -> TableSummary:
        """One table's summary of the rows of several batches from the summaries of each
        (oldest first): what the plan job gives for all those rows at once, without
        reading them again. Counts add up; each column list keeps the first position it
        came at; DDL statements are all kept; a key, a truncate position are the greatest,
        a record time the least (the plan job's ``max`` / ``min``).

        >>> cols = (("id", "int64"),)
        >>> a = TableSummary("shop", None, "orders", rows=2, sightings=(("5", cols),),
        ...                  image_columns=("id",), produced_ms=20)
        >>> b = TableSummary("shop", None, "orders", rows=3, sightings=(("3", cols),),
        ...                  ddl=(("4", "ALTER TABLE orders ADD note TEXT"),),
        ...                  image_columns=("id", "note"), key=("id",), produced_ms=10)
        >>> both = TableSummary.combine([a, b])
        >>> both.rows, both.sightings, both.image_columns, both.key, both.produced_ms
        (5, (('3', (('id', 'int64'),)),), ('id', 'note'), ('id',), 10)
        """
        first, *_ = parts
        keys = [p.key for p in parts if p.key]
        truncates = [p.truncate_position for p in parts if p.truncate_position is not None]
        produced = [p.produced_ms for p in parts if p.produced_ms is not None]
        return cls(
            first.database,
            first.schema,
            first.table,
            rows=sum(p.rows for p in parts),
            sightings=first_sightings(s for p in parts for s in p.sightings),
            ddl=tuple(d for p in parts for d in p.ddl),
            image_columns=tuple(dict.fromkeys(c for p in parts for c in p.image_columns)),
            key=max(keys) if keys else None,
            has_row_id=any(p.has_row_id for p in parts),
            truncate_position=max(truncates) if truncates else None,
            has_rows=any(p.has_rows for p in parts),
            produced_ms=min(produced) if produced else None,
        )


Sighting = tuple[str, tuple[tuple[str, str], ...]]
"""A column list (name, logical type) and the source position it came at."""


def first_sightings(sightings: Iterable[Sighting]) -> tuple[Sighting, ...]:
    """Each distinct column list once, at the first position it came at. The plan job
    groups rows by their column structs, which also carry the vendor type; two lists that
    differ only there are one list to the plan (and to :meth:`TableSummary.combine`).

    >>> cols = (("id", "int64"),)
    >>> first_sightings([("9", cols), ("10", cols), ("2", (("id", "string"),))])
    (('10', (('id', 'int64'),)), ('2', (('id', 'string'),)))
    """
    first: dict[tuple[tuple[str, str], ...], str] = {}
    for position, columns in sightings:
        seen = first.get(columns)
        if seen is None or position < seen:  # the plan job's min over position text
            first[columns] = position
    return tuple((position, columns) for columns, position in first.items())


def summarize(wanted: DataFrame) -> list[TableSummary]:
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
            F.max(F.when(F.col("op") == event.Op.TRUNCATE.value, F.col("position"))).alias(
                "truncate_position"
            ),
            F.max(F.col("op").isin(*sorted(op.value for op in event.ROW_OPS))).alias("has_rows"),
            F.min(produced).alias("produced_ms"),
            F.collect_list(
                F.when(F.col("op") == event.Op.DDL.value, F.struct(F.col("position"), F.col("ddl")))
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
                apply_ddl(plan, item, position)
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


def apply_ddl(plan: TablePlan, statement: str, position: str = "") -> None:
    """Fold an ALTER TABLE into the plan: added/retyped columns; drops and renames recorded
    (what they do to the table is ``schema_changes``'s:
    :meth:`~anycdc.spark.table_schema.TableSchema.ensure_schema`)."""
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
