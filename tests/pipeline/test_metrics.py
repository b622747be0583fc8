"""``metrics_port`` through real Kafka, Spark and Delta: a running pipeline is scraped over
HTTP while events arrive, are applied, wait and are dead-lettered, and the values move with
them; ``status --json`` then gives the same per-table facts."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from tests.pipeline.helpers import encode_all, ev

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

HOUR = 3600  # shop.audit waits for the run's end; shop.orders is applied in every batch
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(port: int) -> Samples:
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _get(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def _until(port: int, done: Callable[[Samples], bool], what: str) -> Samples:
    """Scrape until ``done`` holds (the batches come at their own pace; the server starts
    with the run, in its thread)."""
    deadline = time.monotonic() + 240
    samples: Samples = {}
    while time.monotonic() < deadline:
        try:
            samples = _scrape(port)
        except OSError:  # not listening yet
            samples = {}
        if done(samples):
            return samples
        time.sleep(0.5)
    raise AssertionError(f"never: {what}; last scrape: {sorted(samples.items())}")


def _row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i, "price": Decimal(f"{i}.00")}


def test_a_running_pipeline_serves_values_that_move(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path, capsys: Any
) -> None:
    from confluent_kafka import Producer

    from anycdc.devtools.kafka import free_port
    from anycdc.spark.pipeline import Pipeline

    topic = kafka_topic(partitions=2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})

    def send(messages: list[bytes], produced_ms: int = 0) -> None:
        for message in messages:
            producer.produce(topic, value=message, timestamp=produced_ms)  # 0: now
        assert producer.flush(60) == 0

    out, port = tmp_path / "out", free_port()
    config = PipelineConfig.from_mapping({
        "kafka_bootstrap": kafka_bootstrap, "topics": [topic], "target": str(out),
        "format": "canonical-json", "trigger": "interval=1s", "freshness": HOUR,
        "table_freshness": {"shop\\.orders": 0}, "metrics_port": port,
    })  # fmt: skip
    pipeline = Pipeline(spark, config)
    queries: list[Any] = []
    runner = threading.Thread(target=pipeline.run, kwargs={"on_start": queries.append}, daemon=True)
    send(encode_all("canonical-json", [ev("insert", i, _row(i, "a")) for i in range(1, 11)]))
    # shop.audit's changes were produced two hours ago (a lagging producer or a backlog):
    # staleness counts from the record time, not from when the pipeline read them
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR * 1000
    send(
        encode_all("canonical-json", [
            ev("insert", 20 + i, _row(i, "x"), table="audit") for i in range(1, 6)
        ]),
        produced_ms=two_hours_ago,
    )  # fmt: skip
    runner.start()
    try:
        orders, audit = {"table": "shop.orders"}, {"table": "shop.audit"}
        first = _until(
            port,
            lambda s: (
                _get(s, "anycdc_table_events_applied_total", **orders) == 10
                and _get(s, "anycdc_table_pending_rows", **audit) == 5
            ),
            "shop.orders applied, shop.audit pending",
        )
        assert _get(first, "anycdc_query_alive") == 1
        assert _get(first, "anycdc_messages_total") == _get(first, "anycdc_events_total") == 15
        assert (_get(first, "anycdc_bytes_total") or 0) > 0
        assert _get(first, "anycdc_table_applies_total", **orders) >= 1  # type: ignore[operator]
        assert _get(first, "anycdc_table_applies_total", **audit) is None
        assert (_get(first, "anycdc_table_staleness_seconds", **audit) or 0) >= 2 * HOUR
        assert _get(first, "anycdc_table_pending_rows", **orders) == 0
        assert _get(first, "anycdc_table_staleness_seconds", **orders) == 0
        assert _get(first, "anycdc_tables_waiting") == 1
        assert _get(first, "anycdc_dead_letters_total", reason="decode") == 0
        assert (_get(first, "anycdc_batch_phase_seconds_count", phase="decode") or 0) >= 1

        # five updates and one message that does not decode
        send([
            *encode_all("canonical-json", [ev("update", 30 + i, _row(i, "b")) for i in range(1, 6)]),
            b"{not json",
        ])  # fmt: skip
        second = _until(
            port,
            lambda s: (
                _get(s, "anycdc_table_events_applied_total", **orders) == 15
                and _get(s, "anycdc_dead_letters_total", reason="decode") == 1
            ),
            "the updates applied and the bad message dead-lettered",
        )
        assert _get(second, "anycdc_messages_total") == 21
        assert _get(second, "anycdc_events_total") == 20
        assert (_get(second, "anycdc_bytes_total") or 0) > (_get(first, "anycdc_bytes_total") or 0)
        assert _get(second, "anycdc_table_pending_rows", **audit) == 5
        lag = {
            dict(labels)["partition"]: v
            for (name, labels), v in second.items()
            if name == "anycdc_kafka_lag_messages"
        }
        assert set(lag) == {"0", "1"} and all(v >= 0 for v in lag.values())
    finally:
        deadline = time.monotonic() + 120
        while not queries and runner.is_alive() and time.monotonic() < deadline:
            time.sleep(0.5)  # a failure before the query started: stop it all the same
        if queries:
            queries[0].stop()
        runner.join(300)
    assert not runner.is_alive()

    # the final apply (shop.audit) is in the registry; the server is gone with the run
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    assert pipeline.metrics is not None
    text = generate_latest(pipeline.metrics.registry).decode()
    final = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert _get(final, "anycdc_table_applies_total", **audit) == 1
    assert _get(final, "anycdc_table_pending_rows", **audit) == 0
    assert _get(final, "anycdc_query_alive") == 0
    with pytest.raises(OSError):
        _scrape(port)

    # status --json: the same per-table facts
    capsys.readouterr()
    assert cli(["status", "--target", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    tables = {t["table"]: t for t in report["tables"]}
    for name, table in tables.items():
        label = {"table": name}
        assert table["applies"] == _get(final, "anycdc_table_applies_total", **label)
        assert table["events_applied"] == _get(final, "anycdc_table_events_applied_total", **label)
        assert table["pending_rows"] == 0 and table["last_applied_ts_ms"] is not None
        assert table["dead_letters_by_reason"] == {"cast": 0, "schema": 0, "failed": 0}
    assert set(tables) == {"shop.orders", "shop.audit"}
    assert report["dead_letters_by_reason"] == {"decode": 1, "cast": 0, "schema": 0, "failed": 0}
