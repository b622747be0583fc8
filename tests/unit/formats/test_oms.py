"""OceanBase OMS Default (oms-json) and DefaultExtendColumnType (oms-extend-json)."""

from __future__ import annotations

import datetime as dt
import json
import time
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import detect
from anycdc.formats.codecs.text import render_value
from anycdc.formats.oms.format import OmsExtendJson, OmsJson
from anycdc.formats.oms.types import light_type
from anycdc.values import LogicalType
from tests.cases import foreign_json_messages, iter_cases
from tests.strategies import GARBAGE, IDENT, UNICODE_TEXT, st_decimal, st_row, st_table

DEFAULT = OmsJson()
EXTEND = OmsExtendJson()
CORPUS = Path(__file__).resolve().parents[2] / "corpus"
SEP = "\u0001"


def meta(**fields: Any) -> dict[str, Any]:
    base = {"record_primary_key": "id", "dbType": "OB_MYSQL", "db": "t1.shop", "table_name": "t"}
    return {**base, **fields}


def message(record_type: str, prev: Any = None, post: Any = None, **fields: Any) -> str:
    return json.dumps(
        {"allMetaData": meta(**fields), "prevStruct": prev, "recordType": record_type,
         "postStruct": post}
    )  # fmt: skip


def one(fmt: OmsJson | OmsExtendJson, text: str) -> ChangeEvent:
    [event] = fmt.decode(text)
    return event


def typed(row: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    return {**row, "__light_type": {c: {"schemaType": t} for c, t in types.items()}}


# --------------------------------------------------------------------------- round trips
JSON_VALUES = st.one_of(st.none(), st.integers(-(2**70), 2**70), st_decimal(30, 6), UNICODE_TEXT)
DB_TYPES = st.sampled_from([None, "OB_MYSQL", "OB_ORACLE", "MYSQL", "ORACLE"])


@st.composite
def st_meta(draw: st.DrawFn, format_id: str) -> dict[str, Any]:
    """Event fields OMS metadata carries (timestamp has second precision)."""
    db_type = draw(DB_TYPES)
    extra: dict[str, Any] = {}
    if db_type is not None:
        extra["dbType"] = db_type
        if db_type.startswith("OB_") and draw(st.booleans()):
            extra["tenant"] = draw(IDENT)
    if draw(st.booleans()):
        extra["checkpoint"] = str(draw(st.integers(0, 2**33)))
    return {
        "format": format_id,
        "database": draw(IDENT),
        "table": draw(IDENT),
        "ts_ms": draw(st.none() | st.integers(0, 2**33).map(lambda s: s * 1000)),
        "position": draw(st.none() | st.integers(0, 2**63 - 1).map(lambda n: Position((n,)))),
        "tx": draw(st.none() | IDENT),
        "extra": extra,
    }


@st.composite
def st_default_event(draw: st.DrawFn) -> ChangeEvent:
    fields = draw(st_meta("oms-json"))
    op = draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT, Op.HEARTBEAT, Op.DDL]))
    if op is Op.HEARTBEAT:
        return ChangeEvent(op=op, **fields)
    if op is Op.DDL:
        return ChangeEvent(op=op, ddl=draw(UNICODE_TEXT), **fields)
    names = draw(st.lists(IDENT, min_size=1, max_size=6, unique=True))
    row = {name: draw(JSON_VALUES) for name in names}
    key = tuple(names[: draw(st.integers(0, min(2, len(names))))]) or None
    other = {name: draw(JSON_VALUES) for name in names}
    images = {
        Op.INSERT: {"after": row},
        Op.SNAPSHOT: {"after": row},
        Op.DELETE: {"before": row},
        Op.UPDATE: {"before": row, "after": {**other, **{k: row[k] for k in key or ()}}},
    }[op]
    return ChangeEvent(op=op, key=key, **images, **fields)


@given(st_default_event())
def test_default_round_trip(event: ChangeEvent) -> None:
    [encoded] = DEFAULT.encode(event)
    assert DEFAULT.decode(encoded) == [event]


