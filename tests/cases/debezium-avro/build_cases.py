"""Rebuild the debezium-avro golden cases (run from the repo root).

    .venv/bin/python tests/cases/debezium-avro/build_cases.py

Every case is one Debezium message given as the JSON converter writes it — a Kafka
Connect schema and a payload (and the same for its Kafka key) — and turned here into
what Debezium's Avro converter writes: the Avro schema of the Connect schema, following
the Connect Avro converters' published rules (Apicurio's / Confluent's ``AvroData``:
``int`` + ``connect.type`` for int8/int16, ``connect.name`` / ``connect.version`` /
``connect.parameters`` / ``connect.default`` on every named type, ``decimal`` /
``date`` / ``time-millis`` / ``timestamp-millis`` logical types on Connect's own,
``["null", T]`` for an optional field and ``[T, "null"]`` for one with a default, records
for structs, ``ConnectDefault`` for a struct without a name, a ``MapEntry`` array for a
map with non-string keys, names made Avro-valid as ``schema.name.adjustment.mode=avro``
does), and the payload as an Avro datum written by ``fastavro.schemaless_writer``,
framed with its schema id (ids 1, 2, ... in build order, as a fresh registry assigns
them; the schemas are ``schemas/<id>.avsc``). This translation is written here, apart
from anycdc's encoder, so the decoder is checked against an independent writer.

The expected events are NOT the Avro decoder's output: they are what the ``debezium-json``
decoder (the reference, with its own reviewed golden cases) gives for the same message
in JSON — the payload as the Avro record carries it (the schema's fields, in order) —
with ``format`` renamed. The cases (see README.md) are the Debezium documentation's and
test resources' messages that carry a schema, and ``writer_*`` messages written here for
what those lack (every logical type, keys, deletes without a before image, TOAST
placeholders, transaction markers, schema changes, MongoDB, plain Avro logical types).
"""

from __future__ import annotations

import base64
import io
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

from anycdc.event import dumps, event_to_json
from anycdc.formats.debezium.format import DebeziumJson

HERE = Path(__file__).parent
JSON_CASES = HERE.parent / "debezium-json"
SCHEMAS = HERE / "schemas"
OPTIONS = {"schema_dir": "tests/cases/debezium-avro/schemas"}

# Connect -> Avro primitive types
PRIMITIVE = {
    "int8": "int", "int16": "int", "int32": "int", "int64": "long", "float32": "float",
    "float64": "double", "boolean": "boolean", "string": "string", "bytes": "bytes",
    "double": "double", "float": "float",  # producers' aliases (Flink, Paimon fixtures)
}  # fmt: skip
LOGICAL = {
    "org.apache.kafka.connect.data.Date": "date",
    "org.apache.kafka.connect.data.Time": "time-millis",
    "org.apache.kafka.connect.data.Timestamp": "timestamp-millis",
}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
NAMESPACE = "io.confluent.connect.avro"


def avro_name(name: str) -> str:
    """schema.name.adjustment.mode=avro: invalid characters -> _, no leading digit."""
    parts = [re.sub(r"[^A-Za-z0-9_]", "_", p) or "_" for p in name.split(".")]
    return ".".join("_" + p if p[0].isdigit() else p for p in parts)


