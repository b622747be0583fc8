"""``anycdc show``: a table as of the newest ingested batch (or a cut), pending changes in."""

from __future__ import annotations

import argparse
import json
from typing import Any

from anycdc.cli.base import Command, fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", help="the source table: db.table, db.schema.table, or its name")
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument(
        "--at", type=int, metavar="CUT", help="read as of this cut (`anycdc cuts` lists them)"
    )
    parser.add_argument("--limit", "-n", type=int, default=20, help="rows to show")
    parser.add_argument("--meta", action="store_true", help="show the _cdc_ columns too")
    parser.add_argument(
        "--config", "-c", metavar="FILE",
        help="the run's configuration (its primary keys, modes and column names matter)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="JSON Lines, a row per line")


def read_config(args: argparse.Namespace) -> Any:
    """The run's configuration from ``--config`` (None: the defaults), and the target
    checked, before Spark starts: a wrong file or folder is one line, at once."""
    from anycdc.cli.base import no_run_under
    from anycdc.config import PipelineConfig
    from anycdc.errors import OptionError

    config = None
    if getattr(args, "config", None):
        config = PipelineConfig.from_file(args.config, {"target": args.target})
    missing = no_run_under(args.target)
    if missing:  # a wrong --target: exit 2, as status and audit say it
        raise OptionError(missing)
    return config


def reads_of(spark: Any, args: argparse.Namespace, config: Any) -> Any:
    """The target's :class:`~anycdc.spark.reads.TargetReads` (``config``: :func:`read_config`)."""
    from anycdc.spark.reads import TargetReads

    return TargetReads(spark, args.target, config)


def run(args: argparse.Namespace) -> int:
    from anycdc.console import print_table
    from anycdc.errors import ReadError
    from anycdc.spark.session import get_spark

    if args.limit < 0:
        return fail("--limit: give 0 or more rows")
    try:
        config = read_config(args)
    except ReadError as exc:
        return fail(str(exc), 1)
    spark = get_spark("anycdc show")
    try:
        reads = reads_of(spark, args, config)
        cut = reads.cut(args.at)
        frame = reads.read(args.table, at=args.at)
    except ReadError as exc:
        return fail(str(exc), 1)
    columns = [c for c in frame.columns if args.meta or not c.startswith("_cdc_")]
    frame = frame.select(*columns)
    sorted_frame = frame.orderBy(*columns[:3]) if columns else frame
    shown = [r.asDict() for r in sorted_frame.limit(args.limit).collect()]
    if args.json:
        for row in shown:
            print(json.dumps(row, default=str, ensure_ascii=False))
        return 0
    total = frame.count()
    title = f"{args.table} as of cut {cut}" if cut is not None else args.table
    print_table(title, columns, [[row[c] for c in columns] for row in shown])
    print(f"{len(shown)} of {total} rows")
    return 0


COMMAND = Command(
    name="show",
    help="show a table as of the newest ingested batch, pending changes folded in",
    description="A target table as a reader of the source database would see it now: the\n"
    "table's Delta version plus its changes ingested but not applied yet (a table is\n"
    "applied when it is due: up to its freshness behind), folded by the apply's own\n"
    "rules, without writing anything. --at CUT reads it as of an earlier cut (`anycdc\n"
    "cuts`), the same rows however often it is read. In Python: anycdc.spark.read(spark,\n"
    "target, table), anycdc.spark.read_consistent(...) for several tables as of one cut.\n\n"
    "Example:\n  anycdc show --target lake/ shop.orders --limit 10",
    add_arguments=add_arguments,
    run=run,
)