# (logical type, schemaType) pairs the extended format writes and reads back unchanged
MYSQL_TYPES = {
    LogicalType("int8"): "TINYINT",
    LogicalType("int16"): "SMALLINT",
    LogicalType("int32"): "INT",
    LogicalType("int64"): "INT64",
    LogicalType("uint64"): "BIGINT UNSIGNED",
    LogicalType("integer"): "BIGINT",
    LogicalType("boolean"): "BOOL",
    LogicalType("decimal", 20, 6): "DECIMAL(20,6)",
    LogicalType("float32"): "FLOAT",
    LogicalType("float64"): "DOUBLE",
    LogicalType("string"): "VARCHAR",
    LogicalType("binary"): "BLOB",
    LogicalType("date"): "DATE",
    LogicalType("time"): "TIME",
    LogicalType("timestamp"): "DATETIME",
    LogicalType("timestamptz"): "TIMESTAMP",
    LogicalType("json"): "JSON",
}
ORACLE_TYPES = {
    LogicalType("int64"): "INTEGER",
    LogicalType("decimal", 20, 6): "NUMBER(20,6)",
    LogicalType("float32"): "BINARY_FLOAT",
    LogicalType("float64"): "BINARY_DOUBLE",
    LogicalType("string"): "VARCHAR2",
    LogicalType("binary"): "RAW",
    LogicalType("timestamp"): "TIMESTAMP(6)",
    LogicalType("timestamptz"): "TIMESTAMP WITH TIME ZONE",
}


@st.composite
def st_extend_event(draw: st.DrawFn, types: dict[LogicalType, str], db_type: str) -> ChangeEvent:
    table = draw(st_table(list(types), column=lambda t: Column(t, types[t])))
    fields = draw(st_meta("oms-extend-json"))
    fields["extra"] = {**fields["extra"], "dbType": db_type}
    op = draw(st.sampled_from([Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT]))
    row = draw(st_row(table))
    images = {
        Op.INSERT: {"after": row},
        Op.SNAPSHOT: {"after": row},
        Op.DELETE: {"before": row},
        Op.UPDATE: {
            "before": row,
            "after": {**draw(st_row(table)), **{k: row[k] for k in table.key}},
        },
    }[op]
    return ChangeEvent(op=op, key=table.key, columns=table.columns, **images, **fields)


@given(st_extend_event(MYSQL_TYPES, "OB_MYSQL"))
def test_extend_round_trip_mysql_tenant(event: ChangeEvent) -> None:
    [encoded] = EXTEND.encode(event)
    assert EXTEND.decode(encoded) == [event]


@given(st_extend_event(ORACLE_TYPES, "OB_ORACLE"))
def test_extend_round_trip_oracle_tenant(event: ChangeEvent) -> None:
    [encoded] = EXTEND.encode(event)
    assert EXTEND.decode(encoded) == [event]


ZONES = st.sampled_from(["Asia/Shanghai", "Europe/Paris", "America/Sao_Paulo"]).map(ZoneInfo)


@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2200, 1, 1)), ZONES)
def test_zoned_datetime_round_trip_keeps_the_zone(value: dt.datetime, zone: ZoneInfo) -> None:
    aware = value.replace(tzinfo=zone)
    event = ChangeEvent(
        op=Op.INSERT,
        format="oms-extend-json",
        table="t",
        after={"at": aware},
        columns={"at": Column(LogicalType("timestamptz"), "ZONED_DATETIME")},
    )
    [encoded] = EXTEND.encode(event)
    after = one(EXTEND, encoded.decode()).after
    assert after is not None and after["at"] == aware and after["at"].tzinfo == zone


# --------------------------------------------------------------------------- Default quirks
def test_keys_are_joined_with_u0001_and_db_holds_the_tenant() -> None:
    event = one(
        DEFAULT,
        message("INSERT", post={"int8": 3, "int16": 129}, record_primary_key=f"int8{SEP}int16",
                record_primary_value=f"3{SEP}129", db="tenant.database"),
    )  # fmt: skip
    assert event.key == ("int8", "int16")
    assert (event.database, event.extra["tenant"]) == ("database", "tenant")


