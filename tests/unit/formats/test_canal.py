"""canal-json and dts-canal-json: round trips, every quirk of FORMATS.md section 4, the corpus.

The Flink/SeaTunnel fixtures are checked against the rows their own tests expect
(``tests/corpus/*/EXPECTED*.md``), the Paimon fixtures against the table states
Paimon's tests wait for (``tests/corpus/paimon_kafka/EXPECTED_INDEX.md``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError, OptionError
from anycdc.event import ChangeEvent, Column, Op, Position, event_from_json, event_to_json
from anycdc.formats import detect
from anycdc.formats.base import parse_json
from anycdc.formats.canal.dts import DtsCanalJson
from anycdc.formats.canal.format import CanalJson
from anycdc.formats.canal.types import column_type
from anycdc.formats.codecs.java import java_double
from anycdc.values import (
    BINARY,
    BOOLEAN,
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
    UINT64,
    LogicalType,
)
from tests.cases import FOREIGN_PREFIX
from tests.strategies import IDENT, st_row_event

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CASES = Path(__file__).resolve().parents[2] / "cases"

canal = CanalJson()
dts = DtsCanalJson()
dts_legacy = DtsCanalJson({"legacy": "true"})


def message(**fields: Any) -> bytes:
    """A Canal flat message with every field Canal writes (null where not given)."""
    base: dict[str, Any] = {
        "data": None, "database": "shop", "es": 1600000000000, "id": 7, "isDdl": False,
        "mysqlType": None, "old": None, "pkNames": None, "sql": "", "sqlType": None,
        "table": "items", "ts": 1600000000123, "type": "INSERT",
    }  # fmt: skip
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


ITEM_TYPES = {"id": "int(11)", "name": "varchar(32)", "price": "decimal(10,2)"}
ITEM_CODES = {"id": 4, "name": 12, "price": 3}


def one(events: list[ChangeEvent]) -> ChangeEvent:
    assert len(events) == 1, events
    return events[0]


# --------------------------------------------------------------------------- round trips
CANAL_TYPES = [
    INT8, INT16, INT32, INT64, UINT64, LogicalType("decimal", 10, 2),
    LogicalType("decimal", 38, 10), DECIMAL, FLOAT32, FLOAT64, BOOLEAN, STRING, BINARY,
    DATE, TIME, TIMESTAMP, TIMESTAMPTZ, JSON,
]  # fmt: skip
# DTS type names carry no precision: a decimal(p,s) cannot travel through them
DTS_TYPES = [t for t in CANAL_TYPES if not (t.name == "decimal" and t.precision)]


def vendor_column(fmt: CanalJson | DtsCanalJson) -> Callable[[LogicalType], Column]:
    """Columns as the format's own messages name them (so they survive the trip)."""

    def column(ltype: LogicalType) -> Column:
        default = fmt.default_vendor(ltype)
        assert default is not None, ltype
        return Column(ltype, default[0], default[1])

    return column


ROW_OPS = (Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT)


@settings(max_examples=150)
@given(st_row_event("canal-json", CANAL_TYPES, ops=ROW_OPS, column=vendor_column(canal)))
def test_canal_round_trip(event: ChangeEvent) -> None:
    [data] = canal.encode(event)
    assert canal.decode(data) == [event]


