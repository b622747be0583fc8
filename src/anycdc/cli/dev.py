"""``anycdc dev``: developer tooling (local Kafka broker, schema registry, Spark jars, the demo)."""

from __future__ import annotations

import argparse

from anycdc.cli.base import Command

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
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from anycdc.devtools import kafka

    sub = parser.add_subparsers(dest="dev_command", metavar="TOOL", required=True)
    kafka_parser = sub.add_parser(
        "kafka",
        help="the project's local Kafka broker: start, stop, status, restart",
        description="The project's local Kafka broker (KRaft, one node, 127.0.0.1).",
    )
    kafka.add_arguments(kafka_parser)
    from anycdc.devtools import schema_registry

    registry_parser = sub.add_parser(
        "registry",
        help="the project's local schema registry (Apicurio): start, stop, status",
        description="The project's local schema registry (Apicurio Registry, Confluent API).",
    )
    schema_registry.add_arguments(registry_parser)
    jars_parser = sub.add_parser(
        "jars", help="list, check or fetch the Spark jars (Delta, Kafka source, Avro)"
    )
    jars_parser.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "comma", "check", "fetch", "packages"),
    )
    jars_parser.add_argument(
        "directory", nargs="?", help="fetch: the folder to fill (default: the user cache)"
    )
    demo_parser = sub.add_parser(
        "demo", help="the shop demo: six vendor formats -> Kafka -> anycdc run -> Delta, checked"
    )
    demo_parser.add_argument(
        "--keep-kafka", action="store_true", help="leave the broker running afterwards"
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
    from anycdc import demo

    return demo.main(["--keep-kafka"] if args.keep_kafka else [])


COMMAND = Command(
    name="dev",
    help="developer tooling: local Kafka broker, schema registry, Spark jars, demo",
    description=DESCRIPTION,
    add_arguments=add_arguments,
    run=run,
)
