"""Column values and header fields as JSON text carries them.

Several vendors print a typed value the same way -- OMS first, then Maxwell,
Oracle GoldenGate, SharePlex and AWS DMS: booleans as 1/0, binary as base64,
datetimes as text or epoch seconds (:func:`render_value`). Their headers carry
integers as numbers or digit text (:func:`bounded_int`, :func:`int_field`) and
row images as objects or null (:func:`optional_image`).

>>> render_value(True), render_value(b"hi"), render_value(dt.date(2024, 5, 1))
(1, 'aGk=', '2024-05-01')
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final
from zoneinfo import ZoneInfo

from anycdc.errors import DecodeError, type_name
from anycdc.event import value_to_json
from anycdc.formats.base import expect_object
from anycdc.values import epoch_seconds_text, parse_int

#: joins the values of a composite key in OMS ``record_primary_value`` and in the
#: OMS-style key rowids SharePlex writes
KEY_SEPARATOR: Final = "\u0001"

# How a column's values are written: by their Python type, as epoch seconds
# (MySQL TIMESTAMP), or as datetime text with an optional / a required zone id.
KIND_VALUE: Final = "value"
KIND_EPOCH: Final = "epoch"
KIND_DATETIME: Final = "datetime"
KIND_ZONED: Final = "zoned"

_INT_TEXT: Final = re.compile(r"-?\d{1,40}")
_MAX_INT_DIGITS: Final = 40


# --------------------------------------------------------------------------- values


def _render_datetime(value: dt.datetime, kind: str) -> str:
    aware = value.tzinfo is not None
    if kind == KIND_EPOCH or (kind == KIND_VALUE and aware and not _named_zone(value)):
        return epoch_seconds_text(value)
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} " + _clock(
        value.hour, value.minute, value.second, value.microsecond
    )
    return f"{text} {_zone_id(value)}" if aware else text


def _named_zone(value: dt.datetime) -> bool:
    tz = value.tzinfo
    return isinstance(tz, ZoneInfo) and tz.key != "UTC"


def _zone_id(value: dt.datetime) -> str:
    tz = value.tzinfo
    if isinstance(tz, ZoneInfo):
        return tz.key
    offset = value.utcoffset() or dt.timedelta(0)
    if not offset:
        return "UTC"
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(offset) // dt.timedelta(minutes=1)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _clock(hour: int, minute: int, second: int, micros: int) -> str:
    return f"{hour:02d}:{minute:02d}:{second:02d}{_fraction(micros)}"


def _fraction(micros: int) -> str:
    # OceanBase shows every non-zero fraction digit and no trailing zeros
    return "." + f"{micros:06d}".rstrip("0") if micros else ""


def _as_is(value: Any) -> Any:
    return value


def _exact_decimal(value: Decimal) -> Any:
    return value if value.is_finite() else value_to_json(value)


def _exact_float(value: float) -> Any:
    return value if math.isfinite(value) else value_to_json(value)


def _base64(data: bytes, kind: str) -> str:
    return base64.b64encode(data).decode("ascii")


def _time_text(value: dt.time) -> str:
    return _clock(value.hour, value.minute, value.second, value.microsecond)


@dataclass(frozen=True, slots=True)
class ValueText:
    """How a vendor writes each Python type of a typed value (:func:`render_value`): the
    defaults are OMS' (:data:`OMS_TEXT`); a vendor that writes some types otherwise gives
    its own. ``binary`` and ``datetime`` also get :func:`render_value`'s ``kind``, the
    column's rendering (OMS: how datetimes are written; a vendor may use its own kinds)."""

    true: Any = 1
    false: Any = 0
    integer: Callable[[int], Any] = _as_is
    decimal: Callable[[Decimal], Any] = _exact_decimal
    floating: Callable[[float], Any] = _exact_float
    binary: Callable[[bytes, str], Any] = _base64
    datetime: Callable[[dt.datetime, str], Any] = _render_datetime
    date: Callable[[dt.date], Any] = dt.date.isoformat
    time: Callable[[dt.time], Any] = _time_text
    other: Callable[[Any], Any] = value_to_json
    """Any other value (a dict, a list ...)."""


OMS_TEXT: Final = ValueText()
"""How OMS writes values (and Maxwell, Oracle GoldenGate, SharePlex and AWS DMS)."""


