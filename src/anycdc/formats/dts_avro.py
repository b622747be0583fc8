"""Alibaba Cloud DTS Avro (``dts-avro``): one schemaless Avro ``Record`` per Kafka message.

DTS writes each change as the Avro binary encoding of
``com.alibaba.dts.formats.avro.Record`` (``schemas/dts_record.avsc``, the schema
Alibaba publishes) with no container header and no schema-registry prefix.
The record is read by :class:`~anycdc.formats.codecs.avro.AvroReader`, which
checks every length, union index and enum index against the message and names
the field path of any problem.

How the record maps onto the canonical event (see FORMATS.md section 2):

* ``operation`` INSERT / UPDATE / DELETE / INIT -> insert / update / delete /
  snapshot; DDL -> ddl (statement text is the string held in ``afterImages``);
  BEGIN / COMMIT / HEARTBEAT -> begin / commit / heartbeat. The other markers,
  which carry no row (ROLLBACK, ABORT, CHECKPOINT, FILL, FINISH, CONTROL, NOOP),
  become heartbeats with ``extra["operation"]`` naming them. COMMAND and RDB
  (Redis / MongoDB payloads) are a DecodeError: they carry data we cannot express.
* ``objectName`` is split on every dot after DTS's own escaping (a dot inside a
  name is written ``\\u002E``): ``db`` / ``db.table`` / ``db.schema.table``. A
  two-part name is always database.table, as the DTS SDK reads it (an Oracle
  ``SCHEMA.TABLE`` therefore lands in ``database``).
* ``sourcePosition`` ``"72469@78"`` (binlog end offset @ binlog file number) and
  the record ``id`` (unique, increasing in the stream; the tie-break between rows
  of one binlog event) give ``Position((78, 72469, id))``; a bare number (an SCN)
  gives ``(n, id)``; a PostgreSQL LSN ``"16/B374D848"`` gives ``(lsn, id)``;
  anything else gives no position.
* ``sourceTimestamp`` is epoch SECONDS: ``ts_ms`` is it times 1000.
  ``bornTimestamp`` (ms) goes to ``extra`` when non-zero, and so does
  ``source.sourceType``.
* ``tags["pk_uk_info"]`` ``{"PRIMARY":["id"]}`` gives the key; unique keys are
  not primary keys and are ignored.
* ``fields[i].dataTypeNumber`` is the MySQL binlog type code for MySQL and DRDS
  sources; for other sources the code is kept as ``vendor_code`` only, since its
  numbering is not published. The union branch of the values refines the type:
  Decimal{precision, scale} -> ``decimal(p,s)``; Character with charset
  ``binary`` -> ``binary``, other charsets -> text; Timestamp (epoch seconds +
  microseconds) and TimestampWithTimeZone -> ``timestamptz``; DateTime -> naive
  date / time / timestamp (or YEAR as an int) by column type. The binlog code
  carries no signedness: an integer beyond the signed range widens that column
  in this event (INT UNSIGNED 4294967295 -> ``int64``, BIGINT UNSIGNED ->
  ``uint64``) instead of being refused.
* The ``millis`` fields of Timestamp and DateTime hold MICROSECONDS despite their
  name: Alibaba's consumers render them as six fraction digits (LioRoger
  ``MysqlFieldConverter``) and store them as micros (aliyun DTS SDK).
* An UPDATE record carries both images (seed 001 describes no split form, so
  ``split`` is never set). EmptyObject ``NULL`` is SQL NULL; ``NONE`` means the
  source did not send the column: it is left out of the image and the image is
  named in ``partial``.
* BIT values arrive as Integer and become integers; geometry arrives as WKB
  bytes (``binary``) or WKT text (``string``).
* Invalid dates (``0000-00-00``) and MySQL TIME beyond a day (``838:59:59``) are
  kept as the vendor's text and listed in ``invalid``.
* The flow is :class:`~anycdc.formats.flow.RowFlow`'s (one row per record, DDL and
  markers too); DTS fills its hooks: ``header``, ``images`` (values as union branches
  by field name), ``key_names``, ``columns_of`` and ``value_parser`` (a branch as a value).

The encoder writes the published schema with fastavro, naming every union branch
explicitly. It floors ``ts_ms`` to seconds, writes a decimal column's precision
and scale (0 / 0 when unknown), columns an image lacks as EmptyObject NONE, and
refuses ``truncate`` (DTS sends a TRUNCATE as DDL text).

Example (a tiny INSERT, as DTS writes it):

>>> message = bytes.fromhex(
...     "0c0a8cc0f0f50b1037323436394037380000000c352e372e333400021673686f702e6f7264657273"
...     "000214706b5f756b5f696e666f247b225052494d415259223a5b226964225d7d000404046964100a"
...     "746f74616cec03000004040204043230060c3132332e343514040000")
>>> [event] = DtsAvro().decode(message)
>>> event.op.value, event.database, event.table, event.key, event.position
('insert', 'shop', 'orders', ('id',), Position(parts=(78, 72469, 5)))
>>> event.after["total"], str(event.columns["total"].type), event.ts_ms
(Decimal('123.45'), 'decimal(10,2)', 1600000006000)
"""

from __future__ import annotations

import codecs
import datetime as dt
import functools
import importlib.resources
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Final
from zoneinfo import ZoneInfo