@settings(max_examples=150)
@given(
    st_row_event("dts-canal-json", DTS_TYPES, ops=ROW_OPS, column=vendor_column(dts)).map(
        lambda e: e.with_changes(ts_ms=e.ts_ms // 1000 * 1000)  # DTS: second precision
    ),
    st.booleans(),
)
def test_dts_round_trip(event: ChangeEvent, legacy: bool) -> None:
    fmt = dts_legacy if legacy else dts
    [data] = fmt.encode(event)
    assert fmt.decode(data) == [event]


STATEMENTS = ["ALTER TABLE t ADD c INT", "CREATE TABLE t (a int)", "DROP TABLE t", "GRANT x"]


def non_row_events(format_id: str) -> st.SearchStrategy[ChangeEvent]:
    @st.composite
    def build(draw: st.DrawFn) -> ChangeEvent:
        op = draw(st.sampled_from([Op.DDL, Op.TRUNCATE, Op.HEARTBEAT, Op.BEGIN, Op.COMMIT]))
        statement = draw(st.sampled_from(STATEMENTS))
        return ChangeEvent(
            op=op,
            format=format_id,
            database=draw(IDENT),
            table=draw(IDENT),
            ts_ms=draw(st.integers(0, 2**41)) // 1000 * 1000,
            position=Position((draw(st.integers(0, 2**62)),)),
            ddl=statement if op in (Op.DDL, Op.TRUNCATE) else None,
        )

    return build()


@given(non_row_events("canal-json"))
def test_canal_round_trip_non_row_events(event: ChangeEvent) -> None:
    assert canal.decode(canal.encode(event)[0]) == [event]


@given(non_row_events("dts-canal-json"))
def test_dts_round_trip_non_row_events(event: ChangeEvent) -> None:
    assert dts.decode(dts.encode(event)[0]) == [event]


def test_round_trip_keeps_gtid_rollback_and_oms_position() -> None:
    [event] = canal.decode(
        message(data=[{"id": "1"}], mysqlType={"id": "int"}, gtid="uuid:1-9", id=3)
    )
    assert event.extra == {"gtid": "uuid:1-9"}
    assert canal.decode(canal.encode(event)[0]) == [event]
    [rollback] = canal.decode(message(type="XAROLLBACK"))
    assert rollback.op is Op.COMMIT and rollback.extra == {"rollback": True}
    assert b'"type":"XAROLLBACK"' in canal.encode(rollback)[0]
    # OMS (no id): position (es, ts) and base64 binary survive the trip
    oms = json.loads(message(data=[{"id": 1, "b": "AAE="}], mysqlType={"id": "int", "b": "blob"}))
    del oms["id"]
    [event] = canal.decode(json.dumps(oms).encode())
    assert event.position == Position((1600000000000, 1600000000123))
    assert event.after == {"id": 1, "b": b"\x00\x01"}
    assert canal.decode(canal.encode(event)[0]) == [event]


def test_canonical_json_round_trip_of_decoded_corpus() -> None:
    for line in (
        (CASES / "canal-json" / "corpus_paimon_table_alltype.jsonl").read_bytes().split(b"\n")
    ):
        for event in canal.decode(line) if line.strip() else []:
            assert event_from_json(event_to_json(event)) == event


# --------------------------------------------------------------------------- encoder output
def test_canal_encoder_writes_open_source_canal_style() -> None:
    [event] = canal.decode(
        message(
            type="UPDATE", pkNames=["id"], mysqlType=ITEM_TYPES, sqlType=ITEM_CODES,
            data=[{"id": "1", "name": "pen", "price": "1.60"}], old=[{"price": "1.50"}],
        )
    )  # fmt: skip
    out = json.loads(canal.encode(event)[0])
    assert list(out) == [
        "data", "database", "es", "id", "isDdl", "mysqlType", "old", "pkNames", "sql",
        "sqlType", "table", "ts", "type",
    ]  # fmt: skip
    assert out["data"] == [{"id": "1", "name": "pen", "price": "1.60"}]  # every value quoted
    assert out["old"] == [{"price": "1.50"}]  # changed columns only
    assert out["mysqlType"] == ITEM_TYPES and out["sqlType"] == ITEM_CODES


def test_dts_encoder_writes_dts_layouts() -> None:
    [event] = canal.decode(
        message(
            type="UPDATE", pkNames=["id"], mysqlType=ITEM_TYPES, sqlType=ITEM_CODES,
            data=[{"id": "1", "name": "pen", "price": "1.60"}], old=[{"price": "1.50"}],
            es=1600161894771,
        )
    )  # fmt: skip
    event = event.with_changes(format="dts-canal-json")
    new = json.loads(dts.encode(event)[0])
    assert new["data"] == [{"id": "1", "name": "pen", "price": "1.60"}]
    assert new["old"] == [{"id": "1", "name": "pen", "price": "1.50"}]  # full before image
    assert new["es"] == 1600161894000  # second precision
    legacy = json.loads(dts_legacy.encode(event)[0])
    assert (legacy["old"], legacy["data"]) == (new["data"], new["old"])
    deleted = event.with_changes(op=Op.DELETE, after=None)
    new_delete = json.loads(dts.encode(deleted)[0])
    assert "old" not in new_delete and new_delete["data"][0]["price"] == "1.50"
    legacy_delete = json.loads(dts_legacy.encode(deleted)[0])
    assert "data" not in legacy_delete and next(iter(legacy_delete)) == "old"  # as seed 001
    ddl = json.loads(dts.encode(one(dts.decode(_case("dts-canal-json", "seed001_ddl.json"))))[0])
    seed = json.loads(_case("dts-canal-json", "seed001_ddl.json"))
    assert list(ddl) == list(seed)  # the same fields in the same order as seed 001
    assert ddl == {**seed, "ts": seed["es"]}  # (``ts``, the write time, is not kept)


def test_encoder_refuses_what_canal_cannot_carry() -> None:
    [event] = canal.decode(message(data=[{"id": "1"}], mysqlType={"id": "int"}))
    with pytest.raises(EncodeError, match="canal-json"):
        canal.encode(event.with_changes(op=Op.UPDATE, split="after", after=event.after))
    with pytest.raises(EncodeError, match="position"):
        canal.encode(event.with_changes(position=Position((1, 2, 3))))


@pytest.mark.parametrize(
    ("value", "text"),
    [(5.18, "5.18"), (1.0, "1.0"), (0.001, "0.001"), (1e7, "1.0E7"), (12510357.0, "1.2510357E7"),
     (1e-05, "1.0E-5"), (-2.5e-10, "-2.5E-10"), (123456.789, "123456.789"), (0.0, "0.0"),
     (float("nan"), "NaN"), (float("-inf"), "-Infinity")],
)  # fmt: skip
def test_doubles_are_written_as_java_writes_them(value: float, text: str) -> None:
    assert java_double(value) == text
    assert float(text) == value or value != value


# --------------------------------------------------------------------------- Canal semantics
def test_several_rows_give_several_events_and_old_pairs_by_index() -> None:
    events = canal.decode(
        message(
            type="UPDATE", pkNames=["id"], mysqlType=ITEM_TYPES, sqlType=ITEM_CODES,
            data=[{"id": "1", "name": "pen", "price": "1.60"},
                  {"id": "20", "name": "ink", "price": "3.00"}],
            old=[{"price": "1.50"}, {"id": "2"}],
        )
    )  # fmt: skip
    assert [(dict(e.before or {}), dict(e.after or {})) for e in events] == [
        ({"id": 1, "name": "pen", "price": Decimal("1.50")},
         {"id": 1, "name": "pen", "price": Decimal("1.60")}),
        ({"id": 2, "name": "ink", "price": Decimal("3.00")},
         {"id": 20, "name": "ink", "price": Decimal("3.00")}),
    ]  # fmt: skip


def test_explicit_null_in_old_overrides_data() -> None:
    [event] = canal.decode(
        message(type="UPDATE", data=[{"id": "1", "name": "pen"}], old=[{"name": None}],
                mysqlType={"id": "int", "name": "varchar(8)"})
    )  # fmt: skip
    assert event.before == {"id": 1, "name": None}


def test_unpaired_old_leaves_before_unknown_and_missing_old_means_unchanged() -> None:
    unpaired = canal.decode(
        message(type="UPDATE", data=[{"id": "1"}, {"id": "2"}], old=[{"id": "0"}],
                mysqlType={"id": "int"})
    )  # fmt: skip
    assert [e.before for e in unpaired] == [None, None]
    [unchanged] = canal.decode(message(type="UPDATE", data=[{"id": "1"}], mysqlType={"id": "int"}))
    assert unchanged.before == unchanged.after == {"id": 1}


def test_rows_only_in_old_are_taken_from_old() -> None:
    [event] = canal.decode(message(type="DELETE", old=[{"id": "3"}], mysqlType={"id": "int"}))
    assert event.op is Op.DELETE and event.before == {"id": 3}


@pytest.mark.parametrize(
    ("kind", "is_ddl", "op"),
    [("INIT", False, Op.SNAPSHOT), ("CREATE", True, Op.DDL), ("ALTER", True, Op.DDL),
     ("ERASE", True, Op.DDL), ("QUERY", False, Op.DDL), ("RENAME", True, Op.DDL),
     ("CINDEX", True, Op.DDL), ("DINDEX", True, Op.DDL), ("TRUNCATE", True, Op.TRUNCATE),
     ("INSERT", True, Op.DDL), ("MHEARTBEAT", False, Op.HEARTBEAT), ("GTID", False, Op.BEGIN),
     ("XACOMMIT", False, Op.COMMIT)],
)  # fmt: skip
def test_types_map_to_ops(kind: str, is_ddl: bool, op: Op) -> None:
    events = canal.decode(
        message(type=kind, isDdl=is_ddl, sql="ALTER TABLE items ADD c INT" if is_ddl else "",
                data=[{"id": "1"}] if kind == "INIT" else None, mysqlType={"id": "int"})
    )  # fmt: skip
    event = one(events)
    assert event.op is op
    if op in (Op.DDL, Op.TRUNCATE):
        assert event.ddl == "ALTER TABLE items ADD c INT" or kind == "QUERY"
        assert event.before is None and event.after is None


def test_dataarts_heartbeat_flag() -> None:
    event = one(
        canal.decode((CASES / "canal-json/corpus_huawei_dataarts_heartbeat.json").read_bytes())
    )
    assert (event.op, event.table, event.position) == (
        Op.HEARTBEAT,
        "your_heartbeat_table_name",
        Position((39,)),
    )


def test_es_is_ts_ms_and_id_is_position_gtid_is_extra() -> None:
    event = one(canal.decode(message(data=[{"id": "1"}], id=58, es=1600161894000, gtid="g:1")))
    assert (event.ts_ms, event.position, event.extra) == (
        1600161894000,
        Position((58,)),
        {"gtid": "g:1"},
    )


def test_primary_key_from_pk_names_and_option() -> None:
    raw = message(data=[{"a": "1", "b": "2"}], pkNames=["a"])
    assert one(canal.decode(raw)).key == ("a",)
    assert one(CanalJson({"primary_key": "a,b"}).decode(raw)).key == ("a", "b")
    assert one(canal.decode(message(data=[{"a": "1"}], pkNames=[]))).key is None


# --------------------------------------------------------------------------- types and values
@pytest.mark.parametrize(
    ("name", "code", "expected"),
    [("int(11)", 4, INT32), ("INTEGER", 4, INT32), ("bigint(20) unsigned", -5, UINT64),
     ("bigint(20) unsigned", 3, UINT64), ("tinyint(1)", -6, INT8), ("bit(1)", -7, BOOLEAN),
     ("bit(10)", -7, UINT64), ("decimal(10,2)", 3, LogicalType("decimal", 10, 2)),
     ("DECIMAL(8, 0) unsigned zerofill", 3, LogicalType("decimal", 8, 0)), ("REAL", 8, FLOAT64),
     ("FLOAT", 7, FLOAT32), ("POINT", -2, BINARY), ("GEOMETRY", -2, BINARY),
     ("ENUM('a','b')", 4, STRING), ("SET('a','b')", -2, STRING), ("YEAR", 12, INT16),
     ("SERIAL", -5, UINT64), ("JSON", 1111, JSON), ("TINYTEXT", -3, STRING),
     ("datetime(6)", 93, TIMESTAMP), ("mystery", 91, DATE), (None, 92, TIME)],
)  # fmt: skip
def test_types_from_mysql_type_and_sql_type(
    name: str | None, code: int, expected: LogicalType
) -> None:
    assert column_type(name, canal.code_type(code), False) == expected


def test_oms_values_are_exact() -> None:
    event = one(canal.decode(_case("canal-json", "seed003_oms_insert.json")))
    after, columns = event.after or {}, event.columns or {}
    source = _case("canal-json", "seed003_oms_insert.json").decode()
    digits = re.search(r'"col12":([0-9.E-]+)', source[source.index('"data"') :])
    assert digits is not None and str(after["col12"]) == digits.group(1)  # hundreds of digits kept
    assert after["col13"] == 10223372036854775806 and columns["col13"].type == UINT64
    assert after["col8"] == 9223372036854775806 and columns["col8"].type == INT64
    assert after["col9"] == b"hello world"  # OMS blobs are base64
    assert after["col14"] == dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC)
    assert columns["col14"].type == TIMESTAMPTZ  # epoch seconds = an instant
    assert event.position == Position((1609344671000, 1618323429026))  # no id: (es, ts)