def test_db_is_whole_for_non_oceanbase_sources_and_without_a_dot() -> None:
    assert one(DEFAULT, message("INSERT", post={}, dbType="MYSQL", db="my.db")).database == "my.db"
    event = one(DEFAULT, message("INSERT", post={}, db="database"))
    assert event.database == "database" and "tenant" not in event.extra


def test_empty_primary_key_means_unknown_and_the_option_wins() -> None:
    assert one(DEFAULT, message("INSERT", post={"a": 1}, record_primary_key="")).key is None
    configured = OmsJson({"primary_key": "a"})
    assert one(configured, message("INSERT", post={"a": 1})).key == ("a",)


def test_timestamp_is_epoch_seconds_and_sequence_orders_numerically() -> None:
    early = one(
        DEFAULT, message("INSERT", post={}, timestamp="1609344671", storeDataSequence=99999)
    )
    late = one(DEFAULT, message("INSERT", post={}, storeDataSequence="160934467100001"))
    assert early.ts_ms == 1609344671000
    assert early.position == Position((99999,))
    assert early.position is not None and late.position is not None
    assert early.position < late.position  # as strings "99999" > "160934467100001"


def test_checkpoint_and_transaction_ids() -> None:
    event = one(DEFAULT, message("INSERT", post={}, checkpoint="1609344671", uniqueId="u-9"))
    assert event.extra["checkpoint"] == "1609344671" and event.tx == "u-9"
    assert one(DEFAULT, message("INSERT", post={}, transId="trx")).tx == "trx"


def test_ddl_record_holds_the_statement_under_ddl() -> None:
    event = one(DEFAULT, message("DDL", post={"ddl": "ALTER TABLE t ADD c INT"}))
    assert event.op is Op.DDL and event.ddl == "ALTER TABLE t ADD c INT"
    assert event.before is None and event.after is None


def test_row_is_snapshot_and_heartbeat_has_no_row() -> None:
    assert one(DEFAULT, message("ROW", post={"id": 1})).op is Op.SNAPSHOT
    beat = one(DEFAULT, json.dumps({"allMetaData": {"timestamp": "5"}, "recordType": "HEARTBEAT"}))
    assert beat.op is Op.HEARTBEAT and beat.ts_ms == 5000 and beat.after is None
    assert one(EXTEND, json.dumps({"recordType": "HEARTBEAT"})).op is Op.HEARTBEAT


def test_default_keeps_json_types_exactly_and_drops_light_type() -> None:
    text = (
        '{"allMetaData":{},"recordType":"UPDATE",'
        '"prevStruct":{"u":10223372036854775806,"d":9.99E-308,"s":"1606233662.012345"},'
        '"postStruct":{"u":1,"d":1.2222,"s":"x","__light_type":{"u":{"schemaType":"BIGINT"}}}}'
    )
    event = one(DEFAULT, text)
    assert event.columns is None
    assert event.before == {
        "u": 10223372036854775806,
        "d": Decimal("9.99E-308"),
        "s": "1606233662.012345",
    }
    assert event.after == {"u": 1, "d": Decimal("1.2222"), "s": "x"}


