"""Kafka Connect envelopes by the bytes of their head.

The JSON converter with schemas writes every message as ``{"schema": S, "payload": P}``,
where ``S`` (kilobytes: every column's type) is the same for every message of a table
version and ``P`` is the row change. A reader that has seen a message keeps its head (the
bytes up to the payload value, in the producer's own spacing) with what it made of ``S``;
a later message that starts with those exact bytes and ends with ``}`` is read by parsing
its payload alone. Anything else (another schema, trailing data, a duplicate key, a
payload that is not one JSON value) is not found, and the caller parses the message whole.

>>> heads: Heads[str] = Heads(4)
>>> first = b'{"schema":{"type":"struct"},"payload":{"op":"c"}}'
>>> heads.remember(first, b'{"type":"struct"}', "the schema, read")
>>> heads.find(b'{"schema":{"type":"struct"},"payload":{"op":"u"}} ')
('the schema, read', b'{"op":"u"}')
>>> heads.find(b'{"schema":{"type":"struct"},"payload":{"op":"u"},"x":1}')[1]  # no JSON value
b'{"op":"u"},"x":1'
>>> heads.find(b'{"schema":{"type":"int32"},"payload":1}') is None
True
"""

from __future__ import annotations

import re
from typing import Final, Generic, TypeVar

from anycdc.formats.fastpath import Cache

F_SCHEMA: Final = "schema"
F_PAYLOAD: Final = "payload"
SCHEMA_HEAD: Final = b'{"schema"'
"""How the JSON converter's compact output starts (a cheap test before any look-up)."""
ENVELOPE_HEAD_RE: Final = re.compile(rb'\s*\{\s*"schema"\s*:\s*')
PAYLOAD_HEAD_RE: Final = re.compile(rb'\s*,\s*"payload"\s*:\s*')

_V = TypeVar("_V")


class Heads(Generic[_V]):
    """Envelope heads seen lately, each with what its reader made of the schema (at most
    ``size``, oldest out). :meth:`find` gives a message's kept value and the bytes of its
    payload (which the caller parses: a payload that is not one JSON value makes the
    caller parse the message whole); :meth:`remember` keeps a message's head."""

    def __init__(self, size: int) -> None:
        self._heads: Cache[bytes, _V] = Cache(size)

    def __len__(self) -> int:
        return len(self._heads)

    def find(self, data: bytes) -> tuple[_V, bytes] | None:
        """The kept value of ``data``'s head and its payload's bytes, if ``data`` starts
        with a kept head and ends with ``}`` (then optional whitespace)."""
        end = len(data)
        if not data.endswith(b"}"):
            end = len(data.rstrip())
            if data[end - 1 : end] != b"}":
                return None
        for head in self._heads:  # (keys, then the value: the quickest way)
            if data.startswith(head):
                return self._heads[head], data[len(head) : end - 1]
        return None

    def remember(self, data: bytes, raw_schema: bytes, value: _V) -> None:
        """Keep ``data``'s head (up to its payload value) with ``value``, when ``data`` is
        ``{"schema": <raw_schema>, "payload": ...`` and no kept head starts it."""
        head = ENVELOPE_HEAD_RE.match(data)
        if not raw_schema or head is None or not data.startswith(raw_schema, head.end()):
            return
        tail = PAYLOAD_HEAD_RE.match(data, head.end() + len(raw_schema))
        if tail is not None and all(not data.startswith(h) for h in self._heads):
            self._heads.put(data[: tail.end()], value)
