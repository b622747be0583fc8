"""Ingest every batch, apply each table when it is due (issue: many tables, fresh tables).

Through real Spark and Delta: a table deferred over many batches applies what they held in
source order; a TRUNCATE or DDL makes its table due at once while others wait; the same
stream gives the same tables with ``freshness 0`` (every batch) and with deferral, in
SCD1 and SCD2; a run stopped with rows pending leaves them for the next run, which applies
them once; ``status`` shows what is applied and what waits.

Runs are shared where tests read the same one: one deferred run of :func:`_history` (two
tests), one run of the simulated stream for both modes (four copies of it, one per mode and
freshness, told apart by their database and given their mode and freshness by ``tables:``).
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli.status import collect
from anycdc.config import PipelineConfig
from anycdc.spark.maintenance import LAST_VACUUM_PROPERTY, table_properties
from anycdc.verify import load_truth
from tests.pipeline.helpers import (
    encode_all,
    ev,
    rows,
    run,
    simulated_copies,
    system,
    write_messages,
)

pytestmark = pytest.mark.spark

HOUR = 3600  # a freshness no test run reaches: only the run's end (or urgency) applies
SESSION_SETTINGS = (
    "spark.databricks.delta.autoCompact.enabled",
    "spark.databricks.delta.merge.materializeSource",
    "spark.sql.mapKeyDedupPolicy",
)


def _reports(spark: Any, src: Path, out: Path, **config: Any) -> list[Any]:
    """Every micro-batch and every apply outside one, in order."""
    from anycdc.spark.pipeline import Pipeline

    cfg = PipelineConfig.from_mapping({"source_dir": str(src), "target": str(out), **config})
    pipeline = Pipeline(spark, cfg)
    pipeline.run()
    return pipeline.reports


def _canonical(events: list[Any]) -> list[bytes]:
    return encode_all("canonical-json", events)


def _row(i: int, name: str, qty: int = 1) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": qty, "price": Decimal(f"{qty}.00")}


def _history(src: Path) -> None:
    """Four files (one batch each) of one table: a delete, then a late older update of the
    deleted key, a key change, a partial update, inserts."""
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a")), ev("insert", 2, _row(2, "b")), ev("insert", 3, _row(3, "c")),
    ]))  # fmt: skip
    write_messages(src, "002.jsonl", _canonical([
        ev("delete", 10, _row(2, "b")),
        ev("update", 11, _row(1, "a2", 2)),
    ]))  # fmt: skip
    write_messages(src, "003.jsonl", _canonical([
        ev("update", 5, _row(2, "late-older", 9)),  # older than the delete: no resurrection
        ev("update", 12, _row(30, "c"), before=_row(3, "c")),  # the key changes
        ev("update", 13, {"id": 1, "qty": 7}, partial=("after",)),
    ]))  # fmt: skip
    write_messages(src, "004.jsonl", _canonical([ev("insert", 14, _row(4, "d"))]))
    _in_order(src)


def _in_order(src: Path) -> None:
    """The folder source takes files oldest first: make their times follow their names."""
    for second, path in enumerate(sorted(src.iterdir())):
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))


EXPECTED = [
    {"id": 1, "name": "a2", "qty": 7, "price": Decimal("2.00")},
    {"id": 30, "name": "c", "qty": 1, "price": Decimal("1.00")},
    {"id": 4, "name": "d", "qty": 1, "price": Decimal("1.00")},
]


@pytest.fixture(scope="module")
def deferred(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of :func:`_history`, a batch per file, deferred to the run's end: its target,
    its reports, and the session settings before and after it."""
    base = tmp_path_factory.mktemp("deferred")
    src, out = base / "in", base / "out"
    _history(src)
    before = {name: spark.conf.get(name, None) for name in SESSION_SETTINGS}
    history = _reports(spark, src, out, max_files_per_trigger=1, freshness=HOUR)
    after = {name: spark.conf.get(name, None) for name in SESSION_SETTINGS}
    return {"src": src, "out": out, "history": history, "before": before, "after": after}


