"""When a table is due (:mod:`anycdc.schedule`): pure, no Spark."""

from __future__ import annotations

from anycdc.schedule import FreshnessPolicy, Schedule, backlog_seconds
from anycdc.spark.batch_metrics import batches_behind

ORDERS = ("shop", None, "orders")
ARCHIVE = ("archive", None, "log")


def _schedule(**policy: object) -> Schedule:
    return Schedule(FreshnessPolicy(**policy))  # type: ignore[arg-type]


def test_a_table_is_due_once_its_oldest_change_reaches_its_target() -> None:
    schedule = _schedule(default_s=60)
    schedule.ingested(ORDERS, 0, rows=3, now_ms=0)
    schedule.ingested(ORDERS, 1, rows=2, now_ms=30_000)
    assert schedule.due(now_ms=59_999) == []
    assert schedule.due(now_ms=60_000) == [ORDERS]  # from the oldest batch's arrival
    assert schedule.pending[ORDERS].rows == 5


def test_the_next_cycle_is_looked_ahead() -> None:
    schedule = _schedule(default_s=60)
    schedule.ingested(ORDERS, 0, rows=1, now_ms=0)
    schedule.lookahead_ms = 15_000  # a batch takes 15 s: at 50 s the next ends past 60 s
    assert schedule.reason(ORDERS, now_ms=44_000) is None
    assert schedule.reason(ORDERS, now_ms=45_000) == "freshness"


def test_per_table_targets_first_match_wins_and_zero_means_every_batch() -> None:
    policy = FreshnessPolicy(60, (("^archive\\.", 900.0), ("^shop\\.orders$", 0.0)))
    schedule = Schedule(policy)
    schedule.ingested(ORDERS, 0, rows=1, now_ms=0)
    schedule.ingested(ARCHIVE, 0, rows=1, now_ms=0)
    assert schedule.reason(ORDERS, now_ms=0) == "every batch"
    assert schedule.reason(ARCHIVE, now_ms=899_999) is None
    assert schedule.reason(ARCHIVE, now_ms=900_000) == "freshness"


def test_size_urgency_and_the_end_of_a_run() -> None:
    schedule = _schedule(default_s=3600, max_pending_rows=10)
    schedule.ingested(ORDERS, 0, rows=9, now_ms=0)
    schedule.ingested(ARCHIVE, 0, rows=1, now_ms=0, urgent="truncate")
    assert schedule.due(now_ms=1) == [ARCHIVE]
    schedule.ingested(ORDERS, 1, rows=1, now_ms=1)
    assert schedule.reason(ORDERS, now_ms=1) == "size"
    assert schedule.reason(ORDERS, now_ms=1, ending=True) == "ending"


def test_applied_through_clears_pending_and_ignores_a_rerun_batch() -> None:
    schedule = _schedule(default_s=60)
    schedule.ingested(ORDERS, 4, rows=2, now_ms=0, urgent="ddl")
    schedule.applied([ORDERS], through=4)
    assert ORDERS not in schedule.pending and schedule.through[ORDERS] == 4
    schedule.ingested(ORDERS, 4, rows=2, now_ms=0)  # batch 4 run again after a crash
    assert schedule.pending == {}
    schedule.ingested(ORDERS, 5, rows=1, now_ms=0)
    schedule.ingested(ORDERS, 5, rows=1, now_ms=0)  # counted once
    assert schedule.pending[ORDERS].rows == 1 and schedule.pending[ORDERS].oldest_batch == 5
    assert schedule.staleness_s(ORDERS, now_ms=2_500) == 2.5


