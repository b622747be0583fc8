"""Raw records -> changelog rows, decoded in Python workers with ``mapInArrow``.

Input columns (both sources are brought to this shape by
:mod:`anycdc.spark.source`): ``source`` (topic or file), ``partition``,
``offset`` (Kafka offset or line), ``key`` and ``value`` (binary). Output: the
static :data:`anycdc.changelog.CHANGELOG_COLUMNS` schema; a message that fails
to decode becomes one row with ``error`` set (a dead letter), never a failed
task. One decoder and one split-update pairer live per Spark partition (a
Kafka partition keeps both halves of a split update).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from anycdc.changelog import CHANGELOG_COLUMNS, Coordinates, error_row, event_to_row
from anycdc.decoding import MessageDecoder
from anycdc.errors import AnyCdcError
from anycdc.pairing import SplitUpdatePairer
from anycdc.patch import PatchError, patch_as_partial_update

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

INPUT_COLUMNS = ("source", "partition", "offset", "key", "value")


def changelog_schema() -> StructType:
    from pyspark.sql.types import StructType

    ddl = ", ".join(f"`{name}` {kind}" for name, kind in CHANGELOG_COLUMNS)
    schema = StructType.fromDDL(ddl)
    assert isinstance(schema, StructType)
    return schema


def decode_rows(
    records: Iterator[Mapping[str, Any]], format_id: str, options: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """Decode raw records (dicts of :data:`INPUT_COLUMNS`) into changelog rows, in order."""
    decoder = MessageDecoder(format_id, options)
    pairer = SplitUpdatePairer()
    held: tuple[Coordinates, int] = (
        Coordinates("", 0, 0),
        0,
    )  # where the held before-half came from
    for record in records:
        where = Coordinates(
            record["source"] or "",
            int(record["partition"] or 0),
            int(record["offset"] or 0),
            record["key"],
            record["value"],
        )
        try:
            _, events = decoder.decode(record["value"], record["key"])
        except AnyCdcError as exc:
            yield error_row(where, getattr(exc, "format_id", format_id), str(exc))
            continue
        except Exception as exc:
            yield error_row(
                where, format_id, f"internal decoder error: {type(exc).__name__}: {exc}"
            )
            continue
        for index, event in enumerate(events):
            for ready in pairer.push(event):
                # a flushed lone before-half keeps its own coordinates; a joined
                # update takes those of its after-half (the message that completed it)
                origin = held if ready.split == "before" and ready is not event else (where, index)
                try:
                    ready = patch_as_partial_update(ready)
                except PatchError as exc:
                    yield error_row(origin[0], ready.format, str(exc))
                    continue
                yield event_to_row(ready, *origin)
            if event.split == "before":
                held = (where, index)
    for ready in pairer.flush():
        yield event_to_row(ready, *held)


def _arrow_mapper(
    format_id: str, options: Mapping[str, str], schema: StructType
) -> Callable[[Iterable[pa.RecordBatch]], Iterable[pa.RecordBatch]]:
    def decode_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow_schema = to_arrow_schema(schema)

        def records() -> Iterator[Mapping[str, Any]]:
            for batch in batches:
                yield from batch.to_pylist()

        chunk: list[dict[str, Any]] = []
        for row in decode_rows(records(), format_id, options):
            chunk.append(_arrow_ready(row))
            if len(chunk) >= 2048:
                yield pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)
                chunk = []
        if chunk:
            yield pa.RecordBatch.from_pylist(chunk, schema=arrow_schema)

    return decode_batches


def _arrow_ready(row: dict[str, Any]) -> dict[str, Any]:
    # Arrow maps are lists of (key, value) pairs
    for name in ("before", "after"):
        image = row[name]
        if image is not None:
            row[name] = list(image.items())
    return row


def decode_frame(raw: DataFrame, format_id: str, options: Mapping[str, str]) -> DataFrame:
    """Decode a DataFrame of raw records into changelog rows (dead letters included)."""
    schema = changelog_schema()
    return raw.select(*INPUT_COLUMNS).mapInArrow(
        _arrow_mapper(format_id, dict(options), schema), schema
    )
