"""dts-avro: round trips, every quirk of FORMATS.md section 2, malformed Avro, detection."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position, event_from_json, event_to_json
from anycdc.formats import detect
from anycdc.formats.codecs.avro import AvroDataError, AvroReader
from anycdc.formats.dts_avro.encode import mysql_column
from anycdc.formats.dts_avro.format import DtsAvro
from anycdc.formats.dts_avro.wire import PROGRESS_OPS
from anycdc.values import (
    BINARY,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    JSON,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    LogicalType,
)
from tests.cases import iter_cases
from tests.strategies import st_row_event

NS = "com.alibaba.dts.formats.avro."
CORPUS_SCHEMA = Path(__file__).parents[2] / "corpus" / "dts_lioroger" / "Record.avsc"
FMT = DtsAvro()

DTS_TYPES = [
    INT8, INT16, INT32, INT64, LogicalType.parse("decimal(20,4)"),
    LogicalType.parse("decimal(38,0)"), FLOAT32, FLOAT64, STRING, BINARY, DATE, TIME,
    TIMESTAMP, TIMESTAMPTZ, JSON,
]  # fmt: skip


def _schema() -> Any:
    named: dict[str, Any] = {}
    fastavro.parse_schema(json.loads(CORPUS_SCHEMA.read_text()), named_schemas=named)
    return fastavro.parse_schema(named[NS + "Record"], named_schemas=named)


SCHEMA = _schema()


def write(record: dict[str, Any]) -> bytes:
    """Serialize a hand-written Record with fastavro (the independent writer)."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, SCHEMA, record)
    return out.getvalue()


def record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": 0, "id": 7, "sourceTimestamp": 1600161894, "sourcePosition": "72469@78",
        "safeSourcePosition": "", "sourceTxid": "", "operation": "INSERT",
        "source": {"sourceType": "MySQL", "version": "8.0"}, "objectName": "db.t",
        "processTimestamps": None, "tags": {"pk_uk_info": '{"PRIMARY":["id"]}'},
        "fields": [{"name": "id", "dataTypeNumber": 8}], "beforeImages": None,
        "afterImages": [(NS + "Integer", {"precision": 1, "value": "1"})], "bornTimestamp": 0,
    }  # fmt: skip
    base.update(fields)
    return base


def value(kind: str, **payload: Any) -> tuple[str, dict[str, Any]]:
    return NS + kind, payload


def one_column(code: int, item: Any, **fields: Any) -> ChangeEvent:
    msg = write(
        record(fields=[{"name": "c", "dataTypeNumber": code}], afterImages=[item], **fields)
    )
    [event] = FMT.decode(msg)
    return event


# --------------------------------------------------------------------------- round trips
def _expressible(event: ChangeEvent) -> ChangeEvent:
    """What DTS Avro can carry: whole seconds; a decimal's precision only via a value."""
    columns = dict(event.columns or {})
    for name, col in columns.items():
        if col.type.name == "decimal":
            rows = [r for r in (event.before, event.after) if r is not None]
            if all(r.get(name) is None for r in rows):
                columns[name] = Column(DECIMAL, col.vendor_type, col.vendor_code)
    return event.with_changes(
        ts_ms=(event.ts_ms or 0) // 1000 * 1000,
        columns=columns,
        extra={"sourceType": "MySQL"},
    )


@settings(max_examples=150)
@given(
    st_row_event(
        "dts-avro",
        DTS_TYPES,
        ops=(Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT),
        column=mysql_column,
        position=lambda n: Position((n % 1000, n, n % 2**40)),
    )
)
def test_round_trip_rows(event: ChangeEvent) -> None:
    event = _expressible(event)
    assert FMT.decode(FMT.encode(event)[0]) == [event]


