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

import contextlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import msgspec

from anycdc.errors import UnknownFormatError
from anycdc.formats import base
from anycdc.formats.base import (
    MAX_MESSAGE_BYTES,
    SNIFF_PASS,
    Cache,
    Format,
    parse_json,
)
from anycdc.formats.heads import F_PAYLOAD, F_SCHEMA, SCHEMA_HEAD, Heads

REGISTRY: Final[dict[str, str]] = {
    "debezium-json": "anycdc.formats.debezium.format:DebeziumJson",
    "canal-json": "anycdc.formats.canal.format:CanalJson",
    "dts-canal-json": "anycdc.formats.canal.dts:DtsCanalJson",
    "drs-json": "anycdc.formats.canal.drs:DrsJson",
    "drs-json-c": "anycdc.formats.canal.drs:DrsJsonC",
    "drs-mongo-json": "anycdc.formats.drs_mongo:DrsMongoJson",
    "dataworks-json": "anycdc.formats.dataworks.format:DataWorksJson",
    "dataworks2-json": "anycdc.formats.dataworks.v2:DataWorks2Json",
    "shareplex-json": "anycdc.formats.shareplex:SharePlexJson",
    "maxwell-json": "anycdc.formats.maxwell:MaxwellJson",
    "oms-json": "anycdc.formats.oms.format:OmsJson",
    "oms-extend-json": "anycdc.formats.oms.format:OmsExtendJson",
    "ogg-json": "anycdc.formats.ogg:OggJson",
    "aws-dms-json": "anycdc.formats.dms:AwsDmsJson",
    "dts-avro": "anycdc.formats.dts_avro.format:DtsAvro",
    "drs-avro": "anycdc.formats.drs_avro:DrsAvro",
    "debezium-avro": "anycdc.formats.debezium.avro:DebeziumAvro",
    "canonical-json": "anycdc.formats.canonical:CanonicalJson",
}
UNKNOWN_FORMAT: Final = "unknown"
MIN_CONFIDENCE: Final = 0.5
SHAPE_CACHE_SIZE: Final = 256
"""Envelope shapes (top-level key sets) whose candidate formats are kept (a topic has a
few; payload-only messages whose keys are the row's columns have more, and evict)."""
VERDICT_CACHE_SIZE: Final = 1024
"""Shape-determined scores kept, by envelope shape and evidence (:attr:`Format.sniff_fields`:
a topic has a few shapes, each with a few type and evidence values)."""
HEAD_CACHE_SIZE: Final = 256
"""Kafka Connect envelope heads whose schema is kept parsed (:func:`_parse_message`: a head
per table and schema version; a topic's tables interleave)."""
_SCALARS: Final = frozenset({str, int, bool, type(None)})
"""The value types of :attr:`Format.sniff_fields` whose values (not only types) a shape holds."""


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
    return _detect(message, _judge)


def detect_parsed_reference(
    message: bytes | bytearray | memoryview | str | Any,
) -> tuple[Detection, Any]:
    """:func:`detect_parsed` with every candidate asked about every message (no verdict kept
    per shape): the reference the shape verdicts must agree with (tests compare the two)."""
    return _detect(message, lambda parsed: _best(_scores(parsed, _candidates(parsed))))


def detect_reference(message: bytes | bytearray | memoryview | str | Any) -> Detection:
    """:func:`detect` by asking every format (no :attr:`Format.sniff_keys`): the reference
    the candidate index must agree with (tests compare the two on every case and
    corpus message)."""
    return _detect(message, lambda parsed: _best(_scores(parsed, _sniffers(binary=False))))[0]


def _detect(
    message: bytes | bytearray | memoryview | str | Any, judge: Callable[[Any], Detection]
) -> tuple[Detection, Any]:
    """Parse a message once (bytes that are no JSON go to the binary sniffers), then let
    ``judge`` name the format of the parsed value."""
    if isinstance(message, (bytes, bytearray, memoryview, str)):
        raw = bytes(message) if not isinstance(message, str) else message.encode("utf-8")
        try:
            parsed = _parse_message(raw)
        except Exception:
            return _best(_scores(raw, _sniffers(binary=True))), NOT_JSON
    else:
        parsed = message
    return judge(parsed), parsed


