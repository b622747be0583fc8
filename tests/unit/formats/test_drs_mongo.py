"""Huawei DRS JSON for MongoDB (``anycdc.formats.drs_mongo``): shell text, round trips, errors."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.errors import DecodeError, EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats import detect, get_format
from anycdc.formats.canal.drs import DrsJson, DrsJsonC
from anycdc.formats.codecs.mongo import (
    MAX_DEPTH,
    Bson,
    parse_shell,
    shell_text,
    to_ejson,
)
from anycdc.formats.drs_mongo import DrsMongoJson
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DECIMAL,
    FLOAT64,
    INT32,
    INT64,
    JSON,
    STRING,
    TIMESTAMPTZ,
    UNKNOWN,
)
from tests.strategies import IDENT, UNICODE_TEXT, st_datetime, st_decimal

CASES = Path(__file__).parents[2] / "cases" / "drs-mongo-json"
CORPUS = Path(__file__).parents[2] / "corpus"
SEEDS = ["seed_insert", "seed_replace", "seed_update_set", "seed_update_unset_set", "seed_delete"]
OID = "64650cf67dc36a464e76e583"
FMT = get_format("drs-mongo-json")


def seed(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CASES / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def message(**fields: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "id": 1, "op": "INSERT", "dbType": "MongoDB", "db": "d", "coll": "c",
        "value": f'{{"_id": ObjectId("{OID}")}}', "where": None, "recordType": "insert",
        "extra": "insert", "es": 10, "ts": 11, "clusterTime": "1684344064:1",
    }  # fmt: skip
    msg.update(fields)
    return msg


# --------------------------------------------------------------------------- the seed
@pytest.mark.parametrize("name", SEEDS)
def test_seed_re_encodes_to_the_same_text(name: str) -> None:
    original = seed(name)
    [event] = FMT.decode((CASES / f"{name}.json").read_bytes())
    [raw] = FMT.encode(event)
    again = json.loads(raw)
    assert list(again) == list(original)  # field order as in the seed
    # value/where text exactly as DRS writes it; id and ts are not kept by the canonical event
    assert {**again, "id": original["id"], "ts": original["ts"]} == original


def test_seed_insert() -> None:
    [event] = FMT.decode((CASES / "seed_insert.json").read_bytes())
    assert (event.op, event.database, event.table, event.key) == (Op.INSERT, "ljx", "ljx", ("_id",))
    assert event.after == {"_id": OID, "c1": "baz", "tags": '["mongodb","database","NoSQL"]'}
    assert event.columns == {
        "_id": Column(STRING, "objectId"),
        "c1": Column(STRING, "string"),
        "tags": Column(JSON, "array"),
    }
    assert event.position == Position((1684344064, 1)) and event.ts_ms == 1684315111439


def test_seed_updates_and_delete() -> None:
    [replace] = FMT.decode((CASES / "seed_replace.json").read_bytes())
    assert replace.op is Op.UPDATE and replace.patch is None
    assert (replace.before, replace.after) == ({"_id": OID}, {"_id": OID, "c1": "sss"})
    assert replace.partial == ("before",)
    [update] = FMT.decode((CASES / "seed_update_unset_set.json").read_bytes())
    assert update.op is Op.UPDATE and update.after is None and update.before == {"_id": OID}
    assert update.patch == {"$unset": ["c1"], "$set": {"column1": "aaa"}}
    assert list(update.patch) == ["$unset", "$set"]  # message order kept
    [delete] = FMT.decode((CASES / "seed_delete.json").read_bytes())
    assert delete.op is Op.DELETE and delete.before == {"_id": OID}
    assert delete.partial == ("before",) and delete.position == Position((1684346209, 1))


def test_cluster_time_orders_numerically() -> None:
    a = FMT.decode_object(message(clusterTime="999:10"))[0].position
    b = FMT.decode_object(message(clusterTime="1000:2"))[0].position
    c = FMT.decode_object(message(clusterTime="1000:10"))[0].position
    assert a is not None and b is not None and c is not None and a < b < c


# --------------------------------------------------------------------------- shell parser
def test_every_constructor() -> None:
    doc = parse_shell(
        '{"o": ObjectId("64650CF67DC36A464E76E583"), "d": ISODate("2023-05-17T12:00:00.123456Z"), '
        '"d2": new Date(0), "d3": ISODate("2023-05-17"), "l": NumberLong("9223372036854775807"), '
        '"l2": Long(5), "i": NumberInt("7"), "i2": Int32(8), "m": NumberDecimal("1.10"), '
        '"m2": Decimal128("2"), "t": Timestamp(1, 2), "t2": Timestamp({t: 3, i: 4}), '
        '"b": BinData(0, "aGk="), "b2": new BinData(5, "aGk="), "h": HexData(0, "0aff"), '
        '"u": UUID("0123456789abcdef0123456789abcdef"), "r": /a\\/b/gi, "mn": MinKey, '
        '"mx": MaxKey(), "un": undefined, "n": NaN, "inf": -Infinity, "x": 1.0E-5, '
        """'sq': 'it\\'s "q"', bare: 1}"""
    )
    assert doc["o"] == Bson("objectId", "64650cf67dc36a464e76e583")
    assert doc["d"] == Bson("date", dt.datetime(2023, 5, 17, 12, 0, 0, 123000, tzinfo=dt.UTC))
    assert doc["d2"] == Bson("date", dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
    assert doc["d3"] == Bson("date", dt.datetime(2023, 5, 17, tzinfo=dt.UTC))
    assert doc["l"] == Bson("long", 2**63 - 1) and doc["l2"] == Bson("long", 5)
    assert doc["i"] == 7 and doc["i2"] == 8
    assert doc["m"] == Bson("decimal", Decimal("1.10")) and doc["m2"] == Bson("decimal", Decimal(2))
    assert doc["t"] == Bson("timestamp", (1, 2)) and doc["t2"] == Bson("timestamp", (3, 4))
    assert doc["b"] == Bson("binData", (0, b"hi")) and doc["b2"] == Bson("binData", (5, b"hi"))
    assert doc["h"] == Bson("binData", (0, b"\n\xff"))
    assert doc["u"] == Bson("uuid", "01234567-89ab-cdef-0123-456789abcdef")
    assert doc["r"] == Bson("regex", ("a\\/b", "gi"))
    assert (doc["mn"], doc["mx"], doc["un"]) == (Bson("minKey"), Bson("maxKey"), Bson("undefined"))
    assert math.isnan(doc["n"]) and doc["inf"] == -math.inf and doc["x"] == 1e-5
    assert doc["sq"] == 'it\'s "q"' and doc["bare"] == 1


def test_extended_json_relaxed_forms() -> None:
    doc = parse_shell(
        '{"a": [ObjectId("64650cf67dc36a464e76e583"), ISODate("2023-05-17T12:00:00Z"), '
        'new Date(-1000), NumberLong(5), NumberDecimal("0.1"), Timestamp(1, 2), '
        'BinData(0, "aGk="), UUID("01234567-89ab-cdef-0123-456789abcdef"), /x/i, MinKey, '
        "undefined, NaN, 1.5, 2]}"
    )
    assert to_ejson(doc) == {
        "a": [
            {"$oid": "64650cf67dc36a464e76e583"},
            {"$date": "2023-05-17T12:00:00.000Z"},
            {"$date": {"$numberLong": "-1000"}},
            5,
            {"$numberDecimal": "0.1"},
            {"$timestamp": {"t": 1, "i": 2}},
            {"$binary": {"base64": "aGk=", "subType": "00"}},
            {"$binary": {"base64": "ASNFZ4mrze8BI0VniavN7w==", "subType": "04"}},
            {"$regularExpression": {"pattern": "x", "options": "i"}},
            {"$minKey": 1},
            {"$undefined": True},
            {"$numberDouble": "NaN"},
            1.5,
            2,
        ]
    }
    # and back to shell text (the nested int64 5 fits an int32: written plainly)
    assert shell_text(to_ejson(doc)) == (
        '{"a": [ObjectId("64650cf67dc36a464e76e583"), ISODate("2023-05-17T12:00:00.000Z"), '
        'ISODate("1969-12-31T23:59:59.000Z"), 5, NumberDecimal("0.1"), Timestamp(1, 2), '
        'new BinData(0, "aGk="), UUID("01234567-89ab-cdef-0123-456789abcdef"), /x/i, MinKey, '
        "undefined, NaN, 1.5, 2]}"
    )


def test_top_level_types() -> None:
    text = (
        '{"_id": 7, "l": NumberLong(8), "big": 3000000000, "d": 2.0, "m": NumberDecimal("1.5"), '
        '"t": ISODate("2023-05-17T12:00:00.5Z"), "b": BinData(3, "aGk="), "ok": true, "n": null, '
        '"doc": {"x": ObjectId("64650cf67dc36a464e76e583")}, "ts": Timestamp(1, 2)}'
    )
    [event] = FMT.decode_object(message(value=text))
    assert event.after == {
        "_id": 7, "l": 8, "big": 3000000000, "d": 2.0, "m": Decimal("1.5"),
        "t": dt.datetime(2023, 5, 17, 12, 0, 0, 500000, tzinfo=dt.UTC), "b": b"hi", "ok": True,
        "n": None, "doc": '{"x":{"$oid":"64650cf67dc36a464e76e583"}}',
        "ts": '{"$timestamp":{"t":1,"i":2}}',
    }  # fmt: skip
    assert event.columns == {
        "_id": Column(INT32, "int"), "l": Column(INT64, "long"), "big": Column(INT64, "int"),
        "d": Column(FLOAT64, "double"), "m": Column(DECIMAL, "decimal"),
        "t": Column(TIMESTAMPTZ, "date"), "b": Column(BINARY, "binData", 3),
        "ok": Column(BOOLEAN, "bool"), "n": Column(UNKNOWN, "null"),
        "doc": Column(JSON, "object"), "ts": Column(JSON, "timestamp"),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": eval("1")}', "unknown constructor 'eval' at offset 6"),
        ('{"a": function() {}}', "unknown constructor 'function' at offset 6"),
        ('{"a": function}', "unknown name 'function' at offset 6"),
        ('{"a": __import__("os")}', "unknown constructor '__import__' at offset 6"),
        ('{"a": this.constructor}', "unknown name 'this' at offset 6"),
        ('{"a": "x}', "unterminated string at offset 6"),
        ('{"a": "\\q"}', "invalid string at offset 6"),
        ('{"a": 1,}', "expected a field name at offset 8"),
        ('{"a" 1}', "expected ':', got '1' at offset 5"),
        ('{"a": [1, 2}', "expected ']', got '}' at offset 11"),
        ('{"a": ObjectId("zz")}', "invalid ObjectId(...): expected 24 hex digits at offset 6"),
        ('{"a": ObjectId()}', "invalid ObjectId(...): expected one str argument at offset 6"),
        ('{"a": NumberInt(3000000000)}', "invalid NumberInt(...): 3000000000 out of range"),
        ('{"a": NumberLong("x")}', "invalid NumberLong(...)"),
        ('{"a": NumberDecimal("x")}', "invalid NumberDecimal(...): not a decimal"),
        ('{"a": BinData(0, "@@")}', "invalid BinData(...): invalid base64"),
        ('{"a": ISODate("yesterday")}', "invalid ISODate(...)"),
        ('{"a": MinKey(1)}', "invalid MinKey(...): expected no arguments"),
        ('{"a": 1} {"b": 2}', "unexpected text after the document at offset 9"),
        ("[1]", "expected a document, got array"),
        ("", "unexpected end of text at offset 0"),
        ('{"a": @}', "unexpected '@' at offset 6"),
        ('{"a": ' + "1" * 5000 + "}", "number too long"),
        ('{"a": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}", "nested deeper than 100"),
        ('{"a": ' + "NumberLong(" * 5000 + "1" + ")" * 5000 + "}", "nested deeper than 100"),
        ('{"a": ' + "[{a: " * 3000 + "1" + "}]" * 3000 + "}", "nested deeper than 100"),
    ],
)
def test_shell_errors(text: str, reason: str) -> None:
    with pytest.raises(DecodeError) as info:
        parse_shell(text, "drs-mongo-json", "$.value")
    assert str(info.value).startswith(f"drs-mongo-json: $.value: {reason}")


def test_depth_limit_is_exact() -> None:
    ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse_shell(ok)["a"] is not None
    with pytest.raises(DecodeError, match="nested deeper"):
        parse_shell('{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}")


@settings(max_examples=300)
@given(st.text(alphabet="{}[]()\",:$\\/ 'aAeEnN019._-+OIdbjectLgSs", max_size=60))
def test_garbage_text_gives_decode_errors_only(text: str) -> None:
    try:
        parse_shell(text)
    except DecodeError:
        pass


@given(st.text(max_size=40))
def test_any_string_survives_shell_quoting(text: str) -> None:
    assert parse_shell(shell_text({"s": text})) == {"s": text}


# --------------------------------------------------------------------------- round trips
HEX24 = st.from_regex(r"[0-9a-f]{24}", fullmatch=True)


def _iso_ms(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


SPECIAL_LEAVES = [
    {"$numberDecimal": "1.5"},
    {"$binary": {"base64": "aGk=", "subType": "00"}},
    {"$timestamp": {"t": 1, "i": 2}},
]
LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | UNICODE_TEXT
    | st.floats(allow_nan=False, allow_infinity=False)
    | HEX24.map(lambda h: {"$oid": h})
    | st_datetime(millis_only=True, tz=dt.UTC).map(lambda d: {"$date": _iso_ms(d)})
    | st.sampled_from(SPECIAL_LEAVES)
)
NESTED = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(IDENT, inner, max_size=3),
    max_leaves=6,
)
FIELD_KINDS: list[tuple[st.SearchStrategy[Any], Column]] = [
    (HEX24, Column(STRING, "objectId")),
    (UNICODE_TEXT, Column(STRING, "string")),
    (st.integers(-(2**31), 2**31 - 1), Column(INT32, "int")),
    (st.integers(-(2**63), 2**63 - 1), Column(INT64, "long")),
    (st.floats(allow_nan=False, allow_infinity=False), Column(FLOAT64, "double")),
    (st_decimal(30, 6), Column(DECIMAL, "decimal")),
    (st.booleans(), Column(BOOLEAN, "bool")),
    (st_datetime(millis_only=True, tz=dt.UTC), Column(TIMESTAMPTZ, "date")),
    (st.binary(max_size=10), Column(BINARY, "binData", 0)),
    (st.uuids().map(str), Column(STRING, "uuid")),
    (st.dictionaries(IDENT, NESTED, max_size=3).map(dumps), Column(JSON, "object")),
    (st.lists(NESTED, max_size=3).map(dumps), Column(JSON, "array")),
    (st.none(), Column(UNKNOWN, "null")),
]


@st.composite
def st_document(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Column]]:
    names = draw(st.lists(IDENT, max_size=6, unique=True))
    doc: dict[str, Any] = {"_id": draw(HEX24)}
    columns = {"_id": Column(STRING, "objectId")}
    for name in names:
        strategy, column = draw(st.sampled_from(FIELD_KINDS))
        doc[name], columns[name] = draw(strategy), column
    return doc, columns


