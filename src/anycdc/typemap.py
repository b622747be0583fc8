"""Vendor type names and codes -> logical types.

One mapper for SQL type names as MySQL, PostgreSQL, Oracle, SQL Server,
OceanBase and GaussDB spell them (``bigint(20) unsigned``, ``NUMBER(10,2)``,
``int8``, ``timestamp with time zone``, ``datetime2(7)`` ...), one for
``java.sql.Types`` codes, and one for MySQL binlog column type codes.
Anything unrecognised maps to ``unknown``: the value then keeps its JSON type.

>>> str(sql_type("bigint(20) unsigned")), str(sql_type("decimal(10,2)")), str(sql_type("NUMBER"))
('uint64', 'decimal(10,2)', 'decimal')
>>> str(jdbc_type(93)), str(sql_type("varchar(255)")), str(sql_type("geometry"))
('timestamp', 'string', 'unknown')

An unsigned integer type is a wider logical type (``smallint unsigned`` is ``int32``)
whose values are held to the unsigned range of its own width: :func:`integer_range`
is that rule, for every format that types values by a SQL type name.

>>> integer_range(sql_type("smallint(5) unsigned"), "smallint(5) unsigned")
(0, 65535)
>>> integer_range(INT16, "smallint"), integer_range(STRING, "smallint unsigned")
((-32768, 32767), None)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from anycdc.values import (
    BINARY,
    BOOLEAN,
    DATE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    INTEGER_RANGES,
    INTEGER_TYPES,
    JSON,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UINT64,
    UNKNOWN,
    LogicalType,
    decimal_type,
)

_SIGNED: Final[dict[str, LogicalType]] = {
    "tinyint": INT8, "int1": INT8, "smallint": INT16, "int2": INT16, "smallserial": INT16,
    "mediumint": INT32, "int": INT32, "integer": INT32, "int4": INT32, "serial": INT32,
    "int24": INT32, "bigint": INT64, "int8": INT64, "bigserial": INT64, "int64": INT64,
    "long": INT64, "longlong": INT64, "short": INT16, "tiny": INT8,
}  # fmt: skip
# unsigned integers widen by one step; BIGINT UNSIGNED needs 64 unsigned bits
_UNSIGNED: Final[dict[str, LogicalType]] = {
    "tinyint": INT16, "smallint": INT32, "mediumint": INT32, "int": INT64, "integer": INT64,
    "bigint": UINT64,
}  # fmt: skip
# the width of each unsigned type above: its values are 0 .. 2**bits - 1
_UNSIGNED_BITS: Final[dict[str, int]] = {
    "tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64,
}  # fmt: skip
_NAMED: Final[dict[str, LogicalType]] = {
    # booleans
    "bool": BOOLEAN, "boolean": BOOLEAN,
    # floats
    "float": FLOAT32, "real": FLOAT32, "float4": FLOAT32, "binary_float": FLOAT32,
    "double": FLOAT64, "double precision": FLOAT64, "float8": FLOAT64, "binary_double": FLOAT64,
    # text
    "char": STRING, "varchar": STRING, "varchar2": STRING, "nvarchar2": STRING, "nchar": STRING,
    "nvarchar": STRING, "character": STRING, "character varying": STRING, "bpchar": STRING,
    "text": STRING, "tinytext": STRING, "mediumtext": STRING, "longtext": STRING, "ntext": STRING,
    "string": STRING, "var_string": STRING, "enum": STRING, "set": STRING, "clob": STRING,
    "nclob": STRING, "long varchar": STRING, "uuid": STRING, "uniqueidentifier": STRING,
    "rowid": STRING, "urowid": STRING, "xml": STRING, "citext": STRING, "name": STRING,
    "inet": STRING, "cidr": STRING, "macaddr": STRING, "interval": STRING, "sysname": STRING,
    "int4range": STRING, "int8range": STRING, "numrange": STRING, "tsrange": STRING,
    "tstzrange": STRING, "daterange": STRING, "money": STRING,
    # binary
    "binary": BINARY, "varbinary": BINARY, "blob": BINARY, "tinyblob": BINARY,
    "mediumblob": BINARY, "longblob": BINARY, "bytea": BINARY, "raw": BINARY,
    "long raw": BINARY, "image": BINARY, "bfile": BINARY, "bit": BINARY, "varbit": BINARY,
    "bit varying": BINARY, "bytes": BINARY, "geometry": UNKNOWN,
    # temporal
    "date": DATE, "newdate": DATE, "time": TIME, "time without time zone": TIME,
    "datetime": TIMESTAMP, "datetime2": TIMESTAMP, "smalldatetime": TIMESTAMP,
    "timestamp without time zone": TIMESTAMP,
    "timestamp": TIMESTAMP,
    "timestamptz": TIMESTAMPTZ, "timestamp with time zone": TIMESTAMPTZ,
    "timestamp with local time zone": TIMESTAMPTZ, "datetimeoffset": TIMESTAMPTZ,
    "year": INT16,
    # documents
    "json": JSON, "jsonb": JSON,
}  # fmt: skip
_DECIMALS: Final = frozenset({"decimal", "numeric", "number", "dec", "newdecimal", "fixed"})
_TYPE_RE: Final = re.compile(
    r"\s*([a-z_][a-z0-9_ ]*?)\s*(?:\(\s*(\d+)?\s*(?:,\s*(-?\d+)\s*)?\))?"
    r"((?:\s+(?:unsigned|signed|zerofill|with(?:out)? (?:local )?time zone))*)\s*(\[\])?\s*"
)


@lru_cache(maxsize=1024)
def sql_type(name: str | None) -> LogicalType:
    """Map a SQL type name as any vendor spells it to a logical type."""
    if not name:
        return UNKNOWN
    match = _TYPE_RE.fullmatch(name.lower())
    if not match:
        return UNKNOWN
    base, p, s, modifiers, array = match.groups()
    if array:
        return UNKNOWN
    base = base.strip()
    modifiers = " ".join(modifiers.split())
    if "time zone" in modifiers:
        base = f"{base} {modifiers.replace('unsigned', '').strip()}"
    if base in _DECIMALS:
        return _decimal(p, s)
    if base in _SIGNED:
        if "unsigned" in modifiers:
            return _UNSIGNED.get(base, _SIGNED[base])
        return _SIGNED[base]
    if base == "float" and p is not None and s is None and int(p) > 24:
        return FLOAT64  # FLOAT(p) with p > 24 is a double in MySQL and SQL Server
    return _NAMED.get(base, UNKNOWN)


@lru_cache(maxsize=1024)
def unsigned_range(name: str | None) -> tuple[int, int] | None:
    """The values of an unsigned integer SQL type (``int(10) unsigned`` -> 0 .. 2**32 - 1);
    None for any other type name."""
    if not name:
        return None
    match = _TYPE_RE.fullmatch(name.lower())
    if not match or match.group(5) or "unsigned" not in match.group(4):
        return None
    bits = _UNSIGNED_BITS.get(match.group(1).strip())
    return None if bits is None else (0, 2**bits - 1)


def integer_range(ltype: LogicalType, vendor_type: str | None) -> tuple[int, int] | None:
    """The values a column may hold: its logical type's range, narrowed to the unsigned
    range of its vendor type; None for a type without bounds (not an integer, or
    ``integer`` of a signed type). A value outside it is invalid (kept as sent, listed in ``invalid``),
    as a BIGINT UNSIGNED's -1 is: the one rule of every unsigned width."""
    bounds = INTEGER_RANGES.get(ltype.name)
    unsigned = unsigned_range(vendor_type)
    if unsigned is None or ltype.name not in INTEGER_TYPES:
        return bounds
    if bounds is None:
        return unsigned  # ``integer``: unbounded but for the vendor type's width
    return max(bounds[0], unsigned[0]), min(bounds[1], unsigned[1])