def test_canal_values_are_parsed_exactly_per_type() -> None:
    event = one(canal.decode(_case_line("canal-json", "constructed_values.jsonl", 0)))
    after = event.after or {}
    assert after["id"] == 2**64 - 1 and after["flag"] is True and after["bits"] == 1023
    assert after["bin"] == b"\x00\xff\x80AB"  # ISO-8859-1 text back to the bytes
    assert after["dt"] == dt.datetime(2021, 6, 25, 17, 51, 53, 123456)  # zone-less: naive
    assert after["amount"] == Decimal(
        "12345678901234567890123456789012345.123456789012345678901234567890"
    )
    assert after["dbl"] == 12510357.0 and after["e"] == "2" and after["y"] == 2021
    bad = one(canal.decode(_case_line("canal-json", "constructed_values.jsonl", 1)))
    assert {"dt", "ts", "d", "t", "tiny"} <= set(bad.invalid)
    assert (bad.after or {})["dt"] == "0000-00-00 00:00:00"  # kept as the vendor's text


def test_binary_option() -> None:
    raw = message(data=[{"b": "68690a"}], mysqlType={"b": "blob"})
    assert one(CanalJson({"binary": "hex"}).decode(raw)).after == {"b": b"hi\n"}
    assert one(canal.decode(raw)).after == {"b": b"68690a"}  # id present: ISO-8859-1
    with pytest.raises(OptionError, match="binary"):
        CanalJson({"binary": "rot13"})


