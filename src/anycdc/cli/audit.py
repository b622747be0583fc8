"""``anycdc audit``: check that every event of a run ended up somewhere."""

from __future__ import annotations

import argparse
import json

from anycdc.cli.base import Command, fail, no_run_under
from anycdc.console import print_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument(
        "--query-name",
        default="anycdc",
        metavar="NAME",
        help="the run's query_name (its ledger of applies; default: anycdc)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def run(args: argparse.Namespace) -> int:
    from anycdc.spark.accounting import NO_TABLE, account
    from anycdc.spark.session import get_spark

    missing = no_run_under(args.target)
    if missing:
        return fail(missing)
    spark = get_spark("anycdc audit")
    try:
        result = account(spark, args.target, args.query_name)
    except FileNotFoundError as exc:
        return fail(str(exc))
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
        return 0 if result.ok else 1

    def skipped(counts: dict[str, int]) -> str:
        return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))

    rows = [
        [t.table, t.rows, t.applied, t.dead_lettered, skipped(t.skipped), t.pending,
         t.unaccounted or "", "ok" if t.balanced else "LOST"]
        for t in [*result.tables, result.total()]
    ]  # fmt: skip
    print_table(
        f"anycdc audit: {args.target}",
        ["table", "changelog rows", "applied", "dead-lettered", "skipped", "pending",
         "unaccounted", ""],
        rows,
    )  # fmt: skip
    print(f"messages dead-lettered before the changelog (did not decode): "
          f"{result.decode_dead_letters}")  # fmt: skip
    for example in result.examples:
        where = f"{example['source']} partition {example['partition']} offset {example['offset']}"
        table = example["table"] or NO_TABLE
        print(f"  unaccounted: {where} event {example['event_index']} ({example['op']}, {table})")
    print("audit: OK" if result.ok else "audit: EVENTS UNACCOUNTED FOR")
    return 0 if result.ok else 1


COMMAND = Command(
    name="audit",
    help="check that every event of a run is applied, dead-lettered or skipped",
    description="Account for every row of a run's changelog (one decoded event each): it was\n"
    "applied to its table, dead-lettered (with its table and the reason), skipped for a\n"
    "documented reason (control: heartbeats and transaction markers; no-table: a DDL\n"
    "naming no table; excluded: a table include/exclude leave out), or is pending (not\n"
    "due yet under the run's freshness). Anything else is an event the pipeline lost:\n"
    "the audit lists where it came from and exits 1. Reads the target's _anycdc tables\n"
    "only; needs no ground truth (compare `anycdc verify`).\n\n"
    "Example:\n  anycdc audit --target lake/",
    add_arguments=add_arguments,
    run=run,
)
