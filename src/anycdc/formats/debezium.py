"""Debezium change-event values, as Kafka Connect's JSON converter writes them (seed 004).

A message is either the envelope ``{"schema": {...}, "payload": {...}}``
(``schemas.enable=true``) or the payload alone. The payload holds ``op``
(``c`` create, ``u`` update, ``d`` delete, ``r`` snapshot read, ``t``
truncate, ``m`` logical-decoding message), ``before``/``after`` row images,
``source`` metadata and ``ts_ms``. Besides row changes a Debezium topic may
carry schema-change events (``ddl`` + ``tableChanges``), transaction markers
(``status`` BEGIN/END), heartbeats (``{"ts_ms": N}``) and tombstones (null
values, also rendered ``{"schema":null,"payload":null}``).

>>> fmt = DebeziumJson()
>>> [event] = fmt.decode(
...     b'{"before":null,"after":{"id":1,"price":9.90},"op":"c",'
...     b'"source":{"connector":"postgresql","db":"shop","schema":"public","table":"items",'
...     b'"ts_ms":1559033904863,"txId":555,"lsn":24023128}}',
...     key=b'{"id":1}',
... )
>>> event.op.value, event.qualified_table, event.key, event.after["price"], event.position
('insert', 'shop.public.items', ('id',), Decimal('9.90'), Position(parts=(24023128,)))

Decoding rules
--------------
* Types come from the schema part (``int8``..``int64``, ``float32``/``float64``,
  ``boolean``, ``string``, ``bytes`` as base64, and the logical names:
  Connect ``Decimal`` (base64 big-endian two's complement unscaled value with the
  ``scale`` parameter; a JSON number when the converter's ``decimal.format`` is
  NUMERIC), ``VariableScaleDecimal``, ``Date`` (days), ``Time`` (ms), ``MicroTime``,
  ``NanoTime``, ``Timestamp`` (ms), ``MicroTimestamp``, ``NanoTimestamp`` (wall-clock
  values without zone: naive, or in the ``timezone`` option's zone),
  ``ZonedTimestamp`` (aware), ``ZonedTime`` (time with offset), ``Year``, ``Json``,
  ``Enum``, ``EnumSet``, ``Uuid``, ``Bits``, Connect ``Date``/``Time``/``Timestamp``).
  Structs, arrays and maps (geometries ...) stay JSON values (``unknown``).
  Without a schema ``columns`` is None and values keep their JSON types.
* Key names are not in the value: they come from the Kafka key given to
  :meth:`DebeziumJson.decode` (its fields, with or without a schema part), else
  from the ``primary_key`` option, else None. A delete without a before image
  (Postgres without REPLICA IDENTITY FULL) uses the key's values as a partial
  before image; without a key it is an error.
* ``m`` (a logical-decoding message: application data, not a row) becomes a
  ``heartbeat`` event carrying ``extra["message"]`` (``prefix``/``content``).
* Positions, compared part by part: SQL Server (and Db2) ``commit_lsn`` parts,
  ``change_lsn`` parts, ``event_serial_no`` (hex groups as integers; a missing
  change LSN or serial number counts as 0); MySQL binlog file number, ``pos``,
  ``row``; PostgreSQL ``lsn``; Oracle ``scn``; MongoDB oplog seconds and ``ord``;
  otherwise the generic ``source.sequence`` array. An LSN that is not a valid
  (non-negative, 3-group for SQL Server) value gives no position.
* MongoDB: ``after``/``before``/``patch``/``updatedFields`` arrive as Extended JSON
  text in any ``json.serialization.mode`` (v1 strict: ``{"$date": ms}``,
  ``{"$binary": b64, "$type": t}``; v2 relaxed or canonical: ``$numberInt``,
  ``$numberDouble``, ``{"$date": {"$numberLong": ...}}`` ...). The document's
  top-level fields become the image (key ``_id``), typed exactly as
  ``drs-mongo-json`` types a document (:func:`anycdc.formats.drs_mongo.ejson_document`:
  ``long``, ``decimal``, ``date`` -> timestamptz, ``binData`` -> binary, ``objectId``
  -> its hex text; nested documents and arrays as relaxed Extended JSON text, the
  same text whatever the mode). Update operators (old connector ``patch``, or
  ``updateDescription``: ``updatedFields`` -> ``$set`` in relaxed Extended JSON,
  ``removedFields`` -> ``$unset`` as a list, ``truncatedArrays`` kept under
  ``$truncatedArrays``) go to ``patch`` when the message has no full ``after``
  document; the after image is then ``{"_id": ...}`` marked partial.
* CloudEvents (``io.debezium.converters.CloudEventsConverter``, JSON envelope and
  JSON data): the payload is ``data`` (``{schema, payload}`` or the payload alone)
  plus ``op`` and ``source``/``transaction`` fields from the ``iodebezium*``
  extension attributes; the envelope's ``id``/``source``/``type`` go to
  ``extra["cloudevents"]`` (the encoder writes such events back as CloudEvents).
  Avro ``data`` (base64 text) is an error.
* Vitess: ``source.db`` is empty; the keyspace is the database, so same-named tables
  of two keyspaces stay apart.
* Not read, an error naming the reason and never rows (the detector says
  ``unknown``): Debezium Avro printed as Avro JSON by a console consumer (unions as
  ``{"<ns>.Value": {...}}``, ``{"long": 1}``) and the Cassandra connector (cells as
  ``{value, deletion_ts, set}``, null meaning unchanged).
* Speed: the plan that types a table's values is built once per schema text and
  cached on the instance; a message that starts with the exact bytes of a recently
  seen ``{"schema":<S>,"payload":`` is parsed from its payload on (the schema part
  is compared, not parsed again). The usual row change (``c``/``u``/``d``/``r`` with
  well-typed source fields and values) is decoded in one pass with the checks inlined
  (an update's unchanged columns reuse the after image's typed values); anything else
  takes the general path, which gives the same events and reports the errors.
* PostgreSQL's placeholder for unchanged TOASTed values
  (``__debezium_unavailable_value``) is not a value: the column is left out of
  the image and the image is marked partial.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import EncodeError, OptionError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps, value_to_json
from anycdc.formats.base import (
    MAX_MESSAGE_BYTES,
    Cache,
    Capabilities,
    Format,
    NotFast,
    OptionSpec,
    convert_values,
    parse_json,
)
from anycdc.formats.drs_mongo import (
    ejson_document,
    ejson_fields,
    from_ejson,
    update_patch,
)
from anycdc.typemap import jdbc_type, sql_type
from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
    EPOCH,
    EPOCH_DATE,
    EPOCH_NAIVE,
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
    decimal_type,
    parse_base64,
    parse_bool,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_int,
)

# --------------------------------------------------------------------------- wire names
ENVELOPE_SCHEMA: Final = "schema"
ENVELOPE_PAYLOAD: Final = "payload"

BEFORE: Final = "before"
AFTER: Final = "after"
SOURCE: Final = "source"
OP: Final = "op"
TS_MS: Final = "ts_ms"
TRANSACTION: Final = "transaction"
TX_ID: Final = "id"
TX_TOTAL_ORDER: Final = "total_order"
TX_DATA_COLLECTION_ORDER: Final = "data_collection_order"
MESSAGE: Final = "message"
MESSAGE_PREFIX: Final = "prefix"
MESSAGE_CONTENT: Final = "content"

# MongoDB connector payload fields
MONGO_PATCH: Final = "patch"
MONGO_FILTER: Final = "filter"
MONGO_UPDATE_DESCRIPTION: Final = "updateDescription"
MONGO_UPDATED_FIELDS: Final = "updatedFields"
MONGO_REMOVED_FIELDS: Final = "removedFields"
MONGO_TRUNCATED_ARRAYS: Final = "truncatedArrays"
MONGO_TRUNCATED_FIELD: Final = "field"
MONGO_TRUNCATED_SIZE: Final = "size"
MONGO_ID: Final = "_id"
MONGO_KEY_ID: Final = "id"
PATCH_SET: Final = "$set"
PATCH_UNSET: Final = "$unset"
PATCH_TRUNCATED_ARRAYS: Final = "$truncatedArrays"

# schema-change events
DDL: Final = "ddl"
DATABASE_NAME: Final = "databaseName"
DDL_SCHEMA_NAME: Final = "schemaName"
TABLE_CHANGES: Final = "tableChanges"
CHANGE_TYPE: Final = "type"
CHANGE_ID: Final = "id"
CHANGE_TABLE: Final = "table"
TABLE_PRIMARY_KEY: Final = "primaryKeyColumnNames"
TABLE_COLUMNS: Final = "columns"
COLUMN_NAME: Final = "name"
COLUMN_JDBC_TYPE: Final = "jdbcType"
COLUMN_TYPE_NAME: Final = "typeName"
COLUMN_LENGTH: Final = "length"
COLUMN_SCALE: Final = "scale"
COLUMN_POSITION: Final = "position"
COLUMN_OPTIONAL: Final = "optional"

# transaction metadata topic
TX_STATUS: Final = "status"
TX_EVENT_COUNT: Final = "event_count"
TX_DATA_COLLECTIONS: Final = "data_collections"
TX_DATA_COLLECTION: Final = "data_collection"
STATUS_BEGIN: Final = "BEGIN"
STATUS_END: Final = "END"

# source block
SRC_VERSION: Final = "version"
SRC_CONNECTOR: Final = "connector"
SRC_NAME: Final = "name"
SRC_TS_MS: Final = "ts_ms"
SRC_TS_SEC: Final = "ts_sec"
SRC_SNAPSHOT: Final = "snapshot"
SRC_DB: Final = "db"
SRC_SCHEMA: Final = "schema"
SRC_TABLE: Final = "table"
SRC_COLLECTION: Final = "collection"
SRC_SEQUENCE: Final = "sequence"
SRC_FILE: Final = "file"
SRC_POS: Final = "pos"
SRC_ROW: Final = "row"
SRC_GTID: Final = "gtid"
SRC_SERVER_ID: Final = "server_id"
SRC_THREAD: Final = "thread"
SRC_QUERY: Final = "query"
SRC_LSN: Final = "lsn"
SRC_TX_ID: Final = "txId"
SRC_XMIN: Final = "xmin"
SRC_CHANGE_LSN: Final = "change_lsn"
SRC_COMMIT_LSN: Final = "commit_lsn"
SRC_EVENT_SERIAL_NO: Final = "event_serial_no"
SRC_SCN: Final = "scn"
SRC_COMMIT_SCN: Final = "commit_scn"
SRC_ROW_ID: Final = "row_id"
SRC_ORD: Final = "ord"
SRC_SEC: Final = "sec"
SRC_RS: Final = "rs"
SRC_KEYSPACE: Final = "keyspace"  # Vitess: db is "", the keyspace is the database
SRC_TS_US: Final = "ts_us"
SRC_TS_NS: Final = "ts_ns"
SRC_SHARD: Final = "shard"
SRC_VGTID: Final = "vgtid"
SRC_WALL_TIME: Final = "wallTime"

# CloudEvents (Debezium's CloudEventsConverter, structured mode, JSON envelope): the
# payload's ``source`` fields and ``op`` become extension attributes named ``iodebezium``
# + the field name without its non-alphanumeric characters (int64 values as text), the
# ``transaction`` fields ``iodebeziumtx`` + name, and ``data`` holds the rest of the
# payload (``before``/``after``/``updateDescription``), as ``{schema, payload}`` when the
# data converter's schemas are enabled
CE_SPECVERSION: Final = "specversion"
CE_ID: Final = "id"
CE_SOURCE: Final = "source"
CE_TYPE: Final = "type"
CE_TIME: Final = "time"
CE_DATA_CONTENT_TYPE: Final = "datacontenttype"
CE_DATA: Final = "data"
CE_VERSION: Final = "1.0"
CE_JSON: Final = "application/json"
CE_PREFIX: Final = "iodebezium"
CE_OP: Final = "iodebeziumop"
CE_TX_PREFIX: Final = "iodebeziumtx"
CE_SOURCE_TX_ID: Final = "iodebeziumtxId"  # the Postgres/Oracle source field txId
CE_DEBEZIUM_TYPE: Final = "io.debezium."
CE_DEBEZIUM_SOURCE: Final = "/debezium/"

OP_CREATE: Final = "c"
OP_UPDATE: Final = "u"
OP_DELETE: Final = "d"
OP_READ: Final = "r"
OP_TRUNCATE: Final = "t"
OP_MESSAGE: Final = "m"
_OPS: Final[dict[str, Op]] = {
    OP_CREATE: Op.INSERT,
    OP_UPDATE: Op.UPDATE,
    OP_DELETE: Op.DELETE,
    OP_READ: Op.SNAPSHOT,
    OP_TRUNCATE: Op.TRUNCATE,
    OP_MESSAGE: Op.HEARTBEAT,
}
_ROW_OP_CODES: Final[Mapping[str, Op]] = MappingProxyType(
    {OP_CREATE: Op.INSERT, OP_UPDATE: Op.UPDATE, OP_DELETE: Op.DELETE, OP_READ: Op.SNAPSHOT}
)
# Op members bound once (an enum attribute lookup is slow in the per-message path)
_UPDATE: Final = Op.UPDATE
_DELETE: Final = Op.DELETE
_TRUNCATE: Final = Op.TRUNCATE
_HEARTBEAT: Final = Op.HEARTBEAT
_OP_CODES: Final[dict[Op, str]] = {
    Op.INSERT: OP_CREATE,
    Op.UPDATE: OP_UPDATE,
    Op.DELETE: OP_DELETE,
    Op.SNAPSHOT: OP_READ,
    Op.TRUNCATE: OP_TRUNCATE,
}

CONNECTOR_MYSQL: Final = "mysql"
CONNECTOR_MARIADB: Final = "mariadb"
CONNECTOR_POSTGRESQL: Final = "postgresql"
CONNECTOR_SQLSERVER: Final = "sqlserver"
CONNECTOR_ORACLE: Final = "oracle"
CONNECTOR_MONGODB: Final = "mongodb"
CONNECTOR_CASSANDRA: Final = "cassandra"  # not read: cells as {value, deletion_ts, set}
CASSANDRA_CELL: Final = frozenset({"value", "deletion_ts", "set"})
AVRO_VALUE_SUFFIX: Final = ".Value"  # Avro JSON wraps a union's record as {"<name>.Value": ...}
AVRO_TYPE_NAMES: Final = frozenset({"string", "long", "int", "boolean", "double", "float", "bytes"})

ENCODER_VERSION: Final = "anycdc"  # source.version written by the encoder
SNAPSHOT_TRUE: Final = "true"
SNAPSHOT_FALSE: Final = "false"
SNAPSHOT_ALLOWED: Final = "true,last,false,incremental"
UNAVAILABLE_VALUE: Final = "__debezium_unavailable_value"
UNAVAILABLE_VALUE_BASE64: Final = base64.b64encode(UNAVAILABLE_VALUE.encode()).decode()
_UNAVAILABLE_VALUES: Final = frozenset(
    {UNAVAILABLE_VALUE, UNAVAILABLE_VALUE_BASE64, UNAVAILABLE_VALUE.encode()}
)

# Kafka Connect schema types and parameters
T_INT8: Final = "int8"
T_INT16: Final = "int16"
T_INT32: Final = "int32"
T_INT64: Final = "int64"
T_FLOAT32: Final = "float32"
T_FLOAT64: Final = "float64"
T_BOOLEAN: Final = "boolean"
T_STRING: Final = "string"
T_BYTES: Final = "bytes"
T_STRUCT: Final = "struct"
T_ARRAY: Final = "array"
T_MAP: Final = "map"
T_DOUBLE_ALIAS: Final = "double"  # some producers (Flink's fixtures) write these names
T_FLOAT_ALIAS: Final = "float"
SCHEMA_TYPE: Final = "type"
SCHEMA_FIELDS: Final = "fields"
SCHEMA_FIELD: Final = "field"
SCHEMA_NAME: Final = "name"
SCHEMA_OPTIONAL: Final = "optional"
SCHEMA_VERSION: Final = "version"
SCHEMA_PARAMETERS: Final = "parameters"
SCHEMA_ITEMS: Final = "items"
PARAM_SCALE: Final = "scale"
PARAM_PRECISION: Final = "connect.decimal.precision"
PARAM_ALLOWED: Final = "allowed"
VSD_SCALE: Final = "scale"
VSD_VALUE: Final = "value"

# logical type names
N_DECIMAL: Final = "org.apache.kafka.connect.data.Decimal"
N_CONNECT_DATE: Final = "org.apache.kafka.connect.data.Date"
N_CONNECT_TIME: Final = "org.apache.kafka.connect.data.Time"
N_CONNECT_TIMESTAMP: Final = "org.apache.kafka.connect.data.Timestamp"
N_VARIABLE_SCALE_DECIMAL: Final = "io.debezium.data.VariableScaleDecimal"
N_DATE: Final = "io.debezium.time.Date"
N_TIME: Final = "io.debezium.time.Time"
N_MICRO_TIME: Final = "io.debezium.time.MicroTime"
N_NANO_TIME: Final = "io.debezium.time.NanoTime"
N_TIMESTAMP: Final = "io.debezium.time.Timestamp"
N_MICRO_TIMESTAMP: Final = "io.debezium.time.MicroTimestamp"
N_NANO_TIMESTAMP: Final = "io.debezium.time.NanoTimestamp"
N_ZONED_TIMESTAMP: Final = "io.debezium.time.ZonedTimestamp"
N_ZONED_TIME: Final = "io.debezium.time.ZonedTime"
N_YEAR: Final = "io.debezium.time.Year"
N_MICRO_DURATION: Final = "io.debezium.time.MicroDuration"
N_INTERVAL: Final = "io.debezium.time.Interval"
N_JSON: Final = "io.debezium.data.Json"
N_ENUM: Final = "io.debezium.data.Enum"
N_ENUM_SET: Final = "io.debezium.data.EnumSet"
N_UUID: Final = "io.debezium.data.Uuid"
N_XML: Final = "io.debezium.data.Xml"
N_BITS: Final = "io.debezium.data.Bits"
N_HEARTBEAT: Final = "io.debezium.connector.common.Heartbeat"
N_TX_METADATA: Final = "io.debezium.connector.common.TransactionMetadataValue"
N_TABLE_CHANGE: Final = "io.debezium.connector.schema.Change"
N_TABLE: Final = "io.debezium.connector.schema.Table"
N_COLUMN: Final = "io.debezium.connector.schema.Column"
KEY_SCHEMA_SUFFIXES: Final = (".Key", "SchemaChangeKey")

# extra keys this format fills
X_CONNECTOR: Final = "connector"
X_SNAPSHOT: Final = "snapshot"
X_GTID: Final = "gtid"
X_COMMIT_SCN: Final = "commit_scn"
X_TOTAL_ORDER: Final = "total_order"
X_DATA_COLLECTION_ORDER: Final = "data_collection_order"
X_MESSAGE: Final = "message"
X_TABLE_CHANGE: Final = "table_change"
X_EVENT_COUNT: Final = "event_count"
X_CLOUDEVENTS: Final = "cloudevents"  # the CloudEvents envelope's id, source and type

_MYSQL_FAMILY: Final = frozenset({CONNECTOR_MYSQL, CONNECTOR_MARIADB})
_LSN_RE: Final = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)")
_ZONED_TIME_RE: Final = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})")
_DAY_MICROS: Final = 86_400_000_000
_EPOCH_ORDINAL: Final = EPOCH_DATE.toordinal()
_EXACT_JSON: Final = msgspec.json.Decoder(float_hook=Decimal)
_DOCUMENT_JSON: Final = msgspec.json.Decoder()  # MongoDB documents: a fraction is a double
_NUMBER_JSON: Final = msgspec.json.Encoder(decimal_format="number")


class _Envelope(msgspec.Struct):
    """Top level of an enveloped message: the schema stays raw bytes (a cache key)."""

    schema: msgspec.Raw = msgspec.Raw(b"")
    payload: Any = msgspec.UNSET


_SOURCE_PATHS: Final = MappingProxyType({"$": "$.source", "$.payload": "$.payload.source"})
_ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope, float_hook=Decimal)
_ENVELOPE_HEAD_RE: Final = re.compile(rb'\s*\{\s*"schema"\s*:\s*')
_PAYLOAD_HEAD_RE: Final = re.compile(rb'\s*,\s*"payload"\s*:\s*')


# --------------------------------------------------------------------------- value parsers
# Module-level functions (no per-value closures); each takes the raw JSON value
# and returns the typed value or raises ValueError/TypeError (-> ``invalid``).
def _int_parser(low: int, high: int) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        value = raw if type(raw) is int else parse_int(raw)
        if low <= value <= high:
            return value
        raise ValueError(f"{value} out of range")

    return parse


_P_INT8: Final = _int_parser(-(2**7), 2**7 - 1)
_P_INT16: Final = _int_parser(-(2**15), 2**15 - 1)
_P_INT32: Final = _int_parser(-(2**31), 2**31 - 1)
_P_INT64: Final = _int_parser(-(2**63), 2**63 - 1)
_INT_BOUNDS: Final[Mapping[Callable[[Any], int], tuple[int, int]]] = MappingProxyType(
    {
        _P_INT8: (-(2**7), 2**7 - 1),
        _P_INT16: (-(2**15), 2**15 - 1),
        _P_INT32: (-(2**31), 2**31 - 1),
        _P_INT64: (-(2**63), 2**63 - 1),
    }
)
_a2b_base64: Final = binascii.a2b_base64
_from_bytes: Final = int.from_bytes


def _p_bool(raw: Any) -> bool:
    return raw if type(raw) is bool else parse_bool(raw)


def _p_str(raw: Any) -> str:
    if type(raw) is str:
        return raw
    raise ValueError(f"expected string, got {type_name(raw)}")


def _p_float(raw: Any) -> float:
    kind = type(raw)
    if kind is Decimal or kind is int:
        return float(raw)
    return parse_float(raw)


def _p_json(raw: Any) -> str:
    return raw if type(raw) is str else dumps(raw)


def _unscaled(raw: Any) -> int:
    """The unscaled value of a Connect decimal: base64 of big-endian two's complement bytes."""
    try:
        data = binascii.a2b_base64(raw, strict_mode=True)
    except (binascii.Error, TypeError, ValueError):
        data = parse_base64(raw)  # raises ValueError with the reason
    return int.from_bytes(data, "big", signed=True)


