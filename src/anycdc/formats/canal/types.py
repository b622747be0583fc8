"""Canal's column types and values: type names and codes to logical types, the value
parsers of the reference decoder, and how the encoder renders values."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final

from anycdc.errors import type_name
from anycdc.event import Column, dumps
from anycdc.formats.canal.wire import (
    ARGS,
    BINARY_BASE64,
    BINARY_HEX,
    BINARY_LATIN1,
    INT64_MAX,
    INT_RANK,
    OP_ALTER,
    OP_CINDEX,
    OP_CREATE,
    OP_DINDEX,
    OP_ERASE,
    OP_QUERY,
    OP_RENAME,
    PRECISION,
    UINT64_MAX,
)
from anycdc.formats.codecs.java import java_double, plain_decimal
from anycdc.formats.codecs.text import ValueText
from anycdc.formats.codecs.text import render_value as render_text
from anycdc.typemap import sql_type, unsigned_range
from anycdc.values import (
    BINARY,
    BOOLEAN,
    EPOCH_TEXT,
    FLOAT64,
    INT64,
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
        width = PRECISION.search(name)
        return BOOLEAN if width is None or int(width.group(1)) <= 1 else UINT64
    if base == "serial":
        return UINT64  # MySQL: SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT
    if ltype is UNKNOWN and "(" in name:
        ltype = sql_type(ARGS.sub("", name))  # ENUM('a','b'), SET(...), POINT(4326)
    if ltype is UNKNOWN:
        return coded
    if ltype.name == "float32" and coded.name == "float64":
        return FLOAT64
    if INT_RANK.get(coded.name, -1) > INT_RANK.get(ltype.name, 99):
        return coded  # MySQL SERIAL (= BIGINT UNSIGNED) is sent with code BIGINT
    return ltype


# --------------------------------------------------------------------------- value parsers
def int_parser(ltype: LogicalType, bounds: tuple[int, int] | None) -> Callable[[Any], int]:
    """Canal's integer text, held to ``bounds`` (the column's
    :func:`~anycdc.typemap.integer_range`; None: unbounded)."""
    low, high = bounds if bounds is not None else (None, None)

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


def unsigned_bigint(typing: RowTyping, name: str, value: Any) -> int:
    """A BIGINT value above the int64 maximum, which proves the column unsigned (a
    column its type name calls unsigned already has its range: ``int unsigned`` is
    ``int64`` too, and such a value is invalid there)."""
    column = typing.schema.columns[name]
    if column.type is INT64 and unsigned_range(column.vendor_type) is None:
        number = parse_int(value)
        if INT64_MAX < number <= UINT64_MAX:
            typing.unsigned.add(name)
            return number
    raise ValueError(f"not an unsigned BIGINT: {value!r}")


def parse_text(raw: Any) -> str:
    if type(raw) is str:
        return raw
    if isinstance(raw, (dict, list)):
        raise ValueError(f"expected string, got {type_name(raw)}")
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return str(raw)


def parse_json_text(raw: Any) -> str:
    return raw if type(raw) is str else dumps(raw)


def _parse_latin1(raw: Any) -> bytes:
    if type(raw) is not str:
        raise ValueError(f"expected ISO-8859-1 text, got {type_name(raw)}")
    return raw.encode("latin-1")


def timestamp_parser(zone: dt.tzinfo | None) -> Callable[[Any], dt.datetime]:
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


BINARY_PARSERS: Final[Mapping[str, Callable[[Any], bytes]]] = {
    BINARY_LATIN1: _parse_latin1,
    BINARY_BASE64: parse_base64,
    BINARY_HEX: parse_hex,
}
SIMPLE_PARSERS: Final[Mapping[str, Callable[[Any], Any]]] = {
    "boolean": parse_bool,
    "decimal": parse_decimal,
    "float32": _parse_float,
    "float64": _parse_float,
    "string": parse_text,
    "date": parse_date,
    "time": parse_time,
    "json": parse_json_text,
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


# --------------------------------------------------------------------------- row typing
@dataclass(frozen=True, slots=True)
class FlatSchema:
    """What one message's ``mysqlType``/``sqlType`` say, prepared for fast row typing."""

    columns: dict[str, Column]
    parsers: dict[str, Callable[[Any], Any]]
    timestamps: tuple[str, ...]  # timestamp columns that may hold instants


@dataclass(slots=True)
class RowTyping:
    """Per-message findings while typing rows (columns the values prove wider)."""

    schema: FlatSchema
    invalid: list[str]
    unsigned: set[str]
    untyped: dict[str, None]


def _canal_binary(data: bytes, mode: str) -> str:
    """Bytes as the ``binary`` option says (``kind`` is the mode): Canal's ISO-8859-1 text
    unless base64 or hex."""
    if mode == BINARY_BASE64:
        return base64.b64encode(data).decode("ascii")
    if mode == BINARY_HEX:
        return binascii.hexlify(data).decode("ascii")
    return data.decode("latin-1")


def _canal_datetime(value: dt.datetime, mode: str) -> str:
    return epoch_seconds_text(value) if value.tzinfo is not None else value.isoformat(sep=" ")


CANAL_TEXT: Final = ValueText(
    true="1",
    false="0",
    integer=str,
    decimal=plain_decimal,
    floating=java_double,
    binary=_canal_binary,
    datetime=_canal_datetime,
    date=dt.date.isoformat,
    time=format_time,
    other=lambda value: value,  # a value of no known type is written as it is
)
"""How open-source Canal writes values: every one as text (binary per the ``binary``
option, aware datetimes as epoch seconds)."""
CANAL_JSON_TEXT: Final = replace(CANAL_TEXT, other=dumps)
"""... and a JSON column's document (a dict, a list) as its JSON text."""


def render_value(value: Any, ltype: LogicalType, mode: str) -> Any:
    """A typed value as open-source Canal writes it: text (binary per ``mode``)."""
    return render_text(value, mode, CANAL_JSON_TEXT if ltype.name == "json" else CANAL_TEXT)


def ddl_type_of(sql: str | None) -> str:
    text = " ".join((sql or "").upper().split())
    for prefix, kind in _DDL_KEYWORDS:
        if text.startswith(prefix):
            return kind
    return OP_QUERY
