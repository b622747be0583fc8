"""Every format, end to end through the project's real Kafka broker, Spark and Delta.

One topic (3 partitions, keyed by primary key as the vendors do) carries a
simulated shop database per format; one pipeline run applies them all with
per-message format detection, and every table must equal the simulator's
ground truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.formats import format_class, format_ids, get_format
from anycdc.simulate import Workload
from anycdc.verify import compare_rows

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

# drs-avro has no encoder; drs-mongo-json carries documents, not the relational shop
E2E_FORMATS = [f for f in format_ids() if format_class(f).can_encode and f != "drs-mongo-json"]
UNTYPED = {"oms-json", "shareplex-json"}


def _database(format_id: str) -> str:
    return "e2e_" + format_id.replace("-", "_")


def _produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value in messages:
        producer.produce(topic, key=key, value=value)
        producer.poll(0)
    assert producer.flush(60) == 0


def test_every_format_through_kafka_matches_ground_truth(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path
) -> None:
    topic = kafka_topic(partitions=3)
    workloads: dict[str, Workload] = {}
    streams: list[list[tuple[bytes | None, bytes]]] = []
    primary_keys: dict[str, list[str]] = {}
    for seed, format_id in enumerate(E2E_FORMATS):
        fmt = get_format(format_id)
        workload = Workload(seed=seed, rows=4, events=40, database=_database(format_id))
        workloads[format_id] = workload
        stream = []
        for event in workload.events(format_id):
            key = fmt.encode_key(event)
            stream.extend((key, message) for message in fmt.encode(event))
        streams.append(stream)
        if format_id == "shareplex-json":  # SharePlex messages name no key columns
            primary_keys.update({t.qualified: list(t.key) for t in workload.tables})
    messages = [s[i] for i in range(max(map(len, streams))) for s in streams if i < len(s)]
    _produce(kafka_bootstrap, topic, messages)

    from anycdc.spark.pipeline import Pipeline

    target = tmp_path / "lake"
    config = PipelineConfig.from_mapping(
        {
            "kafka_bootstrap": kafka_bootstrap,
            "topics": [topic],
            "target": str(target),
            "primary_keys": primary_keys,
        }
    )
    history = Pipeline(spark, config).run()
    assert sum(m.dead_letters for m in history) == 0, "no message may be dead-lettered"

    failures = []
    for format_id, workload in workloads.items():
        for table in workload.tables:
            frame = spark.read.format("delta").load(str(target / table.database / table.name))
            actual = [r.asDict() for r in frame.collect()]
            expected = list(workload.truth[table.qualified].values())
            diff = compare_rows(table.qualified, table.key, expected, actual)
            if not diff.ok:
                failures.append(
                    f"{format_id} {table.qualified}: missing {diff.missing[:3]} extra "
                    f"{diff.extra[:3]} different {diff.different[:3]}"
                )
    assert not failures, "\n".join(failures)