def _scaled(unscaled: int, scale: int) -> Decimal:
    # string construction is exact whatever the decimal context's precision
    return Decimal(f"{unscaled}E{-scale}")


def _p_connect_decimal(scale: int, raw: Any) -> Decimal:
    if type(raw) is str:
        return _scaled(_unscaled(raw), scale)
    if isinstance(raw, bool):
        raise ValueError("expected decimal, got boolean")
    if isinstance(raw, (int, Decimal)):  # decimal.format=NUMERIC
        return Decimal(raw)
    raise ValueError(f"expected base64 decimal, got {type_name(raw)}")


def _p_variable_scale_decimal(raw: Any) -> Decimal:
    if isinstance(raw, dict):
        scale = raw.get(VSD_SCALE)
        if type(scale) is not int:
            raise ValueError(f"expected integer scale, got {type_name(scale)}")
        return _scaled(_unscaled(raw.get(VSD_VALUE)), scale)
    return parse_decimal(raw)


def _p_date_days(raw: Any) -> dt.date:
    return dt.date.fromordinal(_EPOCH_ORDINAL + (raw if type(raw) is int else parse_int(raw)))


def _time_of_day(micros: int) -> dt.time:
    if not 0 <= micros < _DAY_MICROS:
        raise ValueError(f"time of day out of range: {micros} µs")
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return dt.time(hour, minute, second, micro)


def _p_time_ms(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw) * 1000)


def _p_time_us(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw))


def _p_time_ns(raw: Any) -> dt.time:
    return _time_of_day(parse_int(raw) // 1000)


def _p_zoned_time(raw: Any) -> dt.time:
    if type(raw) is not str:
        raise ValueError(f"expected time text, got {type_name(raw)}")
    match = _ZONED_TIME_RE.fullmatch(raw.strip())
    if not match:
        raise ValueError(f"invalid zoned time {raw!r}")
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3))
    micro = int(((match.group(4) or "") + "000000")[:6])
    return dt.time(hour, minute, second, micro, tzinfo=_offset(match.group(5)))


def _offset(text: str) -> dt.tzinfo:
    if text == "Z":
        return dt.UTC
    digits = text[1:].replace(":", "")
    delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]))
    if not delta:
        return dt.UTC
    return dt.timezone(-delta if text[0] == "-" else delta)


_timedelta: Final = dt.timedelta  # called positionally: faster than microseconds=


def _p_timestamp_ms(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, (raw if type(raw) is int else parse_int(raw)) * 1000)


def _p_timestamp_us(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, raw if type(raw) is int else parse_int(raw))


def _p_timestamp_ns(raw: Any) -> dt.datetime:
    return EPOCH_NAIVE + _timedelta(0, 0, (raw if type(raw) is int else parse_int(raw)) // 1000)


def _p_zoned_timestamp(raw: Any) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw)  # the usual rendering, e.g. 2024-12-16T21:02:09.799Z
    except (TypeError, ValueError):
        value = parse_datetime(raw)
    if value.tzinfo is None:
        raise ValueError(f"zoned timestamp without offset {raw!r}")
    return value


def _in_zone(parse: Callable[[Any], dt.datetime], zone: dt.tzinfo, raw: Any) -> dt.datetime:
    return parse(raw).replace(tzinfo=zone)


# (connect type, logical type, parser) of each logical name we understand
_NAMED: Final[dict[str, tuple[str, LogicalType, Callable[[Any], Any] | None]]] = {
    N_VARIABLE_SCALE_DECIMAL: (T_STRUCT, decimal_type(None, None), _p_variable_scale_decimal),
    N_DATE: (T_INT32, DATE, _p_date_days),
    N_CONNECT_DATE: (T_INT32, DATE, _p_date_days),
    N_TIME: (T_INT32, TIME, _p_time_ms),
    N_CONNECT_TIME: (T_INT32, TIME, _p_time_ms),
    N_MICRO_TIME: (T_INT64, TIME, _p_time_us),
    N_NANO_TIME: (T_INT64, TIME, _p_time_ns),
    N_TIMESTAMP: (T_INT64, TIMESTAMP, _p_timestamp_ms),
    N_CONNECT_TIMESTAMP: (T_INT64, TIMESTAMP, _p_timestamp_ms),
    N_MICRO_TIMESTAMP: (T_INT64, TIMESTAMP, _p_timestamp_us),
    N_NANO_TIMESTAMP: (T_INT64, TIMESTAMP, _p_timestamp_ns),
    N_ZONED_TIMESTAMP: (T_STRING, TIMESTAMPTZ, _p_zoned_timestamp),
    N_ZONED_TIME: (T_STRING, TIME, _p_zoned_time),
    N_YEAR: (T_INT32, INT32, _P_INT32),
    N_MICRO_DURATION: (T_INT64, INT64, _P_INT64),
    N_INTERVAL: (T_STRING, STRING, _p_str),
    N_JSON: (T_STRING, JSON, _p_json),
    N_ENUM: (T_STRING, STRING, _p_str),
    N_ENUM_SET: (T_STRING, STRING, _p_str),
    N_UUID: (T_STRING, STRING, _p_str),
    N_XML: (T_STRING, STRING, _p_str),
    N_BITS: (T_BYTES, BINARY, parse_base64),
}
# plain connect types
_PRIMITIVES: Final[dict[str, tuple[LogicalType, Callable[[Any], Any] | None]]] = {
    T_INT8: (INT8, _P_INT8),
    T_INT16: (INT16, _P_INT16),
    T_INT32: (INT32, _P_INT32),
    T_INT64: (INT64, _P_INT64),
    T_FLOAT32: (FLOAT32, _p_float),
    T_FLOAT_ALIAS: (FLOAT32, _p_float),
    T_FLOAT64: (FLOAT64, _p_float),
    T_DOUBLE_ALIAS: (FLOAT64, _p_float),
    T_BOOLEAN: (BOOLEAN, _p_bool),
    T_STRING: (STRING, _p_str),
    T_BYTES: (BINARY, parse_base64),
}


