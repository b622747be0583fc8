"""Changelog rows: value texts and column structs, the fast way and the general way agree."""

from __future__ import annotations

import datetime as dt
import enum
import math
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from anycdc.changelog import (
    ColumnRowsCache,
    Coordinates,
    column_rows,
    event_to_row,
    value_text,
)
from anycdc.event import ChangeEvent, Column, Op, Position, dumps, value_to_json
from anycdc.values import DECIMAL, INT64, STRING, LogicalType, decimal_type
from tests.strategies import st_value


class Level(enum.IntEnum):
    LOW = 1


class Text(str):
    pass


def reference_text(value: Any) -> str | None:
    """The canonical JSON rendering of a value, as text (what value_text promises)."""
    if value is None:
        return None
    rendered = value_to_json(value)
    if isinstance(rendered, bool):
        return "true" if rendered else "false"
    if isinstance(rendered, float):
        return repr(rendered)
    if isinstance(rendered, (dict, list)):
        return dumps(rendered)
    return str(rendered)


ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**64, 10**30, Decimal("12.50"), Decimal("-0E-3"), Decimal("1E+5"),
    1.5, -0.0, 1e300, math.inf, "", "x", "é😀", b"", b"\x00\xff", bytearray(b"ab"),
    dt.date(2024, 2, 29), dt.time(1, 2, 3, 4), dt.datetime(2024, 1, 1, 0, 0, 1, 12345),
    dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=8))),
    {"a": [1, Decimal("2.0")]}, [1, "a"], Level.LOW, Text("sub"),
]  # fmt: skip
TYPES = [
    LogicalType(n)
    for n in ("int64", "int8", "integer", "float64", "boolean", "string", "binary", "date")
] + [LogicalType("time"), LogicalType("timestamp"), LogicalType("timestamptz"), decimal_type(20, 4)]


def test_value_text_matches_the_canonical_rendering_for_odd_values() -> None:
    for value in ODD_VALUES:
        if isinstance(value, float) and not math.isfinite(value):
            assert value_text(value) == repr(value)  # Spark casts 'inf' text
            continue
        assert value_text(value) == reference_text(value), value


@given(st.sampled_from(TYPES).flatmap(st_value))
def test_value_text_matches_the_canonical_rendering(value: Any) -> None:
    assert value_text(value) == reference_text(value)


def test_column_rows_cache_renders_each_mapping_once_and_never_confuses_two() -> None:
    cache = ColumnRowsCache(size=2)
    first = {"id": Column(INT64, "bigint"), "price": Column(decimal_type(10, 2), "decimal(10,2)")}
    rows = cache(first)
    assert rows == column_rows(first)
    assert rows[1] == {"name": "price", "type": "decimal(10,2)", "vendor_type": "decimal(10,2)"}
    assert cache(first) is rows  # the same mapping: rendered once
    equal_but_other = dict(first)
    assert cache(equal_but_other) == rows and cache(equal_but_other) is not rows
    for n in range(5):  # bounded: old entries leave, results stay right
        other = {f"c{n}": Column(STRING, "text")}
        assert cache(other) == column_rows(other)
    assert cache(first) == column_rows(first)
    assert cache(None) == [] == column_rows(None)


def test_event_row_is_the_same_with_and_without_the_cache() -> None:
    columns = {"id": Column(INT64, "bigint"), "total": Column(DECIMAL, "decimal")}
    event = ChangeEvent(
        op=Op.UPDATE, format="canal-json", database="shop", table="t", key=("id",),
        before={"id": 1, "total": Decimal("1.50")}, after={"id": 1, "total": None},
        columns=columns, position=Position((7,)), ts_ms=5,
    )  # fmt: skip
    where = Coordinates("topic", 2, 41, b"k", b"raw")
    plain = event_to_row(event, where, 0)
    cached = event_to_row(event, where, 0, ColumnRowsCache())
    assert plain == cached
    assert plain["before"] == {"id": "1", "total": "1.50"}
    assert plain["after"] == {"id": "1", "total": None}
    assert plain["columns"][1] == {"name": "total", "type": "decimal", "vendor_type": "decimal"}
