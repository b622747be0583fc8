"""Canonical events flattened into changelog rows: one static schema for every table.

The pipeline decodes raw messages into these rows (in Python, inside Spark),
then types and applies them per table in the JVM. Images become
``map<string,string>`` of canonical value text, so a column that is absent
from an image (a partial update) stays distinguishable from an explicit NULL.

The text of a value is :func:`value_text` of its typed value. The decode stage asks its
decoder for images already in that text where the decoder can prove it
(:class:`CanonicalImage`: the Canal family's fast path keeps an integer's, a decimal's,
a boolean's, a date's or a time's text as sent when it is the text its value renders as, see
:class:`anycdc.formats.fastpath.TextRows`); such an image is copied as it is. The events
other users get (``anycdc decode``, the library) stay typed.

>>> from anycdc.event import ChangeEvent, Column, Op, Position
>>> from anycdc.values import INT64, STRING
>>> e = ChangeEvent(op=Op.INSERT, format="canal-json", database="shop", table="t", key=("id",),
...                 after={"id": 7, "name": "a"}, columns={"id": Column(INT64, "bigint"), "name": Column(STRING)},
...                 position=Position((58,)))
>>> row = event_to_row(e, Coordinates("topic", 0, 41), 0)
>>> row["after"], row["position"], row["columns"][0]
({'id': '7', 'name': 'a'}, '0258', {'name': 'id', 'type': 'int64', 'vendor_type': 'bigint'})
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final, NamedTuple

from anycdc.event import TX_TABLE_EVENTS, ChangeEvent, Column, Op, dumps, value_to_json
from anycdc.values import format_datetime, format_time

# (name, type) in Spark SQL DDL; the Spark layer builds its StructType from this
CHANGELOG_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("source", "STRING"),  # Kafka topic, or the file a message came from
    ("partition", "INT"),  # Kafka partition (0 for files)
    ("offset", "BIGINT"),  # Kafka offset, or the line number in the file
    ("event_index", "INT"),  # index of the event within its message (Canal arrays)
    ("kafka_key", "BINARY"),
    ("raw", "BINARY"),  # the message value as received
    ("format", "STRING"),
    ("op", "STRING"),
    ("database", "STRING"),
    ("schema", "STRING"),
    ("table", "STRING"),
    ("key", "ARRAY<STRING>"),
    ("before", "MAP<STRING,STRING>"),
    ("after", "MAP<STRING,STRING>"),
    ("columns", "ARRAY<STRUCT<name: STRING, type: STRING, vendor_type: STRING>>"),
    ("position", "STRING"),  # Position.sort_key(): byte order = source order
    ("ts_ms", "BIGINT"),
    ("tx", "STRING"),
    ("ddl", "STRING"),
    ("partial", "ARRAY<STRING>"),
    ("split", "STRING"),
    ("invalid", "ARRAY<STRING>"),
    ("patch", "STRING"),  # MongoDB update operators as JSON
    ("row_id", "STRING"),
    ("error", "STRING"),  # set on dead letters only
    ("produced_ms", "BIGINT"),  # the Kafka record's timestamp (NULL for files): staleness
    # a COMMIT's row events per table (event.TX_TABLE_EVENTS), NULL elsewhere: a cut waits
    # for that many rows of its transaction (the last column: older changelogs gain it)
    ("tx_table_events", "MAP<STRING,BIGINT>"),
)


class Coordinates(NamedTuple):
    """Where a message came from: (topic | file, partition, offset | line).

    A named tuple: the decode stage builds one per message (a frozen dataclass costs
    several times more to build)."""

    source: str
    partition: int
    offset: int
    kafka_key: bytes | None = None
    raw: bytes | None = None
    produced_ms: int | None = None
    """The Kafka record's timestamp (its producer's, or the broker's append time, as the
    topic says), Unix ms; None for a file's line."""


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


# the common value types by exact type (the decode stage renders every value of every
# event); anything else, subclasses included, goes through the checks of value_text
_TEXT_BY_TYPE: Final[Mapping[type, Callable[[Any], str | None]]] = {
    str: str,
    int: int.__str__,
    Decimal: Decimal.__str__,
    float: float.__repr__,
    bool: _bool_text,
    type(None): lambda _: None,
    dt.datetime: format_datetime,
    dt.date: dt.date.isoformat,
    dt.time: format_time,
    bytes: lambda value: base64.b64encode(value).decode("ascii"),
}


def value_text(value: Any) -> str | None:
    """A typed value as the text the Spark layer casts from (canonical JSON rendering)."""
    render = _TEXT_BY_TYPE.get(type(value))
    if render is not None:
        return render(value)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list, tuple, Mapping)):
        return dumps(value_to_json(value))
    if isinstance(value, (dt.date, dt.time, bytes, bytearray, memoryview)):
        rendered = value_to_json(value)
        return str(rendered)
    return str(value_to_json(value))


