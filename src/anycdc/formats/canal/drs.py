"""Huawei Cloud DRS JSON and JSON-C messages (seed 002, "Kafka消息格式").

DRS writes a Canal-like flat message, one per statement, with **every value a
string**. Two column-type flavours share one shape:

* MySQL / TaurusDB: ``mysqlType`` (type names) + ``sqlType`` (``java.sql.Types``
  codes, except DATETIME = 94);
* GaussDB / PostgreSQL / Oracle / SQL Server: ``columnType`` + ``dbType`` +
  ``schema`` + ``opType``; its ``sqlType`` codes are a DRS-internal numbering
  (``timestamp without time zone`` = 16, ``bytea`` = 15 ...), kept as
  ``vendor_code`` but never used for typing. ``database`` is empty for Oracle.

``data`` holds the newest rows and ``old`` the before images (full rows, not
only the changed columns); element *i* of ``old`` belongs to element *i* of
``data``, and one message can carry several rows (one event each). The two
format ids differ only where the seed says so:

===============  =====================================  ================================
variant          ``drs-json``                           ``drs-json-c``
===============  =====================================  ================================
DELETE row       in ``old`` (``data`` null)             in ``data`` (``old`` null)
MySQL TIMESTAMP  epoch seconds ``"1624614713.201"``     text ``"2021-06-25 17:51:53"``
                 (an instant: aware UTC)                (zone-less: naive, or in the
                                                        ``timezone`` option's zone)
===============  =====================================  ================================

A decoder of either id still takes a DELETE row from the other field when its
own field is empty (the row is the deleted row either way). Full-load
messages are ``INIT`` (rows, decoded as ``snapshot``) and ``INIT_DDL`` (the
``CREATE TABLE`` in ``sql``, decoded as ``ddl``); their ``jobId``, ``shardId``,
``identifier`` and ``eventId`` are kept in ``extra``, as is ``dbType``.

Value renderings (all strings): MySQL binary as a list of byte values
``"[106, 103]"`` (``"[]"`` empty), PostgreSQL ``bytea`` as hex, float
``"10357.0"``, double ``"1.2510357E7"``, decimal exact, boolean ``"false"``,
ranges and bit strings as text, JSON as its text. Table names are kept exactly
as sent: the seed's ``"test "`` keeps its trailing space (it names a different
table than ``"test"`` as far as anycdc can know). ``position`` is ``(id,)``
(DRS's monotonic serial number) and ``ts_ms`` is ``es``.

The decoding flow is the Canal family's (:class:`anycdc.formats.canal.family.CanalFamily`);
DRS gives its hooks: header and ``columnType``/``dbType`` fields, whole ``old``
rows, the DELETE row's array, typing by vendor names, invalid columns per event.

Detection relies only on what other Canal-shaped producers (open-source
Canal, DTS, OMS, DataArts) never write: every row value a string, plus one of
``columnType``/``opType``, a full-load field (``jobId`` ...), ``INIT_DDL``,
the DRS field order (``mysqlType``/``columnType`` first; the others start with
``data`` or ``database``) or a binary column written as a byte list. JSON-C is
chosen only when the message proves it (a DELETE row in ``data``, a MySQL
TIMESTAMP as datetime text); a message that cannot tell is ``drs-json``. The rule
(:func:`~anycdc.formats.canal.detect.read_drs_evidence`) is the family's detection
module's: canal-json and dts-canal-json read it too, to step aside.

>>> from anycdc.formats import get_format
>>> fmt = get_format("drs-json")
>>> msg = (b'{"mysqlType":{"id":"int","ts":"timestamp"},"id":7,"es":1624614713000,'
...        b'"ts":1624614713100,"database":"d","table":"t","type":"INSERT","isDdl":false,'
...        b'"sql":"","sqlType":{"id":4,"ts":93},"data":[{"id":"1","ts":"1624614713.201"}],'
...        b'"old":null,"pkNames":["id"]}')
>>> [event] = fmt.decode(msg)
>>> event.op.value, event.key, event.after["id"], event.after["ts"].isoformat()
('insert', ('id',), 1, '2021-06-25T09:51:53.201000+00:00')
>>> event.position
Position(parts=(7,))
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps, value_to_json
from anycdc.formats.base import (
    NAIVE_DATETIME,
    NULL_RAW,
    Cache,
    Capabilities,
    FastColumn,
    NotFast,
    expect_list,
    expect_object,
    generic_parser,
    lax_int,
    optional_str,
)
from anycdc.formats.canal.detect import DRS_ONLY, FLAT, drs_evidence, type_word
from anycdc.formats.canal.family import CanalFamily
from anycdc.formats.canal.fast import FlatPlan, cache_items
from anycdc.formats.canal.rows import Envelope, Pairing, RowRender
from anycdc.formats.canal.types import FlatSchema
from anycdc.formats.canal.wire import (
    F_COLUMN_TYPE,
    F_DATA,
    F_DATABASE,
    F_DB_TYPE,
    F_ES,
    F_EVENT_ID,
    F_ID,
    F_IS_DDL,
    F_JOB_ID,
    F_MYSQL_TYPE,
    F_OLD,
    F_OP_TYPE,
    F_PK_NAMES,
    F_SCHEMA,
    F_SQL,
    F_SQL_TYPE,
    F_TABLE,
    F_TS,
    F_TYPE,
    FULL_LOAD_FIELDS,
    OP_DDL,
    OP_DELETE,
    OP_INIT,
    OP_INIT_DDL,
    OP_INSERT,
    OP_UPDATE,
    ROW_KINDS,
)
from anycdc.formats.codecs.java import gson_json, java_double, plain_decimal
from anycdc.formats.codecs.text import ValueText, int_field, render_value
from anycdc.formats.events import Header
from anycdc.formats.options import OptionSpec
from anycdc.typemap import integer_range, sql_type
from anycdc.values import (
    BINARY,
    CANONICAL_BOOLEAN,
    CANONICAL_DATE,
    CANONICAL_DECIMAL,
    CANONICAL_NAIVE_DATETIME,
    CANONICAL_TIME,
    INTEGER_TYPES,
    STRING,
    TIMESTAMP,
    TIMESTAMPTZ,
    UNKNOWN,
    LogicalType,
    canonical_int_pattern,
    check_integer_range,
    epoch_seconds_text,
    iso_datetime_text,
    parse_byte_list,
    parse_epoch_seconds,
    parse_hex,
    parse_int,
    to_byte_list,
)

# --------------------------------------------------------------------------- wire names
# (Canal's fields and op codes, and DRS' own fields, are in anycdc.formats.canal.wire)

DDL_OPS: Final = frozenset({OP_DDL, OP_INIT_DDL})

#: ``dbType`` written for the GaussDB flavour when an event does not say which source it had.
DEFAULT_DB_TYPE: Final = "GaussDB Primary/Standby"


# how a column's string is parsed, beyond its logical type
_GENERIC: Final = "generic"
_EPOCH: Final = "epoch"  # MySQL TIMESTAMP in drs-json: "1624614713.201"
_BYTE_LIST: Final = "byte-list"  # MySQL binary: "[106, 103]"
_BINARY_TEXT: Final = "binary-text"  # GaussDB/PostgreSQL bytea: hex (a byte list is also accepted)
_WITH_OFFSET: Final = "with-offset"  # GaussDB/PostgreSQL timestamptz: "... 14:30:00+08"

_MYSQL: Final = "mysql"
_COLUMN: Final = "column"  # the GaussDB / PostgreSQL / Oracle / SQL Server flavour

_BIT_STRINGS: Final = frozenset({"bit", "varbit"})  # GaussDB/PG: "101" bit-string text
_MAX_CACHED_TYPES: Final = 4096

# Type names (and java.sql.Types codes, as in the seed: FLOAT = 6, DATETIME = 94) the
# encoder writes for a logical type when the event's own vendor type does not fit.
_MYSQL_NAMES: Final[dict[str, tuple[str, int]]] = {
    "boolean": ("boolean", 16), "int8": ("tinyint", -6), "int16": ("smallint", 5),
    "int32": ("int", 4), "int64": ("bigint", -5), "uint64": ("bigint unsigned", -5),
    "float32": ("float", 6), "float64": ("double", 8), "string": ("varchar", 12),
    "binary": ("varbinary", -3), "date": ("date", 91), "time": ("time", 92),
    "timestamp": ("datetime", 94), "timestamptz": ("timestamp", 93), "json": ("json", 12),
}  # fmt: skip
_MYSQL_CODES: Final[dict[str, int]] = {
    "tinyint": -6, "smallint": 5, "mediumint": 4, "int": 4, "integer": 4, "bigint": -5,
    "decimal": 3, "numeric": 2, "float": 6, "double": 8, "real": 8, "bit": -7, "bool": 16,
    "boolean": 16, "char": 1, "varchar": 12, "tinytext": -1, "text": -1, "mediumtext": -1,
    "longtext": -1, "enum": 1, "set": 1, "json": 12, "binary": -2, "varbinary": -3,
    "tinyblob": -4, "blob": 2004, "mediumblob": -4, "longblob": -4, "date": 91, "year": 91,
    "time": 92, "datetime": 94, "timestamp": 93,
}  # fmt: skip
_GAUSS_NAMES: Final[dict[str, str]] = {
    "boolean": "boolean", "int16": "smallint", "int32": "integer", "int64": "bigint",
    "float32": "real", "float64": "double precision", "string": "character varying",
    "binary": "bytea", "date": "date", "time": "time without time zone",
    "timestamp": "timestamp without time zone", "timestamptz": "timestamp with time zone",
    "json": "json",
}  # fmt: skip
# the DRS-internal codes the seed shows for the GaussDB flavour (others are left out)
_GAUSS_CODES: Final[dict[str, int]] = {
    "smallint": 2, "boolean": 8, "character": 9, "bytea": 15,
    "timestamp without time zone": 16, "bit": 20, "json": 22, "int4range": 42, "tstzrange": 46,
}  # fmt: skip

Parser = Callable[[Any], Any]


# --------------------------------------------------------------------------- helpers
def _parse_binary_text(raw: Any) -> bytes:
    """GaussDB/PostgreSQL binary: hex text (``\\x`` optional) or, if bracketed, a byte list."""
    if isinstance(raw, str) and raw.startswith("["):
        return parse_byte_list(raw)
    return parse_hex(raw)


def _parse_drs_int(ltype: LogicalType, bounds: tuple[int, int] | None) -> Parser:
    """DRS integers are plain digit strings: ``int()`` only (no exponent expansion), held
    to the column's :func:`~anycdc.typemap.integer_range`."""

    def parse(raw: Any) -> int:
        if isinstance(raw, str):
            return check_integer_range(int(raw.strip()), ltype, bounds)
        return check_integer_range(parse_int(raw), ltype, bounds)

    return parse