def test_timezone_option_makes_instants() -> None:
    raw = message(data=[{"t": "2021-06-25 17:51:53"}], mysqlType={"t": "datetime"})
    event = one(CanalJson({"timezone": "Asia/Shanghai"}).decode(raw))
    value = (event.after or {})["t"]
    assert value.utcoffset() == dt.timedelta(hours=8)
    assert (event.columns or {})["t"].type == TIMESTAMPTZ


def test_partial_and_untyped_columns() -> None:
    event = one(canal.decode(message(data=[{"id": "1", "extra": "x"}],
                                     mysqlType={"id": "int", "gone": "int"})))  # fmt: skip
    assert event.partial == ("after",)
    assert (event.columns or {})["extra"] == Column()
    assert one(canal.decode(message(data=[{"id": "1"}]))).columns is None


# --------------------------------------------------------------------------- DTS semantics
UPDATE = message(
    type="UPDATE", pkNames=["id"], mysqlType={"id": "bigint", "v": "varchar"},
    sqlType={"id": -5, "v": 12}, data=[{"id": "1", "v": "b"}], old=[{"id": "1", "v": "a"}],
)  # fmt: skip


def test_dts_update_new_and_legacy_semantics() -> None:
    new = one(dts.decode(UPDATE))
    assert (new.before, new.after) == ({"id": 1, "v": "a"}, {"id": 1, "v": "b"})
    legacy = one(dts_legacy.decode(UPDATE))
    assert (legacy.before, legacy.after) == ({"id": 1, "v": "b"}, {"id": 1, "v": "a"})