# --------------------------------------------------------------------------- schema plans
@dataclass(frozen=True, slots=True)
class _RowPlan:
    """How to type the images of one table schema (built once, cached per schema)."""

    columns: Mapping[str, Column]
    parsers: dict[str, Callable[[Any], Any] | None]
    names: frozenset[str]
    # the same parsers grouped by kind, for :func:`_fast_image` (checks inlined, no calls)
    strings: tuple[str, ...] = ()
    ints: tuple[tuple[str, int, int], ...] = ()
    bools: tuple[str, ...] = ()
    decimals: tuple[tuple[str, str], ...] = ()  # (column, exponent suffix "E-<scale>")
    others: tuple[tuple[str, Callable[[Any], Any]], ...] = ()


def _row_plan(
    columns: dict[str, Column], parsers: dict[str, Callable[[Any], Any] | None]
) -> _RowPlan:
    strings: list[str] = []
    ints: list[tuple[str, int, int]] = []
    bools: list[str] = []
    decimals: list[tuple[str, str]] = []
    others: list[tuple[str, Callable[[Any], Any]]] = []
    for name, parse in parsers.items():
        if parse is None:
            continue
        bounds = _INT_BOUNDS.get(parse)
        if bounds is not None:
            ints.append((name, *bounds))
        elif parse is _p_str:
            strings.append(name)
        elif parse is _p_bool:
            bools.append(name)
        elif (
            isinstance(parse, partial)
            and parse.func is _p_connect_decimal
            and len(parse.args) == 1
            and not parse.keywords
        ):
            decimals.append((name, f"E{-parse.args[0]}"))
        else:
            others.append((name, parse))
    return _RowPlan(
        MappingProxyType(columns),
        parsers,
        frozenset(columns),
        tuple(strings),
        tuple(ints),
        tuple(bools),
        tuple(decimals),
        tuple(others),
    )


