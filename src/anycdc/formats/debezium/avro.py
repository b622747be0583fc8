"""Debezium change events written by an Avro converter in the Confluent wire format.

Each Kafka message value (and key) is ``0x00`` + a 4-byte big-endian schema id + the Avro
binary encoding of one record written with that schema; the schema comes from a schema
registry (Confluent's ``AvroConverter``, Apicurio's with ``as-confluent``, Karapace ...)
or, for files and tests, from a folder of ``.avsc`` files (see
:mod:`anycdc.formats.schema_source`). The record is Debezium's envelope (``before``,
``after``, ``source``, ``op``, ``ts_ms``, ``transaction``), a schema-change value, a
transaction marker or a heartbeat, exactly as with the JSON converter.

How a message is decoded: its writer schema is read (once per process and id), mapped
back to the Kafka Connect schema it was made from (the converters' own rules: ``int`` +
``connect.type`` ``int8``/``int16``, ``connect.name`` / ``connect.parameters`` /
``connect.version`` on every logical type, ``["null", T]`` for an optional field, records
for structs, ``MapEntry`` arrays for maps with non-string keys; Avro logical types
without ``connect.name`` map to their Connect / Debezium equivalents), and the record's
values are given the JSON converter's rendering (bytes as base64 text). From there the
:class:`~anycdc.formats.debezium.format.DebeziumJson` decoder does the rest, so every rule of
``debezium-json`` holds here too: all logical types (``Decimal`` with its scale,
``VariableScaleDecimal``, ``io.debezium.time.*``, ``Json``, ``Enum``, ``Bits`` ...),
positions, transactions, MongoDB documents, TOAST placeholders, partial deletes. Differences:

* key columns come from the Kafka key's own Avro record (its field names, in order);
* a FLOAT32 value is the exact float32 the message holds (JSON prints it shortest);
* numbers inside a struct/array/map column are exact decimals, as JSON numbers are.

Errors: a message that is not framed, names an id the source does not hold, or does not
fit its schema is a DecodeError (dead letter). A registry that cannot answer (down,
refusing the credentials) raises :class:`~anycdc.formats.schema_source.SchemaSourceError`:
the pipeline fails the batch, to be retried, rather than dead-letter every message.

The encoder writes what the Avro converter writes for the ``debezium-json`` encoder's
Connect schema, registers the schema under ``<topic>-value`` (``<topic>-key`` for
:meth:`DebeziumAvro.encode_key`; the topic is Debezium's: ``<server>.<db>[.<schema>].<table>``,
``<server>`` for schema changes, ``<server>.transaction``,
``__debezium-heartbeat.<server>``) and frames the record with the id. Avro images hold
every column: a column an image lacks is written as Debezium's TOAST placeholder for a
PostgreSQL text/bytes column and refused otherwise. A row change without column types gets
types inferred from its values.

>>> fmt = DebeziumAvro()  # no registry_url / schema_dir: this process's schemas
>>> from anycdc.event import ChangeEvent, Column, Op
>>> from anycdc.values import LogicalType
>>> event = ChangeEvent(op=Op.INSERT, format="debezium-avro", database="shop", table="items",
...     key=("id",), after={"id": 1, "price": Decimal("9.90")},
...     columns={"id": Column(LogicalType("int64"), "int64"),
...              "price": Column(LogicalType("decimal", 10, 2), N_DECIMAL)}, ts_ms=5)
>>> [message] = fmt.encode(event)
>>> message[0], len(message) > 5
(0, True)
>>> [decoded] = fmt.decode(message, key=fmt.encode_key(event))
>>> decoded.key, decoded.after["price"], str(decoded.columns["price"].type)
(('id',), Decimal('9.90'), 'decimal(10,2)')
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar, Final

import fastavro
import msgspec

from anycdc.errors import EncodeError, OptionError, type_name
from anycdc.event import ROW_OPS, ChangeEvent, Column, Op
from anycdc.formats.base import MAX_MESSAGE_BYTES, Capabilities, Format
from anycdc.formats.codecs.avro import AvroDataError, AvroReader
from anycdc.formats.debezium.encode import DEFAULT_SERVER_NAME
from anycdc.formats.debezium.format import DebeziumJson
from anycdc.formats.debezium.plans import EnvelopePlan
from anycdc.formats.debezium.wire import (
    AFTER,
    BEFORE,
    CONNECTOR_MONGODB,
    CONNECTOR_POSTGRESQL,
    ENCODER_VERSION,
    N_CONNECT_DATE,
    N_CONNECT_TIME,
    N_CONNECT_TIMESTAMP,
    N_DECIMAL,
    N_MICRO_TIME,
    N_MICRO_TIMESTAMP,
    N_NANO_TIMESTAMP,
    N_TIMESTAMP,
    N_UUID,
    PARAM_PRECISION,
    PARAM_SCALE,
    SCHEMA_FIELD,
    SCHEMA_FIELDS,
    SCHEMA_ITEMS,
    SCHEMA_NAME,
    SCHEMA_OPTIONAL,
    SCHEMA_PARAMETERS,
    SCHEMA_TYPE,
    SCHEMA_VERSION,
    T_ARRAY,
    T_BOOLEAN,
    T_BYTES,
    T_DOUBLE_ALIAS,
    T_FLOAT32,
    T_FLOAT64,
    T_FLOAT_ALIAS,
    T_INT8,
    T_INT16,
    T_INT32,
    T_INT64,
    T_MAP,
    T_STRING,
    T_STRUCT,
    UNAVAILABLE_VALUE,
    UNAVAILABLE_VALUE_BASE64,
    X_CONNECTOR,
)
from anycdc.formats.options import OptionSpec, optional_text, text, typed
from anycdc.formats.schema_source import (
    ConfluentRegistry,
    MemorySchemas,
    SchemaFolder,
    SchemaNotFound,
    SchemaSource,
    frame,
    parse_timeout,
    registered_id,
    schema_text,
    unframe,
)
from anycdc.values import UNKNOWN

# --------------------------------------------------------------------------- wire names
# properties the Connect Avro converters put on Avro schemas (Confluent's / Apicurio's AvroData)
CONNECT_NAME: Final = "connect.name"
CONNECT_TYPE: Final = "connect.type"
CONNECT_PARAMETERS: Final = "connect.parameters"
CONNECT_VERSION: Final = "connect.version"
CONNECT_INTERNAL_TYPE: Final = "connect.internal.type"
CONNECT_NAMESPACE: Final = "io.confluent.connect.avro"
DEFAULT_RECORD_NAME: Final = "ConnectDefault"  # a struct without a name
MAP_ENTRY: Final = "MapEntry"  # a map with non-string keys: array of {key, value} records
MAP_KEY: Final = "key"
MAP_VALUE: Final = "value"
MAP_KEYS: Final = "keys"  # Connect JSON schema of a map
MAP_VALUES: Final = "values"
LOGICAL_TYPE: Final = "logicalType"
DECIMAL_PRECISION: Final = "precision"
DECIMAL_SCALE: Final = "scale"
DEFAULT_DECIMAL_PRECISION: Final = 64  # what AvroData writes when Connect gives none

A_NULL: Final = "null"
A_BOOLEAN: Final = "boolean"
A_INT: Final = "int"
A_LONG: Final = "long"
A_FLOAT: Final = "float"
A_DOUBLE: Final = "double"
A_BYTES: Final = "bytes"
A_STRING: Final = "string"
A_RECORD: Final = "record"
A_ERROR: Final = "error"
A_ENUM: Final = "enum"
A_FIXED: Final = "fixed"
A_ARRAY: Final = "array"
A_MAP: Final = "map"

# options
OPT_REGISTRY_URL: Final = "registry_url"
OPT_REGISTRY_USER: Final = "registry_user"
OPT_REGISTRY_PASSWORD: Final = "registry_password"  # noqa: S105 - an option name
OPT_REGISTRY_TOKEN: Final = "registry_token"  # noqa: S105 - an option name
OPT_REGISTRY_TIMEOUT: Final = "registry_timeout"
OPT_REGISTRY_CA_FILE: Final = "registry_ca_file"
OPT_SCHEMA_DIR: Final = "schema_dir"
OPT_SERVER_NAME: Final = "server_name"
REGISTRY_URL: Final = optional_text(
    OPT_REGISTRY_URL,
    "Confluent-compatible schema registry URL(s), comma-separated, tried in order "
    "(Confluent / Karapace http://host:8081, Apicurio http://host:8080/apis/ccompat/v7); "
    "each schema id is fetched once per process. Encoders register their schemas there",
)
REGISTRY_USER: Final = optional_text(
    OPT_REGISTRY_USER, "registry basic-auth user (or user:password@ in the URL)"
)
REGISTRY_PASSWORD: Final = optional_text(
    OPT_REGISTRY_PASSWORD, "registry basic-auth password (secret: never printed)"
)
REGISTRY_TOKEN: Final = optional_text(
    OPT_REGISTRY_TOKEN, "registry bearer token (secret: never printed)"
)
REGISTRY_TIMEOUT: Final = typed(
    OPT_REGISTRY_TIMEOUT,
    "seconds per registry request",
    parse_timeout,
    kind="seconds",
    default="10",
)
REGISTRY_CA_FILE: Final = optional_text(
    OPT_REGISTRY_CA_FILE, "PEM file of the CA that signed the registry's certificate"
)
SCHEMA_DIR: Final = optional_text(
    OPT_SCHEMA_DIR,
    "instead of a registry: a folder of <id>.avsc files (the schema id in decimal, "
    "e.g. 42.avsc) readable by every executor; encoders write their schemas there "
    "(ids derived from the schema text)",
)
SERVER_NAME: Final = text(
    OPT_SERVER_NAME,
    "encoder: logical server name written in source.name, the schema names and the "
    "subjects (<server>.<db>.<table>-value)",
    DEFAULT_SERVER_NAME,
)

SUBJECT_VALUE: Final = "-value"
SUBJECT_KEY: Final = "-key"
TOPIC_TRANSACTION: Final = ".transaction"
TOPIC_HEARTBEAT: Final = "__debezium-heartbeat."

# Connect type of each Avro primitive
_FROM_AVRO: Final[Mapping[str, str]] = {
    A_BOOLEAN: T_BOOLEAN,
    A_INT: T_INT32,
    A_LONG: T_INT64,
    A_FLOAT: T_FLOAT32,
    A_DOUBLE: T_FLOAT64,
    A_BYTES: T_BYTES,
    A_STRING: T_STRING,
}
_TO_AVRO: Final[Mapping[str, str]] = {
    T_INT8: A_INT,
    T_INT16: A_INT,
    T_INT32: A_INT,
    T_INT64: A_LONG,
    T_FLOAT32: A_FLOAT,
    T_FLOAT64: A_DOUBLE,
    T_BOOLEAN: A_BOOLEAN,
    T_STRING: A_STRING,
    T_BYTES: A_BYTES,
    T_FLOAT_ALIAS: A_FLOAT,  # producers that write these names (Flink's fixtures)
    T_DOUBLE_ALIAS: A_DOUBLE,
}
# Avro logical types of schemas that carry no connect.name (other producers)
_LOGICAL_NAMES: Final[Mapping[str, str]] = {
    "decimal": N_DECIMAL,
    "date": N_CONNECT_DATE,
    "time-millis": N_CONNECT_TIME,
    "time-micros": N_MICRO_TIME,
    "timestamp-millis": N_CONNECT_TIMESTAMP,
    "timestamp-micros": N_MICRO_TIMESTAMP,
    "timestamp-nanos": N_NANO_TIMESTAMP,
    "local-timestamp-millis": N_TIMESTAMP,
    "local-timestamp-micros": N_MICRO_TIMESTAMP,
    "uuid": N_UUID,
}
# the Avro logical type AvroData adds to a Connect logical type
_CONNECT_LOGICAL: Final[Mapping[str, str]] = {
    N_CONNECT_DATE: "date",
    N_CONNECT_TIME: "time-millis",
    N_CONNECT_TIMESTAMP: "timestamp-millis",
}
_AVRO_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_NAME_CHAR: Final = re.compile(r"[^A-Za-z0-9_]")
_DEFAULT_NAME: Final = re.compile(re.escape(f"{CONNECT_NAMESPACE}.{DEFAULT_RECORD_NAME}") + r"\d*")
_PLAN_CACHE_SIZE: Final = 512

Convert = Callable[[Any], Any]


# =========================================================================== Avro -> Connect
class _ConnectSchemas:
    """Maps a writer schema (as fastavro parses it) back to its Kafka Connect schema, in the
    JSON converter's shape (``type``, ``optional``, ``name``, ``parameters``, ``fields`` ...)."""

    def __init__(self, named: Mapping[str, Any]) -> None:
        self._named = named

    def schema(self, node: Any, optional: bool = False, seen: frozenset[str] = frozenset()) -> Any:
        if isinstance(node, str):
            if node in _FROM_AVRO:
                return {SCHEMA_TYPE: _FROM_AVRO[node], SCHEMA_OPTIONAL: optional}
            if node == A_NULL or node not in self._named:
                return {SCHEMA_OPTIONAL: True}  # no type: the value is kept as it is
            node = self._named[node]
        if isinstance(node, list):
            branches = [b for b in node if b != A_NULL]
            nullable = len(branches) < len(node)
            if len(branches) == 1:
                return self.schema(branches[0], nullable, seen)
            return {SCHEMA_OPTIONAL: nullable}  # a general union: no one Connect type
        kind = node[SCHEMA_TYPE]
        if not isinstance(kind, str):
            return self.schema(kind, optional, seen)
        out: dict[str, Any]
        name = node.get(CONNECT_NAME)
        if kind in (A_RECORD, A_ERROR):
            full = node["name"]
            if name is None and not _DEFAULT_NAME.fullmatch(full):
                name = full
            out = {SCHEMA_TYPE: T_STRUCT, SCHEMA_OPTIONAL: optional}
            if full not in seen:  # a recursive reference stays an opaque struct
                inner = seen | {full}
                out[SCHEMA_FIELDS] = [
                    {**self.schema(f[SCHEMA_TYPE], False, inner), SCHEMA_FIELD: f["name"]}
                    for f in node[SCHEMA_FIELDS]
                ]
        elif kind == A_ENUM:
            out = {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: optional}
        elif kind == A_FIXED:
            out = {SCHEMA_TYPE: T_BYTES, SCHEMA_OPTIONAL: optional}
        elif kind == A_ARRAY:
            entry = self.map_entry(node[SCHEMA_ITEMS])
            if entry is not None:
                fields = {f["name"]: f[SCHEMA_TYPE] for f in entry[SCHEMA_FIELDS]}
                out = {
                    SCHEMA_TYPE: T_MAP,
                    MAP_KEYS: self.schema(fields[MAP_KEY], False, seen),
                    MAP_VALUES: self.schema(fields[MAP_VALUE], False, seen),
                    SCHEMA_OPTIONAL: optional,
                }
            else:
                items = self.schema(node[SCHEMA_ITEMS], False, seen)
                out = {SCHEMA_TYPE: T_ARRAY, SCHEMA_ITEMS: items, SCHEMA_OPTIONAL: optional}
        elif kind == A_MAP:
            out = {
                SCHEMA_TYPE: T_MAP,
                MAP_KEYS: {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: False},
                MAP_VALUES: self.schema(node[MAP_VALUES], False, seen),
                SCHEMA_OPTIONAL: optional,
            }
        else:
            ctype = _FROM_AVRO.get(kind)
            if kind == A_INT and node.get(CONNECT_TYPE) in (T_INT8, T_INT16):
                ctype = node[CONNECT_TYPE]
            out = {SCHEMA_OPTIONAL: optional} if ctype is None else {
                SCHEMA_TYPE: ctype, SCHEMA_OPTIONAL: optional
            }  # fmt: skip
        params = node.get(CONNECT_PARAMETERS)
        logical = node.get(LOGICAL_TYPE)
        if name is None and logical in _LOGICAL_NAMES:
            name = _LOGICAL_NAMES[logical]
        if name == N_DECIMAL and not isinstance(params, dict) and logical == "decimal":
            params = {PARAM_SCALE: str(node.get(DECIMAL_SCALE, 0))}
            if DECIMAL_PRECISION in node:
                params[PARAM_PRECISION] = str(node[DECIMAL_PRECISION])
        if isinstance(name, str):
            out[SCHEMA_NAME] = name
        if isinstance(params, dict):
            out[SCHEMA_PARAMETERS] = {str(k): str(v) for k, v in params.items()}
        version = node.get(CONNECT_VERSION)
        if type(version) is int:
            out[SCHEMA_VERSION] = version
        return out

    def map_entry(self, items: Any) -> Any:
        """The record of a map's ``MapEntry`` array items, or None for a plain array."""
        node = self._named.get(items) if isinstance(items, str) else items
        if not isinstance(node, dict) or node.get(SCHEMA_TYPE) != A_RECORD:
            return None
        full = str(node.get("name", ""))
        if (
            full == f"{CONNECT_NAMESPACE}.{MAP_ENTRY}"
            or node.get(CONNECT_INTERNAL_TYPE) == MAP_ENTRY
        ):
            names = [f["name"] for f in node[SCHEMA_FIELDS]]
            return node if names == [MAP_KEY, MAP_VALUE] else None
        return None


