"""A Kafka Connect envelope's schema parsed once per head gives the message's own parse.

Auto detection parses a ``{"schema": S, "payload": P}`` message by its payload alone when
its head (the bytes up to the payload) was seen (:func:`anycdc.formats._parse_message`).
The value must be what :func:`~anycdc.formats.base.parse_json` gives for the whole message,
or the message must take the whole parse: checked on every golden case and corpus message
and on envelopes bent where a byte comparison could be fooled (a second ``schema`` key,
trailing data, invalid UTF-8 in the payload, spacing).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.decoding import MessageDecoder
from anycdc.formats import _HEADS, _parse_message
from anycdc.formats.base import parse_json
from anycdc.formats.heads import Heads
from tests.cases import iter_cases
from tests.unit.test_detect_shapes import MESSAGES

SCHEMA = b'{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"name":"s.t.Envelope"}'
HEAD = b'{"schema":' + SCHEMA + b',"payload":'
PAYLOAD = b'{"before":null,"after":{"id":1},"source":{"table":"t","db":"d"},"op":"c","ts_ms":1}'


def _outcome(parse: Any, message: bytes) -> tuple[str, Any]:
    try:
        return "value", parse(message)
    except Exception as exc:
        return "error", type(exc).__name__


def _same(message: bytes) -> None:
    expected = _outcome(lambda m: parse_json("unknown", m), message)
    assert _outcome(_parse_message, message) == expected, message[:200]


def test_every_case_and_corpus_message_parses_as_a_whole() -> None:
    for _ in range(2):  # the second round finds the heads the first one kept
        for _, message in MESSAGES:
            if message is not None:  # a tombstone is parsed by no one
                _same(message)
    assert len(_HEADS) > 0  # not vacuous: the corpus has Connect envelopes


_TAILS = [
    b"}", b"} ", b"}\n", b' ,"schema":1}', b',"schema":' + SCHEMA + b"}", b',"x":1}', b"",
    b"}}", b" }", b',"payload":2}', b"]",
]  # fmt: skip
_PAYLOADS = [
    PAYLOAD, b"null", b"1", b'"\xff"', b'{"a":"\xed\xa0\x80"}', b"{", b'{"a":1}{"b":2}', b"[1,2]",
    b'{"op":"u","after":{"id":2.50}}', b"  " + PAYLOAD, b"1e400",
]  # fmt: skip
_HEADS_BENT = [HEAD, HEAD.replace(b":", b": ", 1), HEAD.replace(b"int64", b"int32"), b" " + HEAD]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_HEADS_BENT), st.sampled_from(_PAYLOADS), st.sampled_from(_TAILS))
def test_bent_envelopes_after_their_head_was_kept(head: bytes, payload: bytes, tail: bytes) -> None:
    _same(HEAD + PAYLOAD + b"}")  # keeps HEAD
    _same(head + payload + tail)
    _same(head + payload + tail)


def test_a_kept_schema_is_never_changed_by_what_reads_it() -> None:
    """The kept schema is one object shared by its head's messages: decoding every golden
    case in auto mode (twice: the second time through the kept heads) leaves each kept
    schema equal to a fresh parse of its head."""
    for _ in range(2):
        for case in iter_cases():
            decoder = MessageDecoder("auto", case.options)
            for message in case.messages():  # errors too: a bad message is read as well
                try:
                    decoder.decode(message)
                except Exception:
                    continue
    assert len(_HEADS) > 0
    for head, schema in _HEADS.values():
        assert schema == parse_json("test", head + b"null}")["schema"]


def test_heads_of_many_interleaved_tables_are_all_found() -> None:
    """A topic's tables interleave: each of 20 heads (more than a linear scan kept) is found
    by the next message of its table, whatever came between, and the payload is its own."""
    heads: Heads[int] = Heads(256)
    schemas = [SCHEMA.replace(b"s.t.Envelope", f"s.t{n}.Envelope".encode()) for n in range(20)]
    for n, schema in enumerate(schemas):
        heads.remember(b'{"schema":' + schema + b',"payload":' + PAYLOAD + b"}", schema, n)
    for n in [*range(20), *reversed(range(20)), 3, 3, 17]:
        message = b'{"schema":' + schemas[n] + b',"payload":{"op":"u","n":%d}}' % n
        assert heads.find(message) == (n, b'{"op":"u","n":%d}' % n)