@st.composite
def st_mongo_event(draw: st.DrawFn) -> ChangeEvent:
    doc, columns = draw(st_document())
    kind = draw(st.sampled_from(["insert", "replace", "update", "delete"]))
    key_image = {"_id": doc["_id"]}
    key_columns = {"_id": columns["_id"]}
    common: dict[str, Any] = {
        "format": "drs-mongo-json",
        "database": draw(IDENT),
        "table": draw(IDENT),
        "key": ("_id",),
        "ts_ms": draw(st.integers(0, 2**41)),
        "position": Position((draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1)))),
    }
    if kind == "insert":
        return ChangeEvent(op=Op.INSERT, after=doc, columns=columns, **common)
    if kind == "replace":
        return ChangeEvent(
            op=Op.UPDATE,
            before=key_image,
            after=doc,
            columns=columns,
            partial=("before",),
            **common,
        )
    if kind == "delete":
        return ChangeEvent(
            op=Op.DELETE, before=key_image, columns=key_columns, partial=("before",), **common
        )
    patch: dict[str, Any] = {}
    sets = draw(st.dictionaries(IDENT, NESTED, max_size=3))
    unsets = draw(st.lists(IDENT, max_size=3, unique=True))
    if sets or not unsets:
        patch["$set"] = sets
    if unsets:
        patch["$unset"] = unsets
    return ChangeEvent(
        op=Op.UPDATE,
        before=key_image,
        columns=key_columns,
        partial=("before",),
        patch=patch,
        **common,
    )