# =========================================================================== Avro values -> JSON's
def _base64(value: Any) -> str:
    return base64.b64encode(value).decode("ascii")


def _exact(value: Any) -> Any:
    return Decimal(repr(value)) if type(value) is float else value


def _as_json(value: Any) -> Any:
    """Any Avro value as the JSON converter renders it when its schema says nothing more."""
    kind = type(value)
    if kind is bytes:
        return _base64(value)
    if kind is float:
        return Decimal(repr(value))
    if kind is dict:
        return {k: _as_json(v) for k, v in value.items()}
    if kind is list:
        return [_as_json(v) for v in value]
    return value


class _JsonValues:
    """Compiles, per writer schema, what turns a read record into the JSON converter's payload:
    bytes -> base64 text; floats inside a struct/array/map column -> exact decimals (the JSON
    converter's numbers); a ``MapEntry`` array -> ``[key, value]`` pairs. None: nothing to do.

    ``depth`` counts records and containers from the message's record (0): a row's columns
    are at depth 2 (envelope, image), their parts deeper.
    """

    def __init__(self, named: Mapping[str, Any], schemas: _ConnectSchemas) -> None:
        self._named = named
        self._schemas = schemas

    def converter(self, node: Any, depth: int = 0, seen: frozenset[str] = frozenset()) -> Any:
        if isinstance(node, str):
            if node in (A_BYTES,):
                return _base64
            if node in (A_FLOAT, A_DOUBLE):
                return _exact if depth > 2 else None
            if node in _FROM_AVRO or node == A_NULL or node not in self._named:
                return None
            node = self._named[node]
        if isinstance(node, list):
            branches = [b for b in node if b != A_NULL]
            if len(branches) == 1:
                return self.converter(branches[0], depth, seen)
            if all(self.converter(b, depth, seen) is None for b in branches):
                return None
            return _as_json
        kind = node[SCHEMA_TYPE]
        if not isinstance(kind, str):
            return self.converter(kind, depth, seen)
        if kind in (A_RECORD, A_ERROR):
            full = node["name"]
            if full in seen:
                return _as_json
            inner = seen | {full}
            return _record_converter(
                [
                    (f["name"], self.converter(f[SCHEMA_TYPE], depth + 1, inner))
                    for f in node["fields"]
                ]
            )
        if kind == A_FIXED:
            return _base64
        if kind == A_ARRAY:
            entry = self._schemas.map_entry(node[SCHEMA_ITEMS])
            if entry is not None:
                types = {f["name"]: f[SCHEMA_TYPE] for f in entry["fields"]}
                return _pairs_converter(
                    self.converter(types[MAP_KEY], depth + 1, seen),
                    self.converter(types[MAP_VALUE], depth + 1, seen),
                )
            return _items_converter(self.converter(node[SCHEMA_ITEMS], depth + 1, seen))
        if kind == A_MAP:
            return _values_converter(self.converter(node[MAP_VALUES], depth + 1, seen))
        return self.converter(kind, depth, seen)