def _decimal(p: str | None, s: str | None) -> LogicalType:
    if p is None:
        return decimal_type(None, None)
    precision, scale = int(p), int(s) if s is not None else 0
    if scale < 0 or scale > precision or precision > 1000:
        return decimal_type(None, None)
    return decimal_type(precision, scale)


# java.sql.Types
_JDBC: Final[dict[int, LogicalType]] = {
    -7: BOOLEAN, 16: BOOLEAN, -6: INT8, 5: INT16, 4: INT32, -5: INT64,
    6: FLOAT64, 7: FLOAT32, 8: FLOAT64, 2: decimal_type(None, None), 3: decimal_type(None, None),
    1: STRING, 12: STRING, -1: STRING, -15: STRING, -9: STRING, -16: STRING, 2005: STRING,
    2011: STRING, -2: BINARY, -3: BINARY, -4: BINARY, 2004: BINARY,
    91: DATE, 92: TIME, 93: TIMESTAMP, 2013: TIME, 2014: TIMESTAMPTZ, 1111: UNKNOWN,
}  # fmt: skip


def jdbc_type(code: int | None) -> LogicalType:
    """Map a ``java.sql.Types`` code; unknown codes give ``unknown``."""
    if code is None:
        return UNKNOWN
    return _JDBC.get(code, UNKNOWN)


# MySQL binlog column type codes (as in DTS Avro ``dataTypeNumber``)
MYSQL_BINLOG_TYPES: Final[dict[int, tuple[str, LogicalType]]] = {
    0: ("DECIMAL", decimal_type(None, None)), 1: ("TINY", INT8), 2: ("SHORT", INT16),
    3: ("LONG", INT32), 4: ("FLOAT", FLOAT32), 5: ("DOUBLE", FLOAT64), 6: ("NULL", UNKNOWN),
    7: ("TIMESTAMP", TIMESTAMPTZ), 8: ("LONGLONG", INT64), 9: ("INT24", INT32),
    10: ("DATE", DATE), 11: ("TIME", TIME), 12: ("DATETIME", TIMESTAMP), 13: ("YEAR", INT16),
    14: ("NEWDATE", DATE), 15: ("VARCHAR", STRING), 16: ("BIT", BINARY), 17: ("TIMESTAMP2", TIMESTAMPTZ),
    18: ("DATETIME2", TIMESTAMP), 19: ("TIME2", TIME), 245: ("JSON", JSON),
    246: ("NEWDECIMAL", decimal_type(None, None)), 247: ("ENUM", STRING), 248: ("SET", STRING),
    249: ("TINY_BLOB", BINARY), 250: ("MEDIUM_BLOB", BINARY), 251: ("LONG_BLOB", BINARY),
    252: ("BLOB", BINARY), 253: ("VAR_STRING", STRING), 254: ("STRING", STRING),
    255: ("GEOMETRY", UNKNOWN),
}  # fmt: skip


def mysql_binlog_type(code: int | None) -> tuple[str, LogicalType]:
    """Name and logical type of a MySQL binlog type code."""
    if code is None:
        return ("?", UNKNOWN)
    return MYSQL_BINLOG_TYPES.get(code, (str(code), UNKNOWN))
