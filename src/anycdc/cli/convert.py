"""``anycdc convert``: transcode messages from one vendor format to another.

The command never loses a file: IN is checked before OUT is touched, IN and OUT may not be
the same file (nor one inside the other), an existing OUT is replaced only with ``--force``,
and the output is written beside OUT first and moved into place only once every message has
been read, so a run that fails leaves the old OUT as it was.

What the target format cannot carry (a zone-less timestamp in a format of instants, a
snapshot row in a format without snapshots, ...) is said once per column on stderr
(:mod:`anycdc.formats.fidelity`); ``--strict`` makes it an exit 1.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import BinaryIO, Final, Protocol

from anycdc.cli.base import (
    Command,
    NamedFormatMiss,
    ProgressLine,
    add_option_argument,
    add_progress_arguments,
    fail,
    parse_key_values,
    progress_wanted,
)
from anycdc.decoding import AUTO, MessageDecoder
from anycdc.errors import AnyCdcError, DecodeError, EncodeError
from anycdc.event import ChangeEvent
from anycdc.formats import format_class, format_ids, get_format
from anycdc.formats.base import Format
from anycdc.formats.fidelity import LossReport
from anycdc.pairing import SplitUpdatePairer
from anycdc.source import iter_file_messages, list_source_files
from anycdc.source.files import LINE_SUFFIXES, WHOLE_FILE_SUFFIXES

STDIO: Final = "-"
SCHEMA_DIR: Final = "schema_dir"
SCHEMA_STORE: Final = frozenset({SCHEMA_DIR, "registry_url"})  # where framed-Avro schemas go
SCHEMAS_FOLDER: Final = "schemas"  # OUT/schemas/<id>.avsc: debezium-avro's schemas
SCHEMA_SUFFIX: Final = ".avsc"
MESSAGE_FILE: Final = "{:09d}.avro"
KEY_FILE: Final = "{:09d}.key.avro"
OUTPUT_FILE: Final = re.compile(r"\d{9}(\.key)?\.avro")  # what an Avro folder target holds
KEY_SEPARATOR: Final = b"\t"  # kafka-console-consumer --property print.key=true
NULL_KEY: Final = b"null"  # how kafka-console-consumer prints a record without a key
ENCODER_REFUSALS: Final = (ValueError, ArithmeticError, TypeError)
"""What an encoder raises for a value it cannot write (an event's ``invalid`` value, kept as
the source sent it): that message's error, said on its line, never a traceback."""
USAGE_ERROR: Final = 2
DATA_ERROR: Final = 1


class _EncodingFormats:
    """The ids ``--to`` accepts: the formats that encode (:attr:`Format.can_encode`).

    A membership test imports only the format asked about; the full list (for ``--help``
    and argparse's "invalid choice" message) imports every format, only when shown.
    """

    def __contains__(self, format_id: object) -> bool:
        return format_id in format_ids() and format_class(str(format_id)).can_encode

    def __iter__(self) -> Iterator[str]:
        return (f for f in format_ids() if format_class(f).can_encode)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="IN", help="file or folder of message files (- = stdin)")
    parser.add_argument(
        "output",
        metavar="OUT",
        help="JSON Lines file (- = stdout), or a folder for Avro targets; "
        "never the same file as IN",
    )
    parser.add_argument(
        "--to",
        required=True,
        choices=_EncodingFormats(),
        metavar="ID",
        help="target format, one that encodes: %(choices)s",
    )
    parser.add_argument(
        "--from",
        dest="source",
        default=AUTO,
        choices=[AUTO, *format_ids()],
        metavar="ID",
        help="source format (default: %(default)s: detected per message)",
    )
    add_option_argument(parser)
    parser.add_argument(
        "--to-option",
        action="append",
        default=[],
        metavar="K=V",
        help="option of the target format, repeatable (default: none)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing OUT file, or the previous output in an OUT folder "
        "(default: refuse)",
    )
    parser.add_argument(
        "--with-keys",
        action="store_true",
        help="write each message's Kafka key too: KEY<TAB>VALUE lines, or NNNNNNNNN.key.avro "
        "beside NNNNNNNNN.avro (default: values only)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any message fails or the target format loses a value "
        "(default: report and go on)",
    )
    add_progress_arguments(parser)