# --------------------------------------------------------------------------- extended types
@pytest.mark.parametrize(
    ("schema_type", "oracle", "logical"),
    [
        ("TINYINT", False, "int8"),
        ("SMALLINT", False, "int16"),
        ("INT", False, "int32"),
        ("INT64", False, "int64"),
        ("BIGINT", False, "integer"),
        ("BIGINT UNSIGNED", False, "uint64"),
        ("TINYINT UNSIGNED", False, "int16"),
        ("YEAR", False, "int16"),
        ("BOOL", False, "boolean"),
        ("DECIMAL", False, "decimal"),
        ("NUMERIC(10,4)", False, "decimal(10,4)"),
        ("FLOAT", False, "float32"),
        ("DOUBLE", False, "float64"),
        ("VARCHAR", False, "string"),
        ("SET", False, "string"),
        ("BIT", False, "binary"),
        ("LONGBLOB", False, "binary"),
        ("DATE", False, "date"),
        ("TIME", False, "time"),
        ("DATETIME", False, "timestamp"),
        ("TIMESTAMP", False, "timestamptz"),
        ("ZONED_DATETIME", False, "timestamptz"),
        ("INTERVAL_DAY_TO_SECOND", False, "string"),
        ("JSON", False, "json"),
        ("GEOMETRY", False, "unknown"),
        ("INTEGER", True, "int64"),
        ("NUMBER(10,2)", True, "decimal(10,2)"),
        ("FLOAT", True, "decimal"),
        ("BINARY_FLOAT", True, "float32"),
        ("BINARY_DOUBLE", True, "float64"),
        ("VARCHAR2", True, "string"),
        ("CLOB", True, "string"),
        ("ROWID", True, "string"),
        ("INTERVAL YEAR TO MONTH", True, "string"),
        ("RAW", True, "binary"),
        ("BFILE", True, "binary"),
        ("DATE", True, "timestamp"),
        ("TIMESTAMP(6)", True, "timestamp"),
        ("TIMESTAMP WITH TIME ZONE", True, "timestamptz"),
    ],
)
def test_schema_type_mapping(schema_type: str, oracle: bool, logical: str) -> None:
    assert str(light_type(schema_type, oracle)[0]) == logical


def extend_row(row: dict[str, Any], types: dict[str, str], db_type: str = "OB_MYSQL") -> Any:
    event = one(EXTEND, message("INSERT", post=typed(row, types), dbType=db_type))
    assert event.columns is not None and event.after is not None
    return event


def test_oceanbase_value_rules() -> None:
    event = extend_row(
        {"b": 1, "bit": "BQ==", "big": 10223372036854775806, "dec": 1.2300e5, "d": "2020-11-25",
         "t": "00:01:02.123456789", "dt": "2020-11-25 00:01:02.012345678",
         "ts": "1606233662.012345"},
        {"b": "BOOL", "bit": "BIT", "big": "BIGINT", "dec": "DECIMAL", "d": "DATE", "t": "TIME",
         "dt": "DATETIME", "ts": "TIMESTAMP"},
    )  # fmt: skip
    after = event.after
    assert after["b"] is True
    assert after["bit"] == b"\x05"
    assert after["big"] == 10223372036854775806
    assert after["d"] == dt.date(2020, 11, 25)
    assert after["t"] == dt.time(0, 1, 2, 123456)  # nanoseconds truncated
    assert after["dt"] == dt.datetime(2020, 11, 25, 0, 1, 2, 12345)  # no zone: naive
    assert after["ts"] == dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC)
    assert str(event.columns["ts"].type) == "timestamptz"
    assert event.invalid == ()


def test_bigdecimal_keeps_scientific_notation_and_trailing_zeros() -> None:
    text = message("INSERT", post={"dec": 0, "__light_type": {"dec": {"schemaType": "DECIMAL"}}})
    after = one(EXTEND, text.replace('"dec": 0', '"dec": 1.2300E+5')).after
    assert after is not None and str(after["dec"]) == "1.2300E+5"


def test_datetime_with_zone_id_is_an_instant_in_that_zone() -> None:
    event = one(
        EXTEND,
        message("UPDATE",
                prev=typed({"at": "2020-11-25 00:01:02.012345 Asia/Shanghai"}, {"at": "DATETIME"}),
                post=typed({"at": "2020-11-26 00:00:00 UTC"}, {"at": "DATETIME"})),
    )  # fmt: skip
    assert event.columns is not None and str(event.columns["at"].type) == "timestamptz"
    assert event.before is not None and event.after is not None
    assert event.before["at"].tzinfo == ZoneInfo("Asia/Shanghai")
    assert event.after["at"] == dt.datetime(2020, 11, 26, tzinfo=dt.UTC)
    offset = extend_row({"at": "2020-11-25 00:01:02 -05:00"}, {"at": "DATETIME"})
    assert offset.after["at"].utcoffset() == dt.timedelta(hours=-5)
    naive = extend_row({"at": "2020-11-25 00:01:02"}, {"at": "DATETIME"})
    assert str(naive.columns["at"].type) == "timestamp" and naive.after["at"].tzinfo is None