def _fast_image(
    raw: dict[str, Any],
    plan: _RowPlan,
    twin_raw: dict[str, Any] | None = None,
    twin: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``raw`` typed by ``plan`` when every value has its usual JSON type and is valid;
    NotFast otherwise (then the careful per-value path decides, and finds the invalid ones).

    ``twin`` is the other image of an update, typed from ``twin_raw`` by this function:
    a value sent the same (same text or integer) reuses its typed value (unchanged columns).
    """
    out = dict(raw)
    get = out.get
    for name in plan.strings:
        value = get(name)
        if value is not None and type(value) is not str:
            raise NotFast
    for name, low, high in plan.ints:
        value = get(name)
        if value is not None and (type(value) is not int or not low <= value <= high):
            raise NotFast
    for name in plan.bools:
        value = get(name)
        if value is not None and type(value) is not bool:
            raise NotFast
    twin_get = twin_raw.get if twin_raw is not None and twin is not None else _no_twin
    try:
        for name, exponent in plan.decimals:
            value = get(name)
            if value is not None:
                if type(value) is not str:
                    raise NotFast
                same = twin_get(name)
                if type(same) is str and same == value:
                    out[name] = twin[name]  # type: ignore[index]
                    continue
                unscaled = _from_bytes(_a2b_base64(value, strict_mode=True), "big", signed=True)
                out[name] = Decimal(f"{unscaled}{exponent}")
        for name, parse in plan.others:
            value = get(name)
            if value is not None:
                same = twin_get(name)
                kind = type(same)
                if (kind is int or kind is str) and type(value) is kind and same == value:
                    out[name] = twin[name]  # type: ignore[index]
                    continue
                out[name] = parse(value)
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        raise NotFast from None
    return out


def _no_twin(name: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class _EnvelopePlan:
    """What the schema part of a message tells: the row plan and the schema's name."""

    row: _RowPlan | None
    name: str | None


_NO_SCHEMA: Final = _EnvelopePlan(None, None)


class _Meta(msgspec.Struct):
    """Event fields taken from the ``source`` block and the envelope (a Struct: cheap to build)."""

    database: str | None
    schema: str | None
    table: str | None
    ts_ms: int | None
    position: Position | None
    tx: str | None
    row_id: str | None
    extra: dict[str, Any]


class DebeziumJson(Format):
    """Debezium change-event values (JSON converter), with or without the schema part."""

    id: ClassVar[str] = "debezium-json"
    vendor: ClassVar[str] = "Debezium (Red Hat / Kafka Connect)"
    title: ClassVar[str] = (
        "Debezium change event (JSON converter, schema + payload or payload only)"
    )
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image="full (Postgres: key columns or none unless REPLICA IDENTITY FULL)",
        types="Kafka Connect schema (when schemas.enable=true)",
        position="SQL Server commit_lsn/change_lsn/event_serial_no; MySQL binlog file/pos/row; "
        "Postgres lsn; Oracle scn; MongoDB ts/ord",
        key_names=False,
        ddl=True,
    )
    extra_options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "schema",
            "encoder: include the schema part, as the JSON converter with schemas.enable=true "
            "(true/false); events without column types are always written as the payload alone",
            "true",
        ),
        OptionSpec(
            "server_name",
            "encoder: logical server name written in source.name and the schema names",
            "anycdc",
        ),
    )

    _PLAN_CACHE_SIZE: ClassVar[int] = 512
    _PREFIX_CACHE_SIZE: ClassVar[int] = 8

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        try:
            self._with_schema = self.options.flag("schema")
        except ValueError as exc:
            raise OptionError(f"{self.id}: option schema: {exc}") from None
        self._server = self.options.get("server_name") or "anycdc"
        self._plans: Cache[bytes, _EnvelopePlan] = Cache(self._PLAN_CACHE_SIZE)
        # the bytes of a message up to its payload value -> the plan of its schema
        self._prefixes: Cache[bytes, _EnvelopePlan] = Cache(self._PREFIX_CACHE_SIZE)

    # ------------------------------------------------------------------ detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        """Envelope with a Connect struct schema, or a payload with a Debezium ``op``."""
        try:
            return _sniff(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ decoding
    def decode(
        self, value: bytes | bytearray | memoryview | str | None, key: bytes | None = None
    ) -> list[ChangeEvent]:
        """Decode one message value; ``key`` (the Kafka key) names the key columns."""
        if value is None:
            return self.decode_tombstone(key)
        if type(value) is bytes:
            data = value
        else:
            data = (
                value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
            )
        if len(data) > MAX_MESSAGE_BYTES:
            return self.decode_object(parse_json(self.id, data), key)  # raises: too long
        if data.startswith(b'{"schema"') or data.startswith(b'{"payload"'):
            envelope_like = True
        elif data.startswith(b'{"'):
            envelope_like = False  # the first key is another one
        else:
            envelope_like = _starts_like_envelope(data)
        if not envelope_like:
            # the payload alone, usually: parsed here, errors reported by parse_json
            try:
                obj = _EXACT_JSON.decode(data)
            except (msgspec.DecodeError, RecursionError, UnicodeError):
                return self.decode_object(parse_json(self.id, data), key)
            if type(obj) is dict and OP in obj:
                return self._decode_payload(obj, _NO_SCHEMA, key, "$")
            return self.decode_object(obj, key)
        known = self._known_envelope(data)
        if known is not None:
            plan, payload = known
            return self._decode_payload(payload, plan, key, "$.payload")
        try:
            envelope = _ENVELOPE_DECODER.decode(data)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            envelope = None
        if envelope is not None and envelope.payload is not msgspec.UNSET:
            raw = bytes(envelope.schema)
            plan = self._plan_from_raw(raw)
            self._remember_prefix(data, raw, plan)
            return self._decode_payload(envelope.payload, plan, key, "$.payload")
        return self.decode_object(parse_json(self.id, data), key)

    def _known_envelope(self, data: bytes) -> tuple[_EnvelopePlan, Any] | None:
        """Fast path: the message starts with the exact bytes of a recently seen
        ``{"schema":<S>,"payload":`` and ends with ``}``, so only the payload is parsed
        (a byte comparison instead of parsing a schema of kilobytes every message).
        Anything else (another schema, trailing data, a duplicate key) takes the full path."""
        end = len(data)
        if not data.endswith(b"}"):
            end = len(data.rstrip())
            if data[end - 1 : end] != b"}":
                return None
        for prefix, _ in self._prefixes.newest_first():
            if data.startswith(prefix):
                break
        else:
            return None
        plan = self._prefixes.get(prefix)  # (now the most recently used)
        if plan is None:
            return None
        try:
            return plan, _EXACT_JSON.decode(data[len(prefix) : end - 1])
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return None

    def _remember_prefix(self, data: bytes, raw_schema: bytes, plan: _EnvelopePlan) -> None:
        """Keep ``data`` up to the payload value, in the producer's own spacing."""
        head = _ENVELOPE_HEAD_RE.match(data)
        if not raw_schema or head is None or not data.startswith(raw_schema, head.end()):
            return
        tail = _PAYLOAD_HEAD_RE.match(data, head.end() + len(raw_schema))
        if tail is not None and all(
            not data.startswith(p) for p, _ in self._prefixes.newest_first()
        ):
            self._prefixes.put(data[: tail.end()], plan)

    def decode_tombstone(self, key: bytes | None) -> list[ChangeEvent]:
        """A null value (the tombstone after a delete, for log compaction): no event.

        The delete itself came in the message before it; the key alone adds nothing.
        """
        return []

    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        """Decode a parsed message: the envelope or the payload alone."""
        if not isinstance(obj, dict):
            raise self.error("$", f"expected object, got {type_name(obj)}")
        if CE_SPECVERSION in obj and CE_DATA in obj:
            return self._decode_cloudevent(obj, key)
        if ENVELOPE_PAYLOAD in obj and OP not in obj:
            schema = obj.get(ENVELOPE_SCHEMA)
            plan = self._plan_from_schema(schema) if schema is not None else _NO_SCHEMA
            return self._decode_payload(obj[ENVELOPE_PAYLOAD], plan, key, "$.payload")
        return self._decode_payload(obj, _NO_SCHEMA, key, "$")

    def _decode_cloudevent(self, event: dict[str, Any], key: bytes | None) -> list[ChangeEvent]:
        """A CloudEvent of Debezium's CloudEventsConverter: the payload is rebuilt from
        ``data`` and the extension attributes, then decoded as any payload; the envelope's
        ``id``, ``source`` and ``type`` are kept in ``extra["cloudevents"]``."""
        data = event[CE_DATA]
        content_type = event.get(CE_DATA_CONTENT_TYPE)
        if content_type not in (None, CE_JSON) or not isinstance(data, dict):
            raise self.error(
                "$.data",
                f"CloudEvents data is {content_type or type_name(data)}, not JSON: only the "
                "converter's JSON data (data.serializer.type=json) is read",
            )
        path = "$.data"
        plan = _NO_SCHEMA
        if ENVELOPE_PAYLOAD in data and data.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
            schema = data.get(ENVELOPE_SCHEMA)
            plan = self._plan_from_schema(schema) if schema is not None else _NO_SCHEMA
            data, path = data[ENVELOPE_PAYLOAD], "$.data.payload"
            if not isinstance(data, dict):
                raise self.error(path, f"expected object, got {type_name(data)}")
        if CE_OP not in event:
            raise self.error(
                "$", f"missing extension attribute {CE_OP!r} (extension.attributes.enable=false)"
            )
        payload: dict[str, Any] = {**data, OP: event[CE_OP]}
        source: dict[str, Any] = {}
        transaction: dict[str, Any] = {}
        for name, value in event.items():
            if not name.startswith(CE_PREFIX) or name == CE_OP:
                continue
            if name.startswith(CE_TX_PREFIX) and name != CE_SOURCE_TX_ID:
                field = name[len(CE_TX_PREFIX) :]
                transaction[_CE_TRANSACTION_FIELDS.get(field, field)] = value
            else:
                field = name[len(CE_PREFIX) :]
                source[_CE_SOURCE_FIELDS.get(field, field)] = value
        payload[SOURCE] = source
        if transaction:
            payload[TRANSACTION] = transaction
        envelope = {name: event.get(name) for name in (CE_ID, CE_SOURCE, CE_TYPE)}
        return [
            e.with_changes(extra={**e.extra, X_CLOUDEVENTS: envelope})
            for e in self._decode_payload(payload, plan, key, path)
        ]

    # ---- schema plans
    def _plan_from_raw(self, raw: bytes) -> _EnvelopePlan:
        if not raw or raw == b"null":
            return _NO_SCHEMA
        plan = self._plans.get(raw)
        if plan is None:
            try:
                schema = _EXACT_JSON.decode(raw)
            except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:
                raise self.error("$.schema", f"invalid JSON: {exc}") from None
            plan = self._plans.put(raw, self._build_plan(schema))
        return plan

    def _plan_from_schema(self, schema: Any) -> _EnvelopePlan:
        try:
            raw = msgspec.json.encode(schema)
        except (TypeError, ValueError, OverflowError):
            return self._build_plan(schema)
        plan = self._plans.get(raw)
        if plan is None:
            plan = self._plans.put(raw, self._build_plan(schema))
        return plan

    def _build_plan(self, schema: Any) -> _EnvelopePlan:
        if schema is None:
            return _NO_SCHEMA
        if not isinstance(schema, dict):
            raise self.error("$.schema", f"expected object, got {type_name(schema)}")
        name = schema.get(SCHEMA_NAME)
        name = name if isinstance(name, str) else None
        fields = schema.get(SCHEMA_FIELDS)
        if fields is None:
            return _EnvelopePlan(None, name)
        if not isinstance(fields, list):
            raise self.error("$.schema.fields", f"expected array, got {type_name(fields)}")
        row: _RowPlan | None = None
        for index, field_schema in enumerate(fields):
            path = f"$.schema.fields[{index}]"
            if not isinstance(field_schema, dict):
                raise self.error(path, f"expected object, got {type_name(field_schema)}")
            if field_schema.get(SCHEMA_FIELD) not in (AFTER, BEFORE):
                continue
            if field_schema.get(SCHEMA_TYPE) != T_STRUCT:
                continue  # MongoDB: the image is JSON text
            row = self._row_plan(field_schema, path)
            if field_schema.get(SCHEMA_FIELD) == AFTER:
                break
        return _EnvelopePlan(row, name)

    def _row_plan(self, struct: dict[str, Any], path: str) -> _RowPlan:
        fields = struct.get(SCHEMA_FIELDS)
        if not isinstance(fields, list):
            raise self.error(f"{path}.fields", f"expected array, got {type_name(fields)}")
        columns: dict[str, Column] = {}
        parsers: dict[str, Callable[[Any], Any] | None] = {}
        for index, field_schema in enumerate(fields):
            fpath = f"{path}.fields[{index}]"
            if not isinstance(field_schema, dict):
                raise self.error(fpath, f"expected object, got {type_name(field_schema)}")
            column_name = field_schema.get(SCHEMA_FIELD)
            if not isinstance(column_name, str):
                raise self.error(f"{fpath}.field", f"expected string, got {type_name(column_name)}")
            columns[column_name], parsers[column_name] = self._column(field_schema)
        return _row_plan(columns, parsers)

    def _column(self, field_schema: dict[str, Any]) -> tuple[Column, Callable[[Any], Any] | None]:
        ctype = field_schema.get(SCHEMA_TYPE)
        name = field_schema.get(SCHEMA_NAME)
        ctype = ctype if isinstance(ctype, str) else None
        name = name if isinstance(name, str) else None
        vendor = name or ctype
        if name == N_DECIMAL:
            params = field_schema.get(SCHEMA_PARAMETERS)
            params = params if isinstance(params, dict) else {}
            scale = _int_param(params.get(PARAM_SCALE)) or 0
            precision = _int_param(params.get(PARAM_PRECISION))
            valid = precision is not None and 0 <= scale <= precision
            ltype = decimal_type(precision, scale) if valid else decimal_type(None, None)
            return Column(ltype, vendor), partial(_p_connect_decimal, scale)
        known = _NAMED.get(name) if name else None
        if known is not None and (ctype is None or ctype == known[0]):
            ltype, parse = known[1], known[2]
        elif ctype in _PRIMITIVES:
            ltype, parse = _PRIMITIVES[ctype]
        else:
            return Column(UNKNOWN, vendor), None  # struct, array, map: JSON value kept
        zone = self.options.timezone
        if ltype is TIMESTAMP and zone is not None and parse is not None:
            parse = partial(_in_zone, parse, zone)
        return Column(ltype, vendor), parse

    # ---- payloads
    def _decode_payload(
        self, payload: Any, plan: _EnvelopePlan, key: bytes | None, path: str
    ) -> list[ChangeEvent]:
        if payload is None:
            return []  # the tutorial's rendering of a tombstone: {"schema":null,"payload":null}
        if type(payload) is dict:
            try:
                return [self._fast_row(payload, plan.row, key, path)]
            except NotFast:
                self.fast_fallbacks += 1
        elif not isinstance(payload, dict):
            raise self.error(path, f"expected object, got {type_name(payload)}")
        op_code = payload.get(OP)
        if op_code is None:
            return [self._decode_other(payload, plan, path)]
        op = _OPS.get(op_code) if isinstance(op_code, str) else None
        if op is None:
            raise self.error(f"{path}.op", f"unknown op {op_code!r}")
        source = payload.get(SOURCE)
        if source is None:
            source = {}
        elif not isinstance(source, dict):
            raise self.error(f"{path}.source", f"expected object, got {type_name(source)}")
        foreign = _foreign_shape(payload, source)
        if foreign is not None:
            raise self.error(path + foreign[0], foreign[1])
        meta = self._meta(payload, source, op_code, path)
        if op is _HEARTBEAT:
            return [self._message_event(payload, meta, path)]
        key_names, key_values = self._parse_key(key) if key is not None else (None, None)
        if _is_mongo(payload, source):
            return [self._mongo_event(op, payload, meta, key_values, path)]
        event_key = self.primary_key(key_names)
        if op is _TRUNCATE:
            return [self._event(op, meta, key=event_key)]
        postgres = source.get(SRC_CONNECTOR) == CONNECTOR_POSTGRESQL or SRC_LSN in source
        return [self._row_event(op, payload, plan.row, meta, event_key, key_values, path, postgres)]

    def _fast_row(
        self, payload: dict[str, Any], plan: _RowPlan | None, key: bytes | None, path: str
    ) -> ChangeEvent:
        """The usual row change (c/u/d/r, well-typed source and images) in one pass.

        NotFast for anything else: the general path (below) then decodes the message from
        scratch, reports errors and handles the rare cases. When this returns an event,
        it is the one the general path builds.
        """
        op_code = payload.get(OP)
        if type(op_code) is not str:
            raise NotFast
        op = _ROW_OP_CODES.get(op_code)
        source = payload.get(SOURCE)
        if op is None or type(source) is not dict or payload.get(TRANSACTION) is not None:
            raise NotFast
        after_raw = payload.get(AFTER)
        before_raw = payload.get(BEFORE)
        get = source.get
        connector = get(SRC_CONNECTOR)
        if (
            connector == CONNECTOR_MONGODB
            or connector == CONNECTOR_CASSANDRA
            or isinstance(after_raw, str)
            or isinstance(before_raw, str)
            or MONGO_PATCH in payload
            or MONGO_UPDATE_DESCRIPTION in payload
            or SRC_SCN in source
            or (type(after_raw) is dict and len(after_raw) == 1)  # maybe an Avro union
            or (type(before_raw) is dict and len(before_raw) == 1)
        ):
            raise NotFast
        # source metadata, as _meta reads it when every field has its usual type
        tx = get(SRC_TX_ID)
        database, schema, table = get(SRC_DB), get(SRC_SCHEMA), get(SRC_TABLE)
        if not database and SRC_KEYSPACE in source:
            database = get(SRC_KEYSPACE)
        if table is None:
            table = get(SRC_COLLECTION)
        ts_ms = get(SRC_TS_MS)
        row_id = get(SRC_ROW_ID)
        if (
            (tx is not None and type(tx) is not str)
            or (database is not None and (type(database) is not str or not database))
            or (schema is not None and (type(schema) is not str or not schema))
            or (table is not None and (type(table) is not str or not table))
            or type(ts_ms) is not int
            or (row_id is not None and type(row_id) is not str)
        ):
            raise NotFast
        extra: dict[str, Any] = {X_CONNECTOR: connector} if type(connector) is str else {}
        snapshot = get(SRC_SNAPSHOT)
        if snapshot is not None:
            if type(snapshot) is not str:
                snapshot = _snapshot_text(snapshot)
            if snapshot is not None and snapshot != (
                SNAPSHOT_TRUE if op_code == OP_READ else SNAPSHOT_FALSE
            ):
                extra[X_SNAPSHOT] = snapshot
        gtid = get(SRC_GTID)
        if gtid and type(gtid) is str:
            extra[X_GTID] = gtid
        position = self._position(source, ts_ms, _SOURCE_PATHS.get(path) or f"{path}.source")
        # images
        before = after = None
        if op is not _DELETE:
            if type(after_raw) is not dict:
                raise NotFast
            after = dict(after_raw) if plan is None else _fast_image(after_raw, plan)
        if op is _UPDATE or op is _DELETE:
            if type(before_raw) is dict:
                if plan is None:
                    before = dict(before_raw)
                else:
                    before = _fast_image(before_raw, plan, after_raw, after)
            elif before_raw is not None or op is _DELETE:
                raise NotFast
        if plan is not None:
            names = plan.names
            if (after is not None and after.keys() != names) or (
                before is not None and before.keys() != names
            ):
                raise NotFast
            columns: Mapping[str, Column] | None = plan.columns
        else:
            columns = None
            if before is not None and after is not None and before.keys() != after.keys():
                raise NotFast
        if (connector == CONNECTOR_POSTGRESQL or SRC_LSN in source) and (
            _may_be_unavailable(before) or _may_be_unavailable(after)
        ):
            raise NotFast
        key_names = self._parse_key(key)[0] if key is not None else None
        return ChangeEvent(
            op=op,
            format=self.id,
            database=database,
            schema=schema,
            table=table,
            key=self.primary_key(key_names),
            before=before,
            after=after,
            columns=columns,
            ts_ms=ts_ms,
            position=position,
            tx=tx,
            row_id=row_id,
            extra=extra,
        )

    def _row_event(
        self,
        op: Op,
        payload: dict[str, Any],
        plan: _RowPlan | None,
        meta: _Meta,
        key: tuple[str, ...] | None,
        key_values: dict[str, Any] | None,
        path: str,
        postgres: bool,
    ) -> ChangeEvent:
        invalid: list[str] = []
        partial_images: list[str] = []
        columns = plan.columns if plan is not None else None
        before_raw = payload.get(BEFORE)
        after_raw = payload.get(AFTER)
        before = after = None
        if op is not _DELETE:
            if after_raw is None:
                raise self.error(f"{path}.after", f"missing after image for op '{_OP_CODES[op]}'")
            after = self._image(after_raw, plan, path, AFTER, invalid)
        if op is _UPDATE or op is _DELETE:
            if before_raw is not None:
                # the after image typed whole: unchanged columns reuse its values
                twin = None if invalid or type(after_raw) is not dict else after
                before = self._image(before_raw, plan, path, BEFORE, invalid, after_raw, twin)
            elif op is _DELETE:
                if not key_values:
                    raise self.error(
                        f"{path}.before",
                        "delete without a before image and no Kafka key (Postgres: set "
                        "REPLICA IDENTITY FULL, or pass the message key)",
                    )
                before = self._image(key_values, plan, path, BEFORE, invalid)
                partial_images.append(BEFORE)
        if plan is not None:
            names = plan.names
            if (after is None or after.keys() == names) and (
                before is None or before.keys() == names
            ):
                pass  # the usual case: exactly the schema's columns
            else:
                columns = self._extra_columns(plan, before, after, partial_images)
        elif before is not None and after is not None:
            if not after.keys() <= before.keys() and BEFORE not in partial_images:
                partial_images.append(BEFORE)
            if not before.keys() <= after.keys():
                partial_images.append(AFTER)
        if postgres:
            for name, image in ((BEFORE, before), (AFTER, after)):
                if image is not None and _drop_unavailable(image) and name not in partial_images:
                    partial_images.append(name)
        if partial_images or invalid:
            return self._event(
                op,
                meta,
                key=key,
                before=before,
                after=after,
                columns=columns,
                partial=tuple(p for p in (BEFORE, AFTER) if p in partial_images),
                invalid=tuple(invalid),
            )
        # the usual case, built at once (defaults left out: fewer keywords, a faster call)
        return ChangeEvent(
            op=op,
            format=self.id,
            database=meta.database,
            schema=meta.schema,
            table=meta.table,
            key=key,
            before=before,
            after=after,
            columns=columns,
            ts_ms=meta.ts_ms,
            position=meta.position,
            tx=meta.tx,
            row_id=meta.row_id,
            extra=meta.extra,
        )

    @staticmethod
    def _extra_columns(
        plan: _RowPlan,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        partial_images: list[str],
    ) -> Mapping[str, Column]:
        """Images that differ from the schema's columns: partial ones, and extra columns."""
        names = plan.names
        extras: list[str] = []
        for name, image in ((BEFORE, before), (AFTER, after)):
            if image is None or image.keys() == names:
                continue
            if not names <= image.keys() and name not in partial_images:
                partial_images.append(name)
            extras.extend(n for n in image if n not in names)
        if extras:
            return {**plan.columns, **dict.fromkeys(extras, Column(UNKNOWN))}
        return plan.columns

    def _image(
        self,
        raw: Any,
        plan: _RowPlan | None,
        path: str,
        field: str,
        invalid: list[str],
        twin_raw: Any = None,
        twin: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A typed image: at once when every value is usual (:func:`_fast_image`, where
        ``twin`` is the other image typed from ``twin_raw``), else value by value."""
        if type(raw) is not dict:
            raise self.error(f"{path}.{field}", f"expected object, got {type_name(raw)}")
        if plan is None:
            return dict(raw)
        try:
            return _fast_image(raw, plan, twin_raw, twin)
        except NotFast:
            return convert_values(raw, plan.parsers, invalid)

    def _event(self, op: Op, meta: _Meta, **fields: Any) -> ChangeEvent:
        return ChangeEvent(
            op=op,
            format=self.id,
            database=meta.database,
            schema=meta.schema,
            table=meta.table,
            ts_ms=meta.ts_ms,
            position=meta.position,
            tx=meta.tx,
            row_id=meta.row_id,
            extra=meta.extra,
            **fields,
        )

    # ---- source metadata
    def _meta(
        self, payload: dict[str, Any], source: dict[str, Any], op_code: str | None, path: str
    ) -> _Meta:
        get = source.get
        where = _SOURCE_PATHS.get(path) or f"{path}.source"
        extra: dict[str, Any] = {}
        connector = get(SRC_CONNECTOR)
        if type(connector) is str:
            extra[X_CONNECTOR] = connector
        snapshot = get(SRC_SNAPSHOT)
        if snapshot is not None and type(snapshot) is not str:
            snapshot = _snapshot_text(snapshot)
        if snapshot is not None and snapshot != (
            SNAPSHOT_TRUE if op_code == OP_READ else SNAPSHOT_FALSE
        ):
            extra[X_SNAPSHOT] = snapshot
        gtid = get(SRC_GTID)
        if gtid and type(gtid) is str:
            extra[X_GTID] = gtid
        if SRC_SCN in source:
            commit_scn = self._text(get(SRC_COMMIT_SCN), where, SRC_COMMIT_SCN)
            if commit_scn is not None:
                extra[X_COMMIT_SCN] = commit_scn
        tx = None
        transaction = payload.get(TRANSACTION)
        if transaction is not None:
            tx = self._transaction(transaction, extra, path)
        if tx is None:
            tx = get(SRC_TX_ID)
            if tx is not None and type(tx) is not str:
                tx = self._text(tx, where, SRC_TX_ID)
        # the usual types are checked inline; the readers handle the rest (and errors)
        database, schema, table = get(SRC_DB), get(SRC_SCHEMA), get(SRC_TABLE)
        database_field = SRC_DB
        if not database and SRC_KEYSPACE in source:
            database, database_field = get(SRC_KEYSPACE), SRC_KEYSPACE
        if table is None:
            table = get(SRC_COLLECTION)
        if database is not None and (type(database) is not str or not database):
            database = self._name(database, where, database_field)
        if schema is not None and (type(schema) is not str or not schema):
            schema = self._name(schema, where, SRC_SCHEMA)
        if table is not None and (type(table) is not str or not table):
            table = self._name(table, where, SRC_TABLE)
        ts_ms = get(SRC_TS_MS)
        if type(ts_ms) is not int:
            ts_ms = self._int(ts_ms, where, SRC_TS_MS)
            if ts_ms is None:
                ts_sec = self._int(get(SRC_TS_SEC), where, SRC_TS_SEC)
                ts_ms = ts_sec * 1000 if ts_sec is not None else None
        row_id = get(SRC_ROW_ID)
        if row_id is not None and type(row_id) is not str:
            row_id = self._text(row_id, where, SRC_ROW_ID)
        position = self._position(source, ts_ms, where)
        return _Meta(database, schema, table, ts_ms, position, tx, row_id, extra)

    def _transaction(self, transaction: Any, extra: dict[str, Any], path: str) -> str | None:
        """The ``transaction`` block: its id, and its order counters into ``extra``."""
        where = f"{path}.transaction"
        if not isinstance(transaction, dict):
            raise self.error(where, f"expected object, got {type_name(transaction)}")
        for field, name in (
            (TX_TOTAL_ORDER, X_TOTAL_ORDER),
            (TX_DATA_COLLECTION_ORDER, X_DATA_COLLECTION_ORDER),
        ):
            number = self._int(transaction.get(field), where, field)
            if number is not None:
                extra[name] = number
        return self._text(transaction.get(TX_ID), where, TX_ID)

    # Field readers: a fast path for the expected JSON type; the error path is built
    # from ``where`` + ``field`` only when the value is wrong.
    def _text(self, value: Any, where: str, field: str) -> str | None:
        if value is None or type(value) is str:
            return value
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return str(value)
        raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")

    def _name(self, value: Any, where: str, field: str) -> str | None:
        if type(value) is str:
            return value or None  # Postgres messages (op m) send "" for no schema/table
        return self._text(value, where, field) or None

    def _int(self, value: Any, where: str, field: str) -> int | None:
        """An integer sent as a number or a digit string (None when null or empty)."""
        if type(value) is int or value is None:
            return value
        if value == "":
            return None
        try:
            return parse_int(value)
        except (ValueError, ArithmeticError):
            raise self.error(f"{where}.{field}", f"expected integer, got {value!r}") from None

    def _count(self, value: Any, where: str, field: str) -> int | None:
        number = self._int(value, where, field)
        if number is not None and number < 0:
            raise self.error(f"{where}.{field}", f"expected a non-negative integer, got {number}")
        return number

    def _position(self, source: dict[str, Any], ts_ms: int | None, where: str) -> Position | None:
        get = source.get
        if SRC_FILE in source and SRC_POS in source:  # MySQL, MariaDB
            binlog = get(SRC_FILE)
            if binlog is not None and type(binlog) is not str:
                raise self.error(f"{where}.file", f"expected string, got {type_name(binlog)}")
            pos, row = get(SRC_POS), get(SRC_ROW)
            if type(pos) is not int or pos < 0:
                pos = self._count(pos, where, SRC_POS)
            if type(row) is not int or row < 0:
                row = self._count(row, where, SRC_ROW) or 0
            number = binlog.rpartition(".")[2] if binlog else ""
            if pos is None or not (number.isdigit() and number.isascii()):
                return None
            return Position((int(number), pos, row))
        if SRC_LSN in source:  # PostgreSQL
            lsn = get(SRC_LSN)
            if type(lsn) is not int:
                lsn = self._int(lsn, where, SRC_LSN)
            return Position((lsn,)) if lsn is not None and lsn >= 0 else None
        if SRC_COMMIT_LSN in source or SRC_CHANGE_LSN in source:  # SQL Server, Db2
            commit = self._lsn(get(SRC_COMMIT_LSN), where, SRC_COMMIT_LSN)
            if commit is None:
                return None
            change = self._lsn(get(SRC_CHANGE_LSN), where, SRC_CHANGE_LSN) or (0, 0, 0)
            serial = self._count(get(SRC_EVENT_SERIAL_NO), where, SRC_EVENT_SERIAL_NO)
            return Position((*commit, *change, serial or 0))
        if SRC_SCN in source:  # Oracle
            scn = self._count(get(SRC_SCN), where, SRC_SCN)
            return Position((scn,)) if scn is not None else None
        if SRC_ORD in source:  # MongoDB
            order = self._count(get(SRC_ORD), where, SRC_ORD)
            seconds = self._count(get(SRC_SEC), where, SRC_SEC)
            if seconds is None and ts_ms is not None and ts_ms >= 0:
                seconds = ts_ms // 1000
            if seconds is None or order is None:
                return None
            return Position((seconds, order))
        return _sequence_position(get(SRC_SEQUENCE))

    def _lsn(self, value: Any, where: str, field: str) -> tuple[int, int, int] | None:
        """``"00000027:00000758:0005"`` -> (0x27, 0x758, 5); None when absent or not 3 groups."""
        if value is None:
            return None
        if type(value) is not str:
            raise self.error(f"{where}.{field}", f"expected string, got {type_name(value)}")
        match = _LSN_RE.fullmatch(value)
        if match is None:
            return None
        return int(match.group(1), 16), int(match.group(2), 16), int(match.group(3), 16)

    # ---- Kafka key
    def _parse_key(self, key: bytes | None) -> tuple[tuple[str, ...] | None, dict[str, Any] | None]:
        """Key column names and values from the Kafka key (schema part or not); None if unusable."""
        if key is None:
            return None, None
        try:
            envelope = _ENVELOPE_DECODER.decode(key)
            payload = envelope.payload
            if payload is msgspec.UNSET:
                payload = _EXACT_JSON.decode(key)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return None, None
        if not isinstance(payload, dict) or not payload:
            return None, None
        return tuple(payload), payload

    # ---- events other than row changes
    def _decode_other(self, payload: dict[str, Any], plan: _EnvelopePlan, path: str) -> ChangeEvent:
        if DDL in payload or TABLE_CHANGES in payload:
            return self._schema_change(payload, path)
        status = payload.get(TX_STATUS)
        if status in (STATUS_BEGIN, STATUS_END) and TX_ID in payload:
            return self._transaction_marker(payload, status, path)
        if plan.name == N_HEARTBEAT or payload.keys() == {TS_MS}:
            ts_ms = self._int(payload.get(TS_MS), path, "ts_ms")
            return ChangeEvent(op=Op.HEARTBEAT, format=self.id, ts_ms=ts_ms)
        reason = "missing required field 'op'"
        if plan.name and plan.name.endswith(KEY_SCHEMA_SUFFIXES):
            reason += f": this is a message key (schema {plan.name!r}), not a change-event value"
        raise self.error(path, reason)

    def _schema_change(self, payload: dict[str, Any], path: str) -> ChangeEvent:
        source = payload.get(SOURCE)
        if source is None:
            source = {}
        elif not isinstance(source, dict):
            raise self.error(f"{path}.source", f"expected object, got {type_name(source)}")
        meta = self._meta(payload, source, None, path)
        database = self._name(payload.get(DATABASE_NAME), path, "databaseName")
        schema = self._name(payload.get(DDL_SCHEMA_NAME), path, "schemaName")
        meta.database = database or meta.database
        meta.schema = schema or meta.schema
        ddl = self._text(payload.get(DDL), path, "ddl")
        changes = payload.get(TABLE_CHANGES)
        key: tuple[str, ...] | None = None
        columns: dict[str, Column] | None = None
        if changes is not None and not isinstance(changes, list):
            raise self.error(f"{path}.tableChanges", f"expected array, got {type_name(changes)}")
        if changes and len(changes) == 1:
            key, columns = self._table_change(changes[0], meta.extra, f"{path}.tableChanges[0]")
        return self._event(Op.DDL, meta, key=self.primary_key(key), columns=columns, ddl=ddl)

    def _table_change(
        self, change: Any, extra: dict[str, Any], path: str
    ) -> tuple[tuple[str, ...] | None, dict[str, Column] | None]:
        if not isinstance(change, dict):
            raise self.error(path, f"expected object, got {type_name(change)}")
        change_type = self._text(change.get(CHANGE_TYPE), path, "type")
        if change_type:
            extra[X_TABLE_CHANGE] = change_type
        table = change.get(CHANGE_TABLE)
        if table is None:
            return None, None
        if not isinstance(table, dict):
            raise self.error(f"{path}.table", f"expected object, got {type_name(table)}")
        pk = table.get(TABLE_PRIMARY_KEY)
        key = tuple(pk) if isinstance(pk, list) and all(isinstance(k, str) for k in pk) else None
        raw_columns = table.get(TABLE_COLUMNS)
        if not isinstance(raw_columns, list):
            return key or None, None
        columns: dict[str, Column] = {}
        for index, col in enumerate(raw_columns):
            cpath = f"{path}.table.columns[{index}]"
            if not isinstance(col, dict):
                raise self.error(cpath, f"expected object, got {type_name(col)}")
            name = col.get(COLUMN_NAME)
            if not isinstance(name, str):
                raise self.error(f"{cpath}.name", f"expected string, got {type_name(name)}")
            type_text = self._text(col.get(COLUMN_TYPE_NAME), cpath, "typeName")
            code = self._int(col.get(COLUMN_JDBC_TYPE), cpath, "jdbcType")
            length = self._int(col.get(COLUMN_LENGTH), cpath, "length")
            scale = self._int(col.get(COLUMN_SCALE), cpath, "scale")
            columns[name] = Column(_ddl_type(type_text, code, length, scale), type_text, code)
        return key or None, columns

    def _transaction_marker(self, payload: dict[str, Any], status: str, path: str) -> ChangeEvent:
        extra: dict[str, Any] = {}
        count = self._int(payload.get(TX_EVENT_COUNT), path, "event_count")
        if count is not None:
            extra[X_EVENT_COUNT] = count
        return ChangeEvent(
            op=Op.BEGIN if status == STATUS_BEGIN else Op.COMMIT,
            format=self.id,
            ts_ms=self._int(payload.get(TS_MS), path, "ts_ms"),
            tx=self._text(payload.get(TX_ID), path, "id"),
            extra=extra,
        )

    def _message_event(self, payload: dict[str, Any], meta: _Meta, path: str) -> ChangeEvent:
        message = payload.get(MESSAGE)
        if message is not None:
            if not isinstance(message, dict):
                raise self.error(f"{path}.message", f"expected object, got {type_name(message)}")
            meta.extra[X_MESSAGE] = {
                MESSAGE_PREFIX: self._text(message.get(MESSAGE_PREFIX), path, "message.prefix"),
                MESSAGE_CONTENT: self._text(message.get(MESSAGE_CONTENT), path, "message.content"),
            }
        return self._event(Op.HEARTBEAT, meta)

    # ---- MongoDB
    def _mongo_event(
        self,
        op: Op,
        payload: dict[str, Any],
        meta: _Meta,
        key_values: dict[str, Any] | None,
        path: str,
    ) -> ChangeEvent:
        key = self.primary_key((MONGO_ID,))
        if op is Op.TRUNCATE:
            return self._event(op, meta, key=key)
        # documents are typed as drs-mongo-json types them (one Extended JSON reader)
        before, before_columns = self._document(payload.get(BEFORE), f"{path}.before")
        after, columns = self._document(payload.get(AFTER), f"{path}.after")
        columns = {**before_columns, **columns}
        patch: dict[str, Any] | None = None
        old_patch = self._json_document(payload.get(MONGO_PATCH), f"{path}.patch")
        if old_patch is not None:
            if any(k.startswith("$") for k in old_patch):
                patch = update_patch(from_ejson(old_patch), self.id, f"{path}.patch")
            elif after is None:
                after, replaced = ejson_document(old_patch)  # a replacement document
                columns.update(replaced)
        elif payload.get(MONGO_UPDATE_DESCRIPTION) is not None:
            patch = self._update_description(
                payload[MONGO_UPDATE_DESCRIPTION], f"{path}.updateDescription"
            )
        # the document's id, for an image that has nothing else: from a document, else the key
        id_image: dict[str, Any] | None = None
        id_columns: dict[str, Column] = {}
        found, found_columns = self._document(payload.get(MONGO_FILTER), f"{path}.filter")
        for doc, doc_columns in ((after, columns), (before, columns), (found, found_columns)):
            if doc is not None and MONGO_ID in doc:
                id_image = {MONGO_ID: doc[MONGO_ID]}
                id_columns = {MONGO_ID: doc_columns[MONGO_ID]}
                break
        else:
            if key_values is not None and MONGO_KEY_ID in key_values:
                id_image, id_columns = ejson_document(
                    {MONGO_ID: _mongo_key_id(key_values[MONGO_KEY_ID])}
                )
        columns = {**id_columns, **columns}
        partial_images: tuple[str, ...] = ()
        if op in (Op.INSERT, Op.SNAPSHOT):
            if after is None:
                raise self.error(f"{path}.after", f"missing after image for op '{_OP_CODES[op]}'")
            return self._event(op, meta, key=key, after=after, columns=columns or None)
        if op is Op.UPDATE:
            if after is not None:
                return self._event(
                    op, meta, key=key, before=before, after=after, columns=columns or None
                )
            if patch is None:
                raise self.error(f"{path}.after", "update without an after document or a patch")
            return self._event(
                op,
                meta,
                key=key,
                before=before,
                after=id_image,
                columns=columns or None,
                patch=patch,
                partial=(AFTER,),
            )
        if before is None:
            if id_image is None:
                raise self.error(
                    f"{path}.before", "delete without a before document, filter or Kafka key"
                )
            before, partial_images = id_image, (BEFORE,)
        return self._event(
            op, meta, key=key, before=before, columns=columns or None, partial=partial_images
        )

    def _json_document(self, raw: Any, path: str) -> dict[str, Any] | None:
        """A document as sent (JSON text, usually), parsed: numbers with a fraction are
        BSON doubles (floats), not decimals."""
        if raw is None:
            return None
        try:
            if isinstance(raw, str):
                raw = _DOCUMENT_JSON.decode(raw)
            elif isinstance(raw, dict):
                raw = _DOCUMENT_JSON.decode(_NUMBER_JSON.encode(raw))
        except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:
            raise self.error(path, f"invalid document JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise self.error(path, f"expected document, got {type_name(raw)}")
        return raw

    def _document(self, raw: Any, path: str) -> tuple[dict[str, Any] | None, dict[str, Column]]:
        """A document in Extended JSON (any ``json.serialization.mode``) and its columns."""
        doc = self._json_document(raw, path)
        return (None, {}) if doc is None else ejson_document(doc)

    def _update_description(self, raw: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(raw, dict):
            raise self.error(path, f"expected object, got {type_name(raw)}")
        operators: dict[str, Any] = {}
        updated = self._json_document(raw.get(MONGO_UPDATED_FIELDS), f"{path}.updatedFields")
        if updated:
            operators[PATCH_SET] = from_ejson(updated)
        removed = raw.get(MONGO_REMOVED_FIELDS)
        if removed is not None:
            if not isinstance(removed, list) or not all(isinstance(f, str) for f in removed):
                raise self.error(f"{path}.removedFields", "expected array of field names")
            if removed:
                operators[PATCH_UNSET] = dict.fromkeys(removed, True)
        patch = update_patch(operators, self.id, path)
        truncated = raw.get(MONGO_TRUNCATED_ARRAYS)
        if truncated:
            patch[PATCH_TRUNCATED_ARRAYS] = truncated
        return patch or None

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One message: the envelope (``schema`` option) or the payload alone (a row change
        that came as a CloudEvent goes back as one)."""
        schema, payload = self.schema_and_payload(event)
        if event.op in _OP_CODES and X_CLOUDEVENTS in event.extra:
            return [dumps(self._encode_cloudevent(event, schema, payload)).encode("utf-8")]
        body = (
            {ENVELOPE_SCHEMA: schema, ENVELOPE_PAYLOAD: payload}
            if self._with_schema and schema is not None
            else payload
        )
        return [dumps(body).encode("utf-8")]

    def schema_and_payload(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The Connect schema (None for a row change without column types) and the payload
        the JSON converter writes for ``event`` (the Avro encoder starts from both)."""
        schema: dict[str, Any] | None
        payload: dict[str, Any]
        if event.op in _OP_CODES:
            if event.extra.get(X_CONNECTOR) == CONNECTOR_MONGODB:
                schema, payload = self._encode_mongo(event)
            else:
                schema, payload = self._encode_change(event)
        elif event.op is Op.DDL:
            schema, payload = self._encode_schema_change(event)
        elif event.op in (Op.BEGIN, Op.COMMIT):
            schema, payload = _encode_transaction_marker(event)
        elif X_MESSAGE in event.extra:
            schema, payload = self._encode_message(event)
        else:
            schema = _struct([_field(T_INT64, TS_MS, optional=False)], N_HEARTBEAT)
            payload = {TS_MS: event.ts_ms}
        return schema, payload

    def encode_key(self, event: ChangeEvent) -> bytes | None:
        """Debezium's Kafka key: a struct of the key columns (with its schema when enabled)."""
        key = self.key_schema_and_payload(event)
        if key is None:
            return None
        schema, payload = key
        if not self._with_schema or (
            event.columns is None and event.extra.get(X_CONNECTOR) != CONNECTOR_MONGODB
        ):
            return dumps(payload).encode("utf-8")
        return dumps({ENVELOPE_SCHEMA: schema, ENVELOPE_PAYLOAD: payload}).encode("utf-8")

    def key_schema_and_payload(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The Connect schema and payload of the Kafka key (None: the event has no key)."""
        if event.extra.get(X_CONNECTOR) == CONNECTOR_MONGODB:
            row = event.image if event.image is not None else event.before
            if row is None or MONGO_ID not in row:
                return None
            id_field = ejson_fields({MONGO_ID: row[MONGO_ID]}, event.columns)[MONGO_ID]
            payload: dict[str, Any] = {MONGO_KEY_ID: dumps(id_field)}
            fields = [_field(T_STRING, MONGO_KEY_ID, optional=False)]
        else:
            values = event.key_values()
            if values is None or event.key is None:
                return None
            specs = [self._spec(event, name) for name in event.key]
            payload = {
                name: spec.render(value) if value is not None else None
                for name, spec, value in zip(event.key, specs, values, strict=True)
            }
            fields = [
                spec.schema(name, optional=False)
                for name, spec in zip(event.key, specs, strict=True)
            ]
        return _struct(fields, f"{self._prefix(event)}.Key"), payload

    def _spec(self, event: ChangeEvent, name: str) -> _FieldSpec:
        column = (event.columns or {}).get(name)
        if column is None:
            sample = next(
                (
                    img[name]
                    for img in (event.after, event.before)
                    if img and img.get(name) is not None
                ),
                None,
            )
            return _unknown_spec(None, sample)
        return _field_spec(column, event, name)

    def _prefix(self, event: ChangeEvent) -> str:
        return ".".join(p for p in (self._server, event.database, event.schema, event.table) if p)

    def _encode_change(self, event: ChangeEvent) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        names = list(event.columns or ())
        for image in (event.before, event.after):
            names.extend(n for n in (image or ()) if n not in names)
        specs = {name: self._spec(event, name) for name in names}
        source, source_fields, connector = self._encode_source(event)
        payload: dict[str, Any] = {
            BEFORE: _render_image(event.before, specs),
            AFTER: _render_image(event.after, specs),
            SOURCE: source,
            OP: _OP_CODES[event.op],
            TS_MS: event.ts_ms,
        }
        tx_field = self._encode_transaction(event, payload, source, connector)
        if event.columns is None:
            return None, payload
        key = set(event.key or ())
        value_fields = [specs[n].schema(n, optional=n not in key) for n in names]
        prefix = self._prefix(event)
        value_struct = _struct(value_fields, f"{prefix}.Value")
        fields = [
            _as_field(value_struct, BEFORE),
            _as_field(value_struct, AFTER),
            _source_schema(source_fields, connector),
            _field(T_STRING, OP, optional=False),
            _field(T_INT64, TS_MS),
        ]
        if tx_field:
            fields.append(_TRANSACTION_SCHEMA)
        return _struct(fields, f"{prefix}.Envelope"), payload

    def _encode_transaction(
        self,
        event: ChangeEvent,
        payload: dict[str, Any],
        source: dict[str, Any],
        connector: str | None,
    ) -> bool:
        """Write ``tx``: Postgres/Oracle ``source.txId``, else a ``transaction`` block."""
        if event.tx is None:
            return False
        ordered = X_TOTAL_ORDER in event.extra or X_DATA_COLLECTION_ORDER in event.extra
        if not ordered and connector == CONNECTOR_POSTGRESQL and event.tx.isdigit():
            source[SRC_TX_ID] = int(event.tx)
            return False
        if not ordered and connector == CONNECTOR_ORACLE:
            source[SRC_TX_ID] = event.tx
            return False
        payload[TRANSACTION] = {
            TX_ID: event.tx,
            TX_TOTAL_ORDER: event.extra.get(X_TOTAL_ORDER),
            TX_DATA_COLLECTION_ORDER: event.extra.get(X_DATA_COLLECTION_ORDER),
        }
        return True

    def _encode_source(
        self, event: ChangeEvent
    ) -> tuple[dict[str, Any], list[tuple[str, str]], str | None]:
        """The ``source`` block laid out for the event's connector, and its field types."""
        extra = event.extra
        connector = extra.get(X_CONNECTOR)
        parts = event.position.parts if event.position is not None else None
        family = _family(connector, extra)
        if parts is not None and len(parts) != _POSITION_ARITY.get(family, -1):
            family = None  # this position does not fit the connector's fields: use `sequence`
        source: dict[str, Any] = {
            SRC_VERSION: ENCODER_VERSION,
            SRC_CONNECTOR: connector,
            SRC_NAME: self._server,
        }
        if connector is None:
            del source[SRC_CONNECTOR]
        source[SRC_TS_MS] = event.ts_ms
        snapshot = extra.get(X_SNAPSHOT) or (
            SNAPSHOT_TRUE if event.op is Op.SNAPSHOT else SNAPSHOT_FALSE
        )
        source[SRC_SNAPSHOT] = snapshot
        source[SRC_DB] = event.database
        if family in _MYSQL_FAMILY:
            source[SRC_TABLE] = event.table
            source[SRC_SERVER_ID] = 0
            source[SRC_GTID] = extra.get(X_GTID)
            source[SRC_FILE] = f"mysql-bin.{parts[0]:06d}" if parts else None
            source[SRC_POS] = parts[1] if parts else None
            source[SRC_ROW] = parts[2] if parts else None
            source[SRC_THREAD] = None
            source[SRC_QUERY] = None
        elif family == CONNECTOR_MONGODB:
            source[SRC_RS] = None
            source[SRC_COLLECTION] = event.table
            if parts and (event.ts_ms is None or event.ts_ms // 1000 != parts[0]):
                source[SRC_SEC] = parts[0]  # the oplog seconds, when ts_ms does not carry them
            source[SRC_ORD] = parts[1] if parts else None
        else:
            source[SRC_SCHEMA] = event.schema
            source[SRC_TABLE] = event.table
            if family == CONNECTOR_POSTGRESQL:
                source[SRC_TX_ID] = None
                source[SRC_LSN] = parts[0] if parts else None
                source[SRC_XMIN] = None
            elif family == CONNECTOR_SQLSERVER:
                source[SRC_CHANGE_LSN] = (
                    _format_lsn(parts[3:6]) if parts and any(parts[3:6]) else None
                )
                source[SRC_COMMIT_LSN] = _format_lsn(parts[0:3]) if parts else None
                source[SRC_EVENT_SERIAL_NO] = parts[6] if parts and parts[6] else None
            elif family == CONNECTOR_ORACLE:
                source[SRC_TX_ID] = None
                source[SRC_SCN] = str(parts[0]) if parts else None
                source[SRC_COMMIT_SCN] = extra.get(X_COMMIT_SCN)
                source[SRC_ROW_ID] = event.row_id
            else:
                source[SRC_SEQUENCE] = dumps([str(p) for p in parts]) if parts else None
        if event.row_id is not None and SRC_ROW_ID not in source:
            source[SRC_ROW_ID] = event.row_id
        types = _ORACLE_SOURCE_TYPES if family == CONNECTOR_ORACLE else _SOURCE_TYPES
        fields = [(name, types.get(name, T_STRING)) for name in source]
        return source, fields, connector

    def _encode_schema_change(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        changes: list[dict[str, Any]] = []
        if event.columns is not None:
            table_id = ".".join(f'"{p}"' for p in (event.database, event.schema, event.table) if p)
            columns = []
            for position, (name, col) in enumerate(event.columns.items(), start=1):
                is_decimal = col.type.name == "decimal" and col.type.precision is not None
                columns.append({
                    COLUMN_NAME: name,
                    COLUMN_JDBC_TYPE: col.vendor_code,
                    COLUMN_TYPE_NAME: col.vendor_type or str(col.type),
                    COLUMN_LENGTH: col.type.precision if is_decimal else None,
                    COLUMN_SCALE: col.type.scale if is_decimal else None,
                    COLUMN_POSITION: position,
                    COLUMN_OPTIONAL: name not in (event.key or ()),
                })  # fmt: skip
            changes.append({
                CHANGE_TYPE: event.extra.get(X_TABLE_CHANGE, "ALTER"),
                CHANGE_ID: table_id,
                CHANGE_TABLE: {TABLE_PRIMARY_KEY: list(event.key or ()), TABLE_COLUMNS: columns},
            })  # fmt: skip
        payload = {
            SOURCE: source,
            TS_MS: event.ts_ms,
            DATABASE_NAME: event.database,
            DDL_SCHEMA_NAME: event.schema,
            DDL: event.ddl,
            TABLE_CHANGES: changes,
        }
        fields = [
            _source_schema(source_fields, connector),
            _field(T_INT64, TS_MS),
            _field(T_STRING, DATABASE_NAME),
            _field(T_STRING, DDL_SCHEMA_NAME),
            _field(T_STRING, DDL),
            _array(_TABLE_CHANGE_SCHEMA, TABLE_CHANGES, optional=False),
        ]
        name = f"io.debezium.connector.{connector or 'common'}.SchemaChangeValue"
        return _struct(fields, name), payload

    def _encode_message(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        message = event.extra[X_MESSAGE]
        payload = {SOURCE: source, OP: OP_MESSAGE, TS_MS: event.ts_ms, MESSAGE: dict(message)}
        tx_field = self._encode_transaction(event, payload, source, connector)
        message_schema = _struct(
            [_field(T_STRING, MESSAGE_PREFIX), _field(T_BYTES, MESSAGE_CONTENT)],
            "io.debezium.connector.postgresql.Message",
        )
        fields = [
            _source_schema(source_fields, connector),
            _field(T_STRING, OP, optional=False),
            _field(T_INT64, TS_MS),
            _as_field(message_schema, MESSAGE),
        ]
        if tx_field:
            fields.append(_TRANSACTION_SCHEMA)
        return _struct(fields, f"{self._prefix(event)}.Envelope"), payload

    def _encode_cloudevent(
        self, event: ChangeEvent, schema: dict[str, Any] | None, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """A row change as Debezium's CloudEventsConverter writes it (JSON envelope, JSON
        data): ``source``/``transaction`` fields as extension attributes (int64 as text)."""
        envelope = event.extra[X_CLOUDEVENTS]
        envelope = envelope if isinstance(envelope, Mapping) else {}
        source = payload.pop(SOURCE)
        transaction = payload.pop(TRANSACTION, None) or {}
        out: dict[str, Any] = {
            CE_ID: envelope.get(CE_ID),
            CE_SOURCE: envelope.get(CE_SOURCE),
            CE_SPECVERSION: CE_VERSION,
            CE_TYPE: envelope.get(CE_TYPE),
            CE_TIME: _iso_millis(event.ts_ms),
            CE_DATA_CONTENT_TYPE: CE_JSON,
            CE_OP: payload.pop(OP),
        }
        payload.pop(TS_MS, None)
        for prefix, block in ((CE_PREFIX, source), (CE_TX_PREFIX, transaction)):
            for name, value in block.items():
                out[prefix + _squashed(name)] = str(value) if type(value) is int else value
        if schema is not None and self._with_schema:
            fields = [f for f in schema[SCHEMA_FIELDS] if f.get(SCHEMA_FIELD) in payload]
            data_schema = _struct(fields, f"{self._prefix(event)}.Data")
            out[CE_DATA] = {ENVELOPE_SCHEMA: data_schema, ENVELOPE_PAYLOAD: payload}
        else:
            out[CE_DATA] = payload
        return out

    def _encode_mongo(self, event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        source, source_fields, connector = self._encode_source(event)
        after = event.after
        if event.op is Op.UPDATE and event.patch is not None and AFTER in event.partial:
            after = None  # the id travels in the Kafka key
        before = None if BEFORE in event.partial else event.before
        payload: dict[str, Any] = {
            BEFORE: dumps(ejson_fields(before, event.columns)) if before is not None else None,
            AFTER: dumps(ejson_fields(after, event.columns)) if after is not None else None,
        }
        if event.patch is not None:
            payload[MONGO_UPDATE_DESCRIPTION] = _update_description(event.patch)
        payload.update({SOURCE: source, OP: _OP_CODES[event.op], TS_MS: event.ts_ms})
        self._encode_transaction(event, payload, source, connector)
        truncated = _struct(
            [
                _field(T_STRING, MONGO_TRUNCATED_FIELD, optional=False),
                _field(T_INT32, MONGO_TRUNCATED_SIZE, optional=False),
            ],
            None,
        )
        update_schema = _struct(
            [
                _array(_STRING_ITEMS, MONGO_REMOVED_FIELDS),
                _field(T_STRING, MONGO_UPDATED_FIELDS, name=N_JSON),
                _array(truncated, MONGO_TRUNCATED_ARRAYS),
            ],
            "io.debezium.connector.mongodb.changestream.updatedescription",
        )
        fields = [
            _field(T_STRING, BEFORE, name=N_JSON),
            _field(T_STRING, AFTER, name=N_JSON),
            _as_field(update_schema, MONGO_UPDATE_DESCRIPTION),
            _source_schema(source_fields, connector),
            _field(T_STRING, OP, optional=False),
            _field(T_INT64, TS_MS),
        ]
        if TRANSACTION in payload:
            fields.append(_TRANSACTION_SCHEMA)
        return _struct(fields, f"{self._prefix(event)}.Envelope"), payload


# --------------------------------------------------------------------------- helpers (decode)
def _starts_like_envelope(data: bytes) -> bool:
    """Is the first key ``schema`` or ``payload``? (then the schema is kept raw, as a cache key)"""
    quote = data.find(b'"', 0, 64)
    if quote < 0 or data[:quote].strip() != b"{":
        return False
    return data.startswith(b'"schema"', quote) or data.startswith(b'"payload"', quote)


def _sniff(message: Any) -> float:
    if not isinstance(message, dict):
        return 0.0
    if CE_SPECVERSION in message and CE_DATA in message:
        return _sniff_cloudevent(message)
    if ENVELOPE_PAYLOAD in message and OP not in message:
        if not message.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
            return 0.0
        schema = message.get(ENVELOPE_SCHEMA)
        if schema is not None and not (
            isinstance(schema, dict)
            and (not schema or schema.get(SCHEMA_TYPE) == T_STRUCT or SCHEMA_FIELDS in schema)
        ):
            return 0.0
        payload = message[ENVELOPE_PAYLOAD]
        if payload is None:
            return 0.6 if schema is None else 0.55
        if not isinstance(payload, dict):
            return 0.0
        score = _sniff_payload(payload)
        if score:
            return min(1.0, score + 0.05)
        name = schema.get(SCHEMA_NAME) if isinstance(schema, dict) else None
        if isinstance(name, str) and name.endswith(KEY_SCHEMA_SUFFIXES):
            return 0.7  # a Debezium message key, sent where a value was expected
        if name == N_HEARTBEAT:
            return 0.9
        return 0.55 if isinstance(schema, dict) and schema.get(SCHEMA_TYPE) == T_STRUCT else 0.0
    return _sniff_payload(message)


def _sniff_payload(payload: dict[str, Any]) -> float:
    op = payload.get(OP)
    source = payload.get(SOURCE)
    if isinstance(op, str) and op in _OPS:
        if _foreign_shape(payload, source if isinstance(source, dict) else {}) is not None:
            return 0.0  # a shape this format does not read: unknown, never wrong rows
        if isinstance(source, dict):
            return 0.9
        if BEFORE in payload or AFTER in payload:
            return 0.8
        return 0.3
    if (DDL in payload or TABLE_CHANGES in payload) and isinstance(source, dict):
        return 0.85
    if (
        payload.get(TX_STATUS) in (STATUS_BEGIN, STATUS_END)
        and TX_EVENT_COUNT in payload
        and (TX_DATA_COLLECTIONS in payload)
    ):
        return 0.75
    return 0.0


def _sniff_cloudevent(event: dict[str, Any]) -> float:
    """A Debezium CloudEvent with JSON data holding row images."""
    kind, source, data = event.get(CE_TYPE), event.get(CE_SOURCE), event[CE_DATA]
    debezium = (isinstance(kind, str) and kind.startswith(CE_DEBEZIUM_TYPE)) or (
        isinstance(source, str) and source.startswith(CE_DEBEZIUM_SOURCE)
    )
    if not debezium or CE_OP not in event or not isinstance(data, dict):
        return 0.0  # another producer's event, or Avro data (base64 text): unknown
    if ENVELOPE_PAYLOAD in data and data.keys() <= {ENVELOPE_SCHEMA, ENVELOPE_PAYLOAD}:
        data = data[ENVELOPE_PAYLOAD]
    if not isinstance(data, dict) or not (BEFORE in data or AFTER in data):
        return 0.0
    return 0.95 if _sniff_payload({**data, OP: event[CE_OP], SOURCE: {}}) else 0.0


def _squashed(name: str) -> str:
    """An attribute name as the CloudEvents converter writes it: letters and digits only."""
    return "".join(c for c in name if c.isascii() and c.isalnum())


# source and transaction field names read here, by their CloudEvents attribute suffix
_CE_SOURCE_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        _squashed(name): name
        for name in (
            SRC_VERSION, SRC_CONNECTOR, SRC_NAME, SRC_TS_MS, SRC_TS_SEC, SRC_SNAPSHOT, SRC_DB,
            SRC_SCHEMA, SRC_TABLE, SRC_COLLECTION, SRC_SEQUENCE, SRC_FILE, SRC_POS, SRC_ROW,
            SRC_GTID, SRC_SERVER_ID, SRC_THREAD, SRC_QUERY, SRC_LSN, SRC_TX_ID, SRC_XMIN,
            SRC_CHANGE_LSN, SRC_COMMIT_LSN, SRC_EVENT_SERIAL_NO, SRC_SCN, SRC_COMMIT_SCN,
            SRC_ROW_ID, SRC_ORD, SRC_SEC, SRC_RS, SRC_KEYSPACE, SRC_TS_US, SRC_TS_NS, SRC_SHARD,
            SRC_VGTID, SRC_WALL_TIME,
        )
    }
)  # fmt: skip
_CE_TRANSACTION_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {_squashed(name): name for name in (TX_ID, TX_TOTAL_ORDER, TX_DATA_COLLECTION_ORDER)}
)


def _int_param(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _snapshot_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return SNAPSHOT_TRUE if value else SNAPSHOT_FALSE
    return value if isinstance(value, str) else None


def _sequence_position(value: Any) -> Position | None:
    """``source.sequence``: a JSON array (as text) of counters: ``'["24023119","24023128"]'``."""
    if not isinstance(value, str):
        return None
    if value[:2] == '["' and value[-2:] == '"]':  # the usual one counter: '["24023128"]'
        inner = value[2:-2]
        if inner.isdigit() and inner.isascii():
            return Position((int(inner),))
    try:
        items = _EXACT_JSON.decode(value)
    except (msgspec.DecodeError, RecursionError, UnicodeError):
        return None
    if not isinstance(items, list) or not items:
        return None
    parts: list[int] = []
    for item in items:
        if isinstance(item, str) and item.isdigit():
            parts.append(int(item))
        elif type(item) is int and item >= 0:
            parts.append(item)
        else:
            return None
    return Position(tuple(parts))


def _may_be_unavailable(image: dict[str, Any] | None) -> bool:
    """False when :func:`_drop_unavailable` surely finds nothing in ``image``."""
    if image is None:
        return False
    try:
        return not _UNAVAILABLE_VALUES.isdisjoint(image.values())
    except TypeError:  # an unhashable value (a JSON object or array)
        return True


def _drop_unavailable(image: dict[str, Any]) -> bool:
    """Remove Postgres' placeholders for unchanged TOAST values; True if any was there."""
    gone = [n for n, v in image.items() if type(v) in (str, bytes) and v in _UNAVAILABLE_VALUES]
    for name in gone:
        del image[name]
    return bool(gone)


def _foreign_shape(payload: dict[str, Any], source: dict[str, Any]) -> tuple[str, str] | None:
    """(path in the payload, reason) when a Debezium-like payload is not the JSON converter's output of a
    connector read here: Avro printed as Avro JSON (unions as ``{"<type>": value}``) or
    the Cassandra connector (cells as ``{value, deletion_ts, set}``, null = unchanged)."""
    cassandra = (
        "Debezium's Cassandra connector (cells as {value, deletion_ts, set}, null meaning "
        "unchanged) is not read"
    )
    if source.get(SRC_CONNECTOR) == CONNECTOR_CASSANDRA:
        return ".source.connector", cassandra
    avro = "Debezium Avro printed as Avro JSON (a union written as {%r: ...}), not JSON"
    for field in (BEFORE, AFTER):
        image = payload.get(field)
        if type(image) is not dict or not image:
            continue
        name, first = next(iter(image.items()))
        if len(image) == 1 and name.endswith(AVRO_VALUE_SUFFIX) and type(first) is dict:
            return f".{field}", avro % name
        if type(first) is dict and first.keys() == CASSANDRA_CELL:
            return f".{field}.{name}", cassandra
    for where, block in (("", payload), (".source", source)):
        for name in (TS_MS, SRC_SNAPSHOT, SRC_TABLE, SRC_SEQUENCE, SRC_TX_ID, SRC_LSN):
            value = block.get(name)
            if type(value) is dict and len(value) == 1 and next(iter(value)) in AVRO_TYPE_NAMES:
                return f"{where}.{name}", avro % next(iter(value))
    return None


def _is_mongo(payload: dict[str, Any], source: dict[str, Any]) -> bool:
    return (
        source.get(SRC_CONNECTOR) == CONNECTOR_MONGODB
        or isinstance(payload.get(AFTER), str)
        or isinstance(payload.get(BEFORE), str)
        or MONGO_PATCH in payload
        or MONGO_UPDATE_DESCRIPTION in payload
    )


def _mongo_key_id(raw: Any) -> Any:
    """The MongoDB key's ``id`` is the Extended JSON text of ``_id`` (``"1004"``,
    ``'{"$oid": ...}'``): the ``_id`` value as the document gives it (Extended JSON)."""
    if isinstance(raw, str):
        try:
            return _DOCUMENT_JSON.decode(raw)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return raw
    return raw


def _ddl_type(
    type_text: str | None, code: int | None, length: int | None, scale: int | None
) -> LogicalType:
    """A tableChanges column's type: its SQL type name (with length/scale), else its JDBC code."""
    if type_text:
        if length is not None:
            sized = f"{type_text}({length}{f',{scale}' if scale is not None else ''})"
            ltype = sql_type(sized)
            if ltype is not UNKNOWN:
                return ltype
        ltype = sql_type(type_text)
        if ltype is not UNKNOWN:
            return ltype
    return jdbc_type(code)


# --------------------------------------------------------------------------- helpers (encode)
_POSITION_ARITY: Final[dict[str | None, int]] = {
    CONNECTOR_MYSQL: 3,
    CONNECTOR_MARIADB: 3,
    CONNECTOR_POSTGRESQL: 1,
    CONNECTOR_SQLSERVER: 7,
    CONNECTOR_ORACLE: 1,
    CONNECTOR_MONGODB: 2,
}
_SOURCE_TYPES: Final[dict[str, str]] = {
    SRC_TS_MS: T_INT64, SRC_SERVER_ID: T_INT64, SRC_POS: T_INT64, SRC_ROW: T_INT32,
    SRC_THREAD: T_INT64, SRC_TX_ID: T_INT64, SRC_LSN: T_INT64, SRC_XMIN: T_INT64,
    SRC_EVENT_SERIAL_NO: T_INT64, SRC_ORD: T_INT32, SRC_SEC: T_INT64,
}  # fmt: skip
_ORACLE_SOURCE_TYPES: Final = {**_SOURCE_TYPES, SRC_TX_ID: T_STRING}  # txId "6.28.807"
_REQUIRED_SOURCE_FIELDS: Final = frozenset({SRC_VERSION, SRC_NAME})


def _family(connector: Any, extra: Mapping[str, Any]) -> str | None:
    """Which connector's source fields to write (older messages name no connector)."""
    if connector in _POSITION_ARITY:
        return str(connector)
    if connector is None and X_COMMIT_SCN in extra:
        return CONNECTOR_ORACLE
    if connector is None and X_GTID in extra:
        return CONNECTOR_MYSQL
    return None


def _iso_millis(ts_ms: int | None) -> str | None:
    """RFC 3339 UTC time with milliseconds, as the CloudEvents ``time`` attribute."""
    if ts_ms is None:
        return None
    try:
        moment = EPOCH + dt.timedelta(milliseconds=ts_ms)
    except OverflowError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _format_lsn(parts: Sequence[int]) -> str:
    return f"{parts[0]:08x}:{parts[1]:08x}:{parts[2]:04x}"


def _field(
    ctype: str, field: str, *, optional: bool = True, name: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {SCHEMA_TYPE: ctype, SCHEMA_OPTIONAL: optional}
    if name is not None:
        out[SCHEMA_NAME] = name
        out[SCHEMA_VERSION] = 1
    out[SCHEMA_FIELD] = field
    return out


def _array(items: dict[str, Any], field: str, *, optional: bool = True) -> dict[str, Any]:
    return {
        SCHEMA_TYPE: T_ARRAY,
        SCHEMA_ITEMS: items,
        SCHEMA_OPTIONAL: optional,
        SCHEMA_FIELD: field,
    }


_STRING_ITEMS: Final = {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: False}


def _as_field(schema: dict[str, Any], field: str, *, optional: bool = True) -> dict[str, Any]:
    return {**schema, SCHEMA_OPTIONAL: optional, SCHEMA_FIELD: field}


def _struct(fields: list[dict[str, Any]], name: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {SCHEMA_TYPE: T_STRUCT, SCHEMA_FIELDS: fields, SCHEMA_OPTIONAL: False}
    if name is not None:
        out[SCHEMA_NAME] = name
    return out


def _source_schema(fields: list[tuple[str, str]], connector: str | None) -> dict[str, Any]:
    items = []
    for name, ctype in fields:
        if name == SRC_SNAPSHOT:
            snapshot = _field(T_STRING, name, name=N_ENUM)
            snapshot[SCHEMA_PARAMETERS] = {PARAM_ALLOWED: SNAPSHOT_ALLOWED}
            items.append(snapshot)
        else:
            items.append(_field(ctype, name, optional=name not in _REQUIRED_SOURCE_FIELDS))
    source = _struct(items, f"io.debezium.connector.{connector or 'common'}.Source")
    return _as_field(source, SOURCE, optional=False)


_TRANSACTION_SCHEMA: Final = _as_field(
    _struct(
        [
            _field(T_STRING, TX_ID, optional=False),
            _field(T_INT64, TX_TOTAL_ORDER),
            _field(T_INT64, TX_DATA_COLLECTION_ORDER),
        ],
        "event.block",
    ),
    TRANSACTION,
)
_COLUMN_SCHEMA: Final = _struct(
    [
        _field(T_STRING, COLUMN_NAME, optional=False),
        _field(T_INT32, COLUMN_JDBC_TYPE),
        _field(T_STRING, COLUMN_TYPE_NAME),
        _field(T_INT32, COLUMN_LENGTH),
        _field(T_INT32, COLUMN_SCALE),
        _field(T_INT32, COLUMN_POSITION),
        _field(T_BOOLEAN, COLUMN_OPTIONAL),
    ],
    N_COLUMN,
)
_TABLE_SCHEMA: Final = _struct(
    [
        _array(_STRING_ITEMS, TABLE_PRIMARY_KEY),
        _array(_COLUMN_SCHEMA, TABLE_COLUMNS, optional=False),
    ],
    N_TABLE,
)
_TABLE_CHANGE_SCHEMA: Final = _struct(
    [
        _field(T_STRING, CHANGE_TYPE, optional=False),
        _field(T_STRING, CHANGE_ID, optional=False),
        _as_field(_TABLE_SCHEMA, CHANGE_TABLE),
    ],
    N_TABLE_CHANGE,
)


def _encode_transaction_marker(event: ChangeEvent) -> tuple[dict[str, Any], dict[str, Any]]:
    payload = {
        TX_STATUS: STATUS_BEGIN if event.op is Op.BEGIN else STATUS_END,
        TX_ID: event.tx,
        TS_MS: event.ts_ms,
        TX_EVENT_COUNT: event.extra.get(X_EVENT_COUNT),
        TX_DATA_COLLECTIONS: None,
    }
    collection = _struct(
        [
            _field(T_STRING, TX_DATA_COLLECTION, optional=False),
            _field(T_INT64, TX_EVENT_COUNT, optional=False),
        ],
        None,
    )
    fields = [
        _field(T_STRING, TX_STATUS, optional=False),
        _field(T_STRING, TX_ID, optional=False),
        _field(T_INT64, TS_MS),
        _field(T_INT64, TX_EVENT_COUNT),
        _array(collection, TX_DATA_COLLECTIONS),
    ]
    return _struct(fields, N_TX_METADATA), payload


def _update_description(patch: Mapping[str, Any]) -> dict[str, Any]:
    updated = patch.get("$set")
    removed = patch.get("$unset")
    unknown = sorted(set(patch) - {"$set", "$unset", "$truncatedArrays"})
    if unknown:
        raise EncodeError(
            "debezium-json", f"update operators {unknown} have no updateDescription form"
        )
    return {
        MONGO_REMOVED_FIELDS: list(removed) if removed else None,
        MONGO_UPDATED_FIELDS: dumps(updated) if updated else None,
        MONGO_TRUNCATED_ARRAYS: patch.get("$truncatedArrays"),
    }


@dataclass(frozen=True, slots=True)
class _FieldSpec:
    """How one column is written: its Connect schema and its value rendering."""

    ctype: str
    name: str | None
    parameters: dict[str, str] | None
    render: Callable[[Any], Any]
    nested: dict[str, Any] | None = None  # fields / items of struct, array, map schemas

    def schema(self, field: str, *, optional: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {SCHEMA_TYPE: self.ctype}
        if self.nested:
            out.update(self.nested)
        out[SCHEMA_OPTIONAL] = optional
        if self.name is not None:
            out[SCHEMA_NAME] = self.name
            out[SCHEMA_VERSION] = 1
        if self.parameters:
            out[SCHEMA_PARAMETERS] = self.parameters
        out[SCHEMA_FIELD] = field
        return out


def _render_image(
    image: Mapping[str, Any] | None, specs: Mapping[str, _FieldSpec]
) -> dict[str, Any] | None:
    if image is None:
        return None
    return {name: None if v is None else specs[name].render(v) for name, v in image.items()}


def _unscaled_of(value: Decimal, scale: int) -> int:
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise EncodeError("debezium-json", f"decimal {value} is not finite")
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    factor: int = 10 ** abs(shift)
    if shift >= 0:
        unscaled *= factor
    else:
        unscaled, rest = divmod(unscaled, factor)
        if rest:
            raise EncodeError(
                "debezium-json", f"decimal {value} has more than {scale} fraction digits"
            )
    return -unscaled if sign == 1 else unscaled


def _unscaled_base64(unscaled: int) -> str:
    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def _r_connect_decimal(scale: int, value: Any) -> str:
    return _unscaled_base64(_unscaled_of(Decimal(value), scale))


def _r_variable_scale_decimal(value: Any) -> dict[str, Any]:
    number = Decimal(value)
    exponent = number.as_tuple().exponent
    if not isinstance(exponent, int):
        raise EncodeError("debezium-json", f"decimal {value} is not finite")
    return {VSD_SCALE: -exponent, VSD_VALUE: _unscaled_base64(_unscaled_of(number, -exponent))}


def _r_same(value: Any) -> Any:
    return value


def _r_float(value: Any) -> Any:
    return value_to_json(float(value))


def _r_bytes(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


def _r_date_days(value: dt.date) -> int:
    return (value - EPOCH_DATE).days


def _micros_of_day(value: dt.time) -> int:
    if value.tzinfo is not None:
        raise EncodeError("debezium-json", f"time {value} has an offset: needs {N_ZONED_TIME}")
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def _r_time_ms(value: dt.time) -> int:
    return _micros_of_day(value) // 1000


def _r_time_us(value: dt.time) -> int:
    return _micros_of_day(value)


def _r_time_ns(value: dt.time) -> int:
    return _micros_of_day(value) * 1000


def _r_zoned_time(value: dt.time) -> str:
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _wall_micros(value: dt.datetime) -> int:
    # a zone-less source value is written as if it were UTC (Debezium's convention)
    delta = value.replace(tzinfo=None) - EPOCH_NAIVE
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _r_timestamp_ms(value: dt.datetime) -> int:
    return _wall_micros(value) // 1000


def _r_timestamp_us(value: dt.datetime) -> int:
    return _wall_micros(value)


def _r_timestamp_ns(value: dt.datetime) -> int:
    return _wall_micros(value) * 1000


def _r_zoned_timestamp(value: dt.datetime) -> str:
    """ISO-8601 with offset, ``Z`` for UTC, fraction without trailing zeros (as Java prints it)."""
    if value.tzinfo is None:
        raise EncodeError("debezium-json", f"timestamp {value} has no zone")
    offset = value.utcoffset()
    text = value.replace(tzinfo=None).isoformat()
    if "." in text:
        text = text.rstrip("0")
    if not offset:
        return text + "Z"
    return text + value.isoformat()[-6:]


def _r_epoch_instant_us(value: dt.datetime) -> int:
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# (connect type, logical name, renderer) per logical type when the vendor type says nothing
_DEFAULT_SPECS: Final[dict[str, tuple[str, str | None, Callable[[Any], Any]]]] = {
    "boolean": (T_BOOLEAN, None, _r_same),
    "int8": (T_INT8, None, _r_same),
    "int16": (T_INT16, None, _r_same),
    "int32": (T_INT32, None, _r_same),
    "int64": (T_INT64, None, _r_same),
    "float32": (T_FLOAT32, None, _r_float),
    "float64": (T_FLOAT64, None, _r_float),
    "string": (T_STRING, None, _r_same),
    "binary": (T_BYTES, None, _r_bytes),
    "json": (T_STRING, N_JSON, _p_json),
    "date": (T_INT32, N_DATE, _r_date_days),
    "time": (T_INT64, N_MICRO_TIME, _r_time_us),
    "timestamp": (T_INT64, N_MICRO_TIMESTAMP, _r_timestamp_us),
    "timestamptz": (T_STRING, N_ZONED_TIMESTAMP, _r_zoned_timestamp),
}
# logical names an encoder may keep from the column's vendor type, with their renderers
_NAMED_RENDERERS: Final[dict[str, Callable[[Any], Any]]] = {
    N_DATE: _r_date_days, N_CONNECT_DATE: _r_date_days,
    N_TIME: _r_time_ms, N_CONNECT_TIME: _r_time_ms, N_MICRO_TIME: _r_time_us,
    N_NANO_TIME: _r_time_ns, N_ZONED_TIME: _r_zoned_time,
    N_TIMESTAMP: _r_timestamp_ms, N_CONNECT_TIMESTAMP: _r_timestamp_ms,
    N_MICRO_TIMESTAMP: _r_timestamp_us, N_NANO_TIMESTAMP: _r_timestamp_ns,
    N_ZONED_TIMESTAMP: _r_zoned_timestamp,
    N_YEAR: _r_same, N_MICRO_DURATION: _r_same, N_INTERVAL: _r_same, N_JSON: _p_json,
    N_ENUM: _r_same, N_ENUM_SET: _r_same, N_UUID: _r_same, N_XML: _r_same, N_BITS: _r_bytes,
}  # fmt: skip


def _common_scale(event: ChangeEvent, name: str) -> int:
    """The largest number of fraction digits among the column's values (0 at least)."""
    scale = 0
    for image in (event.before, event.after):
        value = image.get(name) if image else None
        if isinstance(value, Decimal):
            exponent = value.as_tuple().exponent
            if isinstance(exponent, int):
                scale = max(scale, -exponent)
    return scale


def _field_spec(column: Column, event: ChangeEvent, name: str) -> _FieldSpec:
    ltype, vendor = column.type, column.vendor_type
    if ltype.name == "decimal":
        if ltype.precision is not None:
            scale = ltype.scale or 0
            params = {PARAM_SCALE: str(scale), PARAM_PRECISION: str(ltype.precision)}
            return _FieldSpec(T_BYTES, N_DECIMAL, params, partial(_r_connect_decimal, scale))
        if vendor == N_DECIMAL:  # a Connect Decimal without precision: the values' scale
            scale = _common_scale(event, name)
            return _FieldSpec(
                T_BYTES, N_DECIMAL, {PARAM_SCALE: str(scale)}, partial(_r_connect_decimal, scale)
            )
        nested = {
            SCHEMA_FIELDS: [
                _field(T_INT32, VSD_SCALE, optional=False),
                _field(T_BYTES, VSD_VALUE, optional=False),
            ]
        }
        return _FieldSpec(
            T_STRUCT, N_VARIABLE_SCALE_DECIMAL, None, _r_variable_scale_decimal, nested
        )
    if ltype.name in ("uint64", "integer"):  # Debezium's "precise" handling: Decimal, scale 0
        params = {PARAM_SCALE: "0"}
        if ltype.name == "uint64":
            params[PARAM_PRECISION] = "20"
        return _FieldSpec(T_BYTES, N_DECIMAL, params, partial(_r_connect_decimal, 0))
    if ltype.name == "unknown":
        sample = next(
            (img[name] for img in (event.after, event.before) if img and img.get(name) is not None),
            None,
        )
        return _unknown_spec(vendor, sample)
    if vendor in _NAMED and _NAMED[vendor][1] == ltype and vendor in _NAMED_RENDERERS:
        return _FieldSpec(_NAMED[vendor][0], vendor, None, _NAMED_RENDERERS[vendor])
    if vendor in _PRIMITIVES and _PRIMITIVES[vendor][0] == ltype:
        ctype, _, render = _DEFAULT_SPECS[ltype.name]
        return _FieldSpec(vendor, None, None, render)
    ctype, logical, render = _DEFAULT_SPECS[ltype.name]
    return _FieldSpec(ctype, logical, None, render)


def _unknown_spec(vendor: str | None, sample: Any) -> _FieldSpec:
    """A column of unknown type: keep its vendor schema type/name, infer the rest from a value."""
    inferred = _infer_schema(sample)
    ctype = inferred.pop(SCHEMA_TYPE)
    inferred.pop(SCHEMA_OPTIONAL, None)
    name = None
    if (
        vendor is not None
        and vendor not in _PRIMITIVES
        and vendor not in (T_STRUCT, T_ARRAY, T_MAP)
    ):
        name = vendor
    return _FieldSpec(ctype, name, None, _render_json_value, inferred or None)


def _render_json_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _render_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_render_json_value(v) for v in value]
    if isinstance(value, Decimal):
        return value  # written as a bare exact number
    return value_to_json(value)


def _infer_schema(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {SCHEMA_TYPE: T_BOOLEAN, SCHEMA_OPTIONAL: True}
    if isinstance(value, int):
        return {SCHEMA_TYPE: T_INT64, SCHEMA_OPTIONAL: True}
    if isinstance(value, (float, Decimal)):
        return {SCHEMA_TYPE: T_FLOAT64, SCHEMA_OPTIONAL: True}
    if isinstance(value, Mapping):
        fields = [{**_infer_schema(v), SCHEMA_FIELD: str(k)} for k, v in value.items()]
        return {SCHEMA_TYPE: T_STRUCT, SCHEMA_FIELDS: fields, SCHEMA_OPTIONAL: True}
    if isinstance(value, (list, tuple)):
        items = _infer_schema(value[0]) if value else {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: True}
        return {SCHEMA_TYPE: T_ARRAY, SCHEMA_ITEMS: items, SCHEMA_OPTIONAL: True}
    return {SCHEMA_TYPE: T_STRING, SCHEMA_OPTIONAL: True}


__all__ = ["DebeziumJson"]
