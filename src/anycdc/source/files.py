"""Raw messages from files: JSON Lines (a line ``null`` is a tombstone), ``.json`` or ``.avro``.

``.jsonl`` / ``.ndjson`` / ``.txt`` files hold one message per line. A ``.json``
file is ONE message (it may be pretty-printed) unless a shape is named (not ``auto``:
then its lines are read in that shape), and so is a ``.avro`` file
(DTS/DRS Avro are schemaless records, so several cannot share a file). Files are read in name order and
lines in file order; ``(file, line)`` is a message's coordinate, the way
``(partition, offset)`` is in Kafka. A file ending in ``.gz`` (``dump.jsonl.gz``) is read
through gzip, and so is gzip data on standard input.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.jsonl").write_text('{"x":1}\\nnull\\n')
>>> [(m.value, m.line) for m in iter_file_messages([d])]
[(b'{"x":1}', 1), (None, 2)]

Keys
----
A message's Kafka key comes with it in four ways:

* ``<name>.key.json`` or ``<name>.key.avro`` beside ``<name>.<ext>``: the key of every
  message of that file (the golden cases' convention; key files are never read as messages);
* ``key_file``: one key per line, the n-th non-blank line being the key of the n-th
  message of the whole input (a line ``null`` is no key);
* ``InputShape.KCAT_JSON`` lines, as ``kcat -C -J`` prints them (``{"topic", "partition",
  "offset", "key", "payload", ...}``): key and coordinates come from each line, a value
  written as JSON itself (``kcat -s value=avro``) is taken as its JSON text. In ``auto``
  shape a file (or stdin) whose first line is such an object is read this way. kcat writes
  binary values as raw bytes inside a JSON string, which is not JSON: read such a topic with
  ``anycdc decode --kafka-bootstrap`` instead;
* ``InputShape.KEY_TAB`` lines, as ``kafka-console-consumer --property print.key=true``
  prints them: ``KEY<TAB>VALUE``. Split at the FIRST tab: a compact JSON key holds no tab
  (JSON escapes tabs inside strings), while a value may hold one as whitespace. Leading
  ``CreateTime:``/``LogAppendTime:``, ``Partition:`` and ``Offset:`` fields
  (``print.timestamp``, ``print.partition``, ``print.offset``) are read too;
  ``print.headers`` is not supported. Never chosen by ``auto``: a plain JSON line may hold
  a tab too.

>>> _ = (d / "k.txt").write_text('{"id":1}\\t{"x":1}\\nnull\\tnull\\n')
>>> [(m.key, m.value) for m in iter_file_messages([d / "k.txt"], shape=InputShape.KEY_TAB)]
[(b'{"id":1}', b'{"x":1}'), (None, None)]
"""

from __future__ import annotations

import gzip
import io
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Final, cast

import msgspec

from anycdc.errors import AnyCdcError

JSON_SUFFIX: Final = ".json"
WHOLE_FILE_SUFFIXES: Final = (".avro", JSON_SUFFIX)
LINE_SUFFIXES: Final = (".jsonl", ".ndjson", ".txt")
GZIP_SUFFIX: Final = ".gz"
GZIP_MAGIC: Final = b"\x1f\x8b"
KEY_SUFFIX: Final = ".key"
"""``<name>.key.json`` / ``<name>.key.avro``: the key of the messages of ``<name>.*``."""
KEY_FILE_SUFFIXES: Final = (JSON_SUFFIX, ".avro")
TOMBSTONE: Final = b"null"
STDIN: Final = "-"
STDIN_NAME: Final = "<stdin>"
TAB: Final = b"\t"
KCAT_FIELDS: Final = frozenset({"topic", "partition", "offset", "payload"})
"""The fields every ``kcat -J`` line has (``key`` is there too, but may be left out)."""
CONSOLE_PREFIX: Final = re.compile(rb"^(?:CreateTime|LogAppendTime|NO_TIMESTAMP|Partition|Offset):")
CONSOLE_PARTITION: Final = b"Partition:"
CONSOLE_OFFSET: Final = b"Offset:"
JSON_LINES_HINT_MIN: Final = 2
"""A ``.json`` file of at least this many JSON lines is taken for JSON Lines in a hint."""


class InputShape(StrEnum):
    """How the lines of a line file (or stdin) hold their messages."""

    AUTO = "auto"
    """kcat JSON when the first line is a kcat object, else plain lines."""
    LINES = "lines"
    """One message value per line."""
    KCAT_JSON = "kcat-json"
    """``kcat -J`` envelopes: key, payload, topic, partition, offset."""
    KEY_TAB = "key-tab"
    """``KEY<TAB>VALUE`` (kafka-console-consumer ``print.key=true``)."""


