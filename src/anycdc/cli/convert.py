"""``anycdc convert``: transcode messages from one vendor format to another."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import BinaryIO

from anycdc.cli.base import Command, add_option_argument, fail, parse_key_values
from anycdc.decoding import AUTO, MessageDecoder
from anycdc.errors import AnyCdcError, DecodeError, EncodeError
from anycdc.formats import format_class, format_ids, get_format
from anycdc.pairing import SplitUpdatePairer
from anycdc.source import iter_file_messages

SCHEMA_DIR = "schema_dir"
SCHEMA_STORE = frozenset({SCHEMA_DIR, "registry_url"})  # where a framed-Avro target's schemas go


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="file or folder of messages (- = stdin)")
    parser.add_argument(
        "output", metavar="OUT", help="JSON Lines file (- = stdout), or a folder for Avro targets"
    )
    parser.add_argument(
        "--to", required=True, choices=format_ids(), metavar="ID", help="target format"
    )
    parser.add_argument(
        "--from",
        dest="source",
        default=AUTO,
        choices=[AUTO, *format_ids()],
        metavar="ID",
        help="source format (default: auto, per message)",
    )
    add_option_argument(parser)
    parser.add_argument(
        "--to-option",
        action="append",
        default=[],
        metavar="K=V",
        help="option of the target format",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 if any message fails")


def run(args: argparse.Namespace) -> int:
    try:
        decoder = MessageDecoder(args.source, parse_key_values(args.option))
        to_options = parse_key_values(args.to_option, "--to-option")
        accepted = {spec.name for spec in format_class(args.to).option_specs()}
        if SCHEMA_STORE <= accepted and not SCHEMA_STORE & to_options.keys():
            # Confluent-framed Avro names its schema by id: keep the schemas with the messages
            to_options[SCHEMA_DIR] = str(Path(args.output) / "schemas")
        encoder = get_format(args.to, to_options)
    except AnyCdcError as exc:
        return fail(str(exc))
    if not encoder.can_encode:
        return fail(f"{args.to} has no encoder (decode-only format)")
    binary = format_class(args.to).binary
    sink = _AvroFolder(Path(args.output)) if binary else _LinesFile(args.output)
    pairer = SplitUpdatePairer()
    read = written = bad = 0
    try:
        for message in iter_file_messages([args.input]):
            read += 1
            try:
                _, events = decoder.decode(message.value, message.key)
                for event in (p for e in events for p in pairer.push(e)):
                    for out in encoder.encode(event):
                        sink.write(out)
                        written += 1
            except (DecodeError, EncodeError) as exc:
                bad += 1
                print(f"{message.coordinates}: {exc}", file=sys.stderr)
        for event in pairer.flush():
            for out in encoder.encode(event):
                sink.write(out)
                written += 1
    finally:
        sink.close()
    print(f"{read} messages read, {written} written as {args.to}, {bad} errors", file=sys.stderr)
    return 1 if args.strict and bad else 0


class _LinesFile:
    def __init__(self, target: str) -> None:
        self._handle: BinaryIO = sys.stdout.buffer if target == "-" else open(target, "wb")
        self._close = target != "-"

    def write(self, data: bytes) -> None:
        self._handle.write(data.replace(b"\n", b" ") + b"\n")

    def close(self) -> None:
        if self._close:
            self._handle.close()
        else:
            self._handle.flush()


class _AvroFolder:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._folder = folder
        self._count = 0

    def write(self, data: bytes) -> None:
        self._count += 1
        (self._folder / f"{self._count:09d}.avro").write_bytes(data)

    def close(self) -> None:
        pass


COMMAND = Command(
    name="convert",
    help="transcode messages between vendor formats",
    description="Decode each message (auto-detected, or --from ID) and encode the events in the\n"
    "--to format, as that vendor writes them. Split update halves are joined first.\n"
    "Avro targets write one .avro file per message into the OUT folder; debezium-avro\n"
    "writes its schemas to OUT/schemas/<id>.avsc (or --to-option registry_url=URL).\n\n"
    "Examples:\n"
    "  anycdc convert --to debezium-json canal.jsonl debezium.jsonl\n"
    "  anycdc convert --from dataworks-json --to dts-avro dw.jsonl avro_out/",
    add_arguments=add_arguments,
    run=run,
)