import fastavro

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats.base import MAX_MESSAGE_BYTES, Cache, Capabilities, Parser, convert_values
from anycdc.formats.codecs.avro import AvroDataError, AvroReader, load_avro_schema
from anycdc.formats.flow import DDL, DELETE, ROW_OPS, UPDATE, Header, Images, RowFlow, RowOp
from anycdc.typemap import MYSQL_BINLOG_TYPES
from anycdc.values import (
    BINARY,
    DATE,
    DECIMAL,
    EPOCH,
    FLOAT64,
    INT16,
    INT64,
    INTEGER_RANGES,
    INTEGER_TYPES,
    JSON,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UINT64,
    UNKNOWN,
    LogicalType,
    decimal_type,
    zone_info,
)

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
_CODE_FOR_TYPE: Final[Mapping[str, int]] = {
    "boolean": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 8, "uint64": 8, "integer": 8,
    "float32": 4, "float64": 5, "decimal": 246, "date": 10, "time": 11, "timestamp": 12,
    "timestamptz": 7, "string": 253, "binary": 252, "json": 245, "unknown": 253,
}  # fmt: skip
_YEAR_CODE: Final = 13
_WIDENING: Final = ("int8", "int16", "int32", "int64")


# =========================================================================== the DTS schema
@functools.cache
def _schema_json() -> Any:
    """The published DTS Record schema, read from the package on first use."""
    resource = importlib.resources.files("anycdc.formats").joinpath(SCHEMA_RESOURCE)
    return load_avro_schema(resource.read_text(encoding="utf-8"))


@functools.cache
def _record_reader() -> AvroReader:
    return AvroReader(_schema_json(), RECORD_NAME)


@functools.cache
def _writer_schema() -> Any:
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
OPS: Final[Mapping[str, RowOp]] = {
    OP_INSERT: RowOp(Op.INSERT), OP_UPDATE: RowOp(Op.UPDATE), OP_DELETE: RowOp(Op.DELETE),
    OP_INIT: RowOp(Op.SNAPSHOT), OP_DDL: RowOp(Op.DDL), OP_BEGIN: RowOp(Op.BEGIN),
    OP_COMMIT: RowOp(Op.COMMIT), OP_HEARTBEAT: RowOp(Op.HEARTBEAT),
    **{code: RowOp(Op.HEARTBEAT) for code in sorted(PROGRESS_OPS)},
}  # fmt: skip
_OP_TO_WIRE: Final[Mapping[Op, str]] = {
    Op.INSERT: OP_INSERT, Op.UPDATE: OP_UPDATE, Op.DELETE: OP_DELETE, Op.SNAPSHOT: OP_INIT,
    Op.DDL: OP_DDL, Op.BEGIN: OP_BEGIN, Op.COMMIT: OP_COMMIT, Op.HEARTBEAT: OP_HEARTBEAT,
}  # fmt: skip
_POSITION_BINLOG: Final = re.compile(r"(\d+)@(\d+)")
_POSITION_NUMBER: Final = re.compile(r"\d+")
_POSITION_LSN: Final = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})")
_PRINTABLE: Final = re.compile(r"[^\x00-\x1f\x7f]*")
_CACHED: Final = 256  # value parsers by type, key names by pk_uk_info text
_NO_ROW: Final[Mapping[str, Any]] = {}