def test_timezone_option_applies_to_zone_less_datetimes_only() -> None:
    fmt = OmsExtendJson({"timezone": "Asia/Shanghai"})
    row = typed(
        {"dt": "2020-11-25 00:01:02", "ts": "1606233662"}, {"dt": "DATETIME", "ts": "TIMESTAMP"}
    )
    after = one(fmt, message("INSERT", post=row)).after
    assert after is not None
    assert after["dt"] == dt.datetime(2020, 11, 25, 0, 1, 2, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert after["ts"].tzinfo == dt.UTC


def test_invalid_values_are_kept_as_sent_and_named() -> None:
    event = extend_row(
        {"d": "0000-00-00", "ts": "0000-00-00 00:00:00", "t": "838:59:59", "i": 200, "ok": 1},
        {"d": "DATE", "ts": "TIMESTAMP", "t": "TIME", "i": "TINYINT", "ok": "TINYINT"},
    )
    assert event.after == {"d": "0000-00-00", "ts": "0000-00-00 00:00:00", "t": "838:59:59",
                           "i": 200, "ok": 1}  # fmt: skip
    assert event.invalid == ("d", "ts", "t", "i")


def test_oracle_tenant_dates_are_datetimes() -> None:
    event = extend_row(
        {"D": "2020-11-25 00:01:02", "F": 1.5, "N": 12.50},
        {"D": "DATE", "F": "FLOAT", "N": "NUMBER(10,2)"},
        db_type="OB_ORACLE",
    )
    assert event.after == {"D": dt.datetime(2020, 11, 25, 0, 1, 2), "F": Decimal("1.5"),
                           "N": Decimal("12.50")}  # fmt: skip


def test_light_type_is_metadata_and_unmatched_names_are_unknown() -> None:
    event = extend_row({"col1": 3, "col2": "x"}, {"int8": "TINYINT", "col2": "VARCHAR"})
    assert "__light_type" not in event.after
    assert set(event.columns) == {"col1", "col2"}  # the type of absent `int8` is not kept
    assert (
        str(event.columns["col1"].type) == "unknown" and event.columns["col1"].vendor_type is None
    )
    assert str(event.columns["col2"].type) == "string"


def test_huge_literals_are_refused_quickly() -> None:
    started = time.monotonic()
    text = message("INSERT", post={"i": 0, "__light_type": {"i": {"schemaType": "INT"}}})
    event = one(EXTEND, text.replace('"i": 0', '"i": 1e999999'))
    assert event.invalid == ("i",)
    with pytest.raises(DecodeError, match=r"storeDataSequence: expected integer"):
        DEFAULT.decode(
            message("INSERT", post={}).replace('"t"}', '"t", "storeDataSequence": 1e999999}')
        )
    assert time.monotonic() - started < 2


# --------------------------------------------------------------------------- encoders
def test_default_encoder_layout() -> None:
    event = ChangeEvent(
        op=Op.UPDATE,
        format="oms-json",
        database="database",
        table="table_name",
        key=("int8", "int16"),
        before={"int8": 3, "int16": 129, "s": "hello world"},
        after={"int8": 3, "int16": 129, "s": "hello world 2020"},
        ts_ms=1609344671000,
        extra={"tenant": "tenant", "dbType": "OB_MYSQL"},
    )
    [encoded] = DEFAULT.encode(event)
    assert encoded.decode() == (
        '{"allMetaData":{"checkpoint":null,"record_primary_key":"int8\\u0001int16",'
        '"source_identity":null,"record_primary_value":"3\\u0001129","dbType":"OB_MYSQL",'
        '"table_name":"table_name","db":"tenant.database","timestamp":"1609344671"},'
        '"prevStruct":{"int8":3,"int16":129,"s":"hello world"},"recordType":"UPDATE",'
        '"postStruct":{"int8":3,"int16":129,"s":"hello world 2020"}}'
    )


def test_extend_encoder_renders_values_and_light_types() -> None:
    columns = {
        "b": Column(LogicalType("boolean"), "BOOL"),
        "bin": Column(LogicalType("binary"), "BLOB"),
        "t": Column(LogicalType("time"), "TIME"),
        "at": Column(LogicalType("timestamptz"), "DATETIME"),
        "ts": Column(LogicalType("timestamptz")),
        "n": Column(LogicalType("decimal", 10, 2), "decimal(10,2)"),
    }
    event = ChangeEvent(
        op=Op.INSERT,
        format="oms-extend-json",
        table="t",
        after={
            "b": False,
            "bin": b"hello world",
            "t": dt.time(0, 1, 2, 500000),
            "at": dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")),
            "ts": dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC),
            "n": Decimal("12.50"),
        },
        columns=columns,
    )
    [encoded] = EXTEND.encode(event)
    post = json.loads(encoded, parse_float=Decimal)["postStruct"]
    assert post == {
        "b": 0,
        "bin": "aGVsbG8gd29ybGQ=",
        "t": "00:01:02.5",
        "at": "2020-11-25 00:01:02.012345 Asia/Shanghai",
        "ts": "1606233662.012345",
        "n": Decimal("12.50"),
        "__light_type": {
            "b": {"schemaType": "BOOL"},
            "bin": {"schemaType": "BLOB"},
            "t": {"schemaType": "TIME"},
            "at": {"schemaType": "DATETIME"},
            "ts": {"schemaType": "TIMESTAMP"},
            "n": {"schemaType": "decimal(10,2)"},
        },
    }
    assert list(json.loads(encoded)) == ["allMetaData", "prevStruct", "recordType", "postStruct"]


