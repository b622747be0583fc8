"""``anycdc decode --kafka-bootstrap``: a topic read straight away, keys and coordinates kept."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from anycdc.cli import main
from tests.unit.test_cli_decode import KEY, KEYLESS_DELETE, NO_KEY_ERROR

pytestmark = pytest.mark.kafka


def _produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes | None]]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for key, value in messages:
        producer.produce(topic, value=value, key=key, partition=0)
    assert producer.flush(60) == 0


def test_topic_with_keys_and_coordinates(
    kafka_bootstrap: str,
    kafka_topic: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = kafka_topic(partitions=1)
    _produce(
        kafka_bootstrap,
        topic,
        [(KEY, KEYLESS_DELETE), (None, KEYLESS_DELETE), (KEY, None), (KEY, KEYLESS_DELETE)],
    )
    read = ["decode", "--kafka-bootstrap", kafka_bootstrap, "--topic", topic, "--from-beginning"]
    code = main([*read, "--max-messages", "3"])
    out, err = capsys.readouterr()
    assert code == 0
    assert [json.loads(line)["before"] for line in out.splitlines()] == [{"id": 7}]
    errors = err.splitlines()
    assert errors[0].startswith(f"{topic}[0]@1: ") and NO_KEY_ERROR in errors[0]
    assert errors[-1] == "3 messages, 1 events, 1 errors"
    # --until-end: every message there is, then stop
    assert main([*read, "--until-end", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2


def test_missing_topic_is_one_line(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["decode", "--kafka-bootstrap", kafka_bootstrap, "--topic", "no-such-topic-x1"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"anycdc: topic 'no-such-topic-x1' on {kafka_bootstrap}: ")
