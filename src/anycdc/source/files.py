"""Raw messages from files: JSON Lines (a line ``null`` is a tombstone), ``.json`` or ``.avro``.

``.jsonl`` / ``.ndjson`` / ``.txt`` files hold one message per line. A ``.json``
file is ONE message (it may be pretty-printed), and so is a ``.avro`` file
(DTS/DRS Avro are schemaless records, so several cannot share a file). Files are read in name order and
lines in file order; ``(file, line)`` is a message's coordinate, the way
``(partition, offset)`` is in Kafka.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.jsonl").write_text('{"x":1}\\nnull\\n')
>>> [(m.value, m.line) for m in iter_file_messages([d])]
[(b'{"x":1}', 1), (None, 2)]
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

WHOLE_FILE_SUFFIXES: Final = (".avro", ".json")
LINE_SUFFIXES: Final = (".jsonl", ".ndjson", ".txt")
TOMBSTONE: Final = b"null"


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message and where it came from."""

    value: bytes | None
    source: str
    line: int
    key: bytes | None = None

    @property
    def coordinates(self) -> str:
        return f"{self.source}:{self.line}"


def list_source_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their message files, in name order."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file()
                    and p.suffix in WHOLE_FILE_SUFFIXES + LINE_SUFFIXES
                    and not p.name.startswith((".", "_"))
                )
            )
        else:
            out.append(path)
    return out


def iter_file_messages(paths: Iterable[str | Path]) -> Iterator[RawMessage]:
    """Every message of every file (``-`` = standard input, read as JSON Lines)."""
    for raw in paths:
        if str(raw) == "-":
            yield from _iter_lines(sys.stdin.buffer, "<stdin>")
            continue
        for path in list_source_files([raw]):
            if path.suffix in WHOLE_FILE_SUFFIXES:
                data = path.read_bytes()
                yield RawMessage(None if data.strip() == TOMBSTONE else data, str(path), 1)
            else:
                with path.open("rb") as handle:
                    yield from _iter_lines(handle, str(path))


def _iter_lines(handle: Iterable[bytes], source: str) -> Iterator[RawMessage]:
    for number, line in enumerate(handle, start=1):
        text = line.strip()
        if not text:
            continue
        yield RawMessage(None if text == TOMBSTONE else text, source, number)
