"""``anycdc dev``: developer tooling (local Kafka broker, schema registry, Spark jars, the demo)."""

from __future__ import annotations

import argparse
from pathlib import Path

from anycdc.cli.base import Command, fail, install_parser

DESCRIPTION = """\
Developer tooling for a checkout of anycdc (after `make setup`):

  anycdc dev kafka start [--port N] [--fresh]   start the project's own Kafka broker
                                                (KRaft, one node, 127.0.0.1, data in var/kafka)
  anycdc dev kafka status | stop | restart
  anycdc dev registry start [--port N] [--user U:P]   start the project's schema registry
                                                (Apicurio, Confluent API at /apis/ccompat/v7)
  anycdc dev registry status | stop
  anycdc dev jars [list|comma|check]            the Spark jars given as spark.jars
                                                (`comma` is ready for spark-submit --jars)
  anycdc dev jars fetch [DIR]                   Spark resolves the pinned jars from Maven into
                                                DIR (default: the user cache), for offline use
  anycdc dev jars packages                      the spark-submit --packages/--exclude-packages
  anycdc dev demo                               the shop demo: six vendor formats -> Kafka -> anycdc run -> Delta, checked
  anycdc dev config-table [--update README.md]  the README's table of `anycdc run` settings,
                                                from their declarations in anycdc/config.py
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from anycdc.devtools import kafka

    sub = parser.add_subparsers(dest="dev_command", metavar="TOOL", required=True)
    kafka_parser = install_parser(
        sub,
        "kafka",
        help="the project's local Kafka broker: start, stop, status, restart",
        description="The project's local Kafka broker (KRaft, one node, 127.0.0.1).\n\n"
        "Examples:\n  anycdc dev kafka start\n  anycdc dev kafka status\n  anycdc dev kafka stop",
    )
    kafka.add_arguments(kafka_parser)
    from anycdc.devtools import schema_registry

    registry_parser = install_parser(
        sub,
        "registry",
        help="the project's local schema registry (Apicurio): start, stop, status",
        description="The project's local schema registry (Apicurio Registry, Confluent API).\n\n"
        "Examples:\n  anycdc dev registry start\n  anycdc dev registry status",
    )
    schema_registry.add_arguments(registry_parser)
    jars_parser = install_parser(
        sub,
        "jars",
        help="list, check or fetch the Spark jars (Delta, Kafka source, Avro)",
        description="The Spark jars anycdc run needs (Delta, the Kafka source, Avro).\n\n"
        "Examples:\n  anycdc dev jars check\n  anycdc dev jars fetch ~/jars\n"
        '  spark-submit --jars "$(anycdc dev jars comma)" ...',
    )
    jars_parser.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "comma", "check", "fetch", "packages"),
        help="list them, comma-join them (for --jars), check they are there, fetch them, "
        "or print spark-submit's --packages",
    )
    jars_parser.add_argument(
        "directory", nargs="?", help="fetch: the folder to fill (default: the user cache)"
    )
    demo_parser = install_parser(
        sub,
        "demo",
        help="the shop demo: six vendor formats -> Kafka -> anycdc run -> Delta, checked",
        description="The shop demo (make demo): six vendor formats -> Kafka -> anycdc run ->\n"
        "Delta, checked against the simulator's truth.\n\nExample:\n  anycdc dev demo --keep-kafka",
    )
    demo_parser.add_argument(
        "--keep-kafka", action="store_true", help="leave the broker running afterwards"
    )
    table_parser = install_parser(
        sub,
        "config-table",
        help="print the README's table of `anycdc run` settings (or write it into the README)",
        description="The README's table of `anycdc run` settings, from their declarations.\n\n"
        "Examples:\n  anycdc dev config-table\n  anycdc dev config-table --update README.md",
    )
    table_parser.add_argument(
        "--update", metavar="README", help="replace the table between the README's markers"
    )


def run(args: argparse.Namespace) -> int:
    if args.dev_command == "kafka":
        from anycdc.devtools import kafka

        return kafka.run(args)
    if args.dev_command == "registry":
        from anycdc.devtools import schema_registry

        return schema_registry.run(args)
    if args.dev_command == "jars":
        from anycdc.spark import jars

        return jars.main([args.action, *([args.directory] if args.directory else [])])
    if args.dev_command == "config-table":
        return config_table(args.update)
    from anycdc import demo

    return demo.main(["--keep-kafka"] if args.keep_kafka else [])


def config_table(readme: str | None) -> int:
    """Print the settings' table, or write it between the markers of ``readme``."""
    from anycdc.config_docs import markdown_table, with_markdown_table
    from anycdc.errors import OptionError

    if readme is None:
        print(markdown_table(), end="")
        return 0
    path = Path(readme)
    try:
        path.write_text(with_markdown_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    except (OSError, OptionError) as exc:
        return fail(f"{readme}: {exc}")
    return 0


COMMAND = Command(
    name="dev",
    help="developer tooling: local Kafka broker, schema registry, Spark jars, demo",
    description=DESCRIPTION,
    add_arguments=add_arguments,
    run=run,
)
