"""``make demo``: a shop database replicated by six vendors' CDC formats into Delta, end to end.

1. start the project's Kafka broker on 127.0.0.1 (unless one runs already);
2. simulate a small shop database (customers, orders, products: a snapshot, then inserts,
   updates, deletes and primary-key changes) once per vendor format — Debezium, Canal, DTS
   Canal, DataWorks, DRS, OceanBase OMS — and produce all the messages to ONE topic with 3
   partitions, keyed like the vendors key them (per-key order holds within a partition);
3. run the pipeline (``anycdc run``: format auto-detected per message, available-now);
4. check every table against the simulator's ground truth, print one table and ``status``.

Run: ``python -m anycdc.demo [--events 300] [--rows 20] [--keep-kafka]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from anycdc.config import PipelineConfig
from anycdc.console import print_table
from anycdc.formats import get_format
from anycdc.scratch import tool_scratch
from anycdc.simulate import Workload
from anycdc.verify import compare_rows

DEMO_FORMATS = (
    "debezium-json", "canal-json", "dts-canal-json", "dataworks-json", "drs-json", "oms-extend-json",
)  # fmt: skip
TOPIC = "anycdc-demo"


def database_for(format_id: str) -> str:
    return "shop_" + format_id.removesuffix("-json").replace("-", "_")


def build_traffic(
    rows: int, events: int
) -> tuple[list[tuple[bytes | None, bytes]], dict[str, Workload]]:
    """Messages of every demo format, interleaved as one topic would carry them."""
    streams: list[list[tuple[bytes | None, bytes]]] = []
    workloads = {}
    for seed, format_id in enumerate(DEMO_FORMATS):
        fmt = get_format(format_id)
        workload = Workload(seed=seed, rows=rows, events=events, database=database_for(format_id))
        workloads[format_id] = workload
        out: list[tuple[bytes | None, bytes]] = []
        for event in workload.events(format_id):
            # the key the vendor writes (Debezium's carries the key columns); a table-level
            # event (no key values) stays on its table's partition
            key = fmt.encode_key(event) or f"{event.database}.{event.table}".encode()
            out.extend((key, message) for message in fmt.encode(event))
        streams.append(out)
    merged: list[tuple[bytes | None, bytes]] = []
    for index in range(max(map(len, streams))):
        merged.extend(s[index] for s in streams if index < len(s))
    return merged, workloads


def produce(
    bootstrap: str, messages: list[tuple[bytes | None, bytes]], partitions: int = 3
) -> None:
    """The demo's messages into a new :data:`TOPIC` (an earlier demo's is deleted first),
    spread over ``partitions`` by their keys."""
    from confluent_kafka.admin import AdminClient

    from anycdc.devtools import kafka

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([TOPIC])
    time.sleep(1)  # a deletion completes after its answer
    try:
        kafka.create_topic(bootstrap, TOPIC, partitions, timeout=30)
    except Exception as exc:
        if "TOPIC_ALREADY_EXISTS" not in str(exc):
            raise
    kafka.produce(bootstrap, TOPIC, ((key, value, -1) for key, value in messages))


def check(spark: Any, target: str, workloads: dict[str, Workload]) -> list[list[Any]]:
    rows = []
    for format_id, workload in workloads.items():
        for table in workload.tables:
            path = f"{target}/{table.database}/{table.name}"
            frame = spark.read.format("delta").load(path)
            actual = [r.asDict() for r in frame.collect()]
            expected = list(workload.truth[table.qualified].values())
            diff = compare_rows(table.qualified, table.key, expected, actual)
            verdict = (
                "exact"
                if diff.ok
                else (
                    f"{len(diff.missing)} missing, {len(diff.extra)} extra, {len(diff.different)} different"
                )
            )
            rows.append([format_id, table.qualified, len(expected), len(actual), verdict])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20, help="snapshot rows per table")
    parser.add_argument("--events", type=int, default=300, help="incremental changes per format")
    parser.add_argument(
        "--out",
        default="var/demo",
        help="where the lake and checkpoint go (made, or emptied when an earlier demo made it)",
    )
    parser.add_argument("--keep-kafka", action="store_true", help="leave the broker running")
    args = parser.parse_args(argv)

    from anycdc.devtools.kafka import broker_from_home

    out = tool_scratch(Path(args.out), "anycdc demo", ("lake",), option="--out")
    broker = broker_from_home()
    started_here = broker.running_pid() is None
    broker.start(timeout=180)
    try:
        messages, workloads = build_traffic(args.rows, args.events)
        produce(broker.bootstrap, messages)
        print(f"demo: produced {len(messages)} messages in {len(DEMO_FORMATS)} formats to topic "
              f"{TOPIC} on {broker.bootstrap}", flush=True)  # fmt: skip

        from anycdc.spark.pipeline import Pipeline
        from anycdc.spark.session import get_spark

        spark = get_spark("anycdc demo")
        spark.sparkContext.setLogLevel("ERROR")
        config = PipelineConfig(
            kafka_bootstrap=broker.bootstrap, topics=(TOPIC,), target=str(out / "lake"),
            max_concurrent_tables=4,
        )  # fmt: skip
        started = time.monotonic()
        history = Pipeline(
            spark, config, on_batch=lambda m: print("demo:", m.line(), flush=True)
        ).run()
        seconds = time.monotonic() - started
        events = sum(m.events for m in history)
        print(f"demo: applied {events} events to {sum(len(w.tables) for w in workloads.values())} "
              f"tables in {seconds:.0f}s", flush=True)  # fmt: skip

        results = check(spark, config.target, workloads)
        print_table("Target tables vs. the simulator's ground truth",
                    ["format", "table", "expected rows", "rows", "values"], results)  # fmt: skip
        sample = spark.read.format("delta").load(f"{config.target}/shop_canal/orders")
        print("shop_canal.orders (first rows):")
        sample.orderBy("id").show(8, truncate=False)

        from anycdc.cli.status import collect

        report = collect(spark, config.target)
        print_table("anycdc status", ["table", "rows", "events", "last position", "dead letters"],
                    [[t["table"], t["rows"], t["events_applied"], t["last_position"], t["dead_letters"]]
                     for t in report["tables"]])  # fmt: skip
        exact = all(r[-1] == "exact" for r in results)
        print("demo: every table matches the ground truth" if exact else "demo: DIFFERENCES found")
        return 0 if exact else 1
    finally:
        if started_here and not args.keep_kafka:
            broker.stop()


if __name__ == "__main__":
    sys.exit(main())
