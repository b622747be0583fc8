"""Which format and options decode the messages of each source (topic or folder).

One pipeline often reads several topics written by different tasks: a DTS task
created before 2022 (``legacy=true``) next to a newer one, a DRS topic whose
times are in Asia/Shanghai next to a Debezium topic in UTC. ``per_topic`` in the
configuration gives a topic its own format and options over the run's; a
directory source has no topics, so there a file's "topic" is the first folder
under ``source_dir`` it sits in (``captures/dts_legacy/0001.jsonl`` belongs to
``dts_legacy``; a file directly in ``source_dir`` to no topic).

The routing is pure and small (picklable): Spark ships it to the Python workers.

>>> topics = SourceRouting(DecodeRoute("auto"),
...     {"dts_old": DecodeRoute("dts-canal-json", (("legacy", "true"),))})
>>> topics.route("dts_old").format, topics.route("dts_old").option_map
('dts-canal-json', {'legacy': 'true'})
>>> topics.route("orders").format
'auto'
>>> folders = SourceRouting(DecodeRoute("auto"), topics.per_topic, root="/in")
>>> folders.route("file:///in/dts_old/part-1.jsonl").format
'dts-canal-json'
>>> folders.route("file:/in/part-1.jsonl").format
'auto'

:attr:`anycdc.config.PipelineConfig.routing` builds the run's routing (which of the
run's options a topic's format takes is the configuration's business).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote, urlsplit

FILE_SCHEME: Final = "file"
AUTO: Final = "auto"  # the route that detects every message's format (anycdc.decoding.AUTO)


@dataclass(frozen=True, slots=True)
class DecodeRoute:
    """How one source's messages are decoded: a format id (or ``auto``) and its options."""

    format: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)


@dataclass(frozen=True)
class SourceRouting:
    """The run's default route and the routes of the topics that have their own."""

    default: DecodeRoute
    per_topic: Mapping[str, DecodeRoute] = field(default_factory=dict)
    root: str | None = None
    """``source_dir`` (an absolute path or URI): a file's topic is its first folder there."""

    @classmethod
    def single(cls, format_id: str, options: Mapping[str, str]) -> SourceRouting:
        """One route for every source."""
        return cls(DecodeRoute(format_id, tuple(options.items())))

    def route(self, source: str) -> DecodeRoute:
        """The route of a record's ``source`` (a Kafka topic, or a file's path or URI)."""
        if not self.per_topic:
            return self.default
        return self.per_topic.get(self.topic_of(source), self.default)

    def topic_of(self, source: str) -> str:
        """A Kafka topic is itself; a file under ``root`` has its first folder's name."""
        if self.root is None:
            return source
        below = _relative_parts(source, self.root)
        return below[0] if below is not None and len(below) > 1 else ""


class DetectionAdvice:
    """Says once per topic that is auto-detected when every message of it so far was of
    one format: naming that format skips detection, which on a Canal-shaped stream costs
    more than the decoding itself (docs/BENCHMARKS.md, "Where the decode phase goes").

    It listens to a run's first ``batches`` batches that decoded messages: what a batch
    detected is an aggregate over all its rows, a few tenths of a second per 200,000
    events, not worth paying for a hint in every batch of a long run.

    >>> advice = DetectionAdvice(SourceRouting(DecodeRoute("auto")), batches=2)
    >>> advice.seen([("orders", "canal-json")])  # doctest: +ELLIPSIS
    ["topic 'orders': every message so far is canal-json; ...{orders: {format: canal-json}}..."]
    >>> advice.seen([("orders", "canal-json"), ("mixed", "canal-json"), ("mixed", "maxwell-json")])
    []
    >>> advice.listening
    False
    """

    def __init__(self, routing: SourceRouting, batches: int = 3) -> None:
        self.routing = routing
        self._formats: dict[str, set[str]] = {}
        self._told: set[str] = set()
        self._batches = batches

    @property
    def listening(self) -> bool:
        """Whether the next batch's formats are still wanted."""
        return self._batches > 0

    def seen(self, decoded: Iterable[tuple[str, str]]) -> list[str]:
        """The advice that ``decoded`` (a batch's distinct ``(source, format)`` pairs of
        its messages that decoded) gives for the first time."""
        formats: dict[str, set[str]] = {}
        decoded = list(decoded)
        if decoded:
            self._batches -= 1
        for source, format_id in decoded:
            if self.routing.route(source).format == AUTO:
                formats.setdefault(self.routing.topic_of(source), set()).add(format_id)
        advice = []
        for topic, found in formats.items():
            known = self._formats.setdefault(topic, set())
            known |= found
            if topic in self._told or len(known) != 1:
                continue
            self._told.add(topic)
            (format_id,) = known
            where = f"topic {topic!r}" if topic else "the source"
            setting = (
                f"per_topic: {{{topic}: {{format: {format_id}}}}}"
                if topic
                else f"format: {format_id}"
            )
            advice.append(
                f"{where}: every message so far is {format_id}; if it carries no other format, "
                f"name it ({setting}): detecting each message's format costs more than decoding it"
            )
        return advice


def _relative_parts(source: str, root: str) -> list[str] | None:
    """The path parts of ``source`` below ``root`` (``None`` when it is not below it)."""
    path, base = _local_path(source), _local_path(root)
    parts = [p for p in path.split("/") if p]
    base_parts = [p for p in base.split("/") if p]
    if parts[: len(base_parts)] != base_parts:
        return None
    return parts[len(base_parts) :]


def _local_path(location: str) -> str:
    # Spark names files by URI (file:/x, file:///x, s3a://bucket/x); a root may be a plain path
    split = urlsplit(location)
    if split.scheme and split.scheme != FILE_SCHEME and len(split.scheme) > 1:
        return f"{split.netloc}/{unquote(split.path)}"
    if split.scheme == FILE_SCHEME:
        return unquote(split.path)
    return location


__all__ = ["DecodeRoute", "DetectionAdvice", "SourceRouting"]
