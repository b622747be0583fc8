"""DTS Avro's values: the union branches of a column value, the logical type they prove,
and their conversion to typed values."""

from __future__ import annotations

import codecs
import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from anycdc.formats.base import Parser
from anycdc.formats.dts_avro.wire import (
    CHARSET_BINARY,
    DT_PARTS,
    EMPTY_NONE,
    EMPTY_NULL,
    K_CHARSET,
    K_MILLIS,
    K_PRECISION,
    K_SCALE,
    K_TIMESTAMP,
    K_TIMEZONE,
    K_TYPE,
    K_VALUE,
    MYSQL_CHARSETS,
    TEXT_OBJECT_JSON,
    V_BINARY_GEOMETRY,
    V_BINARY_OBJECT,
    V_CHARACTER,
    V_DATETIME,
    V_DECIMAL,
    V_EMPTY,
    V_FLOAT,
    V_INTEGER,
    V_TEXT_GEOMETRY,
    V_TEXT_OBJECT,
    V_TIMESTAMP,
    V_TIMESTAMP_TZ,
    WIDENING,
    YEAR_CODE,
)
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
    LogicalType,
    decimal_type,
    zone_info,
)

Branch = tuple[str | None, Any]
_NULL_BRANCH: Final[Branch] = (None, None)


def union_branch(item: Any) -> Branch:
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


def column_type(base: LogicalType, code: int | None, items: Sequence[Branch]) -> LogicalType:
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
    for name in WIDENING[WIDENING.index(start.name) + 1 :] if start.name in WIDENING else ():
        lo, hi = INTEGER_RANGES[name]
        if lo <= low and high <= hi:
            return LogicalType.parse(name)
    if low >= 0 and high <= INTEGER_RANGES["uint64"][1]:
        return UINT64
    return LogicalType("integer")


def _datetime_type(base: LogicalType, code: int | None, payload: Mapping[str, Any]) -> LogicalType:
    if base.name in ("date", "time", "timestamp"):
        return base
    if code == YEAR_CODE:
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


def branch_parser(ltype: LogicalType, tz: dt.tzinfo | None) -> Parser:
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


def as_sent(branch: Branch) -> Any:
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
