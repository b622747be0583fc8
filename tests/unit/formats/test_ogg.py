"""Oracle GoldenGate JSON (ogg-json): round trips, Flink/Paimon fixtures, Oracle's samples,
timestamp and position rules, missing columns, errors, detection."""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Op, Position
from anycdc.formats import detect, get_format
from anycdc.formats.ogg import OggJson
from tests.cases import CASES_DIR, CORPUS_DIR, foreign_json_messages, iter_cases
from tests.strategies import GARBAGE, IDENT, UNICODE_TEXT, st_decimal

FMT = OggJson()
COMPRESSED = OggJson({"compressed_updates": "true"})
CASES = CASES_DIR / "ogg-json"


def decode(message: Any, fmt: OggJson = FMT) -> list[ChangeEvent]:
    return fmt.decode(json.dumps(message) if not isinstance(message, str) else message)


def one(message: Any, fmt: OggJson = FMT) -> ChangeEvent:
    [event] = decode(message, fmt)
    return event


def case_events(name: str, fmt: OggJson = FMT) -> list[ChangeEvent]:
    lines = (CASES / f"{name}.jsonl").read_bytes().splitlines()
    return [e for line in lines if line.strip() for e in fmt.decode(line)]


# --------------------------------------------------------------------------- round trip
# GoldenGate JSON carries no types: values keep their JSON types (ints, exact decimals, text)
JSON_VALUES = st.one_of(st.none(), st.integers(-(2**70), 2**70), st_decimal(30, 6), UNICODE_TEXT)
TS_MS = st.integers(-(2**40), 2**42)


@st.composite
def st_ogg_event(draw: st.DrawFn, compressed: bool, ts_ms: Any = TS_MS) -> ChangeEvent:
    names = draw(st.lists(IDENT, min_size=1, max_size=6, unique=True))
    row = {name: draw(JSON_VALUES) for name in names}
    schema = draw(st.none() | IDENT)
    extra: dict[str, Any] = {}
    if draw(st.booleans()):
        extra["current_ts"] = draw(UNICODE_TEXT)
    if draw(st.booleans()):
        extra["tokens"] = draw(st.dictionaries(UNICODE_TEXT, UNICODE_TEXT, max_size=3))
    common: dict[str, Any] = {
        "format": "ogg-json",
        "database": None if schema is None else draw(st.none() | IDENT),
        "schema": schema,
        "table": draw(IDENT),
        "key": draw(st.none() | st.lists(st.sampled_from(names), min_size=1, unique=True)),
        "ts_ms": draw(st.none() | ts_ms),
        "position": draw(st.none() | st.integers(0, 10**30).map(lambda n: Position((n,)))),
        "extra": extra,
    }
    common["key"] = tuple(common["key"]) if common["key"] else None
    op = draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE, Op.TRUNCATE]))
    if op is Op.INSERT:
        return ChangeEvent(op=op, after=row, **common)
    if op is Op.DELETE:
        return ChangeEvent(op=op, before=row, **common)
    if op is Op.TRUNCATE:
        return ChangeEvent(op=op, **common)
    after = {name: draw(JSON_VALUES) for name in draw(st.sets(st.sampled_from(names)))}
    after = {**row, **after}
    before: dict[str, Any] | None = row
    if draw(st.booleans()):  # Extract without GETUPDATEBEFORES
        before = None
    elif draw(st.booleans()):  # compressed images: some columns left out of one of them
        dropped = draw(st.sets(st.sampled_from(names), min_size=1))
        if draw(st.booleans()):
            after = {k: v for k, v in after.items() if k not in dropped}
        else:
            before = {k: v for k, v in row.items() if k not in dropped}
    partial: tuple[str, ...]
    if compressed:
        partial = ("after",) if before is None else ("before", "after")
    else:
        partial = tuple(
            name
            for name, image, other in (("before", before, after), ("after", after, before))
            if image is not None and not set(other or ()) <= set(image)
        )
    return ChangeEvent(op=op, before=before, after=after, partial=partial, **common)


@given(st_ogg_event(compressed=False))
def test_round_trip(event: ChangeEvent) -> None:
    [message] = FMT.encode(event)
    assert FMT.decode(message) == [event]


