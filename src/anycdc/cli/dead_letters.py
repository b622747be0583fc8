"""``anycdc dead-letters``: list a target's dead letters (read with delta-rs: no JVM)."""

from __future__ import annotations

import argparse
import json
from typing import Final

from anycdc.cli.base import Command, fail

DEFAULT_LIMIT: Final = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument(
        "--table",
        metavar="DB.TABLE",
        help="only the dead letters of this table, as `anycdc status` names it "
        "(e.g. shop.orders; messages that did not decode name no table)",
    )
    parser.add_argument(
        "--limit",
        "-n",
        type=_limit,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"show the N newest (default {DEFAULT_LIMIT}; 0: all)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per line: the whole message as base64 (raw), a text prefix "
        "(raw_text), the coordinates, table, batch, error",
    )


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expects 0 or more, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    from anycdc.console import print_table
    from anycdc.dead_letters import TABLE_HEADERS, NotATarget, read, select, tables_named

    try:
        letters = read(args.target)
    except NotATarget as exc:
        return fail(str(exc))
    if not letters:
        print(f"no dead letters in {args.target}")
        return 0
    shown, matched = select(letters, args.table, args.limit)
    if not matched:
        print(
            f"no dead letters of {args.table} in {args.target} "
            f"(the dead letters name: {tables_named(letters)})"
        )
        return 0
    if args.json:
        for letter in shown:
            print(json.dumps(letter.as_json(), ensure_ascii=False))
        return 0
    what = f" of {args.table}" if args.table else ""
    title = f"anycdc dead letters{what}: {args.target}"
    print_table(title, TABLE_HEADERS, [letter.as_row() for letter in shown])
    more = f"; --limit {matched} (or 0) shows all" if len(shown) < matched else ""
    print(f"{len(shown)} of {matched} dead letters{what}, newest first{more}")
    return 0


COMMAND = Command(
    name="dead-letters",
    help="list a target's dead letters: error, where the message came from, the message",
    description="List the dead letters of a run (<target>/_anycdc/dead_letter), newest first:\n"
    "when it failed, the table (none for a message that did not decode), its coordinates\n"
    "(PATH:LINE for a file, TOPIC[PARTITION]@OFFSET for Kafka), the ingest batch that\n"
    "wrote it, the format tried, the error and the start of the raw message (its UTF-8\n"
    "text with control characters escaped, else hex:...; cut at 120 characters).\n"
    "Reads the Delta table with delta-rs: no Java, no Spark. The batch is the commit's\n"
    "txnVersion (empty for one a replay wrote, or whose file a compaction rewrote).\n"
    "--json writes one object per line, with the whole message as base64 (raw).\n"
    "Fix the cause, then `anycdc replay-dead-letters`.\n\n"
    "Examples:\n"
    "  anycdc dead-letters --target lake/                       # the 50 newest\n"
    "  anycdc dead-letters --target lake/ --table shop.orders --limit 0\n"
    "  anycdc dead-letters --target lake/ --json | jq -r .raw | head -1 | base64 -d",
    add_arguments=add_arguments,
    run=run,
)