def _record_converter(fields: list[tuple[str, Convert | None]]) -> Convert | None:
    active = tuple((name, conv) for name, conv in fields if conv is not None)
    if not active:
        return None

    def convert(record: dict[str, Any]) -> dict[str, Any]:
        for name, conv in active:
            value = record[name]
            if value is not None:
                record[name] = conv(value)
        return record

    return convert


def _items_converter(item: Convert | None) -> Convert | None:
    if item is None:
        return None
    return lambda values: [None if v is None else item(v) for v in values]


def _values_converter(value: Convert | None) -> Convert | None:
    if value is None:
        return None
    return lambda values: {k: None if v is None else value(v) for k, v in values.items()}


def _pairs_converter(key: Convert | None, value: Convert | None) -> Convert:
    def pair(part: Convert | None, item: Any) -> Any:
        return item if part is None or item is None else part(item)

    return lambda entries: [[pair(key, e[MAP_KEY]), pair(value, e[MAP_VALUE])] for e in entries]


# =========================================================================== Connect -> Avro
@dataclass
class _AvroNames:
    """Named types already written in one schema (Avro defines each name once)."""

    defined: set[str]
    unnamed: int = 0


def avro_name(connect_name: str) -> str:
    """A Connect schema name as a valid Avro full name (Debezium's ``avro`` adjustment:
    each invalid character becomes ``_``, a leading digit gets a ``_``)."""
    parts = []
    for part in connect_name.split("."):
        part = _NOT_NAME_CHAR.sub("_", part) or "_"
        parts.append("_" + part if part[0].isdigit() else part)
    return ".".join(parts)