def test_render_value_rules() -> None:
    assert render_value(True) == 1 and render_value(False) == 0
    assert render_value(Decimal("NaN")) == "NaN"
    assert render_value(dt.datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=dt.UTC)) == "-1.5"
    offset = dt.timezone(dt.timedelta(hours=8))
    assert (
        render_value(dt.datetime(2020, 1, 1, tzinfo=offset), "zoned")
        == "2020-01-01 00:00:00 +08:00"
    )


@pytest.mark.parametrize(
    "event",
    [
        ChangeEvent(op=Op.TRUNCATE, format="x"),
        ChangeEvent(op=Op.BEGIN, format="x"),
        ChangeEvent(op=Op.UPDATE, format="x", before={"a": 1}, split="before"),
        ChangeEvent(op=Op.UPDATE, format="x", before={"a": 1}, after={"a": 2}, partial=("before",)),
        ChangeEvent(op=Op.DELETE, format="x"),
        ChangeEvent(op=Op.INSERT, format="x"),
        ChangeEvent(op=Op.DDL, format="x"),
    ],
)
def test_encoder_refuses_what_oms_cannot_say(event: ChangeEvent) -> None:
    for fmt in (DEFAULT, EXTEND):
        with pytest.raises(EncodeError, match=f"^{fmt.id}: cannot encode"):
            fmt.encode(event)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"allMetaData":{}}', "$: missing required field 'recordType'"),
        ('{"recordType":"MERGE"}', "$.recordType: unknown op 'MERGE'"),
        ('{"recordType":"INSERT","allMetaData":[]}', "$.allMetaData: expected object, got array"),
        ('{"recordType":"INSERT","postStruct":null}',
         "$: missing 'postStruct' when 'recordType' is 'INSERT'"),
        ('{"recordType":"DELETE","prevStruct":null}',
         "$: missing 'prevStruct' when 'recordType' is 'DELETE'"),
        ('{"recordType":"DDL","postStruct":{"ddl":1}}',
         "$.postStruct.ddl: expected string, got integer"),
        ('{"recordType":"INSERT","postStruct":{},"allMetaData":{"timestamp":"x"}}',
         "$.allMetaData.timestamp: expected epoch seconds"),
        ('{"recordType":"INSERT","postStruct":{},"allMetaData":{"storeDataSequence":-1}}',
         "$.allMetaData.storeDataSequence: integer -1 out of range"),
        ('{"recordType":"INSERT","postStruct":{"a":1,"__light_type":{"a":{"schemaType":[]}}}}',
         "$.postStruct.__light_type.a.schemaType: expected string, got array"),
    ],
)  # fmt: skip
def test_errors_name_the_format_and_path(text: str, error: str) -> None:
    fmt = EXTEND if "__light_type" in text else DEFAULT
    with pytest.raises(DecodeError) as info:
        fmt.decode(text)
    assert str(info.value).startswith(f"{fmt.id}: {error}")


