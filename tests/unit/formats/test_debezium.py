"""debezium-json: round trips, every quirk of FORMATS.md section 8 (seed 004), the corpus.

The Flink/SeaTunnel fixtures are checked against the rows their own tests expect
(``tests/corpus/seatunnel_json/EXPECTED*.md``, ``tests/corpus/flink_json/EXPECTED.md``),
the Paimon fixtures against what ``tests/corpus/paimon_kafka/EXPECTED_INDEX.md`` and the
files themselves say (ops, tables, keys).
"""

from __future__ import annotations

import base64
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
from anycdc.event import TX_TABLE_EVENTS, ChangeEvent, Column, Op, Position
from anycdc.formats import detect
from anycdc.formats.codecs.mongo import ejson_document, from_ejson, to_ejson
from anycdc.formats.debezium.format import DebeziumJson
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
    UNKNOWN,
    LogicalType,
    zone_info,
)
from tests.cases import iter_cases
from tests.strategies import IDENT, st_row_event

TESTS = Path(__file__).resolve().parents[2]
CORPUS = TESTS / "corpus"
CASES = TESTS / "cases" / "debezium-json"

fmt = DebeziumJson()
schemaless = DebeziumJson({"schema": "false"})

N_DECIMAL = "org.apache.kafka.connect.data.Decimal"
N_VSD = "io.debezium.data.VariableScaleDecimal"


def one(events: list[ChangeEvent]) -> ChangeEvent:
    assert len(events) == 1, events
    return events[0]


def source(**fields: Any) -> dict[str, Any]:
    base = {
        "version": "2.7.0.Final",
        "connector": "mysql",
        "name": "srv",
        "ts_ms": 1700000000000,
        "snapshot": "false",
        "db": "shop",
        "table": "items",
        "server_id": 1,
        "gtid": None,
        "file": "mysql-bin.000003",
        "pos": 154,
        "row": 0,
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def payload(op: str = "c", before: Any = None, after: Any = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "before": before,
        "after": after,
        "source": source(),
        "op": op,
        "ts_ms": 1700000000123,
    }
    out.update(fields)
    return out


def field(ctype: str, name: str, logical: str | None = None, **params: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": ctype, "optional": True}
    if logical:
        out["name"] = logical
        out["version"] = 1
    if params:
        out["parameters"] = {k.replace("_", "."): v for k, v in params.items()}
    out["field"] = name
    return out


def envelope(fields: list[dict[str, Any]], body: dict[str, Any]) -> bytes:
    """A message with a schema part whose before/after structs have ``fields``."""
    value = {"type": "struct", "fields": fields, "optional": True, "name": "srv.shop.items.Value"}
    schema = {
        "type": "struct",
        "fields": [
            {**value, "field": "before"},
            {**value, "field": "after"},
            {"type": "struct", "fields": [], "optional": False, "field": "source"},
            {"type": "string", "optional": False, "field": "op"},
        ],
        "optional": False,
        "name": "srv.shop.items.Envelope",
    }
    return json.dumps({"schema": schema, "payload": body}).encode()


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# --------------------------------------------------------------------------- round trips
# The vendor type the decoder reports for each logical type the encoder writes by default.
VENDOR = {
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "boolean": "boolean",
    "string": "string",
    "float32": "float32",
    "float64": "float64",
    "binary": "bytes",
    "json": "io.debezium.data.Json",
    "date": "io.debezium.time.Date",
    "time": "io.debezium.time.MicroTime",
    "timestamp": "io.debezium.time.MicroTimestamp",
    "timestamptz": "io.debezium.time.ZonedTimestamp",
}
TYPES = [
    INT8,
    INT16,
    INT32,
    INT64,
    BOOLEAN,
    STRING,
    FLOAT32,
    FLOAT64,
    BINARY,
    JSON,
    DATE,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    LogicalType("decimal", 10, 2),
    LogicalType("decimal", 38, 10),
    DECIMAL,
]


def debezium_column(ltype: LogicalType) -> Column:
    if ltype.name == "decimal":
        return Column(ltype, N_DECIMAL if ltype.precision is not None else N_VSD)
    return Column(ltype, VENDOR[ltype.name])


u32, u16 = st.integers(0, 2**32 - 1), st.integers(0, 2**16 - 1)
LSN = st.tuples(u32, u32, u16)
POSITIONS = {
    "mysql": st.tuples(st.integers(0, 999_999), st.integers(0, 2**40), st.integers(0, 500)),
    "mariadb": st.tuples(st.integers(0, 999_999), st.integers(0, 2**40), st.integers(0, 500)),
    "postgresql": st.tuples(st.integers(0, 2**63 - 1)),
    "sqlserver": st.tuples(LSN, st.one_of(st.just((0, 0, 0)), LSN), st.integers(0, 20)).map(
        lambda t: (*t[0], *t[1], t[2])
    ),
    "oracle": st.tuples(st.integers(0, 2**62)),
    None: st.lists(st.integers(0, 2**62), min_size=1, max_size=4).map(tuple),  # `sequence`
}


@st.composite
def st_debezium_event(draw: st.DrawFn) -> ChangeEvent:
    event = draw(
        st_row_event(
            "debezium-json",
            TYPES,
            ops=(Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT),
            column=debezium_column,
        )
    )
    connector = draw(st.sampled_from(list(POSITIONS)))
    extra: dict[str, Any] = {} if connector is None else {"connector": connector}
    changes: dict[str, Any] = {"position": draw(st.none() | POSITIONS[connector].map(Position))}
    if connector not in ("mysql", "mariadb"):
        changes["schema"] = draw(st.none() | IDENT)
    if connector == "postgresql":
        changes["tx"] = draw(st.none() | st.integers(0, 2**40).map(str) | IDENT)
    else:
        changes["tx"] = draw(st.none() | st.text(max_size=12))
    if connector in ("mysql", "mariadb") and draw(st.booleans()):
        extra["gtid"] = "0e4d5dcd-a33b-11ea-80f1-02010a22a99e:10"
    if connector == "oracle" and draw(st.booleans()):
        extra["commit_scn"] = "2122190"
        changes["row_id"] = "AAASgjAAMAAAACnAAA"
    if draw(st.booleans()):
        extra["snapshot"] = draw(st.sampled_from(["last", "first", "incremental"]))
    return event.with_changes(extra=extra, **changes)


@given(st_debezium_event())
def test_round_trip_with_schema(event: ChangeEvent) -> None:
    [message] = fmt.encode(event)
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


CLOUDEVENT = {"id": "name:s;lsn:1", "source": "/debezium/postgresql/s", "type": "io.debezium.x"}


@given(st_debezium_event())
def test_round_trip_as_cloudevents(event: ChangeEvent) -> None:
    """An event read from a CloudEvent is written back as one (data with its schema,
    source fields as attributes); schemaless ones: the golden round trip below."""
    event = event.with_changes(extra={**event.extra, "cloudevents": CLOUDEVENT})
    [message] = fmt.encode(event)
    assert b'"specversion":"1.0"' in message
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]


@given(
    st_row_event(
        "debezium-json",
        [INT64, STRING, BOOLEAN, LogicalType("decimal", 12, 3)],
        ops=(Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT),
    ).map(lambda e: e.with_changes(columns=None, extra={"connector": "postgresql"}))
)
def test_round_trip_without_schema(event: ChangeEvent) -> None:
    """schema=false writes the payload alone; values keep their JSON types (no columns)."""
    [message] = schemaless.encode(event)
    assert b'"schema"' not in message[:12]
    assert schemaless.decode(message, key=schemaless.encode_key(event)) == [event]


def test_a_schemaless_key_column_named_payload_is_a_key_not_an_envelope() -> None:
    """A key without a schema part is its columns, even one named like the envelope's
    ``payload`` (hypothesis found a key ``{"payload": 0}`` read as an envelope)."""
    event = ChangeEvent(
        op=Op.INSERT, format="debezium-json", database="a", table="a", key=("payload",),
        after={"payload": 0, "a": None}, ts_ms=0, position=Position((1,)),
        extra={"connector": "postgresql"},
    )  # fmt: skip
    key = schemaless.encode_key(event)
    assert key == b'{"payload":0}'
    [message] = schemaless.encode(event)
    assert schemaless.decode(message, key=key) == [event]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=10)
    | st.decimals(allow_nan=False, allow_infinity=False, places=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(IDENT, inner, max_size=3),
    max_leaves=8,
)
HEX24 = st.text(alphabet="0123456789abcdef", min_size=24, max_size=24)
INT64_RANGE = st.integers(-(2**63), 2**63 - 1)
# documents in Extended JSON as the connector writes them, in every json.serialization.mode
EJSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**31), 2**31 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=10)
    | INT64_RANGE.map(lambda n: {"$numberLong": str(n)})
    | st.integers(-(2**31), 2**31 - 1).map(lambda n: {"$numberInt": str(n)})
    | st.floats(allow_nan=False).map(
        lambda x: {"$numberDouble": repr(x).replace("inf", "Infinity")}
    )
    | st.decimals(allow_nan=False, allow_infinity=False, places=3).map(
        lambda d: {"$numberDecimal": str(d)}
    )
    | st.integers(-(2**45), 2**45).map(lambda ms: {"$date": ms})
    | st.integers(0, 2**45).map(lambda ms: {"$date": {"$numberLong": str(ms)}})
    | HEX24.map(lambda h: {"$oid": h})
    | st.binary(max_size=6).map(
        lambda b: {"$binary": {"base64": base64.b64encode(b).decode(), "subType": "00"}}
    )
    | st.binary(max_size=6).map(lambda b: {"$binary": base64.b64encode(b).decode(), "$type": "00"})
    | st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)).map(
        lambda ti: {"$timestamp": {"t": ti[0], "i": ti[1]}}
    )
)
EJSON_VALUES = st.recursive(
    EJSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(IDENT, inner, max_size=3),
    max_leaves=8,
)
MONGO_ID = (
    st.integers(-(2**31), 2**31 - 1)
    | INT64_RANGE.map(lambda n: {"$numberLong": str(n)})
    | HEX24.map(lambda h: {"$oid": h})
)