class _Sink(Protocol):
    """Where the encoded messages go: staged beside OUT until :meth:`commit`."""

    def write(self, value: bytes, key: bytes | None) -> None: ...

    def commit(self) -> None: ...

    def discard(self) -> None: ...


class _UsageError(Exception):
    """A path or flag that cannot be used: said as one line, exit 2."""


class _WriteFailed(Exception):
    """Writing the staged output failed (a full disk): an exit 1 naming OUT."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def run(args: argparse.Namespace) -> int:
    binary = format_class(args.to).binary
    try:
        _check_input(args.input)
        sink = _open_sink(args, binary)
    except _UsageError as exc:
        return fail(str(exc), USAGE_ERROR)
    try:
        code, complete = _convert(args, sink)
    except BaseException:  # interrupted, or a bug: the old OUT stays as it was
        sink.discard()
        raise
    if not complete:
        sink.discard()
        return code
    try:
        sink.commit()
    except OSError as exc:
        sink.discard()
        return fail(f"cannot write OUT {args.output}: {exc.strerror or exc}", DATA_ERROR)
    return code


def _convert(args: argparse.Namespace, sink: _Sink) -> tuple[int, bool]:
    """Decode IN and encode into ``sink``: the exit code, and whether every message was
    read (only then may the output replace OUT)."""
    try:
        decoder = MessageDecoder(args.source, parse_key_values(args.option))
        to_options = parse_key_values(args.to_option, "--to-option")
        accepted = {spec.name for spec in format_class(args.to).option_specs()}
        if SCHEMA_STORE <= accepted and not SCHEMA_STORE & to_options.keys():
            # Confluent-framed Avro names its schema by id: keep the schemas with the messages
            assert isinstance(sink, _AvroFolder)
            to_options[SCHEMA_DIR] = str(sink.staging / SCHEMAS_FOLDER)
        encoder = get_format(args.to, to_options)
    except AnyCdcError as exc:
        return fail(str(exc), USAGE_ERROR), False
    report = LossReport(args.to)
    pairer = SplitUpdatePairer()
    miss = NamedFormatMiss(args.source, "--from")
    read = written = bad = 0

    def emit(event: ChangeEvent) -> int:
        try:
            values = encoder.encode(event)
            key = _key_of(encoder, event) if args.with_keys else None
        except ENCODER_REFUSALS as exc:
            raise _refusal(args.to, event, exc) from None
        try:
            for value in values:
                sink.write(value, key)
        except OSError as exc:  # not IN's fault: said apart from a read error
            raise _WriteFailed(exc) from exc
        report.check(event, keys_written=args.with_keys)
        return len(values)

    last = ""  # the file of the last message read: where a read error without a name was
    progress = ProgressLine("convert", progress_wanted(args))
    try:
        for message in iter_file_messages([args.input]):
            read += 1
            last = message.source
            progress.step(read, partial(_counts, read, written, bad))
            try:
                _, events = decoder.decode(message.value, message.key)
                for event in (p for e in events for p in pairer.push(e)):
                    written += emit(event)
            except (DecodeError, EncodeError) as exc:
                bad += 1
                print(f"{message.coordinates}: {exc}", file=sys.stderr)
                if isinstance(exc, DecodeError):
                    miss.failed(message.value)
        for event in pairer.flush():
            try:
                written += emit(event)
            except EncodeError as exc:
                bad += 1
                print(f"{args.input}: {exc}", file=sys.stderr)
    except _WriteFailed as failed:
        reason = failed.error.strerror or str(failed.error)
        return fail(f"cannot write OUT {args.output}: {reason}", DATA_ERROR), False
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = exc.filename or (f"{args.input} (after {last})" if last else args.input)
        return fail(f"cannot read {where}: {reason}", DATA_ERROR), False
    except AnyCdcError as exc:  # not a message's own error (a schema store that fails)
        return fail(f"{args.input}: {exc}", DATA_ERROR), False
    for line in report.lines():
        print(f"anycdc: {line}", file=sys.stderr)
    if report.lost_keys:
        print("anycdc: give --with-keys to write each message's Kafka key", file=sys.stderr)
    hint = miss.hint(decoded=read - bad)
    if hint:
        print(f"anycdc: {hint}", file=sys.stderr)
    if not args.quiet:
        print(
            f"{read} messages read, {written} written as {args.to}, {bad} errors"
            + (f", {report.count} losses reported" if report.count else ""),
            file=sys.stderr,
        )
    if read and bad >= read and not written:
        # nothing converted: an empty OUT would replace what --force let it replace
        print(f"anycdc: every message failed: OUT {args.output} left as it was", file=sys.stderr)
        return DATA_ERROR, False
    return (DATA_ERROR if args.strict and (bad or report.count) else 0), True


def _counts(read: int, written: int, bad: int) -> str:
    return f"{read} messages read, {written} written, {bad} errors"


def _refusal(format_id: str, event: ChangeEvent, exc: Exception) -> EncodeError:
    """The error of an event the encoder could not write: most often a value the source
    sent that did not parse as its column's type (kept as sent, listed in ``invalid``)."""
    if event.invalid:
        table = event.qualified_table
        columns = ", ".join(f"{table}.{name}" if table else name for name in event.invalid)
        return EncodeError(format_id, f"cannot write {columns}: the value is not of its type")
    return EncodeError(format_id, f"cannot write this event: {type(exc).__name__}: {exc}")


