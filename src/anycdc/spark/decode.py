"""Raw records -> changelog rows, decoded in Python workers with ``mapInArrow``.

Input columns (both sources are brought to this shape by
:mod:`anycdc.spark.source`): ``source`` (topic or file), ``partition``,
``offset`` (Kafka offset or line), ``key`` and ``value`` (binary). Output: the
static :data:`anycdc.changelog.CHANGELOG_COLUMNS` schema; a message that fails
to decode becomes one row with ``error`` set (a dead letter), never a failed
task; a schema registry that cannot answer fails the task instead (Spark retries it, then
the batch fails) rather than dead-letter every message. One decoder and one split-update
pairer live per Spark partition and route (a Kafka partition keeps both halves of a split
update); the route — the format and options — is the run's, or the record's topic's
(:class:`~anycdc.source.routing.SourceRouting`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from anycdc.changelog import (
    CHANGELOG_COLUMNS,
    CHANGELOG_NAMES,
    ChangelogValues,
    ColumnRowsCache,
    Coordinates,
    error_row,
    event_to_row,
    event_values,
    row_values,
)
from anycdc.decoding import Found, MessageDecoder
from anycdc.errors import AnyCdcError, SchemaSourceError
from anycdc.event import ChangeEvent
from anycdc.pairing import SplitUpdatePairer
from anycdc.patch import PatchError, patch_as_partial_update
from anycdc.redact import Redactor
from anycdc.source.routing import DecodeRoute, SourceRouting
from anycdc.spark.local_rows import ddl_type

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

INPUT_COLUMNS = ("source", "partition", "offset", "key", "value", "produced_ms")
MESSAGE_RUN: Final = 64
"""Messages the decode stage takes through each of its steps before the next step: a run
is detected (auto mode), then decoded, then made rows. The same work as one message
through all three at a time, in less time, as code paths that take turns per message
evict each other from the processor's caches. The stage outside Spark (one core, 2,000
bench messages, CPU time): Debezium-JSON detected 42.5 -> 30 us a message and named 21.8
-> 19.3 us; Canal-JSON detected 23.2 -> 18.8 us and named 12.1 -> 11.1 us. (Detection
alone run ahead: runs of 16 gained less, of 256 and 1,024 no more.)"""


def changelog_schema() -> StructType:
    """The changelog's Spark schema, from :data:`~anycdc.changelog.CHANGELOG_COLUMNS`
    (without a Spark session: a Python worker and the pure tests build it too).

    >>> changelog_schema()["columns"].dataType.simpleString()
    'array<struct<name:string,type:string,vendor_type:string>>'
    """
    from pyspark.sql.types import StructField, StructType

    return StructType(
        [StructField(name, ddl_type(ddl), nullable=True) for name, ddl in CHANGELOG_COLUMNS]
    )


def changelog_arrow_schema() -> pa.Schema:
    """The changelog's Arrow schema (what ``mapInArrow`` hands back to Spark)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(changelog_schema())


RawRecord = tuple[str | None, int | None, int | None, bytes | None, bytes | None, int | None]
"""One raw record: the values of :data:`INPUT_COLUMNS`, in that order."""