@st.composite
def st_mongo_event(draw: st.DrawFn) -> ChangeEvent:
    """A MongoDB event as the decoder builds it: documents typed by ejson_document."""
    doc_id = draw(MONGO_ID)
    doc = {"_id": doc_id, **draw(st.dictionaries(IDENT, EJSON_VALUES, max_size=4))}
    kind = draw(st.sampled_from(["insert", "snapshot", "delete", "update", "patch"]))
    fields: dict[str, Any] = {"before": None, "after": None, "partial": (), "patch": None}
    image, columns = ejson_document(doc)
    if kind in ("insert", "snapshot"):
        fields["after"] = image
    elif kind == "delete":
        fields["before"] = image
    elif kind == "update":
        changed = {**doc, **draw(st.dictionaries(IDENT, EJSON_VALUES, max_size=2))}
        fields["after"], after_columns = ejson_document(changed)
        fields["before"] = draw(st.none() | st.just(image))
        columns = {**(columns if fields["before"] else {}), **after_columns}
    else:
        updated = draw(st.dictionaries(IDENT, EJSON_VALUES, min_size=1, max_size=3))
        patch: dict[str, Any] = {"$set": to_ejson(from_ejson(updated))}
        removed = draw(st.lists(IDENT, max_size=2, unique=True))
        if removed:
            patch["$unset"] = removed
        id_image, columns = ejson_document({"_id": doc_id})
        fields.update(after=id_image, partial=("after",), patch=patch)
    ops = {"insert": Op.INSERT, "snapshot": Op.SNAPSHOT, "delete": Op.DELETE}
    seconds = draw(st.integers(0, 2**32))
    return ChangeEvent(
        op=ops.get(kind, Op.UPDATE),
        format="debezium-json",
        database=draw(IDENT),
        table=draw(IDENT),
        key=("_id",),
        columns=columns,
        ts_ms=draw(st.just(seconds * 1000) | st.integers(0, 2**41)),
        position=Position((seconds, draw(st.integers(0, 2**31)))),
        extra={"connector": "mongodb"},
        **fields,
    )


@given(st_mongo_event())
def test_round_trip_mongodb(event: ChangeEvent) -> None:
    for codec in (fmt, schemaless):
        [message] = codec.encode(event)
        assert codec.decode(message, key=codec.encode_key(event)) == [event]


NON_ROW_EVENTS = [
    ChangeEvent(
        op=Op.TRUNCATE,
        format="debezium-json",
        database="shop",
        schema="public",
        table="items",
        ts_ms=5,
        position=Position((99,)),
        tx="7",
        extra={"connector": "postgresql"},
    ),
    ChangeEvent(
        op=Op.DDL,
        format="debezium-json",
        database="shop",
        table="items",
        ddl="ALTER TABLE items ADD note varchar(20)",
        ts_ms=5,
        position=Position((3, 9, 0)),
        extra={"connector": "mysql"},
    ),
    ChangeEvent(
        op=Op.DDL,
        format="debezium-json",
        database="shop",
        table="items",
        key=("id",),
        columns={
            "id": Column(INT32, "INT", 4),
            "price": Column(LogicalType("decimal", 10, 2), "DECIMAL", 3),
        },
        ddl="CREATE TABLE items (id int primary key, price decimal(10,2))",
        ts_ms=5,
        position=Position((3, 9, 0)),
        extra={"connector": "mysql", "table_change": "CREATE"},
    ),
    ChangeEvent(op=Op.BEGIN, format="debezium-json", tx="571:53195829", ts_ms=1486500577125),
    ChangeEvent(
        op=Op.COMMIT,
        format="debezium-json",
        tx="571:53195832",
        ts_ms=1486500577691,
        extra={"event_count": 2},
    ),
    ChangeEvent(op=Op.HEARTBEAT, format="debezium-json", ts_ms=1596001099434),
    ChangeEvent(
        op=Op.HEARTBEAT,
        format="debezium-json",
        database="postgres",
        ts_ms=9,
        position=Position((46523128,)),
        tx="556",
        extra={"connector": "postgresql", "message": {"prefix": "foo", "content": "Ymfy"}},
    ),
    ChangeEvent(
        op=Op.COMMIT,
        format="debezium-json",
        tx="571:53195833",
        ts_ms=1486500577692,
        extra={"event_count": 3, TX_TABLE_EVENTS: {"s1.a": 1, "s2.a": 2}},
    ),
]


@pytest.mark.parametrize("event", NON_ROW_EVENTS, ids=lambda e: e.op.value)
def test_round_trip_other_events(event: ChangeEvent) -> None:
    for codec in (fmt, schemaless):
        [message] = codec.encode(event)
        assert codec.decode(message) == [event]


def golden_events() -> list[ChangeEvent]:
    events = []
    for case in iter_cases("debezium-json"):
        for message in case.messages():
            try:
                events.extend(DebeziumJson(case.options).decode(message))
            except DecodeError:
                continue
    return events


@pytest.mark.parametrize("event", golden_events(), ids=lambda e: f"{e.op.value}-{e.table}")
def test_every_decoded_golden_event_round_trips(event: ChangeEvent) -> None:
    """Whatever the decoder produced from real messages, the encoder writes back exactly."""
    [message] = fmt.encode(event)
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]
    if event.columns is None or event.op is Op.DDL:
        [message] = schemaless.encode(event)
        assert schemaless.decode(message, key=schemaless.encode_key(event)) == [event]


# --------------------------------------------------------------------------- the seed (004)
SEED = CASES / "seed_sqlserver_create.json"


def test_seed_create_event() -> None:
    event = one(fmt.decode(SEED.read_bytes(), key=b'{"id":1005}'))
    assert (event.op, event.qualified_table, event.key) == (
        Op.INSERT,
        "testDB.dbo.customers",
        ("id",),
    )
    assert event.after == {
        "id": 1005,
        "first_name": "john",
        "last_name": "doe",
        "email": "john.doe@example.org",
    }
    assert event.columns is not None and event.columns["id"] == Column(INT32, "int32")
    assert (
        event.ts_ms == 1559729468470
    )  # source.ts_ms (the change), not payload.ts_ms (the connector)


def test_sqlserver_position_is_commit_lsn_change_lsn_serial_as_integers() -> None:
    event = one(fmt.decode(SEED.read_bytes()))
    # commit_lsn 00000027:00000758:0005, change_lsn 00000027:00000758:0003, event_serial_no "1"
    assert event.position == Position((0x27, 0x758, 0x5, 0x27, 0x758, 0x3, 1))


def test_event_serial_no_string_quirk() -> None:
    """The seed's payload sends "event_serial_no": "1" though the schema says int64."""
    as_text = one(
        fmt.decode(
            dumps(
                payload(
                    after={"id": 1},
                    source=source(
                        connector="sqlserver",
                        file=...,
                        pos=...,
                        row=...,
                        change_lsn="00000027:00000758:0003",
                        commit_lsn="00000027:00000758:0005",
                        event_serial_no="2",
                    ),
                )
            )
        )
    )
    assert as_text.position is not None and as_text.position.parts[-1] == 2