class Translator:
    """Connect schema (JSON converter shape) -> Avro schema, as AvroData writes it."""

    def __init__(self) -> None:
        self.defined: set[str] = set()
        self.unnamed = 0

    def schema(self, connect: dict[str, Any]) -> Any:
        ctype = connect["type"]
        name = connect.get("name")
        if ctype == "struct":
            if name:
                full = avro_name(name)
            else:
                self.unnamed += 1
                full = f"{NAMESPACE}.ConnectDefault" + (
                    str(self.unnamed) if self.unnamed > 1 else ""
                )
            if full in self.defined:
                return self.optional(connect, full)
            self.defined.add(full)
            namespace, _, short = full.rpartition(".")
            fields = []
            for field in connect["fields"]:
                entry: dict[str, Any] = {"name": field["field"], "type": self.schema(field)}
                if "default" in field:
                    entry["default"] = field["default"]
                elif field.get("optional"):
                    entry["default"] = None
                fields.append(entry)
            base: dict[str, Any] = {"type": "record", "name": short, "fields": fields}
            if namespace:
                base["namespace"] = namespace
            name = full if name else None
        elif ctype == "array":
            base = {"type": "array", "items": self.schema(connect["items"])}
        elif ctype == "map":
            if connect["keys"]["type"] == "string":
                base = {"type": "map", "values": self.schema(connect["values"])}
            else:
                entry_fields = [
                    {"name": "key", "type": self.schema(connect["keys"])},
                    {"name": "value", "type": self.schema(connect["values"])},
                ]
                entry = {"type": "record", "name": "MapEntry", "namespace": NAMESPACE,
                         "fields": entry_fields}  # fmt: skip
                base = {"type": "array", "items": entry}
        else:
            base = {"type": PRIMITIVE[ctype]}
        if connect.get("version") is not None:
            base["connect.version"] = connect["version"]
        if connect.get("parameters"):
            base["connect.parameters"] = connect["parameters"]
        if "default" in connect:
            base["connect.default"] = connect["default"]
        if name:
            base["connect.name"] = name
        if ctype in ("int8", "int16"):
            base["connect.type"] = ctype
        if name == DECIMAL:
            params = connect.get("parameters") or {}
            base.update(
                logicalType="decimal",
                precision=int(params.get("connect.decimal.precision", 64)),
                scale=int(params.get("scale", 0)),
            )
        elif name in LOGICAL:
            base["logicalType"] = LOGICAL[name]
        return self.optional(connect, base["type"] if len(base) == 1 else base)

    @staticmethod
    def optional(connect: dict[str, Any], base: Any) -> Any:
        if not connect.get("optional"):
            return base
        return [base, "null"] if connect.get("default") is not None else ["null", base]


def project(value: Any, connect: dict[str, Any]) -> Any:
    """The JSON payload as the Avro record carries it: the schema's fields only (a missing
    one is null), in the schema's order; an integer sent as text (the seed's
    ``"event_serial_no": "1"``) as the integer Avro holds, a decimal sent as a number
    (``decimal.format=NUMERIC``) as Connect's unscaled bytes."""
    if value is None:
        return None
    if connect["type"] == "struct":
        return {f["field"]: project(value.get(f["field"]), f) for f in connect["fields"]}
    if connect["type"] == "array":
        return [project(v, connect["items"]) for v in value]
    if connect["type"] in ("int8", "int16", "int32", "int64") and isinstance(value, str):
        return int(value)
    if connect.get("name") == DECIMAL and isinstance(value, (int, Decimal)):
        # decimal.format=NUMERIC in JSON; Avro always carries the unscaled bytes
        unscaled = int(Decimal(value).scaleb(int(connect["parameters"]["scale"])))
        size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return b64(unscaled.to_bytes(size, "big", signed=True))
    return value


def datum(value: Any, connect: dict[str, Any]) -> Any:
    """A projected JSON payload value -> the Avro datum (base64 -> bytes, numbers -> floats,
    a map with non-string keys -> MapEntry records)."""
    if value is None:
        return None
    ctype = connect["type"]
    if ctype == "struct":
        return {f["field"]: datum(value[f["field"]], f) for f in connect["fields"]}
    if ctype == "array":
        return [datum(v, connect["items"]) for v in value]
    if ctype == "map":
        if connect["keys"]["type"] == "string":
            return {k: datum(v, connect["values"]) for k, v in value.items()}
        return [
            {"key": datum(k, connect["keys"]), "value": datum(v, connect["values"])}
            for k, v in value
        ]
    if ctype == "bytes":
        return base64.b64decode(value)
    if PRIMITIVE[ctype] in ("float", "double"):
        return float(value)
    return value


