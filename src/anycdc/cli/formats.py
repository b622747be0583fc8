"""``anycdc formats``: the format ids and what each message carries.

Both the terminal table and the README's formats table are rendered from each
format's one typed declaration, :class:`~anycdc.formats.base.Capabilities`.
``anycdc formats --readme README.md`` rewrites the README's table (between
:data:`README_BEGIN` and :data:`README_END`) in place.

>>> print(markdown_table().splitlines()[0])
| id | before image of updates | column types | ordering position | key names | carries |
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from anycdc.cli.base import Command, fail
from anycdc.console import print_table
from anycdc.formats import format_class, format_ids

README_BEGIN: Final = (
    "<!-- formats-table: generated from the formats' Capabilities by "
    "`anycdc formats --readme README.md`; do not edit by hand -->"
)
README_END: Final = "<!-- /formats-table -->"
MARKDOWN_HEADERS: Final = (
    "id",
    "before image of updates",
    "column types",
    "ordering position",
    "key names",
    "carries",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--options", action="store_true", help="list every format's --option names with their help"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the capabilities as the README's table"
    )
    parser.add_argument(
        "--readme",
        metavar="FILE",
        help=f"rewrite the table between {README_BEGIN[:18]}... and {README_END} in FILE",
    )


def markdown_table() -> str:
    """The README's formats table, one row per format id."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(MARKDOWN_HEADERS) + " |", "|" + "---|" * len(MARKDOWN_HEADERS)]
    for fid in format_ids():
        caps = format_class(fid).capabilities
        cells = (
            f"`{fid}`",
            caps.before_text,
            caps.types_text,
            caps.position,
            caps.key_text,
            ", ".join(caps.carries),
        )
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def readme_with_table(text: str) -> str:
    """``text`` (a README) with the block between the markers replaced by :func:`markdown_table`."""
    try:
        start = text.index(README_BEGIN) + len(README_BEGIN)
        end = text.index(README_END, start)
    except ValueError:
        raise ValueError(f"no {README_BEGIN!r} ... {README_END!r} block") from None
    return text[:start] + "\n" + markdown_table() + text[end:]


def _rewrite_readme(path: Path) -> int:
    """``--readme FILE``: the table rewritten in place, or one line saying why it cannot be
    (no such file, a folder, no markers: the file is left as it was)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return fail(f"--readme {path}: no such file")
    except IsADirectoryError:
        return fail(f"--readme {path}: is a folder, not a file")
    except UnicodeDecodeError:
        return fail(f"--readme {path}: not UTF-8 text")
    except OSError as exc:
        return fail(f"--readme {path}: cannot read: {exc.strerror or exc}")
    if README_BEGIN not in text or README_END not in text.partition(README_BEGIN)[2]:
        return fail(
            f"--readme {path}: no formats table to rewrite: put the lines {README_BEGIN!r} "
            f"and {README_END!r} where it goes"
        )
    try:
        path.write_text(readme_with_table(text), "utf-8")
    except OSError as exc:
        return fail(f"--readme {path}: cannot write: {exc.strerror or exc}", code=1)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.options:
        rows = [
            [fid, spec.name, spec.kind, spec.default or "", spec.help]
            for fid in format_ids()
            for spec in format_class(fid).option_specs()
        ]
        print_table("Format options", ["format", "option", "type", "default", "meaning"], rows)
        return 0
    if args.markdown:
        print(markdown_table(), end="")
        return 0
    if args.readme:
        return _rewrite_readme(Path(args.readme))
    rows = []
    for fid in format_ids():
        cls = format_class(fid)
        caps = cls.capabilities
        rows.append(
            [
                fid,
                cls.vendor,
                "avro" if cls.binary else "json",
                caps.before_text,
                caps.types_text,
                caps.position,
                caps.key_text,
                ", ".join(caps.carries),
                "yes" if cls.can_encode else "no",
            ]
        )
    print_table(
        "Formats",
        ["id", "vendor", "wire", "before image", "types", "position", "key names", "carries",
         "encode"],
        rows,
    )  # fmt: skip
    return 0


COMMAND = Command(
    name="formats",
    help="list the format ids and what each carries",
    description="List every format id anycdc decodes (and encodes), its vendor, and what its\n"
    "messages carry: the before image of updates, column types, an ordering position,\n"
    "primary-key names, and which of DDL, TRUNCATE, BEGIN/COMMIT, heartbeats, snapshots ...\n\n"
    "Example:\n  anycdc formats\n  anycdc formats --options\n"
    "  anycdc formats --readme README.md   (regenerate the README's formats table)",
    add_arguments=add_arguments,
    run=run,
)