def test_sqlserver_primary_key_update_is_delete_then_insert_with_same_lsns() -> None:
    messages = (CASES / "seed_sqlserver_pk_update.jsonl").read_bytes().splitlines()
    delete, tombstone, insert = messages
    [d] = fmt.decode(delete)
    assert fmt.decode(None if tombstone == b"null" else tombstone) == []
    [i] = fmt.decode(insert)
    assert (d.op, i.op) == (Op.DELETE, Op.INSERT)
    assert d.position is not None and i.position is not None
    assert d.position.parts[:6] == i.position.parts[:6]  # same commit and change LSN
    assert (d.position.parts[6], i.position.parts[6]) == (1, 2)
    assert d.position < i.position


def test_sqlserver_lsn_compares_numerically_not_as_text() -> None:
    def at(commit: str) -> Position | None:
        message = payload(
            after={"id": 1},
            source=source(
                connector="sqlserver",
                file=...,
                pos=...,
                row=...,
                commit_lsn=commit,
                change_lsn=commit,
                event_serial_no=1,
            ),
        )
        return one(fmt.decode(dumps(message))).position

    low, high = at("00000025:00000d98:0002"), at("00000025:00000d98:00a2")
    assert low is not None and high is not None and low < high  # 0x02 < 0xa2
    assert at("00") is None  # not an LSN: no position rather than a guess


def test_snapshot_ddl_without_change_lsn_counts_as_zero() -> None:
    event = one(fmt.decode((CASES / "docs_repaired_sqlserver_ddl_L668.json").read_bytes()))
    assert event.position == Position((0x25, 0xD98, 0xA2, 0, 0, 0, 0))
    assert event.op is Op.DDL and event.ddl is None and event.key == ("id",)
    assert event.columns is not None and event.columns["id"] == Column(INT32, "int identity", 4)


# --------------------------------------------------------------------------- positions
def test_mysql_position_is_binlog_file_number_pos_row() -> None:
    def at(binlog: str, pos: int, row: int = 0) -> Position | None:
        return one(
            fmt.decode(
                dumps(payload(after={"id": 1}, source=source(file=binlog, pos=pos, row=row)))
            )
        ).position

    assert at("mysql-bin.000003", 154, 2) == Position((3, 154, 2))
    assert at("mysql-bin.000009", 99999) < at("mysql-bin.000010", 4)  # type: ignore[operator]
    assert at("{context}-bin.000003", 570) == Position((3, 570, 0))
    assert at("", 0) is None  # SeaTunnel/Paimon fixtures: no binlog file


def test_postgres_position_is_lsn_and_negative_lsn_gives_none() -> None:
    pg = source(
        connector="postgresql",
        file=...,
        pos=...,
        row=...,
        server_id=...,
        gtid=...,
        lsn=24023128,
        txId=555,
        schema="public",
    )
    event = one(fmt.decode(dumps(payload(after={"id": 1}, source=pg))))
    assert (event.position, event.tx, event.schema) == (Position((24023128,)), "555", "public")
    seatunnel = one(
        fmt.decode((CASES / "corpus_seatunnel_postgresql_all_types.jsonl").read_bytes())
    )
    assert seatunnel.position is None  # "lsn": -9223372036854776000


def test_oracle_position_is_scn_and_commit_scn_is_kept() -> None:
    event = one(fmt.decode((CASES / "docs_repaired_oracle_truncate_L1956.json").read_bytes()))
    assert event.op is Op.TRUNCATE and event.position == Position((13234397,))
    assert event.extra["commit_scn"] == "13271102" and event.tx == "02000a0037030000"


def test_mongodb_position_is_seconds_and_ord() -> None:
    event = one(fmt.decode((CASES / "docs_repaired_mongodb_delete_L1103.json").read_bytes()))
    assert event.position == Position((1558965508, 6))


def test_generic_sequence_position() -> None:
    event = one(
        fmt.decode(
            dumps(
                payload(
                    after={"id": 1}, source={"db": "d", "table": "t", "sequence": '["12","345"]'}
                )
            )
        )
    )
    assert event.position == Position((12, 345))


# --------------------------------------------------------------------------- types
def decode_typed(
    fields: list[dict[str, Any]], after: dict[str, Any], **options: str
) -> ChangeEvent:
    codec = DebeziumJson(options) if options else fmt
    return one(codec.decode(envelope(fields, payload(after=after))))


def unscaled_base64(unscaled: int) -> str:
    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


@pytest.mark.parametrize(
    "unscaled,scale,expected",
    [
        (1250, 2, "12.50"),
        (-1250, 2, "-12.50"),
        (-1, 2, "-0.01"),
        (0, 3, "0.000"),
        (10**37 + 7, 10, "1000000000000000000000000000.0000000007"),
        (127, 0, "127"),
        (128, 0, "128"),
    ],
)
def test_connect_decimal_is_base64_twos_complement_with_scale(
    unscaled: int, scale: int, expected: str
) -> None:
    fields = [field("bytes", "d", N_DECIMAL, scale=str(scale), connect_decimal_precision="38")]
    event = decode_typed(fields, {"d": unscaled_base64(unscaled)})
    assert event.after is not None and str(event.after["d"]) == expected
    assert event.columns is not None and event.columns["d"].type == LogicalType(
        "decimal", 38, scale
    )


def test_connect_decimal_bytes_from_the_docs() -> None:
    """b'\\x01\\x86\\xa0' = 100000 unscaled; with scale 2 it is 1000.00."""
    fields = [field("bytes", "d", N_DECIMAL, scale="2")]
    event = decode_typed(fields, {"d": base64.b64encode(b"\x01\x86\xa0").decode()})
    assert event.after is not None and event.after["d"] == Decimal("1000.00")
    assert event.columns is not None and event.columns["d"].type == DECIMAL  # no precision given


def test_numeric_decimal_format_stays_exact() -> None:
    """decimal.format=NUMERIC (Paimon's all-types fixture): a JSON number, never a float."""
    fields = [field("bytes", "d", N_DECIMAL, scale="3", connect_decimal_precision="40")]
    event = one(
        fmt.decode(
            envelope(fields, payload(after={"d": 0})).replace(
                b'"d": 0', b'"d": 123456789876543212345678987654321.110'
            )
        )
    )
    assert (
        event.after is not None and str(event.after["d"]) == "123456789876543212345678987654321.110"
    )


def test_variable_scale_decimal() -> None:
    fields = [
        {
            "type": "struct",
            "optional": True,
            "name": N_VSD,
            "field": "v",
            "fields": [field("int32", "scale"), field("bytes", "value")],
        }
    ]
    event = decode_typed(fields, {"v": {"scale": 3, "value": unscaled_base64(-123456)}})
    assert event.after is not None and event.after["v"] == Decimal("-123.456")
    assert event.columns is not None and event.columns["v"] == Column(DECIMAL, N_VSD)


TEMPORAL = [
    # (connect type, logical name, raw, expected) — values from SeaTunnel's EXPECTED.md
    ("int32", "io.debezium.time.Date", 20073, dt.date(2024, 12, 16)),
    ("int32", "org.apache.kafka.connect.data.Date", 20073, dt.date(2024, 12, 16)),
    ("int32", "io.debezium.time.Time", 75724000, dt.time(21, 2, 4)),
    ("int32", "org.apache.kafka.connect.data.Time", 60000, dt.time(0, 1)),
    ("int64", "io.debezium.time.MicroTime", 56033000000, dt.time(15, 33, 53)),
    ("int64", "io.debezium.time.NanoTime", 75723000000000, dt.time(21, 2, 3)),
    ("int64", "io.debezium.time.Timestamp", 1734363225000, dt.datetime(2024, 12, 16, 15, 33, 45)),
    (
        "int64",
        "org.apache.kafka.connect.data.Timestamp",
        1734382928000,
        dt.datetime(2024, 12, 16, 21, 2, 8),
    ),
    (
        "int64",
        "io.debezium.time.MicroTimestamp",
        1734449014000000,
        dt.datetime(2024, 12, 17, 15, 23, 34),
    ),
    (
        "int64",
        "io.debezium.time.NanoTimestamp",
        1734382927000000001,
        dt.datetime(2024, 12, 16, 21, 2, 7),
    ),
    (
        "string",
        "io.debezium.time.ZonedTimestamp",
        "2024-12-17T15:23:38.79Z",
        dt.datetime(2024, 12, 17, 15, 23, 38, 790000, tzinfo=dt.UTC),
    ),
    (
        "string",
        "io.debezium.time.ZonedTimestamp",
        "2024-12-17T15:23:38.123456789+08:00",
        dt.datetime(2024, 12, 17, 15, 23, 38, 123456, tzinfo=dt.timezone(dt.timedelta(hours=8))),
    ),
    (
        "string",
        "io.debezium.time.ZonedTime",
        "09:00:00+08:00",
        dt.time(9, tzinfo=dt.timezone(dt.timedelta(hours=8))),
    ),
    ("int32", "io.debezium.time.Year", 2001, 2001),
]


