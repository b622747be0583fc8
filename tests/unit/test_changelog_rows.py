"""The decode stage each Spark Python worker runs (``anycdc.spark.decode``), without Spark:
raw records in, changelog rows out — split halves joined, bad messages kept as dead
letters with their coordinates, chunked feeding the same as one pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anycdc.bench.decode import messages as bench_messages
from anycdc.changelog import CHANGELOG_NAMES
from anycdc.spark.decode import (
    MESSAGE_RUN,
    ChangelogRows,
    RawRecord,
    arrow_batch,
    changelog_arrow_schema,
    decode_rows,
    decode_values,
)
from tests.cases import Case, iter_cases

CASES = Path(__file__).parents[1] / "cases" / "dataworks-json"


def split_halves() -> tuple[bytes, bytes]:
    before = json.loads((CASES / "seed_update_split_before.json").read_text())
    after = json.loads((CASES / "seed_update_split_after.json").read_text())
    return json.dumps(before).encode(), json.dumps(after).encode()


def records(values: list[bytes | None], topic: str = "t") -> list[RawRecord]:
    return [
        (topic, 3, 100 + n, None, value, 1_700_000_000_000 + n) for n, value in enumerate(values)
    ]


def test_split_halves_become_one_update_at_the_after_half() -> None:
    before, after = split_halves()
    [row] = decode_rows(records([before, after]), "dataworks-json", {})
    assert row["produced_ms"] == 1_700_000_000_001  # the Kafka record time of the after-half
    assert row["op"] == "update" and row["split"] is None
    assert row["before"]["name"] == "name11" and row["after"] is not None
    assert (row["partition"], row["offset"], row["raw"]) == (3, 101, after)


def test_a_lone_before_half_is_flushed_with_its_own_coordinates() -> None:
    before, _ = split_halves()
    insert = bench_messages("dataworks-json", 1)[0]
    rows = list(decode_rows(records([insert, before]), "dataworks-json", {}))
    assert [r["op"] for r in rows] == ["insert", "update"]
    assert rows[1]["split"] == "before" and rows[1]["offset"] == 101
    assert rows[1]["raw"] == before


def test_bad_messages_become_dead_letters_and_the_stream_goes_on() -> None:
    good = bench_messages("canal-json", 2)
    rows = list(decode_rows(records([good[0], b"{not json", b"", good[1]]), "canal-json", {}))
    assert [r["error"] is None for r in rows] == [True, False, False, True]
    bad = rows[1]
    assert (bad["source"], bad["partition"], bad["offset"], bad["raw"]) == (
        "t",
        3,
        101,
        b"{not json",
    )
    assert bad["format"] == "canal-json" and "canal-json" in bad["error"]
    assert rows[3]["offset"] == 103


def test_chunked_feeding_gives_the_rows_of_one_pass() -> None:
    before, after = split_halves()
    values: list[bytes | None] = [*bench_messages("dataworks-json", 7), before, after, before]
    whole = list(decode_rows(records(values), "dataworks-json", {}))
    stage = ChangelogRows("dataworks-json", {})
    chunked = []
    for start in range(0, len(values), 3):  # a split pair straddles two chunks
        chunked += stage.rows(records(values)[start : start + 3])
    chunked += stage.flush()
    assert chunked == whole
    assert [r["op"] for r in whole[-2:]] == ["update", "update"]
    assert whole[-1]["split"] == "before"


@pytest.mark.parametrize("format_id", ["auto", "dataworks-json"])
def test_runs_of_messages_give_the_rows_of_one_message_at_a_time(format_id: str) -> None:
    """The stage takes runs of :data:`MESSAGE_RUN` messages through each step; fed one
    message at a time (runs of one), it must give the same rows: formats mixed (auto mode),
    dead letters, tombstones, and a split update whose halves straddle a run's end."""
    before, after = split_halves()
    mixed = [
        m
        for pair in zip(
            *(bench_messages(f, 40) for f in ("canal-json", "debezium-json")), strict=True
        )
        for m in pair
    ]
    values: list[bytes | None] = [
        *bench_messages("dataworks-json", MESSAGE_RUN - 1),
        before,
        after,  # the first message of the second run
        b"{not json",
        None,
        b'{"unknown": "shape"}',
        *(mixed if format_id == "auto" else []),
        before,  # a lone half at the end
    ]
    whole = list(ChangelogRows(format_id, {}).rows(records(values)))
    stage = ChangelogRows(format_id, {})
    one_at_a_time = [row for record in records(values) for row in stage.rows([record])]
    assert one_at_a_time == whole
    assert whole[MESSAGE_RUN - 1]["op"] == "update" and whole[MESSAGE_RUN - 1]["split"] is None
    assert [row["error"] is not None for row in whole[MESSAGE_RUN : MESSAGE_RUN + 2]] == [True] * 2
    if format_id == "auto":
        assert {row["format"] for row in whole} >= {"canal-json", "debezium-json", "dataworks-json"}


