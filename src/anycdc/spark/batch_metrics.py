"""What one micro-batch (or an apply outside one) did: counts, phases, lag, backlog.

Where it sits: beside the flow source -> decode -> changelog -> plan -> apply -> commit, which
every stage reports into. The ingest step (:mod:`anycdc.spark.ingest`) counts a batch's
messages and skips, the apply round (:mod:`anycdc.spark.apply_round`) adds the tables it
applied; the stream runner (:mod:`anycdc.spark.pipeline`) logs the result as one line, hands
it to the metrics server and to ``on_batch``, and :mod:`anycdc.spark.system_tables` records
it in ``_anycdc/batches``. No Spark here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from anycdc.console import age_text
from anycdc.spark.apply import TableResult

SKIP_CONTROL: Final = "control"
"""Heartbeats and transaction markers (:data:`anycdc.event.CONTROL_OPS`)."""
SKIP_NO_TABLE: Final = "no-table"
"""A DDL that names no table (``CREATE DATABASE``)."""
SKIP_EXCLUDED: Final = "excluded"
"""A change of a table that ``include``/``exclude`` leave out."""
SKIP_REASONS: Final = (SKIP_CONTROL, SKIP_NO_TABLE, SKIP_EXCLUDED)
"""Why a changelog row is applied to no table: the documented skips (docs/REFERENCE.md, Semantics)."""


@dataclass
class BatchMetrics:
    """What one micro-batch (or the final apply of a run) did: one log line, and
    ``_anycdc/batches``."""

    batch_id: int
    messages: int = 0
    events: int = 0
    bytes: int = 0
    """The size of the batch's messages."""
    dead_letters: int = 0
    tables: list[TableResult] = field(default_factory=list)
    """The tables applied (their MERGEs ran in this batch)."""
    own_rows_applied: bool = False
    """A table applied in the batch had no changes pending from before it (what a
    ``freshness`` of 0 or a small ``max_pending_rows`` does every batch): the next batch
    is likely to apply its own rows too (:attr:`IngestStep.applies_in_batch
    <anycdc.spark.ingest.IngestStep.applies_in_batch>`)."""
    deferred: int = 0
    """Tables with pending changes that were not due."""
    heartbeat_ts_ms: int | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds per stage of the batch (decode, plan, schema, log, apply), in order."""
    flush: bool = False
    """An apply outside a micro-batch: the end of a run, or tables due between batches."""
    ending: bool = False
    """The apply at the end of a run."""
    beside: bool = False
    """An apply beside the next micro-batch's ingest (``apply_beside_ingest``)."""
    handed: int = 0
    """The tables this micro-batch handed to the apply beside ingest."""
    source_ts_ms: int | None = None
    """The newest source time of the batch's events (what the lag is measured from)."""
    finished: float = 0.0
    """When it ended (``time.monotonic()``)."""
    apply_seconds: float = 0.0
    """The part of ``seconds`` spent applying the tables that were due."""
    behind: float | None = None
    """Micro-batches of backlog after this one (:func:`batches_behind`), if known."""
    skipped: dict[str, int] = field(default_factory=dict)
    """The batch's changelog rows that no table takes, by reason (:data:`SKIP_REASONS`)."""
    excluded: dict[str, int] = field(default_factory=dict)
    """The batch's changes of tables ``include``/``exclude`` leave out, per table."""

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``phases[phase]``."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.monotonic() - started

    @property
    def applied_events(self) -> int:
        return sum(t.events for t in self.tables)

    def line(self) -> str:
        """One log line: what came in, what was applied and deferred, where the time went.

        >>> m = BatchMetrics(3, messages=10, events=12, seconds=2.0, deferred=4)
        >>> m.line().split(" (")[0]
        'batch 3: 10 messages, 12 events in 2.0s = 6 events/s; 0 tables applied, 4 deferred, 0 dead letters'
        """
        rate = self.events / self.seconds if self.seconds else 0.0
        head = f"batch {self.batch_id}"
        if self.flush:
            head = "final apply" if self.ending else "apply between batches"
            if self.beside:
                head = f"apply beside ingest (through batch {self.batch_id})"
        failed = sum(1 for t in self.tables if t.error)
        text = (
            f"{head}: {self.messages} messages, {self.events} events in {self.seconds:.1f}s = "
            f"{rate:,.0f} events/s; {len(self.tables) - failed} tables applied"
            f"{self._appended_text()}, "
            + (f"{failed} failed (events dead-lettered), " if failed else "")
            + f"{self.deferred} deferred, {self.dead_letters} dead letters ({self._phase_text()})"
        )
        newest = max(self.source_ts_ms or 0, self.heartbeat_ts_ms or 0)
        if newest:
            lag = (time.time() * 1000 - newest) / 1000
            # a replay of old data (or a simulated clock) is hours behind: say so plainly
            text += f", newest source change {age_text(lag)} old"
        if self.handed:
            text += f", {self.handed} tables handed to the apply beside ingest"
        if self.behind:
            text += f", {backlog_text(self.behind)}"
        return text

    def _appended_text(self) -> str:
        appended = sum(1 for t in self.tables if t.appended)
        return f" ({appended} by append)" if appended else ""

    def _phase_text(self) -> str:
        return ", ".join(f"{name} {secs:.1f}s" for name, secs in self.phases.items())


def backlog_text(behind: float) -> str:
    """How a batch line says what is left to read after it (``behind``: batches).

    >>> backlog_text(0.00007), backlog_text(1.4), backlog_text(2.5)
    ('under a batch of backlog', '1 batch of backlog', '2 batches of backlog')
    """
    if behind < 1:
        return "under a batch of backlog"
    whole = round(behind)
    return f"{whole} batch{'es' if whole != 1 else ''} of backlog"


def batches_behind(progress: dict[str, Any], cap: int | None, messages: int) -> float | None:
    """Micro-batches still waiting after the current one, from the streaming query's last
    progress (Spark's ``lastProgress``: the batch before): a Kafka source reports how far
    its partitions are behind the latest offsets (on average), divided by what one batch
    takes (``cap``, else this batch's ``messages``), less the current batch. None when the
    source reports no such figure (a folder of files).

    >>> kafka = {"sources": [{"endOffset": {"t": {"0": 10, "1": 10}},
    ...          "metrics": {"avgOffsetsBehindLatest": "1000.0"}}]}
    >>> batches_behind(kafka, 400, 400)
    4.0
    >>> batches_behind({"sources": [{"metrics": {}}]}, 1, 1) is None
    True
    """
    waiting = None
    for source in progress.get("sources") or ():
        average = (source.get("metrics") or {}).get("avgOffsetsBehindLatest")
        if average is None:
            continue
        ends = source.get("endOffset")
        if isinstance(ends, str):
            ends = json.loads(ends)
        partitions = sum(len(p) for p in ends.values()) if isinstance(ends, dict) else 1
        waiting = (waiting or 0.0) + float(average) * max(1, partitions)
    if waiting is None:
        return None
    per_batch = cap or messages
    return max(0.0, waiting / per_batch - 1) if per_batch else 0.0