@pytest.mark.parametrize(
    "ctype,name,raw,expected", TEMPORAL, ids=[t[1].rsplit(".", 1)[1] + "-" + t[0] for t in TEMPORAL]
)
def test_temporal_logical_types(ctype: str, name: str, raw: Any, expected: Any) -> None:
    event = decode_typed([field(ctype, "v", name)], {"v": raw})
    assert event.after is not None and event.after["v"] == expected
    assert type(event.after["v"]) is type(expected) and not event.invalid
    if isinstance(expected, dt.datetime) and "Zoned" not in name:
        assert expected.tzinfo is None and event.after["v"].tzinfo is None  # wall clock, no zone


def test_timezone_option_places_zone_less_timestamps() -> None:
    fields = [
        field("int64", "v", "io.debezium.time.Timestamp"),
        field("string", "z", "io.debezium.time.ZonedTimestamp"),
    ]
    event = decode_typed(
        fields, {"v": 1734363225000, "z": "2024-12-16T15:33:45Z"}, timezone="Asia/Shanghai"
    )
    assert event.after is not None
    assert event.after["v"] == dt.datetime(
        2024, 12, 16, 15, 33, 45, tzinfo=zone_info("Asia/Shanghai")
    )
    assert event.after["z"].utcoffset() == dt.timedelta(0)  # an instant keeps its own offset


@pytest.mark.parametrize(
    "ctype,name,raw,ltype,expected",
    [
        ("string", "io.debezium.data.Json", '{"a": 1}', JSON, '{"a": 1}'),
        ("string", "io.debezium.data.Enum", "value1", STRING, "value1"),
        ("string", "io.debezium.data.EnumSet", "a,b", STRING, "a,b"),
        ("string", "io.debezium.data.Uuid", "4b0e...", STRING, "4b0e..."),
        ("bytes", "io.debezium.data.Bits", "xwcAAAAAAAA=", BINARY, b"\xc7\x07" + bytes(6)),
        ("bytes", None, "YQ==", BINARY, b"a"),
        ("int8", None, -128, INT8, -128),
        ("int16", None, 32767, INT16, 32767),
        ("int64", None, 2**63 - 1, INT64, 2**63 - 1),
        ("float32", None, 1.5, FLOAT32, 1.5),
        ("double", None, 3.140000104904175, FLOAT64, 3.140000104904175),
        ("boolean", None, True, BOOLEAN, True),
    ],
)
def test_other_types(
    ctype: str, name: str | None, raw: Any, ltype: LogicalType, expected: Any
) -> None:
    event = decode_typed([field(ctype, "v", name)], {"v": raw})
    assert event.after is not None and event.after["v"] == expected
    assert event.columns is not None and event.columns["v"].type == ltype
    assert event.columns["v"].vendor_type == (name or ctype)


def test_structs_arrays_and_geometries_keep_their_json_value() -> None:
    point = {
        "type": "struct",
        "optional": True,
        "name": "io.debezium.data.geometry.Point",
        "field": "p",
        "fields": [field("double", "x"), field("double", "y"), field("bytes", "wkb")],
    }
    arr = {"type": "array", "items": {"type": "string"}, "optional": True, "field": "a"}
    event = decode_typed([point, arr], {"p": {"x": 1.0, "y": 2.0, "wkb": "AQ=="}, "a": ["x", "y"]})
    assert event.after == {
        "p": {"x": Decimal("1.0"), "y": Decimal("2.0"), "wkb": "AQ=="},
        "a": ["x", "y"],
    }
    assert event.columns is not None
    assert event.columns["p"] == Column(UNKNOWN, "io.debezium.data.geometry.Point")
    assert event.columns["a"] == Column(UNKNOWN, "array")


@pytest.mark.parametrize(
    "ctype,name,raw",
    [
        ("int32", None, 2**31),
        ("int32", None, "abc"),
        ("bytes", N_DECIMAL, "not base64!"),
        ("int64", "io.debezium.time.MicroTime", 86_400_000_000),
        ("int64", "io.debezium.time.MicroTime", -1),
        ("string", None, 12),
        ("boolean", None, "maybe"),
        ("string", "io.debezium.time.ZonedTimestamp", "2024-12-16T15:33:45"),
    ],
)
def test_invalid_values_are_kept_as_sent_and_named(ctype: str, name: str | None, raw: Any) -> None:
    event = decode_typed([field(ctype, "v", name), field("int32", "id")], {"v": raw, "id": 1})
    assert event.after == {"v": raw, "id": 1} and event.invalid == ("v",)


def test_schemaless_values_keep_json_types() -> None:
    event = one(
        fmt.decode(b'{"op":"c","after":{"d":9999999.1,"b":"YQ==","t":1734363225000},"source":{}}')
    )
    assert event.columns is None
    assert event.after == {"d": Decimal("9999999.1"), "b": "YQ==", "t": 1734363225000}


def test_unavailable_toast_placeholder_is_left_out_and_marked_partial() -> None:
    pg = source(connector="postgresql", file=..., pos=..., row=..., lsn=7)
    message = payload(
        "u",
        before={"id": 1, "doc": "x"},
        after={"id": 1, "doc": "__debezium_unavailable_value"},
        source=pg,
    )
    event = one(fmt.decode(dumps(message)))
    assert event.after == {"id": 1} and event.partial == ("after",)


def test_schema_plans_are_cached_per_schema_text() -> None:
    codec = DebeziumJson()
    fields = [field("int32", "id"), field("string", "name")]
    for n in range(3):
        codec.decode(envelope(fields, payload(after={"id": n, "name": "x"})))
    codec.decode(
        envelope([*fields, field("int64", "age")], payload(after={"id": 9, "name": "y", "age": 3}))
    )
    assert len(codec._plans) == 2 and len(codec._prefixes) == 2
    evolved = one(
        codec.decode(
            envelope(
                [*fields, field("string", "age")], payload(after={"id": 9, "name": "y", "age": "3"})
            )
        )
    )
    assert evolved.columns is not None and evolved.columns["age"].type == STRING


def test_cached_envelope_prefix_gives_the_same_events_as_a_full_parse() -> None:
    """The prefix fast path must agree with the full parse whatever the spacing, and step
    aside when the bytes after the known prefix are not exactly one payload value."""
    spaced = envelope([field("int32", "id")], payload(after={"id": 1}))
    compact = json.dumps(json.loads(spaced), separators=(",", ":")).encode()
    pretty = json.dumps(json.loads(spaced), indent=2).encode()
    codec = DebeziumJson()
    for message in (spaced, compact, pretty, compact + b"\n", spaced, compact, pretty):
        assert codec.decode(message) == fmt.decode_object(json.loads(message))
    second = json.dumps(payload(after={"id": 2})).encode()
    duplicate = compact[:-1] + b',"payload":' + second + b"}"  # same prefix, then a 2nd payload
    assert codec.decode(duplicate) == DebeziumJson().decode(duplicate)
    assert one(codec.decode(duplicate)).after == {"id": 2}  # the last key wins, as in a dict


# --------------------------------------------------------------------------- keys and images
def test_key_names_come_from_the_kafka_key() -> None:
    value = (CASES / "docs_tutorial_create_L135.json").read_bytes()
    key_with_schema = (CASES / "docs_tutorial_create_L96.json").read_bytes()
    assert one(fmt.decode(value)).key is None
    assert one(fmt.decode(value, key=key_with_schema)).key == ("id",)
    assert one(fmt.decode(value, key=b'{"id":1004}')).key == ("id",)
    assert one(fmt.decode(value, key=b'"not an object"')).key is None
    assert one(fmt.decode(value, key=b"\xff garbage")).key is None
    assert one(DebeziumJson({"primary_key": "email"}).decode(value, key=key_with_schema)).key == (
        "email",
    )


def test_delete_without_before_uses_the_key_values_as_partial_before() -> None:
    line = (CASES / "corpus_flink_postgres_replica_identity.jsonl").read_bytes().splitlines()[-1]
    with pytest.raises(DecodeError, match=r"debezium-json: \$\.before: .*REPLICA IDENTITY FULL"):
        fmt.decode(line)
    event = one(fmt.decode(line, key=b'{"id": 111}'))
    assert (event.op, event.before, event.partial, event.key) == (
        Op.DELETE,
        {"id": 111},
        ("before",),
        ("id",),
    )