@given(st_ogg_event(compressed=True))
def test_round_trip_compressed_updates(event: ChangeEvent) -> None:
    [message] = COMPRESSED.encode(event)
    assert COMPRESSED.decode(message) == [event]


# Asia/Shanghai has had no daylight saving time since 1991: its wall times are unambiguous
SHANGHAI = OggJson({"timezone": "Asia/Shanghai", "op_keys": "INSERT,UPDATE,DELETE,TRUNCATE"})
SINCE_1992 = st.integers(694_224_000_000, 4_102_444_800_000)


@given(st_ogg_event(compressed=False, ts_ms=SINCE_1992))
def test_round_trip_local_time_and_renamed_op_keys(event: ChangeEvent) -> None:
    [message] = SHANGHAI.encode(event)
    assert json.loads(message)["op_type"] in ("INSERT", "UPDATE", "DELETE", "TRUNCATE")
    assert SHANGHAI.decode(message) == [event]


# --------------------------------------------------------------------------- Flink / Paimon
ROW_RE = re.compile(r"kind=([+-][IUD]), fields=\[(.*)\]\}")


def flink_expected_rows() -> list[tuple[str, list[str]]]:
    """The 20 rows Flink's and SeaTunnel's OggJsonSerDeSchemaTest expect from ogg-data.txt
    (SeaTunnel's harvest attaches them to the neighbouring test method)."""
    text = (CORPUS_DIR / "seatunnel_json" / "EXPECTED_HARVEST.md").read_text()
    block = text.split("OggJsonSerDeSchemaTest.java :: testDeserializeUnknownTypeJson", 1)[1]
    block = block.split("###", 1)[0]
    return [(m.group(1), m.group(2).split(", ")) for m in ROW_RE.finditer(block)]


def as_rows(events: list[ChangeEvent]) -> list[tuple[str, list[Any]]]:
    """Flink changelog rows: +I insert, -U/+U update halves, -D delete."""
    rows: list[tuple[str, list[Any]]] = []
    for e in events:
        if e.op is Op.INSERT:
            rows.append(("+I", list((e.after or {}).values())))
        elif e.op is Op.UPDATE:
            rows += [
                ("-U", list((e.before or {}).values())),
                ("+U", list((e.after or {}).values())),
            ]
        elif e.op is Op.DELETE:
            rows.append(("-D", list((e.before or {}).values())))
    return rows


def float32(value: Any) -> bytes:
    return struct.pack("<f", float(value))


@pytest.mark.parametrize("name", ["corpus_flink_ogg_data", "corpus_flink_ogg_data_old"])
def test_flink_fixture_gives_flinks_rows(name: str) -> None:
    """Both versions of Flink's ogg-data.txt give Flink's 20 rows (the old one names its key
    ``priamry_keys``: the configured ``primary_key`` stands in, as Flink's schema does)."""
    fmt = OggJson({"primary_key": "id"}) if name.endswith("_old") else FMT
    events = case_events(name, fmt)
    expected = flink_expected_rows()
    assert len(expected) == 20
    got = as_rows(events)
    assert [kind for kind, _ in got] == [kind for kind, _ in expected]
    for (_, row), (_, want) in zip(got, expected, strict=True):
        assert row[:3] == [int(want[0]), want[1], want[2]]
        assert float32(row[3]) == float32(want[3])  # FLOAT column: 3.140000104904175 is 3.14
    assert {(e.schema, e.table, e.key) for e in events} == {("OGG", "TBL_TEST", ("id",))}
    assert all(e.partial == () for e in events)
    # the weights stay the exact decimals sent (a DECIMAL column would get every digit)
    assert events[0].after is not None
    assert events[0].after["weight"] == Decimal("3.140000104904175")
    # pos is 23 digits in this fixture: read as one integer, in file order
    assert [e.position for e in events] == [Position((n,)) for n in range(143, 159)]


def test_flink_fixture_timestamps() -> None:
    events = case_events("corpus_flink_ogg_data")
    first = events[0]
    # op_ts "2020-05-13 15:40:06.000000" is UTC; current_ts stays the replicat's text
    assert first.ts_ms == int(dt.datetime(2020, 5, 13, 15, 40, 6, tzinfo=dt.UTC).timestamp()) * 1000
    assert first.extra == {"current_ts": "2020-05-13T13:39:35.766000"}
    assert events[9].ts_ms == 1589390787936  # 2020-05-13 17:26:27.936000 UTC
    assert events[1].extra == {}


