"""Debezium's wire names: envelope, payload, source and schema fields, op codes,
connector names and Connect schema types and logical names, each named once."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Final

import msgspec

from anycdc.event import TX_TABLE_EVENTS, Op
from anycdc.formats.events import OpRule, op_rules
from anycdc.formats.heads import F_PAYLOAD, F_SCHEMA
from anycdc.values import EPOCH_DATE

# --------------------------------------------------------------------------- wire names
ENVELOPE_SCHEMA: Final = F_SCHEMA  # the Kafka Connect envelope (formats/heads.py)
ENVELOPE_PAYLOAD: Final = F_PAYLOAD

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
SRC_TS_SEC: Final = "ts_sec"  # MySQL connector before 0.10: seconds
SRC_TS_USEC: Final = "ts_usec"  # PostgreSQL connector before 0.10: microseconds
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
ORD_SNAPSHOT: Final = -1
"""``ord`` of a MongoDB record read by a snapshot (Debezium 3.x: no cluster time, so
``SourceInfo.Position.getInc()`` is -1): it orders at the start of ``ts_ms``'s second."""
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
OPS: Final[Mapping[str, OpRule]] = op_rules(
    {
        OP_CREATE: Op.INSERT,
        OP_UPDATE: Op.UPDATE,
        OP_DELETE: Op.DELETE,
        OP_READ: Op.SNAPSHOT,
        OP_TRUNCATE: Op.TRUNCATE,
        OP_MESSAGE: Op.HEARTBEAT,
    }
)
# the codes of row changes, derived (the per-message lookup of a str is quicker than an
# Op's membership in ROW_OPS, whose hash is a Python call)
ROW_OP_CODES: Final[Mapping[str, OpRule]] = {code: rule for code, rule in OPS.items() if rule.rows}
# Op members bound once (an enum attribute lookup is slow in the per-message path)
UPDATE: Final = Op.UPDATE
DELETE: Final = Op.DELETE
TRUNCATE: Final = Op.TRUNCATE
HEARTBEAT: Final = Op.HEARTBEAT
OP_CODES: Final[dict[Op, str]] = {
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
UNAVAILABLE_VALUES: Final = frozenset(
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
X_DATA_COLLECTIONS: Final = TX_TABLE_EVENTS  # data_collections as {name: event_count}
X_CLOUDEVENTS: Final = "cloudevents"  # the CloudEvents envelope's id, source and type

MYSQL_FAMILY: Final = frozenset({CONNECTOR_MYSQL, CONNECTOR_MARIADB})
LSN_RE: Final = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)")
ZONED_TIME_RE: Final = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})")
DAY_MICROS: Final = 86_400_000_000
EPOCH_ORDINAL: Final = EPOCH_DATE.toordinal()
EXACT_JSON: Final = msgspec.json.Decoder(float_hook=Decimal)
DOCUMENT_JSON: Final = msgspec.json.Decoder()  # MongoDB documents: a fraction is a double
NUMBER_JSON: Final = msgspec.json.Encoder(decimal_format="number")


class _Envelope(msgspec.Struct, gc=False):
    """Top level of an enveloped message: the schema stays raw bytes (a cache key)."""

    schema: msgspec.Raw = msgspec.Raw(b"")
    payload: Any = msgspec.UNSET


SOURCE_PATHS: Final = MappingProxyType({"$": "$.source", "$.payload": "$.payload.source"})
ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope, float_hook=Decimal)