def relaxed(connect: dict[str, Any], value: Any) -> dict[str, Any]:
    """The schema with a required field the documented payload lacks (or sends null, e.g.
    ``docs_postgresql_L763``'s ``source.ts_us``) made optional, as the message is."""
    if connect["type"] != "struct" or not isinstance(value, dict):
        return connect
    fields = []
    for f in connect["fields"]:
        inner = value.get(f["field"])
        f = relaxed(f, inner)
        if inner is None and not f.get("optional"):
            f = {**f, "optional": True}
        fields.append(f)
    return {**connect, "fields": fields}


def normalized(connect: Any) -> Any:
    """Aliases some producers write (``double``, ``float``) as Connect's own type names,
    as Avro carries them."""
    if isinstance(connect, dict):
        out = {k: normalized(v) for k, v in connect.items()}
        if out.get("type") == "double":
            out["type"] = "float64"
        elif out.get("type") == "float":
            out["type"] = "float32"
        return out
    if isinstance(connect, list):
        return [normalized(v) for v in connect]
    return connect


class Builder:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        for old in SCHEMAS.glob("*.avsc"):
            old.unlink()
        SCHEMAS.mkdir(exist_ok=True)
        self.reference = DebeziumJson()

    def framed(self, connect: dict[str, Any], payload: Any, avro: Any = None) -> bytes:
        avro = avro if avro is not None else Translator().schema(connect)
        text = json.dumps(avro, indent=1)
        if text not in self.ids:
            self.ids[text] = len(self.ids) + 1
            (SCHEMAS / f"{self.ids[text]}.avsc").write_text(text + "\n")
        out = io.BytesIO()
        out.write(b"\x00" + self.ids[text].to_bytes(4, "big"))
        fastavro.schemaless_writer(out, fastavro.parse_schema(avro), datum(payload, connect))
        return out.getvalue()

    def case(
        self,
        name: str,
        connect: dict[str, Any],
        payload: Any,
        key: tuple[dict[str, Any], Any] | None = None,
        avro: Any = None,
    ) -> None:
        connect = relaxed(normalized(connect), payload)
        payload = project(payload, connect)
        (HERE / f"{name}.avro").write_bytes(self.framed(connect, payload, avro))
        (HERE / f"{name}.options.json").write_text(json.dumps(OPTIONS) + "\n")
        key_json = None
        if key is not None:
            key_schema, key_payload = normalized(key[0]), project(key[1], key[0])
            (HERE / f"{name}.key.avro").write_bytes(self.framed(key_schema, key_payload))
            key_json = dumps({"schema": key_schema, "payload": key_payload}).encode()
        events = self.reference.decode(
            dumps({"schema": connect, "payload": payload}).encode(), key=key_json
        )
        lines = [event_to_json(e.with_changes(format="debezium-avro")) for e in events]
        (HERE / f"{name}.expected.jsonl").write_text("".join(line + "\n" for line in lines))


def json_case(file: str, line: int | None = None) -> tuple[dict[str, Any], Any]:
    text = (JSON_CASES / file).read_text()
    if line is not None:
        text = text.splitlines()[line]
    message = json.loads(text, parse_float=Decimal)
    return message["schema"], message["payload"]


# --------------------------------------------------------------------------- writer cases
def field(ctype: str, column: str, optional: bool = True, **extra: Any) -> dict[str, Any]:
    return {"type": ctype, "optional": optional, **extra, "field": column}


def named(ctype: str, column: str, logical: str, **extra: Any) -> dict[str, Any]:
    return field(ctype, column, name=logical, version=1, **extra)


def struct(name: str | None, fields: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "struct", "fields": fields, "optional": False, **extra}
    if name is not None:
        out["name"] = name
    return out