class InputError(AnyCdcError):
    """The input cannot be read as asked (no message file, a key file out of step, ...)."""


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message and where it came from.

    ``source``/``line`` say where it was read (a file, or a topic with the offset as the
    line for a topic read straight away); ``topic``/``partition``/``offset`` are its Kafka
    coordinates when the input carries them (kcat JSON, console-consumer prefixes, a topic).
    """

    value: bytes | None
    source: str
    line: int
    key: bytes | None = None
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None

    @property
    def coordinates(self) -> str:
        """``file:line``, plus ``topic[partition]@offset`` when known (kcat's notation)."""
        if self.partition is None or self.offset is None:
            return f"{self.source}:{self.line}"
        kafka = f"{self.topic or ''}[{self.partition}]@{self.offset}"
        return kafka if self.source == self.topic else f"{self.source}:{self.line} {kafka}"


def _is_key_file(path: Path) -> bool:
    return path.suffix in KEY_FILE_SUFFIXES and path.stem.endswith(KEY_SUFFIX)


def _inner_suffix(path: Path) -> str:
    """The suffix that says what a file holds (``a.jsonl.gz`` -> ``.jsonl``)."""
    suffixes = path.suffixes
    if suffixes and suffixes[-1] == GZIP_SUFFIX:
        return suffixes[-2] if len(suffixes) > 1 else ""
    return path.suffix


def _message_file(path: Path) -> bool:
    return (
        path.is_file()
        and _inner_suffix(path) in WHOLE_FILE_SUFFIXES + LINE_SUFFIXES
        and not path.name.startswith((".", "_"))
        and not _is_key_file(path)
    )


def list_source_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their message files, in name order (key files left out)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if _message_file(p)))
        else:
            out.append(path)
    return out


def iter_file_messages(
    paths: Iterable[str | Path],
    *,
    shape: InputShape = InputShape.AUTO,
    key_file: str | Path | None = None,
) -> Iterator[RawMessage]:
    """Every message of every file (``-`` = standard input, read as lines).

    Raises :class:`InputError` for a path that does not exist, a folder without a message
    file, or a ``key_file`` with fewer or more keys than there are messages.
    """
    messages = _iter_all(paths, shape)
    if key_file is None:
        yield from messages
        return
    yield from _with_keys(messages, Path(key_file))


def _iter_all(paths: Iterable[str | Path], shape: InputShape) -> Iterator[RawMessage]:
    for raw in paths:
        if str(raw) == STDIN:
            yield from _iter_lines(_ungzip(sys.stdin.buffer), STDIN_NAME, shape, None)
            continue
        path = Path(raw)
        if not path.exists():
            raise InputError(f"{path}: no such file or folder")
        files = list_source_files([path])
        if path.is_dir() and not files:
            raise InputError(_empty_folder(path))
        for file in files:
            yield from _iter_file(file, shape)


def _empty_folder(path: Path) -> str:
    seen = sorted({p.suffix or p.name for p in path.rglob("*") if p.is_file()})
    wanted = ", ".join(WHOLE_FILE_SUFFIXES + LINE_SUFFIXES)
    found = f"; found only: {', '.join(seen[:8])}" if seen else " (it is empty)"
    return f"{path}: no message file (looked for {wanted}, optionally .gz){found}"


def _iter_file(path: Path, shape: InputShape) -> Iterator[RawMessage]:
    """The messages of one file; a ``.gz`` that is not gzip data is an error naming it."""
    try:
        yield from _read_file(path, shape)
    except (gzip.BadGzipFile, EOFError) as exc:
        raise AnyCdcError(f"{path}: not readable as gzip ({exc})") from None


def _read_file(path: Path, shape: InputShape) -> Iterator[RawMessage]:
    key = _sibling_key(path)
    gzipped = path.suffix == GZIP_SUFFIX
    suffix = _inner_suffix(path)
    # a shape named (not auto) says how the lines hold messages: a .json file's too
    if suffix in WHOLE_FILE_SUFFIXES and not (suffix == JSON_SUFFIX and shape != InputShape.AUTO):
        data = gzip.decompress(path.read_bytes()) if gzipped else path.read_bytes()
        yield RawMessage(None if data.strip() == TOMBSTONE else data, str(path), 1, key)
        return
    with path.open("rb") as handle:
        stream = cast(IO[bytes], gzip.open(handle)) if gzipped else handle
        yield from _iter_lines(stream, str(path), shape, key)


def _sibling_key(path: Path) -> bytes | None:
    name = path.name[: -len(GZIP_SUFFIX)] if path.suffix == GZIP_SUFFIX else path.name
    base = name[: -len(_inner_suffix(path))] if _inner_suffix(path) else name
    for suffix in KEY_FILE_SUFFIXES:
        candidate = path.with_name(base + KEY_SUFFIX + suffix)
        if candidate.is_file():
            return candidate.read_bytes()
    return None


def _ungzip(stream: IO[bytes]) -> IO[bytes]:
    """Standard input as given, or through gzip when it starts with gzip's magic bytes."""
    buffered = (
        stream
        if isinstance(stream, io.BufferedReader)
        else io.BufferedReader(cast(io.RawIOBase, stream))
    )
    if buffered.peek(len(GZIP_MAGIC))[: len(GZIP_MAGIC)] == GZIP_MAGIC:
        return cast(IO[bytes], gzip.open(buffered))
    return cast(IO[bytes], buffered)