def test_dts_delete_layout_is_decided_by_the_message() -> None:
    legacy_delete = _case("dts-canal-json", "seed001_legacy_delete.json")
    new_delete = _case("dts-canal-json", "seed001_new_delete.json")
    for fmt in (dts, dts_legacy):
        assert one(fmt.decode(legacy_delete)).before == {"shipping_type": "aaa"}
        assert one(fmt.decode(new_delete)).before == {"id": 500000287, "shipping_type": None}
    assert one(dts.decode(legacy_delete)).partial == ("before",)  # the example lacks the key


def test_dts_sql_type_codes_fall_back_to_binlog_codes() -> None:
    event = one(dts.decode(_case("dts-canal-json", "constructed_sqltype_binlog_codes.json")))
    types = {name: col.type for name, col in (event.columns or {}).items()}
    assert types["id"] == INT64 and types["name"] == STRING and types["doc"] == JSON
    assert types["amount"] == DECIMAL


def test_dts_legacy_option_is_validated() -> None:
    with pytest.raises(OptionError, match="legacy"):
        DtsCanalJson({"legacy": "perhaps"})


# --------------------------------------------------------------------------- detection
def _scores(raw: bytes) -> tuple[float, float]:
    obj = parse_json("test", raw)
    return CanalJson.sniff(obj), DtsCanalJson.sniff(obj)