class DtsAvro(RowFlow):
    """Alibaba Cloud DTS "DTS Avro": schemaless Avro ``Record`` values (see module doc)."""

    id: ClassVar[str] = "dts-avro"
    table_field = f"$.{F_OBJECT_NAME}"
    vendor: ClassVar[str] = "Alibaba Cloud DTS"
    title: ClassVar[str] = "DTS Avro (schemaless com.alibaba.dts.formats.avro.Record)"
    binary: ClassVar[bool] = True
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        truncate=False,
        value_typed=True,
        before_detail="EmptyObject NONE marks columns not sent",
        types_detail="MySQL binlog type codes + Avro value kinds (decimal precision/scale)",
        position="`sourcePosition` offset@file + record id",
        key_detail="`pk_uk_info`",
        notes=("BOOLEAN carried as TINY 0/1",),
    )
    op_field = F_OPERATION
    ops = OPS
    rowless_key = False  # DDL and markers carry no key

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        _record_reader()  # loads the packaged schema (once per process) when first built
        self._tz = self.options.timezone
        self._parsers: Cache[LogicalType, Parser] = Cache(_CACHED)
        self._keys: Cache[str, tuple[str, ...]] = Cache(_CACHED)
        self._typing: tuple[Mapping[str, Column] | None, dict[str, Parser]] = (None, {})

    @property
    def avro_schema(self) -> Any:
        """The published ``Record`` schema, parsed by fastavro (what messages are written with)."""
        return _writer_schema()

    # ---- detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        """Decode the bytes as a DTS Record and check the result is plausible."""
        if not isinstance(message, (bytes, bytearray, memoryview)) or len(message) < 16:
            return 0.0
        try:
            record = _record_reader().read(bytes(message))
        except (AvroDataError, ValueError, KeyError, TypeError, OverflowError):
            return 0.0
        return 0.95 if _plausible(record) else 0.05

    # ---- decoding: the Avro record, then RowFlow's flow
    def decode_bytes(self, value: bytes, key: bytes | None) -> list[ChangeEvent]:
        if len(value) > MAX_MESSAGE_BYTES:
            raise self.error("$", f"message of {len(value)} bytes exceeds the limit")
        try:
            record = _record_reader().read(value)
        except AvroDataError as exc:
            raise self.error(exc.path, f"invalid DTS Avro record: {exc.reason}") from None
        return [self.decode_record(record)]

    def decode_record(self, record: dict[str, Any]) -> ChangeEvent:
        """One event from an already-deserialized Record (as fastavro would give it,
        union values either plain or tagged ``(name, value)``), by :meth:`RowFlow.flow`."""
        code = record[F_OPERATION]
        rule = self.ops.get(code)
        if rule is None:
            raise self.error(
                self.op_path,
                f"unsupported operation {code!r}: not a row change anycdc can express",
            )
        return self.flow(record, record, code, rule)

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: RowOp) -> Header:
        database, schema, table = self._object_name(msg[F_OBJECT_NAME])
        extra: dict[str, Any] = {F_SOURCE_TYPE: msg[F_SOURCE][F_SOURCE_TYPE]}
        born = msg[F_BORN_TIMESTAMP]
        if born:
            extra[F_BORN_TIMESTAMP] = born
        if code in PROGRESS_OPS:
            extra[F_OPERATION] = code
        record_id = msg[F_ID]
        if record_id < 0:
            raise self.error("$.id", f"negative record id {record_id}")
        return Header(
            database=database, schema=schema, table=table, ts_ms=msg[F_SOURCE_TIMESTAMP] * 1000,
            position=_position(msg[F_SOURCE_POSITION], record_id), tx=msg[F_SOURCE_TXID] or None,
            ddl=_ddl_text(msg) if rule.op is DDL else None, extra=extra,
        )  # fmt: skip

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: RowOp) -> Images:
        """The images by field name: an UPDATE's both, a DELETE's before, else the after."""
        names = self._names(msg)
        op = rule.op
        before = after = None
        partial: tuple[str, ...] = ()
        if op is UPDATE or op is DELETE:
            before, lacking = self._image(msg, F_BEFORE, op, names)
            if lacking:
                partial = ("before",)
        if op is not DELETE:
            after, lacking = self._image(msg, F_AFTER, op, names)
            if lacking:
                partial = (*partial, "after")
        if op is DELETE:
            if before is None:
                raise self.error("$.beforeImages", "DELETE record without beforeImages")
        elif after is None:
            raise self.error("$.afterImages", f"{code} record without afterImages")
        return before, after, partial

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: RowOp, images: Images
    ) -> tuple[str, ...] | None:
        """The ``PRIMARY`` columns of ``tags["pk_uk_info"]`` (unique keys are not keys)."""
        info = msg[F_TAGS].get(TAG_PK_UK_INFO)
        if not info:
            return None
        names = self._keys.get(info)
        if names is None:
            names = self._keys.put(info, self._pk_uk_info(info))
        return names

    def columns_of(
        self, msg: dict[str, Any], head: dict[str, Any], images: Images
    ) -> dict[str, Column]:
        """Each field's column: its binlog code's type (MySQL family sources), refined by
        the union branch of its values (:func:`_column_type`)."""
        mysql = msg[F_SOURCE][F_SOURCE_TYPE] in MYSQL_FAMILY
        before: Mapping[str, Any] = images[0] or _NO_ROW
        after: Mapping[str, Any] = images[1] or _NO_ROW
        columns: dict[str, Column] = {}
        for field in msg[F_FIELDS] or ():
            name = field[F_FIELD_NAME]
            code = field[F_FIELD_TYPE]
            items = [v for v in (before.get(name), after.get(name)) if v is not None]
            if mysql:
                vendor_name, base = MYSQL_BINLOG_TYPES.get(code, (str(code), UNKNOWN))
                columns[name] = Column(_column_type(base, code, items), vendor_name, code)
            else:
                columns[name] = Column(_column_type(UNKNOWN, None, items), None, code)
        return columns

    def value_parser(self, ltype: LogicalType) -> Parser:
        """A union branch ``(kind, payload)`` as a value of a ``ltype`` column (ValueError
        where the kind's converter refuses it)."""
        parser = self._parsers.get(ltype)
        if parser is None:
            parser = self._parsers.put(ltype, _branch_parser(ltype, self._tz))
        return parser

    def convert_image(
        self, raw: Mapping[str, Any], columns: Mapping[str, Column], path: str, invalid: list[str]
    ) -> dict[str, Any]:
        """Type an image of union branches; a value its column refuses is kept as the
        vendor's text (:func:`_as_sent`) and listed in ``invalid``."""
        if columns is not self._typing[0]:  # an UPDATE's images share their columns
            parsers = {name: self.value_parser(col.type) for name, col in columns.items()}
            self._typing = (columns, parsers)
        return convert_values(raw, self._typing[1], invalid, keep=_as_sent)

    # ---- the record's parts
    def _object_name(self, name: str | None) -> tuple[str | None, str | None, str | None]:
        if not name:
            return None, None, None
        parts = [
            p.replace(NAME_DOT_ESCAPE, ".").replace("\\u002e", ".") or None for p in name.split(".")
        ]
        if len(parts) == 1:
            return parts[0], None, None
        if len(parts) == 2:
            return parts[0], None, parts[1]
        if len(parts) == 3:
            return parts[0], parts[1], parts[2]
        raise self.error("$.objectName", f"expected db, db.table or db.schema.table, got {name!r}")

    def _pk_uk_info(self, info: str) -> tuple[str, ...]:
        """The primary key columns ``pk_uk_info`` names (none: empty)."""
        path = f"$.tags.{TAG_PK_UK_INFO}"
        try:
            parsed = json.loads(info)
        except ValueError:
            raise self.error(path, f"invalid JSON {info[:60]!r}") from None
        if not isinstance(parsed, dict):
            raise self.error(path, f"expected object, got {type_name(parsed)}")
        primary = parsed.get(PK_PRIMARY)
        if primary is None:
            return ()
        if not isinstance(primary, list) or not all(isinstance(p, str) for p in primary):
            raise self.error(f"{path}.{PK_PRIMARY}", "expected array of column names")
        return tuple(primary)

    def _names(self, record: Mapping[str, Any]) -> list[str]:
        """The column names of ``fields``, each once."""
        fields = record[F_FIELDS]
        if fields is None:
            return []
        if not isinstance(fields, list):
            raise self.error("$.fields", f"expected array of fields, got {type_name(fields)}")
        names: list[str] = []
        for index, field in enumerate(fields):
            name = field[F_FIELD_NAME]
            if name in names:
                raise self.error(f"$.fields[{index}].name", f"duplicate column {name!r}")
            names.append(name)
        return names

    def _image(
        self, record: Mapping[str, Any], field: str, op: Op, names: Sequence[str]
    ) -> tuple[dict[str, Any] | None, bool]:
        """One image by column: SQL NULL (null, EmptyObject NULL) as None, a value as its
        union branch ``(kind, payload)``; a column EmptyObject NONE says was not sent is
        left out (then True: the image is partial)."""
        items = record[field]
        if items is None:
            return None, False
        if not isinstance(items, list):
            raise self.error(
                f"$.{field}", f"expected array of values, got {type_name(items)} in a {op} record"
            )
        if len(items) != len(names):
            raise self.error(f"$.{field}", f"has {len(items)} values for {len(names)} fields")
        image: dict[str, Any] = {}
        lacking = False
        for name, item in zip(names, items, strict=True):
            branch = item if type(item) is tuple and "." not in item[0] else _branch(item)
            kind, payload = branch
            if payload is None:
                image[name] = None
            elif kind == V_EMPTY:
                if payload == EMPTY_NONE:
                    lacking = True
                else:
                    image[name] = None
            else:
                image[name] = branch
        return image, lacking

    # ---- encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One schemaless Avro Record, written by fastavro with the published schema.

        ``ts_ms`` is floored to whole seconds (DTS carries seconds); columns an
        image lacks are written as EmptyObject NONE; a truncate has no DTS form.
        """
        record = self._record(event)
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, _writer_schema(), record)
        except (ValueError, TypeError, OverflowError, KeyError, AttributeError) as exc:
            raise EncodeError(self.id, f"Avro writer refused the record: {exc}") from None
        return [out.getvalue()]

    def _record(self, event: ChangeEvent) -> dict[str, Any]:
        operation = self._wire_operation(event)
        source_position, record_id = _wire_position(event.position)
        source_type = event.extra.get(F_SOURCE_TYPE, SOURCE_MYSQL)
        record: dict[str, Any] = {
            F_VERSION: 0,
            F_ID: record_id,
            F_SOURCE_TIMESTAMP: (event.ts_ms or 0) // 1000,
            F_SOURCE_POSITION: source_position,
            F_SAFE_SOURCE_POSITION: "",
            F_SOURCE_TXID: event.tx or "",
            F_SOURCE: {F_SOURCE_TYPE: source_type, F_SOURCE_VERSION: ""},
            F_OPERATION: operation,
            F_OBJECT_NAME: _wire_object_name(event.database, event.schema, event.table),
            F_PROCESS_TIMESTAMPS: None,
            F_TAGS: {},
            F_FIELDS: None,
            F_BEFORE: None,
            F_AFTER: None,
            F_BORN_TIMESTAMP: int(event.extra.get(F_BORN_TIMESTAMP, 0)),
        }
        if event.op is Op.DDL:
            record[F_AFTER] = event.ddl or ""
            return record
        if event.op not in ROW_OPS:
            return record
        if event.key:
            record[F_TAGS] = {
                TAG_PK_UK_INFO: json.dumps({PK_PRIMARY: list(event.key)}, separators=(",", ":"))
            }
        columns = dict(event.columns or {})
        for image in (event.before, event.after):
            for name in image or {}:
                columns.setdefault(name, Column())
        record[F_FIELDS] = [
            {F_FIELD_NAME: name, F_FIELD_TYPE: _wire_code(col)} for name, col in columns.items()
        ]
        if event.op in (Op.UPDATE, Op.DELETE):
            record[F_BEFORE] = _wire_image(event.before, columns)
        if event.op is not Op.DELETE:
            record[F_AFTER] = _wire_image(event.after, columns)
        return record

    def _wire_operation(self, event: ChangeEvent) -> str:
        if event.op is Op.HEARTBEAT and event.extra.get(F_OPERATION) in PROGRESS_OPS:
            return str(event.extra[F_OPERATION])
        if event.op not in _OP_TO_WIRE:
            raise EncodeError(
                self.id, f"{event.op.value} has no DTS Avro form (DTS sends TRUNCATE as DDL text)"
            )
        return _OP_TO_WIRE[event.op]


# =========================================================================== decoding helpers
def _plausible(record: Mapping[str, Any]) -> bool:
    """Whether a record that decoded as Avro also looks like DTS wrote it."""
    if not (0 <= record[F_VERSION] <= 16 and record[F_ID] >= 0):
        return False
    if not (0 <= record[F_SOURCE_TIMESTAMP] < 2**34 and 0 <= record[F_BORN_TIMESTAMP] < 2**44):
        return False
    texts = [record[F_SOURCE_POSITION], record[F_SAFE_SOURCE_POSITION], record[F_SOURCE_TXID]]
    name = record[F_OBJECT_NAME]
    if name is not None:
        if not name or name.count(".") > 2:
            return False
        texts.append(name)
    texts.extend(record[F_TAGS])
    if any(len(t) > 4096 or not _PRINTABLE.fullmatch(t) for t in texts):
        return False
    fields = record[F_FIELDS]
    if isinstance(fields, list):
        if any(not f[F_FIELD_NAME] for f in fields):
            return False
        for image in (record[F_BEFORE], record[F_AFTER]):
            if isinstance(image, list) and len(image) != len(fields):
                return False
    return True


def _position(source_position: str, record_id: int) -> Position | None:
    text = source_position.strip()
    match = _POSITION_BINLOG.fullmatch(text)
    if match:
        return Position((int(match.group(2)), int(match.group(1)), record_id))
    if _POSITION_NUMBER.fullmatch(text):
        return Position((int(text), record_id))
    match = _POSITION_LSN.fullmatch(text)
    if match:
        return Position(((int(match.group(1), 16) << 32) | int(match.group(2), 16), record_id))
    return None


def _ddl_text(record: Mapping[str, Any]) -> str | None:
    for field in (F_AFTER, F_BEFORE):
        if isinstance(record[field], str):
            return str(record[field])
    return None


Branch = tuple[str | None, Any]
_NULL_BRANCH: Final[Branch] = (None, None)


def _branch(item: Any) -> Branch:
    """``(kind, payload)`` of an image value: tagged by our reader (short names), by
    fastavro (full names), or an untagged fastavro value (known by its keys)."""
    if item is None:
        return _NULL_BRANCH
    if type(item) is tuple:
        kind = item[0]
        return (kind.rsplit(".", 1)[-1] if "." in kind else kind), item[1]
    if item in (EMPTY_NULL, EMPTY_NONE):
        return V_EMPTY, item
    return _untagged_kind(item), item


def _untagged_kind(payload: Any) -> str | None:
    """The branch of an untagged value, by its keys (same-shaped geometry branches
    read as the object branches)."""
    if not isinstance(payload, dict):
        return None
    keys = frozenset(payload)
    if keys == _DECIMAL_KEYS:
        return V_DECIMAL if isinstance(payload[K_VALUE], str) else V_FLOAT
    if keys == _OBJECT_KEYS:
        return V_TEXT_OBJECT if isinstance(payload[K_VALUE], str) else V_BINARY_OBJECT
    return _KINDS_BY_KEYS.get(keys)


_DECIMAL_KEYS: Final = frozenset({K_VALUE, K_PRECISION, K_SCALE})
_OBJECT_KEYS: Final = frozenset({K_TYPE, K_VALUE})
_KINDS_BY_KEYS: Final[Mapping[frozenset[str], str]] = {
    frozenset({K_PRECISION, K_VALUE}): V_INTEGER,
    frozenset({K_CHARSET, K_VALUE}): V_CHARACTER,
    frozenset({K_TIMESTAMP, K_MILLIS}): V_TIMESTAMP,
    frozenset(DT_PARTS): V_DATETIME,
    frozenset({K_VALUE, K_TIMEZONE}): V_TIMESTAMP_TZ,
}


def _column_type(base: LogicalType, code: int | None, items: Sequence[Branch]) -> LogicalType:
    """The column's logical type: the binlog code's, refined by its values' Avro branch
    (``items``: the column's non-null values, as :meth:`DtsAvro.images` keeps them)."""
    found = next((item for item in items if item[0] is not None), None)
    if found is None:
        return base
    kind, payload = found
    name = base.name
    if kind == V_INTEGER:
        start = base if name in INTEGER_TYPES else INT64
        return _widen(start, items)
    if kind == V_DECIMAL:
        precision, scale = payload[K_PRECISION], payload[K_SCALE]
        if 0 < precision <= 1000 and 0 <= scale <= precision:
            return decimal_type(precision, scale)
        return DECIMAL
    if kind == V_FLOAT:
        return base if name in ("float32", "float64") else FLOAT64
    if kind == V_CHARACTER:
        if _is_binary_charset(payload[K_CHARSET]):
            return BINARY
        return base if name in ("string", "json") else STRING
    if kind in (V_TIMESTAMP, V_TIMESTAMP_TZ):
        return TIMESTAMPTZ
    if kind == V_DATETIME:
        return _datetime_type(base, code, payload)
    if kind in (V_BINARY_OBJECT, V_BINARY_GEOMETRY):
        return BINARY
    if kind == V_TEXT_OBJECT and str(payload[K_TYPE]).upper() == TEXT_OBJECT_JSON:
        return JSON
    return base if name in ("string", "json") else STRING  # TextObject, TextGeometry


def _widen(start: LogicalType, items: Sequence[Branch]) -> LogicalType:
    """The narrowest integer type from ``start`` up that holds every Integer value."""
    values = []
    for kind, payload in items:
        if kind == V_INTEGER:
            try:
                values.append(int(payload[K_VALUE]))
            except ValueError:
                continue
    if not values:
        return start
    low, high = min(values), max(values)
    bounds = INTEGER_RANGES.get(start.name)
    if bounds is None or (bounds[0] <= low and high <= bounds[1]):
        return start
    for name in _WIDENING[_WIDENING.index(start.name) + 1 :] if start.name in _WIDENING else ():
        lo, hi = INTEGER_RANGES[name]
        if lo <= low and high <= hi:
            return LogicalType.parse(name)
    if low >= 0 and high <= INTEGER_RANGES["uint64"][1]:
        return UINT64
    return LogicalType("integer")


def _datetime_type(base: LogicalType, code: int | None, payload: Mapping[str, Any]) -> LogicalType:
    if base.name in ("date", "time", "timestamp"):
        return base
    if code == _YEAR_CODE:
        return INT16
    if base.name == "timestamptz":
        return TIMESTAMP  # a wall-clock DateTime has no zone to be an instant
    has_date = payload["year"] is not None
    has_time = payload["hour"] is not None
    if has_date and has_time:
        return TIMESTAMP
    if has_time:
        return TIME
    if payload["month"] is None and payload["day"] is None:
        return INT16  # a YEAR
    return DATE


# Each converter turns one branch's payload into the typed value of a column of the
# given logical type, or raises ValueError when the value does not fit it.
Converter = Callable[[Any, LogicalType, "dt.tzinfo | None"], Any]


def _misfit(kind: str, ltype: LogicalType) -> ValueError:
    return ValueError(f"a {kind} value does not fit a {ltype} column")


def _from_integer(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    number = int(payload[K_VALUE])
    name = ltype.name
    if name in INTEGER_TYPES:
        bounds = INTEGER_RANGES.get(name)
        if bounds and not bounds[0] <= number <= bounds[1]:
            raise ValueError(f"{number} out of range for {ltype}")
        return number
    if name == "decimal":
        return Decimal(number)
    if name in ("float32", "float64"):
        return float(number)
    raise _misfit(V_INTEGER, ltype)


def _from_decimal(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name != "decimal":
        raise _misfit(V_DECIMAL, ltype)
    return Decimal(payload[K_VALUE].strip())


def _from_float(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name not in ("float32", "float64"):
        raise _misfit(V_FLOAT, ltype)
    return float(payload[K_VALUE])


def _from_character(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    name = ltype.name
    if name == "binary":
        return bytes(payload[K_VALUE])
    if name not in ("string", "json"):
        raise _misfit(V_CHARACTER, ltype)
    codec = _codec(payload[K_CHARSET])
    if codec is None:
        raise ValueError(f"unknown charset {payload[K_CHARSET]!r}")
    return bytes(payload[K_VALUE]).decode(codec)


def _from_timestamp(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name != "timestamptz":
        raise _misfit(V_TIMESTAMP, ltype)
    return EPOCH + dt.timedelta(seconds=payload[K_TIMESTAMP], microseconds=payload[K_MILLIS])


def _from_timestamp_tz(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name != "timestamptz":
        raise _misfit(V_TIMESTAMP_TZ, ltype)
    local = _datetime_value(payload[K_VALUE], TIMESTAMP, None)
    return local.replace(tzinfo=_zone(payload[K_TIMEZONE]))


def _from_binary(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name != "binary":
        raise _misfit("binary object", ltype)
    return bytes(payload[K_VALUE])


def _from_text(payload: Any, ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    if ltype.name not in ("string", "json"):
        raise _misfit("text object", ltype)
    return str(payload[K_VALUE])


def _datetime_value(payload: Mapping[str, Any], ltype: LogicalType, tz: dt.tzinfo | None) -> Any:
    """A DateTime as the value its column holds: date, time, timestamp or a YEAR int."""
    year, month, day, hour, minute, second, micros = (payload[p] for p in DT_PARTS)
    name = ltype.name
    if name in INTEGER_TYPES:
        return int(year)
    if name == "date":
        return dt.date(year, month, day)
    if name == "time":
        return dt.time(hour, minute or 0, second or 0, micros or 0)
    if name in ("timestamp", "timestamptz"):
        value = dt.datetime(year, month, day, hour or 0, minute or 0, second or 0, micros or 0)
        return value.replace(tzinfo=tz) if tz is not None else value
    raise _misfit(V_DATETIME, ltype)


_CONVERTERS: Final[Mapping[str | None, Converter]] = {
    V_INTEGER: _from_integer,
    V_DECIMAL: _from_decimal,
    V_FLOAT: _from_float,
    V_CHARACTER: _from_character,
    V_TIMESTAMP: _from_timestamp,
    V_DATETIME: _datetime_value,
    V_TIMESTAMP_TZ: _from_timestamp_tz,
    V_BINARY_OBJECT: _from_binary,
    V_BINARY_GEOMETRY: _from_binary,
    V_TEXT_OBJECT: _from_text,
    V_TEXT_GEOMETRY: _from_text,
}


def _branch_parser(ltype: LogicalType, tz: dt.tzinfo | None) -> Parser:
    """The value parser of a ``ltype`` column: a branch by its kind's converter."""

    def parse(branch: Branch) -> Any:
        converter = _CONVERTERS.get(branch[0])
        if converter is None:
            raise ValueError(f"a value of unknown shape {branch[1]!r}")
        try:
            return converter(branch[1], ltype, tz)
        except KeyError as exc:  # a plain fastavro value lacking a part
            raise ValueError(f"a {branch[0]} value without {exc}") from None

    return parse


def _as_sent(branch: Branch) -> Any:
    """A value that is not valid for its column, kept as close to the vendor's text as we can."""
    kind, payload = branch
    if kind in (V_INTEGER, V_DECIMAL, V_TEXT_OBJECT, V_TEXT_GEOMETRY):
        return str(payload[K_VALUE])
    if kind == V_FLOAT:
        return float(payload[K_VALUE])
    if kind == V_CHARACTER:
        codec = _codec(payload[K_CHARSET])
        if codec is None:
            return bytes(payload[K_VALUE])  # an unknown charset: the bytes as sent
        try:
            return bytes(payload[K_VALUE]).decode(codec)
        except UnicodeDecodeError:
            return bytes(payload[K_VALUE])
    if kind == V_TIMESTAMP:
        return f"{payload[K_TIMESTAMP]}.{payload[K_MILLIS]:06d}"
    if kind == V_DATETIME:
        return _render_datetime(payload)
    if kind == V_TIMESTAMP_TZ:
        return f"{_render_datetime(payload[K_VALUE])} {payload[K_TIMEZONE]}"
    if kind in (V_BINARY_OBJECT, V_BINARY_GEOMETRY):
        return bytes(payload[K_VALUE])
    return str(payload)


def _render_datetime(payload: Mapping[str, Any]) -> str:
    """MySQL's text for a DateTime, zeros and all (``0000-00-00 00:00:00``, ``-838:59:59``)."""
    year, month, day, hour, minute, second, micros = (payload[p] for p in DT_PARTS)
    parts = []
    if year is not None:
        has_day = month is not None or day is not None
        parts.append(f"{year:04d}-{month or 0:02d}-{day or 0:02d}" if has_day else f"{year:04d}")
    if hour is not None:
        negative = any(v is not None and v < 0 for v in (hour, minute, second, micros))
        text = f"{abs(hour):02d}:{abs(minute or 0):02d}:{abs(second or 0):02d}"
        if micros:
            text += f".{abs(micros):06d}"
        parts.append(("-" if negative else "") + text)
    return " ".join(parts)


def _is_binary_charset(charset: str) -> bool:
    """MySQL BINARY / VARBINARY values arrive as Character with charset ``binary`` (or none)."""
    name = charset.strip().lower()
    return not name or name == CHARSET_BINARY


@functools.lru_cache(maxsize=128)
def _codec(charset: str) -> str | None:
    """The Python codec of a MySQL, Oracle or Java charset name; None for binary / unknown."""
    name = charset.strip().lower()
    if _is_binary_charset(name):
        return None
    if name in MYSQL_CHARSETS:
        return MYSQL_CHARSETS[name]
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


_OFFSET: Final = re.compile(r"(?:GMT|UTC)?\s*([+-])(\d{1,2})(?::?(\d{2}))?")


def _zone(text: str) -> dt.tzinfo:
    """A zone from an id (``Asia/Shanghai``) or an offset (``+08:00``, ``GMT+8``)."""
    stripped = text.strip()
    match = _OFFSET.fullmatch(stripped)
    if match:
        sign = -1 if match.group(1) == "-" else 1
        delta = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3) or 0))
        return dt.UTC if not delta else dt.timezone(sign * delta)
    if stripped.upper() in ("UTC", "Z", "GMT"):
        return dt.UTC
    return zone_info(stripped)


# =========================================================================== encoding helpers
def mysql_column(ltype: LogicalType) -> Column:
    """The column DTS Avro describes for a value of ``ltype`` (code and binlog type name).

    >>> col = mysql_column(TIMESTAMPTZ)
    >>> str(col.type), col.vendor_type, col.vendor_code
    ('timestamptz', 'TIMESTAMP', 7)
    """
    code = _CODE_FOR_TYPE[ltype.name]
    return Column(ltype, MYSQL_BINLOG_TYPES[code][0], code)


def _wire_code(col: Column) -> int:
    code = col.vendor_code
    if (
        code is not None
        and code in MYSQL_BINLOG_TYPES
        and (MYSQL_BINLOG_TYPES[code][0] == col.vendor_type)
    ):
        return code
    return _CODE_FOR_TYPE[col.type.name]


def _wire_position(position: Position | None) -> tuple[str, int]:
    if position is None:
        return "", 0
    parts = position.parts
    if len(parts) == 3:
        return f"{parts[1]}@{parts[0]}", parts[2]
    if len(parts) == 2:
        return str(parts[0]), parts[1]
    return "", parts[0] if parts else 0


def _wire_object_name(*names: str | None) -> str | None:
    present = [n.replace(".", NAME_DOT_ESCAPE) for n in names if n is not None]
    return ".".join(present) if present else None


_ABSENT: Final = object()
_NONE_VALUE: Final = (f"{AVRO_NAMESPACE}.{V_EMPTY}", EMPTY_NONE)


def _wire_image(image: Mapping[str, Any] | None, columns: Mapping[str, Column]) -> Any:
    if image is None:
        return None
    out = []
    for name, col in columns.items():
        value = image.get(name, _ABSENT)
        out.append(_NONE_VALUE if value is _ABSENT else _wire_value(value, col.type))
    return out


def _tagged(kind: str, payload: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    return f"{AVRO_NAMESPACE}.{kind}", payload


_TEXT_DATETIME: Final = re.compile(
    r"(-?)(?:(\d{4})-(\d{2})-(\d{2}))?[ T]?(?:(\d{2,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?"
)


def _wire_value(value: Any, ltype: LogicalType) -> Any:
    """One image value as the Avro union branch DTS uses for it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return _tagged(V_INTEGER, {K_PRECISION: 1, K_VALUE: "1" if value else "0"})
    if isinstance(value, int):
        text = str(value)
        return _tagged(V_INTEGER, {K_PRECISION: len(text.lstrip("-")), K_VALUE: text})
    if isinstance(value, Decimal):
        precision, scale = (
            (ltype.precision, ltype.scale or 0) if ltype.precision is not None else (0, 0)
        )
        text = format(value, "f") if value.is_finite() else str(value)
        return _tagged(V_DECIMAL, {K_VALUE: text, K_PRECISION: precision, K_SCALE: scale})
    if isinstance(value, float):
        return _tagged(V_FLOAT, {K_VALUE: value, K_PRECISION: 0, K_SCALE: 0})
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _tagged(V_BINARY_OBJECT, {K_TYPE: BINARY_OBJECT_BLOB, K_VALUE: bytes(value)})
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return _tagged(V_DATETIME, _datetime_parts(value))
        if value.utcoffset() == dt.timedelta(0) and _zone_name(value.tzinfo) in ("UTC", None):
            instant = value - EPOCH
            return _tagged(
                V_TIMESTAMP,
                {
                    K_TIMESTAMP: instant.days * 86_400 + instant.seconds,
                    K_MILLIS: instant.microseconds,
                },
            )
        zone = _zone_name(value.tzinfo) or _offset_text(value)
        return _tagged(
            V_TIMESTAMP_TZ,
            {K_VALUE: _datetime_parts(value.replace(tzinfo=None)), K_TIMEZONE: zone},
        )
    if isinstance(value, dt.date):
        return _tagged(V_DATETIME, {**dict.fromkeys(DT_PARTS), **_date_parts(value)})
    if isinstance(value, dt.time):
        return _tagged(V_DATETIME, {**dict.fromkeys(DT_PARTS), **_time_parts(value)})
    if isinstance(value, str):
        if ltype.name == "json":
            return _tagged(V_TEXT_OBJECT, {K_TYPE: TEXT_OBJECT_JSON, K_VALUE: value})
        if ltype.name in ("date", "time", "timestamp"):
            parts = _text_datetime_parts(value)
            if parts is not None:
                return _tagged(V_DATETIME, parts)
        return _tagged(
            V_CHARACTER,
            {K_CHARSET: DEFAULT_CHARSET, K_VALUE: value.encode("utf-8", "surrogatepass")},
        )
    return _tagged(
        V_TEXT_OBJECT, {K_TYPE: TEXT_OBJECT_JSON, K_VALUE: json.dumps(value, default=str)}
    )


def _zone_name(tz: dt.tzinfo | None) -> str | None:
    if isinstance(tz, ZoneInfo):
        return "UTC" if tz.key in ("UTC", "Etc/UTC") else tz.key
    if tz is dt.UTC:
        return "UTC"
    return None


def _offset_text(value: dt.datetime) -> str:
    offset = value.utcoffset() or dt.timedelta(0)
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _date_parts(value: dt.date) -> dict[str, int]:
    return {"year": value.year, "month": value.month, "day": value.day}


def _time_parts(value: dt.time | dt.datetime) -> dict[str, int]:
    return {
        "hour": value.hour,
        "minute": value.minute,
        "second": value.second,
        "millis": value.microsecond,
    }


def _datetime_parts(value: dt.datetime) -> dict[str, int]:
    return {**_date_parts(value), **_time_parts(value)}


def _text_datetime_parts(text: str) -> dict[str, Any] | None:
    """DateTime parts of a kept-as-sent invalid value (``0000-00-00 00:00:00``, ``-838:59:59``)."""
    match = _TEXT_DATETIME.fullmatch(text.strip())
    if not match or (match.group(2) is None and match.group(5) is None):
        return None
    parts: dict[str, Any] = dict.fromkeys(DT_PARTS)
    if match.group(2) is not None:
        parts.update(year=int(match.group(2)), month=int(match.group(3)), day=int(match.group(4)))
    if match.group(5) is not None:
        sign = -1 if match.group(1) else 1
        fraction = int(((match.group(8) or "") + "000000")[:6])
        parts.update(
            hour=sign * int(match.group(5)),
            minute=sign * int(match.group(6)),
            second=sign * int(match.group(7)),
            millis=sign * fraction,
        )
    return parts


__all__ = [
    "DtsAvro",
    "mysql_column",
]
