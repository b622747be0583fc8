"""Streaming sources -> raw records (``source, partition, offset, key, value``).

Kafka: Spark's Kafka source, with ``failOnDataLoss`` on so that offsets are
never skipped silently. Files: Spark's ``binaryFile`` source over the folder;
each file is split into messages (one per line for JSON Lines, the whole file
for ``.json``/``.avro``) in a Python step, with the line number as the offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from anycdc.config import PipelineConfig
from anycdc.source.files import LINE_SUFFIXES, TOMBSTONE
from anycdc.spark.merge_sql import KAFKA_SOURCE_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

RAW_SCHEMA = (
    "source STRING, partition INT, offset BIGINT, key BINARY, value BINARY, produced_ms BIGINT"
)


def kafka_stream(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", config.kafka_bootstrap)
        .option("startingOffsets", config.starting_offsets)
        .option("failOnDataLoss", "true")
    )
    if config.topics:
        reader = reader.option("subscribe", ",".join(config.topics))
    else:
        reader = reader.option("subscribePattern", config.topic_pattern)
    if config.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(config.max_offsets_per_trigger))
    for key, value in config.kafka_options.items():
        reader = reader.option(key, value)
    return reader.load().selectExpr(*KAFKA_SOURCE_COLUMNS)


def file_stream(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    assert config.source_dir is not None
    reader = (
        spark.readStream.format("binaryFile")
        .schema("path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY")
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.{jsonl,ndjson,txt,json,avro}")
    )
    if config.max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(config.max_files_per_trigger))
    files = reader.load(config.source_dir).select("path", "content")
    return files.mapInArrow(_split_files, RAW_SCHEMA)


def _split_files(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    schema = pa.schema(
        [
            ("source", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("produced_ms", pa.int64()),
        ]
    )
    for batch in batches:
        rows = []
        for item in sorted(batch.to_pylist(), key=lambda r: r["path"]):
            path, content = item["path"], item["content"] or b""
            if path.endswith(LINE_SUFFIXES):
                for number, line in enumerate(content.split(b"\n"), start=1):
                    text = line.strip()
                    if text:
                        rows.append(_raw(path, number, None if text == TOMBSTONE else text))
            else:
                rows.append(_raw(path, 1, None if content.strip() == TOMBSTONE else content))
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _raw(path: str, line: int, value: bytes | None) -> dict[str, object]:
    return {
        "source": path, "partition": 0, "offset": line, "key": None, "value": value,
        "produced_ms": None,  # a file has no record times (its mtime is not the source's)
    }  # fmt: skip


def raw_stream(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    """The configured source as a stream of raw records."""
    if config.source_dir:
        return file_stream(spark, config)
    return kafka_stream(spark, config)
