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
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from anycdc.changelog import (
    CHANGELOG_COLUMNS,
    ColumnRowsCache,
    Coordinates,
    error_row,
    event_to_row,
)
from anycdc.decoding import MessageDecoder
from anycdc.errors import AnyCdcError, SchemaSourceError
from anycdc.pairing import SplitUpdatePairer
from anycdc.patch import PatchError, patch_as_partial_update
from anycdc.redact import Redactor
from anycdc.source.routing import DecodeRoute, SourceRouting

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

INPUT_COLUMNS = ("source", "partition", "offset", "key", "value", "produced_ms")


def changelog_schema() -> StructType:
    from pyspark.sql.types import StructType

    ddl = ", ".join(f"`{name}` {kind}" for name, kind in CHANGELOG_COLUMNS)
    schema = StructType.fromDDL(ddl)
    assert isinstance(schema, StructType)
    return schema


RawRecord = tuple[str | None, int | None, int | None, bytes | None, bytes | None, int | None]
"""One raw record: the values of :data:`INPUT_COLUMNS`, in that order."""


class ChangelogRows:
    """Raw records -> changelog rows for one stream of records (a Spark partition).

    The decoder (with its per-schema caches), the split-update pairer and the
    column-struct cache live as long as the instance: feed :meth:`rows` as many
    times as there are chunks, then :meth:`flush` once for a before-half still held.
    """

    def __init__(
        self, format_id: str, options: Mapping[str, str], redactor: Redactor | None = None
    ) -> None:
        self.format_id = format_id
        self._redactor = redactor
        self._decoder = MessageDecoder(format_id, options)
        self._pairer = SplitUpdatePairer()
        self._columns = ColumnRowsCache()
        self._held: tuple[Coordinates, int] = (Coordinates("", 0, 0), 0)  # the held half's origin

    def rows(self, records: Iterable[RawRecord]) -> Iterator[dict[str, Any]]:
        """The changelog rows of ``records``, in order (a dead letter for a bad message)."""
        format_id, decoder, columns = self.format_id, self._decoder, self._columns
        redacted = self._redactor.row if self._redactor is not None else None
        for source, partition, offset, key, value, produced in records:
            where = Coordinates(
                source or "", int(partition or 0), int(offset or 0), key, value, produced
            )
            try:
                _, events = decoder.decode(value, key)
            except SchemaSourceError:
                raise  # the registry, not the message: fail the task (retried), no dead letters
            except AnyCdcError as exc:
                yield error_row(where, getattr(exc, "format_id", format_id), str(exc))
                continue
            except Exception as exc:
                yield error_row(
                    where, format_id, f"internal decoder error: {type(exc).__name__}: {exc}"
                )
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
                        yield row
                        continue
                    row = event_to_row(ready, *origin, columns)
                    yield redacted(row) if redacted is not None else row
                if event.split == "before":
                    self._held = (where, index)

    def flush(self) -> Iterator[dict[str, Any]]:
        """The row of a before-half still waiting for its after-half (at the stream's end)."""
        for ready in self._pairer.flush():
            row = event_to_row(ready, *self._held, self._columns)
            yield self._redactor.row(row) if self._redactor is not None else row


def decode_rows(
    records: Iterable[RawRecord],
    format_id: str | SourceRouting,
    options: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> Iterator[dict[str, Any]]:
    """Decode raw records into changelog rows, in order: one :class:`ChangelogRows` per
    route (``format_id`` and ``options``, or a :class:`SourceRouting`'s per source);
    ``redactor``: the ``tables:`` entries' excluded and masked columns."""
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
        yield from stage.rows(run)
    for stage in stages.values():
        yield from stage.flush()


def _arrow_mapper(
    routing: SourceRouting, schema: StructType, redactor: Redactor | None = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow_schema = to_arrow_schema(schema)

        def records() -> Iterator[RawRecord]:
            for batch in batches:  # column by column: no dict per record
                yield from zip(
                    *(batch.column(name).to_pylist() for name in INPUT_COLUMNS), strict=True
                )

        ready = _arrow_ready if not _arrow_takes_dict_maps() else None
        chunk: list[dict[str, Any]] = []
        for row in decode_rows(records(), routing, redactor=redactor):
            chunk.append(ready(row) if ready is not None else row)
            if len(chunk) >= 2048:
                yield pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)
                chunk = []
        if chunk:
            yield pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)

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


def _arrow_ready(row: dict[str, Any]) -> dict[str, Any]:
    # older pyarrow: a map is a list of (key, value) pairs
    for name in ("before", "after"):
        image = row[name]
        if image is not None:
            row[name] = list(image.items())
    return row


def decode_frame(
    raw: DataFrame, routing: SourceRouting, redactor: Redactor | None = None
) -> DataFrame:
    """Decode a DataFrame of raw records into changelog rows (dead letters included),
    redacted by ``redactor`` (:mod:`anycdc.redact`) before they leave the Python worker."""
    from pyspark.sql import functions as F

    schema = changelog_schema()
    if "produced_ms" not in raw.columns:  # a source without record times (a replay)
        raw = raw.withColumn("produced_ms", F.lit(None).cast("bigint"))
    mapper = _arrow_mapper(routing, schema, redactor)
    return raw.select(*INPUT_COLUMNS).mapInArrow(mapper, schema)
