"""AWS DMS JSON (aws-dms-json): round trips, the docs' and captured messages, before images,
control records, positions, errors, detection."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Op, Position
from anycdc.formats import detect, get_format
from anycdc.formats.dms import CONTROL_OPS, AwsDmsJson
from tests.cases import CASES_DIR, foreign_json_messages
from tests.strategies import GARBAGE, IDENT, UNICODE_TEXT, st_decimal

FMT = AwsDmsJson()
CASES = CASES_DIR / "aws-dms-json"


def one(message: Any, fmt: AwsDmsJson = FMT) -> ChangeEvent:
    [event] = fmt.decode(json.dumps(message))
    return event


def case_events(name: str, fmt: AwsDmsJson = FMT) -> list[ChangeEvent]:
    lines = (CASES / f"{name}.jsonl").read_bytes().splitlines()
    return [e for line in lines if line.strip() for e in fmt.decode(line)]


# --------------------------------------------------------------------------- round trip
# DMS data records carry no types: values keep their JSON types (ints, exact decimals, text)
JSON_VALUES = st.one_of(st.none(), st.integers(-(2**70), 2**70), st_decimal(30, 6), UNICODE_TEXT)
SCALARS = st.one_of(UNICODE_TEXT, st.integers(0, 2**63))
EXTRA_NAMES = ("timestamp", "partition-key-type", "partition-key-value", "transaction-record-id",
               "prev-transaction-id", "prev-transaction-record-id", "stream-position")  # fmt: skip


@st.composite
def st_dms_event(draw: st.DrawFn) -> ChangeEvent:
    names = draw(st.lists(IDENT, min_size=1, max_size=6, unique=True))
    row = {name: draw(JSON_VALUES) for name in names}
    extra = {name: draw(SCALARS) for name in draw(st.sets(st.sampled_from(EXTRA_NAMES)))}
    common: dict[str, Any] = {
        "format": "aws-dms-json",
        "schema": draw(st.none() | IDENT),
        "table": draw(IDENT),
        "ts_ms": draw(st.none() | st.integers(-(2**40), 2**42)),
        "tx": draw(st.none() | st.integers(0, 2**62).map(str) | UNICODE_TEXT),
    }
    op = draw(st.sampled_from([Op.SNAPSHOT, Op.INSERT, Op.UPDATE, Op.DELETE, Op.DDL]))
    if op is Op.DDL:
        extra["operation"] = draw(st.sampled_from(CONTROL_OPS))
        if draw(st.booleans()):
            extra["control"] = {"table-def": {"columns": {n: {"type": "STRING"} for n in names}}}
        return ChangeEvent(op=op, extra=extra, **common)
    if op is Op.DELETE:
        return ChangeEvent(op=op, before=row, extra=extra, **common)
    if op is not Op.UPDATE:
        return ChangeEvent(op=op, after=row, extra=extra, **common)
    before = None
    if draw(st.booleans()):  # BeforeImageSettings: some or all columns
        before = {name: draw(JSON_VALUES) for name in draw(st.sets(st.sampled_from(names)))}
    partial = ("before",) if before is not None and set(before) != set(names) else ()
    return ChangeEvent(
        op=op, before=before or None, after=row, partial=partial if before else (), extra=extra,
        **common,
    )  # fmt: skip


@given(st_dms_event())
def test_round_trip(event: ChangeEvent) -> None:
    [message] = FMT.encode(event)
    assert FMT.decode(message) == [event]
    assert detect(message).format == "aws-dms-json"


@given(st_dms_event())
def test_round_trip_with_a_named_before_image_field(event: ChangeEvent) -> None:
    fmt = AwsDmsJson({"before_image_field": "old"})
    [message] = fmt.encode(event)
    assert "before-image" not in json.loads(message)
    assert fmt.decode(message) == [event]


# --------------------------------------------------------------------------- the sources
def test_docs_data_record_keeps_every_transaction_detail() -> None:
    [event] = FMT.decode((CASES / "docs_kafka_data.json").read_bytes())
    assert (event.op, event.schema, event.table, event.tx) == (
        Op.INSERT, "sbtest", "sbtest_x", "9324410911751",
    )  # fmt: skip
    assert event.ts_ms == 1572562435000  # commit-timestamp 2019-10-31T22:53:55Z
    assert event.position is None and event.key is None and event.columns is None
    assert event.extra["stream-position"].startswith("mysql-bin-changelog.002171:36912271")
    assert event.extra["timestamp"] == "2019-10-31T22:53:59.721201Z"


def test_docs_control_record_is_a_ddl_event_without_statement() -> None:
    [event] = FMT.decode((CASES / "docs_kafka_control.json").read_bytes())
    assert (event.op, event.ddl, event.key, event.table) == (Op.DDL, None, None, "sbtest_t1")
    assert event.extra["operation"] == "create-table"
    assert event.extra["control"]["table-def"]["primary-key"] == ["id"]
    [message] = FMT.encode(event)
    assert FMT.decode(message) == [event]


def test_captured_postgres_messages() -> None:
    events = case_events("corpus_commons_codec", AwsDmsJson({"primary_key": "id"}))
    assert [e.op for e in events] == [Op.DDL, Op.DDL, Op.SNAPSHOT, Op.INSERT, Op.UPDATE,
                                      Op.UPDATE, Op.DELETE, Op.DDL]  # fmt: skip
    load, insert, update, key_change, delete = events[2:7]
    assert load.ts_ms is None and insert.ts_ms == 1722214697974
    assert update.before is None and not update.partial  # an empty before-image
    assert key_change.before == {"id": 46} and key_change.partial == ("before",)
    assert key_change.after is not None and key_change.after["id"] == 45
    assert delete.before == {"age": None, "attributes": None, "id": 45, "name": None}
    assert delete.key_values() == (45,)
    assert events[7].schema is None and events[7].table == "awsdms_apply_exceptions"


def test_paimons_before_image_columns() -> None:
    fmt = AwsDmsJson({"before_image_prefix": "BI_"})
    [update] = [e for e in case_events("corpus_paimon_aws_dms", fmt) if e.op is Op.UPDATE]
    assert update.before is not None and update.after is not None
    assert update.before["address"] == "Shanghai" and update.after["address"] == "Beijing"
    assert not any(name.startswith("BI_") for name in update.after)
    # without the option the BI_ columns are columns
    [plain] = [e for e in case_events("corpus_paimon_aws_dms") if e.op is Op.UPDATE]
    assert plain.before is None and plain.after is not None and "BI_address" in plain.after


def test_values_are_exact_json() -> None:
    [load, *_] = case_events("handmade_ops")
    assert load.after == {
        "id": 1, "name": "Ann", "balance": Decimal("12345678901234567890.123456789"),
        "big": 123456789012345678901234567890, "note": "héllo 😀", "flag": True,
        "missing": None,
    }  # fmt: skip


def test_no_position_and_commit_time_only() -> None:
    events = case_events("handmade_ops")
    assert all(e.position is None for e in events)
    assert [e.ts_ms for e in events if e.ts_ms is not None] == [1709251201999, 1709251209000]


# --------------------------------------------------------------------------- encoding
def test_encoder_writes_the_docs_layout() -> None:
    event = ChangeEvent(
        op=Op.UPDATE, format="x", database="shop", table="t", key=("id",),
        before={"id": 1, "v": Decimal("1.50")}, after={"id": 1, "v": Decimal("2.50")},
        ts_ms=1709251200250, tx="42", position=Position((7,)),
        extra={"timestamp": "2024-03-01T00:00:01.000000Z", "partition-key-type": "primary-key"},
    )  # fmt: skip
    [message] = FMT.encode(event)
    assert message == (
        b'{"data":{"id":1,"v":2.50},"before-image":{"id":1,"v":1.50},"metadata":{'
        b'"timestamp":"2024-03-01T00:00:01.000000Z","record-type":"data","operation":"update",'
        b'"schema-name":"shop","table-name":"t","transaction-id":42,'
        b'"partition-key-type":"primary-key","commit-timestamp":"2024-03-01T00:00:00.250000Z"}}'
    )
    assert FMT.encode_key(event) == b"[1]"


@pytest.mark.parametrize(
    "event",
    [
        ChangeEvent(op=Op.TRUNCATE, format="x", table="t"),
        ChangeEvent(op=Op.HEARTBEAT, format="x"),
        ChangeEvent(op=Op.BEGIN, format="x"),
        ChangeEvent(op=Op.DDL, format="x", ddl="ALTER TABLE t ADD c INT"),
        ChangeEvent(op=Op.UPDATE, format="x", split="before", after={"a": 1}),
        ChangeEvent(op=Op.UPDATE, format="x", after={"a": 1}, partial=("after",)),
        ChangeEvent(op=Op.UPDATE, format="x", after={"a": 1}, patch={"$set": {"a": 1}}),
        ChangeEvent(op=Op.DELETE, format="x", after={"a": 1}),
        ChangeEvent(op=Op.INSERT, format="x", database="d", schema="s", after={"a": 1}),
        ChangeEvent(op=Op.INSERT, format="x", after={}, ts_ms=10**18),
    ],
)
def test_encoder_refuses_what_dms_cannot_say(event: ChangeEvent) -> None:
    with pytest.raises(EncodeError, match=r"^aws-dms-json: cannot encode"):
        FMT.encode(event)


def test_convert_from_another_format() -> None:
    [event] = get_format("canal-json").decode(
        b'{"database":"shop","table":"t","type":"INSERT","isDdl":false,"data":[{"id":"1",'
        b'"v":"2.50"}],"old":null,"pkNames":["id"],"mysqlType":{"id":"int","v":"decimal(5,2)"},'
        b'"sqlType":{"id":4,"v":3},"es":1700000000000,"ts":1700000000001,"id":7,"sql":""}'
    )
    [message] = get_format("aws-dms-json").encode(event)
    assert detect(message).format == "aws-dms-json"
    [back] = AwsDmsJson({"primary_key": "id"}).decode(message)
    assert back.after == {"id": 1, "v": Decimal("2.50")} and back.key == ("id",)
    assert back.schema == "shop" and back.ts_ms == 1700000000000 and back.position is None


# --------------------------------------------------------------------------- errors
def _data(op: str = "insert", **meta: Any) -> dict[str, Any]:
    fields = {"record-type": "data", "operation": op, "table-name": "t", **meta}
    return {"data": {"id": 1}, "metadata": fields}


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"data": {}}, "aws-dms-json: $: missing required field 'metadata'"),
        ({"metadata": []}, "aws-dms-json: $.metadata: expected object, got array"),
        ({"metadata": {}}, "aws-dms-json: $.metadata: missing required field 'operation'"),
        (_data(op=1), "aws-dms-json: $.metadata.operation: expected string, got int"),  # type: ignore[arg-type]
        (_data("merge"), "aws-dms-json: $.metadata.operation: unknown operation 'merge'"),
        ({"metadata": {"operation": "update"}}, "aws-dms-json: $: missing 'data' when"),
        (_data(**{"record-type": "ctl"}), "aws-dms-json: $.metadata.record-type: a 'ctl'"),
        (_data(**{"commit-timestamp": "x"}), "aws-dms-json: $.metadata.commit-timestamp: inv"),
        (_data(**{"transaction-id": 1.5}), "aws-dms-json: $.metadata.transaction-id: expec"),
        (_data(**{"partition-key-value": []}), "aws-dms-json: $.metadata.partition-key-value"),
        (_data(**{"table-name": True}), "aws-dms-json: $.metadata.table-name: expected str"),
        ([1], "aws-dms-json: $: expected object, got array"),
    ],
)
def test_errors_name_the_format_and_path(message: Any, error: str) -> None:
    with pytest.raises(DecodeError) as info:
        FMT.decode(json.dumps(message))
    assert str(info.value).startswith(error)


def test_bad_options_are_refused() -> None:
    with pytest.raises(OptionError, match=r"^aws-dms-json: unknown option\(s\) column_prefix"):
        AwsDmsJson({"column_prefix": "BI_"})


META_FIELDS = st.sampled_from(["record-type", "schema-name", "table-name", "timestamp",
                               "commit-timestamp", "transaction-id", "stream-position"])  # fmt: skip


@given(
    st.sampled_from(["load", "insert", "update", "delete", "drop-table", "x"]),
    st.dictionaries(META_FIELDS, GARBAGE, max_size=5),
    st.dictionaries(st.sampled_from(["data", "before-image", "control"]), GARBAGE, max_size=3),
)
def test_garbage_gives_events_or_decode_errors(
    op: str, meta: dict[str, Any], body: dict[str, Any]
) -> None:
    try:
        FMT.decode_object({**body, "metadata": {"operation": op, **meta}})
    except DecodeError as exc:
        assert exc.format_id == "aws-dms-json"


# --------------------------------------------------------------------------- detection
# (every golden case is detected as its format: tests/unit/test_golden.py)
def test_other_formats_score_low() -> None:
    messages = foreign_json_messages(("aws-dms-json",), ("dms_docs", "commons_codec", "aws-dms"))
    assert len(messages) > 300
    for message in messages:
        assert AwsDmsJson.sniff(message) < 0.5, message


def test_sniff_never_raises_on_odd_shapes() -> None:
    odd: list[Any] = [None, 1, "x", [], {"metadata": None}, {"metadata": {"operation": "insert"}},
                      {"metadata": {"record-type": "data", "operation": ["insert"]}},
                      {"meta": {"op": "ins"}, "data": {"a": 1}}]  # fmt: skip
    for message in odd:
        assert 0.0 <= AwsDmsJson.sniff(message) < 0.5
