"""Canal flat-message JSON: open-source Canal and the OceanBase OMS "Canal" serialization.

One message is a *flat message*: table metadata, an operation ``type`` and two
parallel arrays, ``data`` (rows after the change) and ``old`` (for ``UPDATE``:
the previous values of the CHANGED columns only; element ``i`` of ``old``
belongs to element ``i`` of ``data``). A message with several rows yields
several events. :class:`CanalFamily` holds the flow shared with Alibaba
DTS' variant (:mod:`anycdc.formats.dts_canal`) and Huawei DRS' JSON formats
(:mod:`anycdc.formats.drs`), which give hooks.

Rules this decoder follows (seeds 000-003, FORMATS.md section 4):

* ops: ``INSERT``/``UPDATE``/``DELETE``; ``INIT`` (full-load row, as in Flink's
  ``canal-data-with-init`` and DTS/DRS full phases) is a ``snapshot``;
  ``isDdl=true`` or ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/
  ``CINDEX``/``DINDEX``/``DDL``/``INIT_DDL`` is ``ddl`` and ``TRUNCATE`` is
  ``truncate``, both with ``sql`` as ``ddl``; ``GTID`` = begin, ``XACOMMIT``/
  ``XAROLLBACK`` = commit; ``MHEARTBEAT``/``HEARTBEAT`` and Huawei DataArts'
  ``"isHeartbeat": true`` are heartbeats.
* update images: ``after = data[i]``, ``before = {**data[i], **old[i]}`` (an
  explicit null in ``old`` wins). A missing ``old`` means no column changed
  (Canal drops empty ``old`` maps); when ``old`` and ``data`` differ in length
  the pairing is unknown and ``before`` is left ``None`` (never guessed).
* rows only in ``old`` with ``data`` null (DTS tasks created before 2022-03-20)
  are taken from ``old``: that placement is certain from the message alone.
* types: ``mysqlType`` names (with or without precision, ``ENUM('a','b')``,
  ``unsigned``) through :func:`anycdc.typemap.sql_type`; ``sqlType``
  (``java.sql.Types``) when the name says nothing (``POINT`` -> binary) or is
  wider (MySQL ``REAL`` sent with code 8 is a double). ``bit(1)`` is a boolean
  and ``bit(n)`` an unsigned integer, as Canal sends the bit value as a number;
  ``SERIAL`` is MySQL's ``BIGINT UNSIGNED``. Columns ``data`` has but the type
  maps lack are typed ``unknown``; listed columns a row lacks make it ``partial``.
* values: open-source Canal quotes every value; OMS writes numbers unquoted
  (big unsigned BIGINTs and decimals with hundreds of digits stay exact).
  A ``bigint`` value above the int64 maximum proves the column unsigned (OMS
  and DTS drop ``unsigned`` from ``mysqlType``): the column is ``uint64``.
  Timestamps written as epoch seconds (OMS ``TIMESTAMP``) or with a zone are
  instants: such a column is ``timestamptz`` in that message.
* binary (option ``binary``): Canal writes bytes as ISO-8859-1 text, OMS as
  base64 (and BIT as base64 bytes). ``auto`` picks base64 when the message has
  no ``id`` field (OMS writes none), ISO-8859-1 otherwise.
* ``es`` is ``ts_ms``; ``position`` is ``(id,)`` (Canal's batch id: rows of one
  message share it); without an ``id`` field (OMS) it is ``(es, ts)``: commit
  time, then write time. TiCDC (``enable-tidb-extension=true``) writes ``id`` 0 and
  ``_tidb.commitTs``, the transaction's TSO: the position is ``(commitTs,)``; its
  ``TIDB_WATERMARK`` messages are heartbeats at ``(watermarkTs,)``. A TiCDC message
  holding only the handle key (``_tidb.onlyHandleKey``) or a claim-check pointer
  (``_tidb.claimCheckLocation``) is an error: the row is not in it. ``gtid`` (a GTID set, not a transaction id) goes to
  ``extra``; ``ts`` (write time) is not kept.
* detection: see :func:`is_canal_shaped`, :func:`anycdc.formats.drs.drs_evidence`
  (Huawei DRS' fields and renderings, read by every Canal-shaped sniffer) and :func:`is_dts_certain`
  (the keys DTS leaves out).

>>> fmt = CanalJson()
>>> [e] = fmt.decode(b'{"data":[{"id":"1","price":"9.90"}],"database":"shop","es":1589373515000,'
...     b'"id":3,"isDdl":false,"mysqlType":{"id":"int(11)","price":"decimal(10,2)"},"old":null,'
...     b'"pkNames":["id"],"sql":"","sqlType":{"id":4,"price":3},"table":"orders",'
...     b'"ts":1589373515477,"type":"INSERT"}')
>>> e.op.value, e.table, e.key, dict(e.after), e.position
('insert', 'orders', ('id',), {'id': 1, 'price': Decimal('9.90')}, Position(parts=(3,)))
>>> fmt.decode(fmt.encode(e)[0]) == [e]
True
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from typing import Any, ClassVar, Final

import msgspec

from anycdc.errors import DecodeError, EncodeError, type_name
from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.formats.base import (
    JSON_DECODER,
    NAIVE_DATETIME,
    NULL_RAW,
    Cache,
    Capabilities,
    FastColumn,
    FastRows,
    Format,
    NotFast,
    PlanCache,
    convert_values,
    expect_object,
    lax_int,
    optional_int,
    optional_str,
)
from anycdc.formats.codecs.java import java_double, plain_decimal
from anycdc.formats.options import OptionSpec, choice
from anycdc.typemap import jdbc_type, sql_type
from anycdc.values import (
    BINARY,
    BOOLEAN,
    EPOCH_TEXT,
    FLOAT64,
    INT64,
    INTEGER_RANGES,
    TIMESTAMP,
    TIMESTAMPTZ,
    UINT64,
    UNKNOWN,
    LogicalType,
    epoch_seconds_text,
    format_time,
    parse_base64,
    parse_bool,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_epoch_seconds,
    parse_hex,
    parse_int,
    parse_time,
)

# --------------------------------------------------------------------------- wire strings
F_DATA: Final = "data"
F_OLD: Final = "old"
F_DATABASE: Final = "database"
F_TABLE: Final = "table"
F_TYPE: Final = "type"
F_IS_DDL: Final = "isDdl"
F_SQL: Final = "sql"
F_ES: Final = "es"
F_TS: Final = "ts"
F_ID: Final = "id"
F_GTID: Final = "gtid"
F_PK_NAMES: Final = "pkNames"
F_MYSQL_TYPE: Final = "mysqlType"
F_SQL_TYPE: Final = "sqlType"
# Huawei DataArts Studio writes Canal-JSON with these extra fields
F_IS_HEARTBEAT: Final = "isHeartbeat"
F_SERVER_ID: Final = "serverId"
F_DATA_SOURCE_NAME: Final = "dataSourceName"
# TiCDC writes Canal-JSON with ``enable-tidb-extension=true``: ``_tidb`` holds the
# transaction's TSO (``commitTs``; ``id`` is always 0), ``TIDB_WATERMARK`` messages a
# ``watermarkTs`` (every change before it was sent); a message too large for Kafka is
# sent with its handle key columns only (``onlyHandleKey``) or as a claim-check pointer
F_TIDB: Final = "_tidb"
TIDB_COMMIT_TS: Final = "commitTs"
TIDB_WATERMARK_TS: Final = "watermarkTs"
TIDB_ONLY_HANDLE_KEY: Final = "onlyHandleKey"
TIDB_CLAIM_CHECK: Final = "claimCheckLocation"

OP_INSERT: Final = "INSERT"
OP_UPDATE: Final = "UPDATE"
OP_DELETE: Final = "DELETE"
OP_INIT: Final = "INIT"
OP_CREATE: Final = "CREATE"
OP_ALTER: Final = "ALTER"
OP_ERASE: Final = "ERASE"
OP_QUERY: Final = "QUERY"
OP_RENAME: Final = "RENAME"
OP_CINDEX: Final = "CINDEX"
OP_DINDEX: Final = "DINDEX"
OP_TRUNCATE: Final = "TRUNCATE"
OP_DDL: Final = "DDL"
OP_INIT_DDL: Final = "INIT_DDL"
OP_GTID: Final = "GTID"
OP_XACOMMIT: Final = "XACOMMIT"
OP_XAROLLBACK: Final = "XAROLLBACK"
OP_MHEARTBEAT: Final = "MHEARTBEAT"
OP_HEARTBEAT: Final = "HEARTBEAT"
OP_TIDB_WATERMARK: Final = "TIDB_WATERMARK"

OPS: Final[Mapping[str, Op]] = {
    OP_INSERT: Op.INSERT, OP_UPDATE: Op.UPDATE, OP_DELETE: Op.DELETE, OP_INIT: Op.SNAPSHOT,
    OP_CREATE: Op.DDL, OP_ALTER: Op.DDL, OP_ERASE: Op.DDL, OP_QUERY: Op.DDL, OP_RENAME: Op.DDL,
    OP_CINDEX: Op.DDL, OP_DINDEX: Op.DDL, OP_DDL: Op.DDL, OP_INIT_DDL: Op.DDL,
    OP_TRUNCATE: Op.TRUNCATE, OP_GTID: Op.BEGIN, OP_XACOMMIT: Op.COMMIT, OP_XAROLLBACK: Op.COMMIT,
    OP_MHEARTBEAT: Op.HEARTBEAT, OP_HEARTBEAT: Op.HEARTBEAT, OP_TIDB_WATERMARK: Op.HEARTBEAT,
}  # fmt: skip
ROW_TYPES: Final = frozenset({OP_INSERT, OP_UPDATE, OP_DELETE, OP_INIT})
_ROW_OPS: Final = frozenset({Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT})
# enum members bound once: ``Op.X`` is a descriptor lookup on every use
_UPDATE: Final = Op.UPDATE
_DELETE: Final = Op.DELETE
_DDL: Final = Op.DDL
_TRUNCATE: Final = Op.TRUNCATE
_HEARTBEAT: Final = Op.HEARTBEAT

EXTRA_ROLLBACK: Final = "rollback"  # ``extra`` key of an XAROLLBACK commit event

OPT_BINARY: Final = "binary"
BINARY_AUTO: Final = "auto"
BINARY_LATIN1: Final = "latin1"
BINARY_BASE64: Final = "base64"
BINARY_HEX: Final = "hex"
BINARY_MODES: Final = (BINARY_AUTO, BINARY_LATIN1, BINARY_BASE64, BINARY_HEX)
BINARY_OPTION: Final = choice(
    OPT_BINARY,
    "how binary values are written: latin1 (open-source Canal: bytes as ISO-8859-1 text, "
    "BIT as a number), base64 (OceanBase OMS: bytes and BIT as base64), hex, or auto "
    "(base64 when the message has no 'id' field, as OMS writes none; latin1 otherwise)",
    BINARY_MODES,
    BINARY_AUTO,
)

_VALUE_ERRORS: Final = (ValueError, TypeError, OverflowError, ArithmeticError, UnicodeError)
_INT64_MAX: Final = 2**63 - 1
_UINT64_MAX: Final = 2**64 - 1
_ARGS: Final = re.compile(r"\(.*\)")
_PRECISION: Final = re.compile(r"\(\s*(\d+)")
_INT_RANK: Final = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "uint64": 4}


# --------------------------------------------------------------------------- types
@lru_cache(maxsize=4096)
def column_type(name: str | None, coded: LogicalType, bits_as_binary: bool) -> LogicalType:
    """The logical type of a column from its ``mysqlType`` name and ``sqlType`` type.

    The name wins (it carries precision, ``unsigned``, ``tinyint`` vs ``bit``);
    the code decides when the name maps to nothing and widens a ``float`` the
    code calls a double (MySQL ``REAL`` = ``DOUBLE``) or an integer the code
    calls wider (MySQL ``SERIAL`` is a ``BIGINT UNSIGNED``).

    >>> str(column_type("bigint(20) unsigned", INT64, False))
    'uint64'
    >>> str(column_type("POINT", BINARY, False)), str(column_type("REAL", FLOAT64, False))
    ('binary', 'float64')
    >>> str(column_type("bit(1)", BOOLEAN, False)), str(column_type("bit(8)", BOOLEAN, False))
    ('boolean', 'uint64')
    """
    if not name:
        return coded
    ltype = sql_type(name)
    base = name.split("(", 1)[0].strip().lower()
    if base == "bit":
        if bits_as_binary:
            return BINARY
        width = _PRECISION.search(name)
        return BOOLEAN if width is None or int(width.group(1)) <= 1 else UINT64
    if base == "serial":
        return UINT64  # MySQL: SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT
    if ltype is UNKNOWN and "(" in name:
        ltype = sql_type(_ARGS.sub("", name))  # ENUM('a','b'), SET(...), POINT(4326)
    if ltype is UNKNOWN:
        return coded
    if ltype.name == "float32" and coded.name == "float64":
        return FLOAT64
    if _INT_RANK.get(coded.name, -1) > _INT_RANK.get(ltype.name, 99):
        return coded  # MySQL SERIAL (= BIGINT UNSIGNED) is sent with code BIGINT
    return ltype


# --------------------------------------------------------------------------- value parsers
def _int_parser(ltype: LogicalType) -> Callable[[Any], int]:
    low, high = INTEGER_RANGES.get(ltype.name, (None, None))

    def parse(raw: Any) -> int:
        if type(raw) is str:
            try:
                value = int(raw)
            except ValueError:
                value = parse_int(raw)
        else:
            value = parse_int(raw)
        if low is not None and not low <= value <= high:  # type: ignore[operator]
            raise ValueError(f"{value} out of range for {ltype}")
        return value

    return parse


def _parse_float(raw: Any) -> float:
    if type(raw) is bool:
        raise ValueError("expected float, got boolean")
    return float(raw)


def _unsigned(typing: _Typing, name: str, value: Any) -> int:
    """A BIGINT value above the int64 maximum, which proves the column unsigned."""
    if typing.schema.columns[name].type is INT64:
        number = parse_int(value)
        if _INT64_MAX < number <= _UINT64_MAX:
            typing.unsigned.add(name)
            return number
    raise ValueError(f"not an unsigned BIGINT: {value!r}")


def _parse_text(raw: Any) -> str:
    if type(raw) is str:
        return raw
    if isinstance(raw, (dict, list)):
        raise ValueError(f"expected string, got {type_name(raw)}")
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


def _parse_json_text(raw: Any) -> str:
    return raw if type(raw) is str else dumps(raw)


def _parse_latin1(raw: Any) -> bytes:
    if type(raw) is not str:
        raise ValueError(f"expected ISO-8859-1 text, got {type_name(raw)}")
    return raw.encode("latin-1")


def _timestamp_parser(zone: dt.tzinfo | None) -> Callable[[Any], dt.datetime]:
    """``yyyy-MM-dd HH:mm:ss[.f]`` (zone-less: naive or ``zone``), with an offset or
    zone id (kept), or epoch seconds with a fraction (OMS ``TIMESTAMP``: aware UTC)."""
    fromiso = dt.datetime.fromisoformat

    def parse(raw: Any) -> dt.datetime:
        if type(raw) is str:
            if len(raw) >= 19 and raw[4] == "-" and raw[10] in " T":
                try:
                    value = fromiso(raw)
                except ValueError:
                    return parse_datetime(raw, zone)
                if zone is not None and value.tzinfo is None:
                    return value.replace(tzinfo=zone)
                return value
            if EPOCH_TEXT.fullmatch(raw):
                return parse_epoch_seconds(raw)
            return parse_datetime(raw, zone)
        if isinstance(raw, (int, Decimal)) and not isinstance(raw, bool):
            return parse_epoch_seconds(raw)
        raise ValueError(f"expected datetime, got {type_name(raw)}")

    return parse


_BINARY_PARSERS: Final[Mapping[str, Callable[[Any], bytes]]] = {
    BINARY_LATIN1: _parse_latin1,
    BINARY_BASE64: parse_base64,
    BINARY_HEX: parse_hex,
}
_SIMPLE_PARSERS: Final[Mapping[str, Callable[[Any], Any]]] = {
    "boolean": parse_bool,
    "decimal": parse_decimal,
    "float32": _parse_float,
    "float64": _parse_float,
    "string": _parse_text,
    "date": parse_date,
    "time": parse_time,
    "json": _parse_json_text,
}


# --------------------------------------------------------------------------- value rendering
# default vendor names/codes for events whose columns carry none (Canal's own choices)
DEFAULT_VENDOR: Final[Mapping[str, tuple[str, int]]] = {
    "boolean": ("boolean", 16), "int8": ("tinyint", -6), "int16": ("smallint", 5),
    "int32": ("int", 4), "int64": ("bigint", -5), "uint64": ("bigint unsigned", -5),
    "integer": ("decimal", 3), "decimal": ("decimal", 3), "float32": ("float", 7),
    "float64": ("double", 8), "string": ("varchar", 12), "binary": ("blob", 2004),
    "date": ("date", 91), "time": ("time", 92), "timestamp": ("datetime", 93),
    "timestamptz": ("timestamp with time zone", 2014), "json": ("json", 12),
}  # fmt: skip
_DDL_KEYWORDS: Final = (
    ("CREATE INDEX", OP_CINDEX), ("CREATE UNIQUE INDEX", OP_CINDEX), ("DROP INDEX", OP_DINDEX),
    ("CREATE", OP_CREATE), ("ALTER", OP_ALTER), ("DROP", OP_ERASE), ("RENAME", OP_RENAME),
)  # fmt: skip


# --------------------------------------------------------------------------- fast path
# ``decode`` first tries a fast path for the common message, a row change typed by
# ``mysqlType``/``sqlType``: msgspec decodes the envelope into a Struct that keeps the
# type maps and the row arrays as raw bytes; the type maps' bytes are the cache key
# of a plan whose :class:`~anycdc.formats.base.FastRows` decodes the rows (text
# values, keys checked against the schema) and types each row's non-text values in
# one msgspec call. Anything else (another field, a value the fast conversions
# refuse, a partial row, an untyped column, a type map that is not an object, ...)
# raises and the message goes through the reference decoder
# (:meth:`Format.decode_slow`), so the result is the same; tests compare the two on
# fuzzed messages (tests/unit/formats/test_fast_paths.py).


class _FlatMessage(msgspec.Struct, forbid_unknown_fields=True):
    """The fields of a flat message the fast path reads (any other field: slow path,
    so nothing in a message goes unread or unchecked by the fast path)."""

    # field names are the wire names
    type: Any = None
    data: msgspec.Raw = NULL_RAW
    old: msgspec.Raw = NULL_RAW
    database: Any = None
    table: Any = None
    es: Any = None
    ts: Any = None
    id: Any = msgspec.UNSET
    isDdl: Any = None
    isHeartbeat: Any = None
    gtid: Any = None
    sql: Any = None
    pkNames: list[str] | None = None
    mysqlType: msgspec.Raw = NULL_RAW
    sqlType: msgspec.Raw = NULL_RAW
    serverId: Any = None
    dataSourceName: Any = None
    tidb: Any = msgspec.field(default=None, name=F_TIDB)


# float_hook as :func:`anycdc.formats.base.parse_json`: the Any fields hold what it gives
_FLAT_DECODER: Final = msgspec.json.Decoder(_FlatMessage, float_hook=Decimal)
_ROW_KINDS: Final[Mapping[str, Op]] = {kind: OPS[kind] for kind in ROW_TYPES}
# text Canal writes for booleans, each mapped to what :func:`parse_bool` gives
_BOOL_TEXT: Final[Mapping[str, bool]] = {
    "1": True, "0": False, "true": True, "false": False, "True": True, "False": False,
    "TRUE": True, "FALSE": False,
}  # fmt: skip
_FROM_ISO: Final = dt.datetime.fromisoformat


def _naive_iso(raw: str) -> dt.datetime:
    """What :func:`_timestamp_parser` gives without a zone option, for the values it hands
    to ``fromisoformat`` (an aware result widens the column there: not here)."""
    if len(raw) > 18 and raw[4] == "-" and raw[10] in " T":
        value = _FROM_ISO(raw)
        if value.tzinfo is None:
            return value
    raise NotFast


def _checked_int(low: int, high: int) -> Callable[[str], int]:
    """``int(text)`` (the slow parser's first try) within a range (else: slow path)."""

    def parse(raw: str) -> int:
        value = int(raw)
        if low <= value <= high:
            return value
        raise NotFast

    return parse


@dataclass(frozen=True, slots=True)
class FlatPlan:
    """A schema and how the fast path types its rows."""

    schema: FlatSchema
    rows: FastRows  # decodes and types rows
    width: int  # columns of a whole row
    zoned: bool  # timestamps get the ``timezone`` option: widen columns as the slow path


# --------------------------------------------------------------------------- the shared logic
@dataclass(frozen=True, slots=True)
class FlatSchema:
    """What one message's ``mysqlType``/``sqlType`` say, prepared for fast row typing."""

    columns: dict[str, Column]
    parsers: dict[str, Callable[[Any], Any]]
    timestamps: tuple[str, ...]  # timestamp columns that may hold instants


@dataclass(slots=True)
class _Typing:
    """Per-message findings while typing rows (columns the values prove wider)."""

    schema: FlatSchema
    invalid: list[str]
    unsigned: set[str]
    untyped: dict[str, None]


def _fast_names(
    database: Any, table: Any, ts_ms: Any, serial: Any, is_ddl: Any
) -> tuple[str | None, str | None, int | None]:
    """The fast path's reading of the less common header values (as the slow path reads
    them), or NotFast for anything it leaves to the slow path."""
    if is_ddl is not False and is_ddl is not None:
        raise NotFast
    if not (type(serial) is int and serial >= 0) and serial is not None:
        raise NotFast  # no ``id`` (OMS: position from es/ts, base64 binary) and oddities
    if type(ts_ms) is not int and ts_ms is not None:
        raise NotFast
    out: list[str | None] = []
    for name in (database, table):
        if name is not None and type(name) is not str:
            raise NotFast
        out.append(name or None)  # "" is no name, as in the slow path
    return out[0], out[1], ts_ms


def cache_items(value: Any) -> Any:
    """A schema cache key of a type map: its items in order (the column order) with the
    type of each value (``4`` and ``4.0``, ``1`` and ``true`` compare equal but do not
    make the same schema), so a message's schema never depends on earlier messages."""
    if isinstance(value, dict):
        return tuple((name, type(item), item) for name, item in value.items())
    return (type(value), value)


# the :class:`ChangeEvent` fields every event of a message shares: database, schema,
# table, ts_ms, position, extra
Head = tuple[str | None, str | None, str | None, int | None, Position | None, dict[str, Any]]


@dataclass(slots=True)
class Envelope:
    """A message's header as a vendor reads it (:meth:`CanalFamily.envelope`)."""

    op: Op
    head: Head
    ddl: str | None = None  # the statement of a DDL/TRUNCATE event


# how the encoder renders one row of typed values as the vendor writes them
RowRender = Callable[[Mapping[str, Any]], dict[str, Any]]

# rows of ``data``/``old`` a vendor pairs (:meth:`CanalFamily.pair_rows`): the rows typed
# first, the rows giving the other image (None: there is none) and whether the first are
# the rows after the change
Pairing = tuple[list[Any] | None, list[Any] | None, bool]


class CanalFamily(Format):
    """The Canal flat-message flow, once, for every Canal-shaped vendor.

    The flow: the header (:meth:`envelope`), the row arrays (:meth:`row_arrays`),
    their pairing into images (:meth:`pair_rows`), the type maps (:meth:`schema`),
    typing every image and building the events with the key (the configured key wins:
    :meth:`Format.primary_key`), in :meth:`_row_events` and, on the fast path, in
    :meth:`_fast_events`. Vendors give hooks:

    * decoding: :meth:`envelope` (header field names, op names, position, extra),
      :meth:`row_arrays`, :meth:`pair_rows` (Canal's asks :meth:`legacy_layout`),
      :meth:`schema` (type-name source, timestamps), :meth:`code_type`,
      :meth:`build_fast_plan` and :meth:`decode_fast` (the vendor's envelope struct,
      then :meth:`_fast_events`); flags ``old_is_overlay``, ``widen_by_values``,
      ``invalid_per_row`` and ``schema_first``;
    * detection: :meth:`sniff` (Canal's: :func:`is_canal_shaped`, then :meth:`shape_score`);
    * encoding: :meth:`encode_header` (the vendor's fields and their order),
      :meth:`encode_types` (type maps and row rendering), :meth:`encode_rows` (which
      image goes to ``data``/``old``), :meth:`serialize`, :meth:`encode_es`,
      :meth:`default_vendor`, ``omit_nulls`` and ``ddl_type``.
    """

    omit_nulls: ClassVar[bool] = False  # DTS examples leave null fields out
    ddl_type: ClassVar[str | None] = None  # fixed ``type`` of DDL messages (DTS: "DDL")
    #: ``old`` holds changed columns laid over the other image (Canal); False: whole rows (DRS)
    old_is_overlay: ClassVar[bool] = True
    #: values widen columns: a BIGINT above int64 is uint64, an aware value makes a
    #: timestamp column timestamptz, a column the type maps lack is ``unknown`` (not DRS)
    widen_by_values: ClassVar[bool] = True
    #: invalid columns per event (DRS), not per message
    invalid_per_row: ClassVar[bool] = False
    #: the type maps and key are read before the rows (DRS: a bad map fails a rowless message)
    schema_first: ClassVar[bool] = False
    fast_path = True
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (BINARY_OPTION,)
    _SCHEMA_CACHE_SIZE: ClassVar[int] = 1024

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.binary_mode = self.option(BINARY_OPTION)
        self._schemas: Cache[Any, FlatSchema] = Cache(self._SCHEMA_CACHE_SIZE)
        self._parsers: dict[tuple[LogicalType, str], Callable[[Any], Any] | None] = {}
        # fast path: plans by the raw bytes of the type maps (and a vendor tag; a PlanCache)
        self._plans = PlanCache(self._SCHEMA_CACHE_SIZE)
        self._plain_layout = type(self).legacy_layout is CanalFamily.legacy_layout
        self._last_plan: tuple[msgspec.Raw, msgspec.Raw, Any, FlatPlan] | None = None

    # ------------------------------------------------------------------ hooks
    def code_type(self, code: int) -> LogicalType:
        """The logical type a ``sqlType`` code stands for (``java.sql.Types``)."""
        return jdbc_type(code)

    def legacy_layout(self, op: Op, data: list[Any] | None, old: list[Any] | None) -> bool:
        """True when ``old`` holds the rows after the change and ``data`` those before.

        Canal never does; a DML message with rows only in ``old`` is certainly laid
        out that way (DTS tasks created before 2022-03-20).
        """
        return not data and bool(old)

    def pair_rows(self, op: Op, data: list[Any] | None, old: list[Any] | None) -> Pairing:
        """Which rows are typed first, which give the other image, and whether the first
        are the rows after the change (Canal: :meth:`legacy_layout` decides)."""
        legacy = (
            (not data and bool(old)) if self._plain_layout else self.legacy_layout(op, data, old)
        )  # Canal's own rule inline (the hook is a method call per message)
        if op is not _UPDATE:
            return ((old or data) if legacy else (data or old)), None, op is not _DELETE
        if legacy and not data:
            return old, None, True  # rows after the change only: no before image
        return data, (old or []), not legacy or not data

    def row_arrays(self, msg: dict[str, Any]) -> tuple[list[Any] | None, list[Any] | None]:
        """``data`` and ``old``, checked (Canal: arrays of objects)."""
        fid = self.id
        return _rows(fid, msg, F_DATA), _rows(fid, msg, F_OLD)

    @classmethod
    def shape_score(cls, msg: dict[str, Any]) -> float:
        """Detection score of a message already known to be Canal-shaped."""
        raise NotImplementedError

    # ------------------------------------------------------------------ detection
    sniff_keys = frozenset({F_TYPE})  # every Canal-shaped message has a string ``type``

    @classmethod
    def sniff(cls, message: Any) -> float:
        try:
            if not is_canal_shaped(message):
                return 0.0
            return cls.shape_score(message)
        except Exception:  # a sniffer never raises
            return 0.0

    # ------------------------------------------------------------------ the family's flow
    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        msg = expect_object(self.id, obj, "$")
        env = self.envelope(msg)
        if env.op not in _ROW_OPS:
            database, schema, table, ts_ms, position, extra = env.head
            return [
                ChangeEvent(
                    op=env.op, format=self.id, database=database, schema=schema, table=table,
                    ts_ms=ts_ms, position=position, ddl=env.ddl, extra=extra,
                )
            ]  # fmt: skip
        return self._row_events(msg, env)

    def _row_events(self, msg: dict[str, Any], env: Envelope) -> list[ChangeEvent]:
        """The events of a row change: the slow path's one image-typing loop."""
        fid = self.id
        op = env.op
        schema: FlatSchema | None = None
        pk: list[str] | None = None
        if self.schema_first:
            schema, pk = self.schema(msg, env), _pk_names(fid, msg)
        data, old = self.row_arrays(msg)
        # ``main`` rows are typed once; the other image comes from ``overlay``: laid over
        # ``main`` (Canal's ``old`` holds changed columns only) or whole (DRS)
        main, overlay, main_is_after = self.pair_rows(op, data, old)
        if not main:
            return []
        if not self.schema_first:
            schema, pk = self.schema(msg, env), _pk_names(fid, msg)
        typing = _Typing(schema, [], set(), {}) if schema is not None else None
        typed = self._typed
        overlaid = self.old_is_overlay
        paired = overlay is not None and len(overlay) == len(main)
        row_invalid: list[tuple[str, ...]] | None = (
            [] if self.invalid_per_row and typing is not None else None
        )
        images: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
        for index, raw in enumerate(main):
            other: dict[str, Any] | None = None
            if overlay is None:
                image = typed(raw, typing)
            elif overlaid:
                image = typed(raw, typing)
                if not overlay:
                    other = image  # nothing changed: Canal drops empty ``old`` maps
                elif paired:
                    other = typed(overlay[index], typing, dict(image))
            else:  # a whole other image (its rows were paired by ``pair_rows``)
                other = typed(overlay[index], typing)
                image = typed(raw, typing)
            images.append((other, image) if main_is_after else (image, other))
            if row_invalid is not None and typing is not None:
                row_invalid.append(tuple(typing.invalid))
                typing.invalid.clear()
        if self.widen_by_values:
            columns, invalid = _finish(typing, images)
        else:
            columns, invalid = (schema.columns if schema is not None else None), ()
        key_names = self.primary_key(pk)  # the configured key wins (slow path)
        database, schema_name, table, ts_ms, position, extra = env.head
        return [
            ChangeEvent(
                op=op, format=fid, database=database, schema=schema_name, table=table,
                key=key_names, before=before, after=after, columns=columns, ts_ms=ts_ms,
                position=position, partial=_partial(typing, before, after),
                invalid=row_invalid[index] if row_invalid is not None else invalid, extra=extra,
            )
            for index, (before, after) in enumerate(images)
        ]  # fmt: skip

    def _fast_plan(self, names: msgspec.Raw, codes: msgspec.Raw, tag: Any) -> FlatPlan:
        """The plan of a schema, by the raw bytes of its type maps (and a vendor ``tag``)."""
        cache_key = (bytes(names), bytes(codes), tag)
        plan: FlatPlan = self._plans.plan(
            cache_key,
            lambda: self.build_fast_plan(
                JSON_DECODER.decode(cache_key[0]), JSON_DECODER.decode(cache_key[1]), tag
            ),
        )
        self._last_plan = (names.copy(), codes.copy(), tag, plan)  # copies: not the message
        return plan

    def _fast_events(
        self,
        op: Op,
        names: msgspec.Raw,
        codes: msgspec.Raw,
        tag: Any,
        data_raw: msgspec.Raw,
        old_raw: msgspec.Raw,
        pk: list[str] | None,
        head: Head,
    ) -> list[ChangeEvent]:
        """The fast path's rows: paired as the slow path pairs them, typed by the plan of
        the type maps ``names``/``codes`` (and a vendor ``tag``)."""
        last = self._last_plan
        # consecutive messages of a topic mostly share their table: compare, no hashing
        if last is not None and last[0] == names and last[1] == codes and last[2] == tag:
            plan = last[3]
        else:
            plan = self._fast_plan(names, codes, tag)
        rows = plan.rows
        data = rows.decode(data_raw)
        old = None if old_raw == NULL_RAW else rows.decode(old_raw)
        main, overlay, main_is_after = self.pair_rows(op, data, old)
        if not main:
            return []
        width = plan.width
        type_row = rows.type_row
        columns: dict[str, Column] | None = plan.schema.columns
        key_names = self.primary_key(pk)  # the configured key wins (fast path)
        fid = self.id
        database, schema, table, ts_ms, position, extra = head
        events: list[ChangeEvent] = []
        for index, row in enumerate(main):
            if len(row) != width:
                raise NotFast  # a partial row (its keys are the schema's: FastRows checks)
            other: dict[str, Any] | None = None
            if overlay is None:
                image = type_row(row)
            elif self.old_is_overlay:
                image = type_row(row)
                if not overlay:
                    other = image  # nothing changed: Canal drops empty ``old`` maps
                elif len(overlay) == len(main):
                    other = rows.type_into(overlay[index], dict(image))
            else:
                whole = overlay[index]
                if len(whole) != width:
                    raise NotFast
                other = type_row(whole)
                image = type_row(row)
            before, after = (other, image) if main_is_after else (image, other)
            events.append(
                ChangeEvent(
                    op=op, format=fid, database=database, schema=schema, table=table,
                    key=key_names, before=before, after=after, columns=columns, ts_ms=ts_ms,
                    position=position, extra=extra,
                )
            )  # fmt: skip
        if plan.zoned:  # aware values make timestamp columns timestamptz, as in the slow path
            typing = _Typing(plan.schema, [], set(), {})
            columns, _ = _finish(typing, [(event.before, event.after) for event in events])
            events = [msgspec.structs.replace(event, columns=columns) for event in events]
        return events

    # ------------------------------------------------------------------ canal's hooks
    def decode_fast(self, value: bytes) -> list[ChangeEvent]:
        """The common row change, or a fast-path refusal (then :meth:`decode_slow` decides)."""
        flat = _FLAT_DECODER.decode(value)
        try:
            op = _ROW_KINDS[flat.type]
        except (KeyError, TypeError):
            raise NotFast from None  # not a row change (or not a string)
        database, table, ts_ms, serial, is_ddl = (
            flat.database, flat.table, flat.es, flat.id, flat.isDdl
        )  # fmt: skip
        # the common shape in one test; the rest one by one (as the slow path reads them)
        if not (
            type(database) is str and database and type(table) is str and table
            and type(ts_ms) is int and type(serial) is int and serial >= 0 and is_ddl is False
        ):  # fmt: skip
            database, table, ts_ms = _fast_names(database, table, ts_ms, serial, is_ddl)
        if flat.isHeartbeat is True:
            raise NotFast
        position = Position((serial,)) if serial is not None else None
        tidb = flat.tidb
        if tidb is not None:  # TiCDC: the commit TSO, nothing else (else: the slow path)
            if type(tidb) is not dict or len(tidb) != 1:
                raise NotFast
            commit_ts = tidb.get(TIDB_COMMIT_TS)
            if type(commit_ts) is not int or commit_ts < 0:
                raise NotFast
            position = Position((commit_ts,))
        gtid = flat.gtid
        extra: dict[str, Any] = {F_GTID: gtid} if gtid and isinstance(gtid, str) else {}
        return self._fast_events(
            op, flat.mysqlType, flat.sqlType, None, flat.data, flat.old, flat.pkNames,
            (database, None, table, ts_ms, position, extra),
        )  # fmt: skip

    def build_fast_plan(self, names: Any, codes: Any, tag: Any) -> FlatPlan:
        """How the fast path types the rows of one schema (its type maps, decoded)."""
        if names is None and codes is None:
            raise NotFast  # untyped rows: rare, the slow path copies them as sent
        mode = self.binary_mode if self.binary_mode != BINARY_AUTO else BINARY_LATIN1
        schema = self._build_schema(names, codes, mode)  # DecodeError: the slow path reports it
        zone = self.options.timezone
        columns = {
            name: self._fast_column(col.type, mode, zone) for name, col in schema.columns.items()
        }
        zoned = zone is not None and bool(schema.timestamps)
        return FlatPlan(schema, FastRows(columns), len(columns), zoned)

    def _fast_column(self, ltype: LogicalType, mode: str, zone: dt.tzinfo | None) -> FastColumn:
        """How the fast path types a column's text: as the slow parser (:meth:`_parser`)
        does for every text the fast way accepts (see :class:`FastRows`)."""
        name = ltype.name
        if name in INTEGER_RANGES:
            # ``int(text)`` is the slow parser's first try; out of range: slow path (a
            # BIGINT above the int64 maximum makes the column unsigned there)
            low, high = INTEGER_RANGES[name]
            return FastColumn(_checked_int(low, high), lax_int(low, high))
        if name == "integer":
            return FastColumn(int, lax_int())
        if name == "boolean":
            # msgspec takes "true"/"false"/"1"/"0" in any case: as parse_bool
            return FastColumn(_BOOL_TEXT.__getitem__, bool)
        if name == "decimal":
            return FastColumn(Decimal, Decimal)  # Decimal strips whitespace as str.strip()
        if name in ("float32", "float64"):
            return FastColumn(float)
        if name == "date":
            return FastColumn(dt.date.fromisoformat, dt.date)  # both refuse whitespace
        if name == "timestamp" and zone is None:
            return FastColumn(_naive_iso, NAIVE_DATETIME, iso=True)
        parser = self._parser(ltype, mode)
        if parser is None or parser is _parse_text or parser is _parse_json_text:
            return FastColumn()  # text columns keep the text (untyped ones too)
        return FastColumn(parser)  # the slow parser itself (binary, time, zoned timestamps)

    def envelope(self, msg: dict[str, Any]) -> Envelope:
        """The header: Canal's field names, op names, position and ``extra``."""
        fid = self.id
        tidb = msg.get(F_TIDB)
        if isinstance(tidb, dict) and TIDB_CLAIM_CHECK in tidb:
            raise DecodeError(
                fid,
                "$._tidb.claimCheckLocation",
                f"a TiCDC claim-check message: the change is stored at "
                f"{str(tidb[TIDB_CLAIM_CHECK])[:200]!r}, not in the message",
            )
        kind = msg.get(F_TYPE)
        if not isinstance(kind, str):
            if F_TYPE not in msg:
                raise DecodeError(fid, "$", f"missing required field {F_TYPE!r}")
            raise DecodeError(fid, "$.type", f"expected string, got {type_name(kind)}")
        op = OPS.get(kind)
        if op is None:
            raise DecodeError(fid, "$.type", f"unknown op {kind!r}")
        # fast paths for the common, well-typed fields; the helpers check the rest
        is_ddl = msg.get(F_IS_DDL)
        if is_ddl is True or (is_ddl is not False and _flag(fid, msg, F_IS_DDL)):
            op = op if op is _TRUNCATE else _DDL
        if msg.get(F_IS_HEARTBEAT) is True:
            op = _HEARTBEAT
        database = msg.get(F_DATABASE)
        if type(database) is not str or not database:
            database = _name(fid, msg, F_DATABASE)
        table = msg.get(F_TABLE)
        if type(table) is not str or not table:
            table = _name(fid, msg, F_TABLE)
        ts_ms = msg.get(F_ES)
        if type(ts_ms) is not int:
            ts_ms = optional_int(fid, ts_ms, "$.es")
        serial = msg.get(F_ID)
        if tidb is not None:
            position = self._tidb_position(tidb)
        elif type(serial) is int and serial >= 0:
            position = Position((serial,))
        else:
            position = self._position(msg)
        gtid = msg.get(F_GTID)
        extra: dict[str, Any] = {F_GTID: gtid} if gtid and isinstance(gtid, str) else {}
        if kind == OP_XAROLLBACK:
            extra[EXTRA_ROLLBACK] = True  # an XA transaction rolled back: a boundary, no rows
        head = (database, None, table, ts_ms, position, extra)
        if op in _ROW_OPS:
            return Envelope(op, head)
        sql = optional_str(fid, msg.get(F_SQL), "$.sql")
        return Envelope(op, head, sql if op is _DDL or op is _TRUNCATE else None)

    def _position(self, msg: dict[str, Any]) -> Position | None:
        fid = self.id
        if F_ID in msg:
            serial = optional_int(fid, msg[F_ID], "$.id")
            if serial is None:
                return None
            if serial < 0:
                raise DecodeError(fid, "$.id", f"expected non-negative integer, got {serial}")
            return Position((serial,))
        # no serial number (OMS): commit time, then the time the message was written
        parts = []
        for field in (F_ES, F_TS):
            value = optional_int(fid, msg.get(field), f"$.{field}")
            if value is not None and value >= 0:
                parts.append(value)
        return Position(tuple(parts)) if parts else None

    def _tidb_position(self, tidb: Any) -> Position | None:
        """TiCDC's extension: the transaction's ``commitTs`` (a watermark's ``watermarkTs``)."""
        fid = self.id
        if not isinstance(tidb, dict):
            raise DecodeError(fid, "$._tidb", f"expected object, got {type_name(tidb)}")
        if tidb.get(TIDB_ONLY_HANDLE_KEY) is True:
            raise DecodeError(
                fid,
                "$._tidb.onlyHandleKey",
                "TiCDC sent only the handle key columns (the message was too large; "
                "large-message-handle-option=handle-key-only): the row must be read from "
                "TiDB, it is not in the message",
            )
        for field in (TIDB_COMMIT_TS, TIDB_WATERMARK_TS):
            if field in tidb:
                ts = optional_int(fid, tidb[field], f"$._tidb.{field}")
                if ts is not None and ts < 0:
                    raise DecodeError(fid, f"$._tidb.{field}", f"expected a TSO, got {ts}")
                return Position((ts,)) if ts is not None else None
        return None

    def _binary_mode(self, msg: Mapping[str, Any]) -> str:
        if self.binary_mode != BINARY_AUTO:
            return self.binary_mode
        return BINARY_LATIN1 if F_ID in msg else BINARY_BASE64

    def schema(self, msg: dict[str, Any], env: Envelope) -> FlatSchema | None:
        """The columns and parsers the type maps give (Canal: ``mysqlType``/``sqlType``)."""
        names = msg.get(F_MYSQL_TYPE)
        codes = msg.get(F_SQL_TYPE)
        if names is None and codes is None:
            return None
        mode = self._binary_mode(msg)
        try:
            cache_key: Any = (cache_items(names), cache_items(codes), mode)
            cached = self._schemas.get(cache_key)
        except TypeError:  # unhashable junk inside: build (and fail) without the cache
            cache_key, cached = None, None
        if cached is None:
            cached = self._build_schema(names, codes, mode)
            if cache_key is not None:
                self._schemas.put(cache_key, cached)
        return cached

    def _build_schema(self, names: Any, codes: Any, mode: str) -> FlatSchema:
        fid = self.id
        if names is not None and not isinstance(names, dict):
            raise DecodeError(fid, "$.mysqlType", f"expected object, got {type_name(names)}")
        if codes is not None and not isinstance(codes, dict):
            raise DecodeError(fid, "$.sqlType", f"expected object, got {type_name(codes)}")
        code_of: dict[str, int | None] = {}
        for col, code in (codes or {}).items():
            if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
                reason = f"expected integer, got {type_name(code)}"
                raise DecodeError(fid, f"$.sqlType.{col}", reason)
            code_of[col] = code
        # columns in ``mysqlType`` order; ``sqlType`` alone when there are no names
        vendor_names: dict[str, str | None] = dict.fromkeys(code_of)
        if names is not None:
            vendor_names = {}
            for col, name in names.items():
                if name is not None and not isinstance(name, str):
                    reason = f"expected string, got {type_name(name)}"
                    raise DecodeError(fid, f"$.mysqlType.{col}", reason)
                vendor_names[col] = name
        columns: dict[str, Column] = {}
        parsers: dict[str, Callable[[Any], Any]] = {}
        timestamps = []
        for col, name in vendor_names.items():
            code = code_of.get(col)
            coded = self.code_type(code) if code is not None else UNKNOWN
            ltype = column_type(name, coded, mode == BINARY_BASE64)
            columns[col] = Column(ltype, name, code)
            parser = self._parser(ltype, mode)
            if parser is not None:
                parsers[col] = parser
            if ltype is TIMESTAMP:
                timestamps.append(col)
        return FlatSchema(columns, parsers, tuple(timestamps))

    def _parser(self, ltype: LogicalType, mode: str) -> Callable[[Any], Any] | None:
        cache_key = (ltype, mode)
        if cache_key in self._parsers:
            return self._parsers[cache_key]
        name = ltype.name
        parser: Callable[[Any], Any] | None
        if name in INTEGER_RANGES or name == "integer":
            parser = _int_parser(ltype)
        elif name == "binary":
            parser = _BINARY_PARSERS[mode]
        elif name in ("timestamp", "timestamptz"):
            parser = _timestamp_parser(self.options.timezone)
        else:
            parser = _SIMPLE_PARSERS.get(name)
        self._parsers[cache_key] = parser
        return parser

    def _typed(
        self, raw: dict[str, Any], typing: _Typing | None, out: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Type one raw row (into ``out`` when given: an overlay on another image)."""
        if typing is None:
            if out is None:
                return dict(raw)
            out.update(raw)
            return out
        if not self.widen_by_values:
            return convert_values(raw, typing.schema.parsers, typing.invalid, out)
        out = convert_values(
            raw, typing.schema.parsers, typing.invalid, out, partial(_unsigned, typing)
        )
        columns = typing.schema.columns
        if not raw.keys() <= columns.keys():
            for name in raw:
                if name not in columns:
                    typing.untyped[name] = None
        return out

    # ------------------------------------------------------------------ encoding
    def encode(self, event: ChangeEvent) -> list[bytes]:
        """One flat message per event, as the vendor writes it: the header in the vendor's
        field order (:meth:`encode_header`), then for a row change the type maps
        (:meth:`encode_types`) and the rows they render (:meth:`encode_rows`), written by
        :meth:`serialize`."""
        msg = self.encode_header(event)
        if msg is None:
            return []
        if event.op in _ROW_OPS:
            self.encode_rows(event, msg, self.encode_types(event, msg))
        return [self.serialize(msg)]

    def encode_header(self, event: ChangeEvent) -> dict[str, Any] | None:
        """The message without type maps and rows (their fields ``None`` where the vendor
        places them), or ``None`` when the vendor writes no message for the event."""
        if event.patch is not None or event.split is not None:
            raise EncodeError(self.id, "Canal messages carry whole rows only (no split/patch)")
        position = event.position
        msg: dict[str, Any] = {F_DATA: None, F_DATABASE: event.database}
        msg[F_ES] = self.encode_es(event.ts_ms)
        gtid = event.extra.get(F_GTID)
        if gtid is not None:
            msg[F_GTID] = gtid
        if position is None:
            msg[F_ID] = None
        elif len(position.parts) == 1:
            msg[F_ID] = position.parts[0]
        elif len(position.parts) == 2 and event.ts_ms == position.parts[0]:
            # OMS: no serial number (so binary in base64, as OMS writes it); ordered by (es, ts)
            msg[F_ES] = position.parts[0]
        else:
            raise EncodeError(self.id, f"position {position} has no Canal form")
        op = event.op
        msg[F_IS_DDL] = op in (Op.DDL, Op.TRUNCATE)
        msg[F_MYSQL_TYPE] = None
        msg[F_OLD] = None
        msg[F_PK_NAMES] = list(event.key) if event.key else None
        msg[F_SQL] = event.ddl if event.ddl is not None else ("" if op in _ROW_OPS else None)
        msg[F_SQL_TYPE] = None
        msg[F_TABLE] = event.table
        msg[F_TS] = (
            position.parts[1] if position is not None and len(position.parts) == 2 else event.ts_ms
        )
        msg[F_TYPE] = self._encode_type(event)
        return msg

    def encode_types(self, event: ChangeEvent, msg: dict[str, Any]) -> RowRender:
        """Fill the type maps of a row change from its columns (Canal: ``mysqlType``/
        ``sqlType``) and return how a row is rendered (binary as the header implies)."""
        columns = event.columns
        if columns is not None:
            msg[F_MYSQL_TYPE], msg[F_SQL_TYPE] = self._encode_types(columns)
        mode = self._binary_mode(msg)
        return lambda row: self._render_row(row, event, mode)

    def serialize(self, msg: dict[str, Any]) -> bytes:
        """The message's bytes (DTS leaves null fields out)."""
        if self.omit_nulls:
            msg = {k: v for k, v in msg.items() if v is not None}
        return dumps(msg).encode("utf-8")

    def encode_es(self, ts_ms: int | None) -> int | None:
        """``es`` from the event time (Canal: milliseconds as they are)."""
        return ts_ms

    def encode_rows(self, event: ChangeEvent, msg: dict[str, Any], render: RowRender) -> None:
        """Fill ``data``/``old``: Canal puts the row in ``data`` and, for updates, the
        previous values of the changed columns in ``old``."""
        if event.op is Op.UPDATE:
            after = render(event.after or {})
            msg[F_DATA] = [after]
            if event.before is not None:
                before = render(event.before)
                changed = {k: v for k, v in before.items() if k not in after or after[k] != v}
                msg[F_OLD] = [changed] if changed else None
        else:
            row = event.before if event.op is Op.DELETE else event.after
            msg[F_DATA] = [render(row or {})]

    def _encode_type(self, event: ChangeEvent) -> str:
        op = event.op
        if op is Op.DDL:
            return self.ddl_type or _ddl_type_of(event.ddl)
        if op is Op.COMMIT and event.extra.get(EXTRA_ROLLBACK):
            return OP_XAROLLBACK
        return _ENCODE_OPS[op]

    def _encode_types(
        self, columns: Mapping[str, Column]
    ) -> tuple[dict[str, str] | None, dict[str, int] | None]:
        """``mysqlType``/``sqlType`` maps: what the columns carry, defaults where they carry
        nothing at all (so a decoded message encodes back to the same maps)."""
        names: dict[str, str] = {}
        codes: dict[str, int] = {}
        for col, spec in columns.items():
            name, code = spec.vendor_type, spec.vendor_code
            if name is None and code is None:
                name, code = self.default_vendor(spec.type) or (None, None)
            if name is not None:
                names[col] = name
            if code is not None:
                codes[col] = code
        return names or None, codes or None

    def default_vendor(self, ltype: LogicalType) -> tuple[str, int] | None:
        """``mysqlType`` name and ``sqlType`` code written for a column that has none."""
        default = DEFAULT_VENDOR.get(ltype.name)
        if default is not None and ltype.name == "decimal" and ltype.precision is not None:
            return (f"decimal({ltype.precision},{ltype.scale or 0})", default[1])
        return default

    def _render_row(self, row: Mapping[str, Any], event: ChangeEvent, mode: str) -> dict[str, Any]:
        columns = event.columns or {}
        invalid = event.invalid
        out: dict[str, Any] = {}
        for name, value in row.items():
            col = columns.get(name)
            if value is None or col is None or name in invalid or col.type is UNKNOWN:
                out[name] = (
                    value if not isinstance(value, bytes) else render_value(value, BINARY, mode)
                )
            else:
                out[name] = render_value(value, col.type, mode)
        return out


def render_value(value: Any, ltype: LogicalType, mode: str) -> Any:
    """A typed value as open-source Canal writes it: text (binary per ``mode``)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return plain_decimal(value)
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        if mode == BINARY_BASE64:
            return base64.b64encode(data).decode("ascii")
        if mode == BINARY_HEX:
            return binascii.hexlify(data).decode("ascii")
        return data.decode("latin-1")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return epoch_seconds_text(value)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return format_time(value)
    return dumps(value) if ltype.name == "json" else value


_ENCODE_OPS: Final[Mapping[Op, str]] = {
    Op.INSERT: OP_INSERT, Op.UPDATE: OP_UPDATE, Op.DELETE: OP_DELETE, Op.SNAPSHOT: OP_INIT,
    Op.TRUNCATE: OP_TRUNCATE, Op.BEGIN: OP_GTID, Op.COMMIT: OP_XACOMMIT,
    Op.HEARTBEAT: OP_MHEARTBEAT,
}  # fmt: skip


def _ddl_type_of(sql: str | None) -> str:
    text = " ".join((sql or "").upper().split())
    for prefix, kind in _DDL_KEYWORDS:
        if text.startswith(prefix):
            return kind
    return OP_QUERY


# --------------------------------------------------------------------------- field helpers
def _flag(fid: str, msg: Mapping[str, Any], field: str) -> bool:
    value = msg.get(field)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        try:
            return parse_bool(value)
        except ValueError:
            pass
    raise DecodeError(fid, f"$.{field}", f"expected boolean, got {type_name(value)}")


def _name(fid: str, msg: Mapping[str, Any], field: str) -> str | None:
    value = optional_str(fid, msg.get(field), f"$.{field}")
    return value if value else None


def _rows(fid: str, msg: Mapping[str, Any], field: str) -> list[dict[str, Any]] | None:
    rows = msg.get(field)
    if rows is None:
        return None
    if not isinstance(rows, list):
        raise DecodeError(fid, f"$.{field}", f"expected array, got {type_name(rows)}")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DecodeError(fid, f"$.{field}[{index}]", f"expected object, got {type_name(row)}")
    return rows


def _pk_names(fid: str, msg: Mapping[str, Any]) -> list[str] | None:
    names = msg.get(F_PK_NAMES)
    if names is None:
        return None
    if not isinstance(names, list):
        raise DecodeError(fid, "$.pkNames", f"expected array, got {type_name(names)}")
    for index, name in enumerate(names):
        if not isinstance(name, str):
            raise DecodeError(fid, f"$.pkNames[{index}]", f"expected string, got {type_name(name)}")
    return names


def _finish(
    typing: _Typing | None,
    images: Sequence[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
) -> tuple[dict[str, Column] | None, tuple[str, ...]]:
    """The message's columns, widened where its values proved it, and the invalid ones.

    A ``bigint`` value above the int64 maximum makes the column ``uint64``; an
    aware value (epoch seconds, an offset or a zone id) in a zone-less timestamp
    column makes it ``timestamptz``.
    """
    if typing is None:
        return None, ()
    wider: dict[str, LogicalType] = dict.fromkeys(typing.unsigned, UINT64)
    for name in typing.schema.timestamps:
        for pair in images:
            if _aware(pair[0], name) or _aware(pair[1], name):
                wider[name] = TIMESTAMPTZ
                break
    if not wider and not typing.untyped:
        return typing.schema.columns, tuple(typing.invalid)
    return _with_types(typing.schema.columns, wider, typing.untyped), tuple(typing.invalid)


def _aware(image: Mapping[str, Any] | None, name: str) -> bool:
    value = image.get(name) if image is not None else None
    return isinstance(value, dt.datetime) and value.tzinfo is not None


def _with_types(
    columns: dict[str, Column], wider: Mapping[str, LogicalType], untyped: Mapping[str, None]
) -> dict[str, Column]:
    if not wider and not untyped:
        return columns
    out = {
        name: (Column(wider[name], col.vendor_type, col.vendor_code) if name in wider else col)
        for name, col in columns.items()
    }
    for name in untyped:
        out[name] = Column(UNKNOWN)
    return out


def _partial(
    typing: _Typing | None, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Images that lack columns the message's ``mysqlType`` lists."""
    if typing is None:
        return ()
    columns = typing.schema.columns.keys()
    out = []
    if before is not None and not columns <= before.keys():
        out.append("before")
    if after is not None and not columns <= after.keys():
        out.append("after")
    return tuple(out)


# --------------------------------------------------------------------------- detection
_SHAPE_FIELDS: Final = (F_DATA, F_OLD, F_IS_DDL, F_MYSQL_TYPE, F_SQL_TYPE, F_PK_NAMES)
_DATAARTS_FIELDS: Final = (F_SERVER_ID, F_DATA_SOURCE_NAME, F_IS_HEARTBEAT)
_FIRST_WORD: Final = re.compile(r"[\s(\[]")
_DML_DTS_FIELDS: Final = (F_DATABASE, F_TABLE, F_ES, F_ID, F_TS)


def type_word(name: str) -> str:
    """The first word of a vendor type name, lower case (``varbinary(16)`` -> ``varbinary``)."""
    return _FIRST_WORD.split(name.strip().lower(), maxsplit=1)[0]


def is_canal_shaped(msg: Any) -> bool:
    """A Canal-like flat message: a known ``type``, row arrays (or none) and Canal fields."""
    if not isinstance(msg, dict):
        return False
    kind = msg.get(F_TYPE)
    if not isinstance(kind, str) or kind not in OPS:
        return False
    for field in (F_DATA, F_OLD):
        rows = msg.get(field)
        if rows is not None and not isinstance(rows, list):
            return False  # Maxwell / SharePlex put one object here
    return any(field in msg for field in _SHAPE_FIELDS)


def is_dts_certain(msg: dict[str, Any]) -> bool:
    """Only Alibaba DTS writes these (seed 001 examples), open-source Canal never does:

    * a DML message with DTS' header fields (``database``/``table``/``es``/``id``/
      ``ts``) but without the ``data`` or the ``old`` key (Canal always writes
      both, null when empty);
    * a DDL message without any of ``mysqlType``/``sqlType``/``pkNames``/``data``/
      ``old`` (Canal writes them as null).
    """
    if not all(field in msg for field in _DML_DTS_FIELDS):
        return False
    if msg.get(F_IS_DDL) is True:
        return not any(f in msg for f in (F_MYSQL_TYPE, F_SQL_TYPE, F_PK_NAMES, F_DATA, F_OLD))
    return msg.get(F_TYPE) in ROW_TYPES and (F_DATA not in msg or F_OLD not in msg)


# --------------------------------------------------------------------------- canal-json
class CanalJson(CanalFamily):
    """Open-source Canal flat message (also OceanBase OMS', Huawei DataArts' and TiCDC's)."""

    id = "canal-json"
    vendor = "Alibaba Canal / OceanBase OMS"
    title = "Canal flat message JSON (open-source Canal, OMS Canal serialization)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.CHANGED,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        before_detail="`old`, merged over `data`",
        types_detail="mysqlType names + java.sql.Types codes",
        position="`id` (OMS: es, ts; TiCDC: `_tidb.commitTs`)",
        key_detail="`pkNames`",
        notes=(
            "BOOLEAN carried as tinyint(1) 0/1",
            "TIMESTAMP WITH TIME ZONE carried as MySQL TIMESTAMP text without a zone (UTC wall time)",
        ),
    )

    @classmethod
    def shape_score(cls, msg: dict[str, Any]) -> float:
        # DRS' rule lives with DRS, whose module builds on this one: imported on first use
        from anycdc.formats.drs import DRS_LIKE, drs_evidence

        if drs_evidence(msg)[0] >= DRS_LIKE:
            return 0.2
        if is_dts_certain(msg):
            return 0.4
        if any(field in msg for field in _DATAARTS_FIELDS):
            return 0.9
        score = 0.6
        if F_MYSQL_TYPE in msg or F_SQL_TYPE in msg:
            score += 0.1
        if F_IS_DDL in msg:
            score += 0.1
        if F_ES in msg or F_TS in msg:
            score += 0.05
        return score
