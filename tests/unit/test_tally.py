"""The decode tasks' tally (:mod:`anycdc.spark.tally`), without Spark: what it counts of
hand-built rows, and that any split of the golden cases' rows into tasks merges to the
tally of all of them (the single-pass ingest's tasks are such a split). Its agreement
with the plan job itself is tests/pipeline/test_single_pass_ingest.py's."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.changelog import CHANGELOG_NAMES
from anycdc.spark.decode import decode_values
from anycdc.spark.plan import TableSummary
from anycdc.spark.tally import TALLY_OP, BatchTally
from tests.cases import iter_cases

ID = [{"name": "id", "type": "int64", "vendor_type": "bigint"}]
ID_TEXT = [{"name": "id", "type": "string", "vendor_type": "varchar"}]


def _row(**values: Any) -> tuple[Any, ...]:
    return tuple(values.get(name) for name in CHANGELOG_NAMES)


def _tally(rows: list[tuple[Any, ...]]) -> BatchTally:
    tally = BatchTally()
    for row in rows:
        tally.see(row)
    return tally


def _normalized(tally: BatchTally) -> tuple[Any, ...]:
    def one(s: TableSummary) -> tuple[Any, ...]:
        return (
            s.ident, s.rows, sorted(s.sightings), sorted(s.ddl), sorted(s.image_columns),
            s.key, s.has_row_id, s.truncate_position, s.has_rows, s.produced_ms,
        )  # fmt: skip

    return (
        tally.rows, tally.errors, tally.messages, tally.bytes, tally.control, tally.no_table,
        tally.heartbeat_ts_ms, tally.source_ts_ms, sorted(tally.formats, key=str),
        sorted(tally.bad, key=str), sorted((one(s) for s in tally.summaries()), key=str),
    )  # fmt: skip


def test_a_table_summary_keeps_what_the_plan_reads() -> None:
    shop = {"database": "shop", "table": "orders"}
    rows = [
        _row(op="insert", columns=ID, position="0009", after={"id": "1"}, key=["id"], **shop),
        _row(op="update", columns=ID, position="0003", after={"id": "1", "n": "x"}, **shop),
        _row(op="insert", columns=ID_TEXT, position="0005", row_id="r1", **shop),
        _row(op="truncate", position="0004", **shop),
        _row(op="truncate", position="0007", **shop),
        _row(op="ddl", position="0006", ddl="ALTER TABLE orders ADD n TEXT", **shop),
        _row(op="delete", columns=ID, position=None, before={"id": "2"}, produced_ms=40, **shop),
        _row(op="insert", columns=ID, position="0001", produced_ms=30, **shop),
    ]
    (summary,) = _tally(rows).summaries()
    assert summary.ident == ("shop", None, "orders")
    assert summary.rows == 8
    # the id:int64 list first came at the empty position (a row without one sorts first)
    assert sorted(summary.sightings) == [("", (("id", "int64"),)), ("0005", (("id", "string"),))]
    assert summary.ddl == (("0006", "ALTER TABLE orders ADD n TEXT"),)
    assert summary.image_columns == ("id", "n")
    assert summary.key == ("id",) and summary.has_row_id and summary.has_rows
    assert summary.truncate_position == "0007" and summary.urgency == "ddl"
    assert summary.produced_ms == 30


def test_the_batch_counts_skips_and_dead_letters() -> None:
    rows = [
        _row(op="insert", table="t", event_index=0, raw=b"abc", ts_ms=5, source="s", format="f"),
        _row(op="insert", table="t", event_index=1, raw=b"abc", ts_ms=9, source="s", format="f"),
        _row(op="heartbeat", event_index=0, raw=b"h", ts_ms=50, source="s", format="f"),
        _row(op="insert", table="", event_index=0, raw=None, ts_ms=3, source="s", format="g"),
        _row(error="bad", event_index=0, raw=b"xy", source="s", partition=2, offset=8),
    ]
    tally = _tally(rows)
    assert (tally.rows, tally.errors, tally.messages, tally.bytes) == (5, 1, 4, 6)
    assert (tally.control, tally.no_table) == (1, 1)
    assert (tally.heartbeat_ts_ms, tally.source_ts_ms) == (50, 9)
    assert list(tally.formats) == [("s", "f"), ("s", "g")]
    assert tally.bad == [("s", 2, 8)]
    assert [s.rows for s in tally.summaries()] == [2]
    marker = tally.marker()
    assert marker[CHANGELOG_NAMES.index("op")] == TALLY_OP
    assert _normalized(BatchTally.from_json(marker[CHANGELOG_NAMES.index("raw")])) == _normalized(
        tally
    )


def _golden_rows() -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for case in iter_cases():
        records = [
            (case.id, 0, n, case.key, message, None) for n, message in enumerate(case.messages())
        ]
        rows += decode_values(records, case.format_id, case.options)
    return rows


GOLDEN = _golden_rows()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(GOLDEN)), max_size=12))
def test_tasks_tallies_merge_to_the_tally_of_all_their_rows(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(GOLDEN)]
    parts = [_tally(GOLDEN[a:b]) for a, b in pairwise(bounds)]
    merged = BatchTally.merge(BatchTally.from_json(p.to_json()) for p in parts)
    assert _normalized(merged) == _normalized(_tally(GOLDEN))


def test_the_golden_cases_give_tables_errors_and_ddl() -> None:
    """The rows the merge property runs on hold what it is meant to test."""
    tally = _tally(GOLDEN)
    summaries = tally.summaries()
    assert len(summaries) > 50 and tally.errors > 50
    assert any(s.ddl for s in summaries) and any(s.truncate_position for s in summaries)
    assert any(s.key for s in summaries) and any(not s.sightings for s in summaries)
