"""Shared pieces of the CLI: the Command type, option parsing, output helpers."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
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


COMMAND_PARSER: Final = "_command_parser"
"""The namespace attribute holding the parser of the subcommand given."""


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
        # the subcommand's parser reports arguments it does not know (with its own usage)
        parser.set_defaults(handler=self.run, **{COMMAND_PARSER: parser})


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


def no_run_under(target: str, system_table: str = "changelog") -> str | None:
    """Why ``target`` holds no anycdc run, told before Spark starts (a wrong folder is one
    line, at once, not a session's start-up and then the same line): a local folder
    without ``_anycdc/<system_table>``. A URI (``s3a://...``) is left to the command, which
    reads it through Spark.

    >>> no_run_under("/nonexistent", "batches")
    'no anycdc run found under /nonexistent (missing _anycdc/batches)'
    >>> no_run_under("s3a://bucket/lake") is None
    True
    """
    if "://" in target or (Path(target) / "_anycdc" / system_table).is_dir():
        return None
    return f"no anycdc run found under {target} (missing _anycdc/{system_table})"


class NamedFormatMiss:
    """What messages look like when the format a user named (``--from`` / ``--format``)
    failed on them: the first failure is detected, and where no message decoded at all,
    :meth:`hint` names the format they look like (a wrong flag, not bad data).

    >>> miss = NamedFormatMiss("debezium-json", "--from")
    >>> miss.failed(b'{"data":[{"id":"1"}],"database":"shop","table":"t","type":"INSERT",'
    ...             b'"isDdl":false,"pkNames":["id"],"es":1,"ts":1,"mysqlType":{"id":"int"}}')
    >>> miss.hint(decoded=0)
    'no message is debezium-json: they look like canal-json (`anycdc detect`): give --from canal-json, or leave --from out to detect each message'
    >>> miss.hint(decoded=3) is None
    True
    """

    def __init__(self, named: str, flag: str) -> None:
        self.named = named
        self.flag = flag
        self.looks: str | None = None
        from anycdc.decoding import AUTO

        self._asked = named == AUTO  # detection named them already: nothing to add

    def failed(self, value: bytes | None) -> None:
        """A message failed to decode as the named format (only the first is looked at)."""
        if self._asked or value is None:
            return
        self._asked = True
        from anycdc.formats import detect

        try:
            found = detect(value)
        except Exception:  # a hint only: a message no sniffer can read gives none
            return
        if found.known and found.format != self.named:
            self.looks = found.format

    def hint(self, decoded: int) -> str | None:
        """The line to print when ``decoded`` messages (of the command's) decoded, if any."""
        if decoded or self.looks is None:
            return None
        return (
            f"no message is {self.named}: they look like {self.looks} (`anycdc detect`): "
            f"give {self.flag} {self.looks}, or leave {self.flag} out to detect each message"
        )


PROGRESS_EVERY_S: Final = 5.0
"""Seconds between two progress lines of long work (decode, convert, simulate)."""
PROGRESS_CHECK_EVERY: Final = 256
"""Items between two looks at the clock (a clock read per message would cost more)."""


def add_progress_arguments(parser: argparse._ActionsContainer) -> None:
    """``--progress`` and ``--quiet``: what :func:`progress_wanted` reads."""
    parser.add_argument(
        "--progress",
        action="store_true",
        help=f"a progress line on stderr every {PROGRESS_EVERY_S:g}s (default: on when stderr "
        "is a terminal and stdout is not)",
    )
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress and no summary line (failed messages are still reported)",
    )


def progress_wanted(args: argparse.Namespace) -> bool:
    """Progress lines for a person watching a long command: asked for, or stderr is a
    terminal while stdout goes elsewhere (then they do not mix with the output)."""
    if getattr(args, "quiet", False):
        return False
    return bool(
        getattr(args, "progress", False) or (sys.stderr.isatty() and not sys.stdout.isatty())
    )


class ProgressLine:
    """A line on stderr every :data:`PROGRESS_EVERY_S` seconds of long work, when wanted.

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     line = ProgressLine("convert", True, every_s=0)
    ...     for n in range(1, 513):
    ...         line.step(n, lambda: f"{n} messages")
    >>> [text.split(",")[0] for text in err.getvalue().splitlines()]
    ['convert: 256 messages', 'convert: 512 messages']
    """

    def __init__(self, command: str, enabled: bool, every_s: float = PROGRESS_EVERY_S) -> None:
        self.command = command
        self.enabled = enabled
        self._every_s = every_s
        self._started = time.monotonic()
        self._next = self._started + every_s

    def step(self, done: int, say: Callable[[], str], unit: str = "messages") -> None:
        """After item ``done``: print ``say()`` and the rate when a line is due."""
        if not self.enabled or done % PROGRESS_CHECK_EVERY:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self._every_s
        rate = done / max(now - self._started, 1e-9)
        print(f"{self.command}: {say()}, {rate:.0f} {unit}/s", file=sys.stderr, flush=True)

    def phase(self, text: str) -> None:
        """A step of work that reports no count (``simulate``: building, writing)."""
        if self.enabled:
            elapsed = time.monotonic() - self._started
            print(f"{self.command}: {text} ({elapsed:.1f}s)", file=sys.stderr, flush=True)
