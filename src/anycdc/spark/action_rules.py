"""What each row action means: the one place the apply's steps take it from.

Where it sits: changelog -> plan -> **row actions -> fold -> write** (MERGE, the batched
rewrite, an append, SCD2's history) -> tombstones. Each step is built elsewhere, from
the rules here:

- **the kinds** of an action: :data:`UPSERT`, :data:`DELETE`, :data:`TRUNCATE` (a history
  table's), and :data:`NO_ACTION`, the fold's state before its first action;
- **event -> actions** (:func:`row_actions`, :data:`TRUNCATE_ACTION`; built by
  :mod:`anycdc.spark.actions`): an insert, snapshot or update row (:data:`UPSERT_OPS`)
  upserts its after image; a delete row deletes its before image, and so does an update
  that changed the key (its old key goes);
- **the fold** of a key's actions in order (:data:`FOLD_START`, :data:`FOLD_STEP`; run by
  :func:`anycdc.spark.apply.fold_actions`): a delete resets, a full image replaces, a
  partial image overlays what came before (and is a full row when a delete came before).
  So a key's state is its last replacing action's (:data:`REPLACES`,
  :func:`replaced_state`) with the partial images after it laid over;
- **the write** of a folded action to a table's row (:data:`MERGE_CLAUSES`; their text
  in :mod:`anycdc.spark.merge_sql`): every clause that meets a row is guarded by the
  position (:func:`newer_than_row`), a matched delete drops the row, a matched upsert
  replaces the columns its image has (all of them for a full image,
  :func:`writes_column_sql`), an unmatched upsert inserts, an unmatched delete does
  nothing. The batched engine's rewrite keeps the rows these clauses leave
  (:func:`kept_sql`, from the same table), an append writes the rows they insert
  (:func:`inserted_sql`);
- **SCD2**: an upsert is a version, :data:`END_KINDS` end one (:mod:`anycdc.spark.scd2`);
- **tombstones**: a key whose folded state is a delete (:data:`DELETED`) is one
  (:func:`anycdc.spark.actions.deleted_keys`, :mod:`anycdc.spark.tombstones`).

No Spark: text and constants, tested without a JVM (``tests/unit/test_action_rules.py``).

>>> [effect(present, kind, newer=True) for present in (True, False) for kind in (UPSERT, DELETE)]
[<Effect.UPDATE: 'update'>, <Effect.DROP: 'drop'>, <Effect.INSERT: 'insert'>, None]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from anycdc.event import ROW_OPS, Op

# --------------------------------------------------------------------------- kinds
UPSERT: Final = "upsert"
"""The action that makes its image the key's row (a new row, or columns replaced)."""
DELETE: Final = "delete"
"""The action that removes the key's row."""
TRUNCATE: Final = "truncate"
"""A history table's TRUNCATE: it ends every key's version (an SCD1 table's TRUNCATE is
its schema step's, before the actions: :meth:`anycdc.spark.apply.TableApplier.apply_truncate`)."""
NO_ACTION: Final = "none"
"""The fold's kind before a key's first action (never a folded action's: a key has one)."""

END_KINDS: Final = (DELETE, TRUNCATE)
"""The kinds that end an SCD2 version (its end markers); an :data:`UPSERT` is a version.
The end-marker tables store these words (``kind``): they are data once written."""

_WORD: Final = re.compile(r"[a-z]+")


def word_sql(word: str) -> str:
    """The SQL literal of one of anycdc's own words (a kind, an op): lowercase letters only,
    which :func:`~anycdc.spark.merge_sql.lit` (the quoting of data) would quote the same.

    >>> word_sql(UPSERT)
    "'upsert'"
    """
    if not _WORD.fullmatch(word):
        raise ValueError(f"not one of anycdc's words: {word!r} (quote data with lit)")
    return f"'{word}'"


