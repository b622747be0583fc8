"""Golden cases: ``tests/cases/<format-id>/<name>.<json|jsonl|avro>`` + ``<name>.expected.jsonl``.

* ``<name>.json``  one message (the whole file, pretty-printed or not, even invalid JSON);
* ``<name>.jsonl`` one message per line; a line ``null`` is a tombstone;
* ``<name>.avro``  one binary message (the whole file);
* ``<name>.options.json`` (optional) ``{"K": "V"}`` options for the format;
* ``<name>.key.<json|avro>`` (optional) the Kafka message key of every message of the case;
* ``<name>.expected.jsonl`` the expected canonical events in order; a line
  ``{"error": "<DecodeError text>"}`` stands where a message must fail to decode.

A case named ``foreign_<name>`` is a negative case: messages of a format anycdc does not
read that look like the folder's format (Debezium Avro printed as JSON, the Cassandra
connector, TiCDC's open protocol ...). The detector must call each of them ``unknown``
and decoding them as the folder's format must fail with a precise error (every expected
line an ``{"error"}``), never give rows.

Adding a case needs no code: drop the files in the format's folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

CASES_DIR = Path(__file__).parent / "cases"
INPUT_SUFFIXES = (".json", ".jsonl", ".avro")
FOREIGN_PREFIX = "foreign_"


@dataclass(frozen=True)
class Case:
    format_id: str
    name: str
    input_path: Path

    @property
    def id(self) -> str:
        return f"{self.format_id}/{self.name}"

    @property
    def foreign(self) -> bool:
        """A negative case: not this format (see the module's docstring)."""
        return self.name.startswith(FOREIGN_PREFIX)

    @property
    def expected_path(self) -> Path:
        return self.input_path.with_name(self.name + ".expected.jsonl")

    @property
    def key(self) -> bytes | None:
        for suffix in (".json", ".avro"):
            path = self.input_path.with_name(self.name + ".key" + suffix)
            if path.exists():
                return path.read_bytes()
        return None

    @property
    def options(self) -> dict[str, str]:
        path = self.input_path.with_name(self.name + ".options.json")
        return json.loads(path.read_text()) if path.exists() else {}

    def messages(self) -> list[bytes | None]:
        data = self.input_path.read_bytes()
        if self.input_path.suffix != ".jsonl":
            return [data]
        lines = [line for line in data.split(b"\n") if line.strip()]
        return [None if line.strip() == b"null" else line for line in lines]

    def expected(self) -> list[dict]:
        if not self.expected_path.exists():
            return []
        text = self.expected_path.read_text(encoding="utf-8")
        # Decimal: a wrong digit deep in a long decimal must not compare equal as a float
        return [json.loads(line, parse_float=Decimal) for line in text.splitlines() if line.strip()]


def iter_cases(format_id: str | None = None) -> Iterator[Case]:
    for folder in sorted(CASES_DIR.iterdir()) if CASES_DIR.exists() else []:
        if not folder.is_dir() or (format_id and folder.name != format_id):
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix not in INPUT_SUFFIXES or path.name.endswith(
                (".expected.jsonl", ".options.json")
            ):
                continue
            if path.stem.endswith(".key"):
                continue  # the Kafka key of a case, not a case
            yield Case(folder.name, path.name[: -len(path.suffix)], path)


def decode_case(case: Case) -> list[dict]:
    """Decode every message of a case to canonical JSON objects (errors as ``{"error"}``)."""
    from anycdc.errors import DecodeError
    from anycdc.event import event_to_json
    from anycdc.formats import get_format

    fmt = get_format(case.format_id, case.options)
    key = case.key
    out: list[dict] = []
    for message in case.messages():
        try:
            events = fmt.decode(message, key)
        except DecodeError as exc:
            out.append({"error": str(exc)})
            continue
        out.extend(json.loads(event_to_json(e), parse_float=Decimal) for e in events)
    return out


CORPUS_DIR = Path(__file__).parent / "corpus"


def foreign_json_messages(
    own_formats: tuple[str, ...], skip_corpus_dirs: tuple[str, ...] = ()
) -> list[object]:
    """Every parsed JSON message of the other formats' golden cases and of the corpus
    (files of one message or JSON Lines), for "other formats score low" sniffer tests."""
    out: list[object] = []
    for case in iter_cases():
        if case.format_id in own_formats or case.input_path.suffix == ".avro":
            continue
        for raw in case.messages():
            try:
                out.append(json.loads(raw or b""))
            except ValueError:
                continue
    for path in sorted(CORPUS_DIR.rglob("*")):
        if not path.is_file() or any(part in skip_corpus_dirs for part in path.parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        try:
            out.append(json.loads(text))
            continue
        except ValueError:
            pass
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
