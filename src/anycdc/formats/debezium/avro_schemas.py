"""Kafka Connect schemas and values to and from Avro, by the Avro converter's rules
(Confluent's ``AvroData``), for :mod:`anycdc.formats.debezium.avro`.

* a writer schema (as fastavro parses it) maps back to the Connect schema it was made from,
  in the JSON converter's shape (:class:`ConnectSchemas`): ``int`` + ``connect.type``
  ``int8``/``int16``, ``connect.name`` / ``connect.parameters`` / ``connect.version`` on
  every logical type, ``["null", T]`` for an optional field, records for structs,
  ``MapEntry`` arrays for maps with non-string keys; Avro logical types without
  ``connect.name`` map to their Connect / Debezium equivalents;
* a record's values get the JSON converter's rendering (:class:`JsonValues`: bytes as
  base64 text, numbers inside a struct/array/map column as exact decimals);
* the other way, a Connect schema becomes the Avro schema the converter writes
  (:func:`avro_schema`, :func:`avro_name`) and JSON-shaped values its Avro values
  (:class:`AvroValues`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from anycdc.errors import EncodeError
from anycdc.formats.debezium.wire import (
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
)

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

Convert = Callable[[Any], Any]


# =========================================================================== Avro -> Connect
class ConnectSchemas:
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


class JsonValues:
    """Compiles, per writer schema, what turns a read record into the JSON converter's payload:
    bytes -> base64 text; floats inside a struct/array/map column -> exact decimals (the JSON
    converter's numbers); a ``MapEntry`` array -> ``[key, value]`` pairs. None: nothing to do.

    ``depth`` counts records and containers from the message's record (0): a row's columns
    are at depth 2 (envelope, image), their parts deeper.
    """

    def __init__(self, named: Mapping[str, Any], schemas: ConnectSchemas) -> None:
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
class AvroNames:
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


def avro_schema(connect: Mapping[str, Any], names: AvroNames | None = None) -> Any:
    """The Avro schema the Connect Avro converters write for a Connect schema (JSON shape).

    >>> avro_schema({"type": "struct", "name": "srv.Key", "optional": False,
    ...     "fields": [{"type": "int16", "optional": False, "field": "id"}]})["fields"]
    [{'name': 'id', 'type': {'type': 'int', 'connect.type': 'int16'}}]
    """
    names = names if names is not None else AvroNames(set())
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


class AvroValues:
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


__all__ = [
    "AvroNames",
    "AvroValues",
    "ConnectSchemas",
    "Convert",
    "JsonValues",
    "avro_name",
    "avro_schema",
]