def test_rows_of_one_schema_share_their_column_structs() -> None:
    rows = list(decode_rows(records(bench_messages("canal-json", 50)), "canal-json", {}))
    assert rows[0]["columns"] is rows[-1]["columns"]  # rendered once per schema
    assert [c["name"] for c in rows[0]["columns"]][:2] == ["id", "customer_id"]
    assert rows[0]["columns"][4] == {
        "name": "price", "type": "decimal(12,2)", "vendor_type": "decimal(12,2)",
    }  # fmt: skip


@pytest.mark.parametrize("case", [c for c in iter_cases() if not c.foreign], ids=lambda c: c.id)
def test_arrow_batches_built_by_column_equal_the_rows_by_name(case: Case) -> None:
    """The worker's Arrow batches (:func:`arrow_batch`, column by column from value tuples)
    hold what Arrow makes of the rows by name (``from_pylist``, the reference), for every
    golden case: values, images, column structs, dead letters."""
    import pyarrow as pa

    records = [(case.id, 0, n, case.key, m, n) for n, m in enumerate(case.messages())]
    values = list(decode_values(records, case.format_id, case.options))
    rows = [dict(zip(CHANGELOG_NAMES, v, strict=True)) for v in values]
    assert rows == list(decode_rows(records, case.format_id, case.options))
    schema = changelog_arrow_schema()
    assert arrow_batch(values, schema).equals(pa.RecordBatch.from_pylist(rows, schema=schema))


def test_an_arrow_batch_of_many_schemas_and_dead_letters() -> None:
    """Rows of several schemas and formats in one batch each keep their own column structs;
    an empty chunk is an empty batch."""
    import pyarrow as pa

    mixed = [
        *decode_values(records(bench_messages("canal-json", 3)), "canal-json", {}),
        *decode_values(records([b"{not json"]), "canal-json", {}),
        *decode_values(records(bench_messages("maxwell-json", 3)), "maxwell-json", {}),
        *decode_values(records(bench_messages("canal-json", 2)), "canal-json", {}),
    ]
    schema = changelog_arrow_schema()
    built = arrow_batch(mixed, schema)
    rows = [dict(zip(CHANGELOG_NAMES, v, strict=True)) for v in mixed]
    assert built.equals(pa.RecordBatch.from_pylist(rows, schema=schema))
    names = [[c["name"] for c in cols] for cols in built.column("columns").to_pylist()]
    assert names == [[c["name"] for c in row["columns"]] for row in rows]
    assert names[3] == [] and names[0] == names[-1] and len(names[0]) == 10
    assert arrow_batch([], schema).num_rows == 0


def test_a_detection_that_fails_is_its_message_s_dead_letter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Detection runs ahead of the decode (a run at a time): a bug that makes it raise on
    one message is that message's dead letter, never the task's failure."""
    import anycdc.decoding

    good = bench_messages("canal-json", 3)
    detect = anycdc.decoding.detect_parsed

    def failing(value: bytes) -> object:
        if value == good[1]:
            raise RuntimeError("boom")
        return detect(value)

    monkeypatch.setattr(anycdc.decoding, "detect_parsed", failing)
    rows = list(ChangelogRows("auto", {}).rows(records(good)))
    assert [row["error"] for row in rows][::2] == [None, None]
    assert "internal decoder error: RuntimeError: boom" in rows[1]["error"]
    assert rows[1]["offset"] == 101
