r"""Text as Java-written CDC prints it: numbers and Gson's JSON.

Canal and Huawei DRS are Java programs: a double reads as ``Double.toString``
writes it (:func:`java_double`), a decimal without exponent notation
(:func:`plain_decimal`), and DRS's message JSON is Gson's (:func:`gson_json`).

>>> java_double(1.0), plain_decimal(Decimal("1E+2")), gson_json({"a": "<"})
('1.0', '100', b'{"a":"\\u003c"}')
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from anycdc.event import dumps

# Gson (DRS's serializer) escapes these HTML-sensitive characters, and U+2028/U+2029.
GSON_ESCAPES: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    (b"=", b"\\u003d"),
    (b"'", b"\\u0027"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def gson_json(obj: Any) -> bytes:
    """Compact JSON as DRS's Gson writes it: UTF-8 kept, ``< > & = '`` escaped."""
    data = dumps(obj).encode("utf-8")
    for raw, escaped in GSON_ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def java_double(value: float) -> str:
    """A double as Java's ``Double.toString`` writes it (Canal's rendering).

    >>> java_double(5.18), java_double(1.0), java_double(12510357.0), java_double(1e-05)
    ('5.18', '1.0', '1.2510357E7', '1.0E-5')
    """
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # digits before the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{prefix}{whole}.{frac or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def plain_decimal(value: Decimal) -> str:
    """A decimal without exponent notation (``1E+2`` -> ``100``), as the Canal family writes decimals.

    Exponents beyond +-1000 (no SQL decimal has them) keep the short scientific form.
    """
    if not value.is_finite() or abs(int(value.as_tuple().exponent)) > 1000:
        return str(value)
    return format(value, "f")


__all__ = ["GSON_ESCAPES", "gson_json", "java_double", "plain_decimal"]
