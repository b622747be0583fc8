"""maxwell-json (Maxwell's daemon): round trips, positions, Flink's rows, encoder, errors, detection."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import REGISTRY, detect, format_class, get_format
from anycdc.formats.maxwell import DDL_TYPES, MARKER_TYPES, MaxwellJson, render_value
from anycdc.values import LogicalType
from tests.cases import foreign_json_messages, iter_cases
from tests.strategies import GARBAGE, IDENT, UNICODE_TEXT, st_json_value
from tests.unit.formats.test_canal import FLINK_FIELDS, flink_expected_rows, rows

FMT = MaxwellJson()
CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def one(message: Any, fmt: MaxwellJson = FMT) -> ChangeEvent:
    [event] = fmt.decode(json.dumps(message) if not isinstance(message, (str, bytes)) else message)
    return event


def row(**fields: Any) -> dict[str, Any]:
    """A Maxwell row message: insert into shop.orders unless told otherwise."""
    return {"database": "shop", "table": "orders", "type": "insert", "ts": 1700000000, **fields}


# --------------------------------------------------------------------------- round trip
INT64 = st.integers(0, 2**63 - 1)
EXTRA = st.fixed_dictionaries(
    {},
    optional={
        "gtid": st.from_regex(
            r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}:[0-9]{1,6}", fullmatch=True
        ),
        "server_id": INT64,
        "thread_id": INT64,
        "schema_id": INT64,
        "comment": UNICODE_TEXT,
    },
)


@st.composite
def st_maxwell_event(draw: st.DrawFn) -> ChangeEvent:
    """Any event Maxwell can write, with the position its message fields give."""
    kind = draw(st.sampled_from(["insert", "update", "delete", "snapshot", "ddl", "marker"]))
    ddl = kind == "ddl"
    ts_ms = draw(st.none() | st.integers(0, 2**45).map(lambda n: n if ddl else n // 1000 * 1000))
    tx = draw(st.none() | INT64.map(str))
    extra: dict[str, Any] = draw(EXTRA)
    common: dict[str, Any] = {
        "format": "maxwell-json",
        "database": draw(st.none() | IDENT),
        "table": draw(st.none() | IDENT),
        "ts_ms": ts_ms,
        "tx": tx,
    }
    if kind not in ("snapshot", "marker"):
        commit, xoffset = draw(st.integers(0, 1)), draw(st.integers(0, 10**6))
        if commit:
            xoffset = 0  # Maxwell writes no xoffset on the commit row
        seconds = None if ts_ms is None else ts_ms // 1000
        binlog = st.tuples(st.integers(0, 999_999), INT64).map(
            lambda fo: Position((1, fo[0], fo[1], commit, xoffset))
        )
        timed = st.just(
            None if seconds is None else Position((0, seconds, int(tx or 0), commit, xoffset))
        )
        common["position"] = draw(binlog | timed)
    if ddl:
        extra["type"] = draw(st.sampled_from(sorted(DDL_TYPES)))
        return ChangeEvent(op=Op.DDL, ddl=draw(st.none() | UNICODE_TEXT), extra=extra, **common)
    if kind == "marker":
        extra["type"] = draw(st.sampled_from(sorted(MARKER_TYPES)))
        return ChangeEvent(op=Op.HEARTBEAT, extra=extra, **common)
    if draw(st.booleans()):
        extra["query"] = draw(UNICODE_TEXT)
    names = draw(st.lists(IDENT, min_size=1, max_size=6, unique=True))
    image = {name: draw(st_json_value()) for name in names}
    key = draw(st.none() | st.lists(st.sampled_from(names), min_size=1, unique=True).map(tuple))
    common.update(key=key, extra=extra)
    if kind == "insert":
        return ChangeEvent(op=Op.INSERT, after=image, **common)
    if kind == "snapshot":
        return ChangeEvent(op=Op.SNAPSHOT, after=image, **common)
    if kind == "delete":
        return ChangeEvent(op=Op.DELETE, before=image, **common)
    changed = draw(st.sets(st.sampled_from(names)))
    after = {name: draw(st_json_value()) if name in changed else v for name, v in image.items()}
    return ChangeEvent(op=Op.UPDATE, before=image, after=after, **common)


@given(st_maxwell_event())
def test_round_trip(event: ChangeEvent) -> None:
    [message] = FMT.encode(event)
    assert FMT.decode(message) == [event]
    assert detect(message).format == "maxwell-json"


# --------------------------------------------------------------------------- decoding rules
def test_old_holds_changed_columns_and_is_merged_over_data() -> None:
    event = one(row(type="update", data={"id": 1, "a": "new", "b": None}, old={"a": "x", "b": 7}))
    assert event.after == {"id": 1, "a": "new", "b": None}
    assert event.before == {"id": 1, "a": "x", "b": 7}
    # an explicit null in old wins; no old: nothing changed (Maxwell drops an empty old)
    assert one(row(type="update", data={"id": 1, "a": 2}, old={"a": None})).before == {
        "id": 1, "a": None
    }  # fmt: skip
    same = one(row(type="update", data={"id": 1, "a": 2}))
    assert same.before == same.after == {"id": 1, "a": 2}
    assert same.before is not same.after


def test_values_stay_exact_and_untyped() -> None:
    text = (
        b'{"database":"d","table":"t","type":"insert","ts":1,"data":{"u":10223372036854775806,'
        b'"d":1234567890123456789012345678.000000001,"f":4.2341,"s":["a","b"],"j":{"k":2.50},'
        b'"b":true}}'
    )
    event = one(text)
    assert event.columns is None
    after = event.after or {}
    assert after["u"] == 10223372036854775806 and type(after["u"]) is int
    assert str(after["d"]) == "1234567890123456789012345678.000000001"
    assert after["f"] == Decimal("4.2341")
    assert after["s"] == ["a", "b"] and after["j"] == {"k": Decimal("2.50")} and after["b"] is True


def test_row_ts_is_seconds_and_ddl_ts_is_milliseconds() -> None:
    assert one(row(data={})).ts_ms == 1700000000000
    ddl = one({"type": "table-alter", "database": "d", "table": "t", "ts": 1477053308000,
               "sql": "alter table t add c int"})  # fmt: skip
    assert ddl.op is Op.DDL and ddl.ts_ms == 1477053308000
    assert ddl.ddl == "alter table t add c int" and ddl.extra["type"] == "table-alter"
    assert ddl.position == Position((0, 1477053308, 0, 0, 0))  # seconds, as rows have


def test_bootstrap_rows_are_snapshots_and_markers_heartbeats_without_position() -> None:
    start = one(row(type="bootstrap-start", data={}, xoffset=3, position="mysql-bin.000001:4"))
    assert start.op is Op.HEARTBEAT and start.extra["type"] == "bootstrap-start"
    assert start.position is None and start.table == "orders"
    snapshot = one(row(type="bootstrap-insert", data={"id": 1}, primary_key_columns=["id"]))
    assert snapshot.op is Op.SNAPSHOT and snapshot.after == {"id": 1} and snapshot.key == ("id",)
    assert snapshot.position is None


def test_binlog_position_and_commit_order_the_rows() -> None:
    def position(**fields: Any) -> Position:
        found = one(row(data={}, **fields)).position
        assert found is not None
        return found

    first = position(xid=9, xoffset=0, position="mysql-bin.000003:1300")
    second = position(xid=9, xoffset=1, position="mysql-bin.000003:1300")
    last = position(xid=9, commit=True, position="mysql-bin.000003:1300")  # no xoffset
    rotated = position(xid=10, commit=True, position="mysql-bin.000004:4")
    assert first < second < last < rotated
    assert last == Position((1, 3, 1300, 1, 0))
    assert position(position="db-01.relay-bin.000012:99") == Position((1, 12, 99, 0, 0))
    # without a binlog position: ts, xid, commit, xoffset; the commit row is the last
    t_first = position(ts=100, xid=7, xoffset=5)
    t_last = position(ts=100, xid=7, commit=True)
    assert t_first < t_last < position(ts=101, xid=3, xoffset=0)
    # the two kinds never interleave: every binlog position sorts after every ts/xid one
    assert position(ts=2**40, xid=2**62, xoffset=9) < position(position="mysql-bin.000001:4")
    assert one({"table": "t", "type": "insert", "data": {}}).position is None


def test_key_from_primary_key_columns_and_the_option_wins() -> None:
    assert one(row(data={"id": 1}, primary_key_columns=["id"])).key == ("id",)
    assert one(row(data={"id": 1}, primary_key_columns=[])).key is None
    assert one(row(data={"id": 1})).key is None
    configured = MaxwellJson({"primary_key": "no"})
    assert one(row(data={"id": 1, "no": 2}, primary_key_columns=["id"]), configured).key == ("no",)


def test_vendor_fields_go_to_extra_and_the_rest_is_ignored() -> None:
    event = one(
        row(data={"id": 1}, xid=5, server_id=23042, thread_id=108, schema_id=4, comment="c",
            gtid="g:1", query="insert ...", primary_key=[1], push_ts=1.5, custom="script field")
    )  # fmt: skip
    assert dict(event.extra) == {"query": "insert ...", "gtid": "g:1", "server_id": 23042,
                                 "thread_id": 108, "schema_id": 4, "comment": "c"}  # fmt: skip
    assert event.tx == "5"


# --------------------------------------------------------------------------- the corpus
def test_flink_maxwell_data_rows() -> None:
    """Flink's MaxwellJsonSerDerTest fixture gives the 26 rows its test expects (SeaTunnel's
    copy of the fixture too)."""
    expected = flink_expected_rows()
    assert len(expected) == 26
    for path in (
        CORPUS / "flink_json" / "maxwell-data.txt",
        CORPUS / "seatunnel_json" / "maxwell-data-filter-table.txt",
    ):
        events = [e for line in path.read_bytes().splitlines() for e in FMT.decode(line)]
        assert rows(events, FLINK_FIELDS) == expected, path.name


def test_paimon_fixtures_decode_with_their_tables_and_keys() -> None:
    folder = CORPUS / "paimon_kafka" / "maxwell"
    files = sorted(folder.rglob("*.txt"))
    assert len(files) == 18
    for path in files:
        lines = [ln for ln in path.read_bytes().splitlines() if ln.startswith(b"{")]
        assert lines, path
        for line in lines:
            [event] = FMT.decode(line)
            assert event.op in (Op.INSERT, Op.UPDATE, Op.DELETE), path
            assert event.key in (("id",), ("_id",)) and event.database and event.table, path


# --------------------------------------------------------------------------- encoder
def test_encoder_layout_is_maxwells() -> None:
    event = one(
        row(type="update", xid=8811, xoffset=1, position="mysql-bin.000003:1300", server_id=1,
            primary_key_columns=["id"], data={"id": 1, "m": 5.444, "n": "same"}, old={"m": 4.2341})
    )  # fmt: skip
    [message] = FMT.encode(event)
    assert message == (
        b'{"database":"shop","table":"orders","type":"update","ts":1700000000,"xid":8811,'
        b'"xoffset":1,"position":"mysql-bin.000003:1300","server_id":1,'
        b'"primary_key_columns":["id"],"data":{"id":1,"m":5.444,"n":"same"},"old":{"m":4.2341}}'
    )
    commit = event.with_changes(position=Position((1, 3, 1300, 1, 0)))
    assert b'"xid":8811,"commit":true,"position"' in FMT.encode(commit)[0]


def test_encoder_writes_ddl_and_bootstrap_messages() -> None:
    ddl = ChangeEvent(op=Op.DDL, format="x", database="d", table="t", ts_ms=1477053126000,
                      ddl="CREATE TABLE d.t (id int)", position=Position((1, 6, 800050, 0, 0)))  # fmt: skip
    assert json.loads(FMT.encode(ddl)[0]) == {
        "type": "table-create", "database": "d", "table": "t", "ts": 1477053126000,
        "sql": "CREATE TABLE d.t (id int)", "position": "mysql-bin.000006:800050",
    }  # fmt: skip
    for sql, kind in [("drop database d", "database-drop"), ("RENAME TABLE a TO b", "table-alter"),
                      ("  create\nschema x", "database-create")]:  # fmt: skip
        assert json.loads(FMT.encode(ddl.with_changes(ddl=sql))[0])["type"] == kind
    marker = ChangeEvent(op=Op.HEARTBEAT, format="x", database="d", table="t", ts_ms=1450557744000,
                         extra={"type": "bootstrap-complete"})  # fmt: skip
    assert json.loads(FMT.encode(marker)[0]) == {
        "database": "d", "table": "t", "type": "bootstrap-complete", "ts": 1450557744, "data": {}
    }  # fmt: skip
    snapshot = ChangeEvent(op=Op.SNAPSHOT, format="x", database="d", table="t", ts_ms=1_000,
                           after={"id": 1}, position=Position((1, 2, 3, 0, 0)))  # fmt: skip
    assert json.loads(FMT.encode(snapshot)[0]) == {
        "database": "d", "table": "t", "type": "bootstrap-insert", "ts": 1, "data": {"id": 1}
    }  # fmt: skip


def test_encoder_renders_typed_values_as_maxwell_does() -> None:
    """An event of a typed format (canal-json, debezium-json ...) converted to Maxwell."""
    event = ChangeEvent(
        op=Op.INSERT,
        format="canal-json",
        database="d",
        table="t",
        after={
            "dec": Decimal("12345678901234567890.123456789"),
            "f": 5.17,
            "flag": True,
            "bin": b"\x00\xff",
            "d": dt.date(2024, 5, 1),
            "t": dt.time(8, 0, 1, 500000),
            "naive": dt.datetime(2016, 10, 21, 5, 33, 37, 523000),
            "instant": dt.datetime(
                2016, 10, 21, 7, 33, 37, tzinfo=dt.timezone(dt.timedelta(hours=2))
            ),
        },
        columns={"dec": Column(LogicalType("decimal", 29, 9))},
        ts_ms=1477053217523,
        position=Position((58,)),  # Canal's batch id: Maxwell has no place for it
        tx="tx-1",  # not an InnoDB xid: not written
    )
    [message] = FMT.encode(event)
    assert message.startswith(
        b'{"database":"d","table":"t","type":"insert","ts":1477053217,"data":'
    )
    assert json.loads(message, parse_float=Decimal)["data"] == {
        "dec": Decimal("12345678901234567890.123456789"), "f": Decimal("5.17"), "flag": True,
        "bin": "AP8=", "d": "2024-05-01", "t": "08:00:01.5", "naive": "2016-10-21 05:33:37.523",
        "instant": "2016-10-21 05:33:37",
    }  # fmt: skip
    decoded = one(message)
    assert decoded.position == Position((0, 1477053217, 0, 0, 0)) and decoded.tx is None


def test_render_value_keeps_nested_values_exact() -> None:
    assert render_value({"a": [Decimal("1.50"), None, False]}) == {
        "a": [Decimal("1.50"), None, False]
    }
    assert render_value((1, b"hi")) == [1, "aGk="]


@pytest.mark.parametrize(
    "event",
    [
        ChangeEvent(op=Op.HEARTBEAT, format="x"),
        ChangeEvent(op=Op.BEGIN, format="x", tx="1"),
        ChangeEvent(op=Op.COMMIT, format="x", tx="1"),
        ChangeEvent(op=Op.TRUNCATE, format="x", table="t"),
        ChangeEvent(op=Op.INSERT, format="x", table="t"),
        ChangeEvent(op=Op.UPDATE, format="x", after={"a": 1}, partial=("after",)),
        ChangeEvent(op=Op.UPDATE, format="x", after={"a": 1}, split="after"),
        ChangeEvent(op=Op.INSERT, format="x", after={}, ts_ms=-1),
        ChangeEvent(
            op=Op.INSERT, format="x", after={}, ts_ms=5000, position=Position((0, 4, 0, 0, 0))
        ),
        ChangeEvent(
            op=Op.INSERT, format="x", after={}, ts_ms=5000, position=Position((0, 5, 0, 2, 0))
        ),
    ],
    ids=[
        "heartbeat",
        "begin",
        "commit",
        "truncate",
        "no-image",
        "partial",
        "split",
        "negative-ts",
        "position-not-ts",
        "commit-not-a-flag",
    ],
)
def test_encoder_refuses_what_maxwell_cannot_say(event: ChangeEvent) -> None:
    with pytest.raises(EncodeError, match=r"^maxwell-json: cannot encode"):
        FMT.encode(event)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            '{"database":"d","table":"t","data":{}}',
            "maxwell-json: $: missing required field 'type'",
        ),
        ('{"type":1,"data":{}}', "maxwell-json: $.type: expected string, got integer"),
        ("[1]", "maxwell-json: $: expected object, got array"),
        ('{"type":"insert","ts":"soon","data":{}}', "maxwell-json: $.ts: expected integer"),
        ('{"type":"insert","ts":1e30,"data":{}}', "maxwell-json: $.ts:"),
        (
            '{"type":"insert","xoffset":-1,"data":{}}',
            "maxwell-json: $.xoffset: integer -1 out of range",
        ),
        ('{"type":"insert","position":7,"data":{}}', "maxwell-json: $.position: expected string"),
    ],
)
def test_errors_name_the_format_and_path(text: str, error: str) -> None:
    with pytest.raises(DecodeError) as info:
        FMT.decode(text)
    assert str(info.value).startswith(error)


TYPES = st.sampled_from(["insert", "update", "delete", "bootstrap-start", "table-alter", "x"])
FIELDS = ["database", "table", "ts", "xid", "xoffset", "commit", "position", "gtid", "server_id",
          "query", "primary_key_columns", "data", "old", "sql"]  # fmt: skip


@given(st.fixed_dictionaries({"type": TYPES}, optional={f: GARBAGE for f in FIELDS}))
def test_garbage_gives_events_or_decode_errors(message: dict[str, Any]) -> None:
    try:
        FMT.decode_object(message)
    except DecodeError as exc:
        assert exc.format_id == "maxwell-json"


# --------------------------------------------------------------------------- detection
def test_golden_messages_are_maxwells_and_no_other_sniffer_claims_them() -> None:
    others = [
        format_class(f) for f in REGISTRY if f != "maxwell-json" and not format_class(f).binary
    ]
    for case in iter_cases("maxwell-json"):
        for message in case.messages():
            try:
                parsed = json.loads(message or b"")
            except ValueError:
                continue
            mine = MaxwellJson.sniff(parsed)
            assert mine >= 0.5, case.id
            assert all(cls.sniff(parsed) < mine for cls in others), case.id


def test_other_formats_score_low() -> None:
    skip = ("maxwell_docs", "maxwell", "maxwell-data.txt", "maxwell-data-filter-table.txt")
    for message in foreign_json_messages(("maxwell-json",), skip):
        assert MaxwellJson.sniff(message) < 0.5, message


def test_sniff_never_raises_on_odd_shapes() -> None:
    for message in [None, 1, "x", [], {"type": None}, {"type": ["insert"]}, {"type": "INSERT"}]:
        assert 0.0 <= MaxwellJson.sniff(message) < 0.5
    assert get_format("maxwell-json").id == "maxwell-json"


def test_dead_letter_skeletons_and_encrypted_rows_never_become_rows() -> None:
    """Maxwell's dead_letter_topic skeleton (key columns only) decoded as an insert would
    overwrite the row with NULLs; encrypted rows hold no readable row: both are errors,
    with the format and detection agreeing."""
    from anycdc.decoding import MessageDecoder

    skeletons = [
        b'{"database":"d","table":"t","type":"insert","reason":"too big","data":{"id":1}}',
        b'{"database":"d","table":"t","reason":"RecordTooLargeException","data":{"id":1}}',
        b'{"database":"d","table":"t","type":"delete","reason":"x","data":{"id":1,"k":2}}',
    ]
    encrypted = [
        b'{"encrypted":{"iv":"AA==","bytes":"AA=="}}',
        b'{"database":"d","table":"t","type":"update","ts":1,"xid":2,"encrypted":{"iv":"AA==","bytes":"AA=="}}',
    ]
    for messages, path in ((skeletons, "$.reason"), (encrypted, "$.encrypted")):
        for message in messages:
            for decode in (MaxwellJson().decode, MessageDecoder("auto").decode):
                with pytest.raises(DecodeError) as caught:
                    decode(message)
                assert (caught.value.format_id, caught.value.path) == ("maxwell-json", path)
    # a row (it has ``ts``) whose filter added an attribute named ``reason`` is a row
    [row] = MaxwellJson().decode(
        b'{"database":"d","table":"t","type":"insert","ts":1,"reason":"mine","data":{"id":1}}'
    )
    assert row.op is Op.INSERT and row.after == {"id": 1}


def test_binlog_positions_of_any_base_name_order_by_file_number_then_offset() -> None:
    def position(text: str, ts: int = 1700000000, xid: int = 1) -> Position | None:
        message = {"database": "d", "table": "t", "type": "insert", "ts": ts, "xid": xid,
                   "position": text, "data": {"id": 1}}  # fmt: skip
        [event] = MaxwellJson().decode(json.dumps(message))
        return event.position

    ordered = ["binlog.000009:99999", "db1-bin.000010:4", "/data/my.bin.log.000010:120"]
    found = [position(text) for text in ordered]
    assert found == sorted(found, key=lambda p: p.sort_key())  # type: ignore[union-attr]
    assert [p.parts[:3] for p in found] == [(1, 9, 99999), (1, 10, 4), (1, 10, 120)]  # type: ignore[union-attr]


def test_a_position_without_a_file_number_orders_by_ts_and_xid_and_is_kept() -> None:
    """A binlog name without a number cannot order across files: the row is kept, ordered
    as without output_binlog_position (before every numbered position), the text in
    extra; the encoder writes it back."""
    fmt = MaxwellJson()
    message = (
        b'{"database":"d","table":"t","type":"insert","ts":1700000000,"xid":7,"commit":true,'
        b'"position":"binlog:1234","data":{"id":1}}'
    )
    [event] = fmt.decode(message)
    assert event.position == Position((0, 1700000000, 7, 1, 0))
    assert event.extra == {"position": "binlog:1234"}
    numbered = Position((1, 0, 0, 0, 0))
    assert event.position.sort_key() < numbered.sort_key()
    assert fmt.decode(fmt.encode(event)[0]) == [event]
    with pytest.raises(DecodeError, match=r"\$\.position: expected string"):
        fmt.decode(message.replace(b'"binlog:1234"', b"1234"))