@settings(max_examples=200)
@given(st_mongo_event())
def test_round_trip(event: ChangeEvent) -> None:
    [raw] = FMT.encode(event)
    assert FMT.decode(raw) == [event]


def test_round_trip_ddl_and_record_type_extra() -> None:
    event = ChangeEvent(
        op=Op.DDL, format="drs-mongo-json", database="d", table="c", ddl='{"drop": "c"}',
        ts_ms=1, position=Position((5, 6)), extra={"recordType": "ddl"},
    )  # fmt: skip
    [raw] = FMT.encode(event)
    assert json.loads(raw)["recordType"] == "ddl"
    assert FMT.decode(raw) == [event]


def test_encode_needs_an_id_for_updates_and_deletes() -> None:
    event = ChangeEvent(op=Op.DELETE, format="drs-mongo-json", before={"x": 1})
    with pytest.raises(
        EncodeError, match="drs-mongo-json: cannot encode: delete event without _id"
    ):
        FMT.encode(event)
    with pytest.raises(EncodeError, match="TRUNCATE"):
        FMT.encode(ChangeEvent(op=Op.TRUNCATE, format="drs-mongo-json"))
    assert FMT.encode(ChangeEvent(op=Op.COMMIT, format="drs-mongo-json")) == []


def test_encode_from_another_format() -> None:
    after = {
        "id": 5, "big": 2**40, "when": dt.datetime(2023, 5, 17, 12, 0), "price": Decimal("1.50"),
        "raw": b"hi", "day": dt.date(2023, 5, 17), "at": dt.time(1, 2, 3),
    }  # fmt: skip
    event = ChangeEvent(op=Op.INSERT, format="drs-json", table="t", key=("id",), after=after)
    [raw] = FMT.encode(event)
    assert json.loads(raw)["value"] == (
        '{"id": 5, "big": NumberLong("1099511627776"), '
        '"when": ISODate("2023-05-17T12:00:00.000Z"), '
        '"price": NumberDecimal("1.50"), "raw": new BinData(0, "aGk="), '
        '"day": ISODate("2023-05-17T00:00:00.000Z"), "at": "01:02:03"}'
    )