_HEADS: Final[Heads[Any]] = Heads(HEAD_CACHE_SIZE)
_TOP_LEVEL: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _parse_message(raw: bytes) -> Any:
    """``parse_json(UNKNOWN_FORMAT, raw)``, with a Kafka Connect envelope's schema parsed once
    per head (:mod:`anycdc.formats.heads`): the same value, but the schema of a message
    whose head was seen is the object parsed then, shared by every message of that head
    (detection and decoders read a parsed message, never change it).

    >>> head = b'{"schema":{"type":"struct","name":"t.Envelope"},"payload":'
    >>> first = _parse_message(head + b'{"op":"c"}}')
    >>> second = _parse_message(head + b'{"op":"u"}}')
    >>> second == parse_json("x", head + b'{"op":"u"}}'), second["schema"] is first["schema"]
    (True, True)
    """
    if not raw.startswith(SCHEMA_HEAD) or len(raw) > MAX_MESSAGE_BYTES:
        return parse_json(UNKNOWN_FORMAT, raw)
    found = _HEADS.find(raw)
    if found is not None:
        with contextlib.suppress(Exception):  # else no one JSON value after the head:
            # parse_json's parser (base.JSON_DECODER, looked up as parse_json looks it up)
            return {F_SCHEMA: found[0], F_PAYLOAD: base.JSON_DECODER.decode(found[1])}
    # the whole message says what it is
    value = parse_json(UNKNOWN_FORMAT, raw)
    if type(value) is dict and list(value) == [F_SCHEMA, F_PAYLOAD]:
        # kept for the next messages; the message itself is parsed: never its error
        with contextlib.suppress(Exception):
            _HEADS.remember(raw, bytes(_TOP_LEVEL.decode(raw)[F_SCHEMA]), value[F_SCHEMA])
    return value


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


