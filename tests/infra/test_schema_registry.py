"""debezium-avro against a real schema registry (Apicurio, the Confluent API) and the
project's real Kafka broker: schemas registered through the API, Confluent-framed messages
through Kafka, decoded with the schemas the registry serves; auth; one fetch per id."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.errors import DecodeError, SchemaSourceError
from anycdc.formats.debezium.avro import DebeziumAvro
from anycdc.formats.schema_source import frame, unframe, user_agent
from tests.cases import iter_cases
from tests.fixtures_infra import REGISTRY_USER

pytestmark = [pytest.mark.kafka]

CASES = Path(__file__).resolve().parents[1] / "cases" / "debezium-avro"


def register(registry: Any, subject: str, schema_text: str) -> int:
    """POST /subjects/{subject}/versions, as a Kafka Connect converter does."""
    user, password = REGISTRY_USER
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    request = urllib.request.Request(
        f"{registry.url}/subjects/{subject}/versions",
        data=json.dumps({"schema": schema_text}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json",
                 "Authorization": f"Basic {auth}"},
        method="POST",
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        schema_id: int = json.loads(response.read())["id"]
    return schema_id


def reframed(registry: Any, data: bytes, subject: str, doc: str | None = None) -> tuple[bytes, int]:
    """A golden message framed with the id the registry gives its schema (``doc``: a new
    schema text, so a new id that no process has fetched yet)."""
    local_id, offset = unframe(data)
    schema = json.loads((CASES / "schemas" / f"{local_id}.avsc").read_text())
    if doc is not None:
        schema["doc"] = doc
    schema_id = register(registry, subject, json.dumps(schema))
    return frame(schema_id, data[offset:]), schema_id


def consume(bootstrap: str, topic: str, count: int) -> list[tuple[bytes | None, bytes]]:
    from confluent_kafka import Consumer

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"t-{topic}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })  # fmt: skip
    consumer.subscribe([topic])
    out: list[tuple[bytes | None, bytes]] = []
    try:
        for _ in range(600):
            if len(out) >= count:
                break
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                out.append((message.key(), message.value()))
    finally:
        consumer.close()
    assert len(out) == count
    return out


def fetches_by_this_process(registry: Any) -> dict[int, int]:
    """Schema id -> how often THIS process fetched it, per the registry's access log."""
    counts: dict[int, int] = {}
    for method, path, status, agent in registry.access_log():
        if method == "GET" and "/schemas/ids/" in path and status == 200 and agent == user_agent():
            schema_id = int(path.rsplit("/", 1)[1])
            counts[schema_id] = counts.get(schema_id, 0) + 1
    return counts


def test_golden_messages_registered_produced_consumed_and_decoded(
    schema_registry: Any, registry_options: dict[str, str], kafka_bootstrap: str, kafka_topic: Any
) -> None:
    from confluent_kafka import Producer

    topic = kafka_topic(partitions=2)
    cases = list(iter_cases("debezium-avro"))
    expected: dict[bytes, list[dict[str, Any]]] = {}
    ids: set[int] = set()
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for case in cases:
        [value] = case.messages()
        value, value_id = reframed(schema_registry, value, f"{case.name}-value")
        key = case.key
        if key is not None:  # (a schema change's key names no column: it is never read)
            key, _ = reframed(schema_registry, key, f"{case.name}-key")
        ids.add(value_id)
        expected[value] = case.expected()
        producer.produce(topic, key=key, value=value)
    assert producer.flush(60) == 0
    received = consume(kafka_bootstrap, topic, len(cases))
    from anycdc.event import event_to_json

    for key, value in received:
        # a fresh decoder per message, as Spark makes one per partition and batch
        events = DebeziumAvro(registry_options).decode(value, key)
        assert [json.loads(event_to_json(e), parse_float=Decimal) for e in events] == expected[
            value
        ]
    counts = fetches_by_this_process(schema_registry)
    assert {i: counts.get(i) for i in ids} == dict.fromkeys(ids, 1), "each id fetched once"
    assert set(counts.values()) == {1}


def test_the_encoder_registers_its_schemas_and_a_new_process_reads_them(
    schema_registry: Any, registry_options: dict[str, str], tmp_path: Path
) -> None:
    import subprocess
    import sys

    from anycdc.simulate import Workload

    writer = DebeziumAvro({**registry_options, "server_name": "regtest"})
    workload = Workload(seed=5, rows=3, events=40, database="reg", tables=2, profile="rich")
    messages = []
    for event in workload.events("debezium-avro"):
        key = writer.encode_key(event)
        messages += [(key, value) for value in writer.encode(event)]
    dump = tmp_path / "messages.json"
    dump.write_text(json.dumps([
        [None if k is None else base64.b64encode(k).decode(), base64.b64encode(v).decode()]
        for k, v in messages
    ]))  # fmt: skip
    reader = (
        "import base64, json, os, sys\n"
        "from anycdc.formats.debezium.avro import DebeziumAvro\n"
        "from anycdc.event import event_to_json\n"
        "options = json.loads(sys.argv[2])\n"
        "out = []\n"
        "for k, v in json.loads(open(sys.argv[1]).read()):\n"
        "    key = None if k is None else base64.b64decode(k)\n"
        "    out += [event_to_json(e) for e in DebeziumAvro(options).decode(base64.b64decode(v), key)]\n"
        "print(json.dumps({'pid': os.getpid(), 'events': out}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", reader, str(dump), json.dumps(registry_options)],
        capture_output=True, text=True, timeout=300, check=False, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    from anycdc.event import event_to_json

    # what this process (which registered the schemas, so fetched none) decodes
    here = [event_to_json(e) for k, v in messages for e in writer.decode(v, k)]
    assert result["events"] == here and len(here) == len(messages)
    agent = f"anycdc/{__import__('anycdc').__version__} (pid {result['pid']})"
    fetched = [p for m, p, _, a in schema_registry.access_log() if a == agent and m == "GET"]
    used = {unframe(v)[0] for _, v in messages} | {unframe(k)[0] for k, _ in messages if k}
    assert sorted(fetched) == sorted(f"/apis/ccompat/v7/schemas/ids/{i}" for i in used)


def test_credentials_are_required_and_never_shown(
    schema_registry: Any, registry_options: dict[str, str]
) -> None:
    value = (CASES / "seed_sqlserver_create.avro").read_bytes()
    value, _ = reframed(schema_registry, value, "auth-check-value", doc=f"{uuid.uuid4()}")
    password = registry_options["registry_password"]
    for options, reason in (
        ({"registry_url": schema_registry.url}, "HTTP 401"),
        ({**registry_options, "registry_password": "wrong-" + password}, "HTTP 401"),
        ({"registry_url": schema_registry.url, "registry_token": "not-a-token"}, "HTTP 401"),
    ):
        with pytest.raises(SchemaSourceError) as info:
            DebeziumAvro(options).decode(value)
        assert reason in str(info.value) and "registry_user / registry_password" in str(info.value)
        assert password not in str(info.value)
    url = schema_registry.url.replace("://", f"://{REGISTRY_USER[0]}:{password}@")
    [event] = DebeziumAvro({"registry_url": url}).decode(value)
    assert event.table == "customers"


def test_an_id_the_registry_does_not_have_is_the_messages_fault(
    registry_options: dict[str, str],
) -> None:
    with pytest.raises(DecodeError, match=r"\$: schema id 987654: schema registry http.*: No con"):
        DebeziumAvro(registry_options).decode(frame(987654, b"\x00"))
