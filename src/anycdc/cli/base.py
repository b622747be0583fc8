"""Shared pieces of the CLI: the Command type, option parsing, output helpers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from anycdc.errors import OptionError


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, a one-line help, a long description, and two hooks."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def install(self, sub: Any) -> None:
        parser = sub.add_parser(
            self.name,
            help=self.help,
            description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.add_arguments(parser)
        parser.set_defaults(handler=self.run)


def parse_key_values(pairs: Sequence[str] | None, what: str = "--option") -> dict[str, str]:
    """``["K=V", ...]`` -> ``{"K": "V"}``; a pair without ``=`` is an error."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            from anycdc.config import is_secret

            shown = "(hidden: it looks like a secret)" if is_secret(pair) else repr(pair)
            raise OptionError(f"{what} expects K=V, got {shown}")
        out[key.strip()] = value
    return out


def add_option_argument(parser: argparse._ActionsContainer) -> None:
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        metavar="K=V",
        default=[],
        help="format option, repeatable (e.g. legacy=true, primary_key=id, timezone=Asia/Shanghai); "
        "`anycdc formats --options` lists them",
    )


def fail(message: str, code: int = 2) -> int:
    print(f"anycdc: {message}", file=sys.stderr)
    return code
