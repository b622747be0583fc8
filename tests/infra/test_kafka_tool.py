"""The local Kafka broker tool, without starting Java: ids, ports, stale pid files, probes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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