# --------------------------------------------------------------------------- detection
def _case_messages() -> list[bytes]:
    out = []
    for path in sorted(CASES.iterdir()):
        if path.name.endswith(".expected.jsonl") or path.suffix not in (".json", ".jsonl"):
            continue
        data = path.read_bytes()
        out.extend(
            line
            for line in (data.splitlines() if path.suffix == ".jsonl" else [data])
            if line.strip()
        )
    return out


def test_sniff_and_detect_own_cases() -> None:
    for raw in _case_messages():
        try:
            msg = json.loads(raw)
        except ValueError:
            assert detect(raw).format == "unknown"
            continue
        assert DrsMongoJson.sniff(msg) >= 0.5
        assert DrsJson.sniff(msg) < 0.5 and DrsJsonC.sniff(msg) < 0.5
        assert detect(raw).format == "drs-mongo-json"


def test_sniff_rejects_other_formats() -> None:
    others: list[Any] = [
        json.loads(
            (
                Path(__file__).parents[2] / "cases" / "drs-json" / "seed_mysql_update.json"
            ).read_text()
        ),
        json.loads((CORPUS / "debezium_docs" / "mongodb_L671.json").read_text()),
        json.loads(
            (CORPUS / "huawei_dataarts_docs" / "dataarts_heartbeat_canal_json_doc.json").read_text()
        ),
        {"op": "c", "after": "{}", "source": {"collection": "c"}},
        [],
        "x",
        None,
    ]
    for msg in others:
        assert DrsMongoJson.sniff(msg) < 0.5