@pytest.mark.parametrize(
    "name",
    ["seed001_legacy_delete.json", "seed001_new_delete.json", "seed001_ddl.json",
     "constructed_new_insert.json", "constructed_legacy_insert.json"],
)  # fmt: skip
def test_dts_is_recognised_by_the_keys_it_leaves_out(name: str) -> None:
    canal_score, dts_score = _scores(_case("dts-canal-json", name))
    assert dts_score >= 0.5 > canal_score


def test_canal_messages_are_canal() -> None:
    for raw in _messages(CASES / "canal-json"):
        canal_score, dts_score = _scores(raw)
        assert canal_score >= 0.5 > dts_score, raw[:200]


def test_drs_shaped_messages_are_not_claimed() -> None:
    drs = {
        "mysqlType": {"b": "varbinary", "t": "timestamp"}, "id": 1, "es": 1, "ts": 2,
        "database": "d", "table": "t", "type": "UPDATE", "isDdl": False, "sql": "",
        "sqlType": {"b": -3, "t": 93}, "data": [{"b": "[106, 103]", "t": "1624614713.201"}],
        "old": [{"b": "[]", "t": "1624614713.201"}], "pkNames": None,
    }  # fmt: skip
    assert max(_scores(json.dumps(drs).encode())) < 0.5
    reordered = {"data": drs["data"], **{k: v for k, v in drs.items() if k != "data"}}
    assert max(_scores(json.dumps(reordered).encode())) < 0.5  # renderings alone decide
    assert max(_scores(json.dumps({**drs, "jobId": "x", "data": None}).encode())) < 0.5


def test_other_shapes_score_zero() -> None:
    for obj in [[], "x", {"type": "insert", "data": {"id": 1}}, {"op": "c", "payload": {}},
                {"type": "UPSERT", "data": []}, {"type": "INSERT"}]:  # fmt: skip
        assert CanalJson.sniff(obj) == 0.0 and DtsCanalJson.sniff(obj) == 0.0


def test_detect_names_both_formats() -> None:
    assert detect(_case("dts-canal-json", "seed001_new_delete.json")).format == "dts-canal-json"
    assert (
        detect(_case_line("canal-json", "corpus_flink_canal_data_at_7efdf0da.jsonl", 0)).format
        == "canal-json"
    )


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["data", "old", "type", "isDdl", "mysqlType", "sqlType", "pkNames",
                         "id", "es", "ts", "database", "table", "gtid", "x", "INSERT"]),
        inner, max_size=6),
    max_leaves=20,
))  # fmt: skip
def test_sniff_never_raises_and_decode_only_raises_decode_errors(obj: Any) -> None:
    for cls in (CanalJson, DtsCanalJson):
        assert 0.0 <= cls.sniff(obj) <= 1.0
    if isinstance(obj, dict):
        obj.setdefault("type", "UPDATE")
    for fmt in (canal, dts, dts_legacy):
        try:
            fmt.decode_object(obj)
        except DecodeError as exc:
            assert str(exc).startswith(f"{fmt.id}: $")


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("raw", "text"),
    [(b"[]", "canal-json: $: expected object, got array"),
     (b'{"data":[]}', "canal-json: $: missing required field 'type'"),
     (b'{"type":"UPSERT"}', "canal-json: $.type: unknown op 'UPSERT'"),
     (b'{"type":1}', "canal-json: $.type: expected string, got integer"),
     (b'{"type":"INSERT","data":{"id":"1"}}', "canal-json: $.data: expected array, got object"),
     (b'{"type":"UPDATE","data":[{}],"old":[1]}', "canal-json: $.old[0]: expected object"),
     (b'{"type":"INSERT","data":[{}],"mysqlType":{"a":1}}', "canal-json: $.mysqlType.a: expected"),
     (b'{"type":"INSERT","id":"x"}', "canal-json: $.id: expected integer, got 'x'"),
     (b'{"type":"INSERT","es":{}}', "canal-json: $.es: expected integer")],
)  # fmt: skip
def test_errors_name_format_and_path(raw: bytes, text: str) -> None:
    with pytest.raises(DecodeError) as info:
        canal.decode(raw)
    assert str(info.value).startswith(text)


