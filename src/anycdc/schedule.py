"""When each target table is brought up to date: ingest every batch, apply when due.

Every micro-batch makes its events durable in ``_anycdc/changelog`` (the only write
all tables share). A table's changelog rows then wait, *pending*, until the table is
**due**; its apply reads them all at once, folds them per key and MERGEs once. A table
is due when

- it has a DDL statement or a TRUNCATE pending (``urgent``: ordered now, not later);
- its pending rows reach ``max_pending_rows``;
- its oldest pending change would be older than its freshness target by the next
  decision (``lookahead_ms``: the last batch's ingest time), so a table is applied
  *before* it goes stale, not one cycle after;
- its freshness target is 0 (every batch: the behaviour before deferral);
- the run is ending, or starting with rows a previous run left pending.

While the stream reads a backlog, freshness waits (the other reasons do not): for a long one
(``catching_up``: more than ``catch_up_batches`` behind) until it is read; for a short one
(``backlog_s``: a batch or more behind) when the tables due for their freshness would take
longer to apply (``apply_s`` each) than the backlog takes to read, and no longer than a
second freshness period (counted from the end of a long backlog, when there was one): they
are applied once, after it, not once now and again then.

This module is pure (no Spark): the pipeline feeds it what each batch ingested and asks
which tables are due (:meth:`Schedule.due`).

>>> policy = FreshnessPolicy(default_s=60.0, per_table=(("^shop\\\\.orders$", 10.0),))
>>> policy.target_s("shop.orders"), policy.target_s("shop.audit")
(10.0, 60.0)
>>> schedule = Schedule(policy)
>>> schedule.ingested(("shop", None, "orders"), batch_id=0, rows=5, now_ms=1_000)
>>> schedule.ingested(("shop", None, "audit"), batch_id=0, rows=5, now_ms=1_000)
>>> [t[2] for t in schedule.due(now_ms=12_000)]  # orders waited 11 s > 10 s
['orders']
>>> schedule.applied([("shop", None, "orders")], through=0)
>>> [t[2] for t in schedule.due(now_ms=12_000, ending=True)]
['audit']
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from anycdc.errors import OptionError

TableIdent = tuple[str | None, str | None, str]
"""(database, schema, table) of a source table."""

_DURATION: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*")
_UNIT_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
APPLY_ESTIMATE_S: Final = 1.0
"""What one table's apply is taken to cost before a run has applied any (a Delta write of a
small table on 2 cores: ~1-2 s); then the last apply round's seconds per table."""