def avro_schema(connect: Mapping[str, Any], names: _AvroNames | None = None) -> Any:
    """The Avro schema the Connect Avro converters write for a Connect schema (JSON shape).

    >>> avro_schema({"type": "struct", "name": "srv.Key", "optional": False,
    ...     "fields": [{"type": "int16", "optional": False, "field": "id"}]})["fields"]
    [{'name': 'id', 'type': {'type': 'int', 'connect.type': 'int16'}}]
    """
    names = names if names is not None else _AvroNames(set())
    ctype = str(connect.get(SCHEMA_TYPE))
    given = connect.get(SCHEMA_NAME)
    name = given if isinstance(given, str) else None
    base: Any
    if ctype == T_STRUCT:
        if name is not None:
            full = avro_name(name)
        else:
            names.unnamed += 1
            suffix = "" if names.unnamed == 1 else str(names.unnamed)
            full = f"{CONNECT_NAMESPACE}.{DEFAULT_RECORD_NAME}{suffix}"
        if full in names.defined:
            return [A_NULL, full] if connect.get(SCHEMA_OPTIONAL) else full
        names.defined.add(full)
        namespace, _, short = full.rpartition(".")
        fields = []
        for field in connect.get(SCHEMA_FIELDS) or ():
            field_name = field.get(SCHEMA_FIELD)
            if not isinstance(field_name, str) or not _AVRO_NAME.fullmatch(field_name):
                raise EncodeError(
                    "debezium-avro",
                    f"field {field_name!r} is not a valid Avro name (Debezium's "
                    "field.name.adjustment.mode=avro would have renamed it)",
                )
            entry: dict[str, Any] = {"name": field_name, SCHEMA_TYPE: avro_schema(field, names)}
            if field.get(SCHEMA_OPTIONAL):
                entry["default"] = None
            fields.append(entry)
        base = {SCHEMA_TYPE: A_RECORD, "name": short}
        if namespace:
            base["namespace"] = namespace
        base[SCHEMA_FIELDS] = fields
        if name is not None:
            name = full
    elif ctype == T_ARRAY:
        base = {SCHEMA_TYPE: A_ARRAY, SCHEMA_ITEMS: avro_schema(connect[SCHEMA_ITEMS], names)}
    elif ctype == T_MAP:
        keys = connect.get(MAP_KEYS) or {}
        if keys.get(SCHEMA_TYPE, T_STRING) != T_STRING:
            raise EncodeError("debezium-avro", "maps with non-string keys are not written")
        base = {SCHEMA_TYPE: A_MAP, MAP_VALUES: avro_schema(connect[MAP_VALUES], names)}
    elif ctype in _TO_AVRO:
        base = {SCHEMA_TYPE: _TO_AVRO[ctype]}
    else:
        raise EncodeError("debezium-avro", f"no Avro form for Connect type {ctype!r}")
    version = connect.get(SCHEMA_VERSION)
    if version is not None:
        base[CONNECT_VERSION] = version
    params = connect.get(SCHEMA_PARAMETERS)
    if params:
        base[CONNECT_PARAMETERS] = dict(params)
    if name is not None:
        base[CONNECT_NAME] = name
    if ctype in (T_INT8, T_INT16):
        base[CONNECT_TYPE] = ctype
    if name == N_DECIMAL:
        params = params or {}
        base[LOGICAL_TYPE] = "decimal"
        base[DECIMAL_PRECISION] = int(params.get(PARAM_PRECISION, DEFAULT_DECIMAL_PRECISION))
        base[DECIMAL_SCALE] = int(params.get(PARAM_SCALE, 0))
    elif name is not None and name in _CONNECT_LOGICAL:
        base[LOGICAL_TYPE] = _CONNECT_LOGICAL[name]
    if len(base) == 1:
        base = base[SCHEMA_TYPE]
    return [A_NULL, base] if connect.get(SCHEMA_OPTIONAL) else base


