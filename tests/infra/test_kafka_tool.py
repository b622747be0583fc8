"""The local Kafka broker tool, without starting Java: ids, ports, stale pid files, probes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from anycdc.devtools import kafka


def test_cluster_id_shape() -> None:
    ids = {kafka.new_cluster_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", i) for i in ids)


def test_free_port_is_free() -> None:
    port = kafka.free_port()
    assert 1024 < port < 65536
    assert not kafka.port_open("127.0.0.1", port)
    assert not kafka.api_versions_ok("127.0.0.1", port, timeout=0.5)


def test_stale_pid_file_is_ignored(tmp_path: Path) -> None:
    broker = kafka.KafkaBroker(home=tmp_path, port=kafka.free_port())
    broker.pid_path.write_text(f"{os.getpid()}\n")  # alive, but not a Kafka broker
    assert broker.running_pid() is None
    broker.pid_path.write_text("999999999\n")  # no such process
    assert broker.running_pid() is None
    broker.pid_path.write_text("garbage\n")
    assert broker.running_pid() is None
    assert broker.stop(quiet=True) is False
    assert not broker.pid_path.exists()


def test_config_is_kraft_combined_on_loopback(tmp_path: Path) -> None:
    broker = kafka.KafkaBroker(home=tmp_path, port=40123, controller_port=40124)
    broker.write_config()
    text = broker.config_path.read_text()
    assert "process.roles=broker,controller" in text
    assert "listeners=PLAINTEXT://127.0.0.1:40123,CONTROLLER://127.0.0.1:40124" in text
    assert f"log.dirs={tmp_path / 'data'}" in text
    assert "0.0.0.0" not in text


def test_missing_jars_message(tmp_path: Path) -> None:
    broker = kafka.KafkaBroker(home=tmp_path, port=kafka.free_port(), libs=tmp_path / "nolibs")
    try:
        broker.java_command("kafka.Kafka")
    except kafka.KafkaError as exc:
        assert "make setup" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected KafkaError")


def test_cli_status_of_a_stopped_broker(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "anycdc.devtools.kafka", "status", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert "running    False" in result.stdout


def test_a_producers_retries_are_debug_lines_and_its_errors_errors(caplog: Any) -> None:
    """A producer's warnings (what it retries itself, as a new broker's "Coordinator load in
    progress") reach ``anycdc.kafka.client`` as debug lines, not the user's terminal; a
    failure to connect stays an error. Through librdkafka itself, to a closed port."""
    import logging

    from confluent_kafka import Producer

    log = kafka.ClientLog()
    producer = Producer(
        {
            "bootstrap.servers": f"127.0.0.1:{kafka.free_port()}",
            "logger": log,
            "message.timeout.ms": 2000,
        }
    )
    with caplog.at_level(logging.DEBUG, logger="anycdc.kafka.client"):
        log.log(logging.WARNING, "%s: retrying", "GETPID")
        producer.produce("t", b"x")
        producer.flush(4)
    levels = {(r.levelno, r.getMessage().split(":")[0]) for r in caplog.records}
    assert (logging.DEBUG, "GETPID") in levels
    assert any(r.levelno == logging.ERROR and "Connect" in r.getMessage() for r in caplog.records)
    assert not any(r.levelno == logging.WARNING for r in caplog.records)