def parse_duration(value: Any, key: str = "freshness") -> float:
    """Seconds from a number of seconds or a text with a unit (``ms``, ``s``, ``m``, ``h``).

    >>> parse_duration("15m"), parse_duration(10), parse_duration("0")
    (900.0, 10.0, 0.0)
    >>> parse_duration("soon")
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: freshness: expected seconds or a duration like 10s, 15m, 1h; got 'soon'
    """
    if isinstance(value, bool):
        raise OptionError(f"{key}: expected seconds or a duration like 10s, 15m, 1h; got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.fullmatch(str(value))
        if match is None:
            raise OptionError(
                f"{key}: expected seconds or a duration like 10s, 15m, 1h; got {value!r}"
            )
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds < 0:
        raise OptionError(f"{key}: must be >= 0, got {value!r}")
    return seconds


def qualified_name(ident: TableIdent) -> str:
    """``database.schema.table`` with the parts the source has (what patterns match)."""
    return ".".join(part for part in ident if part)


@dataclass(frozen=True)
class FreshnessPolicy:
    """How stale each table may get (seconds; 0: applied in every batch)."""

    default_s: float = 60.0
    per_table: tuple[tuple[str, float], ...] = ()
    """(regex over ``database.table``, seconds): the first pattern that matches wins."""
    max_pending_rows: int = 500_000
    own: Callable[[str], float | None] | None = field(default=None, compare=False)
    """A table's own target before ``per_table`` (the config's ``tables:`` entries), or None."""
    own_targets: tuple[float, ...] = ()
    """Every target ``own`` can give (how often an idle run looks for due tables)."""

    @classmethod
    def from_config(
        cls,
        default: float,
        per_table: Mapping[str, float],
        max_pending_rows: int,
        own: Callable[[str], float | None] | None = None,
        own_targets: tuple[float, ...] = (),
    ) -> FreshnessPolicy:
        return cls(default, tuple(per_table.items()), max_pending_rows, own, own_targets)

    @property
    def targets(self) -> tuple[float, ...]:
        """Every target a table can get (seconds)."""
        return (self.default_s, *(s for _, s in self.per_table), *self.own_targets)

    def target_s(self, qualified: str) -> float:
        if self.own is not None:
            seconds = self.own(qualified)
            if seconds is not None:
                return seconds
        for pattern, seconds in self.per_table:
            if re.search(pattern, qualified):
                return seconds
        return self.default_s


@dataclass
class Pending:
    """What one table has waiting in the changelog."""

    batches: dict[int, int] = field(default_factory=dict)
    """Ingest batch -> its rows for the table (a re-run batch is counted once)."""
    since_ms: int | None = None
    """Wall time the oldest pending rows were ingested."""
    produced: dict[int, int] = field(default_factory=dict)
    """Ingest batch -> the Kafka record time of its oldest row for the table (batches of a
    source without record times are not in it)."""
    urgent: str | None = None
    """Why it cannot wait (``ddl``, ``truncate``, ``restart``), else None."""
    summaries: dict[int, object] = field(default_factory=dict)
    """Ingest batch -> the plan job's summary of its rows for the table, for the batches
    this run ingested itself (not those a restart found pending): an apply combines them
    instead of reading and aggregating the rows again (:meth:`Schedule.summaries`)."""

    @property
    def rows(self) -> int:
        return sum(self.batches.values())

    @property
    def oldest_batch(self) -> int | None:
        return min(self.batches) if self.batches else None

    @property
    def oldest_ms(self) -> int | None:
        """When the oldest pending change entered the pipeline's source: its Kafka record
        time where the source has one, else when it was ingested (what staleness counts
        from: a change waiting in Kafka is as stale as one waiting in the changelog).

        >>> Pending({3: 10}, since_ms=5_000, produced={3: 1_000}).oldest_ms
        1000
        >>> Pending({3: 10}, since_ms=5_000).oldest_ms
        5000
        """
        known = [self.produced[b] for b in self.batches if b in self.produced]
        return min(known) if known else self.since_ms


def backlog_seconds(behind: float | None, catch_up_batches: float, batch_seconds: float) -> float:
    """What reading a short backlog takes (:attr:`Schedule.backlog_s`): ``behind`` batches
    at ``batch_seconds`` each, when the stream is behind but not more than
    ``catch_up_batches`` (then it is catching up); 0 when nothing is left to read after
    this batch, and when the rule is off.

    Less than a batch left counts: it is a backlog's last batch (a catch-up's remainder,
    or the few events Spark's Kafka source leaves when it shares ``maxOffsetsPerTrigger``
    among the partitions rounding down). The next batch reads it; the tables due now wait
    for it where applying them takes longer, and are applied once, not now and again
    a batch later.

    >>> backlog_seconds(1.5, 2, 10.0), backlog_seconds(0.5, 2, 10.0)
    (15.0, 5.0)
    >>> backlog_seconds(0.0, 2, 10.0), backlog_seconds(3.0, 2, 10.0)
    (0.0, 0.0)
    >>> backlog_seconds(1.5, 0, 10.0), backlog_seconds(None, 2, 1)
    (0.0, 0.0)
    """
    if not catch_up_batches or behind is None or not 0 < behind <= catch_up_batches:
        return 0.0
    return behind * batch_seconds


@dataclass
class Schedule:
    """Pending rows per table, and which tables are due (see the module docstring)."""

    policy: FreshnessPolicy
    pending: dict[TableIdent, Pending] = field(default_factory=dict)
    through: dict[TableIdent, int] = field(default_factory=dict)
    """The last ingest batch each table has been applied through (what the ledger says)."""
    lookahead_ms: int = 0
    """How long until the next decision (the last batch's ingest time): a table whose
    freshness would run out before then is due now."""
    catching_up: bool = False
    """The stream is reading a backlog (``catch_up_batches``): no table is due for its
    freshness, only for its size, DDL, TRUNCATE, ``freshness 0`` and the end of the run."""
    backlog_s: float = 0.0
    """Seconds the backlog left after this batch takes to read, when the stream is a batch
    or more behind but not ``catching_up`` (0: no such backlog): the tables due for their
    freshness wait for it when applying them would take longer (see :meth:`due`)."""
    apply_s: float = APPLY_ESTIMATE_S
    """What one table's apply costs (the last apply round's seconds per table)."""
    caught_up_ms: int | None = None
    """When the stream last came out of a long backlog (``catching_up``), if it did: the
    time a short backlog holds a table is counted from then, as freshness waited anyway."""
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    """Held around what a thread reads or changes here while another may: an apply beside
    ingest (``apply_beside_ingest``) marks tables applied while the next batch enters its
    own."""

    def behind(self, catching_up: bool, backlog_s: float, now_ms: int) -> None:
        """What the stream has left to read after a batch: a long backlog
        (:attr:`catching_up`) or a short one (:attr:`backlog_s`, 0 for none).

        >>> schedule = Schedule(FreshnessPolicy(default_s=60.0))
        >>> schedule.behind(True, 0.0, now_ms=1_000)
        >>> schedule.behind(False, 30.0, now_ms=200_000)
        >>> schedule.caught_up_ms, schedule.catching_up, schedule.backlog_s
        (200000, False, 30.0)
        """
        if self.catching_up and not catching_up:
            self.caught_up_ms = now_ms
        self.catching_up = catching_up
        self.backlog_s = backlog_s

    def ingested(
        self,
        ident: TableIdent,
        batch_id: int,
        rows: int,
        now_ms: int,
        urgent: str | None = None,
        produced_ms: int | None = None,
        summary: object | None = None,
    ) -> None:
        """Record that batch ``batch_id`` ingested ``rows`` changelog rows of ``ident``
        (``produced_ms``: the Kafka record time of the oldest, if the source has one;
        ``summary``: the plan job's summary of those rows, kept for the apply)."""
        if self.through.get(ident, -1) >= batch_id:
            return  # already applied through this batch (a re-run batch)
        state = self.pending.setdefault(ident, Pending())
        if batch_id not in state.batches:
            state.batches[batch_id] = rows
            if produced_ms is not None:
                state.produced[batch_id] = produced_ms
            if summary is not None:
                state.summaries[batch_id] = summary
        if state.since_ms is None:
            state.since_ms = now_ms
        if urgent and not state.urgent:
            state.urgent = urgent

    def due(self, now_ms: int, ending: bool = False) -> list[TableIdent]:
        """The tables to apply now, in a stable order.

        A short backlog (:attr:`backlog_s`) holds the tables due for their freshness when
        their applies (:attr:`apply_s` each) would take longer than reading it, each for
        at most a second freshness period:

        >>> schedule = Schedule(FreshnessPolicy(default_s=60.0), apply_s=1.5)
        >>> for n in range(20):
        ...     schedule.ingested(("db", None, f"t{n}"), batch_id=0, rows=5, now_ms=0)
        >>> schedule.backlog_s = 12.0  # 20 applies of 1.5 s: longer than the backlog
        >>> len(schedule.due(now_ms=70_000)), len(schedule.due(now_ms=125_000))
        (0, 20)
        >>> schedule.backlog_s = 40.0  # the backlog takes longer: apply now
        >>> len(schedule.due(now_ms=70_000))
        20
        """
        reasons = {ident: self.reason(ident, now_ms, ending) for ident in self.pending}
        if self.backlog_s > 0:
            held = [
                ident
                for ident, why in reasons.items()
                if why == "freshness" and not self._overdue(ident, now_ms)
            ]
            if len(held) * self.apply_s > self.backlog_s:
                for ident in held:
                    reasons[ident] = None
        return sorted(
            (ident for ident, why in reasons.items() if why),
            key=lambda ident: tuple(part or "" for part in ident),
        )

    def _overdue(self, ident: TableIdent, now_ms: int) -> bool:
        """The table has waited a second freshness period: a backlog holds it no longer.
        A long backlog's time does not count (:attr:`caught_up_ms`): freshness waited
        through it by design, and the short one that follows it is its last batches."""
        state = self.pending[ident]
        since = max(now_ms if state.since_ms is None else state.since_ms, self.caught_up_ms or 0)
        return now_ms - since >= 2 * self.policy.target_s(qualified_name(ident)) * 1000

    def reason(self, ident: TableIdent, now_ms: int, ending: bool = False) -> str | None:
        """Why ``ident`` is due now (``ending``, ``ddl``, ``size`` ...), or None."""
        state = self.pending.get(ident)
        if state is None or not state.batches:
            return None
        if ending:
            return "ending"
        if state.urgent:
            return state.urgent
        target_ms = self.policy.target_s(qualified_name(ident)) * 1000
        if target_ms <= 0:
            return "every batch"
        if state.rows >= self.policy.max_pending_rows:
            return "size"
        if self.catching_up:
            return None  # a backlog is being read: freshness waits until it is caught up
        waited = now_ms - (state.since_ms if state.since_ms is not None else now_ms)
        if waited + self.lookahead_ms >= target_ms:
            return "freshness"
        return None

    def applied(self, idents: Iterable[TableIdent], through: int) -> None:
        """``idents`` now hold every change ingested up to batch ``through``."""
        for ident in idents:
            self.through[ident] = max(self.through.get(ident, -1), through)
            state = self.pending.get(ident)
            if state is None:
                continue
            for batch in [b for b in state.batches if b <= through]:
                del state.batches[batch]
                state.produced.pop(batch, None)
                state.summaries.pop(batch, None)
            if not state.batches:
                del self.pending[ident]
            else:  # rows of later batches stay (not reached by this apply)
                state.urgent = None

    def summaries(self, ident: TableIdent, through: int) -> list[object] | None:
        """The kept summaries of every pending batch of ``ident`` up to ``through``, oldest
        first; None when a batch among them has none (a restart found it pending, or its
        ingest kept none): then only the rows themselves say what they hold.

        >>> schedule = Schedule(FreshnessPolicy(default_s=60.0))
        >>> t = ("shop", None, "orders")
        >>> schedule.ingested(t, batch_id=3, rows=2, now_ms=0, summary="s3")
        >>> schedule.ingested(t, batch_id=4, rows=1, now_ms=0, summary="s4")
        >>> schedule.summaries(t, through=4), schedule.summaries(t, through=3)
        (['s3', 's4'], ['s3'])
        >>> schedule.ingested(t, batch_id=5, rows=1, now_ms=0)  # no summary kept
        >>> schedule.summaries(t, through=5) is None
        True
        """
        state = self.pending.get(ident)
        if state is None:
            return []
        batches = sorted(b for b in state.batches if b <= through)
        if any(b not in state.summaries for b in batches):
            return None
        return [state.summaries[b] for b in batches]

    def staleness_s(self, ident: TableIdent, now_ms: int) -> float:
        """Seconds since the table's oldest pending change entered the source (its Kafka
        record time, else its ingest: :attr:`Pending.oldest_ms`); 0 when none waits."""
        state = self.pending.get(ident)
        oldest = state.oldest_ms if state is not None else None
        if oldest is None:
            return 0.0
        return max(0.0, (now_ms - oldest) / 1000)


__all__ = [
    "FreshnessPolicy",
    "Pending",
    "Schedule",
    "TableIdent",
    "parse_duration",
    "qualified_name",
]