def test_dts_errors_name_dts() -> None:
    with pytest.raises(DecodeError, match=r"^dts-canal-json: \$\.type: unknown op 'X'"):
        dts.decode(b'{"type":"X"}')


# --------------------------------------------------------------------------- corpus
def rows(events: Iterable[ChangeEvent], fields: tuple[str, ...]) -> list[str]:
    """Events in Flink's RowData notation: +I / -U / +U / -D."""

    def render(image: Any) -> str:
        return ",".join("null" if image.get(f) is None else str(image.get(f)) for f in fields)

    out = []
    for e in events:
        if e.op in (Op.INSERT, Op.SNAPSHOT):
            out.append(f"+I({render(e.after)})")
        elif e.op is Op.UPDATE:
            out += [f"-U({render(e.before)})", f"+U({render(e.after)})"]
        elif e.op is Op.DELETE:
            out.append(f"-D({render(e.before)})")
    return out


def flink_expected_rows() -> list[str]:
    text = (CORPUS / "flink_json" / "EXPECTED.md").read_text(encoding="utf-8")
    block = text.split("```", 2)[1]
    return [line.strip() for line in block.strip().splitlines()]


def decode_file(fmt: CanalJson, path: Path) -> list[ChangeEvent]:
    return [e for raw in _file_messages(path) for e in fmt.decode(raw)]


FLINK_FIELDS = ("id", "name", "description", "weight")


def test_flink_canal_data_rows() -> None:
    expected = flink_expected_rows()
    assert len(expected) == 26
    events = decode_file(canal, CORPUS / "flink_json" / "canal-data.at-7efdf0da.txt")
    assert rows(events, FLINK_FIELDS) == expected


def test_flink_canal_data_rows_with_null_description() -> None:
    expected = [r.replace("16oz carpenter's hammer", "null") if r[:2] in ("+I", "-U") else r
                for r in flink_expected_rows()]  # fmt: skip
    for name in ("canal-data.at-95e502cb.txt", "canal-data-with-init.txt"):
        events = decode_file(canal, CORPUS / "flink_json" / name)
        assert rows(events, FLINK_FIELDS) == expected, name
    init = decode_file(canal, CORPUS / "flink_json" / "canal-data-with-init.txt")
    assert [e.op for e in init[:9]] == [Op.SNAPSHOT] * 9


def test_flink_and_seatunnel_filter_table_rows() -> None:
    expected = [r.replace("16oz carpenter's hammer", "null") if r[:2] in ("+I", "-U") else r
                for r in flink_expected_rows()]  # fmt: skip
    for folder in ("flink_json", "seatunnel_json"):
        events = decode_file(canal, CORPUS / folder / "canal-data-filter-table.txt")
        kept = [e for e in events if (e.database, e.table) == ("mydb", "product")]
        assert rows(kept, FLINK_FIELDS) == expected, folder
        assert {e.table for e in events if e.op is Op.DDL} == {"orders", "projects"}


def apply(state: dict[Any, dict[str, Any]], events: Iterable[ChangeEvent]) -> None:
    """Upsert/delete by key, as Paimon's sink does."""
    for e in events:
        if e.op in (Op.INSERT, Op.UPDATE, Op.SNAPSHOT):
            if e.op is Op.UPDATE and e.before is not None:
                state.pop(e.before.get("_id"), None)
            state[(e.after or {}).get("_id")] = dict(e.after or {})
        elif e.op is Op.DELETE:
            state.pop((e.before or {}).get("_id"), None)


PAIMON = CORPUS / "paimon_kafka" / "canal"


def test_paimon_cdc_operations_final_state() -> None:
    state: dict[Any, dict[str, Any]] = {}
    for name in ("event-insert.txt", "event-update.txt", "event-delete.txt", "event-row.txt"):
        apply(state, decode_file(canal, PAIMON / "table" / "event" / name))
    assert sorted(state) == [2, 4, 9]
    assert state[2]["v1"] == "second" and state[9]["v4"] == b"nine.bin" and state[9]["v5"] == 9.9


