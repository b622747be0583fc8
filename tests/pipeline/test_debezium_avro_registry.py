"""debezium-avro end to end with a real schema registry (Apicurio, basic auth) and the
project's Kafka broker, Spark and Delta: the simulator's rich workload, encoded as Debezium's
Avro converter writes it (schemas registered under ``<topic>-value`` / ``-key``), keyed over
three partitions, applied in several micro-batches; the tables equal the simulator's ground
truth, and the registry's access log (which names each fetching process: anycdc's user agent
carries its pid) shows every Spark Python worker fetching each schema id once, however many
batches and partitions it decoded.

(tests/pipeline/test_formats_e2e.py runs debezium-avro with the other formats, its schemas in
a ``schema_dir`` folder.)
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.formats import get_format
from anycdc.formats.schema_source import unframe, user_agent
from anycdc.simulate import Workload, partition_of
from anycdc.verify import compare_table

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

SEED, ROWS, EVENTS = 20240611, 4, 80
IDS_PATH = "/apis/ccompat/v7/schemas/ids/"


def test_registry_backed_run_matches_truth_and_each_worker_fetches_each_id_once(
    spark: Any,
    kafka_bootstrap: str,
    kafka_topic: Any,
    schema_registry: Any,
    registry_options: dict[str, str],
    tmp_path: Path,
) -> None:
    from confluent_kafka import Producer

    from anycdc.spark.pipeline import Pipeline

    topic = kafka_topic(partitions=3)
    workload = Workload(SEED, ROWS, EVENTS, "avro_registry", 3, profile="rich")
    encoder = get_format("debezium-avro", {**registry_options, "server_name": "e2e"})
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "enable.idempotence": True})
    value_ids: set[int] = set()
    key_ids: set[int] = set()
    for event in workload.events("debezium-avro"):
        key = encoder.encode_key(event)
        for value in encoder.encode(event):
            producer.produce(topic, key=key, value=value, partition=partition_of(key, 3))
            value_ids.add(unframe(value)[0])
            key_ids |= {unframe(key)[0]} if key else set()
    assert producer.flush(60) == 0

    config = PipelineConfig.from_mapping({
        "kafka_bootstrap": kafka_bootstrap, "topics": [topic], "target": str(tmp_path / "lake"),
        "format": "debezium-avro", "format_options": registry_options,
        "max_offsets_per_trigger": 25,
    })  # fmt: skip
    earlier = len(schema_registry.access_log())  # the session's registry served other tests
    history = Pipeline(spark, config).run()  # the micro-batches
    assert len(history) > 2, "several micro-batches: decoders are made anew for each"
    assert sum(m.dead_letters for m in history) == 0

    failures = []
    for table in workload.tables:
        frame = spark.read.format("delta").load(config.table_path(table.database, None, table.name))
        schema = {f.name: f.dataType.simpleString().upper() for f in frame.schema.fields}
        types = {n: c.type for n, c in table.columns.items()}
        expected = list(workload.truth[table.qualified].values())
        actual = [r.asDict() for r in frame.collect()]
        diff = compare_table(table.qualified, table.key, types, expected, actual, schema)
        if not diff.ok:
            failures.append(f"{table.qualified}: {diff}")
    assert not failures, "\n".join(failures)

    # the encoder (this process) registered the schemas; the Spark Python workers fetched them
    def worker_fetches() -> Counter[tuple[str, str]]:
        return Counter(
            (agent, path.removeprefix(IDS_PATH))
            for method, path, status, agent in schema_registry.access_log()[earlier:]
            if method == "GET" and path.startswith(IDS_PATH) and status == 200
            and agent != user_agent()
        )  # fmt: skip

    # the registry writes its access log in the background: wait until this run's lines are in
    deadline = time.monotonic() + 60
    fetches = worker_fetches()
    while not value_ids <= {int(i) for _, i in fetches} and time.monotonic() < deadline:
        time.sleep(1)
        fetches = worker_fetches()
    workers = {agent for agent, _ in fetches}
    print(
        f"{len(history)} batches, {len(workers)} worker processes fetched {sum(fetches.values())}"
    )
    # Python workers are reused: fewer processes than batches, so one fetch served many
    assert 0 < len(workers) < len(history)
    assert set(fetches.values()) == {1}, f"an id fetched twice by one worker: {fetches}"
    fetched = {int(schema_id) for _, schema_id in fetches}
    assert value_ids <= fetched <= value_ids | key_ids
