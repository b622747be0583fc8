"""Every due table's row actions in one plan.

Where it sits: changelog -> plan -> **row actions** -> fold -> apply. An apply round turns
the pending changelog rows of its due tables into row actions (an upsert or a delete per
key, a TRUNCATE of a history table), each with the reason it cannot be cast (``_bad``) and
the number its key bound reads (``_kv``). What differs between tables (their key, TRUNCATE
floor, renames, typed columns) is data: one row per table in a small broadcast frame
(:class:`ActionSpec`), joined to the changelog rows. So a round of hundreds of tables is
one plan that Spark analyses and compiles once, not a union of a plan per table (that
union's analysis grew with the square of the tables, and its compiled code with their
number: ~0.7 s a table at 100 tables).

Which changelog rows give which action, and what the action carries, is
:mod:`anycdc.spark.action_rules`' (:func:`~anycdc.spark.action_rules.row_actions`,
:data:`~anycdc.spark.action_rules.TRUNCATE_ACTION`); this module builds those actions for
every table at once.

The reference this plan is compared with builds the same actions a table at a time, SQL
text per table, as the round did before: tests/pipeline/reference_actions.py (test code
only), compared in tests/pipeline/test_actions.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from anycdc.event import Op
from anycdc.spark.action_rules import (
    DELETE,
    DELETED,
    ROW_ACTION_OPS,
    STATE,
    TRUNCATE_ACTION,
    UPSERT,
    ops_sql,
    row_actions,
)
from anycdc.spark.key_bound import KEY_NUMBER_TYPE
from anycdc.spark.ledger import INGEST_BATCH
from anycdc.spark.local_rows import local_frame
from anycdc.spark.merge_sql import (
    ROW_KEY,
    bad_reasons_sql,
    history_truncates_sql,
    key_changed_sql,
    key_number_sql,
    key_text_sql,
    keyless_image_sql,
    named_sql,
    null_of_sql,
    q,
    renamed_image_sql,
    round_rows_sql,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

_SPEC_SCHEMA: Final = (
    "_t STRING, _s_database STRING, _s_schema STRING, _s_table STRING, "
    "_s_keys ARRAY<STRING>, _s_keyless BOOLEAN, _s_floor STRING, _s_bound STRING, "
    "_s_renames ARRAY<STRUCT<old: STRING, new: STRING, pos: STRING>>, _s_history BOOLEAN, "
    "_s_checks ARRAY<STRUCT<name: STRING, type: STRING>>, _s_mask BIGINT, _s_rest BOOLEAN"
)
COMMON_CHECKS_MAX: Final = 63
"""How many (column, type) checks a round tests in generated code (:func:`common_checks`;
the bits of a BIGINT mask but its sign)."""
IMAGES: Final = ("before", "after")
"""An event's two images (maps of column texts)."""
ACTION_COLUMNS: Final = (
    "_key", "kind", "image", "full", "position", "partition", "offset", "event_index",
    INGEST_BATCH, "ts_ms", "source", "format", "op",
)  # fmt: skip
"""A row action's columns, in order (then ``_bad`` and, in a round, ``_t`` and ``_kv``).

No ``raw``: the message is ~3/4 of a changelog row's bytes, and an action needs it only
when it becomes a dead letter (a value its column cannot hold), which
:func:`~anycdc.spark.system_tables.with_messages` then reads back by the action's
coordinates. So an apply reads, holds and folds the images, not the messages."""
MESSAGE_COORDINATES: Final = ("source", "partition", "offset", "event_index")
"""What ties an action to its changelog row (with its ``ingest_batch``, where both have one)."""