def test_typed_key_values_follow_the_value_schema() -> None:
    fields = [field("bytes", "id", N_DECIMAL, scale="0"), field("string", "name")]
    key = dumps(
        {
            "schema": {"type": "struct", "fields": [field("bytes", "id", N_DECIMAL, scale="0")]},
            "payload": {"id": "AQ=="},
        }
    )
    event = one(fmt.decode(envelope(fields, payload("d", before=None)), key=key))
    assert event.before == {"id": Decimal(1)} and event.partial == ("before",)


def test_update_before_images() -> None:
    """Postgres REPLICA IDENTITY DEFAULT: before holds the key only -> partial; null -> None."""
    partial = one(fmt.decode((CASES / "docs_repaired_postgresql_update_L1045.json").read_bytes()))
    assert partial.before == {"id": 1} and partial.partial == ("before",)
    lines = (CASES / "corpus_flink_postgres_replica_identity.jsonl").read_bytes().splitlines()
    no_before = one(fmt.decode(lines[9]))
    assert no_before.op is Op.UPDATE and no_before.before is None and no_before.partial == ()


def test_schema_declares_columns_the_image_lacks() -> None:
    fields = [field("int32", "id"), field("string", "name")]
    event = one(
        fmt.decode(
            envelope(
                fields, payload("u", before={"id": 1}, after={"id": 1, "name": "n", "extra": 5})
            )
        )
    )
    assert event.partial == ("before",)
    assert event.columns is not None and event.columns["extra"] == Column(UNKNOWN)


def test_snapshot_flag_is_kept_only_when_it_says_more_than_the_op() -> None:
    snap = one(fmt.decode(dumps(payload("r", after={"id": 1}, source=source(snapshot="last")))))
    assert (snap.op, snap.extra.get("snapshot")) == (Op.SNAPSHOT, "last")
    plain = one(fmt.decode(dumps(payload("r", after={"id": 1}, source=source(snapshot=True)))))
    assert "snapshot" not in plain.extra
    flink = one(
        fmt.decode((CASES / "corpus_flink_mysql_schema_include.jsonl").read_bytes().splitlines()[0])
    )
    assert (flink.op, flink.extra["snapshot"]) == (Op.INSERT, "true")  # op c during a snapshot


def test_transaction_id_sources() -> None:
    block = one(
        fmt.decode((CASES / "docs_repaired_sqlserver_transaction_block_L1568.json").read_bytes())
    )
    assert block.tx == "00000025:00000d08:0025" and block.extra["total_order"] == 1
    oracle = one(fmt.decode((CASES / "docs_oracle_L1573.json").read_bytes()))
    assert (oracle.tx, oracle.row_id) == ("6.28.807", "AAASgjAAMAAAACnAAA")
    gtid = one(fmt.decode(dumps(payload(after={"id": 1}, source=source(gtid="uuid:5")))))
    assert gtid.extra["gtid"] == "uuid:5" and gtid.tx is None


# --------------------------------------------------------------------------- other event kinds
def test_truncate_and_message_events() -> None:
    truncate = one(
        fmt.decode((CASES / "docs_repaired_postgresql_truncate_L1249.json").read_bytes())
    )
    assert (truncate.op, truncate.before, truncate.after, truncate.qualified_table) == (
        Op.TRUNCATE,
        None,
        None,
        "postgres.public.customers",
    )
    message = one(fmt.decode((CASES / "docs_repaired_postgresql_message_L1328.json").read_bytes()))
    assert message.op is Op.HEARTBEAT and message.table is None and message.schema is None
    assert message.extra["message"] == {"prefix": "foo", "content": "Ymfy"}
    assert message.position == Position((46523128,))


def test_schema_change_event() -> None:
    event = one(fmt.decode((CASES / "docs_repaired_oracle_ddl_L730.json").read_bytes()))
    assert event.op is Op.DDL and event.ddl is not None and event.ddl.startswith("CREATE TABLE")
    assert (event.database, event.schema, event.table, event.key) == (
        "ORCLPDB1",
        "DEBEZIUM",
        "CUSTOMERS",
        ("ID",),
    )
    assert event.columns is not None and event.columns["ID"] == Column(
        LogicalType("decimal", 9, 0), "NUMBER", 2
    )


def test_transaction_markers() -> None:
    begin, end = (
        (CASES / "docs_repaired_sqlserver_transaction_L1524.jsonl").read_bytes().splitlines()
    )
    assert one(fmt.decode(begin)).op is Op.BEGIN
    commit = one(fmt.decode(end))
    assert (commit.op, commit.tx, commit.extra["event_count"]) == (
        Op.COMMIT,
        "00000025:00000d08:0025",
        2,
    )
    # the events per table: what a read's cut waits for (anycdc.spark.reads)
    assert commit.extra[TX_TABLE_EVENTS] == {
        "testDB.dbo.testDB.tablea": 1,
        "testDB.dbo.testDB.tableb": 1,
    }


@pytest.mark.parametrize(
    ("collections", "where", "reason"),
    [
        ('{"a": 1}', "$.data_collections", "expected array, got object"),
        ("[1]", "$.data_collections[0]", "expected object, got integer"),
        ('[{"event_count": 1}]', "$.data_collections[0].data_collection", "null or missing"),
        ('[{"data_collection": "s.a"}]', "$.data_collections[0].event_count", "null or missing"),
        (
            '[{"data_collection": "s.a", "event_count": -1}]',
            "$.data_collections[0].event_count",
            "non-negative",
        ),
    ],
)
def test_a_bad_data_collections_list_is_an_error_naming_its_path(
    collections: str, where: str, reason: str
) -> None:
    end = (
        '{"status": "END", "id": "1", "ts_ms": 1, "event_count": 1, '
        f'"data_collections": {collections}}}'
    ).encode()
    with pytest.raises(DecodeError) as caught:
        fmt.decode(end)
    assert caught.value.format_id == "debezium-json" and caught.value.path == where
    assert reason in caught.value.reason


def test_tombstones_give_no_event() -> None:
    assert fmt.decode(None) == [] and fmt.decode(None, key=b'{"id":1}') == []
    assert fmt.decode_tombstone(b'{"id":1}') == []
    assert fmt.decode(b'{"schema":null,"payload":null}') == []


def test_mongodb_documents() -> None:
    create = one(fmt.decode((CASES / "docs_repaired_mongodb_create_L774.json").read_bytes()))
    assert create.key == ("_id",) and create.columns is not None
    assert create.columns["_id"] == Column(INT64, "long")  # {"$numberLong": "1004"}
    assert create.columns["email"] == Column(STRING, "string")
    assert create.after == {
        "_id": 1004,
        "first_name": "Anne",
        "last_name": "Kretchmar",
        "email": "annek@noanswer.org",
    }
    update = one(fmt.decode((CASES / "docs_repaired_mongodb_update_L1004.json").read_bytes()))
    assert update.before is not None and update.before["first_name"] == "unknown"
    assert (
        update.after is not None
        and update.after["first_name"] == "Anne Marie"
        and update.patch is None
    )


def test_mongodb_update_without_full_document_becomes_a_patch() -> None:
    message = {
        "op": "u",
        "after": None,
        "source": {
            "connector": "mongodb",
            "db": "inventory",
            "collection": "customers",
            "ts_ms": 1558965508000,
            "ord": 1,
        },
        "updateDescription": {
            "removedFields": ["age"],
            "updatedFields": '{"first_name": "Anne Marie", "n": {"$numberLong": "5"}}',
            "truncatedArrays": None,
        },
    }
    event = one(
        fmt.decode(dumps(message), key=b'{"id": "{\\"$oid\\": \\"596e275826f08b2730779e1f\\"}"}')
    )
    assert event.after == {"_id": "596e275826f08b2730779e1f"} and event.partial == ("after",)
    assert event.patch == {"$set": {"first_name": "Anne Marie", "n": 5}, "$unset": ["age"]}
    assert event.columns == {"_id": Column(STRING, "objectId")}
    old = {
        "op": "u",
        "source": {"connector": "mongodb", "db": "d", "collection": "c", "sec": 7, "ord": 2},
        "patch": '{"$set": {"x": 1}}',
        "filter": '{"_id": {"$numberLong": "1004"}}',
    }
    old_event = one(fmt.decode(dumps(old)))
    assert (old_event.after, old_event.patch, old_event.position) == (
        {"_id": 1004},
        {"$set": {"x": 1}},
        Position((7, 2)),
    )


