"""Auto mode: the candidate index detects what the full scan detects, and parses once.

Detection asks only the formats whose :attr:`~anycdc.formats.base.Format.sniff_keys` a
message holds (:func:`anycdc.formats.detect`); the reference asks all of them
(:func:`anycdc.formats.detect_reference`). Over every golden case and corpus message the
two must give the same detection, and the auto decoder (parsing once, decoding the parsed
value) the same events or error as the old way: the full scan, then the format's own
``decode`` of the bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from anycdc.decoding import MessageDecoder
from anycdc.errors import DecodeError
from anycdc.event import ChangeEvent, event_to_json
from anycdc.formats import base, detect, detect_reference, format_class
from anycdc.formats.base import NAMED_OPS
from tests.cases import CORPUS_DIR, iter_cases

CASES = list(iter_cases())
# corpus files that are notes about the corpus, not messages
_CORPUS_NOTES = (".md",)


def _corpus_messages() -> Iterator[tuple[str, bytes]]:
    """Every corpus file as one message, and each of its lines as one (JSON Lines,
    one message per line in the .txt harvests)."""
    for path in sorted(CORPUS_DIR.rglob("*")):
        if not path.is_file() or path.suffix in _CORPUS_NOTES:
            continue
        data = path.read_bytes()
        name = str(path.relative_to(CORPUS_DIR))
        yield name, data
        lines = [line for line in data.split(b"\n") if line.strip()]
        if len(lines) > 1:
            for number, line in enumerate(lines, start=1):
                yield f"{name}:{number}", line


CORPUS = list(_corpus_messages())


def _old_auto(decoder: MessageDecoder, value: bytes, key: bytes | None) -> Any:
    """What auto mode did before the index: the full scan, then the format decodes the
    bytes (parsing them again); the outcome as (format, events) or the error's text."""
    found = detect_reference(value)
    if not found.known:
        return "unknown"
    fmt = decoder.format_for(found.format)
    try:
        events = fmt.decode(value, key)
        for event in events:
            if not event.table and event.op in NAMED_OPS:
                raise fmt.unnamed_table(event)
    except DecodeError as exc:
        return str(exc)
    return found.format, _texts(events)


def _new_auto(decoder: MessageDecoder, value: bytes, key: bytes | None) -> Any:
    try:
        format_id, events = decoder.decode(value, key)
    except DecodeError as exc:
        return "unknown" if exc.format_id == "unknown" else str(exc)
    return format_id, _texts(events)


def _texts(events: list[ChangeEvent]) -> list[str]:
    """Events as their canonical JSON: a NaN value compares equal to itself there."""
    return [event_to_json(e) for e in events]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_index_agrees_with_full_scan_on_case(case: Any) -> None:
    options = case.options if format_class(case.format_id).detectable else {}
    old, new = MessageDecoder("auto", options), MessageDecoder("auto", options)
    for message in case.messages():
        if message is None:
            continue
        assert detect(message) == detect_reference(message)
        assert _new_auto(new, message, case.key) == _old_auto(old, message, case.key)


def test_index_agrees_with_full_scan_on_corpus() -> None:
    assert len(CORPUS) > 200  # the corpus is there: an empty loop proves nothing
    old, new = MessageDecoder("auto"), MessageDecoder("auto")
    for name, message in CORPUS:
        assert detect(message) == detect_reference(message), name
        assert _new_auto(new, message, None) == _old_auto(old, message, None), name


def test_parsed_values_are_detected_alike() -> None:
    """Values parsed already (what :func:`detect` also takes), arrays and scalars included."""
    for value in ([{"type": "INSERT", "data": [{"id": "1"}]}], "x", 1, None, {}, {"op": "c"}):
        assert detect(value) == detect_reference(value)


class _CountingParser:
    """Stands for the JSON parser of :func:`anycdc.formats.base.parse_json`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def decode(self, data: bytes) -> Any:
        self.calls += 1
        return self.inner.decode(data)


def test_auto_mode_parses_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One parse per message, and the format never sees the bytes (its decode, fast path
    or not, would parse them a second time)."""
    parser = _CountingParser(base.JSON_DECODER)
    monkeypatch.setattr(base, "JSON_DECODER", parser)
    decoder = MessageDecoder("auto")
    handed_bytes: list[str] = []
    real_format_for = decoder.format_for

    def spying_format_for(format_id: str) -> Any:
        fmt = real_format_for(format_id)
        monkeypatch.setattr(
            fmt, "decode", lambda *args, **kw: handed_bytes.append(format_id) or [], raising=False
        )
        return fmt

    monkeypatch.setattr(decoder, "format_for", spying_format_for)
    decoded: dict[str, int] = {}
    for case in CASES:
        if case.foreign or not format_class(case.format_id).detectable:
            continue
        for message in case.messages():
            if message is None or format_class(case.format_id).binary:
                continue
            before = parser.calls
            try:
                format_id, events = decoder.decode(message)
            except DecodeError:
                continue
            assert parser.calls - before == 1, (case.id, parser.calls - before)
            assert all(isinstance(e, ChangeEvent) for e in events)
            decoded[format_id] = decoded.get(format_id, 0) + 1
    assert handed_bytes == []
    # every JSON format was decoded in auto mode at least once
    assert len(decoded) >= 12, sorted(decoded)