def test_a_table_deferred_over_many_batches_applies_them_in_source_order(
    spark: Any, deferred: dict[str, Any]
) -> None:
    out, history = deferred["out"], deferred["history"]
    # the final apply ran on this session: it leaves its settings as it found them
    assert deferred["after"] == deferred["before"]
    batches = [m for m in history if not m.flush]
    assert len(batches) == 4
    assert all(not m.tables and m.deferred == 1 for m in batches), [m.line() for m in history]
    final = history[-1]
    assert final.flush and final.ending and [t.table for t in final.tables] == ["shop.orders"]
    assert final.tables[0].events == 10  # 9 row changes, the key change counted as two
    assert rows(spark, out) == sorted(EXPECTED, key=lambda r: [str(v) for v in r.values()])
    ledger = system(spark, out, "applied")
    assert {(r["source_table"], r["through"]) for r in ledger if r["source_table"]} == {
        ("orders", 3)
    }
    assert [r["through"] for r in ledger if r["source_table"] is None] == [3]  # watermark


def test_every_batch_and_deferred_give_the_same_table(
    spark: Any, tmp_path: Path, deferred: dict[str, Any]
) -> None:
    now, later = tmp_path / "now", deferred["out"]
    run(spark, deferred["src"], now, max_files_per_trigger=1, freshness=0)
    assert rows(spark, now) == rows(spark, later)
    keep = ["id", "name", "qty", "price", "_cdc_position", "_cdc_op"]

    def full(target: Path) -> list[Any]:
        frame = spark.read.format("delta").load(str(target / "shop" / "orders"))
        return sorted(tuple(r) for r in frame.select(*keep).collect())

    assert full(now) == full(later)


def test_truncate_and_ddl_make_their_table_due_at_once(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    other = {"table": "other"}
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a")), ev("insert", 2, _row(1, "x"), **other),
    ]))  # fmt: skip
    write_messages(src, "002.jsonl", _canonical([
        ev("truncate", 3, None), ev("insert", 4, _row(5, "after-truncate")),
        ev("insert", 5, _row(2, "y"), **other),
    ]))  # fmt: skip
    _in_order(src)
    history = _reports(spark, src, out, max_files_per_trigger=1, freshness=HOUR)
    first, second = history[0], history[1]
    assert not first.tables and first.deferred == 2
    # the TRUNCATE is ordered now: orders (both batches' rows) applied, other still waits
    assert [t.table for t in second.tables] == ["shop.orders"] and second.deferred == 1
    assert history[-1].ending and [t.table for t in history[-1].tables] == ["shop.other"]
    assert [r["name"] for r in rows(spark, out)] == ["after-truncate"]
    assert [r["name"] for r in rows(spark, out, "other")] == ["x", "y"]