_Ranked = tuple[tuple[int, str, Callable[[Any], float]], ...]
"""Sniffers (each format's :meth:`Format.sniff`) with their registry rank (the order
:func:`_scores` lists equal scores in)."""
_RankedScores = tuple[tuple[int, str, float], ...]
COMBINED_CACHE_SIZE: Final = 64
"""Verdicts kept per shape verdict, by the scores its content sniffers gave (a topic's
messages of one shape get one set of scores or a few)."""


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What a shape and its evidence decide: the shape-determined sniffers' scores, the
    verdict on them alone, and the verdicts with each set of content scores seen
    (:func:`_best` is a function of the scores: kept, not computed per message)."""

    fixed: _RankedScores
    detection: Detection
    combined: dict[_RankedScores, Detection]

    def with_content(self, more: _RankedScores) -> Detection:
        found = self.combined.get(more)
        if found is None:
            if len(self.combined) >= COMBINED_CACHE_SIZE:
                self.combined.clear()
            found = self.combined[more] = _best(_unranked(self.fixed + more))
        return found


@dataclass(frozen=True, slots=True)
class _Plan:
    """How the candidates of one top-level key set are asked: ``fixed``, whose scores the
    shape and the ``evidence`` decide (:attr:`Format.sniff_fields`), kept per shape;
    ``content``, asked about every message."""

    sniffers: _Sniffers
    fixed: _Ranked
    content: _Ranked
    evidence: tuple[Callable[[Any], Any], ...]
    fields: tuple[str, ...]
    """The shape's keys that are :attr:`Format.sniff_fields` (of absent ones, the key set
    says all there is)."""


def _evidence_function(target: str) -> Callable[[Any], Any]:
    module_name, name = target.split(":")
    found: Callable[[Any], Any] = getattr(importlib.import_module(module_name), name)
    return found


class _CandidateIndex:
    """JSON formats by the top-level keys that let them score (:attr:`Format.sniff_keys`),
    the candidates of each envelope shape seen (a topic has few shapes), and the scores of
    the shape-determined ones (:attr:`Format.sniff_fields`) per shape and evidence."""

    def __init__(self, sniffers: _Sniffers) -> None:
        self.sniffers = sniffers
        # the fields whose values a shape holds: every format's, so one key serves all
        self.fields = tuple(
            sorted({name for _, cls in sniffers for name in (cls.sniff_fields or ())})
        )
        self.plans: Cache[tuple[str, ...], _Plan] = Cache(SHAPE_CACHE_SIZE)
        self.verdicts: Cache[tuple[Any, ...], _Verdict] = Cache(VERDICT_CACHE_SIZE)
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

    def plan(self, message: dict[str, Any], keys: tuple[str, ...] | None = None) -> _Plan:
        """The plan of a message's shape (``keys``: its keys in order, when the caller
        has them): kept by the keys in order, the tuple the verdict's key starts with
        (a topic writes its keys in one order or a few)."""
        shape = tuple(message) if keys is None else keys
        found = self.plans.get(shape)
        if found is None:
            sniffers = self.of(message)
            rank = {format_id: i for i, (format_id, _) in enumerate(self.sniffers)}
            fixed = [cls for _, cls in sniffers if cls.sniff_fields is not None]
            evidence = dict.fromkeys(t for cls in fixed for t in cls.sniff_evidence)

            def ranked(shape_determined: bool) -> _Ranked:
                return tuple(
                    (rank[fid], fid, cls.sniff)
                    for fid, cls in sniffers
                    if (cls.sniff_fields is not None) == shape_determined
                )

            found = self.plans.put(
                shape,
                _Plan(
                    sniffers,
                    ranked(True),
                    ranked(False),
                    tuple(_evidence_function(target) for target in evidence),
                    tuple(name for name in self.fields if name in shape),
                ),
            )
        return found

    @staticmethod
    def shape_key(
        message: dict[str, Any], keys: tuple[str, ...], plan: _Plan, evidence: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """What :attr:`Format.sniff_fields` promises a shape-determined score depends on
        (``keys``: the message's keys in order). A field's value is kept only for the types
        of :data:`_SCALARS` (hashable, few); ``True`` and ``1`` are equal keys, but the
        value types beside them tell them apart."""
        values = [
            v if type(v) in _SCALARS else type(v) for v in map(message.__getitem__, plan.fields)
        ]
        return (keys, tuple(map(type, message.values())), tuple(values), evidence)


@cache
def _index() -> _CandidateIndex:
    return _CandidateIndex(_sniffers(binary=False))


def _candidates(message: Any) -> _Sniffers:
    """The formats that may claim a parsed JSON value: by its keys for an object, all the
    JSON formats for anything else (no format declares keys of an array)."""
    if type(message) is dict:
        return _index().of(message)
    return _sniffers(binary=False)


def _judge(message: Any) -> Detection:
    """:func:`detect_parsed`'s verdict on a parsed JSON value: an object's by its shape
    (:func:`_detect_object`), anything else's by every JSON sniffer."""
    if type(message) is dict:
        return _detect_object(message)
    return _best(_scores(message, _candidates(message)))


def _detect_object(message: dict[str, Any]) -> Detection:
    """:func:`detect_parsed_reference`'s verdict on a JSON object, with the shape-determined
    scores kept per shape (:attr:`Format.sniff_fields`) and only the content sniffers and the
    evidence read per message."""
    index = _index()
    keys = tuple(message)
    plan = index.plans.get(keys) or index.plan(message, keys)
    if not plan.content:
        # no sniffer reads content (a Canal-shaped message's case): a kept verdict needs no
        # sniffing pass, so the evidence is read directly; anything else takes the pass below
        try:
            evidence = tuple([read(message) for read in plan.evidence])
        except Exception:
            evidence = None
        if evidence is not None:
            kept = index.verdicts.get(index.shape_key(message, keys, plan, evidence))
            if kept is not None:
                return kept.detection
    SNIFF_PASS.begin(message)  # the evidence is read once, and reused by content sniffers
    try:
        try:
            evidence = tuple([SNIFF_PASS.shared(message, read) for read in plan.evidence])
        except Exception:
            # evidence that raises: the sniffers reading it score 0; ask them as the reference
            return _best(_pass_scores(message, plan.sniffers))
        key = index.shape_key(message, keys, plan, evidence)
        kept = index.verdicts.get(key)
        if kept is None:
            fixed = _ranked_scores(message, plan.fixed)
            kept = index.verdicts.put(key, _Verdict(fixed, _best(_unranked(fixed)), {}))
        if not plan.content:
            return kept.detection
        more = _ranked_scores(message, plan.content)
        # no content sniffer claims it (a Canal shape's case): the kept verdict is the verdict
        return kept.with_content(more) if more else kept.detection
    finally:
        SNIFF_PASS.end()


def _ranked_scores(message: Any, sniffers: _Ranked) -> _RankedScores:
    """The positive scores, each with its sniffer's registry rank (:func:`_sniff`, inline:
    a call per sniffer and message costs detection ~10%)."""
    scores = []
    for rank, format_id, sniff in sniffers:
        try:
            score = float(sniff(message))
        except Exception:
            score = 0.0  # a sniffer that raises claims nothing
        if score > 0:
            scores.append((rank, format_id, score))
    return tuple(scores)


def _unranked(scores: _RankedScores) -> list[tuple[str, float]]:
    """Ranked scores as :func:`_scores` lists them: stable by score over registry order,
    that is by score, then rank."""
    return [
        (format_id, score)
        for _, format_id, score in sorted(scores, key=lambda item: (-item[2], item[0]))
    ]


def _sniff(cls: type[Format], message: Any) -> float:
    try:
        return float(cls.sniff(message))
    except Exception:
        return 0.0  # a sniffer that raises claims nothing


def _scores(message: Any, sniffers: _Sniffers) -> list[tuple[str, float]]:
    SNIFF_PASS.begin(message)  # what several sniffers read alike is read once
    try:
        return _pass_scores(message, sniffers)
    finally:
        SNIFF_PASS.end()


def _pass_scores(message: Any, sniffers: _Sniffers) -> list[tuple[str, float]]:
    scores = [
        (format_id, score) for format_id, cls in sniffers if (score := _sniff(cls, message)) > 0
    ]
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
    "detect_parsed_reference",
    "detect_reference",
    "format_class",
    "format_ids",
    "get_format",
]
