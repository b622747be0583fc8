"""Logical types and exact value parsing shared by every format.

Each column of a canonical event has a :class:`LogicalType`. Python values by
logical type:

========================  ====================================================
logical type              Python value
========================  ====================================================
``boolean``               ``bool``
``int8`` .. ``int64``     ``int``
``uint64``, ``integer``   ``int`` (any size; ``integer`` = unbounded)
``decimal(p,s)``          ``decimal.Decimal`` (never a float on the way)
``float32``/``float64``   ``float``
``string``                ``str``
``binary``                ``bytes``
``date``                  ``datetime.date``
``time``                  ``datetime.time``
``timestamp``             naive ``datetime.datetime`` (no zone in the source)
``timestamptz``           aware ``datetime.datetime`` (offset or zone id)
``json``                  ``str`` (the JSON text as sent)
``unknown``               the JSON value as sent (int, Decimal, str, bool, ...)
========================  ====================================================

Sub-microsecond digits (OceanBase nanoseconds) are truncated to microseconds:
Spark and Delta hold microseconds, and Python's datetime does too.

>>> LogicalType.parse("decimal(10,2)")
LogicalType(name='decimal', precision=10, scale=2)
>>> str(LogicalType("uint64"))
'uint64'
>>> parse_epoch_seconds("1624614713.201")
datetime.datetime(2021, 6, 25, 9, 51, 53, 201000, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

TypeName = Literal[
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint64",
    "integer",
    "decimal",
    "float32",
    "float64",
    "string",
    "binary",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "json",
    "unknown",
]

TYPE_NAMES: Final[frozenset[str]] = frozenset(TypeName.__args__)  # type: ignore[attr-defined]
INTEGER_TYPES: Final[frozenset[str]] = frozenset(
    {"int8", "int16", "int32", "int64", "uint64", "integer"}
)
INTEGER_RANGES: Final[dict[str, tuple[int, int]]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
EPOCH_NAIVE: Final = dt.datetime(1970, 1, 1)
EPOCH_DATE: Final = dt.date(1970, 1, 1)


class LogicalType(msgspec.Struct, frozen=True):
    """A column's logical type, independent of the vendor.

    ``precision``/``scale`` are set for ``decimal`` when the source gives them;
    ``precision`` may be set for ``time``/``timestamp`` fractional digits.
    """

    name: TypeName
    precision: int | None = None
    scale: int | None = None

    def __str__(self) -> str:
        if self.name == "decimal" and self.precision is not None:
            return f"decimal({self.precision},{self.scale or 0})"
        return self.name

    @classmethod
    def parse(cls, text: str) -> LogicalType:
        """Parse the string form (``decimal(10,2)``, ``int64``, ...)."""
        return _parse_logical(text)


@lru_cache(maxsize=512)
def _parse_logical(text: str) -> LogicalType:
    match = re.fullmatch(r"decimal\((\d+),(\d+)\)", text)
    if match:
        return LogicalType("decimal", int(match.group(1)), int(match.group(2)))
    if text not in TYPE_NAMES:
        raise ValueError(f"unknown logical type {text!r}")
    return LogicalType(text)  # type: ignore[arg-type]


UNKNOWN: Final = LogicalType("unknown")
STRING: Final = LogicalType("string")
BOOLEAN: Final = LogicalType("boolean")
INT8: Final = LogicalType("int8")
INT16: Final = LogicalType("int16")
INT32: Final = LogicalType("int32")
INT64: Final = LogicalType("int64")
UINT64: Final = LogicalType("uint64")
INTEGER: Final = LogicalType("integer")
DECIMAL: Final = LogicalType("decimal")
FLOAT32: Final = LogicalType("float32")
FLOAT64: Final = LogicalType("float64")
BINARY: Final = LogicalType("binary")
DATE: Final = LogicalType("date")
TIME: Final = LogicalType("time")
TIMESTAMP: Final = LogicalType("timestamp")
TIMESTAMPTZ: Final = LogicalType("timestamptz")
JSON: Final = LogicalType("json")


def decimal_type(precision: int | None, scale: int | None) -> LogicalType:
    """``decimal(p,s)`` when the precision is known, else plain ``decimal``."""
    if precision is None:
        return DECIMAL
    return LogicalType("decimal", precision, scale or 0)


# --------------------------------------------------------------------------- parsers
# Each parser takes the vendor's raw JSON value (str, int, Decimal, bool, ...)
# and returns the Python value of its logical type, or raises ValueError with
# a reason. Formats decide which parser applies to which column.


MAX_INTEGER_DIGITS: Final = 4000  # Python refuses int <-> str beyond 4300 digits anyway


def parse_int(raw: Any) -> int:
    """An integer from an int, a digit string, or an integral Decimal (``"5.0"``, ``"1E3"``)."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        text = raw.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise ValueError(f"expected integer, got {raw!r}") from None
        return _integral_decimal(value, raw)
    if isinstance(raw, Decimal):
        return _integral_decimal(raw, raw)
    raise ValueError(f"expected integer, got {type(raw).__name__}")