class CanonicalImage(dict[str, str | None]):
    """An image whose values are already their canonical text (:func:`value_text`), or None.

    A decoder asked for canonical text (:meth:`anycdc.formats.base.Format.keep_canonical_text`,
    which only the changelog stage asks: :class:`anycdc.spark.decode.ChangelogRows`) gives
    such images where it can prove the text (:class:`anycdc.formats.fastpath.TextRows`): each
    value is the text as sent where it is the canonical text of the value the format's
    typing gives (:data:`anycdc.values.CANONICAL_DECIMAL` ...), else that value rendered by
    :func:`value_text`. :func:`event_values` copies it as it is, where it renders the values
    of any other image one by one; the rows are the same (tests/unit/test_text_images.py).
    """

    __slots__ = ()


def _image(image: Mapping[str, Any] | None) -> dict[str, str | None] | None:
    if image is None:
        return None
    if type(image) is CanonicalImage:
        return dict(image)
    by_type = _TEXT_BY_TYPE
    out: dict[str, str | None] = {}
    for name, value in image.items():
        render = by_type.get(type(value))
        out[name] = render(value) if render is not None else value_text(value)
    return out


def column_rows(columns: Mapping[str, Column] | None) -> list[dict[str, Any]]:
    """An event's ``columns`` as changelog structs (name, type, vendor type)."""
    return [
        {"name": name, "type": str(col.type), "vendor_type": col.vendor_type}
        for name, col in (columns or {}).items()
    ]


class ColumnRowsCache:
    """:func:`column_rows` by the identity of the ``columns`` mapping.

    A decoder hands the events of one schema the same (read-only) mapping, so a
    stream renders each schema's columns once instead of once per event. Entries
    hold their mapping, so an id is never reused while cached; bounded, oldest out.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._rows: dict[int, tuple[Mapping[str, Column], list[dict[str, Any]]]] = {}

    def __call__(self, columns: Mapping[str, Column] | None) -> list[dict[str, Any]]:
        if columns is None:
            return []
        hit = self._rows.get(id(columns))
        if hit is not None and hit[0] is columns:
            return hit[1]
        rows = column_rows(columns)
        if len(self._rows) >= self._size:
            del self._rows[next(iter(self._rows))]
        self._rows[id(columns)] = (columns, rows)
        return rows


CHANGELOG_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in CHANGELOG_COLUMNS)

ChangelogValues = tuple[Any, ...]
"""One changelog row's values in :data:`CHANGELOG_COLUMNS` order (what the decode stage
hands to Arrow: a tuple per row costs less than a dict, and the columns are taken apart in
C, not looked up by name per row)."""


def event_values(
    event: ChangeEvent,
    where: Coordinates,
    index: int,
    columns: Callable[[Mapping[str, Column] | None], list[dict[str, Any]]] = column_rows,
) -> ChangelogValues:
    """One changelog row of an event, as :data:`ChangelogValues` (``columns``: how to render
    its columns, e.g. a :class:`ColumnRowsCache`; the rows it gives are shared, never
    mutated). The one mapping from an event to its row: :func:`event_to_row` names it."""
    position = event.position
    patch = event.patch
    return (
        where.source,
        where.partition,
        where.offset,
        index,
        where.kafka_key,
        where.raw,
        event.format,
        event.op.value,
        event.database,
        event.schema,
        event.table,
        list(event.key) if event.key is not None else None,
        _image(event.before),
        _image(event.after),
        columns(event.columns),
        position.sort_key() if position is not None else None,
        event.ts_ms,
        event.tx,
        event.ddl,
        list(event.partial),
        event.split,
        list(event.invalid),
        dumps(value_to_json(patch)) if patch is not None else None,
        event.row_id,
        None,  # error: set on dead letters only
        where.produced_ms,
        event.extra.get(TX_TABLE_EVENTS) if event.op is Op.COMMIT else None,
    )


def event_to_row(
    event: ChangeEvent,
    where: Coordinates,
    index: int,
    columns: Callable[[Mapping[str, Column] | None], list[dict[str, Any]]] = column_rows,
) -> dict[str, Any]:
    """One changelog row of an event, by column name (:func:`event_values`)."""
    return dict(zip(CHANGELOG_NAMES, event_values(event, where, index, columns), strict=True))


def row_values(row: Mapping[str, Any]) -> ChangelogValues:
    """A changelog row by column name (:func:`event_to_row`, :func:`error_row`) as
    :data:`ChangelogValues`.

    >>> row_values(error_row(Coordinates("t", 0, 5), "canal-json", "bad"))[2]
    5
    """
    return tuple(row[name] for name in CHANGELOG_NAMES)


def error_row(where: Coordinates, format_id: str, error: str) -> dict[str, Any]:
    """A dead-letter row: the raw message, its coordinates, the format tried, the reason."""
    row: dict[str, Any] = dict.fromkeys(CHANGELOG_NAMES)
    row.update(
        source=where.source,
        partition=where.partition,
        offset=where.offset,
        event_index=0,
        kafka_key=where.kafka_key,
        raw=where.raw,
        format=format_id,
        error=error,
        produced_ms=where.produced_ms,
        partial=[],
        invalid=[],
        columns=[],
    )
    return row