def _binary_text(data: bytes, kind: str) -> str:
    """Bytes as DRS writes a column of ``kind``: GaussDB/PostgreSQL bytea as hex, MySQL
    binary as a byte list."""
    return data.hex() if kind == _BINARY_TEXT else to_byte_list(data)


def _datetime_text(value: dt.datetime) -> str:
    """``yyyy-mm-dd hh:mm:ss[.fff]``: fraction only when non-zero, trailing zeros trimmed."""
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def _offset_text(value: dt.datetime) -> str:
    """A PostgreSQL-style offset (``+08``, ``+05:30``)."""
    offset = value.utcoffset() or dt.timedelta(0)
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    hours, minutes = divmod(minutes, 60)
    return f"{sign}{hours:02d}" + (f":{minutes:02d}" if minutes else "")


# --------------------------------------------------------------------------- the formats
# --------------------------------------------------------------------------- fast path
# As canal-json's (see :mod:`anycdc.formats.canal`): msgspec decodes the envelope
# into a Struct keeping the type maps and the row arrays as raw bytes; the type
# maps' bytes (with ``dbType``) are the cache key of a plan whose
# :class:`~anycdc.formats.base.FastRows` decodes and types the rows. Anything
# else raises and :meth:`Format.decode_slow` decides.


class _DrsMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Every field of a DRS message (any other field: slow path)."""

    # field names are the wire names
    mysqlType: msgspec.Raw = NULL_RAW
    columnType: msgspec.Raw = NULL_RAW
    sqlType: msgspec.Raw = NULL_RAW
    dbType: Any = None
    schema: Any = None
    opType: Any = None
    id: Any = None
    es: Any = None
    ts: Any = None
    database: Any = None
    table: Any = None
    type: Any = None
    isDdl: Any = None
    sql: Any = None
    data: msgspec.Raw = NULL_RAW
    old: msgspec.Raw = NULL_RAW
    pkNames: list[str] | None = None
    jobId: Any = None
    shardId: Any = None
    identifier: Any = None
    eventId: Any = None


# float_hook as :func:`anycdc.formats.base.parse_json`: the Any fields hold what it gives
_DRS_DECODER: Final = msgspec.json.Decoder(_DrsMessage, float_hook=Decimal)
# the msgspec type and the canonical text (for text images) of a generic column by type
_CANONICAL_LAX: Final[Mapping[str, tuple[Any, str]]] = {
    "decimal": (Decimal, CANONICAL_DECIMAL),
    "boolean": (bool, CANONICAL_BOOLEAN),
    "date": (dt.date, CANONICAL_DATE),
    "time": (None, CANONICAL_TIME),  # parse_time
}
_TEXT_OR_NULL: Final = frozenset({str, type(None)})  # header texts the fast path reads


class _DrsJsonBase(CanalFamily):
    """What DRS JSON and JSON-C share: the Canal family's flow with DRS' hooks (header
    and ``columnType``/``dbType`` fields, whole ``old`` rows, the DELETE row's array,
    typing by vendor names, per-event invalid columns, DRS' own message when encoding);
    subclasses set the two differences."""

    vendor: ClassVar[str] = "Huawei Cloud DRS"
    #: JSON-C puts a DELETE row in ``data`` (JSON: in ``old``)
    delete_in_data: ClassVar[bool] = False
    #: JSON writes MySQL TIMESTAMP as epoch seconds (JSON-C: as datetime text)
    epoch_timestamps: ClassVar[bool] = True

    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = ()
    old_is_overlay: ClassVar[bool] = False  # ``old`` holds whole rows
    widen_by_values: ClassVar[bool] = False
    invalid_per_row: ClassVar[bool] = True
    schema_first: ClassVar[bool] = True

    sniff_scores: ClassVar[tuple[float, float, float, float]]
    """The variant's confidence in a message that is Canal-shaped with nothing DRS-only,
    then in a DRS message that proves JSON, cannot tell, proves JSON-C."""

    @classmethod
    def sniff(cls, message: Any) -> float:
        """DRS-only features decide (the family's rule,
        :func:`drs_evidence`), then the variant."""
        try:
            strength, variant = drs_evidence(message)
        except Exception:  # a sniffer never raises
            return 0.0
        if strength != DRS_ONLY:
            return cls.sniff_scores[0] if strength >= FLAT else 0.0
        return cls.sniff_scores[2 + (variant > 0) - (variant < 0)]

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # how values are written: as DRS' strings, datetimes in the configured zone
        self._text = ValueText(
            true="true",
            false="false",
            integer=str,
            decimal=plain_decimal,
            floating=java_double,
            binary=_binary_text,
            datetime=self._render_datetime,
            date=dt.date.isoformat,
            time=dt.time.isoformat,
            other=lambda value: dumps(value_to_json(value)),
        )
        self._types: Cache[tuple[str, bool, str | None], tuple[LogicalType, str, Parser]] = Cache(
            _MAX_CACHED_TYPES
        )

    # ---- hooks of the Canal family: decoding
    def envelope(self, msg: dict[str, Any]) -> Envelope:
        """The header: ``type`` (``opType`` in the GaussDB flavour; ``DDL``/``INIT_DDL``
        are DDL), DRS' fields checked, then read by :meth:`drs_header`."""
        fid = self.id
        op_field = F_TYPE if msg.get(F_TYPE) is not None else F_OP_TYPE
        op_code = msg.get(op_field)
        if op_code is None:
            raise self.error("$", f"missing required field {F_TYPE!r}")
        if not isinstance(op_code, str):
            raise self.error(f"$.{op_field}", f"expected string, got {type_name(op_code)}")
        db_type = optional_str(fid, msg.get(F_DB_TYPE), f"$.{F_DB_TYPE}")
        loads = [optional_str(fid, msg.get(name), f"$.{name}") for name in FULL_LOAD_FIELDS]
        seq = int_field(fid, msg.get(F_ID), f"$.{F_ID}")
        if seq is not None and seq < 0:
            raise self.error(f"$.{F_ID}", f"expected a non-negative serial number, got {seq}")
        op, head = self.drs_header(
            op_code,
            optional_str(fid, msg.get(F_DATABASE), f"$.{F_DATABASE}"),
            optional_str(fid, msg.get(F_SCHEMA), f"$.{F_SCHEMA}"),
            optional_str(fid, msg.get(F_TABLE), f"$.{F_TABLE}"),
            int_field(fid, msg.get(F_ES), f"$.{F_ES}"),
            seq,
            db_type,
            loads,
        )
        if op_code in DDL_OPS or (op is None and msg.get(F_IS_DDL) is True):
            head.ddl = optional_str(fid, msg.get(F_SQL), f"$.{F_SQL}")
            return Envelope(Op.DDL, head)
        if op is None:
            raise self.error(f"$.{op_field}", f"unknown op {op_code!r}")
        return Envelope(op, head)

    @staticmethod
    def drs_header(
        op_code: str,
        database: str | None,
        schema: str | None,
        table: str | None,
        ts_ms: int | None,
        seq: int | None,
        db_type: str | None,
        loads: Iterable[str | None],
    ) -> tuple[Op | None, Header]:
        """DRS' header rule, for both paths (:meth:`envelope` after its checks,
        :meth:`decode_fast` with its envelope's fields): the op of a row change (None for
        any other code: :meth:`envelope` decides), names kept exactly as sent ("" is no
        name), ``(id,)`` the position, the full-load fields (``loads``, in
        :data:`FULL_LOAD_FIELDS` order) and ``dbType`` in ``extra`` where not empty."""
        extra: dict[str, Any] = {}
        if any(loads):  # full-load messages only: the others skip the loop
            for name, value in zip(FULL_LOAD_FIELDS, loads, strict=True):
                if value:
                    extra[name] = value
        if db_type:
            extra[F_DB_TYPE] = db_type
        position = Position((seq,)) if seq is not None else None
        head = Header(
            database or None, schema or None, table or None, ts_ms, position, None, None, extra
        )  # positional: msgspec matches no keywords
        rule = ROW_KINDS.get(op_code)
        return (None if rule is None else rule.op), head

    def row_arrays(self, msg: dict[str, Any]) -> tuple[list[Any] | None, list[Any] | None]:
        """``data`` and ``old`` (their rows are checked as they are paired)."""
        fid = self.id
        data, old = msg.get(F_DATA), msg.get(F_OLD)
        return (
            None if data is None else expect_list(fid, data, f"$.{F_DATA}"),
            None if old is None else expect_list(fid, old, f"$.{F_OLD}"),
        )

    def pair_rows(self, op: Op, data: list[Any] | None, old: list[Any] | None) -> Pairing:
        """A DELETE row from its variant's array (the other one when that is empty);
        otherwise ``data`` after the change and, for UPDATE, ``old`` the whole row before."""
        fid = self.id
        if op is Op.DELETE:
            own, other = (F_DATA, F_OLD) if self.delete_in_data else (F_OLD, F_DATA)
            rows = {F_DATA: data, F_OLD: old}
            field = own if rows[own] or not rows[other] else other
            found = rows[field]
            if found is None:
                raise self.error(f"$.{own}", "expected array of rows, got null")
            for i, row in enumerate(found):
                if type(row) is not dict:
                    expect_object(fid, row, f"$.{field}[{i}]")
            return found, None, False
        if data is None:
            raise self.error(f"$.{F_DATA}", "expected array of rows, got null")
        before = old if op is Op.UPDATE else None
        if before is not None and len(before) != len(data):
            raise self.error(
                f"$.{F_OLD}", f"expected {len(data)} rows like {F_DATA}, got {len(before)}"
            )
        for i, row in enumerate(data):
            if before is not None and type(before[i]) is not dict:
                expect_object(fid, before[i], f"$.{F_OLD}[{i}]")
            if type(row) is not dict:
                expect_object(fid, row, f"$.{F_DATA}[{i}]")
        return data, before, True

    def schema(self, msg: dict[str, Any], env: Envelope) -> FlatSchema | None:
        """The columns of ``mysqlType`` (``columnType`` + ``dbType``) with ``sqlType`` codes."""
        return self._columns(msg, env.head.extra.get(F_DB_TYPE))

    def decode_fast(self, value: bytes, key: bytes | None = None) -> list[ChangeEvent]:
        """The common row change, or a fast-path refusal (then :meth:`decode_slow` decides)."""
        msg = _DRS_DECODER.decode(value)
        op_code = msg.type
        if type(op_code) is not str:
            raise NotFast  # none (``opType`` alone) or not a string: the slow path reads it
        seq, ts_ms, db_type = msg.id, msg.es, msg.dbType
        loads = (msg.jobId, msg.shardId, msg.identifier, msg.eventId)
        # the header as the slow path reads it: texts and null, a serial number, ``es``
        if not _TEXT_OR_NULL.issuperset(
            map(type, (db_type, msg.database, msg.schema, msg.table, *loads))
        ):
            raise NotFast
        if not (type(seq) is int and seq >= 0) and seq is not None:
            raise NotFast
        if type(ts_ms) is not int and ts_ms is not None:
            raise NotFast
        op, head = self.drs_header(
            op_code, msg.database, msg.schema, msg.table, ts_ms, seq, db_type, loads
        )
        if op is None:
            raise NotFast  # DDL or anything else
        flavoured = msg.columnType != NULL_RAW
        names = msg.columnType if flavoured else msg.mysqlType
        return self._fast_events(
            op, names, msg.sqlType, (db_type, flavoured), msg.data, msg.old, msg.pkNames, head
        )

    def build_fast_plan(self, names: Any, codes: Any, tag: Any) -> FlatPlan:
        db_type, flavoured = tag
        shape = {
            F_COLUMN_TYPE: names if flavoured else None,
            F_MYSQL_TYPE: None if flavoured else names,
            F_SQL_TYPE: codes,
        }
        schema = self._columns(shape, db_type)  # DecodeError: slow path says it
        if schema is None:
            raise NotFast  # untyped rows: the slow path keeps them as sent
        flavour = _COLUMN if flavoured else _MYSQL
        oracle = bool(db_type) and "oracle" in str(db_type).lower()
        fast = {
            name: self._drs_fast_column(col, schema.parsers.get(name), flavour, oracle)
            for name, col in schema.columns.items()
        }
        return FlatPlan(schema, self.fast_rows(fast, zoned=False), zoned=False)

    def _drs_fast_column(
        self, col: Column, parser: Parser | None, flavour: str, oracle: bool
    ) -> FastColumn:
        """The slow parser, and the msgspec type that gives the same for the texts it
        accepts where there is one (see :class:`~anycdc.formats.base.FastRows`)."""
        ltype = col.type
        name = ltype.name
        kind = self._resolve(flavour, oracle, col.vendor_type)[1]
        if parser is None or kind != _GENERIC:
            return FastColumn(parser)
        bounds = integer_range(ltype, col.vendor_type)
        if bounds is not None:  # int(text.strip())
            return FastColumn(parser, lax_int(*bounds), canonical=canonical_int_pattern(*bounds))
        if name == "integer":
            return FastColumn(parser, lax_int(), canonical=canonical_int_pattern(None, None))
        if name in ("string", "json"):
            return FastColumn()  # text stays text
        if name in _CANONICAL_LAX:
            lax, canonical = _CANONICAL_LAX[name]
            return FastColumn(parser, lax, canonical=canonical)
        if name == "timestamp" and self.options.timezone is None:
            return FastColumn(
                parser, NAIVE_DATETIME, iso=True, canonical=CANONICAL_NAIVE_DATETIME,
                canonical_form=iso_datetime_text,
            )  # fmt: skip
        return FastColumn(parser)

    # ---- typing
    def _resolve(self, flavour: str, oracle: bool, name: str | None) -> tuple[LogicalType, str]:
        """Logical type and rendering of a vendor type name in one flavour."""
        if name is None:
            return UNKNOWN, _GENERIC
        ltype = sql_type(name)
        word = type_word(name)
        if flavour == _MYSQL:
            if word == "timestamp":
                return (TIMESTAMPTZ, _EPOCH) if self.epoch_timestamps else (TIMESTAMP, _GENERIC)
            if ltype.name == "binary":
                return BINARY, _BYTE_LIST
            return ltype, _GENERIC
        if word in _BIT_STRINGS:
            return STRING, _GENERIC
        if word == "date" and oracle:
            return TIMESTAMP, _GENERIC  # an Oracle DATE has a time of day
        if ltype.name == "binary":
            return BINARY, _BINARY_TEXT
        if ltype.name == "timestamptz":
            return ltype, _WITH_OFFSET
        return ltype, _GENERIC

    def _column_type(
        self, flavour: str, oracle: bool, name: str | None
    ) -> tuple[LogicalType, str, Parser]:
        key = (flavour, oracle, name)
        found = self._types.get(key)
        if found is None:
            ltype, kind = self._resolve(flavour, oracle, name)
            parser: Parser
            if kind == _EPOCH:
                parser = parse_epoch_seconds
            elif kind == _BYTE_LIST:
                parser = parse_byte_list
            elif kind == _BINARY_TEXT:
                parser = _parse_binary_text
            elif ltype.name in INTEGER_TYPES:
                parser = _parse_drs_int(ltype, integer_range(ltype, name))
            else:
                parser = generic_parser(ltype, self.options.timezone)
            found = self._types.put(key, (ltype, kind, parser))
        return found

    def _columns(self, msg: Mapping[str, Any], db_type: str | None) -> FlatSchema | None:
        flavour = _COLUMN if msg.get(F_COLUMN_TYPE) is not None else _MYSQL
        field = F_COLUMN_TYPE if flavour == _COLUMN else F_MYSQL_TYPE
        raw_types = msg.get(field)
        if raw_types is None:
            return None
        types = expect_object(self.id, raw_types, f"$.{field}")
        raw_codes = msg.get(F_SQL_TYPE)
        codes = (
            expect_object(self.id, raw_codes, f"$.{F_SQL_TYPE}") if raw_codes is not None else {}
        )
        # a topic repeats a few table shapes: build each shape's columns and parsers once
        try:
            # type(v) keeps a code of 4.0 or true from hitting the shape of code 4 or 1
            cache_key: Any = (field, db_type, cache_items(types), cache_items(codes))
            found = self._schemas.get(cache_key)
        except TypeError:  # unhashable garbage in the type maps: validated below
            cache_key, found = None, None
        if found is not None:
            return found
        oracle = bool(db_type) and "oracle" in str(db_type).lower()
        columns: dict[str, Column] = {}
        parsers: dict[str, Parser] = {}
        for name, vendor in types.items():
            vendor_name = optional_str(self.id, vendor, f"$.{field}.{name}")
            code = int_field(self.id, codes.get(name), f"$.{F_SQL_TYPE}.{name}")
            ltype, _, parser = self._column_type(flavour, oracle, vendor_name)
            columns[name] = Column(ltype, vendor_name, code)
            if ltype is not UNKNOWN:
                parsers[name] = parser
        # shared, never mutated: events wrap ``columns`` read-only
        found = FlatSchema(columns, parsers, ())
        if cache_key is not None:
            self._schemas.put(cache_key, found)
        return found

    # ---- hooks of the Canal family: encoding
    def encode_header(self, event: ChangeEvent) -> dict[str, Any] | None:
        """DRS' fields in DRS' order (full-load fields, then the type map, the GaussDB
        fields ...); no message for transaction markers and heartbeats."""
        if event.op in (Op.BEGIN, Op.COMMIT, Op.HEARTBEAT):
            return None  # DRS writes no message for transaction markers or heartbeats
        if event.op is Op.TRUNCATE:
            raise EncodeError(self.id, "DRS JSON has no TRUNCATE message")
        flavour = self._flavour(event)
        full_load = event.op is Op.SNAPSHOT or (event.op is Op.DDL and F_JOB_ID in event.extra)
        msg: dict[str, Any] = {}
        if full_load:
            for name in FULL_LOAD_FIELDS:
                msg[name] = event.extra.get(name)
            msg[F_EVENT_ID] = msg[F_EVENT_ID] or ""  # the seed writes "" (never null) when unknown
        if event.op is Op.DDL:
            code = OP_INIT_DDL if full_load else OP_DDL
        else:
            code = {Op.INSERT: OP_INSERT, Op.UPDATE: OP_UPDATE, Op.DELETE: OP_DELETE}.get(
                event.op, OP_INIT
            )
        msg[F_COLUMN_TYPE if flavour == _COLUMN else F_MYSQL_TYPE] = None
        if flavour == _COLUMN:
            msg[F_DB_TYPE] = event.extra.get(F_DB_TYPE) or DEFAULT_DB_TYPE
            msg[F_SCHEMA] = event.schema
            msg[F_OP_TYPE] = code
        msg[F_ID] = event.position.parts[0] if event.position and event.position.parts else 0
        msg[F_ES] = event.ts_ms
        msg[F_TS] = event.ts_ms
        msg[F_DATABASE] = event.database or ""
        msg[F_TABLE] = event.table
        msg[F_TYPE] = code
        msg[F_IS_DDL] = event.op is Op.DDL
        msg[F_SQL] = (event.ddl or "") if event.op is Op.DDL else ""
        msg[F_SQL_TYPE] = None
        msg[F_DATA] = None
        msg[F_OLD] = None
        msg[F_PK_NAMES] = list(event.key) if event.key and event.op is not Op.DDL else None
        return msg

    def encode_types(self, event: ChangeEvent, msg: dict[str, Any]) -> RowRender:
        """``mysqlType`` (``columnType``) and ``sqlType`` from the columns; values rendered
        as DRS writes each column's type (every value a string)."""
        flavour = self._flavour(event)
        types, codes, renderers = self._encode_columns(event, flavour)
        msg[F_COLUMN_TYPE if flavour == _COLUMN else F_MYSQL_TYPE] = types
        msg[F_SQL_TYPE] = codes
        default = _BINARY_TEXT if flavour == _COLUMN else _GENERIC
        render = self._render
        return lambda row: {k: render(v, renderers.get(k, default)) for k, v in row.items()}

    def encode_rows(self, event: ChangeEvent, msg: dict[str, Any], render: RowRender) -> None:
        """A DELETE row in ``old`` (JSON) or ``data`` (JSON-C); otherwise ``data`` the row
        after the change and, for UPDATE, ``old`` the whole row before."""
        if event.op is Op.DELETE:
            row = event.before if event.before is not None else event.after
            if row is not None:
                msg[F_DATA if self.delete_in_data else F_OLD] = [render(row)]
            return
        if event.after is not None:
            msg[F_DATA] = [render(event.after)]
        if event.op is Op.UPDATE and event.before is not None:
            msg[F_OLD] = [render(event.before)]

    def serialize(self, msg: dict[str, Any]) -> bytes:
        """Compact JSON as DRS' Gson writes it (:func:`~anycdc.formats.codecs.java.gson_json`)."""
        return gson_json(msg)

    def _flavour(self, event: ChangeEvent) -> str:
        if self.delete_in_data:
            return _MYSQL  # JSON-C exists for MySQL / TaurusDB sources only
        return _COLUMN if event.schema is not None or F_DB_TYPE in event.extra else _MYSQL

    def _encode_columns(
        self, event: ChangeEvent, flavour: str
    ) -> tuple[dict[str, str] | None, dict[str, int] | None, dict[str, str]]:
        """Type names, type codes and value renderings of the event's columns."""
        if event.columns is None:
            return None, None, {}
        oracle = "oracle" in str(event.extra.get(F_DB_TYPE, "")).lower()
        types: dict[str, str] = {}
        codes: dict[str, int] = {}
        renderers: dict[str, str] = {}
        for name, col in event.columns.items():
            vendor, code = col.vendor_type, col.vendor_code
            if vendor is None or self._resolve(flavour, oracle, vendor)[0] != col.type:
                vendor, code = self._vendor_name(flavour, col.type), None
            if code is None:
                code = self._vendor_code(flavour, vendor)
            types[name] = vendor
            if code is not None:
                codes[name] = code
            renderers[name] = self._resolve(flavour, oracle, vendor)[1]
        return types, codes, renderers

    @staticmethod
    def _vendor_name(flavour: str, ltype: LogicalType) -> str:
        if ltype.name == "decimal":
            base = "decimal" if flavour == _MYSQL else "numeric"
            return f"{base}({ltype.precision},{ltype.scale or 0})" if ltype.precision else base
        if flavour == _MYSQL:
            return _MYSQL_NAMES.get(ltype.name, ("varchar", 12))[0]
        return _GAUSS_NAMES.get(ltype.name, "character varying")

    @staticmethod
    def _vendor_code(flavour: str, vendor: str) -> int | None:
        if flavour == _MYSQL:
            return _MYSQL_CODES.get(type_word(vendor), 1111)
        return _GAUSS_CODES.get(" ".join(vendor.lower().split()))

    def _render(self, value: Any, kind: str) -> str | None:
        """One typed value as the string DRS writes (``kind``: the column's rendering)."""
        text: str | None = render_value(value, kind, self._text)
        return text

    def _render_datetime(self, value: dt.datetime, kind: str) -> str:
        if kind == _EPOCH:
            return epoch_seconds_text(value)
        if value.tzinfo is None:
            return _datetime_text(value)
        if kind == _WITH_OFFSET:
            return _datetime_text(value) + _offset_text(value)
        # a zone-less column: wall time in the configured zone, else in the value's own zone
        zone = self.options.timezone
        return _datetime_text(value.astimezone(zone) if zone is not None else value)


class DrsJson(_DrsJsonBase):
    """Huawei Cloud DRS JSON (MySQL and GaussDB/PostgreSQL/Oracle/SQL Server flavours)."""

    id: ClassVar[str] = "drs-json"
    title: ClassVar[str] = "Huawei DRS JSON (DELETE row in old, MySQL TIMESTAMP as epoch seconds)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        truncate=False,
        tx_markers=False,
        heartbeats=False,
        before_detail="`old` (UPDATE, DELETE)",
        types_detail="mysqlType / columnType names + sqlType codes",
        position="`id` (monotonic serial number)",
        key_detail="`pkNames`",
        notes=("no TRUNCATE, markers or heartbeats",),
    )
    # JSON is the default variant: it takes the messages that cannot tell
    sniff_scores: ClassVar[tuple[float, float, float, float]] = (0.2, 0.97, 0.97, 0.3)