# --------------------------------------------------------------------------- errors
UPDATE: dict[str, Any] = {"op": "UPDATE", "where": '{"_id": 1}'}


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"op": "UPSERT"}, "$.op: unknown op 'UPSERT'"),
        ({"op": None}, "$: missing required field 'op'"),
        ({"op": 1}, "$.op: expected string, got integer"),
        ({"value": None}, "$: missing required field 'value'"),
        ({"value": {"_id": 1}}, "$.value: expected string, got object"),
        ({"value": "{"}, "$.value: unexpected end of text at offset 1"),
        ({**UPDATE, "where": None}, "$: missing required field 'where'"),
        ({**UPDATE, "where": "{"}, "$.where: unexpected end of text"),
        ({**UPDATE, "value": '{"$set": 1}'}, "$.value: expected $set document, got integer"),
        ({**UPDATE, "value": '{"$unset": "a"}'}, "$.value: expected $unset document, got string"),
        (
            {**UPDATE, "recordType": "replace", "value": '{"$set": {}}'},
            "$.value: a replacement document cannot hold operators",
        ),
        (
            {**UPDATE, "value": '{"$set": {}, "a": 1}'},
            "$.value: an update mixes operators and fields",
        ),
        ({"clusterTime": "1:2:3"}, "$.clusterTime: expected 'seconds:increment'"),
        ({"clusterTime": 5}, "$.clusterTime: expected string, got integer"),
        ({"es": "x"}, "$.es: expected integer"),
        ({"coll": []}, "$.coll: expected string, got array"),
    ],
)
def test_decode_errors_name_format_and_path(fields: dict[str, Any], text: str) -> None:
    with pytest.raises(DecodeError) as info:
        FMT.decode_object(message(**fields))
    assert str(info.value).startswith(f"drs-mongo-json: {text}")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.just('{"$set": {"a": 1}}'),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = st.sampled_from(
    ["id", "op", "db", "coll", "value", "where", "recordType", "extra", "es", "clusterTime"]
)


@settings(max_examples=300)
@given(
    st.dictionaries(FIELDS, JSON_VALUES, max_size=6),
    st.sampled_from(["INSERT", "UPDATE", "DELETE", "DDL"]),
)
def test_garbage_gives_decode_errors_only(garbage: dict[str, Any], op: str) -> None:
    msg = {**message(op=op, where='{"_id": 1}'), **garbage}
    try:
        FMT.decode_object(msg)
    except DecodeError:
        pass
    DrsMongoJson.sniff(msg)