def test_a_short_backlog_holds_applies_that_take_longer_than_reading_it() -> None:
    # the 200-table bench: every table's 60 s passed one batch before the stream caught up,
    # so each was written then and rewritten by the final apply moments later
    policy = FreshnessPolicy(60, (("^shop\\.orders$", 0.0),))
    schedule = Schedule(policy, apply_s=2.0)
    tables = [("db", None, f"t{n:02d}") for n in range(10)]
    for ident in tables:
        schedule.ingested(ident, 0, rows=5, now_ms=0)
    schedule.ingested(ORDERS, 0, rows=5, now_ms=0)  # freshness 0: every batch
    schedule.ingested(ARCHIVE, 0, rows=5, now_ms=0, urgent="ddl")
    assert len(schedule.due(now_ms=61_000)) == 12  # no backlog: all due

    schedule.backlog_s = 15.0  # 10 applies of 2 s take longer than the backlog: held
    assert schedule.due(now_ms=61_000) == [ARCHIVE, ORDERS]  # DDL and every batch are not
    schedule.backlog_s = 25.0  # reading the backlog takes longer: apply now
    assert len(schedule.due(now_ms=61_000)) == 12

    schedule.backlog_s = 15.0
    late = ("db", None, "late")
    schedule.ingested(late, 1, rows=1, now_ms=60_000)
    # held a second freshness period, the ten go; "late" (60 s) goes with them, as one
    # more apply (2 s) is shorter than the backlog
    assert schedule.due(now_ms=120_000) == [ARCHIVE, late, *tables, ORDERS]
    schedule.applied([*tables, ARCHIVE, ORDERS], through=0)
    assert schedule.due(now_ms=120_000) == [late]
    # the end of a run applies everything
    schedule.ingested(ORDERS, 2, rows=1, now_ms=120_000)
    schedule.apply_s = 20.0  # one apply now outlasts the backlog: held, but not at the end
    assert schedule.due(now_ms=120_000) == [ORDERS]
    assert schedule.due(now_ms=120_000, ending=True) == [late, ORDERS]


def test_a_short_backlog_after_a_long_one_holds_from_the_end_of_the_long_one() -> None:
    # the 1M-event catch-up: 3 batches behind (freshness waits), then 2 and 1; by then every
    # table had waited twice its 60 s, so the short backlog let all 50 through one batch
    # before the end, to be rewritten by the final apply
    schedule = Schedule(FreshnessPolicy(60), apply_s=2.0)
    tables = [("db", None, f"t{n:02d}") for n in range(10)]
    for ident in tables:
        schedule.ingested(ident, 0, rows=5, now_ms=0)
    schedule.behind(catching_up=True, backlog_s=0.0, now_ms=100_000)
    assert schedule.due(now_ms=100_000) == []  # a long backlog: freshness waits
    schedule.behind(catching_up=False, backlog_s=15.0, now_ms=140_000)
    assert schedule.due(now_ms=140_000) == []  # 140 s since the rows came, 0 s of short backlog
    assert schedule.due(now_ms=199_000) == []
    assert schedule.due(now_ms=260_000) == tables  # held a second freshness period: no longer
    schedule.behind(catching_up=False, backlog_s=0.0, now_ms=150_000)
    assert schedule.due(now_ms=150_000) == tables  # caught up: due at once


def test_a_catch_ups_last_few_events_hold_the_round_for_the_batch_that_reads_them() -> None:
    # the 1M-event catch-up in 200,000-event batches: Spark's Kafka source rounds each
    # partition's share down, so the fifth batch left 14 events for a sixth. The fifth applied
    # the 50 tables and the sixth's 14 events made a second round of 11 tables moments later.
    progress = {
        "sources": [
            {
                "endOffset": {"bench": {"0": 399_998, "1": 399_998}},
                "metrics": {"avgOffsetsBehindLatest": "100007.0"},  # 200,014 left after it
            }
        ]
    }
    behind = batches_behind(progress, 200_000, messages=199_998)
    assert behind is not None and 0 < behind < 1  # this batch leaves 14 events
    schedule = Schedule(FreshnessPolicy(60), apply_s=1.0)
    tables = [("db", None, f"t{n:02d}") for n in range(50)]
    for ident in tables:
        schedule.ingested(ident, 0, rows=5, now_ms=0)
    schedule.behind(catching_up=False, backlog_s=backlog_seconds(behind, 2, 12.0), now_ms=61_000)
    assert schedule.due(now_ms=61_000) == []  # the next batch reads the rest: the round waits
    # the next batch read the 14: nothing is left behind it, so the 50 are applied once
    last = batches_behind({"sources": [{"endOffset": {"bench": {"0": 1, "1": 1}},
                                        "metrics": {"avgOffsetsBehindLatest": "7.0"}}]},
                          200_000, messages=14)  # fmt: skip
    schedule.behind(catching_up=False, backlog_s=backlog_seconds(last, 2, 2.8), now_ms=64_000)
    assert last == 0.0 and schedule.due(now_ms=64_000) == tables
