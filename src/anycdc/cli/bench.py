"""``anycdc bench``: the pipeline against the copy floor, measured side by side in one run."""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from pathlib import Path

from anycdc.cli.base import Command
from anycdc.cli.run import LOG_FORMAT
from anycdc.scratch import fresh_scratch

DESCRIPTION = """\
Measure anycdc end to end against the copy floor, on this machine, in one run:

  1. a simulated stream (EVENTS changes over TABLES tables, one topic, keyed by
     primary key) is produced to a Kafka broker the bench starts on 127.0.0.1;
  2. copy floor: Spark appends the raw messages to one Delta table, no decoding;
  3. anycdc: the same topic applied to one Delta table per source table, every
     table MERGEd in every batch (freshness 0), then deferred (--freshness: a
     table is MERGEd when due, and at the end); each also as ingest only;
     with --runs ...,peer also the hand-written peer (from_json with a schema per
     table, one Delta MERGE per table per batch) and every run's exactness: its
     tables against the simulator's truth (missing, extra, wrong values);
  4. sustained: RATE events/s for SECONDS while the pipeline runs on an interval
     trigger (tables applied when due); latency = commit time of a batch minus the
     produce time of its oldest message; staleness = a table apply's time minus the
     produce time of the oldest change it held (what the table's readers wait),
     per freshness target, and the tables behind their target at the end.

Prints events/s, the ratio to the floor, batch time p50/p95, latency p50/p95 and
the peak memory of the driver JVM and the Python workers; writes the figures as
JSON to WORK_DIR/results.json. Compare runs on the same machine only.

Examples:
  anycdc bench                                   # 1,000,000 events, 50 tables (make bench)
  anycdc bench --events 100000 --tables 10 --sustained-seconds 0
  anycdc bench --events 100000 --runs deferred --sustained-seconds 0   # two checkouts
  anycdc bench --events 100000 --tables 10 --runs deferred,peer --sustained-seconds 0
  anycdc bench --events 0 --runs deferred --tables 50 --rate 10000 \
      --sustained-seconds 300                    # uniform sustained
  anycdc bench --events 0 --runs deferred --tables 200 --skew 1.5 --hot-tables 10 \
      --hot-freshness 15 --freshness 600 --rate 10000 --sustained-seconds 300   # realistic
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events", type=int, default=1_000_000, help="events (default 1,000,000)")
    parser.add_argument("--tables", type=int, default=50, help="source tables (default 50)")
    parser.add_argument("--format", "-f", default="canal-json", help="wire format of the stream")
    parser.add_argument("--partitions", type=int, default=4, help="topic partitions (default 4)")
    parser.add_argument(
        "--max-offsets-per-trigger", type=int, default=200_000, help="micro-batch cap (both runs)"
    )
    parser.add_argument("--rate", type=int, default=10_000, help="sustained events/s")
    parser.add_argument(
        "--sustained-seconds", type=float, default=120.0, help="sustained phase length; 0 skips it"
    )
    parser.add_argument(
        "--freshness", type=float, default=60.0,
        help="the deferred run's freshness in seconds (default 60; the other run uses 0)",
    )  # fmt: skip
    parser.add_argument(
        "--runs", default="every-batch,deferred",
        help="which runs to measure beside the floor, comma-separated: every-batch, "
        "deferred (anycdc), peer (the hand-written peer, and every run's exactness) "
        "(default every-batch,deferred; e.g. deferred to compare two checkouts quickly)",
    )  # fmt: skip
    parser.add_argument(
        "--skew", type=float, default=0.0,
        help="Zipf exponent of the tables' activity (0: uniform; 1.5 over 200 tables: "
        "the first 10 take ~80%% of the changes)",
    )  # fmt: skip
    parser.add_argument(
        "--hot-tables", type=int, default=0,
        help="the N most active tables get --hot-freshness, the rest --freshness",
    )  # fmt: skip
    parser.add_argument(
        "--profile", choices=("shop", "rich", "linked"), default="shop",
        help="the simulated tables: shop (orders, customers, ...), rich (every type the "
        "formats carry: unsigned BIGINT, binary, zoned timestamps, ...; shows a peer's "
        "wrong values) or linked (orders and their lines in multi-table transactions)",
    )  # fmt: skip
    parser.add_argument(
        "--hot-freshness", type=float, default=15.0, help="the hot tables' freshness, seconds"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("var/bench"),
        help="scratch folder: made, or emptied when an earlier bench made it (a folder of other files is refused)",
    )
    parser.add_argument(
        "--kafka-bootstrap", help="use this broker instead of starting one (topics are created)"
    )
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument(
        "--apply-engine",
        choices=("batched", "merge"),
        default="batched",
        help="how the runs write their tables (`apply_engine`; default batched, as the pipeline; or merge)",
    )
    parser.add_argument(
        "--apply-beside-ingest", dest="apply_beside", action="store_true",
        help="the runs apply due tables beside the next batch's ingest (`apply_beside_ingest`), "
        "not inside the micro-batch (the default): the two side by side",
    )  # fmt: skip
    parser.add_argument(
        "--named-format", dest="detect", action="store_false",
        help="the runs name the stream's --format (`format`); by default they leave it at "
        "auto, as a user who names none: every message's format is detected, which costs "
        "more than the decoding itself",
    )  # fmt: skip
    parser.add_argument(
        "--metrics", action="store_true",
        help="serve the runs' metrics (metrics_port, a free port): to measure what they cost",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from anycdc.bench.pipeline import (
        BENCH_OUTPUTS,
        REPORT_HEADERS,
        BenchSettings,
        exactness_lines,
        freshness_lines,
        report_rows,
        results_json,
        run_bench,
    )
    from anycdc.console import print_table
    from anycdc.spark.session import get_spark

    settings = BenchSettings(
        events=args.events,
        tables=args.tables,
        format=args.format,
        partitions=args.partitions,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
        seed=args.seed,
        rate=args.rate,
        sustained_seconds=args.sustained_seconds,
        freshness=args.freshness,
        work_dir=args.work_dir,
        runs=tuple(name.strip() for name in args.runs.split(",") if name.strip()),
        skew=args.skew,
        hot_tables=args.hot_tables,
        hot_freshness=args.hot_freshness,
        profile=args.profile,
        apply_engine=args.apply_engine,
        apply_beside=args.apply_beside,
        detect=args.detect,
        metrics=args.metrics,
    )
    settings.check()
    fresh_scratch(args.work_dir, "--work-dir", BENCH_OUTPUTS)
    broker = None
    bootstrap = args.kafka_bootstrap
    if not bootstrap:
        from anycdc.devtools.kafka import KafkaBroker, free_port

        broker = KafkaBroker(
            home=args.work_dir / "kafka",
            port=free_port(),
            controller_port=free_port(),
            owner_pid=os.getpid(),
        )
        broker.start(timeout=180, quiet=True)
        bootstrap = broker.bootstrap
    try:
        # one line per micro-batch (with where its time went) instead of Spark's stage bars
        logging.basicConfig(format=LOG_FORMAT)
        logging.getLogger("anycdc.pipeline").setLevel(logging.INFO)
        spark = get_spark("anycdc-bench", master=args.master)
        started = time.monotonic()
        results = run_bench(spark, bootstrap, settings)
        print_table(
            f"anycdc bench: {settings.events:,} {settings.format} events, {settings.tables} tables "
            f"({time.monotonic() - started:.0f}s, {os.cpu_count()} cores)",
            REPORT_HEADERS,
            report_rows(results),
        )
        for line in freshness_lines(results) + exactness_lines(results):
            print(line)
        out = args.work_dir / "results.json"
        out.write_text(json.dumps(results_json(settings, results), indent=2) + "\n")
        print(f"figures: {out}")
    finally:
        if broker is not None:
            broker.stop(quiet=True)
    return 0


COMMAND = Command(
    "bench", "measure the pipeline against the copy floor", DESCRIPTION, add_arguments, run
)
