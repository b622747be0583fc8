"""A SASL password given as a ``kafka.`` option appears nowhere a user or a log collector looks.

The secrets ride on a real run against the project's broker (PLAINTEXT, so the
client keeps them but never needs them): the run's whole output, the printed
config, ``status`` (table and JSON), error messages of failing runs, and every
file the run wrote under the target (checkpoint, changelog, metrics) are
searched for the secret values.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from tests.pipeline.helpers import small_jvm_args

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.faults]

PASSWORD = "pw-7f3c1e9a-do-not-log"
KEY_PASSWORD = "kp-51b2d8aa-do-not-log"
STORE_SECRET = "s3-90c4e2b7-do-not-log"
SECRETS = (PASSWORD, KEY_PASSWORD, STORE_SECRET)
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="anycdc" password="{PASSWORD}";'
)
SECRET_OPTIONS = [
    "--kafka-option", f"kafka.sasl.jaas.config={JAAS}",
    "--kafka-option", "kafka.sasl.mechanism=PLAIN",
    "--kafka-option", f"kafka.ssl.key.password={KEY_PASSWORD}",
    # an object store's secret as a Spark setting (unused by a local run, kept by the session)
    "--spark-conf", f"spark.hadoop.fs.s3a.secret.key={STORE_SECRET}",
]  # fmt: skip


def _anycdc(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "anycdc", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _files_with_secrets(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in SECRETS if s.encode() in data]
    return found


def test_secrets_never_leave_the_configuration(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path, capsys: Any
) -> None:
    topic = kafka_topic(partitions=1)
    assert cli([
        "simulate", "--format", "debezium-json", "--tables", "2", "--rows", "3", "--events", "20",
        "--malformed", "0.2", "--seed", "3", "--kafka-bootstrap", kafka_bootstrap, "--topic", topic,
        "--truth", str(tmp_path / "truth"),
    ]) == 0  # fmt: skip
    target = tmp_path / "lake"
    source = ["--kafka-bootstrap", kafka_bootstrap, "--topics", topic, "--target", str(target)]

    printed = _anycdc("run", *source, *SECRET_OPTIONS, "--print-config")
    assert printed.returncode == 0, printed.stderr
    assert "kafka.sasl.jaas.config" in printed.stdout and "***" in printed.stdout
    assert "spark.hadoop.fs.s3a.secret.key" in printed.stdout
    assert _leaks(printed.stdout + printed.stderr) == []

    # Spark's event log records the session's settings: it shows that --spark-conf reached
    # the session, and it is one more file a secret must not reach
    events = tmp_path / "spark-events"
    events.mkdir()
    event_log = ["--spark-conf", "spark.eventLog.enabled=true",
                 "--spark-conf", f"spark.eventLog.dir={events.as_uri()}",
                 # plain text, so that searching it for the secrets means something
                 "--spark-conf", "spark.eventLog.compress=false"]  # fmt: skip
    run = _anycdc(
        "run", *source, *SECRET_OPTIONS, *event_log, "--master", "local[2]", *small_jvm_args()
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "batch 0:" in run.stdout + run.stderr  # the run really logged its batches
    assert _leaks(run.stdout + run.stderr) == []
    logged = "".join(p.read_text(errors="replace") for p in events.rglob("*") if p.is_file())
    assert "spark.hadoop.fs.s3a.secret.key" in logged  # the setting was there, value redacted
    assert _files_with_secrets(events) == []

    capsys.readouterr()
    assert cli(["status", "--target", str(target)]) == 0
    assert cli(["status", "--target", str(target), "--json"]) == 0
    status = capsys.readouterr()
    assert "dead" in status.out.lower()
    assert _leaks(status.out + status.err) == []

    # failing runs: a configuration error and a Spark-side error, both with the secrets set
    bad_config = _anycdc("run", *source, *SECRET_OPTIONS, "--trigger", "every-now-and-then")
    assert bad_config.returncode != 0 and "trigger" in bad_config.stderr
    bad_offsets = _anycdc(
        "run", *source, *SECRET_OPTIONS, "--master", "local[1]",
        "--checkpoint", str(tmp_path / "other-checkpoint"),
        "--starting-offsets", '{"no-such-topic": {"0": -2}}',
    )  # fmt: skip
    assert bad_offsets.returncode != 0
    assert _leaks(bad_config.stdout + bad_config.stderr) == []
    assert _leaks(bad_offsets.stdout + bad_offsets.stderr) == []

    assert _files_with_secrets(target) == []
    assert _files_with_secrets(tmp_path / "other-checkpoint") == []
