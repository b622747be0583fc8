"""``make demo``: a small end-to-end run, Kafka -> Spark -> Delta, on this machine only.

1. start the project's Kafka broker (``var/kafka``, 127.0.0.1:19092) unless it runs already;
2. produce a few Debezium-style CDC JSON messages (inserts, updates, a delete) to a topic;
3. read them with Spark's Kafka source (batch), keep the last change per key, MERGE into a
   Delta table under ``var/demo/customers``;
4. print the table, its history, and the same table read by delta-rs (no JVM);
5. stop the broker again if this run started it (``--keep-kafka`` leaves it up).

This is a placeholder for the real pipeline demo: replace :func:`run` freely.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any

from anycdc.devtools import paths
from anycdc.devtools.kafka import KafkaBroker, KafkaError, broker_from_home

EVENT_SCHEMA = (
    "op STRING, ts_ms BIGINT, "
    "before STRUCT<id: BIGINT>, "
    "after STRUCT<id: BIGINT, name: STRING, email: STRING, balance: DECIMAL(12,2)>"
)


def demo_messages() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(key, value) pairs: 5 inserts, 3 updates, 1 delete, in commit order."""
    people = ["ada", "grace", "edsger", "barbara", "donald"]
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    ts = 1_735_689_600_000  # 2025-01-01T00:00:00Z
    for i, name in enumerate(people, start=1):
        row = {"id": i, "name": name, "email": f"{name}@example.com", "balance": f"{i * 10}.00"}
        out.append(({"id": i}, {"op": "c", "ts_ms": ts + i, "before": None, "after": row}))
    for i, delta in ((2, "5.25"), (4, "-1.50"), (2, "100.00")):
        row = {
            "id": i,
            "name": people[i - 1],
            "email": f"{people[i - 1]}@example.org",
            "balance": delta,
        }
        ts += 1000
        out.append(({"id": i}, {"op": "u", "ts_ms": ts, "before": {"id": i}, "after": row}))
    out.append(({"id": 5}, {"op": "d", "ts_ms": ts + 1000, "before": {"id": 5}, "after": None}))
    return out


def produce(
    bootstrap: str, topic: str, messages: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value in messages:
        producer.produce(topic, key=json.dumps(key).encode(), value=json.dumps(value).encode())
    if producer.flush(30) != 0:
        raise KafkaError("messages were not delivered within 30s")


def run(keep_kafka: bool = False) -> int:
    started_here = False
    broker: KafkaBroker = broker_from_home()
    if broker.running_pid() is None:
        broker.start(timeout=180)
        started_here = True
    else:
        broker.start(timeout=60)  # reuses it; restarts it if it does not answer
    spark = None
    try:
        topic = f"anycdc-demo-customers-{int(time.time())}"
        messages = demo_messages()
        produce(broker.bootstrap, topic, messages)
        print(f"demo: produced {len(messages)} CDC messages to {topic} on {broker.bootstrap}")

        from anycdc.spark.session import get_spark

        spark = get_spark(
            "anycdc-demo",
            conf={
                "spark.ui.enabled": "false",
                "spark.sql.shuffle.partitions": "4",
                "spark.ui.showConsoleProgress": "false",
            },
        )
        spark.sparkContext.setLogLevel("WARN")
        from delta.tables import DeltaTable
        from pyspark.sql import Column, Window
        from pyspark.sql import functions as F

        raw = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .load()
        )
        events = raw.select(
            "partition",
            "offset",
            F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("e"),
        ).select(
            "partition",
            "offset",
            "e.op",
            "e.ts_ms",
            F.coalesce("e.after.id", "e.before.id").alias("id"),
            "e.after.name",
            "e.after.email",
            "e.after.balance",
        )
        last = Window.partitionBy("id").orderBy(F.col("partition"), F.col("offset").desc())
        changes = events.withColumn("rn", F.row_number().over(last)).filter("rn = 1").drop("rn")

        path = paths.var_dir() / "demo" / "customers"
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        (
            spark.createDataFrame(
                [], "id BIGINT, name STRING, email STRING, balance DECIMAL(12,2), updated_ms BIGINT"
            )
            .write.format("delta")
            .save(str(path))
        )
        cols: dict[str, str | Column] = {
            "name": "s.name",
            "email": "s.email",
            "balance": "s.balance",
            "updated_ms": "s.ts_ms",
        }
        (
            DeltaTable.forPath(spark, str(path))
            .alias("t")
            .merge(changes.alias("s"), "t.id = s.id")
            .whenMatchedDelete(condition="s.op = 'd'")
            .whenMatchedUpdate(condition="s.op != 'd'", set=cols)
            .whenNotMatchedInsert(condition="s.op != 'd'", values={"id": "s.id", **cols})
            .execute()
        )
        print(f"demo: Delta table {path}")
        spark.read.format("delta").load(str(path)).orderBy("id").show(truncate=False)
        DeltaTable.forPath(spark, str(path)).history().select(
            "version",
            "operation",
            "operationMetrics.numTargetRowsInserted",
            "operationMetrics.numTargetRowsDeleted",
        ).show(truncate=False)

        from deltalake import DeltaTable as RsDeltaTable

        rs = RsDeltaTable(str(path))
        rows = sorted(rs.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
        print(
            f"demo: delta-rs reads version {rs.version()}: {len(rows)} rows, ids "
            f"{[r['id'] for r in rows]}"
        )
    except KafkaError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    finally:
        if spark is not None:
            spark.stop()
        if started_here and not keep_kafka:
            broker.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.devtools.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--keep-kafka", action="store_true", help="leave the broker running")
    args = parser.parse_args(argv)
    return run(keep_kafka=args.keep_kafka)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
