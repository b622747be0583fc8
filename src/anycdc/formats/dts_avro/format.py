"""``dts-avro``: :class:`DtsAvro`, the record through RowFlow's flow, and its encoder."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import fastavro

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats.base import MAX_MESSAGE_BYTES, Cache, Capabilities, Parser, convert_values
from anycdc.formats.codecs.avro import AvroDataError
from anycdc.formats.dts_avro.encode import wire_code, wire_image, wire_object_name, wire_position
from anycdc.formats.dts_avro.types import as_sent, branch_parser, column_type, union_branch
from anycdc.formats.dts_avro.wire import (
    CACHED,
    EMPTY_NONE,
    F_AFTER,
    F_BEFORE,
    F_BORN_TIMESTAMP,
    F_FIELD_NAME,
    F_FIELD_TYPE,
    F_FIELDS,
    F_ID,
    F_OBJECT_NAME,
    F_OPERATION,
    F_PROCESS_TIMESTAMPS,
    F_SAFE_SOURCE_POSITION,
    F_SOURCE,
    F_SOURCE_POSITION,
    F_SOURCE_TIMESTAMP,
    F_SOURCE_TXID,
    F_SOURCE_TYPE,
    F_SOURCE_VERSION,
    F_TAGS,
    F_VERSION,
    MYSQL_FAMILY,
    NAME_DOT_ESCAPE,
    NO_ROW,
    OP_TO_WIRE,
    OPS,
    PK_PRIMARY,
    POSITION_BINLOG,
    POSITION_LSN,
    POSITION_NUMBER,
    PRINTABLE,
    PROGRESS_OPS,
    SOURCE_MYSQL,
    TAG_PK_UK_INFO,
    V_EMPTY,
    record_reader,
    writer_schema,
)
from anycdc.formats.events import Header, OpRule
from anycdc.formats.flow import DDL, DELETE, ROW_OPS, UPDATE, Images, RowFlow
from anycdc.typemap import MYSQL_BINLOG_TYPES
from anycdc.values import (
    UNKNOWN,
    LogicalType,
)


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
        record_reader()  # loads the packaged schema (once per process) when first built
        self._tz = self.options.timezone
        self._parsers: Cache[LogicalType, Parser] = Cache(CACHED)
        self._keys: Cache[str, tuple[str, ...]] = Cache(CACHED)
        self._typing: tuple[Mapping[str, Column] | None, dict[str, Parser]] = (None, {})

    @property
    def avro_schema(self) -> Any:
        """The published ``Record`` schema, parsed by fastavro (what messages are written with)."""
        return writer_schema()

    # ---- detection
    @classmethod
    def sniff(cls, message: Any) -> float:
        """Decode the bytes as a DTS Record and check the result is plausible."""
        if not isinstance(message, (bytes, bytearray, memoryview)) or len(message) < 16:
            return 0.0
        try:
            record = record_reader().read(bytes(message))
        except (AvroDataError, ValueError, KeyError, TypeError, OverflowError):
            return 0.0
        return 0.95 if _plausible(record) else 0.05

    # ---- decoding: the Avro record, then RowFlow's flow
    def decode_bytes(self, value: bytes, key: bytes | None) -> list[ChangeEvent]:
        if len(value) > MAX_MESSAGE_BYTES:
            raise self.error("$", f"message of {len(value)} bytes exceeds the limit")
        try:
            record = record_reader().read(value)
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

    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
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

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
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
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
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
        before: Mapping[str, Any] = images[0] or NO_ROW
        after: Mapping[str, Any] = images[1] or NO_ROW
        columns: dict[str, Column] = {}
        for field in msg[F_FIELDS] or ():
            name = field[F_FIELD_NAME]
            code = field[F_FIELD_TYPE]
            items = [v for v in (before.get(name), after.get(name)) if v is not None]
            if mysql:
                vendor_name, base = MYSQL_BINLOG_TYPES.get(code, (str(code), UNKNOWN))
                columns[name] = Column(column_type(base, code, items), vendor_name, code)
            else:
                columns[name] = Column(column_type(UNKNOWN, None, items), None, code)
        return columns

    def value_parser(self, ltype: LogicalType) -> Parser:
        """A union branch ``(kind, payload)`` as a value of a ``ltype`` column (ValueError
        where the kind's converter refuses it)."""
        parser = self._parsers.get(ltype)
        if parser is None:
            parser = self._parsers.put(ltype, branch_parser(ltype, self._tz))
        return parser

    def convert_image(
        self, raw: Mapping[str, Any], columns: Mapping[str, Column], path: str, invalid: list[str]
    ) -> dict[str, Any]:
        """Type an image of union branches; a value its column refuses is kept as the
        vendor's text (:func:`_as_sent`) and listed in ``invalid``."""
        if columns is not self._typing[0]:  # an UPDATE's images share their columns
            parsers = {name: self.value_parser(col.type) for name, col in columns.items()}
            self._typing = (columns, parsers)
        return convert_values(raw, self._typing[1], invalid, keep=as_sent)

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
            branch = item if type(item) is tuple and "." not in item[0] else union_branch(item)
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
            fastavro.schemaless_writer(out, writer_schema(), record)
        except (ValueError, TypeError, OverflowError, KeyError, AttributeError) as exc:
            raise EncodeError(self.id, f"Avro writer refused the record: {exc}") from None
        return [out.getvalue()]

    def _record(self, event: ChangeEvent) -> dict[str, Any]:
        operation = self._wire_operation(event)
        source_position, record_id = wire_position(event.position)
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
            F_OBJECT_NAME: wire_object_name(event.database, event.schema, event.table),
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
            {F_FIELD_NAME: name, F_FIELD_TYPE: wire_code(col)} for name, col in columns.items()
        ]
        if event.op in (Op.UPDATE, Op.DELETE):
            record[F_BEFORE] = wire_image(event.before, columns)
        if event.op is not Op.DELETE:
            record[F_AFTER] = wire_image(event.after, columns)
        return record

    def _wire_operation(self, event: ChangeEvent) -> str:
        if event.op is Op.HEARTBEAT and event.extra.get(F_OPERATION) in PROGRESS_OPS:
            return str(event.extra[F_OPERATION])
        if event.op not in OP_TO_WIRE:
            raise EncodeError(
                self.id, f"{event.op.value} has no DTS Avro form (DTS sends TRUNCATE as DDL text)"
            )
        return OP_TO_WIRE[event.op]


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
    if any(len(t) > 4096 or not PRINTABLE.fullmatch(t) for t in texts):
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
    match = POSITION_BINLOG.fullmatch(text)
    if match:
        return Position((int(match.group(2)), int(match.group(1)), record_id))
    if POSITION_NUMBER.fullmatch(text):
        return Position((int(text), record_id))
    match = POSITION_LSN.fullmatch(text)
    if match:
        return Position(((int(match.group(1), 16) << 32) | int(match.group(2), 16), record_id))
    return None


def _ddl_text(record: Mapping[str, Any]) -> str | None:
    for field in (F_AFTER, F_BEFORE):
        if isinstance(record[field], str):
            return str(record[field])
    return None
