"""Raw messages read straight from a Kafka topic, like ``kcat -C``: keys and coordinates kept.

For looking at a topic from the command line (``anycdc decode --kafka-bootstrap``); the
pipeline reads Kafka through Spark (:mod:`anycdc.spark.source`). A throwaway consumer
group that commits nothing reads every partition, from its start (``from_beginning``) or
from its end (new messages only, like ``kafka-console-consumer``), until ``max_messages``,
once every partition has been read to its end (``until_end``, kcat ``-e``) or until
interrupted. The client is ``confluent-kafka`` (the ``[spark]`` extra),
imported on first use.

A broker that does not answer within ``timeout_s`` is one :class:`~anycdc.source.files.InputError`
line, and so is a topic that does not exist.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from anycdc.source.files import InputError, RawMessage

CONNECT_TIMEOUT_S: Final = 10.0
"""How long the broker has to answer the first metadata request."""
POLL_S: Final = 0.5
GROUP_PREFIX: Final = "anycdc-decode-"
QUIET_LOG_LEVEL: Final = 0
"""librdkafka's syslog level: 0 keeps its own connection chatter off stderr (errors are
collected by ``error_cb`` and reported in one line)."""


@dataclass(frozen=True)
class TopicRead:
    """What to read: the broker, the topic and where to start and stop."""

    bootstrap: str
    topic: str
    from_beginning: bool = False
    max_messages: int | None = None
    until_end: bool = False
    timeout_s: float = CONNECT_TIMEOUT_S
    properties: Mapping[str, str] = field(default_factory=dict)
    """Extra librdkafka properties (``security.protocol``, ``sasl.*`` ...)."""


def iter_topic_messages(read: TopicRead) -> Iterator[RawMessage]:
    """Every message of ``read.topic`` in arrival order per partition (see the module)."""
    try:
        from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaException
    except ImportError:
        raise InputError(
            "reading Kafka needs confluent-kafka: pip install 'anycdc[spark]'"
        ) from None
    problems: list[str] = []
    config: dict[str, Any] = {
        "bootstrap.servers": read.bootstrap,
        "group.id": GROUP_PREFIX + uuid.uuid4().hex,
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "log_level": QUIET_LOG_LEVEL,
        "error_cb": lambda err: problems.append(err.str()),
        **read.properties,
    }
    try:
        consumer = Consumer(config)
    except KafkaException as exc:
        raise InputError(f"Kafka client: {exc.args[0].str()}") from None
    try:
        partitions = _partitions(consumer, read, problems, KafkaException)
        start = OFFSET_BEGINNING if read.from_beginning else OFFSET_END
        from confluent_kafka import TopicPartition

        consumer.assign([TopicPartition(read.topic, p, start) for p in partitions])
        yield from _poll(consumer, read, set(partitions))
    finally:
        consumer.close()


def _partitions(
    consumer: Any, read: TopicRead, problems: list[str], kafka_exception: type[Exception]
) -> list[int]:
    try:
        metadata = consumer.list_topics(read.topic, timeout=read.timeout_s)
    except kafka_exception as exc:
        reason = problems[-1] if problems else exc.args[0].str()
        raise InputError(
            f"Kafka at {read.bootstrap} did not answer within {read.timeout_s:g}s: {reason}"
        ) from None
    topic = metadata.topics.get(read.topic)
    if topic is None or topic.error is not None or not topic.partitions:
        why = (
            topic.error.str() if topic is not None and topic.error is not None else "no partitions"
        )
        raise InputError(f"topic {read.topic!r} on {read.bootstrap}: {why}")
    return sorted(topic.partitions)


def _poll(consumer: Any, read: TopicRead, partitions: set[int]) -> Iterator[RawMessage]:
    from confluent_kafka import KafkaError

    at_end: set[int] = set()
    count = 0
    while read.max_messages is None or count < read.max_messages:
        message = consumer.poll(POLL_S)
        if message is None:
            continue
        error = message.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise InputError(f"Kafka topic {read.topic!r}: {error.str()}")
            at_end.add(message.partition())
            if read.until_end and at_end >= partitions:
                return
            continue
        count += 1
        offset = message.offset()
        yield RawMessage(
            message.value(),
            read.topic,
            offset,
            message.key(),
            read.topic,
            message.partition(),
            offset,
        )