@dataclass(frozen=True)
class ActionSpec:
    """What one table's actions depend on: a row of the round's spec frame
    (a due table's: :meth:`anycdc.spark.table_state.DueTable.action_spec`).

    >>> spec = ActionSpec("0", "shop", None, "orders", ("id",), checks=(("id", "INT"),))
    >>> spec.row()[:6]
    ('0', 'shop', None, 'orders', ['id'], False)
    """

    tag: str
    """The table's ``_t`` (:func:`anycdc.spark.tombstones.table_tag`)."""
    database: str | None
    schema: str | None
    table: str
    keys: tuple[str, ...]
    """The key's source columns; ``(ROW_KEY,)`` for a table without a key."""
    floor: str | None = None
    """The last TRUNCATE's position: events at or before it are dropped."""
    bound: str | None = None
    """The key column whose number ``_kv`` carries (its key bound), if any."""
    renames: tuple[tuple[str, str, str], ...] = ()
    """(old, new, position) renames applied to the images of older events, in order."""
    history: bool = False
    """An SCD2 table: its TRUNCATE events are actions too."""
    checks: tuple[tuple[str, str], ...] = ()
    """(column, Spark type) of the typed columns whose values are checked (``_bad``)."""

    def row(self, common: Sequence[tuple[str, str]] = ()) -> tuple[object, ...]:
        """The spec frame's row; ``common``: the round's checks tested in generated code
        (:func:`~anycdc.spark.merge_sql.bad_reasons_sql`), whose bits the mask sets."""
        mask = sum(1 << common.index(check) for check in self.checks if check in common)
        rest = any(check not in common for check in self.checks)
        return (
            self.tag, self.database, self.schema, self.table, list(self.keys),
            self.keys == (ROW_KEY,), self.floor, self.bound,
            [{"old": o, "new": n, "pos": p} for o, n, p in self.renames],
            self.history, [{"name": n, "type": t} for n, t in self.checks], mask, rest,
        )  # fmt: skip