def _integral_decimal(value: Decimal, raw: Any) -> int:
    if not value.is_finite() or value.adjusted() > MAX_INTEGER_DIGITS:
        raise ValueError(f"expected integer, got {str(raw)[:40]!r}")
    if value != value.to_integral_value():
        raise ValueError(f"expected integer, got {str(raw)[:40]!r}")
    return int(value)


def parse_decimal(raw: Any) -> Decimal:
    """An exact decimal; floats are refused upstream (we parse JSON floats as Decimal)."""
    if isinstance(raw, Decimal):
        return raw
    if isinstance(raw, bool):
        raise ValueError("expected decimal, got boolean")
    if isinstance(raw, int):
        return Decimal(raw)
    if isinstance(raw, str):
        try:
            value = Decimal(raw.strip())
        except InvalidOperation:
            raise ValueError(f"expected decimal, got {raw!r}") from None
        return value
    if isinstance(raw, float):
        return Decimal(repr(raw))
    raise ValueError(f"expected decimal, got {type(raw).__name__}")


def parse_float(raw: Any) -> float:
    """A float from a number or its text (``"1.2510357E7"``, ``"NaN"``)."""
    if isinstance(raw, bool):
        raise ValueError("expected float, got boolean")
    if isinstance(raw, (int, float, Decimal)):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw.strip())
        except ValueError:
            raise ValueError(f"expected float, got {raw!r}") from None
    raise ValueError(f"expected float, got {type(raw).__name__}")


_TRUE: Final = frozenset({"true", "1", "t", "yes", "y"})
_FALSE: Final = frozenset({"false", "0", "f", "no", "n"})


