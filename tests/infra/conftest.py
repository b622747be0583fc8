"""Helpers for the infrastructure tests (the fixtures live in tests/fixtures_infra.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest


def cdc_messages(
    n: int, *, start: int = 0, table: str = "customers"
) -> Iterator[tuple[bytes, bytes]]:
    """*n* Debezium-style change events (key, value) as JSON bytes: inserts, some updates."""
    for i in range(start, start + n):
        row_id = i if i % 10 else i - 1  # every 10th message updates the row before it
        after = {"id": row_id, "name": f"customer-{i}", "amount": f"{i % 1000}.{i % 100:02d}"}
        op = "u" if i % 10 == 0 and i > 0 else "c"
        value = {
            "before": {"id": row_id} if op == "u" else None,
            "after": after,
            "op": op,
            "ts_ms": 1_700_000_000_000 + i,
            "source": {"db": "shop", "table": table, "pos": i},
        }
        yield json.dumps({"id": row_id}).encode(), json.dumps(value).encode()


def produce(bootstrap: str, topic: str, messages: Iterator[tuple[bytes, bytes]]) -> int:
    """Produce all *messages* (idempotent, acks=all) and flush; raise on any delivery error."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "compression.type": "lz4",
        }
    )
    errors: list[Any] = []
    count = 0

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(err)

    for key, value in messages:
        while True:
            try:
                producer.produce(topic, value=value, key=key, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
        if count % 1000 == 0:
            producer.poll(0)
    remaining = producer.flush(60)
    assert remaining == 0, f"{remaining} messages not delivered"
    assert not errors, errors[:3]
    return count


@pytest.fixture
def produce_cdc(kafka_bootstrap: str) -> Any:
    def run(topic: str, n: int, start: int = 0) -> int:
        return produce(kafka_bootstrap, topic, cdc_messages(n, start=start))

    return run
