"""DTS Avro's wire names: the record's fields, operations, value kinds, charsets, and
the bundled record schema."""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Mapping
from typing import Any, Final

import fastavro

from anycdc.event import Op
from anycdc.formats.codecs.avro import AvroReader, load_avro_schema
from anycdc.formats.events import OpRule

# --------------------------------------------------------------------------- wire names
RECORD_NAME: Final = "com.alibaba.dts.formats.avro.Record"
AVRO_NAMESPACE: Final = "com.alibaba.dts.formats.avro"
SCHEMA_RESOURCE: Final = "schemas/dts_record.avsc"

F_VERSION: Final = "version"
F_ID: Final = "id"
F_SOURCE_TIMESTAMP: Final = "sourceTimestamp"
F_SOURCE_POSITION: Final = "sourcePosition"
F_SAFE_SOURCE_POSITION: Final = "safeSourcePosition"
F_SOURCE_TXID: Final = "sourceTxid"
F_SOURCE: Final = "source"
F_SOURCE_TYPE: Final = "sourceType"
F_SOURCE_VERSION: Final = "version"
F_OPERATION: Final = "operation"
F_OBJECT_NAME: Final = "objectName"
F_PROCESS_TIMESTAMPS: Final = "processTimestamps"
F_TAGS: Final = "tags"
F_FIELDS: Final = "fields"
F_FIELD_NAME: Final = "name"
F_FIELD_TYPE: Final = "dataTypeNumber"
F_BEFORE: Final = "beforeImages"
F_AFTER: Final = "afterImages"
F_BORN_TIMESTAMP: Final = "bornTimestamp"

TAG_PK_UK_INFO: Final = "pk_uk_info"
PK_PRIMARY: Final = "PRIMARY"

OP_INSERT: Final = "INSERT"
OP_UPDATE: Final = "UPDATE"
OP_DELETE: Final = "DELETE"
OP_DDL: Final = "DDL"
OP_BEGIN: Final = "BEGIN"
OP_COMMIT: Final = "COMMIT"
OP_ROLLBACK: Final = "ROLLBACK"
OP_ABORT: Final = "ABORT"
OP_HEARTBEAT: Final = "HEARTBEAT"
OP_CHECKPOINT: Final = "CHECKPOINT"
OP_COMMAND: Final = "COMMAND"
OP_FILL: Final = "FILL"
OP_FINISH: Final = "FINISH"
OP_CONTROL: Final = "CONTROL"
OP_RDB: Final = "RDB"
OP_NOOP: Final = "NOOP"
OP_INIT: Final = "INIT"

SOURCE_MYSQL: Final = "MySQL"
# sources whose dataTypeNumber is a MySQL binlog column type code
MYSQL_FAMILY: Final = frozenset({"MySQL", "DRDS"})

# union branches of an image value (record / enum short names)
V_INTEGER: Final = "Integer"
V_CHARACTER: Final = "Character"
V_DECIMAL: Final = "Decimal"
V_FLOAT: Final = "Float"
V_TIMESTAMP: Final = "Timestamp"
V_DATETIME: Final = "DateTime"
V_TIMESTAMP_TZ: Final = "TimestampWithTimeZone"
V_BINARY_GEOMETRY: Final = "BinaryGeometry"
V_TEXT_GEOMETRY: Final = "TextGeometry"
V_BINARY_OBJECT: Final = "BinaryObject"
V_TEXT_OBJECT: Final = "TextObject"
V_EMPTY: Final = "EmptyObject"
EMPTY_NULL: Final = "NULL"  # SQL NULL
EMPTY_NONE: Final = "NONE"  # the source did not send this column

K_VALUE: Final = "value"
K_PRECISION: Final = "precision"
K_SCALE: Final = "scale"
K_CHARSET: Final = "charset"
K_TYPE: Final = "type"
K_TIMESTAMP: Final = "timestamp"
K_MILLIS: Final = "millis"  # microseconds, despite the name
K_TIMEZONE: Final = "timezone"
DT_PARTS: Final = ("year", "month", "day", "hour", "minute", "second", "millis")

TEXT_OBJECT_JSON: Final = "JSON"
BINARY_OBJECT_BLOB: Final = "BLOB"
CHARSET_BINARY: Final = "binary"
DEFAULT_CHARSET: Final = "utf8mb4"
NAME_DOT_ESCAPE: Final = "\\u002E"  # how DTS writes a dot inside a database or table name