def test_paimon_fixtures_end_in_paimons_tables() -> None:
    """Paimon's KafkaSyncTableActionITCase (event/*.txt, key id): after the inserts, the
    update and the delete, rows 101 and 102 remain; the table is OGG.EVENT."""
    table: dict[Any, dict[str, Any]] = {}
    for step in ("insert", "update", "delete"):
        path = CORPUS_DIR / "paimon_kafka" / "ogg" / "table" / "event" / f"event-{step}.txt"
        for line in path.read_bytes().splitlines():
            if not line.startswith(b"{"):
                continue  # the license comment
            [e] = FMT.decode(line)
            assert (e.schema, e.table, e.key) == ("OGG", "EVENT", ("id",))
            if e.before is not None:
                table.pop(e.before["id"], None)
            if e.after is not None:
                table[e.after["id"]] = dict(e.after)
        if step == "update":
            assert table[103]["weight"] == Decimal("8.1")
    assert sorted(table) == [101, 102]
    assert table[101] == {
        "id": 101, "name": "scooter", "description": "Small 2-wheel scooter",
        "weight": Decimal("3.14"),
    }  # fmt: skip


def test_paimon_case_insensitive_fixture_keeps_names_as_sent() -> None:
    """``primary_keys`` names ``ID`` in one message and ``id`` in the next: kept as sent
    (Paimon's case-insensitive mode folds them; the pipeline's key mapping is the place)."""
    events = [e for e in case_events("corpus_paimon_ogg") if e.schema == "PAIMON_SYNC_DATABASE"]
    t1 = [e for e in events if e.table == "T1"]
    assert [e.key for e in t1] == [("ID",), ("id",)]
    assert t1[1].after is not None and list(t1[1].after) == ["ID", "name", "description", "WEIGHT"]


# --------------------------------------------------------------------------- Oracle's samples
def doc_event(name: str) -> ChangeEvent:
    return one((CASES / f"{name}.json").read_text())


def test_docs_compressed_update_has_a_partial_after_image() -> None:
    """Oracle's sample update: the after image holds the key and the changed price only."""
    event = doc_event("docs_update")
    assert event.before is not None and event.after is not None
    assert len(event.before) == 7 and len(event.after) == 5
    assert event.partial == ("after",)
    assert event.after["PRODUCT_PRICE"] == Decimal("14000.00")
    assert str(event.before["PRODUCT_PRICE"]) == "15000.00"  # the scale as sent


def test_docs_samples_order_by_pos_and_carry_the_commit_time() -> None:
    events = [doc_event(n) for n in ("docs_insert", "docs_update", "docs_delete")]
    events.append(doc_event("docs_truncate_fixed"))
    assert [e.op for e in events] == [Op.INSERT, Op.UPDATE, Op.DELETE, Op.TRUNCATE]
    positions = [e.position for e in events]
    assert positions == sorted(positions)  # type: ignore[type-var]
    assert events[0].ts_ms == 1446749136000  # 2015-11-05 18:45:36 UTC
    assert {(e.database, e.schema, e.table) for e in events} == {(None, "QASOURCE", "TCUSTORD")}
    with pytest.raises(DecodeError, match=r"^ogg-json: \$: invalid JSON: .*trailing comma"):
        doc_event("docs_truncate")  # as published: a comma after the last field


# --------------------------------------------------------------------------- rules
def test_op_ts_is_utc_unless_the_timezone_option_names_the_zone() -> None:
    msg = {"op_type": "I", "op_ts": "2024-03-01 08:00:00.250000", "after": {"ID": 1}}
    utc = 1709280000250
    assert one(msg).ts_ms == utc
    assert one(msg, OggJson({"timezone": "Asia/Shanghai"})).ts_ms == utc - 8 * 3600 * 1000
    # an offset in the text is the text's own: no option shifts it
    zoned = {**msg, "op_ts": "2024-03-01 08:00:00.250000+08:00"}
    assert one(zoned, OggJson({"timezone": "UTC"})).ts_ms == utc - 8 * 3600 * 1000
    # ISO-8601 with a T and nanoseconds reads too (microseconds kept, milliseconds in ts_ms)
    assert one({**msg, "op_ts": "2024-03-01T08:00:00.250999999"}).ts_ms == utc


