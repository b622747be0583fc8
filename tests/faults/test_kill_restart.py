"""kill -9 the pipeline at every kind of moment, restart it, and end with exact tables.

A simulated canal-json stream (3 partitions, duplicates, reordering) goes
through the project's real Kafka broker; ``anycdc run`` runs as its own
process group and is killed with SIGKILL ``ANYCDC_CHAOS_KILLS`` times (default
9): at startup, right after a batch is planned, between the Delta commits of
a batch (ingest, then the tables due), after the changelog's files are written and
before their commit, right after a batch is committed, and
during the final apply of the deferred tables; and, in a run that applies beside ingest,
while its apply overlaps the next batch and before its ledger row. A last run finishes the stream. Then: every table equals the ground truth (``verify``), no key twice,
every Kafka offset in the changelog exactly once, and no Delta table holds two
commits for the same (appId, batch).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.devtools.chaos import MOMENTS, ChaosRunner, duplicate_txns
from anycdc.verify import load_truth
from tests.pipeline.helpers import accounted, small_jvm_args

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.faults]

KILLS = int(os.environ.get("ANYCDC_CHAOS_KILLS", "9"))  # each moment once (MOMENTS)


def _end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "anycdc-test-offsets"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def _logs(folder: Path) -> str:
    return "\n".join(
        f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in sorted(folder.glob("*"))
    )


APPLIES: dict[str, tuple[list[str], tuple[str, ...], int]] = {
    # one table MERGEd in every batch, the others deferred to DDL, TRUNCATE and the end
    "in-batch": (["--table-freshness", "all_types$=0"], MOMENTS, KILLS),
    # tables due by their size (every other batch or so), DDL, TRUNCATE and the end, applied
    # beside the next batch's ingest: a table's commit while a batch runs ("between-tables")
    # is the apply overlapping it, "before-ledger" its round's tables committed, not its ledger
    # (in batches of 20 messages: ~16 batches, so that a round's commits, ~10 s after it
    # starts, land while a batch runs; in 40s the run's 8 batches could all end first)
    "beside-ingest": (
        ["--max-pending-rows", "15", "--apply-beside-ingest", "--max-offsets-per-trigger", "20"],
        ("between-tables", "before-ledger"),
        2,
    ),
}
"""How the runs apply, with the moments they are killed at and how many kills."""


@pytest.mark.parametrize(
    "applies",
    # the apply beside ingest is opt-in: its kills run with the long tests (make test-slow)
    [pytest.param(a, marks=pytest.mark.slow) if a == "beside-ingest" else a for a in APPLIES],
)
def test_kill_9_and_restart_gives_the_same_tables(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path, applies: str
) -> None:
    from pyspark.sql import functions as F

    from anycdc.cli.verify import verify

    topic = kafka_topic(partitions=3)
    truth = tmp_path / "truth"
    assert cli([
        "simulate", "--format", "canal-json", "--tables", "3", "--rows", "8", "--events", "220",
        "--seed", "23", "--partitions", "3", "--duplicates", "0.05", "--reorder", "0.05",
        "--kafka-bootstrap", kafka_bootstrap, "--topic", topic, "--truth", str(truth),
    ]) == 0  # fmt: skip
    target = tmp_path / "lake"
    logs = tmp_path / "logs"
    command = [
        sys.executable, "-m", "anycdc", "run", "--kafka-bootstrap", kafka_bootstrap,
        "--topics", topic, "--target", str(target), "--max-offsets-per-trigger", "40",
        "--master", "local[2]", "--apply-engine", "batched",  # its own moments: written ...
        "--freshness", "1h", *APPLIES[applies][0], *small_jvm_args(),
    ]  # fmt: skip
    runner = ChaosRunner(command, target=target, log_dir=logs, run_timeout=2400)

    _, moments, kills = APPLIES[applies]
    report = runner.loop(kills, random.Random(20261123), moments_of=moments)
    print(f"\n[chaos] {report.summary()}")
    assert report.kills >= kills, _logs(logs)
    assert set(report.by_moment()) == set(moments)
    assert report.replayed_batches > 0, "no kill landed inside a batch"

    final = runner.finish()
    assert final.returncode == 0, _logs(logs)
    handed = "tables handed to the apply beside ingest"
    said = "\n".join(log.read_text(errors="replace") for log in logs.glob("*"))
    assert (handed in said) == (applies == "beside-ingest"), _logs(logs)
    assert duplicate_txns(target) == []

    result = verify(spark, str(target), str(truth))
    assert result["ok"], result
    # every event logged, through every kill, is in its table: none lost, none pending
    accounted(spark, target, dead_lettered=0, pending=0, unaccounted=0)

    for table in load_truth(str(truth))[0]:
        frame = spark.read.format("delta").load(str(target / table.database / table.table))
        # a keyless table's identity is its row hash (README: Semantics, Keys)
        key = table.key or ["_cdc_row_key"]
        assert frame.count() == frame.select(*key).distinct().count(), (
            f"{table.qualified}: a key twice"
        )

    changelog = spark.read.format("delta").load(str(target / "_anycdc" / "changelog"))
    coordinates = changelog.select("partition", "offset", "event_index")
    assert coordinates.count() == coordinates.distinct().count(), "an event applied twice"
    seen = {
        (r["partition"], r["n"], r["hi"])
        for r in changelog.groupBy("partition")
        .agg(F.countDistinct("offset").alias("n"), F.max("offset").alias("hi"))
        .collect()
    }
    ends = _end_offsets(kafka_bootstrap, topic, 3)
    assert seen == {(p, end, end - 1) for p, end in ends.items() if end}, "an offset lost"
