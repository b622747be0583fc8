"""The anchored fold (:func:`anycdc.spark.apply.fold_actions`, the default) against the
reference fold (``anchored=False``: every action collected, sorted and stepped through),
on the same actions, through real Spark.

The actions are drawn (seeded) to hold what the anchored fold treats apart: keys of full
images only, of partial images only, partial images before and after a key's last delete
or full image, a ``full`` that is NULL (a partial image to the step), positions that tie
(then arrival orders), positions that are NULL, and a replayed action (the same action
twice).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.spark.action_rules import DELETE, UPSERT
from anycdc.spark.apply import fold_actions
from anycdc.spark.apply_round import apply_settings

pytestmark = pytest.mark.spark

_SCHEMA = (
    "_t STRING, _key STRING, kind STRING, image MAP<STRING, STRING>, full BOOLEAN, "
    "position STRING, ingest_batch BIGINT, source STRING, partition INT, offset BIGINT, "
    "event_index INT, ts_ms BIGINT, op STRING"
)


def _actions(seed: int = 7, keys: int = 300) -> list[tuple[Any, ...]]:
    draw = random.Random(seed)
    rows: list[tuple[Any, ...]] = []
    offset = 0
    for number in range(keys):
        table, key = f"t{number % 2}", f"k{number}"
        for _ in range(draw.randint(1, 6)):
            offset += 1
            kind = draw.choice((UPSERT, UPSERT, UPSERT, DELETE))
            full = draw.choice((True, False, False, None)) if kind == UPSERT else True
            image = {c: f"{c}{draw.randint(0, 9)}" for c in draw.sample("abc", draw.randint(1, 3))}
            position = draw.choice((None, "p1", "p2", "p2", "p3", "p4"))
            row = (
                table, key, kind, image, full, position, draw.choice((None, 0, 1)), "topic",
                draw.randint(0, 1), offset, draw.randint(0, 1), 1000 + offset, "update",
            )  # fmt: skip
            rows.append(row)
            if draw.random() < 0.05:
                rows.append(row)  # replayed
    return rows


def _classes(rows: list[tuple[Any, ...]]) -> set[str]:
    """Which of the anchored fold's cases the drawn keys hold (by arrival, enough to show
    each case is drawn; the order by position only mixes them more)."""
    by_key: dict[tuple[str, str], list[bool]] = {}
    for row in rows:
        by_key.setdefault((row[0], row[1]), []).append(row[2] == DELETE or row[4] is True)
    found = set()
    for replaces in by_key.values():
        if all(replaces):
            found.add("full only")
        elif not any(replaces):
            found.add("partial only")
        elif replaces[-1]:
            found.add("partial then replacing")
        else:
            found.add("replacing then partial")
    return found


def _states(frame: Any) -> dict[tuple[str, str], Any]:
    return {(r["_t"], r["_key"]): r["st"].asDict(recursive=True) for r in frame.collect()}


def test_the_anchored_fold_gives_every_key_the_reference_folds_state(spark: Any) -> None:
    rows = _actions()
    assert _classes(rows) == {
        "full only", "partial only", "partial then replacing", "replacing then partial",
    }  # fmt: skip
    assert any(row[4] is None for row in rows) and any(row[5] is None for row in rows)
    actions = spark.createDataFrame(rows, _SCHEMA)
    with apply_settings(spark, PipelineConfig()):  # the apply's: an overlay's newer value wins
        anchored = _states(fold_actions(actions, ("_t", "_key")))
        reference = _states(fold_actions(actions, ("_t", "_key"), anchored=False))
    assert len(reference) == 300
    assert anchored == reference
    # the states are the fold's, not a trivial agreement: deletes, overlays and partial rows
    kinds = {state["kind"] for state in anchored.values()}
    assert kinds == {UPSERT, DELETE}
    assert {state["full"] for state in anchored.values()} == {True, False}