META_KEYS = st.sampled_from(
    ["checkpoint", "record_primary_key", "record_primary_value", "source_identity", "dbType",
     "storeDataSequence", "table_name", "db", "timestamp", "uniqueId", "transId", "ddlType"]
)  # fmt: skip
TYPE_NAMES = st.sampled_from(["INT", "DATETIME", "TIMESTAMP", "DATE", "BIT", "DECIMAL", "BIGINT"])
IMAGE = st.dictionaries(st.sampled_from(["a", "b", "ddl"]), GARBAGE, max_size=3).flatmap(
    lambda row: (
        st.just(row)
        | st.dictionaries(
            st.sampled_from(["a", "b", "c"]), st.fixed_dictionaries({"schemaType": TYPE_NAMES})
        ).map(lambda types: {**row, "__light_type": types})
    )
)


@given(
    st.fixed_dictionaries(
        {
            "recordType": st.sampled_from(
                ["INSERT", "UPDATE", "DELETE", "ROW", "DDL", "HEARTBEAT", "X"]
            )
        },
        optional={
            "allMetaData": st.dictionaries(META_KEYS, GARBAGE, max_size=12),
            "prevStruct": st.none() | IMAGE | GARBAGE,
            "postStruct": st.none() | IMAGE | GARBAGE,
        },
    )
)
def test_garbage_gives_events_or_decode_errors(obj: dict[str, Any]) -> None:
    for fmt in (DEFAULT, EXTEND):
        try:
            fmt.decode_object(obj)
        except DecodeError as exc:
            assert exc.format_id == fmt.id


# --------------------------------------------------------------------------- detection
def test_golden_messages_are_detected() -> None:
    for format_id, cls in (("oms-json", OmsJson), ("oms-extend-json", OmsExtendJson)):
        for case in iter_cases(format_id):
            for raw in case.messages():
                try:
                    parsed = json.loads(raw or b"")
                except ValueError:
                    continue
                assert cls.sniff(parsed) >= 0.5, case.id
                assert detect(raw).format == format_id, case.id


def test_messages_without_row_images_go_to_default() -> None:
    for text in (
        '{"allMetaData":{},"recordType":"HEARTBEAT","prevStruct":null,"postStruct":null}',
        '{"allMetaData":{},"recordType":"DDL","postStruct":{"ddl":"DROP TABLE t"}}',
    ):
        parsed = json.loads(text)
        assert OmsJson.sniff(parsed) > OmsExtendJson.sniff(parsed)
        assert OmsExtendJson.sniff(parsed) < 0.5
        assert detect(text).format == "oms-json"


def test_default_and_extended_rows_are_told_apart() -> None:
    plain = json.loads(message("INSERT", post={"a": 1}))
    extended = json.loads(message("INSERT", post=typed({"a": 1}, {"a": "INT"})))
    assert OmsJson.sniff(plain) >= 0.5 > OmsExtendJson.sniff(plain)
    assert OmsExtendJson.sniff(extended) >= 0.5 > OmsJson.sniff(extended)


def _other_corpus_messages() -> list[Any]:
    """Every JSON message of the corpus and of the other formats' golden cases."""
    return foreign_json_messages(("oms-json", "oms-extend-json"))


def test_other_formats_score_low() -> None:
    shareplex = {"meta": {"op": "ins", "table": "A.B"}, "data": {"a": 1}}
    for msg in [*_other_corpus_messages(), shareplex, None, [], "x", {"allMetaData": 1}]:
        assert OmsJson.sniff(msg) < 0.5, msg
        assert OmsExtendJson.sniff(msg) < 0.5, msg