class ChangelogRows:
    """Raw records -> changelog rows for one stream of records (a Spark partition).

    The decoder (with its per-schema caches), the split-update pairer and the
    column-struct cache live as long as the instance: feed :meth:`rows` as many
    times as there are chunks, then :meth:`flush` once for a before-half still held.

    The decoder gives images of canonical text where it can prove the text
    (:meth:`~anycdc.formats.base.Format.keep_canonical_text`: the Canal family's fast path
    keeps an integer's or a decimal's text as sent when it is the text its value renders
    as); ``canonical_text=False`` types every value (the reference: the rows are the same,
    tests/unit/test_text_images.py).
    """

    def __init__(
        self,
        format_id: str,
        options: Mapping[str, str],
        redactor: Redactor | None = None,
        *,
        canonical_text: bool = True,
    ) -> None:
        self.format_id = format_id
        self._redactor = redactor
        self._decoder = MessageDecoder(format_id, options, canonical_text=canonical_text)
        self._pairer = SplitUpdatePairer()
        self._columns = ColumnRowsCache()
        self._held: tuple[Coordinates, int] = (Coordinates("", 0, 0), 0)  # the held half's origin

    def rows(self, records: Iterable[RawRecord]) -> Iterator[dict[str, Any]]:
        """The changelog rows of ``records``, in order, by column name (a dead letter for
        a bad message): :meth:`values` with their names."""
        for values in self.values(records):
            yield dict(zip(CHANGELOG_NAMES, values, strict=True))

    def values(self, records: Iterable[RawRecord]) -> Iterator[ChangelogValues]:
        """The changelog rows of ``records``, in order, as :data:`ChangelogValues` (what
        the worker hands to Arrow)."""
        decoder, columns = self._decoder, self._columns
        redacted = self._redactor.row if self._redactor is not None else None
        pending = iter(records)
        while run := list(itertools.islice(pending, MESSAGE_RUN)):
            # each step over the run, then the next: faster than in turns (MESSAGE_RUN)
            ahead = decoder.detect_ahead([record[4] for record in run])
            decoded = [
                self._decoded(record, found) for record, found in zip(run, ahead, strict=True)
            ]
            for (source, partition, offset, key, value, produced), events in zip(
                run, decoded, strict=True
            ):
                where = Coordinates(
                    source or "", int(partition or 0), int(offset or 0), key, value, produced
                )
                if isinstance(events, tuple):  # a dead letter: (format, reason)
                    yield row_values(error_row(where, *events))
                    continue
                for index, event in enumerate(events):
                    for ready in self._pairer.push(event):
                        # a flushed lone before-half keeps its own coordinates; a joined
                        # update takes those of its after-half (the message that completed it)
                        lone = ready.split == "before" and ready is not event
                        origin = self._held if lone else (where, index)
                        try:
                            ready = patch_as_partial_update(ready)
                        except PatchError as exc:
                            row = error_row(origin[0], ready.format, str(exc))
                            if redacted is not None:  # its table's: no raw message
                                row.update(database=ready.database, schema=ready.schema)
                                row = redacted({**row, "table": ready.table})
                                row.update(database=None, schema=None, table=None)
                            yield row_values(row)
                            continue
                        if redacted is not None:
                            yield row_values(redacted(event_to_row(ready, *origin, columns)))
                        else:
                            yield event_values(ready, *origin, columns)
                    if event.split == "before":
                        self._held = (where, index)

    def _decoded(
        self, record: RawRecord, found: Found | None
    ) -> list[ChangeEvent] | tuple[str, str]:
        """A message's events, or the format and reason of its dead letter."""
        try:
            return self._decoder.decode(record[4], record[3], found)[1]
        except SchemaSourceError:
            raise  # the registry, not the message: fail the task (retried), no dead letters
        except AnyCdcError as exc:
            return getattr(exc, "format_id", self.format_id), str(exc)
        except Exception as exc:
            return self.format_id, f"internal decoder error: {type(exc).__name__}: {exc}"

    def flush(self) -> Iterator[dict[str, Any]]:
        """The row of a before-half still waiting for its after-half (at the stream's end)."""
        for values in self.flush_values():
            yield dict(zip(CHANGELOG_NAMES, values, strict=True))

    def flush_values(self) -> Iterator[ChangelogValues]:
        """:meth:`flush` as :data:`ChangelogValues`."""
        for ready in self._pairer.flush():
            row = event_to_row(ready, *self._held, self._columns)
            yield row_values(self._redactor.row(row) if self._redactor is not None else row)


