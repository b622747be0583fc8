"""``anycdc cuts``: the points every table of a target can be read at together."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from anycdc.cli.base import Command, fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument(
        "--config", "-c", metavar="FILE", help="the run's configuration (its query name, tables)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def run(args: argparse.Namespace) -> int:
    from anycdc.cli.show import read_config, reads_of
    from anycdc.console import print_table, utc_time
    from anycdc.errors import ReadError
    from anycdc.spark.session import get_spark

    try:
        config = read_config(args)
    except ReadError as exc:
        return fail(str(exc), 1)
    spark = get_spark("anycdc cuts")
    try:
        found = reads_of(spark, args, config).cuts()
    except ReadError as exc:
        return fail(str(exc), 1)
    if args.json:  # offsets: every partition read through the cut
        print(json.dumps([asdict(c) for c in found], indent=2))
        return 0
    rows = [
        [
            c.batch,
            utc_time(c.ingested_at_ms),
            c.rows,
            "; ".join(
                f"{source} " + ",".join(f"{p}:{o}" for p, o in parts.items())
                for source, parts in c.advanced.items()
            ),
            "yes" if c.readable else f"no: {c.why_not}",
        ]
        for c in found
    ]
    print_table(
        f"anycdc cuts: {args.target}",
        ["cut", "ingested at", "rows", "read (source partition:last offset)", "readable"],
        rows,
    )
    return 0


COMMAND = Command(
    name="cuts",
    help="list the cuts: points every table can be read at together",
    description="A cut is the end of an ingest batch: every table of the target can be read\n"
    "as of it (`anycdc show --at CUT`, anycdc.spark.read_consistent(spark, target,\n"
    "tables, at=CUT)), each from its Delta version plus the changes ingested up to the cut, so a\n"
    "join across tables sees one state of the source. Per cut: when it was ingested, its\n"
    "rows, the offset read through per source partition, and whether it is still\n"
    "readable (each table's Delta version for it in its log and not vacuumed).\n\n"
    "Example:\n  anycdc cuts --target lake/",
    add_arguments=add_arguments,
    run=run,
)
