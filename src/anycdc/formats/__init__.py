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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from anycdc.errors import UnknownFormatError
from anycdc.formats.base import Format, parse_json

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
    parsed JSON value. Returns ``unknown`` rather than guessing.
    """
    if isinstance(message, (bytes, bytearray, memoryview, str)):
        raw = bytes(message) if not isinstance(message, str) else message.encode("utf-8")
        try:
            parsed = parse_json(UNKNOWN_FORMAT, raw)
        except Exception:
            return _best(_scores(raw, binary=True))
        return _best(_scores(parsed, binary=False))
    return _best(_scores(message, binary=False))


def _scores(message: Any, *, binary: bool) -> list[tuple[str, float]]:
    scores = []
    for format_id in REGISTRY:
        cls = format_class(format_id)
        if cls.binary != binary:
            continue
        try:
            score = float(cls.sniff(message))
        except Exception:
            score = 0.0
        if score > 0:
            scores.append((format_id, score))
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
    "REGISTRY",
    "Detection",
    "Format",
    "detect",
    "format_class",
    "format_ids",
    "get_format",
]