def render_value(value: Any, kind: str = KIND_VALUE, text: ValueText = OMS_TEXT) -> Any:
    """A typed value as a vendor writes it: by default as OMS does (a JSON-ready value;
    Decimals stay exact numbers), else as ``text`` says. None and text are kept as they are.

    ``kind`` says how datetimes are written: ``epoch`` seconds (MySQL
    TIMESTAMP), ``datetime``/``zoned`` text with the zone id when aware, or by
    the value (``value``: a named zone or naive -> text, another aware value ->
    epoch seconds).

    >>> render_value(True), render_value(b"hello world"), render_value(dt.time(0, 1, 2, 500000))
    (1, 'aGVsbG8gd29ybGQ=', '00:01:02.5')
    >>> render_value(dt.datetime(2020, 11, 25, 0, 1, 2, 12345, tzinfo=ZoneInfo("Asia/Shanghai")))
    '2020-11-25 00:01:02.012345 Asia/Shanghai'
    >>> render_value(dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC))
    '1606233662.012345'
    >>> words = ValueText(true="true", false="false", integer=str)
    >>> render_value(False, text=words), render_value(7, text=words), render_value(None, text=words)
    ('false', '7', None)
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return text.true if value else text.false
    if isinstance(value, int):
        return text.integer(value)
    if isinstance(value, Decimal):
        return text.decimal(value)
    if isinstance(value, float):
        return text.floating(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return text.binary(bytes(value), kind)
    if isinstance(value, dt.datetime):
        return text.datetime(value, kind)
    if isinstance(value, dt.date):
        return text.date(value)
    if isinstance(value, dt.time):
        return text.time(value)
    return text.other(value)


# --------------------------------------------------------------------------- header fields
def bounded_int(format_id: str, value: Any, path: str, maximum: int = 2**63 - 1) -> int | None:
    """A non-negative integer field sent as a number or digit string (None when absent).

    Refuses huge literals before converting them (``1e999999`` would take a
    minute to become an int).

    >>> bounded_int("ogg-json", "00000000000000001234", "$.pos"), bounded_int("ogg-json", None, "$.pos")
    (1234, None)
    """
    if type(value) is int and 0 <= value <= maximum:
        return value
    if type(value) is str and len(value) <= 18 and value.isascii() and value.isdigit():
        number = int(value)  # the common digit text (below 10**18: no huge literal)
        if number <= maximum:
            return number
    if value is None or value == "" or value == "null":
        return None
    try:
        number = small_int(value)
    except ValueError:
        raise DecodeError(format_id, path, f"expected integer, got {_show(value)}") from None
    if not 0 <= number <= maximum:
        raise DecodeError(format_id, path, f"integer {number} out of range")
    return number


def small_int(raw: Any) -> int:
    """``parse_int`` for values of at most 40 digits; ValueError otherwise.

    Refusing longer text first keeps ``1e999999`` from taking a minute to expand.

    >>> small_int("42"), small_int(Decimal("7"))
    (42, 7)
    """
    if isinstance(raw, str):
        if not _INT_TEXT.fullmatch(raw.strip()):
            raise ValueError(f"expected integer, got {raw[:40]!r}")
        return int(raw)
    if isinstance(raw, Decimal) and (not raw.is_finite() or raw.adjusted() > _MAX_INT_DIGITS):
        raise ValueError(f"expected integer, got {raw}")
    if isinstance(raw, (dict, list)):
        raise ValueError(f"expected integer, got {type_name(raw)}")
    return parse_int(raw)


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return type_name(value)
    return str(value)[:60] if isinstance(value, Decimal) else repr(value)[:60]


def optional_image(format_id: str, value: Any, path: str) -> dict[str, Any] | None:
    """A row image: an object, or null.

    >>> optional_image("oms-json", None, "$.prevStruct") is None
    True
    >>> optional_image("oms-json", {"id": 1}, "$.prevStruct")
    {'id': 1}
    """
    return None if value is None else expect_object(format_id, value, path)


def int_field(format_id: str, value: Any, path: str) -> int | None:
    """An integer header field (``id``, ``es``, a type code): a JSON integer or digit string.

    Stricter than :func:`anycdc.formats.base.optional_int` on purpose: text such
    as ``"1e999999999"`` is refused instead of being expanded.

    >>> int_field("drs-json", " 12 ", "$.id"), int_field("drs-json", "", "$.id")
    (12, None)
    """
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise DecodeError(format_id, path, f"expected integer, got {_short(value)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = [
    "KEY_SEPARATOR",
    "KIND_DATETIME",
    "KIND_EPOCH",
    "KIND_VALUE",
    "KIND_ZONED",
    "OMS_TEXT",
    "ValueText",
    "bounded_int",
    "int_field",
    "optional_image",
    "render_value",
    "small_int",
]
