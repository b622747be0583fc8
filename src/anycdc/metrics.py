"""The run's metrics, in the Prometheus text format (``metrics_port``): every definition here.

The pipeline hands over what it already knows once per micro-batch and once per apply
outside one (:meth:`PipelineMetrics.observe_batch`: counts, phase times, the tables applied),
what waits (:meth:`PipelineMetrics.observe_schedule`) and the streaming query's last
progress (:meth:`PipelineMetrics.observe_progress`: Kafka lag). Nothing here runs a Spark
job or looks at a row: the cost is a few dictionary updates per batch and table.

Labels stay bounded: ``table`` (its qualified source name, as ``status`` shows it) for the
first ``max_tables`` tables seen, the rest summed under ``table="_other"``; ``reason`` of
a dead letter from :data:`REASONS`; ``phase`` from the batch's phases; ``topic`` and
``partition`` of the Kafka source. Never a key or a position (those are ``status``'s).

A private :class:`~prometheus_client.CollectorRegistry` per run: two pipelines in one
process (tests, a replay) never share a series.

>>> from prometheus_client import generate_latest
>>> m = PipelineMetrics(max_tables=1)
>>> m.label("shop.orders"), m.label("shop.audit")
('shop.orders', '_other')
>>> m.count_dead_letters(None, 2, "decode")
>>> b"anycdc_dead_letters_total{reason=\\"decode\\"} 2.0" in generate_latest(m.registry)
True
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Summary
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from anycdc.schedule import Schedule, qualified_name

log = logging.getLogger("anycdc.metrics")

OTHER: Final = "_other"
"""The ``table`` label of every table past ``max_tables``."""
REASONS: Final = ("decode", "cast", "schema", "failed")
"""Why a message was dead-lettered: it did not decode; a value does not fit its column; its
table's schema change is incompatible; its table's apply failed (whatever Spark or Delta
raised)."""
SCHEMA_CHANGE: Final = "incompatible schema change"
"""How the reason of a table failed for its schema begins (``_anycdc/batches.error``)."""
PHASE_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""Seconds: a batch phase of a small stream (tens of ms) to a catch-up apply (minutes)."""


def dead_letter_reason(error: str | None) -> str:
    """The :data:`REASONS` entry of a table's dead letters from its apply's error (None: the
    apply ran, the rows whose values do not fit were dead-lettered).

    >>> dead_letter_reason(None), dead_letter_reason("incompatible schema change: id")
    ('cast', 'schema')
    >>> dead_letter_reason("[DELTA_FAILED] ...")
    'failed'
    """
    if error is None:
        return "cast"
    return "schema" if error.startswith(SCHEMA_CHANGE) else "failed"


class TableFacts(Protocol):
    """What one table's apply did (:class:`anycdc.spark.apply.TableResult`)."""

    @property
    def table(self) -> str: ...
    @property
    def events(self) -> int: ...
    @property
    def dead_letters(self) -> int: ...
    @property
    def max_ts_ms(self) -> int | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def seconds(self) -> float: ...