def test_mongodb_delete_without_before_needs_an_id() -> None:
    message = {
        "op": "d",
        "after": None,
        "source": {"connector": "mongodb", "db": "d", "collection": "c"},
    }
    with pytest.raises(DecodeError, match=r"\$\.before"):
        fmt.decode(dumps(message))
    event = one(fmt.decode(dumps(message), key=b'{"id":"1004"}'))
    assert event.before == {"_id": 1004} and event.partial == ("before",)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "message,path,reason",
    [
        (b'{"op":"x","after":{}}', "$.op", "unknown op 'x'"),
        (b'{"schema":null,"payload":{"op":"XYZ"}}', "$.payload.op", "unknown op 'XYZ'"),
        (b'{"op":"c","after":null,"source":{}}', "$.after", "missing after image for op 'c'"),
        (b'{"op":"c","after":[1],"source":{}}', "$.after", "expected object, got array"),
        (b'{"op":"c","after":{},"source":"x"}', "$.source", "expected object, got string"),
        (
            b'{"op":"c","after":{},"source":{"file":"b.1","pos":"x"}}',
            "$.source.pos",
            "expected integer",
        ),
        (b'{"op":"c","after":{},"source":{"file":"b.1","pos":-4}}', "$.source.pos", "non-negative"),
        (
            b'{"op":"c","after":{},"source":{"commit_lsn":5}}',
            "$.source.commit_lsn",
            "expected string",
        ),
        (
            b'{"op":"c","after":"{not json","source":{"connector":"mongodb"}}',
            "$.after",
            "invalid document JSON",
        ),
        (b'{"id":1004,"first_name":"Anne"}', "$", "missing required field 'op'"),
        (b"[1,2]", "$", "expected object, got array"),
        (b'{"op":"c","after":{', "$", "invalid JSON"),
        (b'{"op":"c","payload":"\xff\xfe"}', "$", "invalid"),
    ],
)
def test_errors_name_the_format_and_the_path(message: bytes, path: str, reason: str) -> None:
    with pytest.raises(DecodeError) as info:
        fmt.decode(message)
    assert info.value.format_id == "debezium-json" and info.value.path == path
    assert reason in info.value.reason
    assert str(info.value).startswith(f"debezium-json: {path}: ")


def test_a_key_message_sent_as_value_says_so() -> None:
    with pytest.raises(
        DecodeError, match=r"\$\.payload: missing required field 'op': this is a message key"
    ):
        fmt.decode((CASES / "docs_tutorial_delete_L47.json").read_bytes())


def test_unwrapped_record_is_not_a_change_event() -> None:
    """debezium_core/serde-unwrapped.json: a flattened row (ExtractNewRecordState) has no op."""
    with pytest.raises(DecodeError, match="missing required field 'op'"):
        fmt.decode((CORPUS / "debezium_core" / "serde-unwrapped.json").read_bytes())


def test_bad_schema_part_is_an_error() -> None:
    with pytest.raises(DecodeError, match=r"\$\.schema\.fields\[0\]\.fields\[0\]: expected object"):
        fmt.decode(
            dumps(
                {
                    "schema": {
                        "type": "struct",
                        "fields": [{"type": "struct", "field": "after", "fields": [7]}],
                    },
                    "payload": payload(after={"id": 1}),
                }
            )
        )


GARBAGE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6) | st.floats(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=15,
)
SHAPED = st.fixed_dictionaries(
    {},
    optional={
        "op": st.sampled_from(["c", "u", "d", "r", "t", "m", "x"]) | GARBAGE,
        "before": GARBAGE | st.dictionaries(IDENT, GARBAGE),
        "after": GARBAGE | st.dictionaries(IDENT, GARBAGE),
        "source": GARBAGE
        | st.fixed_dictionaries(
            {},
            optional={
                k: GARBAGE
                for k in (
                    "connector",
                    "db",
                    "schema",
                    "table",
                    "ts_ms",
                    "file",
                    "pos",
                    "row",
                    "lsn",
                    "commit_lsn",
                    "change_lsn",
                    "event_serial_no",
                    "scn",
                    "commit_scn",
                    "ord",
                    "sec",
                    "txId",
                    "sequence",
                    "snapshot",
                )
            },
        ),
        "transaction": GARBAGE,
        "patch": GARBAGE,
        "updateDescription": GARBAGE,
        "filter": GARBAGE,
        "ddl": GARBAGE,
        "tableChanges": GARBAGE,
        "status": GARBAGE,
        "message": GARBAGE,
    },
)


@given(
    SHAPED,
    st.booleans(),
    st.none() | st.binary(max_size=20) | GARBAGE.map(lambda g: json.dumps(g).encode()),
)
def test_garbage_never_crashes(body: dict[str, Any], enveloped: bool, key: bytes | None) -> None:
    message = dumps({"schema": None, "payload": body} if enveloped else body)
    try:
        events = fmt.decode(message, key=key)
    except DecodeError as exc:
        assert exc.format_id == "debezium-json"
    else:
        assert isinstance(events, list)
    assert 0.0 <= DebeziumJson.sniff(json.loads(message)) <= 1.0


# --------------------------------------------------------------------------- detection
@pytest.mark.parametrize(
    "message",
    [
        {
            "database": "d",
            "table": "t",
            "type": "INSERT",
            "isDdl": False,
            "data": [{"id": "1"}],
            "old": None,
            "pkNames": ["id"],
            "es": 1,
            "ts": 2,
            "id": 3,
            "sql": "",
        },
        {
            "version": "2.0",
            "schema": {"source": {"dbType": "MySQL"}, "column": [], "pk": []},
            "payload": {"before": None, "after": {"data": {}}, "op": "INSERT"},
        },
        {"id": 256, "op": "INSERT", "dbType": "MongoDB", "db": "d", "coll": "c", "value": "{}"},
        {"prevStruct": None, "postStruct": {"id": 1}, "allMetaData": {}, "recordType": "INSERT"},
        {"ts_ms": 1596001099434},
        {"op": "c"},
        {"schema": "x", "payload": {"op": "c", "after": {}}},
        [{"op": "c"}],
        "c",
    ],
)
def test_sniff_is_low_for_other_shapes(message: Any) -> None:
    assert DebeziumJson.sniff(message) < 0.5


def test_sniff_is_high_for_debezium_shapes() -> None:
    assert (
        DebeziumJson.sniff({"op": "c", "before": None, "after": {"id": 1}}) >= 0.5
    )  # Flink's writer
    assert DebeziumJson.sniff(json.loads(SEED.read_bytes())) >= 0.9
    heartbeat = {
        "schema": {
            "type": "struct",
            "name": "io.debezium.connector.common.Heartbeat",
            "fields": [],
        },
        "payload": {"ts_ms": 1},
    }
    assert DebeziumJson.sniff(heartbeat) >= 0.5
    assert detect(SEED.read_bytes()).format == "debezium-json"


# --------------------------------------------------------------------------- the encoder
def test_encoder_writes_the_seed_layout() -> None:
    event = one(fmt.decode(SEED.read_bytes(), key=b'{"id":1005}'))
    body = json.loads(fmt.encode(event)[0])
    assert list(body) == ["schema", "payload"]
    assert list(body["payload"]) == ["before", "after", "source", "op", "ts_ms"]
    source_fields = body["payload"]["source"]
    assert (
        source_fields["change_lsn"],
        source_fields["commit_lsn"],
        source_fields["event_serial_no"],
    ) == ("00000027:00000758:0003", "00000027:00000758:0005", 1)
    assert [f["field"] for f in body["schema"]["fields"]] == [
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
    ]
    assert body["schema"]["fields"][1]["fields"][0] == {
        "type": "int32",
        "optional": False,
        "field": "id",
    }
    assert json.loads(fmt.encode_key(event) or b"")["payload"] == {"id": 1005}


def test_encoder_writes_connect_decimals_with_scale() -> None:
    event = ChangeEvent(
        op=Op.INSERT,
        format="debezium-json",
        table="t",
        key=("id",),
        after={"id": 1, "price": Decimal("-12.50"), "big": 2**64 - 1},
        columns={
            "id": Column(INT64),
            "price": Column(LogicalType("decimal", 10, 2)),
            "big": Column(LogicalType("uint64")),
        },
    )
    body = json.loads(fmt.encode(event)[0])
    price = body["schema"]["fields"][1]["fields"][1]
    assert price["name"] == N_DECIMAL and price["parameters"] == {
        "scale": "2",
        "connect.decimal.precision": "10",
    }
    assert base64.b64decode(body["payload"]["after"]["price"]) == (-1250).to_bytes(
        2, "big", signed=True
    )
    back = one(fmt.decode(fmt.encode(event)[0]))
    assert (
        back.after is not None
        and back.after["price"] == Decimal("-12.50")
        and back.after["big"] == 2**64 - 1
    )
    with pytest.raises(EncodeError, match="more than 2 fraction digits"):
        fmt.encode(event.with_changes(after={"id": 1, "price": Decimal("1.005"), "big": 0}))