def test_rows_left_pending_by_a_stopped_run_are_applied_once_by_the_next(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anycdc.spark import apply_round
    from anycdc.spark.pipeline import Pipeline

    # which applies read their pending rows again to plan them (the rest plan from what
    # ingest summarized of each batch: kept_summaries)
    summarized: list[int] = []

    def summarize(rows: Any) -> Any:
        summarized.append(1)
        return plan_summarize(rows)

    plan_summarize = apply_round.summarize
    monkeypatch.setattr(apply_round, "summarize", summarize)
    src, out = tmp_path / "in", tmp_path / "out"
    _history(src)
    config = PipelineConfig.from_mapping(
        {"source_dir": str(src), "target": str(out), "freshness": HOUR}
    )
    # the query alone, without the final apply: as a run killed after its last batch
    query = Pipeline(spark, config).start()
    query.awaitTermination()
    report = collect(spark, str(out))
    pending = {t["table"]: t for t in report["tables"]}["shop.orders"]
    assert pending["pending_rows"] == 9 and pending["applied_through_batch"] is None
    assert pending["rows"] == 0 and pending["freshness_target_s"] is None
    assert pending["staleness_s"] is not None and pending["staleness_s"] >= 0
    assert report["last_batch"] == 0

    pipeline = Pipeline(spark, config)
    assert pipeline.run() == []  # nothing new: no micro-batch, the pending rows are applied
    assert summarized == [1]  # found pending by a restart: only the rows say what they hold
    assert [m.ending for m in pipeline.applies] == [True]
    assert rows(spark, out) == sorted(EXPECTED, key=lambda r: [str(v) for v in r.values()])
    after = {t["table"]: t for t in collect(spark, str(out))["tables"]}["shop.orders"]
    assert after["pending_rows"] == 0 and after["applied_through_batch"] == 0
    assert after["rows"] == 3 and after["freshness_target_s"] == HOUR
    assert after["full_row_identity"] is False  # shop.orders has its key

    # a third run with one more file applies only that file's rows
    write_messages(src, "005.jsonl", _canonical([ev("delete", 20, _row(4, "d"))]))
    _in_order(src)
    pipeline = Pipeline(spark, config)
    pipeline.run()
    assert [(m.flush, sum(t.events for t in m.tables)) for m in pipeline.reports] == [
        (False, 0),
        (True, 1),
    ]
    # the final apply of the run's only batch planned from that batch's kept summary
    assert summarized == [1]
    assert [r["id"] for r in rows(spark, out)] == [1, 30]
    # the third run's first batch stamped the run's young system tables instead of a VACUUM
    changelog = f"delta.`{out / '_anycdc' / 'changelog'}`"
    assert LAST_VACUUM_PROPERTY in table_properties(spark, changelog)
    operations = {r["operation"] for r in spark.sql(f"DESCRIBE HISTORY {changelog}").collect()}
    assert "VACUUM START" not in operations and "SET TBLPROPERTIES" in operations


SIMULATED = {
    (mode, name): f"{mode}_{name}" for mode in ("scd1", "scd2") for name in ("now", "later")
}
"""The database of each copy of the simulated stream: per mode, applied every batch (now)
or deferred (later)."""


@pytest.fixture(scope="module")
def simulated(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The rich profile (DDL, TRUNCATE, a keyless table, key changes, hot keys) over four
    partition files, simulated once per copy (:data:`SIMULATED`: the same seed, so the same
    stream under another database name) and each file holding the copies' files of its
    partition: one run, a batch per file, applies each copy in its mode and at its
    freshness (``0`` or deferred to the run's end, by ``tables:``)."""
    base = tmp_path_factory.mktemp("simulated")
    messages = simulated_copies(base, SIMULATED.values())
    assert len(list(messages.iterdir())) == 4
    tables = {
        f"{database}.*": {"mode": mode, "freshness": 0 if name == "now" else HOUR}
        for (mode, name), database in SIMULATED.items()
    }
    history = run(
        spark, messages, base / "out", max_files_per_trigger=1, freshness=HOUR, tables=tables
    )
    return {"base": base, "history": history}


@pytest.mark.parametrize("mode", ["scd1", "scd2"])
def test_a_simulated_source_gives_the_same_tables_deferred_or_not(
    spark: Any, simulated: dict[str, Any], mode: str
) -> None:
    """Every table of the simulated stream (:func:`simulated`) equal with freshness 0 and
    deferred, and (SCD1) to the ground truth."""
    from anycdc.cli.verify import verify

    now, later = SIMULATED[(mode, "now")], SIMULATED[(mode, "later")]
    base = simulated["base"]
    target = base / "out"
    truth = load_truth(str(base / later / "truth"))[0]
    assert {t.table for t in truth} == {"all_types", "order_lines", "audit_log"}
    # the copies' own settings took: the deferred copy waited where the other was applied
    applied = [t.table.split(".")[0] for m in simulated["history"] for t in m.tables]
    assert applied.count(later) < applied.count(now)

    def content(database: str, name: str) -> list[Any]:
        frame = spark.read.format("delta").load(str(target / database / name))
        assert ("_cdc_is_current" in frame.columns) == (mode == "scd2")  # the copy's mode
        cols = sorted(c for c in frame.columns if c not in ("_cdc_batch", "_cdc_ts"))
        return sorted(tuple(str(v) for v in r) for r in frame.select(*cols).collect())

    for table in truth:
        assert table.database == later
        assert content(now, table.table) == content(later, table.table), table.qualified
    if mode == "scd1":
        assert verify(spark, str(target), str(base / later / "truth"))["ok"]


def test_the_summaries_ingest_kept_plan_what_the_rows_would(
    spark: Any, simulated: dict[str, Any]
) -> None:
    """Differential: per table, the plan job's summaries of each batch (what ingest keeps
    for the apply), combined, give the plan the job gives for all the batches' rows at
    once (what a deferred apply used to compute again), on the simulated stream's changelog
    (DDL, TRUNCATE, a keyless table, key changes)."""
    from pyspark.sql import functions as F

    from anycdc.spark.ledger import INGEST_BATCH
    from anycdc.spark.plan import TableSummary, build_plans, summarize

    target = simulated["base"] / "out"
    log = spark.read.format("delta").load(str(target / "_anycdc" / "changelog"))
    batches = sorted(r[0] for r in log.select(INGEST_BATCH).distinct().collect())
    assert len(batches) == 4
    per_batch = [summarize(log.filter(F.col(INGEST_BATCH) == batch)) for batch in batches]
    whole = {summary.ident: summary for summary in summarize(log)}
    config = PipelineConfig(target=str(target))

    def normalized(summary: TableSummary) -> tuple[Any, ...]:
        return (
            summary.rows, sorted(summary.sightings), sorted(summary.ddl),
            sorted(summary.image_columns), summary.key, summary.has_row_id,
            summary.truncate_position, summary.has_rows, summary.produced_ms,
        )  # fmt: skip

    assert len(whole) == 3 * len(SIMULATED)
    spread = 0
    for ident, reference in whole.items():
        parts = [s for summaries in per_batch for s in summaries if s.ident == ident]
        spread += len(parts) > 1
        combined = TableSummary.combine(parts)
        assert normalized(combined) == normalized(reference), ident
        assert build_plans([combined], config) == build_plans([reference], config), ident
    assert spread >= 2 * len(SIMULATED)  # two tables of each copy came in several batches
    assert any(s.ddl for s in whole.values()) and any(s.truncate_position for s in whole.values())
    # the ledger's rows of an apply are one file: nothing for Delta to compact after the
    # ledger's first commit (the run's first apply, of several tables)
    ledger = target / "_anycdc" / "applied"
    history = spark.sql(f"DESCRIBE HISTORY delta.`{ledger}`").collect()
    assert {r["operation"] for r in history} == {"WRITE"}, [r["operation"] for r in history]
    assert all(int(r["operationMetrics"]["numFiles"]) == 1 for r in history)


@pytest.mark.kafka
def test_a_backlog_defers_freshness_until_the_stream_catches_up(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path
) -> None:
    """Nine messages on one partition read two per batch, a freshness every batch reaches:
    with ``catch_up_batches 1`` a batch with more than one batch of messages still waiting
    after it applies nothing (its rows wait in the changelog); with half a batch left (the
    last message) the table waits for the batch that reads it, which applies it (the
    short-backlog rule: one apply then, not one now and another a batch later). Off (0),
    every batch applies it. Both runs end with the same table."""
    from confluent_kafka import Producer

    from anycdc.spark.pipeline import Pipeline

    src = tmp_path / "in"
    _history(src)
    topic = kafka_topic(partitions=1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for path in sorted(src.iterdir()):
        for line in path.read_bytes().splitlines():
            producer.produce(topic, value=line)
    assert producer.flush(60) == 0
    tables, applied = {}, {}
    for catch_up in (1, 0):
        out = tmp_path / f"out-{catch_up}"
        config = PipelineConfig.from_mapping({
            "kafka_bootstrap": kafka_bootstrap, "topics": [topic], "target": str(out),
            "max_offsets_per_trigger": 2, "freshness": 0.001, "catch_up_batches": catch_up,
        })  # fmt: skip
        pipeline = Pipeline(spark, config)
        pipeline.run()
        batches = pipeline.history
        applied[catch_up] = [bool(m.tables) for m in batches]
        tables[catch_up] = rows(spark, out)
        if catch_up:
            # after batch 1, 7 of the 9 offsets were behind (3.5 batches, 2.5 after it)
            assert batches[1].behind == 2.5 and batches[1].deferred == 1, [
                m.line() for m in batches
            ]
            assert "batches of backlog" in batches[1].line()
    # batch 0's rows are milliseconds old when it decides: whether 1 ms has passed is a race
    assert applied[0][1:] == [True] * 4
    assert applied[1][1:] == [False, False, False, True]
    assert tables[0] == tables[1] == sorted(EXPECTED, key=lambda r: [str(v) for v in r.values()])