def test_current_ts_is_kept_zone_less_as_sent() -> None:
    msg = {"op_type": "I", "current_ts": "2016-10-05T10:15:51.310002", "after": {"ID": 1}}
    for fmt in (FMT, OggJson({"timezone": "Asia/Shanghai"})):
        assert one(msg, fmt).extra["current_ts"] == "2016-10-05T10:15:51.310002"
        [message] = fmt.encode(one(msg, fmt))
        assert json.loads(message)["current_ts"] == "2016-10-05T10:15:51.310002"


def test_pos_orders_as_trail_sequence_then_rba() -> None:
    def position(pos: Any) -> Position:
        found = one({"op_type": "I", "pos": pos, "after": {}}).position
        assert found is not None
        return found

    # trail file 1, offset 5 comes after trail file 0, offset 9999999999
    assert position("00000000010000000005") > position("00000000009999999999")
    assert position("00000000000000001444") == position(1444) == Position((1444,))
    assert position("99999999999999999999") == Position((10**20 - 1,))  # beyond int64: exact
    assert one({"op_type": "I", "after": {}}).position is None


def test_table_names() -> None:
    def where(table: str) -> tuple[str | None, str | None, str | None]:
        e = one({"table": table, "op_type": "T"})
        return e.database, e.schema, e.table

    assert where("QASOURCE.TCUSTORD") == (None, "QASOURCE", "TCUSTORD")
    assert where("ORCLPDB1.HR.EMP") == ("ORCLPDB1", "HR", "EMP")
    assert where("EMP") == (None, None, "EMP")


def test_key_from_primary_keys_or_the_option() -> None:
    msg = {"op_type": "I", "primary_keys": ["A", "B"], "after": {"A": 1, "B": 2}}
    assert one(msg).key == ("A", "B")
    assert one({**msg, "primary_keys": []}).key is None
    assert one(msg, OggJson({"primary_key": "B"})).key == ("B",)  # the configured key wins
    assert one({"op_type": "I", "after": {"A": 1}}, OggJson({"primary_key": "A"})).key == ("A",)


def test_is_missing_flags_are_metadata_and_make_images_partial() -> None:
    event = one(
        {
            "op_type": "U",
            "before": {"ID": 1, "ID_isMissing": False, "N": None, "N_isMissing": True},
            "after": {"ID": 1, "ID_isMissing": False, "N": 5, "N_isMissing": False},
        }
    )
    assert event.before == {"ID": 1} and event.after == {"ID": 1, "N": 5}
    assert event.partial == ("before",)  # the flags say which, not the column counts
    # a flag without its column, or not a boolean, is a column
    insert = one({"op_type": "I", "after": {"X_isMissing": True, "Y": 1, "Y_isMissing": "no"}})
    assert insert.after == {"X_isMissing": True, "Y": 1, "Y_isMissing": "no"}
    assert insert.partial == ()


def test_update_images_whole_unless_they_differ_or_compressed() -> None:
    both = {"op_type": "U", "before": {"ID": 1, "N": 1}, "after": {"ID": 1, "N": 2}}
    assert one(both).partial == ()
    assert one(both, COMPRESSED).partial == ("before", "after")
    alone = {"op_type": "U", "after": {"ID": 1, "N": 2}}
    assert one(alone).partial == () and one(alone).before is None
    assert one(alone, COMPRESSED).partial == ("after",)
    # compressed_updates concerns updates only
    assert one({"op_type": "D", "before": {"ID": 1}}, COMPRESSED).partial == ()


