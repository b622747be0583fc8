"""The Kafka broker restarts mid-stream: nothing is lost, nothing is skipped silently.

A broker of its own (so the session broker other tests use stays up) carries
a simulated debezium-json stream in two halves. The pipeline runs as a
continuous query (interval trigger); after it has applied the first half, the
broker is stopped, kept down for a while, and started again on the same data
and port; then the second half is produced. The query must either resume by
itself or stop with an error (a failed query is restarted, as an orchestrator
would) — never end quietly with offsets skipped. The final tables equal the
ground truth and every offset is in the changelog exactly once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.simulate import Workload, build_stream, write_truth

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.faults]

PARTITIONS = 3
DOWN_SECONDS = 15.0


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(1.0)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def test_broker_restart_mid_stream_loses_nothing(
    spark: Any, free_port: Callable[[], int], tmp_path: Path
) -> None:
    from anycdc.cli.verify import verify
    from anycdc.devtools.kafka import KafkaBroker, by_partition, create_topic, produce
    from anycdc.spark.pipeline import Pipeline

    broker = KafkaBroker(
        home=tmp_path / "kafka", port=free_port(), controller_port=free_port(),
        owner_pid=os.getpid(),
    )  # fmt: skip
    broker.start(timeout=180, quiet=True)
    try:
        stream = build_stream(Workload(seed=31, rows=6, events=160), "debezium-json",
                              partitions=PARTITIONS)  # fmt: skip
        write_truth(stream, tmp_path / "truth", "debezium-json")
        halves = [
            [part[: len(part) // 2] for part in stream.partitions],
            [part[len(part) // 2 :] for part in stream.partitions],
        ]
        topic = "broker-restart"
        create_topic(broker.bootstrap, topic, PARTITIONS)
        produced = produce(broker.bootstrap, topic, by_partition(halves[0]))

        target = tmp_path / "lake"
        config = PipelineConfig.from_mapping({
            "kafka_bootstrap": broker.bootstrap, "topics": [topic], "target": str(target),
            "trigger": "interval=2s", "query_name": "broker-restart",
            "kafka_options": {"kafka.request.timeout.ms": "10000",
                              "kafka.default.api.timeout.ms": "20000"},
        })  # fmt: skip
        pipeline = Pipeline(spark, config)

        def messages_done() -> int:
            return sum(m.messages for m in pipeline.history)

        query = pipeline.start()
        restarts = 0
        try:
            _wait(lambda: messages_done() >= produced, 600, "the first half")
            broker.stop(quiet=True)
            time.sleep(DOWN_SECONDS)
            broker.start(timeout=180, quiet=True)
            produced += produce(broker.bootstrap, topic, by_partition(halves[1]))

            def caught_up() -> bool:
                nonlocal query, restarts
                if not query.isActive:
                    # stopped: it must say why (loud), then it is restarted like an orchestrator would
                    assert query.exception() is not None, "query ended without an error"
                    print(f"\n[broker restart] query failed loudly: {query.exception()}"[:400])
                    restarts += 1
                    query = pipeline.start()
                return messages_done() >= produced

            _wait(caught_up, 900, "the second half")
        finally:
            if query.isActive:
                query.stop()
        pipeline.flush()  # the run ends: the tables still waiting for their turn are applied
        print(
            f"\n[broker restart] {produced} messages, query restarts after the outage: {restarts}"
        )
        assert restarts <= 3

        result = verify(spark, str(target), str(tmp_path / "truth"))
        assert result["ok"], result
        changelog = spark.read.format("delta").load(str(target / "_anycdc" / "changelog"))
        coordinates = changelog.select("partition", "offset").distinct()
        assert coordinates.count() == produced, "an offset lost or invented"
        assert changelog.select("partition", "offset", "event_index").distinct().count() == (
            changelog.count()
        ), "an event applied twice"
    finally:
        broker.stop(quiet=True)