def test_schema_option() -> None:
    event = one(fmt.decode(SEED.read_bytes()))
    assert list(json.loads(schemaless.encode(event)[0])) == [
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
    ]
    with pytest.raises(OptionError, match="option schema"):
        DebeziumJson({"schema": "maybe"})
    named = DebeziumJson({"server_name": "dbserver1"})
    assert json.loads(named.encode(event)[0])["payload"]["source"]["name"] == "dbserver1"


def test_encoding_events_converted_from_other_formats() -> None:
    """No connector known: the position goes to the generic ``source.sequence``."""
    event = ChangeEvent(
        op=Op.UPDATE,
        format="canal-json",
        database="shop",
        table="t",
        key=("id",),
        before={"id": 1, "n": "a"},
        after={"id": 1, "n": "b"},
        columns={"id": Column(INT32, "int(11)", 4), "n": Column(STRING, "varchar(8)", 12)},
        position=Position((1600000000000, 58)),
        ts_ms=1600000000000,
    )
    [message] = fmt.encode(event)
    assert json.loads(message)["payload"]["source"]["sequence"] == '["1600000000000","58"]'
    back = one(fmt.decode(message, key=fmt.encode_key(event)))
    assert (back.position, back.after, back.key) == (event.position, event.after, ("id",))


# ------------------------------------------------------------------ corpus: Flink / SeaTunnel
ROW_RE = re.compile(r"kind=([+-][IUD]), fields=\[(.*)\]\}")


def seatunnel_expected_rows() -> list[tuple[str, list[str]]]:
    """The 20 rows of SeaTunnel's DebeziumJsonSerDeSchemaTest (EXPECTED_HARVEST.md)."""
    text = (CORPUS / "seatunnel_json" / "EXPECTED_HARVEST.md").read_text()
    block = text.split(
        "DebeziumJsonSerDeSchemaTest.java :: testDeserializeUnknownOperationTypeJson", 1
    )[1]
    block = block.split("###", 1)[0]
    return [(m.group(1), m.group(2).split(", ")) for m in ROW_RE.finditer(block)]


def as_rows(events: list[ChangeEvent]) -> list[tuple[str, list[Any]]]:
    """Flink/SeaTunnel changelog rows: +I insert, -U/+U update halves, -D delete."""
    rows: list[tuple[str, list[Any]]] = []
    for e in events:
        if e.op in (Op.INSERT, Op.SNAPSHOT):
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


@pytest.mark.parametrize(
    "case",
    [
        "corpus_seatunnel_mysql",
        "corpus_flink_mysql_schema_include",
        "corpus_flink_postgres_schema_include",
        "corpus_flink_postgres_schema_exclude",
    ],
)
def test_flink_and_seatunnel_expected_rows(case: str) -> None:
    """EXPECTED.md: the four fixtures give the same 20 rows (id, name, description, weight)."""
    expected = seatunnel_expected_rows()
    assert len(expected) == 20
    events = [
        e for line in (CASES / f"{case}.jsonl").read_bytes().splitlines() for e in fmt.decode(line)
    ]
    got = as_rows(events)
    assert [kind for kind, _ in got] == [kind for kind, _ in expected]
    for (_, row), (_, want) in zip(got, expected, strict=True):
        assert [row[0], row[1], row[2]] == [
            int(want[0]),
            want[1],
            None if want[2] == "null" else want[2],
        ]
        assert float32(row[3]) == float32(want[3])  # FLOAT column: 3.140000104904175 is 3.14


def test_flink_replica_identity_fixture() -> None:
    """Flink fails on this file; we decode the updates without before images and fail only
    on the delete that has no row at all (unless the Kafka key is given)."""
    lines = (CASES / "corpus_flink_postgres_replica_identity.jsonl").read_bytes().splitlines()
    events = [one(fmt.decode(line)) for line in lines[:-1]]
    assert [e.op for e in events].count(Op.UPDATE) == 4
    assert all(e.before is None for e in events if e.op is Op.UPDATE)
    with pytest.raises(DecodeError):
        fmt.decode(lines[-1])


def test_seatunnel_all_types_decoded_with_their_table_schema() -> None:
    """SeaTunnel decodes these schemaless rows with its catalog's types; given the Debezium
    schema those types stand for, we read the values SeaTunnel's EXPECTED.md lists."""
    row = json.loads((CASES / "corpus_seatunnel_sqlserver_all_types.jsonl").read_bytes())
    fields = [
        field("bytes", "f10", N_DECIMAL, scale="0"),
        field("bytes", "f29"),
        field("int32", "f35", "io.debezium.time.Date"),
        field("int64", "f36", "io.debezium.time.NanoTime"),
        field("int32", "f37", "io.debezium.time.Time"),
        field("int64", "f38", "io.debezium.time.Timestamp"),
        field("int64", "f39", "io.debezium.time.NanoTimestamp"),
        field("int64", "f40", "io.debezium.time.Timestamp"),
        field("string", "f41", "io.debezium.time.ZonedTimestamp"),
        field("int64", "f43", "io.debezium.time.Timestamp"),
    ]
    keep = {f["field"] for f in fields}
    after = {k: v for k, v in row["after"].items() if k in keep}
    after["f10"] = "AQ=="  # EXPECTED.md: decimal 1 (sent as the string "1" by SeaTunnel's writer)
    event = one(fmt.decode(envelope(fields, {**row, "after": after})))
    assert event.after == {
        "f10": Decimal(1),
        "f29": b"\x01",
        "f35": dt.date(2024, 12, 16),
        "f36": dt.time(21, 2, 3),
        "f37": dt.time(21, 2, 4),
        "f38": dt.datetime(2024, 12, 16, 21, 2, 5),
        "f39": dt.datetime(2024, 12, 16, 21, 2, 7),
        "f40": dt.datetime(2024, 12, 16, 21, 2, 8),
        "f41": dt.datetime(2024, 12, 16, 21, 2, 9, 799000, tzinfo=dt.UTC),
        "f43": dt.datetime(2024, 12, 16, 21, 2),
    }
    oracle = json.loads((CASES / "corpus_seatunnel_oracle_all_types.jsonl").read_bytes())
    vsd = {
        "type": "struct",
        "name": N_VSD,
        "optional": True,
        "field": "F2",
        "fields": [field("int32", "scale"), field("bytes", "value")],
    }
    fields = [
        vsd,
        field("int64", "F27", "io.debezium.time.Timestamp"),
        field("int64", "F28", "io.debezium.time.MicroTimestamp"),
        field("string", "F31", "io.debezium.time.ZonedTimestamp"),
    ]
    after = {k: oracle["after"][k] for k in ("F2", "F27", "F28", "F31")}
    event = one(fmt.decode(envelope(fields, {**oracle, "after": after})))
    assert event.after == {
        "F2": Decimal(1),
        "F27": dt.datetime(2024, 12, 17, 15, 23, 32),
        "F28": dt.datetime(2024, 12, 17, 15, 23, 34),
        "F31": dt.datetime(2024, 12, 17, 15, 23, 38, 790000, tzinfo=dt.UTC),
    }


# --------------------------------------------------------------------------- corpus: Paimon
PAIMON_EXPECTED = {
    # file (under paimon_kafka/debezium) -> [(op, table), ...] of its messages
    "database/include/topic0/debezium-data-1.txt": [
        ("insert", "paimon_1"),
        ("insert", "paimon_2"),
        ("insert", "ignore"),
        ("insert", "flink"),
    ],
    "table/schemaevolution/debezium-data-3.txt": [
        ("insert", "product"),
        ("delete", "product"),
        ("update", "product"),
        ("insert", "product"),
    ],
    "table/schema/schemaevolution/debezium-data-with-delete.txt": [("delete", "product")],
    "table/schema/alltype/debezium-data-1.txt": [("snapshot", "all_types_table")],
    "table/nullvalue/debezium-data-1.txt": [("insert", "test")],
}


def paimon_messages(path: Path) -> list[bytes]:
    lines = path.read_bytes().splitlines()
    return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith((b"/*", b"*", b"*/"))]


def test_paimon_fixtures_decode_with_the_right_ops_tables_and_keys() -> None:
    codec = DebeziumJson({"primary_key": "id"})  # Paimon's tests configure the key: pk=id
    files = sorted((CORPUS / "paimon_kafka" / "debezium").rglob("*.txt"))
    assert len(files) == 29
    seen = {}
    for path in files:
        events = [one(codec.decode(m)) for m in paimon_messages(path)]
        assert events and all(
            e.key == ("id",) and e.database in ("test", "inventory", "paimon_sync_table")
            for e in events
        )
        seen[path.relative_to(CORPUS / "paimon_kafka" / "debezium").as_posix()] = [
            (e.op.value, e.table) for e in events
        ]
    for name, expected in PAIMON_EXPECTED.items():
        assert seen[name] == expected, name
    evolved = [
        one(fmt.decode(m))
        for m in paimon_messages(
            CORPUS / "paimon_kafka/debezium/table/schemaevolution/debezium-data-3.txt"
        )
    ]
    assert evolved[2].before == {"address": "Shanghai"} and evolved[2].partial == ("before",)


