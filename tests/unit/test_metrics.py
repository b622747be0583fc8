"""``anycdc.metrics`` without Spark: the values move with the batches fed to it, the table
labels stop at ``max_tables``, and what it serves parses as the Prometheus text format."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from anycdc.metrics import OTHER, PipelineMetrics
from anycdc.schedule import FreshnessPolicy, Schedule


@dataclass
class Table:
    table: str
    events: int = 0
    dead_letters: int = 0
    max_ts_ms: int | None = None
    error: str | None = None
    seconds: float = 0.0


@dataclass
class Batch:
    batch_id: int = 0
    messages: int = 0
    events: int = 0
    dead_letters: int = 0
    bytes: int = 0
    seconds: float = 1.0
    phases: dict[str, float] = field(default_factory=dict)
    flush: bool = False
    deferred: int = 0
    tables: list[Table] = field(default_factory=list)


def samples(metrics: PipelineMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the text exposition: (name, sorted labels) -> value."""
    text = generate_latest(metrics.registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(metrics: PipelineMetrics, name: str, **labels: str) -> float | None:
    return samples(metrics).get((name, tuple(sorted(labels.items()))))


def test_a_batch_moves_the_run_and_table_values() -> None:
    m = PipelineMetrics()
    batch = Batch(
        messages=10, events=12, dead_letters=1, bytes=2048, seconds=3.0, deferred=2,
        phases={"decode": 0.5, "plan": 0.1, "log": 0.2, "apply": 2.0},
        tables=[
            Table("shop.orders", events=9, dead_letters=1, max_ts_ms=1_700_000_000_500, seconds=1.5),
            Table("shop.audit", dead_letters=3, error="incompatible schema change: id"),
        ],
    )  # fmt: skip
    m.observe_batch(batch, now=1_800_000_000.0)
    m.observe_batch(Batch(messages=5, events=5, bytes=100), now=1_800_000_001.0)
    assert value(m, "anycdc_messages_total") == 15
    assert value(m, "anycdc_events_total") == 17
    assert value(m, "anycdc_bytes_total") == 2148
    assert value(m, "anycdc_batches_total") == 2
    assert value(m, "anycdc_batch_phase_seconds_count", phase="decode") == 1
    assert value(m, "anycdc_batch_phase_seconds_sum", phase="apply") == 2.0
    assert value(m, "anycdc_batch_seconds_count") == 2
    assert value(m, "anycdc_tables_due") == 0  # the last batch applied none
    assert value(m, "anycdc_tables_waiting") == 0
    orders = {"table": "shop.orders"}
    assert value(m, "anycdc_table_applies_total", **orders) == 1
    assert value(m, "anycdc_table_events_applied_total", **orders) == 9
    assert value(m, "anycdc_table_apply_seconds_sum", **orders) == 1.5
    assert value(m, "anycdc_table_last_applied_timestamp_seconds", **orders) == 1_800_000_000.0
    assert value(m, "anycdc_table_last_source_timestamp_seconds", **orders) == 1_700_000_000.5
    # the failed table: its dead letters by reason, no apply
    assert value(m, "anycdc_table_applies_total", table="shop.audit") is None
    assert value(m, "anycdc_table_dead_letters_total", table="shop.audit", reason="schema") == 3
    assert value(m, "anycdc_table_dead_letters_total", table="shop.orders", reason="cast") == 1
    assert value(m, "anycdc_dead_letters_total", reason="decode") == 1
    assert value(m, "anycdc_dead_letters_total", reason="cast") == 1
    assert value(m, "anycdc_dead_letters_total", reason="schema") == 3
    assert value(m, "anycdc_dead_letters_total", reason="failed") == 0  # there from the start


def test_an_apply_outside_a_batch_counts_its_tables_not_messages() -> None:
    m = PipelineMetrics()
    m.observe_batch(Batch(flush=True, phases={"apply": 1.0}, tables=[Table("a.b", events=4)]))
    assert value(m, "anycdc_batches_total") == 0
    assert value(m, "anycdc_messages_total") == 0
    assert value(m, "anycdc_tables_due") == 1
    assert value(m, "anycdc_table_events_applied_total", table="a.b") == 4


def test_staleness_and_pending_rows_follow_the_schedule() -> None:
    m = PipelineMetrics()
    schedule = Schedule(FreshnessPolicy(default_s=3600))
    schedule.ingested(("shop", None, "orders"), batch_id=0, rows=5, now_ms=1_000)
    schedule.ingested(("shop", None, "orders"), batch_id=1, rows=2, now_ms=2_000)
    m.observe_schedule(schedule)
    orders = {"table": "shop.orders"}
    assert value(m, "anycdc_table_pending_rows", **orders) == 7
    assert value(m, "anycdc_table_freshness_target_seconds", **orders) == 3600
    stale = value(m, "anycdc_table_staleness_seconds", **orders)
    assert stale is not None and stale > 1_000_000  # since the oldest (1970 + 1 s)
    schedule.applied([("shop", None, "orders")], through=1)
    m.observe_schedule(schedule)
    assert value(m, "anycdc_table_pending_rows", **orders) == 0
    assert value(m, "anycdc_table_staleness_seconds", **orders) == 0
    # a table applied in the batch that ingested it never waited: 0 all the same
    m.observe_batch(Batch(tables=[Table("shop.audit", events=1)]))
    m.observe_schedule(schedule)
    assert value(m, "anycdc_table_pending_rows", table="shop.audit") == 0


def test_tables_past_the_cap_are_summed_under_other() -> None:
    m = PipelineMetrics(max_tables=2)
    names = [f"db.t{i}" for i in range(5)]
    m.observe_batch(
        Batch(tables=[Table(n, events=1, max_ts_ms=1000 * (i + 1)) for i, n in enumerate(names)])
    )
    schedule = Schedule(FreshnessPolicy(default_s=3600))
    for i, n in enumerate(names):
        schedule.ingested(("db", None, n.split(".")[1]), 0, rows=i + 1, now_ms=1_000 + i)
    m.observe_schedule(schedule)
    tables = {dict(labels).get("table") for (_, labels) in samples(m)} - {None}
    assert tables == {"db.t0", "db.t1", OTHER}
    assert value(m, "anycdc_table_events_applied_total", table=OTHER) == 3
    assert value(m, "anycdc_table_pending_rows", table=OTHER) == 3 + 4 + 5
    assert value(m, "anycdc_table_last_source_timestamp_seconds", table=OTHER) == 5.0
    assert m.label("db.t1") == "db.t1"  # a labelled table keeps its label


def test_kafka_lag_per_partition_from_the_last_progress() -> None:
    m = PipelineMetrics()
    progress: dict[str, Any] = {
        "sources": [
            {"endOffset": '{"orders": {"0": 40, "1": 7}}', "latestOffset": '{"orders": {"0": 100, "1": 7}}'},
            {"endOffset": "12", "latestOffset": None},  # a file source: no partitions
        ]
    }  # fmt: skip
    m.observe_progress(progress)
    assert value(m, "anycdc_kafka_lag_messages", topic="orders", partition="0") == 60
    assert value(m, "anycdc_kafka_lag_messages", topic="orders", partition="1") == 0
    m.observe_progress(None)  # no progress yet: nothing changes
    assert value(m, "anycdc_kafka_lag_messages", topic="orders", partition="0") == 60


def test_served_over_http_from_a_private_registry() -> None:
    from anycdc.devtools.kafka import free_port

    first, second = PipelineMetrics(), PipelineMetrics()
    first.set_alive(True)
    port = free_port()
    first.serve(port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            text = reply.read().decode()
    finally:
        first.stop()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["anycdc_query_alive"].samples[0].value == 1
    assert value(second, "anycdc_query_alive") == 0  # a second run's series are its own
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