def _key_of(encoder: Format, event: ChangeEvent) -> bytes | None:
    try:
        return encoder.encode_key(event)
    except EncodeError:
        raise
    except AnyCdcError as exc:  # a key the format cannot write is that message's error
        raise EncodeError(encoder.id, f"Kafka key: {exc}") from None


# --------------------------------------------------------------------------- paths
def _check_input(raw: str) -> None:
    """IN exists, is readable, and is a file or a folder holding message files."""
    if raw == STDIO:
        return
    path = Path(raw)
    if not path.exists():
        raise _UsageError(f"IN {raw}: no such file or folder")
    if path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK):
            raise _UsageError(f"IN {raw}: folder not readable")
        if not list_source_files([path]):
            suffixes = ", ".join(LINE_SUFFIXES + WHOLE_FILE_SUFFIXES)
            raise _UsageError(f"IN {raw}: folder holds no message files ({suffixes})")
    elif not path.is_file():
        raise _UsageError(f"IN {raw}: not a regular file or a folder")
    elif not os.access(path, os.R_OK):
        raise _UsageError(f"IN {raw}: file not readable")


def _open_sink(args: argparse.Namespace, binary: bool) -> _Sink:
    """The staged output for OUT, after refusing an OUT that would lose a file."""
    out: str = args.output
    if out == STDIO:
        if binary:
            raise _UsageError(
                f"OUT -: {args.to} writes one .avro file per message, into a folder; "
                "give a folder, not - (stdout)"
            )
        return _LinesFile(None, with_keys=args.with_keys)
    target = Path(out)
    _refuse_overlap(args.input, target)
    if binary:
        return _AvroFolder.open(target, force=args.force, with_keys=args.with_keys)
    if target.is_dir():
        raise _UsageError(f"OUT {out}: is a folder; {args.to} writes one JSON Lines file")
    if target.exists() and not args.force:
        raise _UsageError(f"OUT {out}: exists; give --force to replace it")
    if not target.parent.is_dir():
        raise _UsageError(f"OUT {out}: folder {target.parent} does not exist")
    return _LinesFile(target, with_keys=args.with_keys)


def _refuse_overlap(raw_in: str, out: Path) -> None:
    """IN and OUT are different files, and neither holds the other."""
    if raw_in == STDIO:
        return
    source, target = Path(raw_in).resolve(), out.resolve()
    if target == source or (out.exists() and os.path.samefile(raw_in, out)):
        raise _UsageError(f"OUT {out} is IN {raw_in}: write the output to another file")
    if source.is_dir() and target.is_relative_to(source):
        raise _UsageError(f"OUT {out} is inside the IN folder {raw_in}: write it elsewhere")
    if target.is_dir() and source.is_relative_to(target):
        raise _UsageError(f"IN {raw_in} is inside the OUT folder {out}: write it elsewhere")


