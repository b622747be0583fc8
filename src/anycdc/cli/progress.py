"""The progress bar of ``anycdc run`` on a terminal.

Two feeds, because neither alone knows everything:

* the pipeline's :class:`~anycdc.spark.pipeline.BatchMetrics`, one per micro-batch
  (``Pipeline(on_batch=...)``): messages, events applied, dead letters, tables;
* Structured Streaming's progress (``StreamingQuery.lastProgress``), polled about once a
  second: for Kafka, how far each partition is behind its latest offset (the backlog), so
  the bar knows a total. A file source's offsets are batch numbers, not message counts:
  the bar then has no total and only pulses.

Progress is a courtesy: nothing here may break a run, so polling and feeding swallow
their errors. No pyspark import: the progress dicts are plain mappings.

>>> source = {"endOffset": '{"shop": {"0": 40, "1": 60}}',
...           "latestOffset": {"shop": {"0": 100, "1": 60}}}
>>> kafka_backlog(source)
60
>>> kafka_backlog({"endOffset": '{"logOffset": 3}', "latestOffset": None}) is None
True
>>> format_duration(eta_seconds(done=100, total=400, rate=10.0))
'0:00:30'
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console, RenderableType
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
from rich.text import Text

if TYPE_CHECKING:  # a Protocol: no need to import the metrics (prometheus) at run time
    from anycdc.metrics import BatchFacts

log = logging.getLogger("anycdc.progress")

POLL_SECONDS: Final = 1.0
# Spark renders a missing offset as JSON null, pyspark 4 as str(None)
_NO_OFFSET: Final = frozenset({"", "None", "null"})
_MAX_JSON_NESTING: Final = 3  # offsets JSON-encoded inside JSON text, at most this deep
_INTEGER: Final = re.compile(r"-?\d+")

QueryProgress = Mapping[str, Any]
"""One ``StreamingQuery.lastProgress`` (a dict, or pyspark 4's dict subclass)."""


# ---------------------------------------------------------------------- offsets
def decode_json_text(value: object) -> object:
    """``value`` with JSON text decoded, again while the result is still text; ``None`` for a
    missing offset or text that is not JSON.

    >>> twice = json.dumps(json.dumps({"t": {"0": 5}}))
    >>> decode_json_text(twice)
    {'t': {'0': 5}}
    >>> decode_json_text("None") is None, decode_json_text({"t": {"0": 5}})
    (True, {'t': {'0': 5}})
    """
    for _ in range(_MAX_JSON_NESTING):
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text in _NO_OFFSET:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    return None if isinstance(value, str) else value


def _as_offset(value: object) -> int | None:
    """An offset as an int (Kafka's JSON has ints; text of one is accepted too)."""
    if isinstance(value, bool):
        return None  # a bool is an int to Python, never an offset
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    return None


def kafka_offsets(value: object) -> dict[tuple[str, str], int] | None:
    """Kafka source offsets ``{topic: {partition: offset}}`` (a mapping or JSON text, at any
    level) as ``{(topic, partition): offset}``; ``None`` for anything else (a file source's
    ``{"logOffset": 3}``, a missing offset).

    >>> kafka_offsets('{"a": {"0": 7, "1": 9}, "b": {"0": 1}}')
    {('a', '0'): 7, ('a', '1'): 9, ('b', '0'): 1}
    >>> kafka_offsets({"logOffset": 3}) is None
    True
    """
    data = decode_json_text(value)
    if not isinstance(data, Mapping) or not data:
        return None
    offsets: dict[tuple[str, str], int] = {}
    for topic, partitions in data.items():
        partitions = decode_json_text(partitions)
        if not isinstance(partitions, Mapping) or not partitions:
            return None
        for partition, raw in partitions.items():
            offset = _as_offset(raw)
            if offset is None:
                return None
            offsets[str(topic), str(partition)] = offset
    return offsets


def kafka_backlog(source: Mapping[str, Any]) -> int | None:
    """Messages a Kafka source has not read yet (``latestOffset`` - ``endOffset``, per
    partition), or ``None`` when unknown (not Kafka, or an offset missing).

    A partition only in ``latestOffset`` is new since the last batch: where it starts is
    not known, so it is left out until a batch has read from it.

    >>> kafka_backlog({"endOffset": {"t": {"0": 10}}, "latestOffset": {"t": {"0": 25, "1": 5}}})
    15
    """
    end = kafka_offsets(source.get("endOffset"))
    latest = kafka_offsets(source.get("latestOffset"))
    if end is None or latest is None:
        return None
    # negative offsets are Kafka's "earliest"/"latest" placeholders, not positions
    return sum(
        max(0, offset - end[key])
        for key, offset in latest.items()
        if key in end and end[key] >= 0 and offset >= 0
    )


def query_backlog(progress: QueryProgress | None) -> int | None:
    """The backlog of all the query's sources, ``None`` unless every one is a known Kafka
    backlog."""
    if not progress:
        return None
    sources = progress.get("sources")
    if not isinstance(sources, Sequence) or isinstance(sources, str) or not sources:
        return None
    total = 0
    for source in sources:
        backlog = kafka_backlog(source) if isinstance(source, Mapping) else None
        if backlog is None:
            return None
        total += backlog
    return total


# ---------------------------------------------------------------------- arithmetic
def eta_seconds(done: int, total: int | None, rate: float) -> float | None:
    """Seconds until ``total`` at ``rate`` per second; ``None`` without a total or a rate.

    >>> eta_seconds(done=30, total=90, rate=20.0), eta_seconds(30, None, 20.0)
    (3.0, None)
    """
    if total is None or rate <= 0:
        return None
    return max(0, total - done) / rate


def format_duration(seconds: float | None) -> str:
    """``H:MM:SS`` (``-:--:--`` when unknown).

    >>> format_duration(3725.4), format_duration(None)
    ('1:02:05', '-:--:--')
    """
    if seconds is None:
        return "-:--:--"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def _count(number: int, word: str, plural: str = "") -> str:
    return f"{number:,} {word if number == 1 else plural or word + 's'}"


@dataclass
class RunCounts:
    """What a run has done so far, and the arithmetic on it (no clock of its own).

    >>> counts = RunCounts(started=0.0)
    >>> counts.add_batch(batch_id=0, messages=100, events=250, dead_letters=1, tables=["a.b"])
    >>> counts.add_query_progress({"batchId": 0, "sources": [
    ...     {"endOffset": {"t": {"0": 100}}, "latestOffset": {"t": {"0": 400}}}]})
    >>> counts.total, counts.eta(now=10.0)
    (400, 30.0)
    >>> counts.headline(now=10.0, with_eta=True)
    '100/400 messages · ETA 0:00:30 · 0:00:10 elapsed'
    >>> counts.details(now=10.0)
    '250 events · 1 dead letter · 1 batch · 1 table · 25 events/s'
    """

    started: float
    messages: int = 0
    events: int = 0
    dead_letters: int = 0
    batches: int = 0
    tables: set[str] = field(default_factory=set)
    messages_by_batch: dict[int, int] = field(default_factory=dict)
    known_total: int | None = None
    """Messages done + backlog at the newest progress with a known backlog."""

    def add_batch(
        self, batch_id: int, messages: int, events: int, dead_letters: int, tables: Sequence[str]
    ) -> None:
        self.messages += messages
        self.events += events
        self.dead_letters += dead_letters
        self.batches += 1
        self.tables.update(tables)
        self.messages_by_batch[batch_id] = self.messages_by_batch.get(batch_id, 0) + messages

    def add_query_progress(self, progress: QueryProgress) -> None:
        backlog = query_backlog(progress)
        if backlog is None:
            return  # keep the last known total: a later snapshot may know again
        # the backlog is as of that progress's batch: count only the messages done by then,
        # or a batch finished since (already counted, still in that backlog) counts twice
        batch_id = _as_offset(progress.get("batchId"))
        done_then = sum(
            messages
            for batch, messages in self.messages_by_batch.items()
            if batch_id is None or batch <= batch_id
        )
        self.known_total = done_then + backlog

    @property
    def total(self) -> int | None:
        """Messages to do in all (never below those done: offsets count a little more than
        messages, e.g. transaction markers), ``None`` when the source cannot tell."""
        if self.known_total is None:
            return None
        return max(self.known_total, self.messages)

    def elapsed(self, now: float) -> float:
        return max(0.0, now - self.started)

    def events_per_second(self, now: float) -> float:
        elapsed = self.elapsed(now)
        return self.events / elapsed if elapsed > 0 else 0.0

    def messages_per_second(self, now: float) -> float:
        elapsed = self.elapsed(now)
        return self.messages / elapsed if elapsed > 0 else 0.0

    def eta(self, now: float) -> float | None:
        """Seconds left at the run's average rate so far (start-up included, so early
        estimates err long rather than short)."""
        return eta_seconds(self.messages, self.total, self.messages_per_second(now))

    def headline(self, now: float, *, with_eta: bool) -> str:
        """Beside the bar: messages done (of how many), ETA, time so far."""
        total = self.total
        parts = [
            f"{self.messages:,}/{total:,} messages"
            if total is not None
            else _count(self.messages, "message")
        ]
        if with_eta and total is not None:
            parts.append(f"ETA {format_duration(self.eta(now))}")
        parts.append(f"{format_duration(self.elapsed(now))} elapsed")
        return " · ".join(parts)

    def details(self, now: float) -> str:
        """Below the bar: what was applied, and how fast."""
        return " · ".join(
            [
                _count(self.events, "event"),
                _count(self.dead_letters, "dead letter"),
                _count(self.batches, "batch", "batches"),
                _count(len(self.tables), "table"),
                f"{self.events_per_second(now):,.0f} events/s",
            ]
        )


# ---------------------------------------------------------------------- the bar
class RunProgress:
    """A live progress bar on ``console``, fed by batches and polled query progress.

    ``available_now``: the run ends when the backlog is done, so an ETA makes sense (an
    interval trigger runs until stopped). Use as a context manager::

        with RunProgress(Console(stderr=True), available_now=True) as progress:
            pipeline = Pipeline(spark, config, on_batch=progress.on_batch)
            query = pipeline.start()
            progress.watch(lambda: query.lastProgress)
            query.awaitTermination()
    """

    def __init__(
        self,
        console: Console,
        *,
        available_now: bool,
        poll_seconds: float = POLL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.available_now = available_now
        self.poll_seconds = poll_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self.counts = RunCounts(started=clock())
        self._bar = _TwoLineProgress(
            SpinnerColumn(),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[headline]}"),
            console=console,
            refresh_per_second=4,
        )
        headline, details = self._texts()
        self._task = self._bar.add_task(
            "anycdc run", total=None, headline=headline, details=details
        )
        self._poll: Callable[[], QueryProgress | None] | None = None
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> RunProgress:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        with self._lock:
            self.counts.started = self._clock()  # rates count from the bar's start
        self._bar.start()

    def watch(self, poll: Callable[[], QueryProgress | None]) -> None:
        """Call ``poll`` (e.g. ``lambda: query.lastProgress``) every ``poll_seconds`` in a
        daemon thread, until :meth:`stop`."""
        self._poll = poll
        self._stop.clear()
        self._poller = threading.Thread(target=self._poll_loop, name="anycdc-progress", daemon=True)
        self._poller.start()

    def stop(self) -> None:
        """Stop polling (one last poll, so the bar ends on the final backlog) and leave the
        bar's last state on the screen."""
        self._stop.set()
        stuck = False
        if self._poller is not None:
            self._poller.join(timeout=max(5.0, 5 * self.poll_seconds))
            stuck = self._poller.is_alive()  # a hung call into the JVM: do not make another
            self._poller = None
        try:
            if not stuck:
                self.poll_once()
            self._refresh_quietly()  # rates and ETA as of now, even without a poll
        finally:
            self._bar.stop()

    # ------------------------------------------------------------------ feeds
    def on_batch(self, metrics: BatchFacts) -> None:
        """``Pipeline(on_batch=...)``: runs in Spark's batch thread, so it never raises."""
        try:
            with self._lock:
                self.counts.add_batch(
                    metrics.batch_id,
                    metrics.messages,
                    metrics.events,
                    metrics.dead_letters,
                    [t.table for t in metrics.tables],
                )
            self.refresh()
        except Exception:  # a progress bar must not fail a batch
            log.debug("progress: batch not counted", exc_info=True)

    def on_query_progress(self, progress: QueryProgress | None) -> None:
        if progress:
            with self._lock:
                self.counts.add_query_progress(progress)
        self.refresh()

    def poll_once(self) -> None:
        """One poll, errors swallowed (the query may be stopping, the JVM gone)."""
        if self._poll is None:
            return
        try:
            self.on_query_progress(self._poll())
        except Exception:  # progress must never break a run
            log.debug("progress: poll failed", exc_info=True)

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            self.poll_once()
            self._refresh_quietly()  # the rate and ETA move on between batches too

    # ------------------------------------------------------------------ display
    def _texts(self) -> tuple[str, str]:
        """The headline beside the bar and the details below it, as of now."""
        with self._lock:
            now = self._clock()
            return self.counts.headline(now, with_eta=self.available_now), self.counts.details(now)

    def refresh(self) -> None:
        """Put the current counts on the bar (rich redraws it on its own schedule)."""
        with self._lock:
            done, total = self.counts.messages, self.counts.total
        # rich cannot reset a total to None: the task starts without one (a pulsing bar)
        # and only ever gets one
        headline, details = self._texts()
        self._bar.update(
            self._task, completed=done, total=total, headline=headline, details=details
        )

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except Exception:  # a display glitch must not end the poller (or the run)
            log.debug("progress: refresh failed", exc_info=True)


class _TwoLineProgress(Progress):
    """The bar line, then its task's ``details`` on a line of their own: both fit an
    80-column terminal, where one line would squeeze the bar to nothing."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text(
                "  " + str(task.fields.get("details", "")), no_wrap=True, overflow="ellipsis"
            )
