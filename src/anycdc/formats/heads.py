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
_PAYLOAD_KEY: Final = b'"payload"'
_COLON_RE: Final = re.compile(rb"\s*:\s*")
TAIL_BYTES: Final = 48
"""How much of a head's end keys it, with its length: the end of the schema (Debezium's
``"name":"server.db.table.Envelope"}``) and the payload key."""

_V = TypeVar("_V")


def payload_at(data: bytes) -> int:
    """Where the value of ``data``'s first ``"payload":`` key starts (-1: none). In a
    Connect envelope, the end of its head; a schema that names a payload key inside itself
    gives another place, and its messages are not found (parsed whole).

    >>> payload_at(b'{"schema":{"field":"payload"},"payload" : {}}')
    42
    """
    at = data.find(_PAYLOAD_KEY)
    while at >= 0:
        colon = _COLON_RE.match(data, at + len(_PAYLOAD_KEY))
        if colon is not None:
            return colon.end()
        at = data.find(_PAYLOAD_KEY, at + len(_PAYLOAD_KEY))
    return -1


class Heads(Generic[_V]):
    """Envelope heads seen lately, each with what its reader made of the schema (at most
    ``size``, oldest out), found by a dict look-up: the head's length and last
    :data:`TAIL_BYTES` bytes, where :func:`payload_at` says it ends, then a comparison of
    the whole head. :meth:`find` gives a message's kept value and the bytes of its payload
    (which the caller parses: a payload that is not one JSON value makes the caller parse
    the message whole); :meth:`remember` keeps a message's head."""

    def __init__(self, size: int) -> None:
        self._heads: Cache[tuple[int, bytes], tuple[bytes, _V]] = Cache(size)
        # the head found last, tried first: a partition's messages come in runs of one table
        self._last: tuple[bytes, _V] | None = None

    def __len__(self) -> int:
        return len(self._heads)

    def values(self) -> list[tuple[bytes, _V]]:
        """The kept heads, each with its value."""
        return list(self._heads.values())

    def find(self, data: bytes) -> tuple[_V, bytes] | None:
        """The kept value of ``data``'s head and its payload's bytes, if ``data`` starts
        with a kept head and ends with ``}`` (then optional whitespace)."""
        end = len(data)
        if not data.endswith(b"}"):
            end = len(data.rstrip())
            if data[end - 1 : end] != b"}":
                return None
        kept = self._last
        if kept is None or not data.startswith(kept[0]):
            at = payload_at(data)
            if at < 0:
                return None
            kept = self._heads.get((at, data[max(0, at - TAIL_BYTES) : at]))
            if kept is None or not data.startswith(kept[0]):
                return None
            self._last = kept
        return kept[1], data[len(kept[0]) : end - 1]

    def remember(self, data: bytes, raw_schema: bytes, value: _V) -> None:
        """Keep ``data``'s head (up to its payload value) with ``value``, when ``data`` is
        ``{"schema": <raw_schema>, "payload": ...`` and its first payload key is that one."""
        head = ENVELOPE_HEAD_RE.match(data)
        if not raw_schema or head is None or not data.startswith(raw_schema, head.end()):
            return
        tail = PAYLOAD_HEAD_RE.match(data, head.end() + len(raw_schema))
        if tail is not None and payload_at(data) == tail.end():
            at = tail.end()
            kept = self._last = (data[:at], value)
            self._heads.put((at, data[max(0, at - TAIL_BYTES) : at]), kept)
