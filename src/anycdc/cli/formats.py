"""``anycdc formats``: the format ids and what each message carries."""

from __future__ import annotations

import argparse

from anycdc.cli.base import Command
from anycdc.cli.output import print_table
from anycdc.formats import format_class, format_ids


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--options", action="store_true", help="list every format's --option names with their help"
    )


def run(args: argparse.Namespace) -> int:
    if args.options:
        rows = [
            [fid, spec.name, spec.default or "", spec.help]
            for fid in format_ids()
            for spec in format_class(fid).option_specs()
        ]
        print_table("Format options", ["format", "option", "default", "meaning"], rows)
        return 0
    rows = []
    for fid in format_ids():
        cls = format_class(fid)
        caps = cls.capabilities
        rows.append(
            [
                fid,
                cls.vendor,
                "avro" if cls.binary else "json",
                caps.before_image,
                caps.types,
                caps.position,
                "yes" if caps.key_names else "no (use primary_key=)",
                "yes" if cls.can_encode else "no",
            ]
        )
    print_table(
        "Formats",
        ["id", "vendor", "wire", "before image", "types", "position", "key names", "encode"],
        rows,
    )
    return 0


COMMAND = Command(
    name="formats",
    help="list the format ids and what each carries",
    description="List every format id anycdc decodes (and encodes), its vendor, and what its\n"
    "messages carry: the before image of updates, column types, an ordering position,\n"
    "primary-key names.\n\nExample:\n  anycdc formats\n  anycdc formats --options",
    add_arguments=add_arguments,
    run=run,
)