# --------------------------------------------------------------------------- events -> actions
UPSERT_OPS: Final = tuple(sorted(op.value for op in ROW_OPS - {Op.DELETE}))
"""The ops whose row is the table's new state (the rest of :data:`~anycdc.event.ROW_OPS` deletes)."""
ROW_ACTION_OPS: Final = (*UPSERT_OPS, Op.DELETE.value)
"""The ops whose rows are row actions (a TRUNCATE is an action of a history table only)."""
KEY_CHANGE_OP: Final = Op.UPDATE.value
"""The op whose row may move a key: such a row also deletes its old key."""


def ops_sql(ops: Iterable[str]) -> str:
    """SQL of "the changelog row's op is one of ``ops``".

    >>> ops_sql(ROW_ACTION_OPS)
    "op IN ('insert', 'snapshot', 'update', 'delete')"
    """
    return f"op IN ({', '.join(word_sql(op) for op in ops)})"


@dataclass(frozen=True)
class EventAction:
    """One action a changelog row gives: which rows give it (``where``) and what it is, each
    as SQL over the changelog row.

    >>> TRUNCATE_ACTION.columns()[1], TRUNCATE_ACTION.op_column()
    ("'truncate' AS kind", 'op AS op')
    """

    kind: str
    where: str
    key: str
    """The key's text (NULL for a TRUNCATE: it is every key's)."""
    image: str
    full: str
    """Whether the image is the whole row (a partial image: only the columns it has)."""
    op: str
    """The op the action records (a key change's delete records a delete)."""

    def columns(self) -> tuple[str, str, str, str]:
        """The action's ``_key``, ``kind``, ``image`` and ``full`` columns (then its order,
        its event's columns and :meth:`op_column`: :mod:`anycdc.spark.actions`)."""
        return (
            f"{self.key} AS _key",
            f"{word_sql(self.kind)} AS kind",
            f"{self.image} AS image",
            f"{self.full} AS full",
        )

    def op_column(self) -> str:
        return f"{self.op} AS op"


def row_actions(
    key_text: Callable[[str], str], key_changed: str | None = None
) -> tuple[EventAction, EventAction]:
    """The upsert and the delete a row change gives; ``key_text(image)``: SQL of the key's
    text in an image (``before``, ``after``); ``key_changed``: SQL true where the two
    differ (None: their texts compared).

    An insert, snapshot or update upserts its after image (full unless the row says its
    after image is partial); a delete deletes its before image, and so does an update
    whose key changed (the row under the old key goes; the upsert writes the new one).

    >>> upsert, delete = row_actions(lambda image: f"k({image})")
    >>> upsert.where
    "op IN ('insert', 'snapshot', 'update')"
    >>> delete.where
    "op = 'delete' OR (op = 'update' AND before IS NOT NULL AND k(before) <> k(after))"
    """
    changed_key = key_changed or f"{key_text('before')} <> {key_text('after')}"
    deleted = word_sql(Op.DELETE.value)
    return (
        EventAction(
            UPSERT, ops_sql(UPSERT_OPS), key_text("after"), "after",
            f"NOT array_contains(partial, {word_sql('after')})", "op",
        ),
        EventAction(
            DELETE,
            f"op = {deleted} OR (op = {word_sql(KEY_CHANGE_OP)} AND before IS NOT NULL "
            f"AND {changed_key})",
            key_text("before"), "before", "true", deleted,
        ),
    )  # fmt: skip


TRUNCATE_ACTION: Final = EventAction(
    TRUNCATE,
    f"op = {word_sql(Op.TRUNCATE.value)}",
    "CAST(NULL AS STRING)",
    "CAST(NULL AS MAP<STRING, STRING>)",
    "true",
    "op",
)
"""A history table's TRUNCATE row: one action with no key and no image."""

# --------------------------------------------------------------------------- the fold
STATE: Final = "st"
"""The folded state's column: ``kind``, ``row`` (the image), ``full``, ``pos``, ``ts``, ``op``."""


def _state(kind: str, row: str, full: str, pos: str, ts: str, op: str) -> str:
    return (
        f"named_struct('kind', {kind}, 'row', {row}, 'full', {full}, 'pos', {pos}, "
        f"'ts', {ts}, 'op', {op})"
    )


