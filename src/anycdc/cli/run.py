"""``anycdc run``: apply CDC messages from Kafka or files to Delta tables."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING, Any, Final, TextIO

from anycdc.cli.base import Command, add_option_argument, fail, parse_key_values
from anycdc.config import PipelineConfig
from anycdc.errors import AnyCdcError, OptionError, RunFailed

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from rich.console import Console

    from anycdc.spark.pipeline import BatchMetrics

LOG_FORMAT: Final = "%(asctime)s %(name)s %(message)s"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", "-c", metavar="FILE", help="YAML or TOML configuration file")
    src = parser.add_argument_group("source (Kafka or a folder of files)")
    src.add_argument("--kafka-bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers")
    src.add_argument("--topics", metavar="A,B", help="comma-separated topics")
    src.add_argument("--topic-pattern", metavar="RE", help="subscribe to topics matching a regex")
    src.add_argument(
        "--kafka-option",
        action="append",
        default=[],
        metavar="K=V",
        help="passed to Spark's Kafka source, e.g. kafka.security.protocol=SASL_SSL (secrets are never printed)",
    )
    src.add_argument("--starting-offsets", help="earliest (default) | latest | Spark's JSON")
    src.add_argument(
        "--max-offsets-per-trigger", type=int, metavar="N", help="cap messages per micro-batch"
    )
    src.add_argument(
        "--source-dir", metavar="DIR", help="folder of .jsonl/.json/.avro message files"
    )
    src.add_argument(
        "--max-files-per-trigger", type=int, metavar="N", help="cap files per micro-batch"
    )
    dec = parser.add_argument_group("decoding")
    dec.add_argument("--format", "-f", help="format id or auto (default)")
    add_option_argument(dec)
    dec.add_argument(
        "--topic-format",
        action="append",
        default=[],
        metavar="TOPIC=ID",
        help="a topic's own format (a folder's, under --source-dir), repeatable",
    )
    dec.add_argument(
        "--topic-option",
        action="append",
        default=[],
        metavar="TOPIC:K=V",
        help="a topic's own format option, over the --option ones, repeatable "
        "(e.g. dts_2021:legacy=true)",
    )
    dec.add_argument(
        "--decimal-default",
        metavar="P,S",
        help="DECIMAL(P,S) for decimals whose precision the format does not send (default 38,18)",
    )
    tgt = parser.add_argument_group("target")
    tgt.add_argument("--target", "-t", metavar="DIR", help="folder of the Delta tables")
    tgt.add_argument(
        "--include", action="append", metavar="RE", help="only tables matching (db.table)"
    )
    tgt.add_argument("--exclude", action="append", metavar="RE", help="skip tables matching")
    tgt.add_argument(
        "--primary-key",
        action="append",
        default=[],
        metavar="[DB.]TABLE=COL[,COL]",
        help="primary key of a table whose messages name none",
    )
    tgt.add_argument(
        "--catalog",
        action="store_true",
        help="also register every table in the Spark catalog as {database}.{table} "
        "(an external Delta table at its target path)",
    )
    tgt.add_argument(
        "--table-name",
        metavar="TEMPLATE",
        help="catalog name template, e.g. 'lake.{database}_{table}' (implies --catalog)",
    )
    run = parser.add_argument_group("execution")
    run.add_argument("--checkpoint", metavar="DIR", help="default <target>/_anycdc/checkpoint")
    run.add_argument("--trigger", help="available-now (default: process all, exit) | interval=10s")
    run.add_argument(
        "--mode",
        choices=["scd1", "scd2"],
        help="scd1 (default): one current row per key; scd2: every version of a row, with "
        "_cdc_valid_from, _cdc_valid_to (NULL while current) and _cdc_is_current",
    )
    run.add_argument(
        "--tombstone-retention-hours",
        type=float,
        metavar="H",
        help="how long deleted keys are remembered to stop late older events (default 168)",
    )
    run.add_argument(
        "--max-concurrent-tables",
        type=int,
        metavar="N",
        help="tables merged at the same time in one micro-batch (default 4)",
    )
    run.add_argument(
        "--freshness",
        metavar="DURATION",
        help="how long a table's changes may wait before its MERGE (default 60s; 0: every "
        "table in every batch); changes are durable in the changelog meanwhile",
    )
    run.add_argument(
        "--table-freshness",
        action="append",
        default=[],
        metavar="RE=DURATION",
        help="a freshness for the tables whose database.table matches RE, repeatable, the "
        "first match wins (e.g. 'shop\\.orders=10s' 'archive\\..*=15m')",
    )
    run.add_argument(
        "--max-pending-rows",
        type=int,
        metavar="N",
        help="apply a table once this many of its changes are pending (default 500000)",
    )
    run.add_argument(
        "--table-property",
        action="append",
        default=[],
        metavar="K=V",
        help="a Delta table property of every target table, repeatable, e.g. "
        "delta.enableChangeDataFeed=true (set at creation, and on existing tables "
        "where it differs)",
    )
    run.add_argument(
        "--key-range-min-mb",
        type=float,
        metavar="MB",
        help="a MERGE into a table of at least MB megabytes reads only the files whose key "
        "range overlaps the batch's keys (default 256; 0: every table)",
    )
    run.add_argument(
        "--no-auto-compact",
        dest="auto_compact",
        action="store_false",
        default=None,
        help="do not let Delta compact small files after the run's writes",
    )
    run.add_argument(
        "--vacuum-every-hours",
        type=float,
        metavar="H",
        help="VACUUM each table at most every H hours (default 24; 0: never)",
    )
    run.add_argument(
        "--vacuum-retain-hours",
        type=float,
        metavar="H",
        help="keep unreferenced files this long (default: each table's "
        "delta.deletedFileRetentionDuration, 7 days)",
    )
    run.add_argument(
        "--query-name",
        help="streaming query name and idempotent-write app id (default anycdc): one per "
        "checkpoint",
    )
    spk = parser.add_argument_group("Spark")
    spk.add_argument(
        "--master", help="Spark master (default local[*]; on a cluster use spark-submit)"
    )
    spk.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="K=V",
        help="a Spark setting for the session anycdc starts, repeatable, e.g. "
        "spark.driver.memory=8g or spark.hadoop.fs.s3a.endpoint=...; secrets are never "
        "printed (under spark-submit use its --conf)",
    )
    run.add_argument(
        "--print-config",
        action="store_true",
        help="print the configuration (secrets masked) and exit",
    )
    run.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar, even on a terminal: one log line per batch, as in CI and "
        "logs (the bar is only ever shown when stderr is a terminal)",
    )


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    flags: dict[str, Any] = {
        "kafka_bootstrap": args.kafka_bootstrap,
        "topics": args.topics,
        "topic_pattern": args.topic_pattern,
        "starting_offsets": args.starting_offsets,
        "max_offsets_per_trigger": args.max_offsets_per_trigger,
        "source_dir": args.source_dir,
        "format": args.format,
        "target": args.target,
        "include": args.include,
        "exclude": args.exclude,
        "checkpoint": args.checkpoint,
        "trigger": args.trigger,
        "mode": args.mode,
        "max_files_per_trigger": args.max_files_per_trigger,
        "decimal_default": args.decimal_default,
        "tombstone_retention_hours": args.tombstone_retention_hours,
        "max_concurrent_tables": args.max_concurrent_tables,
        "freshness": args.freshness,
        "max_pending_rows": args.max_pending_rows,
        "key_range_min_mb": args.key_range_min_mb,
        "query_name": args.query_name,
        "auto_compact": args.auto_compact,
        "vacuum_every_hours": args.vacuum_every_hours,
        "vacuum_retain_hours": args.vacuum_retain_hours,
        "master": args.master,
    }
    if args.table_name or args.catalog:
        flags["table_name"] = args.table_name or "{database}.{table}"
    if args.kafka_option:
        flags["kafka_options"] = parse_key_values(args.kafka_option, "--kafka-option")
    if args.option:
        flags["format_options"] = parse_key_values(args.option)
    if args.primary_key:
        flags["primary_keys"] = parse_key_values(args.primary_key, "--primary-key")
    if args.spark_conf:
        flags["spark_conf"] = parse_key_values(args.spark_conf, "--spark-conf")
    if args.table_freshness:
        flags["table_freshness"] = parse_key_values(args.table_freshness, "--table-freshness")
    if args.table_property:
        flags["table_properties"] = parse_key_values(args.table_property, "--table-property")
    if args.topic_format or args.topic_option:
        flags["per_topic"] = per_topic_flags(args.topic_format, args.topic_option)
    if args.config:
        return PipelineConfig.from_file(args.config, flags)
    return PipelineConfig.from_mapping({k: v for k, v in flags.items() if v is not None})


def per_topic_flags(formats: list[str], options: list[str]) -> dict[str, dict[str, Any]]:
    """``--topic-format T=ID`` and ``--topic-option T:K=V`` -> the ``per_topic`` mapping.

    >>> per_topic_flags(["old=dts-canal-json"], ["old:legacy=true", "cn:timezone=Asia/Shanghai"])
    {'old': {'format': 'dts-canal-json', 'options': {'legacy': 'true'}}, 'cn': {'options': {'timezone': 'Asia/Shanghai'}}}
    """
    out: dict[str, dict[str, Any]] = {}
    for topic, format_id in parse_key_values(formats, "--topic-format").items():
        out.setdefault(topic, {})["format"] = format_id
    for item in options:
        topic, sep, pair = item.partition(":")
        if not sep or not topic:
            raise OptionError(f"--topic-option expects TOPIC:K=V, got {item.split('=')[0]!r}...")
        entry = out.setdefault(topic, {})
        entry.setdefault("options", {}).update(parse_key_values([pair], "--topic-option"))
    return out


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except (AnyCdcError, OSError) as exc:
        return fail(str(exc))
    if args.print_config:
        print(json.dumps(config.redacted(), indent=2, default=str))
        return 0
    if not config.source_dir and not config.kafka_bootstrap:
        return fail("give a source: --source-dir DIR or --kafka-bootstrap HOST:PORT --topics T")
    console = None
    if wants_progress(args):
        from rich.console import Console

        console = Console(stderr=True)
    setup_logging(console)
    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.session import get_spark

    spark = get_spark(app_name="anycdc run", master=config.master, conf=config.spark_conf)
    try:
        if console is None:
            pipeline = Pipeline(spark, config)
            pipeline.run()
            history = pipeline.reports
        else:
            # Spark's own warnings go straight to the terminal and would tear the bar apart
            spark.sparkContext.setLogLevel("ERROR")
            history = run_with_progress(spark, config, console)
    except RunFailed as exc:  # one line, no traceback: it concerns the whole run
        return fail(str(exc), code=1)
    events = sum(m.events for m in history)
    dead = sum(m.dead_letters for m in history)
    batches = sum(not m.flush for m in history)
    merges = sum(len(m.tables) for m in history)
    print(
        f"{batches} batches, {events} events, {merges} table applies, {dead} dead letters "
        f"-> {config.target}",
        file=sys.stderr,
    )
    return 0


def wants_progress(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    """A progress bar is for a person watching: only when ``stream`` (default: stderr) is a
    terminal and ``--no-progress`` was not given. CI, log files and pipes get plain lines."""
    if getattr(args, "no_progress", False):
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream is nobody's terminal
        return False


def setup_logging(console: Console | None) -> None:
    """Log lines as ever without a bar; with one, through rich on the bar's console, which
    prints them above the bar instead of through it."""
    if console is None:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    else:
        # RichHandler prints the time itself
        logging.basicConfig(
            level=logging.INFO, format="%(name)s %(message)s", handlers=[rich_handler(console)]
        )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def rich_handler(console: Console) -> logging.Handler:
    from rich.logging import RichHandler

    # markup off: a table name or a message excerpt in a log line is text, not rich markup;
    # the time without the date leaves the message more of an 80-column line
    return RichHandler(
        console=console,
        show_path=False,
        markup=False,
        rich_tracebacks=False,
        log_time_format="[%X]",
    )


def run_with_progress(
    spark: SparkSession, config: PipelineConfig, console: Console
) -> list[BatchMetrics]:
    """``Pipeline.run()`` with a progress bar fed by every batch and, about once a second,
    by the query's progress."""
    from anycdc.cli.progress import RunProgress
    from anycdc.spark.pipeline import Pipeline

    with RunProgress(console, available_now=config.trigger == "available-now") as progress:
        pipeline = Pipeline(spark, config, on_batch=progress.on_batch)
        pipeline.run(on_start=lambda query: progress.watch(lambda: query.lastProgress))
        return pipeline.reports