def as_field(schema: dict[str, Any], name: str, optional: bool = True) -> dict[str, Any]:
    return {**schema, "optional": optional, "field": name}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def postgres_source() -> dict[str, Any]:
    return struct(
        "io.debezium.connector.postgresql.Source",
        [
            field("string", "version", False),
            field("string", "connector", False),
            field("string", "name", False),
            field("int64", "ts_ms", False),
            named("string", "snapshot", "io.debezium.data.Enum",
                  parameters={"allowed": "true,last,false,incremental"}, default="false"),
            field("string", "db", False),
            field("string", "sequence"),
            field("string", "schema", False),
            field("string", "table", False),
            field("int64", "txId"),
            field("int64", "lsn"),
            field("int64", "xmin"),
        ],
    )  # fmt: skip


def pg_source_value(lsn: int, tx: int) -> dict[str, Any]:
    return {
        "version": "2.7.3.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1717171717000,
        "snapshot": "false", "db": "shop", "sequence": f'["{lsn - 8}","{lsn}"]',
        "schema": "public", "table": "everything", "txId": tx, "lsn": lsn, "xmin": None,
    }  # fmt: skip


def envelope(prefix: str, value: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    return struct(
        f"{prefix}.Envelope",
        [
            as_field(value, "before"),
            as_field(value, "after"),
            as_field(source, "source", optional=False),
            field("string", "op", False),
            field("int64", "ts_ms"),
            as_field(
                struct("event.block", [field("string", "id", False),
                                       field("int64", "total_order", False),
                                       field("int64", "data_collection_order", False)],
                       version=1),
                "transaction",
            ),
        ],
        version=1,
    )  # fmt: skip


EVERY_TYPE = struct(
    "pg.public.everything.Value",
    [
        field("int16", "id", False),
        field("string", "code", False),
        field("int8", "tiny"),
        field("int32", "i32"),
        field("int64", "i64"),
        field("float32", "f32"),
        field("float64", "f64"),
        field("boolean", "flag"),
        field("bytes", "raw"),
        named("bytes", "price", "org.apache.kafka.connect.data.Decimal",
              parameters={"scale": "2", "connect.decimal.precision": "10"}),
        named("bytes", "precise", "org.apache.kafka.connect.data.Decimal",
              parameters={"scale": "4"}),
        as_field(struct("io.debezium.data.VariableScaleDecimal",
                        [field("int32", "scale", False), field("bytes", "value", False)],
                        version=1, doc="Variable scaled decimal"), "vsd"),
        named("int32", "d", "io.debezium.time.Date"),
        named("int32", "t_ms", "io.debezium.time.Time"),
        named("int64", "t_us", "io.debezium.time.MicroTime"),
        named("int64", "t_ns", "io.debezium.time.NanoTime"),
        named("int64", "ts_ms", "io.debezium.time.Timestamp"),
        named("int64", "ts_us", "io.debezium.time.MicroTimestamp"),
        named("int64", "ts_ns", "io.debezium.time.NanoTimestamp"),
        named("string", "tstz", "io.debezium.time.ZonedTimestamp"),
        named("string", "ttz", "io.debezium.time.ZonedTime"),
        named("int32", "yr", "io.debezium.time.Year"),
        named("int64", "dur", "io.debezium.time.MicroDuration"),
        named("string", "ival", "io.debezium.time.Interval"),
        named("string", "doc", "io.debezium.data.Json"),
        named("string", "mood", "io.debezium.data.Enum", parameters={"allowed": "sad,ok,happy"}),
        named("string", "tags", "io.debezium.data.EnumSet", parameters={"allowed": "a,b,c"}),
        named("string", "uid", "io.debezium.data.Uuid"),
        named("string", "xml", "io.debezium.data.Xml"),
        named("bytes", "bits", "io.debezium.data.Bits", parameters={"length": "12"}),
        named("int32", "c_date", "org.apache.kafka.connect.data.Date"),
        named("int32", "c_time", "org.apache.kafka.connect.data.Time"),
        named("int64", "c_ts", "org.apache.kafka.connect.data.Timestamp"),
        as_field(struct("io.debezium.data.geometry.Point",
                        [field("float64", "x", False), field("float64", "y", False),
                         field("bytes", "wkb"), field("int32", "srid")],
                        version=1, doc="Geometry (POINT)"), "pos"),
        {"type": "array", "items": {"type": "string", "optional": True}, "optional": True,
         "field": "names"},
        {"type": "map", "keys": {"type": "string", "optional": False},
         "values": {"type": "int32", "optional": True}, "optional": True, "field": "counts"},
        {"type": "map", "keys": {"type": "int32", "optional": False},
         "values": {"type": "string", "optional": True}, "optional": True, "field": "labels"},
        as_field(struct(None, [field("string", "street"), field("float64", "lat")]), "addr"),
    ],
    version=1,
)  # fmt: skip
EVERY_VALUE_BEFORE = {
    "id": 7,
    "code": "A-7",
    **{f["field"]: None for f in EVERY_TYPE["fields"][2:]},
}
EVERY_VALUE = {
    "id": 7, "code": "A-7", "tiny": -128, "i32": 2147483647, "i64": -9223372036854775808,
    "f32": Decimal("1.5"), "f64": Decimal("2.718281828459045"), "flag": True,
    "raw": b64(b"\x00\x01\xfe\xff"),
    "price": b64((-123456).to_bytes(3, "big", signed=True)),  # -1234.56
    "precise": b64((10**25 + 1).to_bytes(11, "big", signed=True)),  # 1000000000000000000000.0001
    "vsd": {"scale": 3, "value": b64((314159).to_bytes(3, "big", signed=True))},  # 314.159
    "d": 19876, "t_ms": 45296789, "t_us": 45296789012, "t_ns": 45296789012345,
    "ts_ms": 1717171717123, "ts_us": 1717171717123456, "ts_ns": 1717171717123456789,
    "tstz": "2024-05-31T16:08:37.123456+02:00", "ttz": "12:34:56.789Z", "yr": 2024,
    "dur": 93784000005, "ival": "P1Y2M3DT4H5M6.78S", "doc": '{"a": [1, 2.5]}',
    "mood": "happy", "tags": "a,c", "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "xml": "<a>1</a>", "bits": b64(b"\x0f\x0a"), "c_date": -1, "c_time": 86399999,
    "c_ts": -1000, "pos": {"x": Decimal("1.5"), "y": Decimal("-2.25"),
                           "wkb": b64(b"\x01\x01\x00\x00\x00"), "srid": 4326},
    "names": ["x", None, "z"], "counts": {"a": 1, "b": None}, "labels": [[1, "one"], [2, None]],
    "addr": {"street": "Main St", "lat": Decimal("48.5")},
}  # fmt: skip
EVERY_KEY = struct(
    "pg.public.everything.Key", [field("int16", "id", False), field("string", "code", False)]
)


def writer_cases(build: Builder) -> None:
    source = postgres_source()
    value = EVERY_TYPE
    env = envelope("pg.public.everything", value, source)
    key = (EVERY_KEY, {"id": 7, "code": "A-7"})
    build.case(
        "writer_every_logical_type",
        env,
        {"before": EVERY_VALUE_BEFORE, "after": EVERY_VALUE, "source": pg_source_value(900, 77),
         "op": "u", "ts_ms": 1717171717555,
         "transaction": {"id": "77:900", "total_order": 3, "data_collection_order": 1}},
        key,
    )  # fmt: skip
    build.case(
        "writer_delete_without_before_uses_the_key",
        env,
        {"before": None, "after": None, "source": pg_source_value(1000, 78), "op": "d",
         "ts_ms": 1717171718000},
        key,
    )  # fmt: skip
    toast_value = struct(
        "pg.public.docs.Value",
        [field("int32", "id", False), field("string", "body"), field("bytes", "blob"),
         field("string", "title")],
    )  # fmt: skip
    unavailable = "__debezium_unavailable_value"
    build.case(
        "writer_postgres_toast_placeholders",
        envelope("pg.public.docs", toast_value, source),
        {"before": None,
         "after": {"id": 1, "body": unavailable, "blob": b64(unavailable.encode()), "title": "t2"},
         "source": {**pg_source_value(1100, 79), "table": "docs"}, "op": "u",
         "ts_ms": 1717171719000},
        (struct("pg.public.docs.Key", [field("int32", "id", False)]), {"id": 1}),
    )  # fmt: skip
    markers = struct(
        "io.debezium.connector.common.TransactionMetadataValue",
        [
            field("string", "status", False),
            field("string", "id", False),
            field("int64", "event_count"),
            {"type": "array", "optional": True, "field": "data_collections",
             "items": struct(None, [field("string", "data_collection", False),
                                    field("int64", "event_count", False)])},
            field("int64", "ts_ms", False),
        ],
        version=1,
    )  # fmt: skip
    build.case(
        "writer_transaction_begin",
        markers,
        {"status": "BEGIN", "id": "571:53195829", "event_count": None,
         "data_collections": None, "ts_ms": 1486500577125},
    )  # fmt: skip
    build.case(
        "writer_transaction_end",
        markers,
        {"status": "END", "id": "571:53195829", "event_count": 2,
         "data_collections": [{"data_collection": "s1.a", "event_count": 1},
                              {"data_collection": "s1.b", "event_count": 1}],
         "ts_ms": 1486500577691},
    )  # fmt: skip
    column = struct(
        "io.debezium.connector.schema.Column",
        [field("string", "name", False), field("int32", "jdbcType", False),
         field("int32", "nativeType"), field("string", "typeName", False),
         field("string", "typeExpression"), field("string", "charsetName"),
         field("int32", "length"), field("int32", "scale"), field("int32", "position", False),
         field("boolean", "optional"), field("boolean", "autoIncremented"),
         field("boolean", "generated")],
    )  # fmt: skip
    table = struct(
        "io.debezium.connector.schema.Table",
        [field("string", "defaultCharsetName"),
         {"type": "array", "items": {"type": "string", "optional": False}, "optional": True,
          "field": "primaryKeyColumnNames"},
         {"type": "array", "items": column, "optional": False, "field": "columns"}],
    )  # fmt: skip
    change = struct(
        "io.debezium.connector.schema.Change",
        [field("string", "type", False), field("string", "id", False), as_field(table, "table")],
    )
    mysql_source = struct(
        "io.debezium.connector.mysql.Source",
        [field("string", "version", False), field("string", "connector", False),
         field("string", "name", False), field("int64", "ts_ms", False),
         named("string", "snapshot", "io.debezium.data.Enum",
               parameters={"allowed": "true,last,false,incremental"}, default="false"),
         field("string", "db", False), field("string", "table"),
         field("int64", "server_id", False), field("string", "gtid"),
         field("string", "file", False), field("int64", "pos", False),
         field("int32", "row", False)],
    )  # fmt: skip
    ddl = struct(
        "io.debezium.connector.mysql.SchemaChangeValue",
        [as_field(mysql_source, "source", optional=False), field("int64", "ts_ms", False),
         field("string", "databaseName"), field("string", "schemaName"),
         field("string", "ddl"),
         {"type": "array", "items": change, "optional": False, "field": "tableChanges"}],
    )  # fmt: skip
    key_schema, key_payload = json_case("docs_mysql_L149.json")
    build.case(
        "writer_schema_change_with_table",
        ddl,
        {"source": {"version": "2.7.3.Final", "connector": "mysql", "name": "mysql",
                    "ts_ms": 1717171720000, "snapshot": "false", "db": "inventory",
                    "table": "customers", "server_id": 223344, "gtid": None,
                    "file": "mysql-bin.000003", "pos": 154, "row": 0},
         "ts_ms": 1717171720100, "databaseName": "inventory", "schemaName": None,
         "ddl": "CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, total DECIMAL(10,2))",
         "tableChanges": [{"type": "CREATE", "id": '"inventory"."customers"', "table": {
             "defaultCharsetName": "utf8mb4", "primaryKeyColumnNames": ["id"],
             "columns": [
                 {"name": "id", "jdbcType": 4, "nativeType": None, "typeName": "INT",
                  "typeExpression": "INT", "charsetName": None, "length": None, "scale": None,
                  "position": 1, "optional": False, "autoIncremented": False,
                  "generated": False},
                 {"name": "total", "jdbcType": 3, "nativeType": None, "typeName": "DECIMAL",
                  "typeExpression": "DECIMAL", "charsetName": None, "length": 10, "scale": 2,
                  "position": 2, "optional": True, "autoIncremented": False,
                  "generated": False}]}}]},
        (key_schema, key_payload),
    )  # fmt: skip
    mongo_source = struct(
        "io.debezium.connector.mongo.Source",
        [field("string", "version", False), field("string", "connector", False),
         field("string", "name", False), field("int64", "ts_ms", False),
         named("string", "snapshot", "io.debezium.data.Enum",
               parameters={"allowed": "true,last,false,incremental"}, default="false"),
         field("string", "db", False), field("string", "rs", False),
         field("string", "collection", False), field("int32", "ord", False),
         field("string", "lsid"), field("int64", "txnNumber")],
    )  # fmt: skip
    update_description = struct(
        "io.debezium.connector.mongodb.changestream.updatedescription",
        [{"type": "array", "items": {"type": "string", "optional": False}, "optional": True,
          "field": "removedFields"},
         named("string", "updatedFields", "io.debezium.data.Json"),
         {"type": "array", "optional": True, "field": "truncatedArrays",
          "items": struct(None, [field("string", "field", False),
                                 field("int32", "size", False)])}],
    )  # fmt: skip
    mongo = struct(
        "mongo.inventory.customers.Envelope",
        [named("string", "before", "io.debezium.data.Json"),
         named("string", "after", "io.debezium.data.Json"),
         as_field(update_description, "updateDescription"),
         as_field(mongo_source, "source", optional=False),
         field("string", "op"), field("int64", "ts_ms")],
    )  # fmt: skip
    build.case(
        "writer_mongodb_update_description",
        mongo,
        {"before": None, "after": None,
         "updateDescription": {"removedFields": ["nickname"],
                               "updatedFields": '{"email": "x@example.com", "visits": {"$numberLong": "5"}}',
                               "truncatedArrays": [{"field": "tags", "size": 1}]},
         "source": {"version": "2.7.3.Final", "connector": "mongodb", "name": "mongo",
                    "ts_ms": 1717171721000, "snapshot": "false", "db": "inventory",
                    "rs": "rs0", "collection": "customers", "ord": 4, "lsid": None,
                    "txnNumber": None},
         "op": "u", "ts_ms": 1717171721050},
        (struct("mongo.inventory.customers.Key", [field("string", "id", False)]),
         {"id": '{"$oid": "596e275826f08b2730779e1f"}'}),
    )  # fmt: skip
    # a producer that is not Kafka Connect: Avro logical types without connect.* properties
    # (the expected events: the Connect types anycdc maps them to, see the format's doc)
    plain_value = struct(
        "plain.Value",
        [field("int64", "id", False),
         named("bytes", "amount", "org.apache.kafka.connect.data.Decimal",
               parameters={"scale": "3", "connect.decimal.precision": "12"}),
         named("int32", "day", "org.apache.kafka.connect.data.Date"),
         named("int32", "at_ms", "org.apache.kafka.connect.data.Time"),
         named("int64", "at_us", "io.debezium.time.MicroTime"),
         named("int64", "ts_ms", "org.apache.kafka.connect.data.Timestamp"),
         named("int64", "ts_us", "io.debezium.time.MicroTimestamp"),
         named("int64", "local_ms", "io.debezium.time.Timestamp"),
         named("string", "uid", "io.debezium.data.Uuid")],
    )  # fmt: skip
    plain_source = struct(
        "plain.Source",
        [field("string", "version", False), field("string", "connector", False),
         field("string", "name", False), field("int64", "ts_ms", False),
         field("string", "db", False), field("string", "table", False)],
    )  # fmt: skip
    plain_env = struct(
        "plain.Envelope",
        [as_field(plain_value, "before"), as_field(plain_value, "after"),
         as_field(plain_source, "source", optional=False), field("string", "op", False),
         field("int64", "ts_ms")],
    )  # fmt: skip
    plain_avro = {
        "type": "record", "name": "Envelope", "namespace": "plain",
        "fields": [
            {"name": "before", "type": ["null", {
                "type": "record", "name": "Value", "fields": [
                    {"name": "id", "type": "long"},
                    {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                                         "precision": 12, "scale": 3}]},
                    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
                    {"name": "at_ms", "type": ["null", {"type": "int", "logicalType": "time-millis"}]},
                    {"name": "at_us", "type": ["null", {"type": "long", "logicalType": "time-micros"}]},
                    {"name": "ts_ms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
                    {"name": "ts_us", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
                    {"name": "local_ms", "type": ["null", {"type": "long",
                                                           "logicalType": "local-timestamp-millis"}]},
                    {"name": "uid", "type": ["null", {"type": "string", "logicalType": "uuid"}]}]}],
             "default": None},
            {"name": "after", "type": ["null", "plain.Value"], "default": None},
            {"name": "source", "type": {"type": "record", "name": "Source", "fields": [
                {"name": n, "type": t} for n, t in (("version", "string"), ("connector", "string"),
                                                    ("name", "string"), ("ts_ms", "long"),
                                                    ("db", "string"), ("table", "string"))]}},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": ["null", "long"], "default": None},
        ],
    }  # fmt: skip
    build.case(
        "writer_plain_avro_logical_types",
        plain_env,
        {"before": None,
         "after": {"id": 1, "amount": b64((-5).to_bytes(1, "big", signed=True)), "day": 0,
                   "at_ms": 1, "at_us": 86399999999, "ts_ms": 0, "ts_us": -1,
                   "local_ms": 1717171717123, "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
         "source": {"version": "1.0", "connector": "mysql", "name": "plain",
                    "ts_ms": 1717171722000, "db": "d", "table": "t"},
         "op": "c", "ts_ms": 1717171722001},
        avro=plain_avro,
    )  # fmt: skip


def doc_cases(build: Builder) -> None:
    build.case("seed_sqlserver_create", *json_case("seed_sqlserver_create.json"))
    build.case("corpus_core_serde_with_schema", *json_case("corpus_core_serde_with_schema.json"))
    build.case(
        "corpus_core_serde_with_schema_head", *json_case("corpus_core_serde_with_schema_head.json")
    )
    build.case(
        "docs_mysql_create_L1143",
        *json_case("docs_mysql_L1143.json"),
        key=json_case("docs_mysql_L1046.json"),
    )
    build.case(
        "docs_oracle_create_L1573",
        *json_case("docs_oracle_L1573.json"),
        key=json_case("docs_oracle_L1426.json"),
    )
    build.case(
        "docs_sqlserver_create_L1045",
        *json_case("docs_sqlserver_L1045.json"),
        key=json_case("docs_sqlserver_L940.json"),
    )
    build.case(
        "docs_tutorial_create_L135",
        *json_case("docs_tutorial_create_L135.json"),
        key=json_case("docs_tutorial_create_L96.json"),
    )
    build.case("docs_postgresql_create_L763", *json_case("docs_postgresql_L763.json"))
    build.case(
        "docs_mongodb_create_L774",
        *json_case("docs_repaired_mongodb_create_L774.json"),
        key=json_case("docs_mongodb_L671.json"),
    )
    build.case("corpus_paimon_all_types", *json_case("corpus_paimon_debezium.jsonl", line=25))
    build.case("corpus_paimon_products_insert", *json_case("corpus_paimon_debezium.jsonl", line=27))


if __name__ == "__main__":
    builder = Builder()
    doc_cases(builder)
    writer_cases(builder)
    print(f"{len(builder.ids)} schemas in {SCHEMAS}")
