"""Hypothesis strategies for canonical events: tables, typed values, row changes.

Formats differ in what they can express, so every strategy takes the logical
types (and options) a format supports. Example, in a format's test module::

    @given(st_events("canal-json", types=CANAL_TYPES))
    def test_round_trip(event): assert decode(encode(event)) == [event]
"""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import INTEGER_RANGES, LogicalType

IDENT = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=10).filter(
    lambda s: s[0] != "_"
)
UNICODE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=30,
)


GARBAGE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.decimals(allow_nan=False),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3)
    ),
    max_leaves=12,
)
"""Any JSON-ish value (a few leaves): what a decoder must turn into events or DecodeErrors."""


def st_decimal(precision: int = 38, scale: int = 10) -> st.SearchStrategy[Decimal]:
    whole = precision - scale
    return (
        st.integers(-(10**precision) + 1, 10**precision - 1).map(
            lambda n: Decimal(n).scaleb(-scale)
        )
        if whole >= 0
        else st.just(Decimal(0))
    )


def st_json_value(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """A value as an untyped JSON format carries it (what ``parse_json`` gives): null,
    booleans, integers beyond 64 bits, exact decimals, text, and arrays/objects of them."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st_decimal(30, 6), UNICODE_TEXT
    )
    return st.recursive(
        scalars,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(IDENT, kids, max_size=3),
        max_leaves=max_leaves,
    )


def st_datetime(
    micros: bool = True, tz: dt.tzinfo | None = None, millis_only: bool = False
) -> st.SearchStrategy[dt.datetime]:
    base = st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2200, 1, 1))
    if millis_only:
        base = base.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
    elif not micros:
        base = base.map(lambda d: d.replace(microsecond=0))
    if tz is not None:
        base = base.map(lambda d: d.replace(tzinfo=tz))
    return base


def st_value(ltype: LogicalType, **opts: Any) -> st.SearchStrategy[Any]:
    """Values of one logical type; ``opts`` narrow them (millis_only, tz, ...)."""
    name = ltype.name
    if name in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[name]
        return st.integers(lo, hi)
    if name == "integer":
        return st.integers(-(10**30), 10**30)
    if name == "decimal":
        return st_decimal(ltype.precision or 30, ltype.scale if ltype.scale is not None else 6)
    if name == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if name == "float32":
        return st.floats(width=32, allow_nan=False, allow_infinity=False)
    if name == "boolean":
        return st.booleans()
    if name == "string":
        return UNICODE_TEXT
    if name == "binary":
        return st.binary(max_size=20)
    if name == "date":
        return st.dates(min_value=dt.date(1971, 1, 1), max_value=dt.date(2200, 1, 1))
    if name == "time":
        return st.times()
    if name == "timestamp":
        return st_datetime(
            micros=opts.get("micros", True), millis_only=opts.get("millis_only", False)
        )
    if name == "timestamptz":
        return st_datetime(
            micros=opts.get("micros", True),
            tz=opts.get("tz", dt.UTC),
            millis_only=opts.get("millis_only", False),
        )
    if name == "json":
        return st.sampled_from(['{"a":1}', "[1,2,3]", '{"k":"v","n":null}', "null"])
    raise ValueError(f"no strategy for {ltype}")


@dataclass(frozen=True)
class Table:
    database: str
    table: str
    columns: dict[str, Column]
    key: tuple[str, ...]


def st_table(
    types: Sequence[LogicalType],
    column: Callable[[LogicalType], Column] = Column,
    max_columns: int = 6,
    key_types: Sequence[LogicalType] | None = None,
) -> st.SearchStrategy[Table]:
    """A table whose first column is an integer-ish key and whose others use ``types``."""

    @st.composite
    def build(draw: st.DrawFn) -> Table:
        names = draw(st.lists(IDENT, min_size=2, max_size=max_columns, unique=True))
        key_type = draw(st.sampled_from(list(key_types or [LogicalType("int64")])))
        cols = {names[0]: column(key_type)}
        for name in names[1:]:
            cols[name] = column(draw(st.sampled_from(list(types))))
        return Table(draw(IDENT), draw(IDENT), cols, (names[0],))

    return build()


def st_row(table: Table, **opts: Any) -> st.SearchStrategy[dict[str, Any]]:
    parts = {
        name: (
            st_value(col.type, **opts)
            if name in table.key
            else st.one_of(st.none(), st_value(col.type, **opts))
        )
        for name, col in table.columns.items()
    }
    return st.fixed_dictionaries(parts)


def st_row_event(
    format_id: str,
    types: Sequence[LogicalType],
    ops: Sequence[Op] = (Op.INSERT, Op.UPDATE, Op.DELETE),
    column: Callable[[LogicalType], Column] = Column,
    position: Callable[[int], Position | None] = lambda n: Position((n,)),
    **opts: Any,
) -> st.SearchStrategy[ChangeEvent]:
    """A row change event with full images, as most formats can express."""

    @st.composite
    def build(draw: st.DrawFn) -> ChangeEvent:
        table = draw(st_table(types, column))
        op = draw(st.sampled_from(list(ops)))
        row = draw(st_row(table, **opts))
        before = after = None
        if op in (Op.INSERT, Op.SNAPSHOT):
            after = row
        elif op is Op.DELETE:
            before = row
        else:
            before = row
            after = {**row, **draw(st_row(table, **opts))}
            for k in table.key:
                after[k] = row[k]
        return ChangeEvent(
            op=op,
            format=format_id,
            database=table.database,
            table=table.table,
            key=table.key,
            before=before,
            after=after,
            columns=table.columns,
            ts_ms=draw(st.integers(0, 2**41)),
            position=position(draw(st.integers(1, 2**62))),
        )

    return build()