def test_paimon_schema_evolution_final_state() -> None:
    state: dict[Any, dict[str, Any]] = {}
    for n in range(1, 6):
        apply(
            state, decode_file(canal, PAIMON / "table" / "schemaevolution" / f"canal-data-{n}.txt")
        )
    fields = ("pt", "_id", "v1", "v2", "v3", "v4", "v5")
    got = [[state[k].get(f) for f in fields] for k in sorted(state)]
    assert got == [
        [1, 1, "one", None, None, None, None],
        [1, 2, "second", None, None, None, None],
        [2, 3, "three", 30000000000, None, None, None],
        [2, 4, "four", None, None, b"four.bin.long", 4.00000000004],
        [1, 6, "six", 60, None, None, None],
        [2, 7, "seven", 70000000000, None, None, None],
        [2, 8, "very long string", 80000000000, None, None, None],
        [1, 9, "nine", 90000000000, Decimal("99999.999"), b"nine.bin.long", 9.00000000009],
    ]


def test_paimon_corpus_decodes_with_its_ops_tables_and_keys() -> None:
    ops = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE, "ALTER": Op.DDL}
    count = expected = 0
    for path in sorted(PAIMON.rglob("*.txt")):
        for raw in _file_messages(path):
            msg = json.loads(raw)
            events = canal.decode(raw)
            expected += len(msg["data"]) if msg["data"] else 1  # one event per row, or the DDL
            for event in events:
                assert event.op is ops[msg["type"]]
                assert (event.database, event.table) == (msg.get("database"), msg.get("table"))
                pk = msg.get("pkNames")
                assert event.key == (tuple(pk) if pk and event.op is not Op.DDL else None)
                count += 1
    assert count == expected == 127


def test_decoding_is_fast_enough_to_notice_regressions() -> None:
    """A smoke check of the hot path (the real target is measured in the report)."""
    import time

    raw = _case_line("canal-json", "corpus_flink_canal_data_at_7efdf0da.jsonl", 0)
    start = time.process_time()
    n = 0
    while n < 3000:
        n += len(canal.decode(raw))
    assert n / (time.process_time() - start) > 5000  # events/s, deliberately loose


# --------------------------------------------------------------------------- helpers
def _case(folder: str, name: str) -> bytes:
    return (CASES / folder / name).read_bytes()


def _case_line(folder: str, name: str, index: int) -> bytes:
    return [line for line in _case(folder, name).split(b"\n") if line.strip()][index]


def _file_messages(path: Path) -> Iterator[bytes]:
    for line in path.read_bytes().split(b"\n"):
        text = line.strip()
        if text and not text.startswith((b"/*", b"*")):
            yield line


def _messages(folder: Path) -> Iterator[bytes]:
    for path in sorted(folder.iterdir()):
        if path.name.endswith((".expected.jsonl", ".options.json")) or "errors" in path.name:
            continue
        if path.name.startswith(FOREIGN_PREFIX):
            continue  # another format's messages (tests/cases.py)
        if path.suffix == ".jsonl":
            yield from (line for line in path.read_bytes().split(b"\n") if line.strip())
        elif path.suffix == ".json":
            try:
                json.loads(path.read_bytes())
            except ValueError:
                continue
            yield path.read_bytes()


# --------------------------------------------------------------------------- TiCDC
def test_ticdc_open_protocol_frames_are_unknown() -> None:
    """TiCDC's open protocol frames its events in binary (version, then length + JSON):
    neither detected as a format nor decodable as Canal-JSON."""
    key, value = b'{"ts":415508878783938562,"scm":"test","tbl":"t1","t":1}', b'{"d":{}}'
    frame = struct.pack(">q", 1) + struct.pack(">q", len(key)) + key
    values = struct.pack(">q", len(value)) + value
    for message in (frame, values):
        assert detect(message).format == "unknown"
        with pytest.raises(DecodeError, match="canal-json"):
            CanalJson().decode(message)


def test_ticdc_position_is_the_commit_ts_on_both_paths() -> None:
    lines = (CASES / "canal-json" / "corpus_ticdc_consistency_checker.jsonl").read_bytes()
    first = lines.split(b"\n")[0]
    fast, slow = CanalJson().decode_fast(first), CanalJson().decode_slow(first)
    assert fast == slow and fast[0].position == Position((464043256649875456,))
    # another _tidb field: the reference decoder reads it the same way
    rowkey = first.replace(b'{"commitTs"', b'{"rowkey":"x","commitTs"')
    assert CanalJson().decode(rowkey) == slow