# --------------------------------------------------------------------------- real shapes
def _case_lines(name: str) -> list[bytes]:
    return [line for line in (CASES / name).read_bytes().split(b"\n") if line.strip()]


def test_mongodb_documents_are_typed_the_same_in_every_serialization_mode() -> None:
    """v1 strict (legacy/strict modes), v2 canonical (extended) and v2 relaxed give one
    image; relaxed mode writes int64 as a plain number (vendor type ``int``, not ``long``)."""
    legacy, canonical, relaxed = (
        one(fmt.decode(line)) for line in _case_lines("constructed_mongodb_ejson_modes.jsonl")[:3]
    )
    assert legacy.after == canonical.after == relaxed.after
    assert legacy.columns == canonical.columns
    assert relaxed.columns is not None and canonical.columns is not None
    assert {n: c.type for n, c in relaxed.columns.items()} == {
        n: c.type for n, c in canonical.columns.items()
    }
    assert (relaxed.columns["views"].vendor_type, canonical.columns["views"].vendor_type) == (
        "int",
        "long",
    )
    after = canonical.after or {}
    assert after["created"] == dt.datetime(2026, 7, 3, 17, 59, 45, 729000, tzinfo=dt.UTC)
    assert after["checksum"] == b"\x01\x02\xff" and after["price"] == Decimal("1234.50")
    # nested values: the same relaxed Extended JSON text whatever the mode
    assert after["tags"] == '["new",7,{"$date":"2026-07-03T17:59:45.729Z"}]'


def test_mongodb_documents_are_typed_as_drs_mongo_json_types_them() -> None:
    from anycdc.formats.drs_mongo import DrsMongoJson

    shell = (
        '{"_id": ObjectId("5f43a1c1e4b0a1b2c3d4e5f6"), "name": "desk", "qty": 25, '
        '"views": NumberLong("9007199254740993"), "price": NumberDecimal("1234.50"), '
        '"ratio": 0.25, "created": ISODate("2026-07-03T17:59:45.729Z"), '
        '"checksum": BinData(0, "AQL/"), "ts": Timestamp(1783101585, 7), '
        '"tags": ["new", NumberLong(7), ISODate("2026-07-03T17:59:45.729Z")], '
        '"dims": {"w": 1.5, "made": ISODate("2026-07-03T17:59:45.729Z"), '
        '"lot": NumberDecimal("0.10")}, "active": true, "note": null}'
    )
    drs = one(
        DrsMongoJson().decode_object(
            {
                "op": "INSERT",
                "db": "inventory",
                "coll": "products",
                "value": shell,
                "recordType": "insert",
                "es": 1,
            }
        )
    )
    for line in _case_lines("constructed_mongodb_ejson_modes.jsonl")[:2]:
        event = one(fmt.decode(line))
        assert (event.after, event.columns) == (drs.after, drs.columns)


def test_mongodb_update_description_sets_are_typed_like_drs_mongo_sets() -> None:
    from anycdc.patch import patch_as_partial_update

    events = [
        one(fmt.decode(line)) for line in _case_lines("constructed_mongodb_ejson_modes.jsonl")
    ]
    patches = [e.patch for e in events[3:]]
    assert patches[0] == patches[1] == patches[2]  # legacy (v2 relaxed), strict (v1), extended
    applied = patch_as_partial_update(events[4])
    assert applied.after is not None and applied.columns is not None
    assert applied.after["price"] == Decimal("1300.00") and applied.after["note"] is None
    assert applied.after["seen"] == dt.datetime(2026, 7, 4, tzinfo=dt.UTC)
    assert applied.columns["seen"] == Column(TIMESTAMPTZ, "date")


def test_mongodb_encoder_keeps_bson_types() -> None:
    """A decoded document written back and read again keeps its int64, double, date and
    binary fields (canonical Extended JSON at the top level)."""
    event = one(fmt.decode(_case_lines("constructed_mongodb_ejson_modes.jsonl")[2]))
    [message] = fmt.encode(event)
    assert fmt.decode(message, key=fmt.encode_key(event)) == [event]
    after = json.loads(json.loads(message)["payload"]["after"])
    assert after["ratio"] == {"$numberDouble": "0.25"}
    assert after["created"] == {"$date": {"$numberLong": "1783101585729"}}


def test_cloudevents_give_the_rows_of_the_plain_message() -> None:
    plain = one(fmt.decode((CASES / "docs_postgresql_L763.json").read_bytes()))
    wrapped = one(fmt.decode((CASES / "constructed_cloudevents_schema_data.json").read_bytes()))
    assert wrapped.extra["cloudevents"] == {
        "id": "name:PostgreSQL_server;lsn:24023128;txId:555",
        "source": "/debezium/postgresql/PostgreSQL_server",
        "type": "io.debezium.connector.postgresql.DataChangeEvent",
    }
    extra = {k: v for k, v in wrapped.extra.items() if k != "cloudevents"}
    assert wrapped.with_changes(extra=extra) == plain
    [message] = fmt.encode(wrapped)  # written back as a CloudEvent
    assert json.loads(message)["iodebeziumlsn"] == "24023128"
    assert detect(message).format == "debezium-json" and fmt.decode(message) == [wrapped]


def test_cloudevents_of_other_producers_or_without_the_operation_are_not_rows() -> None:
    event = json.loads((CASES / "docs_cloudevents_L77.json").read_bytes())
    other = {**event, "type": "com.example.order.created", "source": "/shop/orders"}
    assert detect(json.dumps(other)).format == "unknown"
    no_op = {k: v for k, v in event.items() if k != "iodebeziumop"}
    assert detect(json.dumps(no_op)).format == "unknown"
    with pytest.raises(DecodeError, match=r"\$: missing extension attribute 'iodebeziumop'"):
        fmt.decode(json.dumps(no_op).encode())


def test_vitess_keyspace_is_the_database_on_every_path() -> None:
    message = json.loads((CASES / "docs_repaired_vitess_update_L798.json").read_bytes())
    payload = message["payload"]
    # the usual path, and the general one (a transaction block takes it)
    for variant in (payload, {**payload, "transaction": {"id": "x", "total_order": 1}}):
        event = one(fmt.decode(json.dumps(variant).encode()))
        assert (event.database, event.table) == ("commerce", "customers")
    with pytest.raises(DecodeError, match=r"\$\.source\.keyspace: expected string"):
        fmt.decode(
            json.dumps({**payload, "source": {**payload["source"], "keyspace": []}}).encode()
        )


def test_one_column_tables_are_still_rows() -> None:
    """The Avro-union check never refuses a real one-column image."""
    message = {"op": "c", "after": {"id": 7}, "source": {"connector": "mysql", "db": "d",
               "table": "t", "ts_ms": 1, "file": "b.000001", "pos": 4}}  # fmt: skip
    assert detect(json.dumps(message)).format == "debezium-json"
    assert one(fmt.decode(json.dumps(message).encode())).after == {"id": 7}


def test_mongodb_snapshot_ord_sentinel_orders_at_the_start_of_its_second() -> None:
    """Debezium 3.x MongoDB snapshot reads carry ``ord: -1`` (no cluster time): kept, at
    ``[ts_ms // 1000, 0]``: after every earlier second, before the changes streamed in
    its second (``ord`` >= 1); any other negative ``ord`` is an error."""

    def message(op: str, ord_: int, ts_ms: int) -> bytes:
        source = {"connector": "mongodb", "name": "f", "ts_ms": ts_ms, "db": "inventory",
                  "collection": "customers", "ord": ord_, "snapshot": "true" if op == "r" else "false"}  # fmt: skip
        payload = {"op": op, "after": '{"_id": 7, "n": 1}', "source": source, "ts_ms": ts_ms}
        return json.dumps(payload).encode()

    fmt = DebeziumJson()
    [read] = fmt.decode(message("r", -1, 1750000000999))
    [same_second] = fmt.decode(message("u", 1, 1750000000001))
    [earlier] = fmt.decode(message("u", 9, 1749999999999))
    assert read.op is Op.SNAPSHOT and read.position == Position((1750000000, 0))
    assert earlier.position < read.position < same_second.position
    with pytest.raises(DecodeError, match=r"\$\.source\.ord: expected a non-negative integer"):
        fmt.decode(message("c", -2, 1750000000000))