# =========================================================================== JSON values -> Avro
def _to_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return binascii.a2b_base64(value, strict_mode=True)


def _to_float(value: Any) -> float:
    return float(value)


class _AvroValues:
    """Compiles, per Avro schema (as :func:`avro_schema` writes it), what turns the JSON
    converter's payload into the datum fastavro writes: base64 -> bytes, numbers -> floats,
    every record field present."""

    def __init__(self) -> None:
        self._named: dict[str, Convert] = {}

    def converter(self, node: Any) -> Convert | None:
        if isinstance(node, str):
            if node == A_BYTES:
                return _to_bytes
            if node in (A_FLOAT, A_DOUBLE):
                return _to_float
            if node in self._named:
                return self._named[node]
            return None
        if isinstance(node, list):
            branches = [b for b in node if b != A_NULL]
            return self.converter(branches[0]) if len(branches) == 1 else None
        kind = node[SCHEMA_TYPE]
        if kind == A_RECORD:
            full = ".".join(p for p in (node.get("namespace"), node["name"]) if p)
            slot: list[Convert] = []
            self._named[full] = lambda record: slot[0](record)
            fields = tuple((f["name"], self.converter(f[SCHEMA_TYPE])) for f in node["fields"])

            def convert(record: Mapping[str, Any]) -> dict[str, Any]:
                out: dict[str, Any] = {}
                get = record.get
                for name, conv in fields:
                    value = get(name)
                    out[name] = conv(value) if conv is not None and value is not None else value
                return out

            slot.append(convert)
            self._named[full] = convert
            return convert
        if kind == A_ARRAY:
            item = self.converter(node[SCHEMA_ITEMS])
            return None if item is None else lambda v: [None if x is None else item(x) for x in v]
        if kind == A_MAP:
            value = self.converter(node[MAP_VALUES])
            if value is None:
                return None
            return lambda v: {k: None if x is None else value(x) for k, x in v.items()}
        return self.converter(kind)


