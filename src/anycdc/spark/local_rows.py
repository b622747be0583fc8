"""Rows the driver holds -> a DataFrame the driver holds, without a Python worker.

PySpark's ``createDataFrame(rows, schema)`` hands the pickled rows to a Python worker:
every query of such a frame (the broadcast of a round's small spec, a batch record's
append) runs Python tasks, and a run's first one starts the workers of that path (~1 s a
task on a cold JVM). :func:`local_frame` writes the rows as one ``VALUES`` table of SQL
literals instead, which Spark resolves to a local relation on the driver: a collect of it
runs no Spark job, and its broadcast or write a job without Python tasks. Rows of a
longer text than Spark parses quickly (:data:`LOCAL_TEXT_MAX`) go through
``createDataFrame`` still.

Values are data (names come from messages): each is a literal of its column's type,
strings quoted by :func:`~anycdc.spark.merge_sql.lit`, never SQL text of their own.
The schemas are DDL texts, parsed here without a Spark session (:func:`ddl_type`), as
the Python workers need the changelog's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

LOCAL_TEXT_MAX: Final = 16_384
"""The longest ``VALUES`` text :func:`local_frame` hands to Spark's parser. Its cost grows
with the text: a query broadcasting a round's spec (warm, A B alternating) took the same
either way at 10 tables (0.35 s, 8.8 thousand characters), 0.39-0.51 s against 0.30-0.40 s
at 50 (43 thousand) and 0.70-0.85 s against 0.31-0.35 s at 500 (426 thousand). What a
local relation saves is the first Python job of a process (~1 s), which a small frame
(a batch's record) meets first."""

_SIMPLE_TYPES: Final = (
    "STRING", "INT", "BIGINT", "BINARY", "BOOLEAN", "DOUBLE", "TIMESTAMP",
)  # fmt: skip


def ddl_type(ddl: str) -> DataType:
    """A Spark type of a DDL text (the simple types above, ``ARRAY<T>``, ``MAP<K,V>``,
    ``STRUCT<name: T, ...>``), nullable throughout, as ``StructType.fromDDL`` makes it.

    >>> ddl_type("ARRAY<STRUCT<name: STRING, n: BIGINT>>").simpleString()
    'array<struct<name:string,n:bigint>>'
    """
    from pyspark.sql import types as T

    ddl = ddl.strip()
    upper = ddl.upper()
    if upper in _SIMPLE_TYPES:
        return {
            "STRING": T.StringType(),
            "INT": T.IntegerType(),
            "BIGINT": T.LongType(),
            "BINARY": T.BinaryType(),
            "BOOLEAN": T.BooleanType(),
            "DOUBLE": T.DoubleType(),
            "TIMESTAMP": T.TimestampType(),
        }[upper]
    outer, _, rest = ddl.partition("<")
    if not rest.endswith(">"):
        raise ValueError(f"column type {ddl!r}: not one anycdc's tables use")
    inner = _top_level_split(rest[:-1])
    kind = outer.strip().upper()
    if kind == "ARRAY" and len(inner) == 1:
        return T.ArrayType(ddl_type(inner[0]), containsNull=True)
    if kind == "MAP" and len(inner) == 2:
        return T.MapType(ddl_type(inner[0]), ddl_type(inner[1]), valueContainsNull=True)
    if kind == "STRUCT":
        fields = [field.split(":", 1) for field in inner]
        return T.StructType(
            [T.StructField(name.strip(), ddl_type(kind), True) for name, kind in fields]
        )
    raise ValueError(f"column type {ddl!r}: not one anycdc's tables use")


def ddl_struct(schema: str) -> StructType:
    """The columns of a DDL text ``name TYPE, ...``.

    >>> ddl_struct("_t STRING, keys ARRAY<STRING>, n BIGINT").names
    ['_t', 'keys', 'n']
    """
    from pyspark.sql.types import StructField, StructType

    columns = [part.strip().split(None, 1) for part in _top_level_split(schema)]
    return StructType([StructField(name, ddl_type(kind), True) for name, kind in columns])


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside angle brackets."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += {"<": 1, ">": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return parts


def values_sql(rows: Iterable[Sequence[Any]], struct: StructType) -> str:
    """The query of :func:`local_frame`: ``rows`` as literals of ``struct``'s types.

    >>> print(values_sql([("it's", 7, ["a"])], ddl_struct("s STRING, n BIGINT, l ARRAY<STRING>")))
    SELECT `s`, `n`, `l` FROM VALUES ('it\\'s', CAST(7 AS bigint), CAST(ARRAY('a') AS array<string>)) AS t(`s`, `n`, `l`)
    >>> print(values_sql([], ddl_struct("s STRING")))
    SELECT `s` FROM VALUES (CAST(NULL AS string)) AS t(`s`) WHERE false
    """
    from anycdc.spark.merge_sql import q

    names = ", ".join(q(field.name) for field in struct.fields)
    values = [_row_sql(row, struct) for row in rows]
    if not values:  # VALUES needs a row: one of NULLs, filtered out (an empty local relation)
        nulls = _row_sql([None] * len(struct.fields), struct)
        return f"SELECT {names} FROM VALUES {nulls} AS t({names}) WHERE false"
    return f"SELECT {names} FROM VALUES {', '.join(values)} AS t({names})"


def _row_sql(row: Sequence[Any], struct: StructType) -> str:
    """One row of ``VALUES``: ``(literal, ...)``."""
    return (
        "("
        + ", ".join(_literal(v, f.dataType) for v, f in zip(row, struct.fields, strict=True))
        + ")"
    )


def local_frame(spark: SparkSession, rows: Iterable[Sequence[Any]], schema: str) -> DataFrame:
    """``rows`` (tuples in the order of ``schema``'s columns, a DDL text) as a DataFrame of
    ``schema``'s columns and types, held by the driver (see the module docstring); rows
    whose literals exceed :data:`LOCAL_TEXT_MAX` characters through ``createDataFrame``."""
    rows = list(rows)
    text = values_sql(rows, ddl_struct(schema))
    if len(text) > LOCAL_TEXT_MAX:
        return spark.createDataFrame(rows, schema)
    return spark.sql(text)


def _literal(value: Any, kind: DataType) -> str:
    """``value`` as a SQL literal of the Spark type ``kind``."""
    from pyspark.sql import types as T

    from anycdc.spark.merge_sql import lit, null_of_sql

    type_sql = kind.simpleString()
    if value is None:
        return null_of_sql(type_sql)
    if isinstance(kind, T.StringType):
        return lit(str(value))
    if isinstance(kind, T.BooleanType):
        return "true" if value else "false"
    if isinstance(kind, (T.LongType, T.IntegerType)):
        return f"CAST({int(value)} AS {type_sql})"
    if isinstance(kind, T.DoubleType):  # Spark's cast reads Python's "inf" and "nan" too
        return f"CAST({lit(str(float(value)))} AS {type_sql})"
    if isinstance(kind, T.BinaryType):
        return f"X'{bytes(value).hex()}'"
    if isinstance(kind, T.ArrayType):
        items = ", ".join(_literal(item, kind.elementType) for item in value)
        return f"CAST(ARRAY({items}) AS {type_sql})"
    if isinstance(kind, T.MapType):
        pairs = ", ".join(
            f"{_literal(k, kind.keyType)}, {_literal(v, kind.valueType)}" for k, v in value.items()
        )
        return f"CAST(MAP({pairs}) AS {type_sql})"
    if isinstance(kind, T.StructType):
        fields = value if isinstance(value, dict) else dict(zip(kind.names, value, strict=True))
        parts = ", ".join(
            f"{lit(f.name)}, {_literal(fields.get(f.name), f.dataType)}" for f in kind.fields
        )
        return f"NAMED_STRUCT({parts})"
    raise TypeError(f"no literal of a {type_sql} value")
