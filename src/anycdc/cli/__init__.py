"""The ``anycdc`` command line: one subcommand per job.

Each subcommand lives in its own module exposing ``COMMAND`` (a
:class:`~anycdc.cli.base.Command`); heavy imports (pyspark) happen inside the
command's ``run`` so ``anycdc --help`` and the pure commands start fast.

:func:`main` is the last line of defence: whatever a command lets escape becomes one
line on stderr (``anycdc: <what>: <why>``), never a traceback, with exit code
:data:`EXIT_USAGE` for what the user asked wrongly and :data:`EXIT_FAILED` otherwise.
``ANYCDC_DEBUG=1`` lets the exception through, with its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Final

from anycdc.cli.base import COMMAND_PARSER, EXIT_FAILED, EXIT_USAGE, Command, fail
from anycdc.errors import AnyCdcError, OptionError, UnknownFormatError, one_line
from anycdc.source import InputError

DEBUG_ENV: Final = "ANYCDC_DEBUG"
"""Set (to anything but empty or ``0``) to see the traceback of an error."""
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as a shell reports it
USAGE_ERRORS: Final = (OptionError, UnknownFormatError, InputError)
"""Errors in what the user asked (an option, a format id, an input path): exit 2."""
WRONG_PATH_ERRORS: Final = (
    FileNotFoundError,
    FileExistsError,
    IsADirectoryError,
    NotADirectoryError,
)
"""A path given that does not exist, or is of the wrong kind: usage too. Other OS errors
(permissions, a full disk, I/O) are the run failing: exit 1."""
SYNTAX_ERROR_MODULES: Final = {"yaml": "YAML", "tomllib": "TOML"}

# subcommand modules, in the order --help lists them
COMMAND_MODULES = (
    "formats",
    "detect",
    "decode",
    "convert",
    "simulate",
    "run",
    "status",
    "show",
    "cuts",
    "verify",
    "audit",
    "replay",
    "dead_letters",
    "bench",
    "dev",
)

DESCRIPTION = """\
anycdc reads database change-data-capture messages in every major vendor format
(Debezium, Canal, Alibaba DTS / DataWorks, Huawei DRS, OceanBase OMS, SharePlex,
Oracle GoldenGate, Maxwell, AWS DMS), decodes them into one canonical change
event, converts between formats, and applies them to Delta Lake tables with
Spark, exactly once.

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
    """Run one subcommand; the exit code (argparse exits with 2 itself on a bad flag)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # `anycdc decode: error: ...` and decode's usage, not the top level's
        getattr(args, COMMAND_PARSER, parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    return run_guarded(args.handler, args)


def run_guarded(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``handler(args)``, with whatever it lets escape turned into one line and an exit code
    (:func:`describe`, :func:`exit_code`); with ``ANYCDC_DEBUG`` set, raised as it is."""
    try:
        code: int = handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `anycdc decode ... | head`: the reader had enough
        return 0
    except Exception as exc:
        if _debugging():
            raise
        return fail(describe(exc), exit_code(exc))
    return code


def _debugging() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def exit_code(exc: BaseException) -> int:
    """:data:`EXIT_USAGE` for a mistake in what was asked, else :data:`EXIT_FAILED`.

    >>> exit_code(OptionError("x")), exit_code(FileNotFoundError(2, "gone", "a")), exit_code(ValueError())
    (2, 2, 1)
    """
    if isinstance(exc, USAGE_ERRORS + WRONG_PATH_ERRORS) or _syntax_error_kind(exc):
        return EXIT_USAGE
    return EXIT_FAILED


def describe(exc: BaseException) -> str:
    """An error in one line that names what was wrong: the file of an OS error, a config
    file's syntax error with its place, anycdc's own message; anything else (a bug) with
    its type and the way to see its traceback.

    >>> describe(FileNotFoundError(2, "No such file or directory", "in.jsonl"))
    'in.jsonl: No such file or directory'
    >>> describe(OptionError("mode must be scd1 or scd2, got 'x'"))
    "mode must be scd1 or scd2, got 'x'"
    >>> describe(ZeroDivisionError("division by zero"))
    'unexpected error: ZeroDivisionError: division by zero (set ANYCDC_DEBUG=1 to see the traceback)'
    """
    if isinstance(exc, OSError) and exc.filename is not None:
        reason = exc.strerror or one_line(exc)
        if exc.filename2 is not None:
            return f"{exc.filename} -> {exc.filename2}: {reason}"
        return f"{exc.filename}: {reason}"
    if isinstance(exc, AnyCdcError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    kind = _syntax_error_kind(exc)
    if kind:
        mark = getattr(exc, "problem_mark", None)
        # yaml counts from 0; people (and editors) from 1
        place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return f"{kind} syntax error{place}: {one_line(exc)}"
    if isinstance(exc, OSError):
        return one_line(exc)
    return f"unexpected error: {one_line(exc)} (set {DEBUG_ENV}=1 to see the traceback)"


def _syntax_error_kind(exc: BaseException) -> str | None:
    """``YAML``/``TOML`` for those parsers' errors (found by module: neither is imported
    here for a command that reads no configuration)."""
    for cls in type(exc).__mro__:
        kind = SYNTAX_ERROR_MODULES.get(cls.__module__.split(".")[0])
        if kind:
            return kind
    return None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