# --------------------------------------------------------------------------- encoder
def test_encoder_writes_oracles_field_order_and_exact_values() -> None:
    event = ChangeEvent(
        op=Op.UPDATE,
        format="ogg-json",
        schema="QASOURCE",
        table="TCUSTORD",
        key=("ORDER_ID",),
        before={"ORDER_ID": 765, "PRICE": Decimal("15000.00"), "D": dt.date(1995, 12, 31)},
        after={"ORDER_ID": 765, "PRICE": Decimal("14000.00"), "D": dt.date(1995, 12, 31)},
        ts_ms=1446749139000,
        position=Position((4300,)),
        extra={"current_ts": "2016-10-05T10:15:51.310002", "tokens": {"R": "AAD"}},
    )
    [message] = FMT.encode(event)
    assert message == (
        b'{"table":"QASOURCE.TCUSTORD","op_type":"U","op_ts":"2015-11-05 18:45:39.000000",'
        b'"current_ts":"2016-10-05T10:15:51.310002","pos":"00000000000000004300",'
        b'"primary_keys":["ORDER_ID"],"tokens":{"R":"AAD"},'
        b'"before":{"ORDER_ID":765,"PRICE":15000.00,"D":"1995-12-31"},'
        b'"after":{"ORDER_ID":765,"PRICE":14000.00,"D":"1995-12-31"}}'
    )


def test_encoder_snapshot_is_an_insert_and_foreign_positions_are_left_out() -> None:
    event = ChangeEvent(
        op=Op.SNAPSHOT,
        format="canal-json",
        database="shop",
        table="orders",
        after={"id": 1, "paid": True, "blob": b"hi", "at": dt.datetime(2024, 1, 2, 3, 4, 5)},
        position=Position((1, 4, 0)),  # a binlog file/offset/row: no GoldenGate pos
        ts_ms=-1,
    )
    [message] = FMT.encode(event)
    assert json.loads(message) == {
        "table": "shop.orders",
        "op_type": "I",
        "op_ts": "1969-12-31 23:59:59.999000",
        "after": {"id": 1, "paid": 1, "blob": "aGk=", "at": "2024-01-02 03:04:05"},
    }
    decoded = one(message.decode())
    assert (decoded.op, decoded.schema, decoded.table, decoded.ts_ms) == (
        Op.INSERT, "shop", "orders", -1
    )  # fmt: skip


@pytest.mark.parametrize(
    "event",
    [
        ChangeEvent(op=Op.DDL, format="x", ddl="ALTER TABLE t ADD c INT"),
        ChangeEvent(op=Op.HEARTBEAT, format="x"),
        ChangeEvent(op=Op.BEGIN, format="x"),
        ChangeEvent(op=Op.COMMIT, format="x"),
        ChangeEvent(op=Op.UPDATE, format="x", split="before", before={"a": 1}),
        ChangeEvent(op=Op.DELETE, format="x"),
        ChangeEvent(op=Op.UPDATE, format="x", before={"a": 1}),
        ChangeEvent(op=Op.INSERT, format="x", after={}, ts_ms=10**18),
    ],
)
def test_encoder_refuses_what_goldengate_cannot_say(event: ChangeEvent) -> None:
    with pytest.raises(EncodeError, match=r"^ogg-json: cannot encode"):
        FMT.encode(event)


def test_convert_from_another_format() -> None:
    canal = get_format("canal-json")
    [event] = canal.decode(
        b'{"database":"shop","table":"t","type":"INSERT","isDdl":false,"data":[{"id":"1",'
        b'"v":"2.50"}],"old":null,"pkNames":["id"],"mysqlType":{"id":"int","v":"decimal(5,2)"},'
        b'"sqlType":{"id":4,"v":3},"es":1700000000000,"ts":1700000000001,"id":7,"sql":""}'
    )
    [message] = get_format("ogg-json").encode(event)
    assert detect(message).format == "ogg-json"
    [back] = FMT.decode(message)
    assert back.after == {"id": 1, "v": Decimal("2.50")} and back.key == ("id",)
    # a one-part position (Canal's id) is written as pos
    assert back.ts_ms == 1700000000000 and back.position == Position((7,))


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"after": {}}, "ogg-json: $: missing required field 'op_type'"),
        ({"op_type": 1, "after": {}}, "ogg-json: $.op_type: expected string, got integer"),
        ({"op_type": "P", "after": {}}, "ogg-json: $.op_type: unknown op_type 'P'"),
        ({"op_type": "I"}, "ogg-json: $: missing 'after' when 'op_type' is 'I'"),
        ({"op_type": "U", "before": {}}, "ogg-json: $: missing 'after' when 'op_type' is 'U'"),
        ({"op_type": "D", "after": {}}, "ogg-json: $: missing 'before' when 'op_type' is 'D'"),
        ({"op_type": "U", "before": 1, "after": {}}, "ogg-json: $.before: expected object"),
        ({"op_type": "I", "after": {}, "op_ts": 5}, "ogg-json: $.op_ts: invalid timestamp 5"),
        ({"op_type": "I", "after": {}, "pos": 1e999999}, "ogg-json: $.pos: expected integer"),
        ({"op_type": "I", "after": {}, "pos": "1" * 41}, "ogg-json: $.pos: expected integer"),
        ({"op_type": "T", "primary_keys": {}}, "ogg-json: $.primary_keys: expected array"),
        ({"op_type": "T", "tokens": "R=1"}, "ogg-json: $.tokens: expected object, got string"),
        ([1], "ogg-json: $: expected object, got array"),
    ],
)
def test_errors_name_the_format_and_path(message: Any, error: str) -> None:
    text = json.dumps(message).replace("Infinity", "1e999999")
    with pytest.raises(DecodeError) as info:
        FMT.decode(text)
    assert str(info.value).startswith(error)