FOLD_START: Final = _state(
    word_sql(NO_ACTION), "cast(map() as map<string,string>)", "false", "''",
    "cast(null as bigint)", "cast(null as string)",
)  # fmt: skip
"""SQL: the fold's state before a key's first action (no row, not a full one)."""


def _after(event_kind: str, row: str, full: str, action: str = "e") -> str:
    return _state(
        word_sql(event_kind), row, full, f"{action}.position", f"{action}.ts_ms", f"{action}.op"
    )


def _replacing(action: str) -> str:
    """The step's branches that ignore the state before: a delete, a full image."""
    return (
        f"WHEN {action}.kind = {word_sql(DELETE)} "
        f"THEN {_after(DELETE, f'{action}.image', 'true', action)} "
        f"WHEN {action}.full THEN {_after(UPSERT, f'{action}.image', 'true', action)}"
    )


FOLD_STEP: Final = (
    f"(s, e) -> CASE {_replacing('e')} "
    f"ELSE {_after(UPSERT, 'map_concat(s.row, e.image)', f's.full OR s.kind = {word_sql(DELETE)}')}"
    " END"
)
"""SQL: the fold's step, a lambda of the state ``s`` and the key's next action ``e`` (its
``kind``, ``image``, ``full``, ``position``, ``ts_ms``, ``op``): a delete resets (its row is
the before image), a full image replaces, a partial image is laid over the row before it;
after a delete that overlay is a full row (nothing of the deleted row may survive it)."""

REPLACES: Final = f"coalesce(kind = {word_sql(DELETE)} OR full, false)"
"""SQL over an action: whether the fold's step takes it whatever the state before it (the
step's first two branches: a delete, a full image). A key's folded state is then its last
such action's (:func:`replaced_state`), with the partial images after it folded over:
the anchored fold (:func:`anycdc.spark.apply.fold_actions`) orders only those."""


def replaced_state(action: str) -> str:
    """SQL: the fold's state after ``action``, an action that :data:`REPLACES` it (the
    step's own branches, whatever came before).

    >>> replaced_state("a").startswith("CASE WHEN a.kind = 'delete' THEN named_struct(")
    True
    """
    return f"CASE {_replacing(action)} END"


DELETED: Final = f"{STATE}.kind = {word_sql(DELETE)}"
"""SQL: the folded state is a delete, so its key is a tombstone (kept so that a late older
event cannot bring the row back)."""

# --------------------------------------------------------------------------- the write


def newer_than_row(position: str) -> str:
    """SQL of "the staged change at ``position`` is newer than the table's row ``t``": the
    guard of every MERGE clause that meets a row and of the rewrite, so replays and late
    older events change nothing (a NULL on either side: the change applies).

    >>> newer_than_row("s.p")
    '(s.p IS NULL OR t._cdc_position IS NULL OR s.p > t._cdc_position)'
    """
    return f"({position} IS NULL OR t._cdc_position IS NULL OR {position} > t._cdc_position)"


class Effect(StrEnum):
    """What a clause does to the table."""

    DROP = "drop"
    UPDATE = "update"
    INSERT = "insert"


@dataclass(frozen=True)
class Clause:
    """A folded action's effect on the table, by whether a row has its key (``matched``)
    and its kind; a matched clause applies only when the action is newer than the row."""

    matched: bool
    kind: str
    effect: Effect


MERGE_CLAUSES: Final = (
    Clause(matched=True, kind=DELETE, effect=Effect.DROP),
    Clause(matched=True, kind=UPSERT, effect=Effect.UPDATE),
    Clause(matched=False, kind=UPSERT, effect=Effect.INSERT),
)
"""The write of a folded action, in the MERGE's order: a matched delete drops the row, a
matched upsert updates it, an unmatched upsert inserts one. No clause: nothing happens (an
unmatched delete; an action not newer than its row)."""


