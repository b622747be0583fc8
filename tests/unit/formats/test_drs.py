"""Huawei DRS JSON / JSON-C (``anycdc.formats.canal.drs``): round trips, quirks, detection, errors."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import detect, get_format
from anycdc.formats.canal.drs import DrsJson, DrsJsonC, _DrsJsonBase
from anycdc.formats.codecs.java import java_double, plain_decimal
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
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
    UINT64,
    LogicalType,
    zone_info,
)
from tests.strategies import IDENT, st_row_event

CASES = Path(__file__).parents[2] / "cases"
CORPUS = Path(__file__).parents[2] / "corpus"
SEED_UPDATE = CASES / "drs-json" / "seed_mysql_update.json"
SEED_GAUSS = CASES / "drs-json" / "seed_gaussdb_update.json"
SEED_INIT = CASES / "drs-json" / "seed_mysql_init.json"
SEED_INIT_DDL = CASES / "drs-json" / "seed_mysql_init_ddl.json"

DRS = get_format("drs-json")
DRS_C = get_format("drs-json-c")


def seed(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def message(**fields: Any) -> dict[str, Any]:
    """A small MySQL-flavour message in DRS field order."""
    msg: dict[str, Any] = {
        "mysqlType": {"id": "int", "ts": "timestamp", "b": "varbinary"},
        "id": 9,
        "es": 1624614713000,
        "ts": 1624614713100,
        "database": "d",
        "table": "t",
        "type": "INSERT",
        "isDdl": False,
        "sql": "",
        "sqlType": {"id": 4, "ts": 93, "b": -3},
        "data": [{"id": "1", "ts": "1624614713.201", "b": "[1, 2]"}],
        "old": None,
        "pkNames": ["id"],
    }
    msg.update(fields)
    return msg


# --------------------------------------------------------------------------- round trips
MYSQL_TYPES = [
    BOOLEAN, INT8, INT16, INT32, INT64, UINT64, LogicalType("decimal", 20, 6), FLOAT32,
    FLOAT64, STRING, BINARY, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, JSON,
]  # fmt: skip
GAUSS_TYPES = [
    BOOLEAN, INT16, INT32, INT64, LogicalType("decimal", 30, 6), FLOAT32, FLOAT64, STRING,
    BINARY, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, JSON,
]  # fmt: skip
GAUSS_EXTRA = {"dbType": "GaussDB Primary/Standby"}


def mysql_column(ltype: LogicalType) -> Column:
    name = _DrsJsonBase._vendor_name("mysql", ltype)
    return Column(ltype, name, _DrsJsonBase._vendor_code("mysql", name))


def gauss_column(ltype: LogicalType) -> Column:
    name = _DrsJsonBase._vendor_name("column", ltype)
    return Column(ltype, name, _DrsJsonBase._vendor_code("column", name))


def round_trip(fmt: Any, event: ChangeEvent) -> list[ChangeEvent]:
    messages = fmt.encode(event)
    assert len(messages) == 1
    decoded: list[ChangeEvent] = fmt.decode(messages[0])
    return decoded


@settings(max_examples=150)
@given(
    st_row_event(
        "drs-json",
        MYSQL_TYPES,
        ops=(Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT),
        column=mysql_column,
        tz=dt.UTC,
    )
)
def test_round_trip_mysql_flavour(event: ChangeEvent) -> None:
    assert round_trip(DRS, event) == [event]


@settings(max_examples=100)
@given(
    st_row_event(
        "drs-json",
        GAUSS_TYPES,
        ops=(Op.INSERT, Op.UPDATE, Op.DELETE),
        column=gauss_column,
    ),
    IDENT,
)
def test_round_trip_gaussdb_flavour(event: ChangeEvent, schema: str) -> None:
    event = event.with_changes(schema=schema, extra=GAUSS_EXTRA)
    assert round_trip(DRS, event) == [event]


@settings(max_examples=100)
@given(
    st_row_event(
        "drs-json-c",
        [t for t in MYSQL_TYPES if t is not TIMESTAMPTZ],
        ops=(Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT),
        column=mysql_column,
    )
)
def test_round_trip_json_c(event: ChangeEvent) -> None:
    assert round_trip(DRS_C, event) == [event]


@pytest.mark.parametrize("fmt", [DRS, DRS_C], ids=["drs-json", "drs-json-c"])
@pytest.mark.parametrize("extra", [{}, {"jobId": "job-1"}], ids=["DDL", "INIT_DDL"])
def test_round_trip_ddl(fmt: Any, extra: dict[str, str]) -> None:
    event = ChangeEvent(
        op=Op.DDL,
        format=fmt.id,
        database="d",
        table="t",
        ddl="ALTER TABLE `t` ADD COLUMN `c` int",
        ts_ms=5,
        position=Position((7,)),
        extra=extra,
    )
    [raw] = fmt.encode(event)
    assert json.loads(raw)["type"] == ("INIT_DDL" if extra else "DDL")
    assert fmt.decode(raw) == [event]


def test_round_trip_snapshot_keeps_full_load_fields() -> None:
    [event] = DRS.decode(SEED_INIT.read_bytes())
    [raw] = DRS.encode(event)
    out = json.loads(raw)
    assert list(out)[:5] == ["jobId", "shardId", "identifier", "eventId", "mysqlType"]
    assert DRS.decode(raw) == [event]


# --------------------------------------------------------------------------- the seed, exactly
def test_seed_update_re_encodes_to_the_same_rows() -> None:
    original = seed(SEED_UPDATE)
    [event] = DRS.decode(SEED_UPDATE.read_bytes())
    [raw] = DRS.encode(event)
    again = json.loads(raw)
    assert list(again) == list(original)  # DRS field order
    for name in ("mysqlType", "sqlType", "data", "old", "pkNames", "id", "es", "table", "type"):
        assert again[name] == original[name], name


def test_seed_gaussdb_re_encodes_to_the_same_message() -> None:
    original = seed(SEED_GAUSS)
    [event] = DRS.decode(SEED_GAUSS.read_bytes())
    [raw] = DRS.encode(event)
    again = json.loads(raw)
    assert list(again) == list(original)
    assert {**again, "ts": original["ts"]} == original


def test_seed_init_ddl_re_encodes_to_the_same_message() -> None:
    original = seed(SEED_INIT_DDL)
    [raw] = DRS.encode(DRS.decode(SEED_INIT_DDL.read_bytes())[0])
    assert json.loads(raw) == original


def test_table_name_trailing_space_is_kept() -> None:
    [event] = DRS.decode(SEED_UPDATE.read_bytes())
    assert event.table == "test "  # as published; never stripped
    [event] = DRS.decode(SEED_INIT.read_bytes())
    assert event.table == "test"


def test_values_are_typed_from_strings() -> None:
    [event] = DRS.decode(SEED_UPDATE.read_bytes())
    after, before = event.after, event.before
    assert after is not None and before is not None
    raw = seed(SEED_UPDATE)["data"][0]
    assert after["c12"] == bytes(json.loads(raw["c12"]))  # "[106, 103, ...]" byte list
    assert after["c11"] == b"" and after["c2"] == b""  # "[]"
    assert after["c5"] == dt.datetime(2021, 6, 25, 9, 51, 53, 201000, tzinfo=dt.UTC)
    assert after["c4"] == dt.datetime(2021, 6, 25, 17, 51, 53)  # datetime: naive
    assert after["c7"] == 10357.0 and after["c8"] == 12510357.0
    assert after["c9"] == Decimal("9874510357") and isinstance(after["c9"], Decimal)
    assert (after["id"], before["id"]) == (104, 103)
    assert before["c13"] == "asfiajhfiaf939-0239"  # old = the full before image
    assert event.columns is not None
    assert event.columns["c5"] == Column(TIMESTAMPTZ, "timestamp", 93)
    assert event.columns["c4"] == Column(TIMESTAMP, "datetime", 94)  # DRS's own code 94
    assert event.columns["c7"] == Column(FLOAT32, "float", 6)  # typed by name, not by code 6
    assert event.position == Position((27677,)) and event.ts_ms == 1624614713000


def test_gaussdb_flavour_ignores_sql_type_codes() -> None:
    [event] = DRS.decode(SEED_GAUSS.read_bytes())
    assert event.schema == "schema01" and event.database == "database01"
    assert event.columns is not None and event.after is not None and event.before is not None
    # sqlType 8 is DOUBLE in java.sql.Types but this column is a boolean
    assert event.columns["boolean_column"] == Column(BOOLEAN, "boolean", 8)
    assert (event.after["boolean_column"], event.before["boolean_column"]) == (False, True)
    assert event.after["bytea_column"] == b"bytea_data"  # hex
    assert event.after["bit_column"] == "1"  # a bit string stays text
    assert event.after["int4range_column"] == "[11,20)"
    assert event.after["jsonb_column"] == '{"key1": "value1", "key2": "value2"}'
    assert event.after["timestamp_column"] == dt.datetime(2021, 12, 16, 12, 31, 49, 344365)
    assert event.before["timestamp_column"] == dt.datetime(2014, 7, 2, 6, 14, 0, 742000)
    assert event.key is None
    assert event.extra == {"dbType": "GaussDB Primary/Standby"}


def test_oracle_empty_database_and_date_with_time() -> None:
    [event] = DRS.decode((CASES / "drs-json" / "constructed_oracle_insert.json").read_bytes())
    assert event.database is None and event.schema == "HR"
    assert event.after is not None
    assert event.after["CREATED"] == dt.datetime(2021, 6, 25, 17, 51, 53)


def test_full_load_messages() -> None:
    [row] = DRS.decode(SEED_INIT.read_bytes())
    assert row.op is Op.SNAPSHOT and row.before is None
    assert row.extra["eventId"].startswith("mysql-bin.000065:800;")
    [ddl] = DRS.decode(SEED_INIT_DDL.read_bytes())
    assert ddl.op is Op.DDL and ddl.ddl is not None and ddl.ddl.startswith("CREATE TABLE `test`")
    assert ddl.columns is None and ddl.position == Position((0,))
    assert ddl.extra == {"jobId": "e28c0c1e-e3ab-4f6c-bbc2-69c28670deec"}


def test_several_rows_give_several_events() -> None:
    msg = message(
        type="UPDATE",
        data=[{"id": "1", "ts": None, "b": "[]"}, {"id": "2", "ts": None, "b": "[3]"}],
        old=[{"id": "1", "ts": None, "b": "[9]"}, {"id": "2", "ts": None, "b": "[8]"}],
    )
    events = DRS.decode_object(msg)
    assert [(e.before, e.after) for e in events] == [
        ({"id": 1, "ts": None, "b": b"\x09"}, {"id": 1, "ts": None, "b": b""}),
        ({"id": 2, "ts": None, "b": b"\x08"}, {"id": 2, "ts": None, "b": b"\x03"}),
    ]


def test_old_is_not_merged_with_data() -> None:
    # DRS old is a full before image; a missing column is marked, never filled from data
    msg = message(type="UPDATE", old=[{"id": "1", "b": "[7]"}])
    [event] = DRS.decode_object(msg)
    assert event.before == {"id": 1, "b": b"\x07"}
    assert event.partial == ("before",)


def test_delete_placement_differs_between_json_and_json_c() -> None:
    row = {"id": "1", "ts": None, "b": "[5]"}
    in_old = message(type="DELETE", data=None, old=[row])
    in_data = message(type="DELETE", data=[row], old=None)
    both = message(type="DELETE", data=[{**row, "id": "2"}], old=[row])
    for fmt in (DRS, DRS_C):  # either decoder takes the row from where it is
        assert [e.before for e in fmt.decode_object(in_old)] == [
            {"id": 1, "ts": None, "b": b"\x05"}
        ]
        assert [e.before for e in fmt.decode_object(in_data)] == [
            {"id": 1, "ts": None, "b": b"\x05"}
        ]
    # when both hold rows, each variant reads its own field
    assert [e.before["id"] for e in DRS.decode_object(both) if e.before] == [1]
    assert [e.before["id"] for e in DRS_C.decode_object(both) if e.before] == [2]
    [event] = DRS.decode_object(in_old)
    assert json.loads(DRS.encode(event)[0])["data"] is None
    assert json.loads(DRS.encode(event)[0])["old"] == [row]
    assert json.loads(DRS_C.encode(event)[0])["data"] == [row]
    assert json.loads(DRS_C.encode(event)[0])["old"] is None


def test_json_c_timestamps_are_text() -> None:
    msg = message(data=[{"id": "1", "ts": "2021-06-25 17:51:53", "b": "[]"}])
    [event] = DRS_C.decode_object(msg)
    assert event.after is not None and event.columns is not None
    assert event.after["ts"] == dt.datetime(2021, 6, 25, 17, 51, 53)
    assert event.columns["ts"].type == TIMESTAMP
    shanghai = get_format("drs-json-c", {"timezone": "Asia/Shanghai"})
    [event] = shanghai.decode_object(msg)
    assert event.after is not None
    assert event.after["ts"] == dt.datetime(2021, 6, 25, 9, 51, 53, tzinfo=dt.UTC)
    assert event.after["ts"].tzinfo == zone_info("Asia/Shanghai")
    [raw] = shanghai.encode(event)
    assert json.loads(raw)["data"][0]["ts"] == "2021-06-25 17:51:53"
    # the same text is not an epoch value: drs-json keeps it and names the column invalid
    [event] = DRS.decode_object(msg)
    assert event.invalid == ("ts",)


def test_json_c_writes_an_instant_as_wall_time() -> None:
    [event] = DRS.decode_object(message())
    [raw] = DRS_C.encode(event)
    assert json.loads(raw)["data"][0]["ts"] == "2021-06-25 09:51:53.201"  # UTC wall time
    [raw] = get_format("drs-json-c", {"timezone": "Asia/Shanghai"}).encode(event)
    assert json.loads(raw)["data"][0]["ts"] == "2021-06-25 17:51:53.201"


def test_invalid_values_are_kept_and_named() -> None:
    msg = message(
        mysqlType={"id": "int", "d": "datetime", "n": "int"},
        sqlType={"id": 4, "d": 94, "n": 4},
        data=[{"id": "1", "d": "0000-00-00 00:00:00", "n": "1e999999999"}],
    )
    [event] = DRS.decode_object(msg)
    assert event.after == {"id": 1, "d": "0000-00-00 00:00:00", "n": "1e999999999"}
    assert event.invalid == ("d", "n")


def test_gson_escapes_on_encode() -> None:
    msg = message(
        mysqlType={"id": "int", "s": "varchar"},
        sqlType={"id": 4, "s": 12},
        data=[{"id": "1", "s": "a<b>&c=d'e\u2028"}],
    )
    [event] = DRS.decode_object(msg)
    [raw] = DRS.encode(event)
    assert b"a\\u003cb\\u003e\\u0026c\\u003dd\\u0027e\\u2028" in raw
    assert not any(ch in raw for ch in (b"<", b">", b"&", b"=", b"'"))
    assert DRS.decode(raw) == [event]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (10357.0, "10357.0"), (12510357.0, "1.2510357E7"), (1e7, "1.0E7"), (9999999.0, "9999999.0"),
        (0.001, "0.001"), (0.0001, "1.0E-4"), (1e-5, "1.0E-5"), (100.0, "100.0"), (-1.5, "-1.5"),
        (123456789.0, "1.23456789E8"), (1e22, "1.0E22"), (0.0, "0.0"), (-0.0, "-0.0"),
        (float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
    ],
)  # fmt: skip
def test_java_double(value: float, text: str) -> None:
    assert java_double(value) == text


@given(st.floats(allow_nan=False))
def test_java_double_parses_back(value: float) -> None:
    assert float(java_double(value)) == value


def test_plain_decimal() -> None:
    assert plain_decimal(Decimal("1E+2")) == "100"
    assert plain_decimal(Decimal("1E-30")) == "0.000000000000000000000000000001"
    assert plain_decimal(Decimal("1E+999999")) == "1E+999999"  # never expanded


def test_unsupported_ops() -> None:
    truncate = ChangeEvent(op=Op.TRUNCATE, format="drs-json", database="d", table="t")
    with pytest.raises(EncodeError, match="drs-json: cannot encode"):
        DRS.encode(truncate)
    assert DRS.encode(ChangeEvent(op=Op.HEARTBEAT, format="drs-json")) == []


# --------------------------------------------------------------------------- detection
def _cases(format_id: str) -> list[bytes]:
    out = []
    for path in sorted((CASES / format_id).iterdir()):
        if path.name.endswith((".expected.jsonl", ".options.json")) or path.suffix not in (
            ".json",
            ".jsonl",
        ):
            continue
        data = path.read_bytes()
        lines = data.splitlines() if path.suffix == ".jsonl" else [data]
        out.extend(line for line in lines if line.strip())
    return out


def _parsed(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


@pytest.mark.parametrize("fmt", ["drs-json", "drs-json-c"])
def test_sniff_claims_own_cases(fmt: str) -> None:
    own, other = (DrsJson, DrsJsonC) if fmt == "drs-json" else (DrsJsonC, DrsJson)
    for raw in _cases(fmt):
        msg = _parsed(raw)
        if msg is None:
            continue
        assert own.sniff(msg) >= 0.5 and own.sniff(msg) > other.sniff(msg), raw[:80]


def test_ambiguous_message_defaults_to_drs_json() -> None:
    # INSERT without a TIMESTAMP column: one message cannot tell JSON from JSON-C
    msg = message(mysqlType={"id": "int"}, sqlType={"id": 4}, data=[{"id": "1"}])
    assert DrsJson.sniff(msg) >= 0.5
    assert DrsJsonC.sniff(msg) < 0.5 < DrsJson.sniff(msg)


@pytest.mark.parametrize(
    ("fields", "json_c"),
    [
        ({"type": "DELETE", "data": [{"id": "1"}], "old": None}, True),
        ({"type": "DELETE", "data": None, "old": [{"id": "1"}]}, False),
        ({"data": [{"id": "1", "ts": "2021-06-25 17:51:53", "b": None}]}, True),
        ({"data": [{"id": "1", "ts": "1624614713", "b": None}]}, False),
    ],
)
def test_variant_proofs(fields: dict[str, Any], json_c: bool) -> None:
    msg = message(**fields)
    assert (DrsJsonC.sniff(msg) > DrsJson.sniff(msg)) is json_c
    assert max(DrsJson.sniff(msg), DrsJsonC.sniff(msg)) >= 0.5


def test_gaussdb_flavour_is_never_json_c() -> None:
    msg = seed(SEED_GAUSS)
    msg["type"] = msg["opType"] = "DELETE"
    msg["data"], msg["old"] = msg["old"], None
    assert DrsJson.sniff(msg) >= 0.5 > DrsJsonC.sniff(msg)


# messages of other producers with the same Canal shape: DRS sniffers must not claim them
DTS_CANAL = (
    '{"data":[{"id":"500000287","shipping_type":null}],"database":"dbname","es":1600161894000,'
    '"id":58,"isDdl":false,"mysqlType":{"id":"bigint","shipping_type":"varchar"},'
    '"pkNames":["id"],"sql":"","sqlType":{"id":-5,"shipping_type":12},"table":"tablename",'
    '"ts":1600161894771,"type":"DELETE"}'
)
OMS_CANAL = (
    '{"database":"database","sqlType":{"col1":93,"col14":93,"col7":4},'
    '"data":[{"col1":"2020-11-25 00:01:02","col7":2147483646,"col14":"1606233662.012345"}],'
    '"pkNames":["col1"],"old":null,"mysqlType":{"col1":"datetime","col7":"int",'
    '"col14":"timestamp"},"type":"INSERT","table":"table","es":1606233662000,"isDdl":false,'
    '"ts":1606233662000,"sql":""}'
)


def _foreign_messages() -> list[Any]:
    out: list[Any] = [json.loads(DTS_CANAL), json.loads(OMS_CANAL)]
    out.append(
        json.loads(
            (CORPUS / "huawei_dataarts_docs" / "dataarts_heartbeat_canal_json_doc.json").read_text()
        )
    )
    for name in ("canal-data.at-7efdf0da.txt", "canal-data-with-init.txt"):
        for line in (CORPUS / "flink_json" / name).read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
    for raw in _cases("drs-mongo-json"):
        msg = _parsed(raw)
        if msg is not None:
            out.append(msg)
    return out


@pytest.mark.parametrize("cls", [DrsJson, DrsJsonC])
def test_sniff_rejects_other_canal_shaped_messages(cls: type[_DrsJsonBase]) -> None:
    for msg in _foreign_messages():
        assert cls.sniff(msg) < 0.5, str(msg)[:120]


def test_detect_names_drs_cases() -> None:
    for fmt in ("drs-json", "drs-json-c"):
        for raw in _cases(fmt):
            if _parsed(raw) is not None:
                assert detect(raw).format == fmt, raw[:80]


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"type": "UPSERT"}, "drs-json: $.type: unknown op 'UPSERT'"),
        ({"type": 5}, "drs-json: $.type: expected string, got integer"),
        ({"data": {"id": "1"}}, "drs-json: $.data: expected array, got object"),
        ({"data": ["x"]}, "drs-json: $.data[0]: expected object, got string"),
        ({"data": None}, "drs-json: $.data: expected array of rows, got null"),
        ({"mysqlType": ["id"]}, "drs-json: $.mysqlType: expected object, got array"),
        ({"mysqlType": {"id": {}}}, "drs-json: $.mysqlType.id: expected string, got object"),
        ({"sqlType": {"id": "int"}}, "drs-json: $.sqlType.id: expected integer"),
        ({"pkNames": "id"}, "drs-json: $.pkNames: expected array, got string"),
        ({"pkNames": [1]}, "drs-json: $.pkNames[0]: expected string, got integer"),
        ({"id": "1e999999999"}, "drs-json: $.id: expected integer"),
        ({"id": -1}, "drs-json: $.id: expected a non-negative serial number"),
        ({"es": "soon"}, "drs-json: $.es: expected integer"),
        ({"table": []}, "drs-json: $.table: expected string, got array"),
        (
            {"type": "UPDATE", "old": [{"id": "1"}, {"id": "2"}]},
            "drs-json: $.old: expected 1 rows like data, got 2",
        ),
        ({"type": "DELETE", "data": None, "old": None}, "drs-json: $.old: expected array of rows"),
    ],
)  # fmt: skip
def test_decode_errors_name_format_and_path(fields: dict[str, Any], text: str) -> None:
    with pytest.raises(DecodeError) as info:
        DRS.decode_object(message(**fields))
    assert str(info.value).startswith(text)


def test_missing_type_and_non_object() -> None:
    msg = message()
    del msg["type"]
    with pytest.raises(DecodeError, match=r"drs-json: \$: missing required field 'type'"):
        DRS.decode_object(msg)
    with pytest.raises(DecodeError, match=r"drs-json-c: \$: expected object, got array"):
        DRS_C.decode_object([])
    with pytest.raises(DecodeError, match=r"drs-json: \$: invalid JSON"):
        DRS.decode(b'{"type": ')


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.just("[1, 2]"),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = st.sampled_from(
    ["type", "opType", "data", "old", "mysqlType", "columnType", "sqlType", "pkNames", "id", "es",
     "database", "schema", "table", "isDdl", "sql", "dbType", "jobId"]
)  # fmt: skip


@settings(max_examples=300)
@given(
    st.dictionaries(FIELDS, JSON_VALUES, max_size=8),
    st.sampled_from(["INSERT", "UPDATE", "DELETE", "INIT", "DDL"]),
)
def test_garbage_gives_decode_errors_only(garbage: dict[str, Any], op: str) -> None:
    for base in (message(type=op), seed(SEED_GAUSS), {}):
        msg = {**base, **garbage}
        for fmt in (DRS, DRS_C):
            try:
                fmt.decode_object(msg)
            except DecodeError:
                pass
            DrsJson.sniff(msg)
            DrsJsonC.sniff(msg)


def test_shape_cache_does_not_relax_validation() -> None:
    fmt = get_format("drs-json")
    fmt.decode_object(message())  # caches the shape with sqlType id = 4
    for bad in (True, Decimal("4.0"), "4x"):
        codes = {"id": bad, "ts": 93, "b": -3}
        if bad is True:
            codes["id"] = 1
            fmt.decode_object(message(sqlType=codes))
            codes["id"] = True
        with pytest.raises(DecodeError, match=r"\$\.sqlType\.id: expected integer"):
            fmt.decode_object(message(sqlType=codes))