def _iter_lines(
    handle: Iterable[bytes], source: str, shape: InputShape, key: bytes | None
) -> Iterator[RawMessage]:
    for number, line in enumerate(handle, start=1):
        text = line.strip()
        if not text:
            continue
        if shape is InputShape.AUTO:
            shape = InputShape.KCAT_JSON if _looks_kcat(text) else InputShape.LINES
        if shape is InputShape.KCAT_JSON:
            yield _kcat_message(text, source, number)
        elif shape is InputShape.KEY_TAB:
            yield _key_tab_message(text, source, number)
        else:
            yield RawMessage(None if text == TOMBSTONE else text, source, number, key)


class KcatLine(msgspec.Struct, gc=False):
    """One ``kcat -J`` line; key and payload kept as their raw JSON text."""

    topic: str
    partition: int
    offset: int
    payload: msgspec.Raw = msgspec.Raw(TOMBSTONE)
    key: msgspec.Raw = msgspec.Raw(TOMBSTONE)


_KCAT_DECODER: Final = msgspec.json.Decoder(KcatLine)
_STRING_DECODER: Final = msgspec.json.Decoder(str)


def _looks_kcat(text: bytes) -> bool:
    if not text.startswith(b"{"):
        return False
    try:
        fields = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return False
    return isinstance(fields, dict) and KCAT_FIELDS <= fields.keys()


def _raw_bytes(raw: msgspec.Raw) -> bytes | None:
    """kcat writes a value as a JSON string, or as JSON itself (``-s value=avro``)."""
    text = bytes(raw)
    if text == TOMBSTONE:
        return None
    if text.startswith(b'"'):
        return _STRING_DECODER.decode(text).encode("utf-8", "surrogateescape")
    return text


def _kcat_message(text: bytes, source: str, number: int) -> RawMessage:
    try:
        line = _KCAT_DECODER.decode(text)
        value, key = _raw_bytes(line.payload), _raw_bytes(line.key)
    except msgspec.DecodeError as exc:
        raise InputError(f"{source}:{number}: not a kcat -J line ({exc})") from None
    return RawMessage(value, source, number, key, line.topic, line.partition, line.offset)


def _key_tab_message(text: bytes, source: str, number: int) -> RawMessage:
    partition = offset = None
    while CONSOLE_PREFIX.match(text) and TAB in text:
        field, _, text = text.partition(TAB)
        if field.startswith(CONSOLE_PARTITION):
            partition = _console_number(field, CONSOLE_PARTITION, source, number)
        elif field.startswith(CONSOLE_OFFSET):
            offset = _console_number(field, CONSOLE_OFFSET, source, number)
    key, sep, value = text.partition(TAB)
    if not sep:
        raise InputError(
            f"{source}:{number}: no tab between key and value "
            "(--input-shape key-tab reads kafka-console-consumer --property print.key=true)"
        )
    value = value.strip()
    return RawMessage(
        None if value == TOMBSTONE else value,
        source,
        number,
        None if key == TOMBSTONE else key,
        None,
        partition,
        offset,
    )


def _console_number(field: bytes, prefix: bytes, source: str, number: int) -> int:
    digits = field[len(prefix) :]
    if not digits.isdigit():
        raise InputError(f"{source}:{number}: {field.decode(errors='replace')!r} is not a number")
    return int(digits)


def _with_keys(messages: Iterator[RawMessage], key_file: Path) -> Iterator[RawMessage]:
    if not key_file.is_file():
        raise InputError(f"--key-file {key_file}: no such file")
    with key_file.open("rb") as handle:
        keys = (line.strip() for line in handle if line.strip())
        count = 0
        for message in messages:
            key = next(keys, None)
            if key is None:
                raise InputError(
                    f"--key-file {key_file} has {count} keys, but there are more messages "
                    f"(the next is {message.coordinates})"
                )
            count += 1
            yield _replace_key(message, None if key == TOMBSTONE else key)
        if next(keys, None) is not None:
            raise InputError(f"--key-file {key_file} has more keys than the {count} messages")


def _replace_key(message: RawMessage, key: bytes | None) -> RawMessage:
    return RawMessage(
        message.value,
        message.source,
        message.line,
        key,
        message.topic,
        message.partition,
        message.offset,
    )


def json_lines_hint(message: RawMessage) -> str | None:
    """A hint for a ``.json`` file that fails as one message but holds JSON Lines."""
    if not message.source.endswith(JSON_SUFFIX) or message.value is None:
        return None
    lines = [line for line in message.value.splitlines() if line.strip()]
    if len(lines) < JSON_LINES_HINT_MIN:
        return None
    try:
        for line in lines:
            msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    return (
        f"hint: {message.source} holds {len(lines)} lines of JSON; a .json file is ONE "
        "message: rename it to .jsonl, or pass --input-shape lines, to read one message per line"
    )