def checked_columns(types: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The columns whose values are cast-checked: every typed one but text and the row key.

    >>> checked_columns({"id": "INT", "name": "STRING", ROW_KEY: "STRING", "at": "DATE"})
    (('id', 'INT'), ('at', 'DATE'))
    """
    return tuple((n, t) for n, t in types.items() if t != "STRING" and n != ROW_KEY)


def common_checks(
    specs: Sequence[ActionSpec], most: int = COMMON_CHECKS_MAX
) -> tuple[tuple[str, str], ...]:
    """The (column, type) checks of the most tables of ``specs``, at most ``most`` of them
    (ties by name): the ones a round tests in generated code.

    >>> a = ActionSpec("0", None, None, "a", ("id",), checks=(("id", "INT"), ("at", "DATE")))
    >>> b = ActionSpec("1", None, None, "b", ("id",), checks=(("id", "INT"),))
    >>> common_checks([a, b], most=1)
    (('id', 'INT'),)
    """
    tables = Counter(check for spec in specs for check in spec.checks)
    ranked = sorted(tables, key=lambda check: (-tables[check], check))
    return tuple(ranked[:most])


def _order_and_tail(rows: DataFrame) -> tuple[list[str], list[str]]:
    """An action's columns from its event: its order (position, then arrival) and the rest."""
    batch = INGEST_BATCH if INGEST_BATCH in rows.columns else null_of_sql("BIGINT")
    order = ["position", "partition", "offset", "event_index", f"{batch} AS {INGEST_BATCH}"]
    return order, ["ts_ms", "source", "format"]


def upserts_and_deletes(
    rows: DataFrame,
    key_text: Callable[[str], str],
    carried: Sequence[str] = (),
    key_changed: str | None = None,
) -> DataFrame:
    """Row events -> actions, by :func:`~anycdc.spark.action_rules.row_actions` (an upsert
    of the after image per insert, update and snapshot row; a delete of the before image
    per delete, and per update that changed the key). ``key_text(image)``: SQL of the key's
    text in an image; ``carried``: columns kept; ``key_changed``: SQL of whether an
    update's key changed (None: its two key texts compared)."""
    order, tail = _order_and_tail(rows)
    upserts, deletes = (
        rows.where(action.where).selectExpr(
            *action.columns(), *order, *tail, action.op_column(), *carried
        )
        for action in row_actions(key_text, key_changed)
    )
    return upserts.unionByName(deletes)


def round_actions(
    spark: SparkSession,
    wanted: DataFrame,
    specs: Sequence[ActionSpec],
    common: int = COMMON_CHECKS_MAX,
) -> DataFrame:
    """The row actions of every table of ``specs`` from the changelog rows ``wanted``:
    :data:`ACTION_COLUMNS`, ``_bad``, then ``_t`` (the table's tag) and ``_kv`` (its key
    bound's number), in one plan (see the module docstring). Rows of other tables drop out.
    ``common``: how many checks are tested in generated code (:func:`common_checks`; 0:
    the lambda of :func:`~anycdc.spark.merge_sql.bad_reasons_sql` for every action).
    """
    from pyspark.sql import functions as F

    checks = common_checks(specs, common)
    spec = local_frame(spark, [s.row(checks) for s in specs], _SPEC_SCHEMA)
    same_table = (
        wanted["database"].eqNullSafe(spec["_s_database"])
        & wanted["schema"].eqNullSafe(spec["_s_schema"])
        & (wanted["table"] == spec["_s_table"])
    )
    events = wanted.join(F.broadcast(spec), same_table, "inner")
    rows = events.where(round_rows_sql(ops_sql(ROW_ACTION_OPS)))
    rows = rows.withColumns({image: F.expr(renamed_image_sql(image)) for image in IMAGES})
    rows = rows.withColumns({image: F.expr(keyless_image_sql(image)) for image in IMAGES})
    carried = ("_t", "_s_bound", "_s_checks", "_s_mask", "_s_rest")
    actions = upserts_and_deletes(rows, key_text_sql, carried, key_changed_sql())
    order, tail = _order_and_tail(wanted)
    truncates = events.where(history_truncates_sql(TRUNCATE_ACTION.where)).selectExpr(
        *TRUNCATE_ACTION.columns(), *order, *tail, TRUNCATE_ACTION.op_column(), *carried
    )
    actions = actions.unionByName(truncates)
    types = sorted({t for s in specs for _, t in s.checks})
    return actions.selectExpr(
        "_t",
        *(q(c) for c in ACTION_COLUMNS),
        named_sql(bad_reasons_sql(types, checks), "_bad"),
        named_sql(key_number_sql(KEY_NUMBER_TYPE), "_kv"),
    )


def deleted_keys(folded: DataFrame, tables: DataFrame, through: int) -> DataFrame:
    """Every table's deleted keys with their position (``table``, ``_key``, ``position``,
    ``through``: the ingest batch the apply covers): the keys whose folded state is a
    delete (:data:`~anycdc.spark.action_rules.DELETED`)."""
    from pyspark.sql import functions as F

    deleted = folded.filter(DELETED).select(
        "_t",
        "_key",
        F.col(f"{STATE}.pos").alias("position"),
        F.lit(int(through)).cast("bigint").alias("through"),
    )
    return deleted.join(F.broadcast(tables), "_t").drop("_t")


def action_stats(actions: DataFrame) -> dict[int, Row]:
    """Counts, newest position and time per table, for all tables in one job (a
    job per table costs more than the table's MERGE when batches are small)."""
    from pyspark.sql import functions as F

    ok = F.col("_bad").isNull()
    upsert = ok & (F.col("kind") == UPSERT)
    key_number = F.when(upsert, F.col("_kv"))
    rows = (
        actions.groupBy("_t")
        .agg(
            F.sum(ok.cast("int")).alias("n"),
            F.sum(((F.col("kind") == DELETE) & ok).cast("int")).alias("deletes"),
            F.sum((~ok).cast("int")).alias("bad"),
            F.max(F.when(ok, F.col("position"))).alias("pos"),
            F.max(F.when(ok, F.col("ts_ms"))).alias("ts"),
            F.min(F.when(ok, F.col("ts_ms"))).alias("ts_min"),
            # the key bound's inputs (a MERGE or an append: _apply_table)
            F.min(key_number).cast("string").alias("key_low"),
            F.max(key_number).cast("string").alias("key_high"),
            F.sum((upsert & F.col("_kv").isNull()).cast("int")).alias("key_unknown"),
            F.sum((upsert & (F.col("op") != Op.INSERT.value)).cast("int")).alias("not_inserts"),
        )
        .collect()
    )
    return {int(row["_t"]): row for row in rows}