def effect(present: bool, kind: str | None, newer: bool) -> Effect | None:
    """What :data:`MERGE_CLAUSES` do to a key: ``present``, a row has it; ``kind``, the
    folded action's (None: no action); ``newer``, the action is newer than the row.

    >>> effect(True, DELETE, newer=False) is None  # a late delete changes nothing
    True
    """
    for clause in MERGE_CLAUSES:
        if clause.matched == present and clause.kind == kind and (newer or not present):
            return clause.effect
    return None


def merge_clauses_sql(kind: str, newer: str, then: Mapping[Effect, str]) -> str:
    """The MERGE's WHEN clauses of :data:`MERGE_CLAUSES`; ``kind``: SQL of the staged
    action's kind, ``newer``: its guard (:func:`newer_than_row`), ``then``: each effect's
    MERGE action (``DELETE``, ``UPDATE SET ...``, ``INSERT ...``).

    >>> print(merge_clauses_sql("k", "n", {e: e.name for e in Effect}))
    ... # doctest: +NORMALIZE_WHITESPACE
    WHEN MATCHED AND k = 'delete' AND n THEN DROP WHEN MATCHED AND k = 'upsert' AND n THEN
    UPDATE WHEN NOT MATCHED AND k = 'upsert' THEN INSERT
    """
    return " ".join(
        f"WHEN MATCHED AND {kind} = {word_sql(c.kind)} AND {newer} THEN {then[c.effect]}"
        if c.matched
        else f"WHEN NOT MATCHED AND {kind} = {word_sql(c.kind)} THEN {then[c.effect]}"
        for c in MERGE_CLAUSES
    )


def _any_of(conditions: list[str]) -> str:
    return f"({' OR '.join(conditions)})" if conditions else "false"


def kept_sql(row: str, kind: str, newer: str) -> str:
    """SQL of "the joined row is in the table after :data:`MERGE_CLAUSES`", over a full
    outer join of the table's rows and the staged actions (the batched engine's rewrite):
    ``row``, a table row has the key (never NULL); ``kind``, the staged action's kind (NULL:
    none); ``newer``, :func:`newer_than_row`. A row stays unless a clause drops it; a key
    without a row gets one where a clause inserts it.

    >>> print(kept_sql("r", "k", "n"))
    (r AND NOT (k <=> 'delete' AND n)) OR (NOT r AND (k <=> 'upsert'))
    """
    dropped = [
        f"{kind} <=> {word_sql(c.kind)} AND {newer}"
        for c in MERGE_CLAUSES
        if c.matched and c.effect is Effect.DROP
    ]
    inserted = [
        f"{kind} <=> {word_sql(c.kind)}"
        for c in MERGE_CLAUSES
        if not c.matched and c.effect is Effect.INSERT
    ]
    return f"({row} AND NOT {_any_of(dropped)}) OR (NOT {row} AND {_any_of(inserted)})"


def inserted_sql(kind: str) -> str:
    """SQL of "the staged action inserts a row where none has its key": what an append
    writes (nothing in the table can match).

    >>> inserted_sql("k")
    "k = 'upsert'"
    """
    return " OR ".join(
        f"{kind} = {word_sql(c.kind)}"
        for c in MERGE_CLAUSES
        if not c.matched and c.effect is Effect.INSERT
    )


def reaches_sql(row: str, kind: str, newer: str) -> str:
    """SQL of "a staged action writes the joined row": there is one, and no row has its key
    or it is newer than the row (the guard of every matched clause). Of the rows
    :func:`kept_sql` keeps, these are the ones an update or an insert wrote.

    >>> reaches_sql("r", "k", "n")
    '(k IS NOT NULL AND (NOT r OR n))'
    """
    return f"({kind} IS NOT NULL AND (NOT {row} OR {newer}))"


def writes_column_sql(full: str, has: str, current: bool) -> str:
    """SQL of "a matched upsert writes this column": its image has it (``has``), or the image
    is full (``full``) and the source still has the column (``current``). A column dropped or
    renamed at the source keeps its values: only a change that still carries it writes it.

    >>> writes_column_sql("f", "h", current=True), writes_column_sql("f", "h", current=False)
    ('f OR h', 'h')
    """
    return f"{full} OR {has}" if current else has