@given(
    op=st.sampled_from([Op.DDL, Op.BEGIN, Op.COMMIT, Op.HEARTBEAT]),
    ts=st.integers(0, 2**33).map(lambda s: s * 1000),
    pos=st.tuples(st.integers(0, 10**6), st.integers(0, 2**40), st.integers(0, 2**62)),
    tx=st.one_of(st.none(), st.text("0123456789abcdef-:", min_size=1, max_size=20)),
    marker=st.sampled_from([*sorted(PROGRESS_OPS), None]),
    ddl=st.text(max_size=40),
)
def test_round_trip_markers_and_ddl(
    op: Op, ts: int, pos: tuple[int, int, int], tx: str | None, marker: str | None, ddl: str
) -> None:
    extra: dict[str, Any] = {"sourceType": "MySQL"}
    if op is Op.HEARTBEAT and marker is not None:
        extra["operation"] = marker
    names = {"database": "db", "table": "t"} if op is Op.DDL else {}
    event = ChangeEvent(
        op=op, format="dts-avro", ts_ms=ts, position=Position(pos), tx=tx,
        ddl=ddl if op is Op.DDL else None, extra=extra,
        **names,
    )  # fmt: skip
    assert FMT.decode(FMT.encode(event)[0]) == [event]


def test_round_trip_partial_and_zoned_values() -> None:
    zoned = dt.datetime(2020, 1, 1, 8, tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30)))
    event = ChangeEvent(
        op=Op.UPDATE, format="dts-avro", database="my.db", schema="s", table="t.x", key=("id",),
        columns={"id": mysql_column(INT64), "v": mysql_column(STRING),
                 "z": mysql_column(TIMESTAMPTZ)},
        before={"id": 1, "z": zoned}, after={"id": 1, "v": "x", "z": zoned},
        partial=("before",), ts_ms=1000, position=Position((1, 2, 3)),
        extra={"sourceType": "MySQL", "bornTimestamp": 1999},
    )  # fmt: skip
    [back] = FMT.decode(FMT.encode(event)[0])
    assert back == event
    assert back.after is not None and back.after["z"].utcoffset() == zoned.utcoffset()


def test_canonical_json_of_decoded_events_round_trips() -> None:
    for case in iter_cases("dts-avro"):
        for message in case.messages():
            try:
                events = FMT.decode(message)
            except DecodeError:
                continue
            for event in events:
                if not event.invalid:
                    assert event_from_json(event_to_json(event)) == event, case.id