class BatchFacts(Protocol):
    """What a micro-batch or an apply outside one did (:class:`anycdc.spark.batch_metrics.BatchMetrics`):
    what the metrics observe, and what ``anycdc run``'s progress bar reads
    (:meth:`anycdc.cli.progress.RunProgress.on_batch`)."""

    @property
    def batch_id(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def dead_letters(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def seconds(self) -> float: ...
    @property
    def phases(self) -> Mapping[str, float]: ...
    @property
    def flush(self) -> bool: ...
    @property
    def deferred(self) -> int: ...
    @property
    def tables(self) -> Sequence[TableFacts]: ...


class PipelineMetrics:
    """Every metric of one run, in its own registry (see the module docstring)."""

    def __init__(self, max_tables: int = 1000) -> None:
        self.max_tables = max_tables
        self.registry = CollectorRegistry(auto_describe=True)
        self._labels: set[str] = set()
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[int, int | None]] = {}  # label -> (rows, since_ms)
        self._series: dict[str, _TableSeries] = {}  # label -> its apply series
        self._targets: set[str] = set()  # the labels whose freshness target is set
        self._server: Any = None
        self._thread: threading.Thread | None = None
        r = self.registry
        table = ("table",)
        # ---- per table
        self.applies = Counter(
            "anycdc_table_applies", "Applies of a table (its pending rows written)", table,
            registry=r,
        )  # fmt: skip
        self.apply_seconds = Summary(
            "anycdc_table_apply_seconds",
            "Seconds of a table's write in an apply (count and sum: two series a table)",
            table, registry=r,
        )  # fmt: skip
        self.applied_events = Counter(
            "anycdc_table_events_applied", "Changes applied to a table", table, registry=r
        )
        self.last_applied = Gauge(
            "anycdc_table_last_applied_timestamp_seconds",
            "When the table's last apply ended (Unix time)", table, registry=r,
        )  # fmt: skip
        self.last_source = Gauge(
            "anycdc_table_last_source_timestamp_seconds",
            "The source's commit time of the newest change applied to the table (Unix time)",
            table, registry=r,
        )  # fmt: skip
        self.freshness_target = Gauge(
            "anycdc_table_freshness_target_seconds",
            "The table's freshness target (_other: the run's freshness)", table, registry=r,
        )  # fmt: skip
        self.table_dead_letters = Counter(
            "anycdc_table_dead_letters",
            "A table's dead-lettered changes by reason (cast, schema, failed)",
            ("table", "reason"), registry=r,
        )  # fmt: skip
        # ---- per run
        self.dead_letters = Counter(
            "anycdc_dead_letters",
            "Dead-lettered messages and changes by reason (decode, cast, schema, failed)",
            ("reason",), registry=r,
        )  # fmt: skip
        self.messages = Counter("anycdc_messages", "Messages ingested", registry=r)
        self.events = Counter(
            "anycdc_events", "Change events ingested (decoded, not dead-lettered)", registry=r
        )
        self.bytes = Counter("anycdc_bytes", "Bytes of the messages ingested", registry=r)
        self.batches = Counter("anycdc_batches", "Micro-batches processed", registry=r)
        self.batch_seconds = Histogram(
            "anycdc_batch_seconds", "Seconds of a micro-batch", registry=r, buckets=PHASE_BUCKETS
        )
        self.phase_seconds = Histogram(
            "anycdc_batch_phase_seconds",
            "Seconds of a phase (decode, schema, plan, log, apply) of a micro-batch or an "
            "apply outside one",
            ("phase",), registry=r, buckets=PHASE_BUCKETS,
        )  # fmt: skip
        self.kafka_lag = Gauge(
            "anycdc_kafka_lag_messages",
            "A Kafka partition's latest offset minus the offset the stream has processed",
            ("topic", "partition"), registry=r,
        )  # fmt: skip
        self.tables_due = Gauge(
            "anycdc_tables_due", "Tables applied by the last micro-batch or apply", registry=r
        )
        self.tables_waiting = Gauge(
            "anycdc_tables_waiting", "Tables with pending changes that are not due", registry=r
        )
        self.alive = Gauge(
            "anycdc_query_alive", "1 while the streaming query runs, else 0", registry=r
        )
        r.register(_Waiting(self._waiting_now))
        for reason in REASONS:  # each series from 0: rate() sees its first increase
            self.dead_letters.labels(reason)

    # ------------------------------------------------------------------ labels
    def label(self, table: str) -> str:
        """``table``, or :data:`OTHER` once ``max_tables`` others have a label of their own."""
        if table in self._labels:
            return table
        with self._lock:
            if len(self._labels) < self.max_tables:
                self._labels.add(table)
                return table
            self._waiting.setdefault(OTHER, (0, None))  # reported from now on
        return OTHER

    # ------------------------------------------------------------------ updates
    def observe_batch(self, batch: BatchFacts, now: float | None = None) -> None:
        """A micro-batch (or an apply outside one, ``flush``) has ended."""
        now = time.time() if now is None else now
        if not batch.flush:
            self.batches.inc()
            self.batch_seconds.observe(batch.seconds)
            self.messages.inc(batch.messages)
            self.events.inc(batch.events)
            self.bytes.inc(batch.bytes)
            self.count_dead_letters(None, batch.dead_letters, "decode")
        for phase, seconds in batch.phases.items():
            self.phase_seconds.labels(phase).observe(seconds)
        for result in batch.tables:
            self.observe_table(result, now)
        self.tables_due.set(len(batch.tables))
        self.tables_waiting.set(batch.deferred)

    def observe_table(self, result: TableFacts, now: float) -> None:
        """One table's apply (an apply that failed counts its dead letters, not an apply)."""
        name = self.label(result.table)
        self.count_dead_letters(name, result.dead_letters, dead_letter_reason(result.error))
        if result.error:
            return
        series = self._series.get(name)
        if series is None:  # labels() costs more than the update: once per table
            series = self._series[name] = _TableSeries(
                self.applies.labels(name),
                self.apply_seconds.labels(name),
                self.applied_events.labels(name),
                self.last_applied.labels(name),
                self.last_source.labels(name),
            )
        series.applies.inc()
        series.apply_seconds.observe(result.seconds)
        series.events.inc(result.events)
        series.last_applied.set(now)
        if result.max_ts_ms is not None:
            # the newest ever (of all its tables, under _other): a late batch never lowers it
            series.newest_source = max(result.max_ts_ms / 1000, series.newest_source)
            series.last_source.set(series.newest_source)

    def count_dead_letters(self, table: str | None, count: int, reason: str) -> None:
        """``count`` dead letters for ``reason`` (of ``table``'s label, if a table's)."""
        if not count:
            return
        self.dead_letters.labels(reason).inc(count)
        if table is not None:
            self.table_dead_letters.labels(table, reason).inc(count)

    def observe_schedule(self, schedule: Schedule) -> None:
        """What waits: each table's pending rows and when the oldest was ingested; every
        other table seen (applied, or pending before) waits for nothing (0)."""
        waiting: dict[str, tuple[int, int | None]] = {}
        for ident, state in list(schedule.pending.items()):
            name = self.label(qualified_name(ident))
            rows, since = waiting.get(name, (0, None))
            oldest = [s for s in (since, state.oldest_ms) if s is not None]
            waiting[name] = (rows + state.rows, min(oldest) if oldest else None)
        with self._lock:
            for name in [*self._labels, *self._waiting]:
                waiting.setdefault(name, (0, None))
            self._waiting = waiting
        policy = schedule.policy
        for name in waiting.keys() - self._targets:  # once per table: a regex match each
            target = policy.default_s if name == OTHER else policy.target_s(name)
            self.freshness_target.labels(name).set(target)
            self._targets.add(name)

    def observe_progress(self, progress: Mapping[str, Any] | None) -> None:
        """Kafka lag per partition from the streaming query's last progress
        (:func:`kafka_lag`)."""
        for (topic, partition), lag in kafka_lag(progress).items():
            self.kafka_lag.labels(topic, str(partition)).set(lag)

    def set_alive(self, alive: bool) -> None:
        self.alive.set(1 if alive else 0)

    def _waiting_now(self) -> Iterator[tuple[str, int, float]]:
        """(label, pending rows, staleness seconds) at the time of a scrape."""
        now_ms = time.time() * 1000
        with self._lock:
            items = list(self._waiting.items())
        for name, (rows, since) in sorted(items):
            yield name, rows, max(0.0, (now_ms - since) / 1000) if since is not None else 0.0

    # ------------------------------------------------------------------ serving
    def serve(self, port: int, address: str = "127.0.0.1") -> None:
        """Serve ``/metrics`` on ``address:port`` from a thread (until :meth:`stop`)."""
        from prometheus_client import start_http_server

        self._server, self._thread = start_http_server(port, address, registry=self.registry)
        log.info("metrics at http://%s:%d/metrics", address, port)

    def stop(self) -> None:
        """Stop serving (the run has ended)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None


@dataclass
class _TableSeries:
    """A table label's series of :meth:`PipelineMetrics.observe_table`."""

    applies: Counter
    apply_seconds: Summary
    events: Counter
    last_applied: Gauge
    last_source: Gauge
    newest_source: float = 0.0


class _Waiting(Collector):
    """Staleness and pending rows per table, computed at each scrape (the time since the
    oldest pending change grows between batches)."""

    def __init__(self, waiting: Callable[[], Iterable[tuple[str, int, float]]]) -> None:
        self._waiting = waiting

    def collect(self) -> Iterable[Metric]:
        stale = GaugeMetricFamily(
            "anycdc_table_staleness_seconds",
            "Seconds the table's oldest change not yet applied has waited since it was "
            "ingested (0: nothing pending)",
            labels=["table"],
        )
        pending = GaugeMetricFamily(
            "anycdc_table_pending_rows",
            "Changes of the table ingested and not yet applied",
            labels=["table"],
        )
        for name, rows, seconds in self._waiting():
            stale.add_metric([name], seconds)
            pending.add_metric([name], rows)
        return [stale, pending]

    def describe(self) -> Iterable[Metric]:
        return self.collect()


def kafka_lag(progress: Mapping[str, Any] | None) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the partition's latest offset minus the stream's processed one,
    from a streaming query's progress (``sources[].latestOffset`` and ``endOffset``, JSON
    texts or mappings); empty for a source that is not Kafka.

    >>> kafka_lag({"sources": [{"endOffset": '{"t": {"0": 4, "1": 9}}',
    ...                         "latestOffset": {"t": {"0": 10, "1": 9}}}]})
    {('t', 0): 6, ('t', 1): 0}
    >>> kafka_lag({"sources": [{"endOffset": "0", "latestOffset": None}]})
    {}
    """
    import json

    lag: dict[tuple[str, int], int] = {}
    for source in (progress or {}).get("sources") or ():
        ends, latest = (_offsets(source.get(k), json.loads) for k in ("endOffset", "latestOffset"))
        for topic, partitions in latest.items():
            for partition, offset in partitions.items():
                done = ends.get(topic, {}).get(partition)
                if done is not None:
                    lag[(topic, int(partition))] = max(0, int(offset) - int(done))
    return lag


def _offsets(value: Any, parse: Callable[[str], Any]) -> dict[str, dict[str, Any]]:
    """``{topic: {partition: offset}}`` of a Kafka source's offsets, else empty."""
    if isinstance(value, str):
        try:
            value = parse(value)
        except ValueError:
            return {}
    if not isinstance(value, Mapping):
        return {}
    return {t: dict(p) for t, p in value.items() if isinstance(p, Mapping)}


__all__ = [
    "OTHER",
    "REASONS",
    "PipelineMetrics",
    "dead_letter_reason",
    "kafka_lag",
]