# MySQL charset names (as DTS sends them) -> Python codecs
MYSQL_CHARSETS: Final[Mapping[str, str]] = {
    "utf8": "utf-8", "utf8mb3": "utf-8", "utf8mb4": "utf-8", "ascii": "ascii",
    "latin1": "cp1252", "latin2": "iso8859_2", "latin5": "iso8859_9", "latin7": "iso8859_13",
    "gbk": "gbk", "gb2312": "gb2312", "gb18030": "gb18030", "big5": "big5", "cp932": "cp932",
    "sjis": "shift_jis", "ujis": "euc_jp", "eucjpms": "euc_jp", "euckr": "euc_kr",
    "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le", "utf32": "utf-32-be",
    "cp1250": "cp1250", "cp1251": "cp1251", "cp1256": "cp1256", "cp1257": "cp1257",
    "cp850": "cp850", "cp852": "cp852", "cp866": "cp866", "koi8r": "koi8_r", "koi8u": "koi8_u",
    "greek": "iso8859_7", "hebrew": "iso8859_8", "tis620": "tis_620", "macroman": "mac_roman",
    "macce": "mac_latin2", "armscii8": "cp1252", "dec8": "cp1252", "hp8": "cp1252",
    "swe7": "cp1252", "geostd8": "cp1252", "keybcs2": "cp852",
    # Oracle database character sets
    "al32utf8": "utf-8", "al16utf16": "utf-16-be", "us7ascii": "ascii", "zhs16gbk": "gbk",
    "zhs32gb18030": "gb18030", "zht16big5": "big5", "zht16mswin950": "cp950",
    "we8iso8859p1": "latin-1", "we8iso8859p15": "iso8859_15", "we8mswin1252": "cp1252",
    "ee8iso8859p2": "iso8859_2", "cl8mswin1251": "cp1251", "ja16sjis": "shift_jis",
    "ja16euc": "euc_jp", "ko16mswin949": "cp949", "ko16ksc5601": "euc_kr",
}  # fmt: skip

# canonical logical type -> the MySQL binlog code DTS uses for such a column
CODE_FOR_TYPE: Final[Mapping[str, int]] = {
    "boolean": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 8, "uint64": 8, "integer": 8,
    "float32": 4, "float64": 5, "decimal": 246, "date": 10, "time": 11, "timestamp": 12,
    "timestamptz": 7, "string": 253, "binary": 252, "json": 245, "unknown": 253,
}  # fmt: skip
YEAR_CODE: Final = 13
WIDENING: Final = ("int8", "int16", "int32", "int64")


# =========================================================================== the DTS schema
@functools.cache
def _schema_json() -> Any:
    """The published DTS Record schema, read from the package on first use."""
    resource = importlib.resources.files("anycdc.formats").joinpath(SCHEMA_RESOURCE)
    return load_avro_schema(resource.read_text(encoding="utf-8"))


@functools.cache
def record_reader() -> AvroReader:
    return AvroReader(_schema_json(), RECORD_NAME)


@functools.cache
def writer_schema() -> Any:
    named: dict[str, Any] = {}
    fastavro.parse_schema(_schema_json(), named_schemas=named)
    parsed = fastavro.parse_schema(named[RECORD_NAME], named_schemas=named)
    return parsed


# =========================================================================== the format
# records that carry no row: kept as heartbeats (progress only) naming the operation
PROGRESS_OPS: Final = frozenset(
    {OP_ROLLBACK, OP_ABORT, OP_CHECKPOINT, OP_FILL, OP_FINISH, OP_CONTROL, OP_NOOP}
)
# COMMAND and RDB (Redis / MongoDB payloads) are absent: data anycdc cannot express
OPS: Final[Mapping[str, OpRule]] = {
    OP_INSERT: OpRule(Op.INSERT), OP_UPDATE: OpRule(Op.UPDATE), OP_DELETE: OpRule(Op.DELETE),
    OP_INIT: OpRule(Op.SNAPSHOT), OP_DDL: OpRule(Op.DDL), OP_BEGIN: OpRule(Op.BEGIN),
    OP_COMMIT: OpRule(Op.COMMIT), OP_HEARTBEAT: OpRule(Op.HEARTBEAT),
    **{code: OpRule(Op.HEARTBEAT) for code in sorted(PROGRESS_OPS)},
}  # fmt: skip
OP_TO_WIRE: Final[Mapping[Op, str]] = {
    Op.INSERT: OP_INSERT, Op.UPDATE: OP_UPDATE, Op.DELETE: OP_DELETE, Op.SNAPSHOT: OP_INIT,
    Op.DDL: OP_DDL, Op.BEGIN: OP_BEGIN, Op.COMMIT: OP_COMMIT, Op.HEARTBEAT: OP_HEARTBEAT,
}  # fmt: skip
POSITION_BINLOG: Final = re.compile(r"(\d+)@(\d+)")
POSITION_NUMBER: Final = re.compile(r"\d+")
POSITION_LSN: Final = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})")
PRINTABLE: Final = re.compile(r"[^\x00-\x1f\x7f]*")
CACHED: Final = 256  # value parsers by type, key names by pk_uk_info text
NO_ROW: Final[Mapping[str, Any]] = {}