# --------------------------------------------------------------------------- the independent reader
def _fastavro_view(value: Any) -> Any:
    """fastavro's reading, with union branch names shortened like ours."""
    if isinstance(value, tuple):
        return (value[0].rsplit(".", 1)[-1], _fastavro_view(value[1]))
    if isinstance(value, dict):
        return {k: _fastavro_view(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fastavro_view(v) for v in value]
    return value


@settings(max_examples=60)
@given(
    st_row_event("dts-avro", DTS_TYPES, column=mysql_column, position=lambda n: Position((1, n, n)))
)
def test_reader_agrees_with_fastavro(event: ChangeEvent) -> None:
    [message] = FMT.encode(event)
    ours = AvroReader(json.loads(CORPUS_SCHEMA.read_text()), NS + "Record").read(message)
    theirs = fastavro.schemaless_reader(io.BytesIO(message), SCHEMA, None, return_record_name=True)
    assert ours == _fastavro_view(theirs)


def test_encoder_tags_union_branches_explicitly() -> None:
    """fastavro alone would write a {type, value} dict as TextGeometry, the first match."""
    event = ChangeEvent(
        op=Op.INSERT, format="dts-avro", database="d", table="t", key=("j",),
        columns={"j": mysql_column(JSON), "b": mysql_column(BINARY)},
        after={"j": '{"a":1}', "b": b"\x01"}, extra={"sourceType": "MySQL"},
    )  # fmt: skip
    written = fastavro.schemaless_reader(
        io.BytesIO(FMT.encode(event)[0]), SCHEMA, None, return_record_name=True
    )
    kinds = [item[0].rsplit(".", 1)[-1] for item in written["afterImages"]]
    assert kinds == ["TextObject", "BinaryObject"]
    assert written["fields"] == [
        {"name": "j", "dataTypeNumber": 245},
        {"name": "b", "dataTypeNumber": 252},
    ]
    assert written["tags"] == {"pk_uk_info": '{"PRIMARY":["j"]}'}


# --------------------------------------------------------------------------- quirks
def test_source_timestamp_is_epoch_seconds() -> None:
    [event] = FMT.decode(write(record(sourceTimestamp=1600161894)))
    assert event.ts_ms == 1600161894000


@pytest.mark.parametrize(
    "source_position,record_id,expected",
    [
        ("72469@78", 7, (78, 72469, 7)),
        ("4@100", 1, (100, 4, 1)),  # file 100 sorts after file 99 whatever the offsets
        ("14589063118712", 3, (14589063118712, 3)),  # an Oracle SCN
        ("16/B374D848", 5, ((0x16 << 32) | 0xB374D848, 5)),  # a PostgreSQL LSN
    ],
)
def test_source_position(source_position: str, record_id: int, expected: tuple[int, ...]) -> None:
    [event] = FMT.decode(write(record(sourcePosition=source_position, id=record_id)))
    assert event.position == Position(expected)


def test_position_orders_by_file_then_offset_then_id() -> None:
    def pos(sp: str, rid: int) -> Position:
        [event] = FMT.decode(write(record(sourcePosition=sp, id=rid)))
        assert event.position is not None
        return event.position

    assert pos("99999@9", 50) < pos("4@10", 1) < pos("5@10", 0) < pos("5@10", 1)


def test_unparseable_position_gives_none() -> None:
    [event] = FMT.decode(write(record(sourcePosition="mysql-bin.000001:4")))
    assert event.position is None


@pytest.mark.parametrize(
    "name,expected",
    [
        ("db", ("db", None, None)),
        ("db.t", ("db", None, "t")),
        ("db.s.t", ("db", "s", "t")),
        ("a\\u002Eb.c\\u002Ed", ("a.b", None, "c.d")),
        ("CL_BIZ1.MIO_LOG", ("CL_BIZ1", None, "MIO_LOG")),
    ],
)
def test_object_name(name: str, expected: tuple[str | None, ...]) -> None:
    [event] = FMT.decode(write(record(objectName=name)))
    assert (event.database, event.schema, event.table) == expected


def test_object_name_with_four_parts_is_an_error() -> None:
    with pytest.raises(DecodeError, match=r"dts-avro: \$\.objectName: expected db"):
        FMT.decode(write(record(objectName="a.b.c.d")))


def test_encoder_escapes_dots_in_names() -> None:
    event = ChangeEvent(op=Op.DDL, format="dts-avro", database="a.b", table="c", ddl="x",
                        extra={"sourceType": "MySQL"})  # fmt: skip
    written = fastavro.schemaless_reader(io.BytesIO(FMT.encode(event)[0]), SCHEMA, None)
    assert written["objectName"] == "a\\u002Eb.c"


def test_key_from_pk_uk_info_and_option() -> None:
    tags = {"pk_uk_info": '{"PRIMARY":["a","b"],"uk":["c"]}'}
    [event] = FMT.decode(write(record(tags=tags)))
    assert event.key == ("a", "b")
    [event] = FMT.decode(write(record(tags={"pk_uk_info": '{"uk":["c"]}'})))
    assert event.key is None  # a unique key is not the primary key
    [event] = DtsAvro({"primary_key": "x"}).decode(write(record(tags=tags)))
    assert event.key == ("x",)


def test_timestamp_millis_field_holds_microseconds() -> None:
    event = one_column(7, value("Timestamp", timestamp=1624614713, millis=201000))
    assert event.after == {"c": dt.datetime(2021, 6, 25, 9, 51, 53, 201000, tzinfo=dt.UTC)}
    assert event.columns is not None and event.columns["c"].type == TIMESTAMPTZ
    parts = dict(year=2021, month=6, day=25, hour=17, minute=51, second=53, millis=5)
    event = one_column(12, value("DateTime", **parts))
    assert event.after == {"c": dt.datetime(2021, 6, 25, 17, 51, 53, 5)}


def test_datetime_by_column_code() -> None:
    none = dict.fromkeys(("year", "month", "day", "hour", "minute", "second", "millis"))
    date = one_column(10, value("DateTime", **{**none, "year": 2021, "month": 6, "day": 25}))
    assert date.after == {"c": dt.date(2021, 6, 25)}
    clock = {**none, "hour": 1, "minute": 2, "second": 3, "millis": 4}
    assert one_column(11, value("DateTime", **clock)).after == {"c": dt.time(1, 2, 3, 4)}
    year = one_column(13, value("DateTime", **{**none, "year": 1999}))
    assert year.after == {"c": 1999}
    assert year.columns is not None and year.columns["c"].type == INT16


def test_timezone_option_applies_to_datetime() -> None:
    parts = dict(year=2021, month=6, day=25, hour=17, minute=51, second=53, millis=0)
    msg = write(record(fields=[{"name": "c", "dataTypeNumber": 12}],
                       afterImages=[value("DateTime", **parts)]))  # fmt: skip
    [event] = DtsAvro({"timezone": "Asia/Shanghai"}).decode(msg)
    assert event.after is not None
    assert event.after["c"].utcoffset() == dt.timedelta(hours=8)


def test_timestamp_with_time_zone_keeps_zone() -> None:
    parts = dict(year=2021, month=12, day=16, hour=12, minute=31, second=49, millis=344365)
    event = one_column(1184, value("TimestampWithTimeZone", value=parts, timezone="Asia/Shanghai"))
    assert event.after is not None
    assert event.after["c"].isoformat() == "2021-12-16T12:31:49.344365+08:00"
    assert event_to_json(event).count("[Asia/Shanghai]") == 1
    event = one_column(1184, value("TimestampWithTimeZone", value=parts, timezone="Mars/Olympus"))
    assert event.invalid == ("c",)
    assert event.after == {"c": "2021-12-16 12:31:49.344365 Mars/Olympus"}


@pytest.mark.parametrize(
    "charset,raw,expected,ltype",
    [
        ("utf8mb4", "华为云".encode(), "华为云", STRING),
        ("gbk", "阿里云".encode("gbk"), "阿里云", STRING),
        ("latin1", "€".encode("cp1252"), "€", STRING),  # MySQL latin1 is cp1252
        ("AL32UTF8", b"oracle", "oracle", STRING),
        ("binary", b"\x00\xff", b"\x00\xff", BINARY),
        ("", b"\x01", b"\x01", BINARY),
    ],
)
def test_character_charsets(charset: str, raw: bytes, expected: Any, ltype: LogicalType) -> None:
    event = one_column(253, value("Character", charset=charset, value=raw))
    assert event.after == {"c": expected}
    assert event.columns is not None and event.columns["c"].type == ltype


def test_unknown_charset_keeps_bytes_as_invalid() -> None:
    event = one_column(253, value("Character", charset="klingon", value=b"qapla"))
    assert event.after == {"c": b"qapla"} and event.invalid == ("c",)


def test_decimal_exact_with_precision_and_scale() -> None:
    big = "123456789012345678901234567890.12345678"
    event = one_column(246, value("Decimal", value=big, precision=38, scale=8))
    assert event.after == {"c": Decimal(big)}
    assert event.columns is not None and str(event.columns["c"].type) == "decimal(38,8)"
    event = one_column(246, value("Decimal", value="1.5", precision=0, scale=0))
    assert event.columns is not None and event.columns["c"].type == DECIMAL


def test_integer_widening_for_unsigned_values() -> None:
    event = one_column(8, value("Integer", precision=20, value="18446744073709551615"))
    assert event.after == {"c": 2**64 - 1}
    assert event.columns is not None and event.columns["c"].type.name == "uint64"
    event = one_column(3, value("Integer", precision=10, value="4294967295"))
    assert event.columns is not None and event.columns["c"].type == INT64
    event = one_column(1, value("Integer", precision=3, value="255"))
    assert event.columns is not None and event.columns["c"].type == INT16
    event = one_column(3, value("Integer", precision=3, value="12"))
    assert event.columns is not None and event.columns["c"].type == INT32


def test_invalid_dates_are_kept_as_text() -> None:
    zero = dict(year=0, month=0, day=0, hour=0, minute=0, second=0, millis=0)
    event = one_column(12, value("DateTime", **zero))
    assert event.after == {"c": "0000-00-00 00:00:00"} and event.invalid == ("c",)
    none = dict.fromkeys(("year", "month", "day"))
    neg = one_column(11, value("DateTime", **none, hour=-838, minute=-59, second=-59, millis=0))
    assert neg.after == {"c": "-838:59:59"} and neg.invalid == ("c",)


def test_invalid_values_round_trip_through_the_encoder() -> None:
    zero = dict(year=0, month=0, day=0, hour=0, minute=0, second=0, millis=0)
    event = one_column(12, value("DateTime", **zero))
    assert FMT.decode(FMT.encode(event)[0]) == [event]


def test_none_marks_partial_and_null_is_null() -> None:
    fields = [{"name": "id", "dataTypeNumber": 8}, {"name": "v", "dataTypeNumber": 253}]
    one = value("Integer", precision=1, value="1")
    msg = write(record(
        operation="UPDATE", fields=fields,
        beforeImages=[one, (NS + "EmptyObject", "NONE")],
        afterImages=[one, (NS + "EmptyObject", "NULL")],
    ))  # fmt: skip
    [event] = FMT.decode(msg)
    assert event.before == {"id": 1} and event.after == {"id": 1, "v": None}
    assert event.partial == ("before",)


def test_update_carries_both_images() -> None:
    fields = [{"name": "id", "dataTypeNumber": 8}, {"name": "v", "dataTypeNumber": 253}]
    msg = write(record(
        operation="UPDATE", fields=fields,
        beforeImages=[value("Integer", precision=1, value="1"),
                      value("Character", charset="utf8", value=b"a")],
        afterImages=[value("Integer", precision=1, value="1"),
                     value("Character", charset="utf8", value=b"b")],
    ))  # fmt: skip
    [event] = FMT.decode(msg)
    assert event.op is Op.UPDATE and event.split is None
    assert event.before == {"id": 1, "v": "a"} and event.after == {"id": 1, "v": "b"}


def test_ddl_text_is_the_string_image() -> None:
    msg = write(record(operation="DDL", fields=None, afterImages="CREATE TABLE t (id int)",
                       tags={}))  # fmt: skip
    [event] = FMT.decode(msg)
    assert event.op is Op.DDL and event.ddl == "CREATE TABLE t (id int)"
    assert event.before is None and event.after is None and event.columns is None


@pytest.mark.parametrize("operation", sorted(PROGRESS_OPS))
def test_rowless_markers_are_heartbeats(operation: str) -> None:
    [event] = FMT.decode(write(record(operation=operation, fields=None, afterImages=None)))
    assert event.op is Op.HEARTBEAT and event.extra["operation"] == operation


@pytest.mark.parametrize(
    "operation,op",
    [
        ("BEGIN", Op.BEGIN),
        ("COMMIT", Op.COMMIT),
        ("HEARTBEAT", Op.HEARTBEAT),
        ("INIT", Op.SNAPSHOT),
    ],
)
def test_operations(operation: str, op: Op) -> None:
    [event] = FMT.decode(write(record(operation=operation, sourceTxid="42")))
    assert event.op is op and event.tx == "42"


@pytest.mark.parametrize("operation", ["COMMAND", "RDB"])
def test_data_carrying_unknown_operations_are_errors(operation: str) -> None:
    with pytest.raises(
        DecodeError, match=rf"dts-avro: \$\.operation: unsupported operation '{operation}'"
    ):
        FMT.decode(write(record(operation=operation)))


def test_born_timestamp_and_source_type_in_extra() -> None:
    [event] = FMT.decode(write(record(bornTimestamp=1600161894123)))
    assert event.extra == {"sourceType": "MySQL", "bornTimestamp": 1600161894123}


def test_non_mysql_codes_are_not_interpreted() -> None:
    msg = write(record(source={"sourceType": "Oracle", "version": "19"},
                       fields=[{"name": "id", "dataTypeNumber": 8},
                               {"name": "n", "dataTypeNumber": 2}],
                       afterImages=[value("Integer", precision=1, value="1"), None]))  # fmt: skip
    [event] = FMT.decode(msg)
    assert event.columns is not None
    assert event.columns["id"] == Column(INT64, None, 8)  # typed from the Integer value
    assert event.columns["n"].type.name == "unknown" and event.columns["n"].vendor_code == 2


def test_truncate_cannot_be_encoded() -> None:
    event = ChangeEvent(op=Op.TRUNCATE, format="dts-avro", database="d", table="t")
    with pytest.raises(EncodeError, match="dts-avro: cannot encode: truncate"):
        FMT.encode(event)


def test_encoder_floors_ts_to_seconds() -> None:
    event = ChangeEvent(op=Op.HEARTBEAT, format="dts-avro", ts_ms=1600161894999,
                        extra={"sourceType": "MySQL"})  # fmt: skip
    [back] = FMT.decode(FMT.encode(event)[0])
    assert back.ts_ms == 1600161894000


# --------------------------------------------------------------------------- structural errors
@pytest.mark.parametrize(
    "fields,path,reason",
    [
        (dict(fields=[{"name": "a", "dataTypeNumber": 8}, {"name": "a", "dataTypeNumber": 8}],
              afterImages=[None, None]), r"\$\.fields\[1\]\.name", "duplicate column 'a'"),
        (dict(afterImages="text"), r"\$\.afterImages", "expected array of values, got string"),
        (dict(afterImages=[None, None]), r"\$\.afterImages", "has 2 values for 1 fields"),
        (dict(afterImages=None), r"\$\.afterImages", "INSERT record without afterImages"),
        (dict(operation="DELETE", beforeImages=None), r"\$\.beforeImages", "without beforeImages"),
        (dict(fields="x"), r"\$\.fields", "expected array of fields"),
        (dict(id=-1), r"\$\.id", "negative record id"),
        (dict(tags={"pk_uk_info": '{"PRIMARY":"id"}'}), r"\$\.tags\.pk_uk_info\.PRIMARY",
         "expected array"),
    ],
)  # fmt: skip
def test_structural_errors(fields: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(DecodeError, match=rf"^dts-avro: {path}: .*{reason}"):
        FMT.decode(write(record(**fields)))


def _good_message() -> bytes:
    fields = [{"name": "id", "dataTypeNumber": 8}, {"name": "v", "dataTypeNumber": 253}]
    return write(record(fields=fields, afterImages=[
        value("Integer", precision=1, value="1"), value("Character", charset="utf8", value=b"abc")
    ]))  # fmt: skip


def test_truncated_message_names_the_field() -> None:
    message = _good_message()
    with pytest.raises(DecodeError, match=r"^dts-avro: \$\.afterImages\[1\]\.value: .*fit"):
        FMT.decode(message[:-3])
    for cut in range(len(message)):
        with pytest.raises(DecodeError):
            FMT.decode(message[:cut])


def test_wrong_union_index_names_the_item() -> None:
    message = bytearray(write(record(afterImages=[None])))
    # layout tail: ... afterImages union (index 2 = array) count 1, item index 0, end 0, born 0
    assert message[-5:] == b"\x04\x02\x00\x00\x00"
    message[-3] = 0x1C  # item union index 14: there are 13 branches
    with pytest.raises(DecodeError, match=r"^dts-avro: \$\.afterImages\[0\]: .*union index 14"):
        FMT.decode(bytes(message))


def test_bad_enum_index() -> None:
    insert, update = write(record(operation="INSERT")), write(record(operation="UPDATE"))
    [at] = [i for i, (a, b) in enumerate(zip(insert, update, strict=True)) if a != b]
    hostile = insert[:at] + b"\x7e" + insert[at + 1 :]  # index 63: 17 symbols
    with pytest.raises(DecodeError, match=r"^dts-avro: \$\.operation: .*enum index 63"):
        FMT.decode(hostile)


def _varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@pytest.mark.parametrize(
    "message",
    [
        b"\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f" + b"x" * 20,  # huge string length
        b"\x00\x00\x00\x01" + b"x" * 20,  # negative length
        b"\x00" * 6 + b"\x00\x00" + b"\x00\x00\x00" + b"\xfe\xff\xff\xff\x0f" + b"\x00" * 5,
        b"\xff" * 64,  # a varint that never ends
    ],
)
def test_hostile_lengths_fail_fast(message: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(DecodeError, match=r"^dts-avro: "):
        FMT.decode(message)
    assert time.perf_counter() - started < 1.0


def test_huge_block_count_is_refused() -> None:
    good = write(record(tags={}))
    # the empty tags map (0x00), then fields: union index 2, one Field "id" code 8
    marker = b"\x00\x04\x02\x04id\x10"
    assert good.count(marker) == 1
    at = good.index(marker)
    hostile = good[:at] + _varint(2**40) + good[at + 1 :]
    with pytest.raises(DecodeError, match=r"^dts-avro: \$\.tags: .*does not fit"):
        FMT.decode(hostile)
    hostile = good[:at] + _varint(-(2**40)) + _varint(3) + good[at + 1 :]  # a sized block
    with pytest.raises(DecodeError, match=r"^dts-avro: \$\.tags: .*does not fit"):
        FMT.decode(hostile)


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data: bytes) -> None:
    try:
        FMT.decode(data)
    except DecodeError as exc:
        assert exc.format_id == "dts-avro"
    assert 0.0 <= DtsAvro.sniff(data) <= 1.0


def test_mutated_messages_never_crash() -> None:
    rng = random.Random(7)
    base = _good_message()
    for _ in range(2000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            FMT.decode(bytes(data))
        except DecodeError:
            pass


def test_decode_record_accepts_plain_fastavro_dicts() -> None:
    message = write(record(
        fields=[{"name": "j", "dataTypeNumber": 245}, {"name": "d", "dataTypeNumber": 246},
                {"name": "f", "dataTypeNumber": 5}, {"name": "n", "dataTypeNumber": 253}],
        afterImages=[value("TextObject", type="JSON", value="{}"),
                     value("Decimal", value="1.50", precision=3, scale=2),
                     value("Float", value=0.5, precision=0, scale=0), (NS + "EmptyObject", "NONE")],
    ))  # fmt: skip
    plain = fastavro.schemaless_reader(io.BytesIO(message), SCHEMA, None)
    event = FMT.decode_record(plain)
    assert event.after == {"j": "{}", "d": Decimal("1.50"), "f": 0.5}
    assert event.partial == ("after",)


# --------------------------------------------------------------------------- detection
def test_sniff_accepts_every_golden_case() -> None:
    cases = list(iter_cases("dts-avro"))
    assert cases
    for case in cases:
        for message in case.messages():
            assert message is not None
            assert DtsAvro.sniff(message) >= 0.5, case.id
            assert detect(message).format == "dts-avro", case.id


def test_sniff_refuses_other_formats_and_garbage() -> None:
    messages: list[bytes] = [b"", b"{}", b"garbage", bytes(range(256)), b"\n" * 64, b"\x00" * 64]
    for case in iter_cases():
        if case.format_id != "dts-avro":
            messages.extend(m for m in case.messages() if m is not None)
    for message in messages:
        assert DtsAvro.sniff(message) < 0.5, message[:60]


def test_sniff_never_raises_on_non_bytes() -> None:
    for message in (None, 1, {"a": 1}, [1], "text"):
        assert DtsAvro.sniff(message) == 0.0


# --------------------------------------------------------------------------- packaging
def test_packaged_schema_is_the_published_one() -> None:
    import importlib.resources

    packaged = importlib.resources.files("anycdc.formats").joinpath("schemas/dts_record.avsc")
    assert packaged.read_bytes() == CORPUS_SCHEMA.read_bytes()


def test_reader_error_path_rendering() -> None:
    exc = AvroDataError("boom", "[2]")
    exc.segments.append(".afterImages")
    assert exc.path == "$.afterImages[2]"


def test_pickles() -> None:
    import pickle

    clone = pickle.loads(pickle.dumps(DtsAvro({"primary_key": "id"})))
    assert clone.decode(_good_message()) == DtsAvro({"primary_key": "id"}).decode(_good_message())