class DrsJsonC(_DrsJsonBase):
    """Huawei Cloud DRS JSON-C: DRS JSON with DELETE rows in ``data`` and text timestamps.

    One message proves JSON-C only through a DELETE whose row is in ``data`` or
    a MySQL TIMESTAMP written as ``yyyy-mm-dd hh:mm:ss``; any other message is
    the same in both variants and is detected as ``drs-json`` (configure
    ``drs-json-c`` explicitly for such a topic).
    """

    id: ClassVar[str] = "drs-json-c"
    title: ClassVar[str] = "Huawei DRS JSON-C (DELETE row in data, MySQL TIMESTAMP as text)"
    delete_in_data: ClassVar[bool] = True
    epoch_timestamps: ClassVar[bool] = False
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        truncate=False,
        tx_markers=False,
        heartbeats=False,
        before_detail="`old` (UPDATE, DELETE)",
        types_detail="mysqlType / columnType names + java.sql.Types codes",
        position="`id` (monotonic serial number)",
        key_detail="`pkNames`",
        notes=("TIMESTAMP WITH TIME ZONE arrives zone-less (UTC wall time)",),
    )
    # high only when the message proves JSON-C; 0.45 (below drs-json) when it cannot tell
    sniff_scores: ClassVar[tuple[float, float, float, float]] = (0.1, 0.1, 0.45, 0.97)
