"""OceanBase text rules: ``__light_type``/``schemaType`` -> logical types by tenant mode
(MySQL or Oracle), the header's seconds and key text, and value typing helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final

from anycdc.errors import DecodeError, type_name
from anycdc.event import Column, dumps
from anycdc.formats.codecs.text import (
    KIND_DATETIME,
    KIND_EPOCH,
    KIND_VALUE,
    KIND_ZONED,
    render_value,
    small_int,
)
from anycdc.formats.oms.wire import LIGHT_TYPE, OCEANBASE_DB_TYPES, ORACLE_DB_TYPES
from anycdc.typemap import sql_type
from anycdc.values import (
    BOOLEAN,
    DATE,
    DECIMAL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    INTEGER,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UNKNOWN,
    LogicalType,
    check_integer_range,
)

# --------------------------------------------------------------------------- OceanBase text rules
_DATETIME_ZONE_DEPENDENT: Final = (TIMESTAMP, KIND_DATETIME)
_MYSQL_LIGHT_TYPES: Final[dict[str, tuple[LogicalType, str]]] = {
    "TINYINT": (INT8, KIND_VALUE),
    "SMALLINT": (INT16, KIND_VALUE),
    "MEDIUMINT": (INT32, KIND_VALUE),
    "INT": (INT32, KIND_VALUE),
    "INTEGER": (INT32, KIND_VALUE),
    "INT64": (INT64, KIND_VALUE),
    "BIGINT": (INTEGER, KIND_VALUE),
    "YEAR": (INT16, KIND_VALUE),
    "BOOL": (BOOLEAN, KIND_VALUE),
    "BOOLEAN": (BOOLEAN, KIND_VALUE),
    "FLOAT": (FLOAT32, KIND_VALUE),
    "DOUBLE": (FLOAT64, KIND_VALUE),
    "DECIMAL": (DECIMAL, KIND_VALUE),
    "NUMERIC": (DECIMAL, KIND_VALUE),
    "DATE": (DATE, KIND_VALUE),
    "TIME": (TIME, KIND_VALUE),
    "DATETIME": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP": (TIMESTAMPTZ, KIND_EPOCH),
    "ZONED_DATETIME": (TIMESTAMPTZ, KIND_ZONED),
}
# Oracle tenants: NUMBER/FLOAT are BigDecimal, DATE and every TIMESTAMP are DateTime text
_ORACLE_LIGHT_TYPES: Final[dict[str, tuple[LogicalType, str]]] = {
    **_MYSQL_LIGHT_TYPES,
    "INTEGER": (INT64, KIND_VALUE),
    "NUMBER": (DECIMAL, KIND_VALUE),
    "FLOAT": (DECIMAL, KIND_VALUE),
    "BINARY_FLOAT": (FLOAT32, KIND_VALUE),
    "BINARY_DOUBLE": (FLOAT64, KIND_VALUE),
    "DATE": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP WITH LOCAL TIME ZONE": _DATETIME_ZONE_DEPENDENT,
    "TIMESTAMP WITH TIME ZONE": (TIMESTAMPTZ, KIND_ZONED),
}
# schemaType written for a logical type when the event's vendor type does not fit
_DERIVED_MYSQL: Final[dict[str, str]] = {
    "boolean": "BOOL", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INT",
    "int64": "INT64", "uint64": "BIGINT UNSIGNED", "integer": "BIGINT", "decimal": "DECIMAL",
    "float32": "FLOAT", "float64": "DOUBLE", "string": "VARCHAR", "binary": "BLOB",
    "date": "DATE", "time": "TIME", "timestamp": "DATETIME", "timestamptz": "TIMESTAMP",
    "json": "JSON",
}  # fmt: skip
_DERIVED_ORACLE: Final[dict[str, str]] = {
    **_DERIVED_MYSQL,
    "float32": "BINARY_FLOAT",
    "float64": "BINARY_DOUBLE",
    "string": "VARCHAR2",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
}
_PARENS: Final = re.compile(r"\([^)]*\)")


def tenant_database(db: str | None, db_type: str | None) -> tuple[str | None, str | None]:
    """``(database, tenant)`` of a ``db``: OceanBase sources write ``{tenant}.{database}``."""
    if db and "." in db and (db_type or "").upper() in OCEANBASE_DB_TYPES:
        tenant, database = db.split(".", 1)
        return database, tenant
    return db, None


def oracle_tenant(db_type: str | None) -> bool:
    """Does a ``dbType`` name an Oracle source (Oracle light types, values and names)?"""
    return (db_type or "").upper() in ORACLE_DB_TYPES


@lru_cache(maxsize=512)
def light_type(schema_type: str, oracle: bool = False) -> tuple[LogicalType, str]:
    """Logical type and value kind of an OMS ``schemaType`` (MySQL or Oracle tenant).

    ``DATETIME``-like types give ``(timestamp, "datetime")``: the caller makes
    them ``timestamptz`` when the values carry a zone id.

    >>> names = ("TINYINT", "INT64", "BIGINT", "DECIMAL(10,2)", "TIMESTAMP")
    >>> [str(light_type(n)[0]) for n in names]
    ['int8', 'int64', 'integer', 'decimal(10,2)', 'timestamptz']
    >>> str(light_type("DATE", oracle=True)[0]), str(light_type("BLOB")[0])
    ('timestamp', 'binary')
    """
    name = " ".join(_PARENS.sub(" ", schema_type).upper().split())
    table = _ORACLE_LIGHT_TYPES if oracle else _MYSQL_LIGHT_TYPES
    found = table.get(name)
    if found is not None:
        ltype, kind = found
        if ltype is DECIMAL:
            precise = sql_type(schema_type)  # DECIMAL(10,2) keeps its precision
            return (precise if precise.name == "decimal" else DECIMAL), kind
        return found
    if name.startswith("INTERVAL"):
        return STRING, KIND_VALUE
    return sql_type(schema_type), KIND_VALUE


def derived_schema_type(column: Column, oracle: bool = False) -> str | None:
    """The ``schemaType`` to write for a column: its vendor type when that decodes
    back to the same logical type, else the OMS name of the logical type."""
    ltype = column.type
    if column.vendor_type:
        found, kind = light_type(column.vendor_type, oracle)
        if found == ltype or (kind == KIND_DATETIME and ltype.name in ("timestamp", "timestamptz")):
            return column.vendor_type
    name = (_DERIVED_ORACLE if oracle else _DERIVED_MYSQL).get(ltype.name)
    if name == "DECIMAL" and ltype.precision is not None:
        return f"DECIMAL({ltype.precision},{ltype.scale or 0})"
    return name


# --------------------------------------------------------------------------- header and key text
def seconds_to_ms(format_id: str, value: Any, path: str) -> int | None:
    """Epoch seconds (number or text, optional fraction) -> epoch milliseconds."""
    if type(value) is str and value.isascii() and value.isdigit() and len(value) <= 12:
        return int(value) * 1000
    if value is None or value == "":
        return None
    if isinstance(value, (bool, dict, list)):
        raise DecodeError(format_id, path, f"expected epoch seconds, got {type_name(value)}")
    try:
        seconds = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise DecodeError(format_id, path, f"expected epoch seconds, got {value!r}") from None
    if not seconds.is_finite() or abs(seconds) >= 10**12:
        raise DecodeError(format_id, path, f"epoch seconds out of range: {value!r}")
    return int((seconds * 1000).to_integral_value(rounding=ROUND_FLOOR))


def key_text(value: Any) -> str:
    """A key value as OMS joins it into ``record_primary_value`` / ``rowid``."""
    rendered = render_value(value)
    if rendered is None:
        return ""
    return rendered if isinstance(rendered, str) else dumps(rendered)


class IntParser:
    """An integer of a logical type, refusing huge literals before converting them."""

    __slots__ = ("ltype",)

    def __init__(self, ltype: LogicalType) -> None:
        self.ltype = ltype

    def __call__(self, raw: Any) -> int:
        return check_integer_range(raw if type(raw) is int else small_int(raw), self.ltype)


@dataclass(frozen=True, slots=True)
class Typing:
    """A typed column: its Column, its value parser (None: keep as sent), and for
    DATETIME-like types the typing to use when the values carry a zone."""

    column: Column
    parser: Callable[[Any], Any] | None
    zoned: Typing | None = None


UNTYPED: Final = Typing(Column(UNKNOWN), None)


def without_light_type(image: dict[str, Any]) -> dict[str, Any]:
    if LIGHT_TYPE not in image:
        return dict(image)
    return {name: value for name, value in image.items() if name != LIGHT_TYPE}


def has_zone(value: Any) -> bool:
    """Does a DATETIME text end with a zone id, ``Z`` or an offset? (cheap: no full parse)"""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if len(text) < 11 or not text[:4].isdigit():
        return False
    if text[-1].isalpha() or text[-1] == "]":
        return True
    tail = text[10:]  # after the date: a sign can only start an offset
    return "+" in tail or "-" in tail