COMMAND = Command(
    name="run",
    help="apply CDC messages from Kafka or files to Delta tables",
    description="Read change messages (Kafka topics or a folder of files), decode them (any\n"
    "format, detected per message), and keep one Delta table per source table\n"
    "exactly in sync: per-key ordering by source position, duplicates and replays\n"
    "harmless, deletes, truncates, key changes, schema evolution, dead letters.\n"
    "Flags override the --config file. Tables: <target>/<database>/<table>;\n"
    "audit: <target>/_anycdc/changelog; bad messages: <target>/_anycdc/dead_letter.\n\n"
    "Examples:\n"
    "  anycdc run --source-dir captures/ --target lake/\n"
    "  anycdc run --kafka-bootstrap 127.0.0.1:9092 --topics dts_shop --target lake/ \\\n"
    "      --kafka-option kafka.security.protocol=SASL_SSL --trigger interval=10s\n"
    "  anycdc run --config pipeline.yaml --primary-key shop.audit=id,ts\n"
    "  anycdc run --source-dir captures/ --target history/ --mode scd2\n"
    "  anycdc run --kafka-bootstrap broker:9093 --topics dts_2021,dts_shop --target lake/ \\\n"
    "      --topic-format dts_2021=dts-canal-json --topic-option dts_2021:legacy=true\n"
    "  anycdc run --source-dir captures/ --target lake/ --spark-conf spark.driver.memory=8g",
    add_arguments=add_arguments,
    run=run,
)
