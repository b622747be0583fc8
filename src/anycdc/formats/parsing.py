"""Value parsing and field access shared by the formats: one image typed with per-column
parsers (:func:`convert_values`), the generic parser per logical type, and checked reads
of a parsed message's fields (errors name the format and the path)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

from anycdc.errors import DecodeError, type_name
from anycdc.event import dumps
from anycdc.typemap import integer_range
from anycdc.values import (
    INTEGER_RANGES,
    LogicalType,
    check_integer_range,
    parse_base64,
    parse_bool,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_int,
    parse_time,
)

# --------------------------------------------------------------------------- value parsing
Parser = Callable[[Any], Any]


VALUE_ERRORS: Final = (ValueError, TypeError, OverflowError, ArithmeticError)
"""What a value parser raises for a value it refuses."""


def convert_values(
    raw: Mapping[str, Any],
    parsers: Mapping[str, Parser | None],
    invalid: list[str],
    out: dict[str, Any] | None = None,
    retry: Callable[[str, Any], Any] | None = None,
    keep: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Type one image with per-column parsers chosen once per message (None = keep as
    sent), into ``out`` when given (an overlay on another image). Every format types
    its images with this loop.

    A value its parser refuses gets a second chance with ``retry(name, value)`` where
    given (a format's own rescue: a BIGINT above the int64 maximum proves the column
    unsigned); refused again, it is kept as the vendor sent it (``keep(value)`` where
    given) and its column is appended to ``invalid``: a decoder never crashes on a value.

    >>> invalid: list[str] = []
    >>> convert_values({"a": "1", "b": "x", "c": None}, {"a": int, "b": int}, invalid)
    {'a': 1, 'b': 'x', 'c': None}
    >>> invalid
    ['b']
    """
    if out is None:
        out = {}
    for name, value in raw.items():
        parser = parsers.get(name)
        if value is None or parser is None:
            out[name] = value
            continue
        try:
            out[name] = parser(value)
        except VALUE_ERRORS:
            out[name] = _refused(name, value, invalid, retry, keep)
    return out


def _refused(
    name: str,
    value: Any,
    invalid: list[str],
    retry: Callable[[str, Any], Any] | None,
    keep: Callable[[Any], Any] | None,
) -> Any:
    if retry is not None:
        try:
            return retry(name, value)
        except VALUE_ERRORS:
            pass
    if name not in invalid:
        invalid.append(name)
    return value if keep is None else keep(value)


def _parse_string(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, (dict, list)):
        raise ValueError(f"expected string, got {type_name(raw)}")
    return str(raw).lower() if isinstance(raw, bool) else str(raw)


def _parse_json_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else dumps(raw)


def _int_parser(ltype: LogicalType) -> Callable[[Any], int]:
    def parse(raw: Any) -> int:
        return check_integer_range(parse_int(raw), ltype)

    return parse


def column_parser(parser: Parser, ltype: LogicalType, vendor_type: str | None) -> Parser:
    """A column's parser: ``parser`` (its logical type's), held to the column's
    :func:`~anycdc.typemap.integer_range` where that is narrower than the logical
    type's (``smallint unsigned`` is ``int32`` holding 0 .. 65535), so that a value out
    of it is invalid as a BIGINT UNSIGNED's -1 is."""
    bounds = integer_range(ltype, vendor_type)
    if bounds is None or bounds == INTEGER_RANGES.get(ltype.name):
        return parser

    def parse(raw: Any) -> Any:
        return check_integer_range(parser(raw), ltype, bounds)

    return parse


def generic_parser(ltype: LogicalType, tz: dt.tzinfo | None = None) -> Callable[[Any], Any]:
    """The default parser of a logical type (text renderings as most vendors write them)."""
    name = ltype.name
    if name in ("int8", "int16", "int32", "int64", "uint64", "integer"):
        return _int_parser(ltype)
    simple: dict[str, Callable[[Any], Any]] = {
        "boolean": parse_bool,
        "decimal": parse_decimal,
        "float32": parse_float,
        "float64": parse_float,
        "string": _parse_string,
        "binary": parse_base64,
        "date": parse_date,
        "time": parse_time,
        "json": _parse_json_text,
    }
    if name in simple:
        return simple[name]
    if name == "timestamp":
        return lambda raw: parse_datetime(raw, tz)
    if name == "timestamptz":
        return parse_datetime
    return lambda raw: raw


# --------------------------------------------------------------------------- field access
def expect_object(format_id: str, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError(format_id, path, f"expected object, got {type_name(value)}")
    return value


def expect_list(format_id: str, value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise DecodeError(format_id, path, f"expected array, got {type_name(value)}")
    return value


def expect_str(format_id: str, value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(format_id, path, f"expected string, got {type_name(value)}")
    return value


def require(format_id: str, obj: Mapping[str, Any], name: str, path: str) -> Any:
    """``obj[name]``, or a DecodeError naming the missing field."""
    try:
        return obj[name]
    except KeyError:
        raise DecodeError(format_id, path, f"missing required field {name!r}") from None


def optional_int(format_id: str, value: Any, path: str) -> int | None:
    """An integer field that vendors send as a number or a digit string."""
    if value is None or value == "":
        return None
    try:
        return parse_int(value)
    except ValueError:
        raise DecodeError(format_id, path, f"expected integer, got {value!r}") from None


def optional_str(format_id: str, value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return str(value)
    return expect_str(format_id, value, path)
