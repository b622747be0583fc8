"""Real Kafka broker + Spark's Kafka source + Delta: counts must be exact."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from tests.infra.conftest import cdc_messages, produce

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

N = 10_000

EVENT_SCHEMA = (
    "op STRING, ts_ms BIGINT, "
    "after STRUCT<id: BIGINT, name: STRING, amount: DECIMAL(12,2)>, "
    "source STRUCT<db: STRING, table: STRING, pos: BIGINT>"
)


def _kafka_stream(spark: Any, bootstrap: str, topic: str, max_per_trigger: int) -> Any:
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(max_per_trigger))
        .load()
    )


def test_produce_10k_and_read_back_exactly(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Any
) -> None:
    from pyspark.sql import functions as F

    topic = kafka_topic(partitions=3)
    assert produce(kafka_bootstrap, topic, cdc_messages(N)) == N

    # batch read: exactly N records, offsets 0..n-1 per partition, no gaps
    batch = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )
    per_partition = {
        r["partition"]: (r["n"], r["lo"], r["hi"])
        for r in batch.groupBy("partition")
        .agg(F.count("*").alias("n"), F.min("offset").alias("lo"), F.max("offset").alias("hi"))
        .collect()
    }
    assert sum(n for n, _, _ in per_partition.values()) == N
    for n, lo, hi in per_partition.values():
        assert (lo, hi) == (0, n - 1)

    # streaming read, trigger availableNow, several micro-batches, into a Delta table
    table = str(tmp_path / "events")
    checkpoint = str(tmp_path / "checkpoint")

    def run_stream() -> None:
        parsed = (
            _kafka_stream(spark, kafka_bootstrap, topic, max_per_trigger=4_000)
            .select(
                F.col("partition"),
                F.col("offset"),
                F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e"),
            )
            .select("partition", "offset", "e.op", "e.ts_ms", "e.after.*")
        )
        query = (
            parsed.writeStream.format("delta")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start(table)
        )
        query.awaitTermination(600)
        assert query.exception() is None, query.exception()
        assert not query.isActive

    run_stream()
    events = spark.read.format("delta").load(table)
    stats = events.agg(
        F.count("*").alias("n"),
        F.countDistinct("partition", "offset").alias("distinct_offsets"),
        F.sum(F.when(F.col("op") == "u", 1).otherwise(0)).alias("updates"),
        F.sum("amount").alias("amount"),
    ).first()
    assert stats is not None
    expected = list(cdc_messages(N))
    assert stats["n"] == N
    assert stats["distinct_offsets"] == N
    assert stats["updates"] == sum(1 for _, v in expected if b'"op": "u"' in v)
    assert events.filter(F.col("id").isNull()).count() == 0  # every message parsed
    assert spark.sql(f"DESCRIBE HISTORY delta.`{table}`").count() >= 3  # >= 3 micro-batches

    # exactly once across runs: the same checkpoint picks up only what is new
    produce(kafka_bootstrap, topic, cdc_messages(500, start=N))
    run_stream()
    assert spark.read.format("delta").load(table).count() == N + 500
    run_stream()  # nothing new: nothing appended
    assert spark.read.format("delta").load(table).count() == N + 500


def test_broker_restart_keeps_data(kafka_broker: Any, kafka_topic: Any) -> None:
    from confluent_kafka import Consumer, TopicPartition

    from anycdc.devtools.kafka import KafkaBroker, port_open

    if not isinstance(kafka_broker, KafkaBroker):
        pytest.skip("external broker: not restarted by the tests")
    topic = kafka_topic(partitions=1)
    produce(kafka_broker.bootstrap, topic, cdc_messages(100))

    assert kafka_broker.stop(quiet=True)
    assert not port_open("127.0.0.1", kafka_broker.port)
    kafka_broker.start(timeout=180, quiet=True)

    consumer = Consumer(
        {
            "bootstrap.servers": kafka_broker.bootstrap,
            "group.id": "restart-check",
            "enable.auto.commit": False,
        }
    )
    try:
        low, high = _watermarks_once_led(consumer, TopicPartition(topic, 0))
    finally:
        consumer.close()
    assert (low, high) == (0, 100)


def _watermarks_once_led(consumer: Any, partition: Any) -> tuple[int, int]:
    """The partition's watermarks; a broker that has just become its leader may say "not
    leader" to the first asks (a retriable error): ask again, up to a minute."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + 60
    while True:
        try:
            low, high = consumer.get_watermark_offsets(partition, timeout=30)
            return int(low), int(high)
        except KafkaException as exc:
            if not exc.args[0].retriable() or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_cli_status_sees_the_broker(kafka_broker: Any) -> None:
    from anycdc.devtools.kafka import KafkaBroker

    if not isinstance(kafka_broker, KafkaBroker):
        pytest.skip("external broker")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from anycdc.cli import main; raise SystemExit(main())",
            "dev",
            "kafka",
            "status",
            "--json",
            "--home",
            str(kafka_broker.home),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert '"running": true' in result.stdout
    assert f'"bootstrap": "{kafka_broker.bootstrap}"' in result.stdout