@pytest.mark.parametrize(
    "options",
    [
        {"op_keys": "I,U,D"},
        {"op_keys": "I,U,D,D"},
        {"op_keys": "I,,D,T"},
        {"compressed_updates": "maybe"},
        {"timezone": "Mars/Olympus"},
        {"flatten": "true"},
    ],
)
def test_bad_options_are_refused(options: dict[str, str]) -> None:
    with pytest.raises(OptionError, match=r"^ogg-json: "):
        OggJson(options)


FIELDS = st.sampled_from(
    ["table", "op_ts", "current_ts", "pos", "primary_keys", "tokens", "before", "after"]
)


@given(
    st.sampled_from(["I", "U", "D", "T", "X"]),
    st.dictionaries(FIELDS, GARBAGE, max_size=8),
)
def test_garbage_gives_events_or_decode_errors(op: str, fields: dict[str, Any]) -> None:
    try:
        FMT.decode_object({"op_type": op, **fields})
    except DecodeError as exc:
        assert exc.format_id == "ogg-json"


# --------------------------------------------------------------------------- detection
def test_golden_messages_are_detected_as_ogg() -> None:
    for case in iter_cases("ogg-json"):
        for message in case.messages():
            try:
                parsed = json.loads(message or b"")
            except ValueError:
                continue
            assert OggJson.sniff(parsed) >= 0.5, case.id
            assert detect(message).format == "ogg-json", case.id


def _is_ogg_corpus_file(path: Path) -> bool:
    return "ogg" in path.name or "ogg" in path.parts


def _other_corpus_messages() -> list[Any]:
    """Every JSON message of the other formats' golden cases and of the corpus, but for the
    GoldenGate fixtures (which share their folders with other formats' fixtures)."""
    shared = ("flink_json", "seatunnel_json", "paimon_kafka")
    out = foreign_json_messages(("ogg-json",), (*shared, "ogg_docs"))
    for folder in shared:
        for path in sorted((CORPUS_DIR / folder).rglob("*.txt")):
            if _is_ogg_corpus_file(path):
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    return out


OTHER_SHAPES = [
    {"meta": {"op": "ins", "table": "A.B"}, "data": {"a": 1}},
    {"database": "d", "table": "t", "type": "INSERT", "data": [{"id": "1"}], "old": None},
    {"before": None, "after": {"id": 1}, "op": "c", "source": {"table": "t"}},
    {"item_id": 1234565, "op_type": "UPDATE", "request_id": "", "booth_ids": "11"},
]


def test_other_formats_score_low() -> None:
    messages = [*_other_corpus_messages(), *OTHER_SHAPES]
    assert len(messages) > 300
    for message in messages:
        assert OggJson.sniff(message) < 0.5, message


def test_sniff_never_raises_on_odd_shapes() -> None:
    odd: list[Any] = [None, 1, "x", [], {"op_type": None}, {"op_type": ["I"]}, {"op_type": "I"}]
    for message in odd:
        assert 0.0 <= OggJson.sniff(message) < 0.5
    assert get_format("ogg-json").id == "ogg-json"
