"""Shared pieces of the CLI: the Command type, option parsing, output helpers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from anycdc.errors import OptionError

EXIT_FAILED: Final = 1
"""The command ran and failed: bad data, an unreachable service, an I/O error."""
EXIT_USAGE: Final = 2
"""What was asked is wrong (a flag, a path, the configuration), as argparse's own exit."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help`` as written (descriptions and examples keep their lines), with each
    option's default added where it has one worth saying and its help does not say it.

    >>> parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    >>> _ = parser.add_argument("--limit", type=int, default=50, help="rows to show")
    >>> _ = parser.add_argument("--json", action="store_true", help="JSON Lines")
    >>> _ = parser.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    >>> text = parser.format_help()
    >>> "rows to show (default: 50)" in text, "JSON Lines (default" in text, text.count("default") == 2
    (True, False, True)
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or "default" in text.lower() or "%(default)" in text:
            return text
        default = action.default
        if default in (None, False, True, argparse.SUPPRESS) or default == [] or default == "":
            return text  # a switch, or nothing set unless given
        if not action.option_strings and action.nargs not in (argparse.OPTIONAL, "*"):
            return text
        return f"{text} (default: %(default)s)"


def install_parser(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand's parser, with the CLI's :class:`HelpFormatter`."""
    parser: argparse.ArgumentParser = sub.add_parser(name, formatter_class=HelpFormatter, **kwargs)
    return parser


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, a one-line help, a long description, and two hooks."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def install(self, sub: Any) -> None:
        parser = install_parser(sub, self.name, help=self.help, description=self.description)
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


def parse_format_options(pairs: Sequence[str] | None, what: str = "--option") -> dict[str, str]:
    """Format options ``K=V`` (:func:`parse_key_values`); an option of names (``primary_key``)
    given empty is an error: ``primary_key=`` would silently mean "no key" instead.

    >>> parse_format_options(["primary_key="])
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: --option primary_key='' names no column: give NAME[,NAME]
    """
    from anycdc.config import check_name_options

    options = parse_key_values(pairs, what)
    check_name_options(options, what)
    return options


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


def fail(message: str, code: int = EXIT_USAGE) -> int:
    """Print ``anycdc: message`` to stderr and return ``code`` (the exit code)."""
    print(f"anycdc: {message}", file=sys.stderr)
    return code