def _created_mode(mode: int) -> int:
    """The mode ``open()`` (0o666) or ``mkdir()`` (0o777) gives a new entry under the
    umask: mkstemp and mkdtemp make theirs private."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


class _LinesFile:
    """JSON Lines into a temporary file beside OUT, renamed over OUT by :meth:`commit`
    (``target`` None: standard output, written as it comes)."""

    def __init__(self, target: Path | None, *, with_keys: bool) -> None:
        self._target = target
        self._with_keys = with_keys
        self._staged: Path | None = None
        if target is None:
            self._handle: BinaryIO = sys.stdout.buffer
            return
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        self._staged = Path(name)
        self._handle = os.fdopen(fd, "wb")

    def write(self, value: bytes, key: bytes | None) -> None:
        line = value.replace(b"\n", b" ")
        if self._with_keys:
            shown = NULL_KEY if key is None else key.replace(b"\n", b" ")
            line = shown.replace(KEY_SEPARATOR, b" ") + KEY_SEPARATOR + line
        self._handle.write(line + b"\n")

    def commit(self) -> None:
        if self._staged is None or self._target is None:
            self._handle.flush()
            return
        self._handle.close()
        os.chmod(self._staged, _created_mode(0o666))
        os.replace(self._staged, self._target)

    def discard(self) -> None:
        if self._staged is None:
            self._handle.flush()
            return
        self._handle.close()
        self._staged.unlink(missing_ok=True)


class _AvroFolder:
    """One ``NNNNNNNNN.avro`` per message into a temporary folder beside OUT, moved into
    OUT by :meth:`commit` (an existing OUT loses its previous output only then)."""

    def __init__(self, target: Path, staging: Path, *, with_keys: bool) -> None:
        self._target = target
        self.staging = staging
        self._with_keys = with_keys
        self._count = 0

    @classmethod
    def open(cls, target: Path, *, force: bool, with_keys: bool) -> _AvroFolder:
        if target.exists() and not target.is_dir():
            raise _UsageError(f"OUT {target}: is a file; an Avro target writes a folder")
        if target.is_dir():
            held = sorted(p.name for p in target.iterdir())
            foreign = [name for name in held if not _is_output(target / name)]
            if foreign:
                raise _UsageError(
                    f"OUT {target}: folder holds files convert did not write "
                    f"({', '.join(foreign[:3])}); give an empty or new folder"
                )
            if held and not force:
                raise _UsageError(
                    f"OUT {target}: folder holds a previous output ({len(held)} entries); "
                    "give --force to replace them"
                )
        parent = target.parent
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
        return cls(target, staging, with_keys=with_keys)

    def write(self, value: bytes, key: bytes | None) -> None:
        self._count += 1
        (self.staging / MESSAGE_FILE.format(self._count)).write_bytes(value)
        if self._with_keys and key is not None:
            (self.staging / KEY_FILE.format(self._count)).write_bytes(key)

    def commit(self) -> None:
        self.staging.chmod(_created_mode(0o777))
        if not self._target.exists():
            os.replace(self.staging, self._target)
            return
        for old in self._target.iterdir():  # checked in open(): only a previous output
            shutil.rmtree(old) if old.is_dir() else old.unlink()
        for new in self.staging.iterdir():
            os.replace(new, self._target / new.name)
        self.staging.rmdir()

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _is_output(path: Path) -> bool:
    """A file convert writes into an Avro folder: a message, a key, or the schemas folder."""
    if path.is_dir():
        return path.name == SCHEMAS_FOLDER and all(
            p.is_file() and p.suffix == SCHEMA_SUFFIX for p in path.iterdir()
        )
    return path.is_file() and OUTPUT_FILE.fullmatch(path.name) is not None


COMMAND = Command(
    name="convert",
    help="transcode messages between vendor formats",
    description="Decode each message (auto-detected, or --from ID) and encode the events in the\n"
    "--to format, as that vendor writes them. Split update halves are joined first.\n"
    "Avro targets write one .avro file per message into the OUT folder; debezium-avro\n"
    "writes its schemas to OUT/schemas/<id>.avsc (or --to-option registry_url=URL).\n"
    "OUT is written beside itself and moved into place at the end: an existing OUT is\n"
    "replaced only with --force, and a failed run (or one where every message failed, exit\n"
    "1) leaves it as it was. What the target\n"
    "format cannot carry is reported once per column (--strict: exit 1).\n\n"
    "Examples:\n"
    "  anycdc convert --to debezium-json canal.jsonl debezium.jsonl\n"
    "  anycdc convert --from dataworks-json --to dts-avro dw.jsonl avro_out/\n"
    "  anycdc convert --force --to canal-json dumps/ canal.jsonl\n"
    "  anycdc convert --with-keys --to debezium-json canal.jsonl - | head\n"
    "  anycdc convert --strict --to ogg-json canal.jsonl ogg.jsonl || echo lossy",
    add_arguments=add_arguments,
    run=run,
)
