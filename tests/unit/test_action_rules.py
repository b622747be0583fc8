"""What each row action means (:mod:`anycdc.spark.action_rules`), without Spark: the MERGE's
clauses say it once, and the batched rewrite's kept rows, the append's rows and the MERGE's
text are derived from them."""

from __future__ import annotations

import itertools
import re

import pytest

from anycdc.event import ROW_OPS, Op
from anycdc.spark.action_rules import (
    DELETE,
    DELETED,
    END_KINDS,
    FOLD_START,
    FOLD_STEP,
    MERGE_CLAUSES,
    NO_ACTION,
    TRUNCATE,
    TRUNCATE_ACTION,
    UPSERT,
    UPSERT_OPS,
    Effect,
    effect,
    inserted_sql,
    kept_sql,
    merge_clauses_sql,
    reaches_sql,
    row_actions,
    word_sql,
)
from anycdc.spark.merge_sql import STAGE_KIND, lit, merge_statement, rewrite_sql

KINDS = (UPSERT, DELETE, None)  # None: no staged action meets the table's row


def evaluate(sql: str, values: dict[str, bool | str | None]) -> bool:
    """``sql``, a predicate of AND, OR, NOT, parentheses, ``IS NOT NULL`` and ``<=>`` over
    the names of ``values``, evaluated in Python. Two-valued: every operand the rules hand
    the rewrite is never NULL (``coalesce``, ``<=>``, a guard of IS NULL tests)."""
    python = re.sub(r"(\w+) <=> '(\w+)'", r"(\1 == '\2')", sql)
    python = re.sub(r"(\w+) IS NOT NULL", r"(\1 is not None)", python)
    python = python.replace("AND", "and").replace("OR", "or").replace("NOT", "not")
    # the rules' own text with names bound to booleans: nothing else reaches eval
    return bool(eval(python, {}, dict(values)))


# What the MERGE does, written out by hand: a newer delete drops the row, a newer upsert
# updates it, an older action (a replay, a late event) changes nothing, an upsert of a key
# no row has inserts one, a delete of such a key does nothing.
EXPECTED = {
    (True, UPSERT, True): Effect.UPDATE,
    (True, UPSERT, False): None,
    (True, DELETE, True): Effect.DROP,
    (True, DELETE, False): None,
    (True, None, True): None,
    (True, None, False): None,
    (False, UPSERT, True): Effect.INSERT,
    (False, UPSERT, False): Effect.INSERT,  # no row: no position to be older than
    (False, DELETE, True): None,
    (False, DELETE, False): None,
}


@pytest.mark.parametrize(("present", "kind", "newer"), sorted(EXPECTED, key=str))
def test_the_clauses_mean_what_the_apply_promises(
    present: bool, kind: str | None, newer: bool
) -> None:
    assert effect(present, kind, newer) == EXPECTED[(present, kind, newer)]


@pytest.mark.parametrize(
    ("present", "kind", "newer"), list(itertools.product((True, False), KINDS, (True, False)))
)
def test_the_rewrite_keeps_what_the_merge_leaves(
    present: bool, kind: str | None, newer: bool
) -> None:
    if not present and kind is None:
        return  # a full outer join has a row of one side at least
    values = {"row": present, "kind": kind, "newer": newer}
    done = effect(present, kind, newer)
    # a row stays unless a clause drops it; a key without a row gets one where one inserts
    kept = done is not Effect.DROP if present else done is Effect.INSERT
    assert evaluate(kept_sql("row", "kind", "newer"), values) == kept
    # of the kept rows, the staged action writes those an update or an insert wrote
    if kept:
        wrote = done in (Effect.UPDATE, Effect.INSERT)
        assert evaluate(reaches_sql("row", "kind", "newer"), values) == wrote


def test_an_append_writes_the_rows_the_merge_inserts() -> None:
    inserting = {c.kind for c in MERGE_CLAUSES if c.effect is Effect.INSERT}
    assert inserting == {UPSERT}
    assert inserted_sql(STAGE_KIND) == f"{STAGE_KIND} = 'upsert'"


def test_the_merge_text_is_the_clause_table() -> None:
    text = merge_statement("T", "v", ["id"], [], {"id": True, "name": True})
    clauses = re.findall(r"WHEN (NOT MATCHED|MATCHED) AND s\._cdc_in_kind = '(\w+)'", text)
    assert clauses == [
        ("NOT MATCHED" if not c.matched else "MATCHED", c.kind) for c in MERGE_CLAUSES
    ]
    guards = text.count("s._cdc_in_pos IS NULL OR t._cdc_position IS NULL")
    assert guards == sum(c.matched for c in MERGE_CLAUSES)  # every clause that meets a row
    assert " THEN DELETE WHEN " in text and " THEN UPDATE SET `name` = " in text
    assert merge_clauses_sql("k", "n", {e: "x" for e in Effect}).count("WHEN") == 3


def test_the_rewrite_and_the_merge_read_the_same_staged_kind() -> None:
    _, kept, _ = rewrite_sql(["id", "name"], ["id"], {"id": True, "name": True})
    assert kept == kept_sql(
        "coalesce(t._cdc_t_present, false)",
        f"s.{STAGE_KIND}",
        "(s._cdc_in_pos IS NULL OR t._cdc_position IS NULL OR s._cdc_in_pos > t._cdc_position)",
    )


def test_which_ops_upsert_and_which_delete() -> None:
    assert set(UPSERT_OPS) | {Op.DELETE.value} == {op.value for op in ROW_OPS}
    upsert, delete = row_actions(lambda image: f"key({image})")
    assert (upsert.kind, upsert.image, delete.kind, delete.image) == (
        UPSERT, "after", DELETE, "before"
    )  # fmt: skip
    assert all(f"'{op}'" in upsert.where for op in UPSERT_OPS)
    # an update whose key changed also deletes its old key
    assert "op = 'update' AND before IS NOT NULL AND key(before) <> key(after)" in delete.where
    assert delete.op_column() == "'delete' AS op" and delete.full == "true"
    assert TRUNCATE_ACTION.kind == TRUNCATE and TRUNCATE_ACTION.where == "op = 'truncate'"


def test_the_fold_resets_replaces_and_overlays() -> None:
    assert f"'kind', '{NO_ACTION}'" in FOLD_START
    # a delete first (its row is the before image), then a full image, else an overlay
    assert re.findall(r"WHEN (.+?) THEN", FOLD_STEP) == ["e.kind = 'delete'", "e.full"]
    assert "'row', map_concat(s.row, e.image), 'full', s.full OR s.kind = 'delete'" in FOLD_STEP
    assert DELETED == "st.kind = 'delete'"


def test_a_replacing_action_is_one_the_steps_first_branches_take() -> None:
    from anycdc.spark.action_rules import REPLACES, replaced_state

    # the anchored fold's state after its anchor is the step's own two first branches
    branches = FOLD_STEP.split("ELSE", 1)[0].removeprefix("(s, e) -> ")
    assert replaced_state("e") == branches + "END"
    assert "'pos', a.position, 'ts', a.ts_ms, 'op', a.op" in replaced_state("a")
    # a NULL ``full`` is the step's overlay (its WHEN is not taken), so it does not replace
    assert REPLACES == "coalesce(kind = 'delete' OR full, false)"


def test_the_words_are_quoted_as_data_would_be() -> None:
    for word in (UPSERT, DELETE, TRUNCATE, NO_ACTION, *UPSERT_OPS, *END_KINDS):
        assert word_sql(word) == lit(word)
    with pytest.raises(ValueError, match="lit"):
        word_sql("it's")