def parse_bool(raw: Any) -> bool:
    """A boolean from true/false, 1/0 or their text."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise ValueError(f"expected boolean, got {raw!r}")


def parse_base64(raw: Any) -> bytes:
    """Bytes from standard base64 text."""
    if not isinstance(raw, str):
        raise ValueError(f"expected base64 string, got {type(raw).__name__}")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"invalid base64 {raw[:40]!r}") from None


def parse_hex(raw: Any) -> bytes:
    """Bytes from hex text, with or without a ``\\x`` / ``0x`` prefix."""
    if not isinstance(raw, str):
        raise ValueError(f"expected hex string, got {type(raw).__name__}")
    text = raw[2:] if raw[:2] in ("\\x", "0x", "0X") else raw
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"invalid hex {raw[:40]!r}") from None


def parse_byte_list(raw: Any) -> bytes:
    """Bytes from a DRS-style list of byte values, ``"[106, 103]"`` (``"[]"`` = empty)."""
    if isinstance(raw, list):
        items = raw
    elif isinstance(raw, str) and raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        items = [part.strip() for part in inner.split(",")] if inner else []
    else:
        raise ValueError(f"expected byte list like '[106, 103]', got {raw!r}")
    try:
        # signed Java bytes (-128..127) are common in DRS output
        return bytes((int(item) & 0xFF) for item in items if _byte_in_range(int(item)))
    except (TypeError, ValueError):
        raise ValueError(f"invalid byte list {str(raw)[:40]!r}") from None


def _byte_in_range(value: int) -> bool:
    if not -128 <= value <= 255:
        raise ValueError(value)
    return True


def to_byte_list(value: bytes) -> str:
    """Inverse of :func:`parse_byte_list` (DRS rendering)."""
    return "[" + ", ".join(str(b) for b in value) + "]"


def date_from_epoch_days(raw: Any) -> dt.date:
    return EPOCH_DATE + dt.timedelta(days=parse_int(raw))


def date_from_epoch_ms(raw: Any) -> dt.date:
    """A date from epoch milliseconds (DataWorks DATE); must be midnight UTC-aligned or not."""
    return timestamp_from_epoch(parse_int(raw), 3).date()


def parse_date(raw: Any) -> dt.date:
    if not isinstance(raw, str):
        raise ValueError(f"expected date text, got {type(raw).__name__}")
    try:
        return dt.date.fromisoformat(raw.strip())
    except ValueError:
        raise ValueError(f"invalid date {raw!r}") from None


_TIME_RE: Final = re.compile(r"(-?)(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")


def parse_time(raw: Any) -> dt.time:
    """``HH:MM:SS[.fraction]`` (up to nanoseconds; truncated to microseconds)."""
    if not isinstance(raw, str):
        raise ValueError(f"expected time text, got {type(raw).__name__}")
    match = _TIME_RE.fullmatch(raw.strip())
    if not match or match.group(1):
        raise ValueError(f"invalid time {raw!r}")
    hour, minute, second = int(match.group(2)), int(match.group(3)), int(match.group(4))
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"time out of range {raw!r}")
    return dt.time(hour, minute, second, _micros(match.group(5)))


def _micros(fraction: str | None) -> int:
    if not fraction:
        return 0
    return int((fraction + "000000")[:6])


_DATETIME_RE: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2}|[+-]\d{2})?(?:\s*\[?([A-Za-z][A-Za-z0-9_+\-/]*)\]?)?"
)


def parse_datetime(raw: Any, default_zone: dt.tzinfo | None = None) -> dt.datetime:
    """A datetime from text, keeping its offset or zone id when it has one.

    Accepts ``2021-06-25 17:51:53``, ``2020-11-25T00:01:02.012345Z``,
    ``2020-11-25 00:01:02.012345 Asia/Shanghai``, ``...+08:00[Asia/Shanghai]``.
    Without a zone the result is naive, unless ``default_zone`` is given.
    """
    if not isinstance(raw, str):
        raise ValueError(f"expected datetime text, got {type(raw).__name__}")
    match = _DATETIME_RE.fullmatch(raw.strip())
    if not match:
        raise ValueError(f"invalid datetime {raw!r}")
    year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second = int(match.group(6) or 0)
    try:
        value = dt.datetime(year, month, day, hour, minute, second, _micros(match.group(7)))
    except ValueError:
        raise ValueError(f"invalid datetime {raw!r}") from None
    offset, zone = match.group(8), match.group(9)
    if zone:
        return value.replace(tzinfo=zone_info(zone))
    if offset:
        return value.replace(tzinfo=_fixed_offset(offset))
    if default_zone is not None:
        return value.replace(tzinfo=default_zone)
    return value


def _fixed_offset(text: str) -> dt.tzinfo:
    if text == "Z":
        return dt.UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    delta = dt.timedelta(hours=hours, minutes=minutes)
    return dt.UTC if not delta else dt.timezone(sign * delta)


ZONE_OFFSET: Final = re.compile(r"[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?")
"""A fixed offset where a zone is asked for: ``+08:00``, ``-0530``, ``+08``."""


@lru_cache(maxsize=256)
def zone_info(name: str) -> dt.tzinfo:
    """A zone by id (``Asia/Shanghai``, ``UTC``) or a fixed offset (``+08:00``); ValueError
    when unknown.

    >>> zone_info("Asia/Shanghai"), zone_info("+08:00"), zone_info("-0530")
    (zoneinfo.ZoneInfo(key='Asia/Shanghai'), datetime.timezone(datetime.timedelta(seconds=28800)), datetime.timezone(datetime.timedelta(days=-1, seconds=66600)))
    """
    if name in ("UTC", "Z", "GMT"):
        return ZoneInfo("UTC")
    if ZONE_OFFSET.fullmatch(name):
        return _fixed_offset(name)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r} (a zone id such as Asia/Shanghai, or an offset such as +08:00)"
        ) from None


def timestamp_from_epoch(units: int, digits: int) -> dt.datetime:
    """An aware UTC datetime from an integer count of 10**-digits seconds (exact)."""
    if digits >= 6:
        micros = units // (10 ** (digits - 6))
    else:
        micros = units * (10 ** (6 - digits))
    return EPOCH + dt.timedelta(microseconds=micros)


def parse_epoch_seconds(raw: Any) -> dt.datetime:
    """Epoch seconds with an optional fraction (``"1624614713.201"``) -> aware UTC, exact."""
    return _epoch_fraction(raw, 0)


def parse_epoch_millis(raw: Any) -> dt.datetime:
    """Epoch ms with an optional fraction (``1590315269000.123456789``) -> aware UTC, exact."""
    return _epoch_fraction(raw, 3)


def _epoch_fraction(raw: Any, digits: int) -> dt.datetime:
    if isinstance(raw, bool):
        raise ValueError("expected epoch number, got boolean")
    if isinstance(raw, int):
        return timestamp_from_epoch(raw, digits)
    text = str(raw).strip() if isinstance(raw, (str, Decimal)) else None
    if text is None:
        raise ValueError(f"expected epoch number, got {type(raw).__name__}")
    match = re.fullmatch(r"(-?\d+)(?:\.(\d+))?", text)
    if not match:
        raise ValueError(f"invalid epoch value {raw!r}")
    whole, fraction = match.group(1), match.group(2) or ""
    return timestamp_from_epoch(int(whole + fraction), digits + len(fraction))


def naive_utc(value: dt.datetime) -> dt.datetime:
    """Drop a UTC zone (for sources whose epoch values mean zone-less wall time)."""
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value


def epoch_ms(value: dt.datetime) -> int:
    """Milliseconds since the epoch of an aware datetime (naive = UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def epoch_micros(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


#: epoch seconds written as text, with an optional fraction (``"1624614713.201"``)
EPOCH_TEXT: Final = re.compile(r"-?\d+(?:\.\d+)?")


def epoch_seconds_text(value: dt.datetime) -> str:
    """Epoch seconds with the non-zero fraction digits, exact (never through float), as
    OMS, DataWorks 2.0 and Huawei DRS write MySQL ``TIMESTAMP``; zone-less = UTC.

    >>> epoch_seconds_text(dt.datetime(2020, 11, 24, 16, 1, 2, 12345, tzinfo=dt.UTC))
    '1606233662.012345'
    >>> epoch_seconds_text(dt.datetime(1969, 12, 31, 23, 59, 59, 500000))
    '-0.5'
    """
    micros = epoch_micros(value)
    sign = "-" if micros < 0 else ""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    if not fraction:
        return f"{sign}{seconds}"
    return f"{sign}{seconds}.{fraction:06d}".rstrip("0")


def check_integer_range(
    value: int, ltype: LogicalType, bounds: tuple[int, int] | None = None
) -> int:
    """Raise ValueError when an integer does not fit its logical type, or ``bounds`` when
    given (a column's own range: :func:`anycdc.typemap.integer_range`)."""
    if bounds is None:
        bounds = INTEGER_RANGES.get(ltype.name)
    if bounds and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{value} out of range for {ltype} [{bounds[0]}, {bounds[1]}]")
    return value


# --------------------------------------------------------------------------- rendering
def format_time(value: dt.time) -> str:
    """``HH:MM:SS[.ffffff]``: the fraction only when non-zero."""
    return value.isoformat()


def format_datetime(value: dt.datetime) -> str:
    """ISO-8601 with ``T``; a zone id is appended in brackets (Java ZonedDateTime style)."""
    text = value.isoformat()
    tz = value.tzinfo
    if isinstance(tz, ZoneInfo) and tz.key != "UTC":
        text += f"[{tz.key}]"
    return text


def parse_iso_datetime(text: str) -> dt.datetime:
    """Inverse of :func:`format_datetime`."""
    if text.endswith("]") and "[" in text:
        body, zone = text[:-1].split("[", 1)
        return dt.datetime.fromisoformat(body).replace(tzinfo=zone_info(zone))
    value = dt.datetime.fromisoformat(text)
    if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
        value = value.replace(tzinfo=dt.UTC)
    return value


# --------------------------------------------------------------------------- canonical text
# A typed value's canonical text (what the changelog's images hold:
# :func:`anycdc.changelog.value_text`) is, for the common renderings of a few types, the
# very text a vendor sends. The patterns below describe such texts exactly: every text
# ``t`` a pattern matches in full is accepted by the type's parsers (an integer one held
# to the pattern's bounds) and renders back to ``t``, so a decoder asked for canonical
# text (:class:`anycdc.formats.fastpath.TextRows`) keeps ``t`` instead of typing it and
# rendering it again. A text a pattern does not match proves nothing: it is typed and
# rendered as ever. ASCII digits only (``\d`` would take ``"٣"``, which ``int`` reads as
# 3). tests/unit/test_canonical_text.py checks the claims against the parsers.
CANONICAL_INT_DIGITS: Final = 18
"""The most digits :func:`canonical_int_pattern` takes for an unbounded integer (every
such number fits an int64; a bound beyond uint64's counts as uint64's 19)."""


def canonical_int_pattern(low: int | None, high: int | None) -> str | None:
    """A regular expression of the integer texts ``t`` with ``low <= int(t) <= high`` and
    ``str(int(t)) == t``: ``0``, or a sign only for a negative and no leading zero, up to as
    many digits as every number of that length fits the bounds (None: unbounded, then
    :data:`CANONICAL_INT_DIGITS`); None where 0 is out of bounds (no such range is used).

    >>> canonical_int_pattern(-128, 127)
    '0|[1-9][0-9]{0,1}|-[1-9][0-9]{0,1}'
    >>> canonical_int_pattern(0, 2**64 - 1)
    '0|[1-9][0-9]{0,18}'
    """
    if (low is not None and low > 0) or (high is not None and high < 0):
        return None

    def digits(bound: int | None) -> int:
        if bound is None:
            return CANONICAL_INT_DIGITS
        # the most digits d with 10**d - 1 <= bound
        return min(len(str(bound + 1)) - 1, CANONICAL_INT_DIGITS + 1)

    branches = ["0"]
    up, down = digits(high), digits(None if low is None else -low)
    if up > 0:
        branches.append(f"[1-9][0-9]{{0,{up - 1}}}")
    if down > 0:
        branches.append(f"-[1-9][0-9]{{0,{down - 1}}}")
    return "|".join(branches)


CANONICAL_DECIMAL: Final = r"-?[1-9][0-9]*(?:\.[0-9]+)?|-?0\.[0-9]{0,5}[1-9][0-9]*|0(?:\.0{1,6})?"
"""The decimal texts ``t`` with ``str(Decimal(t)) == t`` (:func:`parse_decimal`): plain
notation, no leading zero, no exponent; a fraction whose first significant digit is within
six places (``Decimal.__str__`` writes ``0.0000001`` as ``1E-7``); a zero only unsigned
with at most six places (``-0.0`` and ``0.0000000`` are written ``-0.0``, ``0E-7``: left
to the reference, the first as the typed readers refuse ``-0``)."""

CANONICAL_BOOLEAN: Final = "true|false"
"""The boolean texts that are their own canonical text (:func:`parse_bool` takes both)."""

CANONICAL_DATE: Final = (
    r"(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
"""The date texts ``t`` with ``date.fromisoformat(t).isoformat() == t`` (:func:`parse_date`):
``YYYY-MM-DD`` of a day every year has (February 29th is left to the parser, as is year 0,
which no date holds)."""

CANONICAL_TIME: Final = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.(?!0{6})[0-9]{6})?"
"""The time texts ``t`` with ``format_time(parse_time(t)) == t``: ``HH:MM:SS`` of a day,
with no fraction or six digits that are not all zeros (``isoformat`` writes ``.5`` as
``.500000`` and drops ``.000000``: left to the parser)."""
CANONICAL_NAIVE_DATETIME: Final = f"(?:{CANONICAL_DATE})[ T]{CANONICAL_TIME}"
"""The zone-less datetime texts whose canonical text (``datetime.isoformat()``) is
:func:`iso_datetime_text` of them: ``YYYY-MM-DD HH:MM:SS`` (or ``T``) of a day of
:data:`CANONICAL_DATE`, with no fraction or six digits that are not all zeros (the fraction
``isoformat`` writes; ``.5`` and ``.000000`` are written otherwise: left to the parser)."""


def iso_datetime_text(text: str) -> str:
    """A text of :data:`CANONICAL_NAIVE_DATETIME` as its canonical text: ``T`` between date
    and time.

    >>> iso_datetime_text("2024-01-31 23:59:58.123456")
    '2024-01-31T23:59:58.123456'
    """
    return text[:10] + "T" + text[11:]
