"""Writing DTS Avro values: logical types and typed values as the record's union branches."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final
from zoneinfo import ZoneInfo

from anycdc.event import Column, Position
from anycdc.formats.dts_avro.wire import (
    AVRO_NAMESPACE,
    BINARY_OBJECT_BLOB,
    CODE_FOR_TYPE,
    DEFAULT_CHARSET,
    DT_PARTS,
    EMPTY_NONE,
    K_CHARSET,
    K_MILLIS,
    K_PRECISION,
    K_SCALE,
    K_TIMESTAMP,
    K_TIMEZONE,
    K_TYPE,
    K_VALUE,
    NAME_DOT_ESCAPE,
    TEXT_OBJECT_JSON,
    V_BINARY_OBJECT,
    V_CHARACTER,
    V_DATETIME,
    V_DECIMAL,
    V_EMPTY,
    V_FLOAT,
    V_INTEGER,
    V_TEXT_OBJECT,
    V_TIMESTAMP,
    V_TIMESTAMP_TZ,
)
from anycdc.typemap import MYSQL_BINLOG_TYPES
from anycdc.values import (
    EPOCH,
    LogicalType,
)


# =========================================================================== encoding helpers
def mysql_column(ltype: LogicalType) -> Column:
    """The column DTS Avro describes for a value of ``ltype`` (code and binlog type name).

    >>> from anycdc.values import TIMESTAMPTZ
    >>> col = mysql_column(TIMESTAMPTZ)
    >>> str(col.type), col.vendor_type, col.vendor_code
    ('timestamptz', 'TIMESTAMP', 7)
    """
    code = CODE_FOR_TYPE[ltype.name]
    return Column(ltype, MYSQL_BINLOG_TYPES[code][0], code)


def wire_code(col: Column) -> int:
    code = col.vendor_code
    if (
        code is not None
        and code in MYSQL_BINLOG_TYPES
        and (MYSQL_BINLOG_TYPES[code][0] == col.vendor_type)
    ):
        return code
    return CODE_FOR_TYPE[col.type.name]


def wire_position(position: Position | None) -> tuple[str, int]:
    if position is None:
        return "", 0
    parts = position.parts
    if len(parts) == 3:
        return f"{parts[1]}@{parts[0]}", parts[2]
    if len(parts) == 2:
        return str(parts[0]), parts[1]
    return "", parts[0] if parts else 0


def wire_object_name(*names: str | None) -> str | None:
    present = [n.replace(".", NAME_DOT_ESCAPE) for n in names if n is not None]
    return ".".join(present) if present else None


_ABSENT: Final = object()
_NONE_VALUE: Final = (f"{AVRO_NAMESPACE}.{V_EMPTY}", EMPTY_NONE)


def wire_image(image: Mapping[str, Any] | None, columns: Mapping[str, Column]) -> Any:
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
