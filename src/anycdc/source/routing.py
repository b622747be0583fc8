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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote, urlsplit

FILE_SCHEME: Final = "file"


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


__all__ = ["DecodeRoute", "SourceRouting"]