# =========================================================================== the format
@dataclass(frozen=True, slots=True)
class _Reading:
    """How to read the records of one writer schema (compiled once per decoder and id)."""

    reader: AvroReader
    convert: Convert | None
    plan: EnvelopePlan


@dataclass(frozen=True, slots=True)
class _Writing:
    """How to write one Connect schema: its Avro schema (parsed), id and value conversion."""

    parsed: Any
    header: bytes
    convert: Convert | None


class DebeziumAvro(DebeziumJson):
    """Debezium change events, Avro converter, Confluent wire format (see the module doc)."""

    id: ClassVar[str] = "debezium-avro"
    vendor: ClassVar[str] = "Debezium (Red Hat / Kafka Connect)"
    title: ClassVar[str] = (
        "Debezium change event (Avro converter, Confluent wire format: schema id + Avro)"
    )
    binary: ClassVar[bool] = True
    # what debezium-json carries, from the Avro writer schema instead of the JSON one
    capabilities: ClassVar[Capabilities] = replace(
        DebeziumJson.capabilities,
        types_detail="Avro writer schema from the schema registry (Kafka Connect logical names)",
        key_detail="from the Kafka key's Avro record or `primary_key=`",
        notes=(
            "key names from the Kafka message key (its Avro record); BIGINT UNSIGNED as "
            "DECIMAL(20,0)",
            "schemas in a registry or a schema_dir (an encoder without either keeps them in "
            "its process)",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (
        REGISTRY_URL,
        REGISTRY_USER,
        REGISTRY_PASSWORD,
        REGISTRY_TOKEN,
        REGISTRY_TIMEOUT,
        REGISTRY_CA_FILE,
        SCHEMA_DIR,
        SERVER_NAME,
    )

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.schema_source = self._schema_source()
        self._readings: dict[int, _Reading] = {}
        self._writings: dict[bytes, _Writing] = {}
        self._parsed: dict[int, Any] = {}

    def _schema_source(self) -> SchemaSource:
        get = self.option
        url, folder = get(REGISTRY_URL), get(SCHEMA_DIR)
        if url and folder:
            raise OptionError(f"{self.id}: give {OPT_REGISTRY_URL} or {OPT_SCHEMA_DIR}, not both")
        if folder:
            return SchemaFolder(Path(folder).expanduser())
        if not url:
            for spec in (REGISTRY_USER, REGISTRY_PASSWORD, REGISTRY_TOKEN):
                if get(spec):
                    raise OptionError(f"{self.id}: option {spec.name} needs {OPT_REGISTRY_URL}")
            return MemorySchemas()
        try:
            return ConfluentRegistry.from_options(
                url,
                user=get(REGISTRY_USER),
                password=get(REGISTRY_PASSWORD),
                token=get(REGISTRY_TOKEN),
                timeout=get(REGISTRY_TIMEOUT),
                ca_file=get(REGISTRY_CA_FILE),
            )
        except ValueError as exc:
            raise OptionError(f"{self.id}: option {OPT_REGISTRY_URL}: {exc}") from None

    # ------------------------------------------------------------------ detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        """A Confluent frame whose Avro body shows Debezium's ``source`` block (its version
        and connector strings), a transaction marker's status, the envelope's end, or is a
        heartbeat's lone epoch-milliseconds long."""
        try:
            return _sniff(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ decoding
    decode = Format.decode  # binary: Format.decode_slow -> decode_bytes

    def decode_bytes(self, value: bytes, key: bytes | None) -> list[ChangeEvent]:
        if len(value) > MAX_MESSAGE_BYTES:
            raise self.error("$", f"message of {len(value)} bytes exceeds the limit")
        payload, reading = self._read(value, "")
        if type(payload) is not dict:
            raise self.error("$", f"expected a record, got {type_name(payload)}")
        return self._decode_payload(payload, reading.plan, key, "$")

    def _read(self, data: bytes, what: str) -> tuple[Any, _Reading]:
        """The record of a framed message (``what``: "" for the value, "Kafka key: ")."""
        try:
            schema_id, offset = unframe(data)
        except ValueError as exc:
            raise self.error("$", f"{what}not a Confluent-framed Avro message: {exc}") from None
        reading = self._reading(schema_id, what)
        try:
            datum = reading.reader.read(data[offset:])
        except AvroDataError as exc:
            raise self.error(
                exc.path, f"{what}does not fit its writer schema (id {schema_id}): {exc.reason}"
            ) from None
        return (datum if reading.convert is None else reading.convert(datum)), reading

    def _reading(self, schema_id: int, what: str) -> _Reading:
        reading = self._readings.get(schema_id)
        if reading is not None:
            return reading
        try:
            text = schema_text(self.schema_source, schema_id)
        except SchemaNotFound as exc:
            raise self.error("$", f"{what}schema id {schema_id}: {exc}") from None
        try:
            reader = AvroReader(json.loads(text), tag_unions=False)
        except Exception as exc:  # fastavro raises many kinds of errors for bad schemas
            raise self.error(
                "$", f"{what}schema id {schema_id} is not a valid Avro schema: {exc}"
            ) from None
        schemas = _ConnectSchemas(reader.named_types)
        connect = schemas.schema(reader.root_schema)
        convert = _JsonValues(reader.named_types, schemas).converter(reader.root_schema)
        reading = _Reading(reader, convert, self._build_plan(connect))
        if len(self._readings) >= _PLAN_CACHE_SIZE:
            self._readings.clear()
        self._readings[schema_id] = reading
        return reading

    def _parse_key(self, key: bytes | None) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
        """Key column names and values from the Kafka key's Avro record (a JSON key, from
        a JSON key converter, is read as ``debezium-json`` reads it)."""
        if key is None:
            return None, None
        if key[:1] != b"\x00":
            return super()._parse_key(key)
        record, _ = self._read(bytes(key), "Kafka key: ")
        if type(record) is not dict or not record:
            return None, None
        return tuple(record), record

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One framed Avro record; its schema registered under ``<topic>-value``."""
        row = event.op in ROW_OPS and event.extra.get(X_CONNECTOR) != CONNECTOR_MONGODB
        if (row or event.op is Op.TRUNCATE) and event.columns is None:  # types from the values
            names = dict.fromkeys([*(event.before or ()), *(event.after or ())])
            event = event.with_changes(columns=dict.fromkeys(names, Column(UNKNOWN)))
        schema, payload = self.schema_and_payload(event)
        if schema is None:  # pragma: no cover - every event has a schema once typed
            raise EncodeError(self.id, "no Connect schema for this event")
        if row:
            self._fill_images(event, payload)
        writing = self._writing(schema, self._topic(event) + SUBJECT_VALUE)
        return [self._write(writing, payload)]

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """Debezium's Kafka key: a framed Avro record of the key columns (``<topic>-key``)."""
        key = self.key_schema_and_payload(event)
        if key is None:
            return None
        schema, payload = key
        for field in schema[SCHEMA_FIELDS]:
            if payload.get(field[SCHEMA_FIELD]) is None:
                field[SCHEMA_OPTIONAL] = True
        return self._write(self._writing(schema, self._topic(event) + SUBJECT_KEY), payload)

    def _fill_images(self, event: ChangeEvent, payload: dict[str, Any]) -> None:
        """Every column in every image: Debezium's TOAST placeholder for what a PostgreSQL
        image lacks (text and bytes columns); anything else cannot be written."""
        assert event.columns is not None
        names = list(event.columns)
        postgres = event.extra.get(X_CONNECTOR) == CONNECTOR_POSTGRESQL
        for image_name in (BEFORE, AFTER):
            image = payload.get(image_name)
            if image is None:
                continue
            for name in names:
                if name in image:
                    continue
                column = event.columns[name]
                if postgres and column.type.name in ("string", "json", "binary"):
                    binary = column.type.name == "binary"
                    image[name] = UNAVAILABLE_VALUE_BASE64 if binary else UNAVAILABLE_VALUE
                    continue
                raise EncodeError(
                    self.id,
                    f"the {image_name} image lacks column {name!r}: an Avro record holds "
                    "every column (only a PostgreSQL text/bytes column has a placeholder)",
                )

    def _writing(self, schema: dict[str, Any], subject: str) -> _Writing:
        cache_key = msgspec.json.encode([subject, schema])
        writing = self._writings.get(cache_key)
        if writing is not None:
            return writing
        avro = avro_schema(schema)
        text = json.dumps(avro, separators=(",", ":"), ensure_ascii=False)
        try:
            parsed = fastavro.parse_schema(avro)
        except Exception as exc:  # fastavro raises many kinds of errors for bad schemas
            raise EncodeError(self.id, f"invalid Avro schema: {exc}") from None
        schema_id = registered_id(self.schema_source, subject, text)
        writing = _Writing(parsed, frame(schema_id, b""), _AvroValues().converter(avro))
        if len(self._writings) >= _PLAN_CACHE_SIZE:
            self._writings.clear()
        self._writings[cache_key] = writing
        return writing

    def _write(self, writing: _Writing, payload: Any) -> bytes:
        out = io.BytesIO()
        out.write(writing.header)
        try:
            datum = payload if writing.convert is None else writing.convert(payload)
            fastavro.schemaless_writer(out, writing.parsed, datum)
        except (
            ValueError,
            TypeError,
            OverflowError,
            KeyError,
            AttributeError,
            binascii.Error,
        ) as exc:
            raise EncodeError(self.id, f"Avro writer refused the record: {exc}") from None
        return out.getvalue()

    def _topic(self, event: ChangeEvent) -> str:
        """The Kafka topic Debezium writes ``event`` to (the subjects are named after it)."""
        if event.op is Op.DDL:
            return self._server
        if event.op in (Op.BEGIN, Op.COMMIT):
            return self._server + TOPIC_TRANSACTION
        if event.op is Op.HEARTBEAT and event.table is None and event.database is None:
            return TOPIC_HEARTBEAT + self._server
        return self._prefix(event)

    def avro_schema_of(self, message: bytes) -> Any:
        """The writer schema of a framed message, parsed by fastavro (benchmarks' bare parse)."""
        schema_id, _ = unframe(message)
        parsed = self._parsed.get(schema_id)
        if parsed is None:
            text = schema_text(self.schema_source, schema_id)
            parsed = self._parsed[schema_id] = fastavro.parse_schema(json.loads(text))
        return parsed


# --------------------------------------------------------------------------- detection
# Debezium's ``source`` record starts with ``version`` then ``connector`` (both strings);
# Avro writes a string as its zig-zag length then its UTF-8 bytes.
_CONNECTORS: Final = (
    "mysql", "mariadb", "postgresql", "sqlserver", "oracle", "mongodb", "db2", "informix",
    "vitess", "spanner", "cassandra", "yugabytedb", "ibmi", "jdbc",
)  # fmt: skip
_CONNECTOR_RE: Final = re.compile(
    b"|".join(re.escape(bytes((2 * len(c),)) + c.encode()) for c in _CONNECTORS)
)
_VERSION_RE: Final = re.compile(  # Debezium's releases: 2.7.3.Final, 3.0.0.CR1, 2.6.0-SNAPSHOT
    rb"\d{1,3}\.\d{1,3}\.\d{1,4}(?:\.(?:Final|Alpha\d*|Beta\d*|CR\d*)|-SNAPSHOT)|"
    + re.escape(ENCODER_VERSION.encode())
)
_MARKER_HEADS: Final = (b"\x0aBEGIN", b"\x06END")  # a transaction marker's status
_ENVELOPE_END: Final = re.compile(
    rb"\x02[cudrt]\x02[\x80-\xff]{5,6}[\x00-\x7f](?:\x02[\x80-\xff]{5,9}[\x00-\x7f]){0,2}\x00?\Z"
)  # op, an epoch-ms ts_ms (then ts_us, ts_ns) and no transaction block
_SNIFF_BYTES: Final = 8192
_HEARTBEAT: Final = re.compile(rb"[\x80-\xff]{5,6}[\x00-\x7f]")  # one varint: Heartbeat{ts_ms}
_HEARTBEAT_MS: Final = (946_684_800_000, 7_258_118_400_000)  # 2000-01-01 .. 2200-01-01


def _zigzag(data: bytes) -> int:
    value = 0
    for shift, byte in enumerate(data):
        value |= (byte & 0x7F) << (7 * shift)
    return (value >> 1) ^ -(value & 1)


def _printable_at(body: bytes, end: int) -> bool:
    """Whether a zig-zag length-prefixed printable ASCII string ends right at ``end``."""
    for length in range(1, 64):
        start = end - length
        if start < 1:
            return False
        if body[start - 1] == 2 * length and all(32 <= b < 127 for b in body[start:end]):
            return True
    return False


def _printable_from(body: bytes, start: int) -> bool:
    """Whether a zig-zag length-prefixed printable ASCII string starts at ``start``."""
    if start >= len(body):
        return False
    size = body[start]
    if size % 2 or not 2 <= size < 128:
        return False
    text = body[start + 1 : start + 1 + size // 2]
    return len(text) == size // 2 and all(32 <= b < 127 for b in text)


def _sniff(message: Any) -> float:
    if not isinstance(message, (bytes, bytearray, memoryview)) or len(message) < 8:
        return 0.0
    data = bytes(message)
    if data[0] != 0:
        return 0.0
    body = data[5 : 5 + _SNIFF_BYTES]
    # (a string of an optional field is preceded by its union branch index 1: byte 0x02)
    for match in _CONNECTOR_RE.finditer(body):  # version, then a known connector
        start = match.start()
        if _printable_at(body, start) or (body[start - 1] == 2 and _printable_at(body, start - 1)):
            return 0.9
    for match in _VERSION_RE.finditer(body):  # a Debezium (or anycdc) version, then a name
        start, end = match.span()
        if start and body[start - 1] == 2 * (end - start):
            if _printable_from(body, end) or (
                body[end : end + 1] == b"\x02" and _printable_from(body, end + 1)
            ):
                return 0.9
    if body.startswith(_MARKER_HEADS):
        return 0.8
    if _HEARTBEAT.fullmatch(body) and _HEARTBEAT_MS[0] <= _zigzag(body) <= _HEARTBEAT_MS[1]:
        return 0.55  # a heartbeat: one long, a plausible epoch-ms ts_ms
    if len(data) <= 5 + _SNIFF_BYTES and _ENVELOPE_END.search(body):
        return 0.6
    return 0.0


__all__ = ["DebeziumAvro", "avro_name", "avro_schema"]
