"""Logical types -> Spark SQL types, and the cast from canonical value text.

Changelog images hold every value as its canonical text (see
:mod:`anycdc.changelog`); :func:`cast_sql` turns that text into the target
column's type with ``try_cast`` so that a value which does not fit is
detectable (text present, cast NULL) and goes to the dead-letter table
instead of failing the batch.

Mapping: ``uint64`` -> DECIMAL(20,0) (an unsigned BIGINT never wraps),
``integer`` -> DECIMAL(38,0), ``decimal(p,s)`` -> DECIMAL(p,s) for p <= 38 and
STRING (exact digits) beyond, ``decimal`` without precision ->
``decimal_default``, ``timestamp`` -> TIMESTAMP_NTZ (the source had no zone),
``timestamptz`` -> TIMESTAMP (an instant), ``time`` -> STRING (Spark 4.0 has no
TIME type), ``json``/``unknown`` -> STRING.
"""

from __future__ import annotations

import re
from typing import Final

MAX_SPARK_PRECISION: Final = 38
_SIMPLE: Final[dict[str, str]] = {
    "boolean": "BOOLEAN",
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INT",
    "int64": "BIGINT",
    "uint64": "DECIMAL(20,0)",
    "integer": "DECIMAL(38,0)",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "string": "STRING",
    "binary": "BINARY",
    "date": "DATE",
    "time": "STRING",
    "timestamp": "TIMESTAMP_NTZ",
    "timestamptz": "TIMESTAMP",
    "json": "STRING",
    "unknown": "STRING",
}
_DECIMAL_RE: Final = re.compile(r"decimal\((\d+),(\d+)\)")


def spark_type(logical: str, decimal_default: tuple[int, int] = (38, 18)) -> str:
    """The Spark SQL type (DDL text) that holds a logical type exactly."""
    if logical in _SIMPLE:
        return _SIMPLE[logical]
    if logical == "decimal":
        return f"DECIMAL({decimal_default[0]},{decimal_default[1]})"
    match = _DECIMAL_RE.fullmatch(logical)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if precision > MAX_SPARK_PRECISION:
            return "STRING"  # exact digits beat a rounded DECIMAL(38,x)
        return f"DECIMAL({max(precision, 1)},{scale})"
    return "STRING"


def cast_sql(text_expr: str, target: str) -> str:
    """SQL that casts canonical value text to ``target`` (NULL when it does not fit)."""
    if target == "STRING":
        return text_expr
    if target == "BINARY":
        return f"try_to_binary({text_expr}, 'base64')"
    if target == "TIMESTAMP":
        # a zone id suffix "[Asia/Shanghai]" follows an explicit offset: the offset is the instant
        return f"try_cast(regexp_replace({text_expr}, '\\\\[[^\\\\]]*\\\\]$', '') AS TIMESTAMP)"
    return f"try_cast({text_expr} AS {target})"


_WIDENINGS: Final[dict[str, tuple[str, ...]]] = {
    "TINYINT": ("SMALLINT", "INT", "BIGINT"),
    "SMALLINT": ("INT", "BIGINT"),
    "INT": ("BIGINT",),
    "FLOAT": ("DOUBLE",),
    "DATE": ("TIMESTAMP_NTZ",),
}
_INTEGER_DIGITS: Final[dict[str, int]] = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 20}


def widened(existing: str, incoming: str) -> str | None:
    """The type a column should have to hold both; None when they are incompatible.

    Integer and float widenings, DECIMAL precision increases and integers into a
    DECIMAL with room for their digits follow Delta's type widening (a BIGINT
    column meeting unsigned BIGINT values becomes DECIMAL(20,0)). A STRING column
    stays STRING whatever comes (it holds any value as text: untyped formats fill
    STRING columns, and their DDL must not make the table incompatible); anything
    else (e.g. STRING -> INT on a typed column the other way) is incompatible.
    """
    existing, incoming = existing.upper(), incoming.upper()
    if existing == incoming:
        return existing
    if existing == "STRING":
        return existing
    if incoming in _WIDENINGS.get(existing, ()):
        return incoming
    if existing in _WIDENINGS.get(incoming, ()):
        return existing  # narrower data fits the wider column
    dec_a, dec_b = _decimal(existing), _decimal(incoming)
    dec_a = dec_a or _integer_as_decimal(existing)
    dec_b = dec_b or _integer_as_decimal(incoming)
    if dec_a and dec_b:
        scale = max(dec_a[1], dec_b[1])
        whole = max(dec_a[0] - dec_a[1], dec_b[0] - dec_b[1])
        if whole + scale > MAX_SPARK_PRECISION:
            return None
        return f"DECIMAL({whole + scale},{scale})"
    return None


def settle_type(
    existing: str | None, logical: str, decimal_default: tuple[int, int] = (38, 18)
) -> str | None:
    """A column's Spark type once a value of ``logical`` type has come; None: incompatible.

    Types only widen. A DECIMAL without precision (DataWorks, a NULL in DTS Avro) says
    nothing about the column's size, so it keeps a DECIMAL(p,s) column as it is; it
    takes ``decimal_default`` only for a column it is the first to type. ``unknown``
    likewise keeps any column's type, and makes a new column STRING. Folding a
    column's types in source order gives the same result however the stream is cut
    into batches.

    >>> settle_type("DECIMAL(14,4)", "decimal")
    'DECIMAL(14,4)'
    >>> settle_type(None, "decimal"), settle_type("INT", "int64")
    ('DECIMAL(38,18)', 'BIGINT')
    """
    if existing is not None and logical == "decimal" and _decimal(existing.upper()):
        return existing.upper()
    if existing is not None and logical == "unknown":
        # no type said (a MongoDB null, a vendor type without mapping): the column's own
        # type stays; a value it cannot hold is a dead letter, not a schema conflict
        return existing.upper()
    incoming = spark_type(logical, decimal_default)
    return incoming if existing is None else widened(existing, incoming)


def _integer_as_decimal(text: str) -> tuple[int, int] | None:
    """The DECIMAL Delta widens an integer column to (BIGINT needs 20 digits, not 19)."""
    digits = _INTEGER_DIGITS.get(text)
    return (digits, 0) if digits else None


def _decimal(text: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"DECIMAL\((\d+),(\d+)\)", text.replace(" ", ""))
    return (int(match.group(1)), int(match.group(2))) if match else None
