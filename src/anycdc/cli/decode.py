"""``anycdc decode``: messages in, canonical JSON Lines out."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from anycdc.cli.base import Command, add_option_argument, fail, parse_key_values
from anycdc.cli.output import print_table
from anycdc.decoding import AUTO, MessageDecoder
from anycdc.errors import AnyCdcError, DecodeError
from anycdc.event import ChangeEvent, event_to_json
from anycdc.formats import format_ids
from anycdc.pairing import SplitUpdatePairer
from anycdc.source import iter_file_messages


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        default=["-"],
        metavar="FILE",
        help="files or folders; - = stdin (default)",
    )
    parser.add_argument(
        "--format",
        "-f",
        default=AUTO,
        choices=[AUTO, *format_ids()],
        metavar="ID",
        help="format id, or auto (default) to detect each message",
    )
    add_option_argument(parser)
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 if any message fails to decode"
    )
    parser.add_argument(
        "--pretty", action="store_true", help="print a table for people instead of JSON Lines"
    )
    parser.add_argument(
        "--no-pair",
        action="store_true",
        help="do not join split update halves (UPDATE_BEFOR/AFTER)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        decoder = MessageDecoder(args.format, parse_key_values(args.option))
    except AnyCdcError as exc:
        return fail(str(exc))
    pairer = None if args.no_pair else SplitUpdatePairer()
    errors: Counter[str] = Counter()
    events_out = 0
    rows: list[list[object]] = []

    def emit(events: list[ChangeEvent]) -> None:
        nonlocal events_out
        for event in events:
            events_out += 1
            if args.pretty:
                rows.append(_pretty_row(event))
            else:
                sys.stdout.write(event_to_json(event) + "\n")

    messages = 0
    for message in iter_file_messages(args.files):
        messages += 1
        try:
            _, events = decoder.decode(message.value, message.key)
        except DecodeError as exc:
            errors[exc.format_id] += 1
            print(f"{message.coordinates}: {exc}", file=sys.stderr)
            continue
        emit([p for e in events for p in pairer.push(e)] if pairer else events)
    if pairer:
        emit(pairer.flush())
    if args.pretty:
        print_table(
            "Change events", ["op", "table", "key", "position", "ts_ms", "before", "after"], rows
        )
    bad = sum(errors.values())
    print(f"{messages} messages, {events_out} events, {bad} errors", file=sys.stderr)
    return 1 if args.strict and bad else 0


def _pretty_row(event: ChangeEvent) -> list[object]:
    def short(image: object) -> str:
        text = "" if image is None else ", ".join(f"{k}={v!r}" for k, v in dict(image).items())  # type: ignore[call-overload]
        return text if len(text) <= 60 else text[:57] + "..."

    return [
        event.op.value,
        event.qualified_table,
        ",".join(event.key or ()),
        str(event.position) if event.position else "",
        event.ts_ms,
        short(event.before),
        short(event.after),
    ]


COMMAND = Command(
    name="decode",
    help="decode messages into canonical JSON Lines",
    description="Decode CDC messages into canonical change events, one JSON object per line on\n"
    "stdout (nothing else goes to stdout). Input: JSON Lines (a line `null` is a\n"
    "Kafka tombstone), .json files of one message, or .avro files of one binary\n"
    "message. Bad messages are reported on stderr as `FILE:LINE: format: $.path:\n"
    "reason` and counted; the rest goes on (use --strict to fail).\n\n"
    "Examples:\n"
    "  anycdc decode dump.jsonl > events.jsonl\n"
    "  anycdc decode --format dts-canal-json -o legacy=true old_task.jsonl\n"
    "  kafka-console-consumer ... | anycdc decode --pretty",
    add_arguments=add_arguments,
    run=run,
)