def decode_rows(
    records: Iterable[RawRecord],
    format_id: str | SourceRouting,
    options: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> Iterator[dict[str, Any]]:
    """Decode raw records into changelog rows by column name, in order
    (:func:`decode_values` with their names)."""
    for values in decode_values(records, format_id, options, redactor):
        yield dict(zip(CHANGELOG_NAMES, values, strict=True))


def decode_values(
    records: Iterable[RawRecord],
    format_id: str | SourceRouting,
    options: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> Iterator[ChangelogValues]:
    """Decode raw records into changelog rows (:data:`~anycdc.changelog.ChangelogValues`),
    in order: one :class:`ChangelogRows` per route (``format_id`` and ``options``, or a
    :class:`SourceRouting`'s per source); ``redactor``: the ``tables:`` entries' excluded
    and masked columns."""
    routing = (
        format_id
        if isinstance(format_id, SourceRouting)
        else SourceRouting.single(format_id, options or {})
    )
    stages: dict[DecodeRoute, ChangelogRows] = {}
    runs: Iterable[tuple[DecodeRoute, Iterable[RawRecord]]]
    if routing.per_topic:
        # a file source's records name their file: parse each path once, not once per line
        routes: dict[str, DecodeRoute] = {}

        def route_of(record: RawRecord) -> DecodeRoute:
            source = record[0] or ""
            route = routes.get(source)
            if route is None:
                route = routes[source] = routing.route(source)
            return route

        runs = itertools.groupby(records, key=route_of)
    else:
        runs = iter([(routing.default, iter(records))])
    for route, run in runs:
        stage = stages.get(route)
        if stage is None:
            stage = stages[route] = ChangelogRows(route.format, route.option_map, redactor)
        yield from stage.values(run)
    for stage in stages.values():
        yield from stage.flush_values()


ARROW_CHUNK_ROWS = 2048
"""Changelog rows per Arrow batch a worker hands back to Spark."""

_COLUMNS_AT: Final = CHANGELOG_NAMES.index("columns")
_IMAGES_AT: Final = tuple(CHANGELOG_NAMES.index(name) for name in ("before", "after"))


def arrow_batch(chunk: Sequence[ChangelogValues], schema: pa.Schema) -> pa.RecordBatch:
    """Changelog rows as one Arrow batch of ``schema`` (the changelog's), built column by
    column. The rows of one schema share their ``columns`` list (:class:`ColumnRowsCache`),
    so each distinct list is converted once and the column taken from those by index.

    >>> import pyarrow as pa
    >>> from anycdc.changelog import Coordinates, error_row, row_values
    >>> schema = changelog_arrow_schema()
    >>> rows = [row_values(error_row(Coordinates("t", 0, n), "canal-json", "bad")) for n in (4, 5)]
    >>> arrow_batch(rows, schema).column("offset").to_pylist()
    [4, 5]
    """
    import pyarrow as pa

    columns: list[Sequence[Any]] = (
        list(zip(*chunk, strict=True)) if chunk else [()] * len(CHANGELOG_NAMES)
    )
    if not _arrow_takes_dict_maps():  # older pyarrow: a map is a list of (key, value) pairs
        for at in _IMAGES_AT:
            columns[at] = [None if m is None else list(m.items()) for m in columns[at]]
    arrays = []
    for at, field in enumerate(schema):
        if at == _COLUMNS_AT:
            index: dict[int, int] = {}
            distinct: list[Any] = []
            picks = []
            for value in columns[at]:
                pick = index.get(id(value))
                if pick is None:
                    pick = index[id(value)] = len(distinct)
                    distinct.append(value)
                picks.append(pick)
            unique = pa.array(distinct, type=field.type)
            arrays.append(unique.take(pa.array(picks, type=pa.int32())))
        else:
            arrays.append(pa.array(columns[at], type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _arrow_mapper(
    routing: SourceRouting,
    schema: StructType,
    redactor: Redactor | None = None,
    tally: bool = False,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        from anycdc.spark.tally import BatchTally

        arrow_schema = to_arrow_schema(schema)
        counted = BatchTally() if tally else None

        def records() -> Iterator[RawRecord]:
            for batch in batches:  # column by column: no dict per record
                yield from zip(
                    *(batch.column(name).to_pylist() for name in INPUT_COLUMNS), strict=True
                )

        chunk: list[ChangelogValues] = []
        see = counted.see if counted is not None else None
        for values in decode_values(records(), routing, redactor=redactor):
            chunk.append(values)
            if see is not None:
                see(values)
            if len(chunk) >= ARROW_CHUNK_ROWS:
                yield arrow_batch(chunk, arrow_schema)
                chunk = []
        if counted is not None:  # the task's counts: one marker row, after its rows
            chunk.append(counted.marker())
        if chunk:
            yield arrow_batch(chunk, arrow_schema)

    return decode_batches


@functools.cache
def _arrow_takes_dict_maps() -> bool:
    """Whether this pyarrow builds a map from a dict (recent ones do; a cluster's may not)."""
    import pyarrow as pa

    try:
        built = pa.array([{"k": "v"}], type=pa.map_(pa.string(), pa.string()))
    except (TypeError, pa.ArrowException):
        return False
    return bool(built.to_pylist() == [[("k", "v")]])


def decode_frame(
    raw: DataFrame,
    routing: SourceRouting,
    redactor: Redactor | None = None,
    tally: bool = False,
) -> DataFrame:
    """Decode a DataFrame of raw records into changelog rows (dead letters included),
    redacted by ``redactor`` (:mod:`anycdc.redact`) before they leave the Python worker.
    ``tally``: each task adds one row of op :data:`~anycdc.spark.tally.TALLY_OP` after its
    rows, its :class:`~anycdc.spark.tally.BatchTally` (the single-pass ingest's counts)."""
    from pyspark.sql import functions as F

    schema = changelog_schema()
    if "produced_ms" not in raw.columns:  # a source without record times (a replay)
        raw = raw.withColumn("produced_ms", F.lit(None).cast("bigint"))
    mapper = _arrow_mapper(routing, schema, redactor, tally)
    return raw.select(*INPUT_COLUMNS).mapInArrow(mapper, schema)
