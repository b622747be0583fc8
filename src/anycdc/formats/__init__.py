"""Format registry and per-message detection.

Formats are registered by id as ``"module:Class"`` strings and imported only
when first used, so a format's dependencies never break the others.

>>> format_ids()[:3]
['debezium-json', 'canal-json', 'dts-canal-json']
>>> detect(b'{"database":"d","table":"t","type":"INSERT","isDdl":false,"data":[{"id":"1"}],"old":null,"pkNames":["id"],"mysqlType":{"id":"int"},"sqlType":{"id":4},"es":1,"ts":2,"id":3,"sql":""}').format
'canal-json'
>>> detect(b"garbage").format
'unknown'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from anycdc.errors import UnknownFormatError
from anycdc.formats.base import SNIFF_PASS, Cache, Format, parse_json

REGISTRY: Final[dict[str, str]] = {
    "debezium-json": "anycdc.formats.debezium:DebeziumJson",
    "canal-json": "anycdc.formats.canal:CanalJson",
    "dts-canal-json": "anycdc.formats.dts_canal:DtsCanalJson",
    "drs-json": "anycdc.formats.drs:DrsJson",
    "drs-json-c": "anycdc.formats.drs:DrsJsonC",
    "drs-mongo-json": "anycdc.formats.drs_mongo:DrsMongoJson",
    "dataworks-json": "anycdc.formats.dataworks:DataWorksJson",
    "dataworks2-json": "anycdc.formats.dataworks2:DataWorks2Json",
    "shareplex-json": "anycdc.formats.shareplex:SharePlexJson",
    "maxwell-json": "anycdc.formats.maxwell:MaxwellJson",
    "oms-json": "anycdc.formats.oms:OmsJson",
    "oms-extend-json": "anycdc.formats.oms:OmsExtendJson",
    "ogg-json": "anycdc.formats.ogg:OggJson",
    "aws-dms-json": "anycdc.formats.dms:AwsDmsJson",
    "dts-avro": "anycdc.formats.dts_avro:DtsAvro",
    "drs-avro": "anycdc.formats.drs_avro:DrsAvro",
    "debezium-avro": "anycdc.formats.debezium_avro:DebeziumAvro",
    "canonical-json": "anycdc.formats.canonical:CanonicalJson",
}
UNKNOWN_FORMAT: Final = "unknown"
MIN_CONFIDENCE: Final = 0.5
SHAPE_CACHE_SIZE: Final = 256
"""Envelope shapes (top-level key sets) whose candidate formats are kept (a topic has a
few; payload-only messages whose keys are the row's columns have more, and evict)."""


class _NotJson:
    """The type of :data:`NOT_JSON`."""

    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Final = _NotJson()
"""What :func:`detect_parsed` gives for a message that does not parse as JSON."""


def format_ids() -> list[str]:
    """Every registered format id, in registry order."""
    return list(REGISTRY)


@cache
def format_class(format_id: str) -> type[Format]:
    """The class of a format id, imported on first use."""
    try:
        target = REGISTRY[format_id]
    except KeyError:
        raise UnknownFormatError(format_id, format_ids()) from None
    module_name, class_name = target.split(":")
    cls: type[Format] = getattr(importlib.import_module(module_name), class_name)
    return cls


def get_format(format_id: str, options: Mapping[str, str] | None = None) -> Format:
    """A configured decoder/encoder for ``format_id`` (options are validated here)."""
    return format_class(format_id)(options)


@dataclass(frozen=True, slots=True)
class Detection:
    """Which format a message is, how sure we are, and who else was considered."""

    format: str
    confidence: float
    candidates: tuple[tuple[str, float], ...] = ()

    @property
    def known(self) -> bool:
        return self.format != UNKNOWN_FORMAT


def detect(message: bytes | bytearray | memoryview | str | Any) -> Detection:
    """Name the format of one message from its shape alone.

    ``message`` may be raw bytes/str (JSON or binary Avro) or an already
    parsed JSON value. Returns ``unknown`` rather than guessing. Only the formats
    that may claim a JSON object's top-level keys are asked (:attr:`Format.sniff_keys`).
    """
    return detect_parsed(message)[0]


def detect_parsed(message: bytes | bytearray | memoryview | str | Any) -> tuple[Detection, Any]:
    """:func:`detect`, and the message as parsed for it: the JSON value, or
    :data:`NOT_JSON` for bytes that are no JSON (a binary format's). A caller that goes
    on to decode hands the value to :meth:`Format.decode_parsed`: the message is parsed once.

    >>> found, parsed = detect_parsed(b'{"op":"c","after":{"id":1},"source":{"table":"t"}}')
    >>> found.format, parsed["after"]
    ('debezium-json', {'id': 1})
    >>> detect_parsed(b"\\x00\\x01")[1] is NOT_JSON
    True
    """
    return _detect(message, _candidates)


def detect_reference(message: bytes | bytearray | memoryview | str | Any) -> Detection:
    """:func:`detect` by asking every format (no :attr:`Format.sniff_keys`): the reference
    the candidate index must agree with (tests compare the two on every case and
    corpus message)."""
    return _detect(message, lambda parsed: _sniffers(binary=False))[0]


def _detect(
    message: bytes | bytearray | memoryview | str | Any, candidates: Callable[[Any], _Sniffers]
) -> tuple[Detection, Any]:
    if isinstance(message, (bytes, bytearray, memoryview, str)):
        raw = bytes(message) if not isinstance(message, str) else message.encode("utf-8")
        try:
            parsed = parse_json(UNKNOWN_FORMAT, raw)
        except Exception:
            return _best(_scores(raw, _sniffers(binary=True))), NOT_JSON
    else:
        parsed = message
    return _best(_scores(parsed, candidates(parsed))), parsed


_Sniffers = tuple[tuple[str, type[Format]], ...]


@cache
def _sniffers(*, binary: bool) -> _Sniffers:
    """The binary (or JSON) formats, in registry order (the order that breaks no tie:
    :func:`_best` refuses ties, and the candidates list keeps this order)."""
    return tuple(
        (format_id, cls)
        for format_id in REGISTRY
        if (cls := format_class(format_id)).binary == binary
    )


class _CandidateIndex:
    """JSON formats by the top-level keys that let them score (:attr:`Format.sniff_keys`),
    and the candidates of each envelope shape seen (a topic has few shapes)."""

    def __init__(self, sniffers: _Sniffers) -> None:
        self.sniffers = sniffers
        self.always = frozenset(i for i, (_, c) in enumerate(sniffers) if c.sniff_keys is None)
        by_key: dict[str, set[int]] = {}
        for index, (_, cls) in enumerate(sniffers):
            for name in cls.sniff_keys or ():
                by_key.setdefault(name, set()).add(index)
        self.by_key = {name: frozenset(found) for name, found in by_key.items()}
        self.shapes: Cache[frozenset[str], _Sniffers] = Cache(SHAPE_CACHE_SIZE)

    def of(self, message: dict[str, Any]) -> _Sniffers:
        shape = frozenset(message)
        found = self.shapes.get(shape)
        if found is None:
            chosen = set(self.always)
            for name in shape & self.by_key.keys():
                chosen |= self.by_key[name]
            found = self.shapes.put(shape, tuple(self.sniffers[i] for i in sorted(chosen)))
        return found


@cache
def _index() -> _CandidateIndex:
    return _CandidateIndex(_sniffers(binary=False))


def _candidates(message: Any) -> _Sniffers:
    """The formats that may claim a parsed JSON value: by its keys for an object, all the
    JSON formats for anything else (no format declares keys of an array)."""
    if type(message) is dict:
        return _index().of(message)
    return _sniffers(binary=False)


def _scores(message: Any, sniffers: _Sniffers) -> list[tuple[str, float]]:
    scores = []
    SNIFF_PASS.begin(message)  # what several sniffers read alike is read once
    try:
        for format_id, cls in sniffers:
            try:
                score = float(cls.sniff(message))
            except Exception:
                score = 0.0
            if score > 0:
                scores.append((format_id, score))
    finally:
        SNIFF_PASS.end()
    return sorted(scores, key=lambda item: -item[1])


def _best(scores: list[tuple[str, float]]) -> Detection:
    if not scores or scores[0][1] < MIN_CONFIDENCE:
        return Detection(UNKNOWN_FORMAT, 0.0, tuple(scores))
    top_id, top = scores[0]
    if len(scores) > 1 and scores[1][1] == top:
        # a tie is not knowledge: refuse to guess between equally likely formats
        return Detection(UNKNOWN_FORMAT, top, tuple(scores))
    return Detection(top_id, top, tuple(scores))


__all__ = [
    "NOT_JSON",
    "REGISTRY",
    "Detection",
    "Format",
    "detect",
    "detect_parsed",
    "detect_reference",
    "format_class",
    "format_ids",
    "get_format",
]
