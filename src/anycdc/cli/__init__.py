"""The ``anycdc`` command line: one subcommand per job.

Each subcommand lives in its own module exposing ``COMMAND`` (a
:class:`~anycdc.cli.base.Command`); heavy imports (pyspark) happen inside the
command's ``run`` so ``anycdc --help`` and the pure commands start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from anycdc.cli.base import Command

# subcommand modules, in the order --help lists them
COMMAND_MODULES = (
    "formats",
    "detect",
    "decode",
    "convert",
    "simulate",
    "run",
    "status",
    "verify",
    "audit",
    "replay",
    "bench",
    "dev",
)

DESCRIPTION = """\
anycdc reads database change-data-capture messages in every major vendor format
(Debezium, Canal, Alibaba DTS / DataWorks, Huawei DRS, OceanBase OMS, SharePlex),
decodes them into one canonical change event, converts between formats, and
applies them to Delta Lake tables with Spark, exactly once.

Start with `anycdc formats` to see the format ids, `anycdc detect FILE` to see
what a dump of messages is, and `anycdc decode FILE` to look inside it.
"""


def _load_commands() -> list[Command]:
    commands = []
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"anycdc.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"anycdc.cli.{name}":
                continue  # not built yet
            raise
        commands.append(module.COMMAND)
    return commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anycdc",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="anycdc 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _load_commands():
        command.install(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
