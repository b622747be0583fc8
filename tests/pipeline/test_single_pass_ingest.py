"""The single-pass ingest (one job decodes and appends, the decode tasks count) against the
cached one (the reference: Spark aggregates over a cached copy), on the same stream.

Through real Spark and Delta: one simulated stream (DDL, TRUNCATE, a keyless table, key
changes, dead letters) run through both engines, a batch per file, some tables applied in
every batch (read back from the changelog by the single pass) and the others at the end:
the same batch counts, changelog, dead letters and tables (read with delta-rs); the tasks'
tallies give the plan job's summaries and the cached engine's counts; a batch the changelog
already holds (a replay after a crash) is ingested again without a second copy.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from tests.pipeline.helpers import system

pytestmark = pytest.mark.spark

HOUR = 3600
ENGINES = ("cached", "single-pass")
PENDING_CAP = 38
"""A table with this many pending changes is due: ``all_types`` is applied in the second
batch with rows of the first (42 changes), ``order_lines`` (37 since its apply in the first
batch) waits."""
BAD_LINES = (b"not json at all", b'{"type": "INSERT", "data": 7}', b"[1, 2")
"""Messages no format reads: dead letters in the batch of their file."""


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rich simulated profile over three partition files, bad messages in the second."""
    base = tmp_path_factory.mktemp("single_pass")
    assert cli([
        "simulate", "--format", "canal-json", "--rows", "4", "--events", "150", "--seed", "5",
        "--partitions", "3", "--database", "sp", "--out", str(base / "sim"),
    ]) == 0  # fmt: skip
    files = sorted((base / "sim" / "messages").iterdir())
    assert len(files) == 3
    with files[1].open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in BAD_LINES))
    return base


@pytest.fixture(scope="module")
def runs(spark: Any, stream: Path) -> dict[str, Any]:
    """The stream through each engine: a table applied in a batch by its DDL or TRUNCATE,
    one by its size cap with rows of the batch before, the rest deferred to the end."""
    from anycdc.spark.pipeline import Pipeline

    reports = {}
    for engine in ENGINES:
        config = PipelineConfig.from_mapping({
            "source_dir": str(stream / "sim" / "messages"), "target": str(stream / engine),
            "max_files_per_trigger": 1, "freshness": HOUR, "ingest_engine": engine,
            "max_pending_rows": PENDING_CAP,
        })  # fmt: skip
        pipeline = Pipeline(spark, config)
        pipeline.run()
        reports[engine] = pipeline
    return reports


def _batch_counts(pipeline: Any) -> list[tuple[Any, ...]]:
    return [
        (
            m.batch_id,
            m.messages,
            m.events,
            m.dead_letters,
            m.bytes,
            sorted(m.skipped.items()),
            m.heartbeat_ts_ms,
            m.source_ts_ms,
            sorted(m.excluded.items()),
            sorted((t.table, t.events, t.max_position) for t in m.tables),
        )
        for m in pipeline.history
    ]


def _sorted_rows(spark: Any, path: Path, drop: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    frame = spark.read.format("delta").load(str(path))
    cols = sorted(c for c in frame.columns if c not in drop)
    return sorted(tuple(str(v) for v in r) for r in frame.select(*cols).collect())


def test_both_engines_count_log_and_apply_the_same(spark: Any, runs: dict[str, Any]) -> None:
    """Per batch the same counts; the same changelog and dead letters; the same tables."""
    from deltalake import DeltaTable

    cached, single = (runs[engine] for engine in ENGINES)
    counts = _batch_counts(cached)
    assert counts == _batch_counts(single)
    assert len(counts) == 3 and sum(c[3] for c in counts) == len(BAD_LINES)
    # the first batch applied tables of its own rows (single pass: read back from the
    # changelog), so the next was cached for an apply it was likely to have; that one
    # applied a table of rows from the batch before (a deferred table's case), which says
    # nothing of the batch after it: single pass again
    engines = single._ingest.engines
    own = [(m.batch_id, bool(m.tables), m.own_rows_applied) for m in single.history]
    assert own[:2] == [(0, True, True), (1, True, False)]
    assert [engines[m.batch_id] for m in single.history] == ["single-pass", "cached", "single-pass"]
    assert set(cached._ingest.engines.values()) == {"cached"}
    targets = [Path(p.config.target) for p in (cached, single)]
    assert _sorted_rows(spark, targets[0] / "_anycdc" / "changelog") == _sorted_rows(
        spark, targets[1] / "_anycdc" / "changelog"
    )
    dead = [
        sorted((r["source"], r["offset"], r["error"], r["raw"]) for r in system(spark, t, "dead_letter"))
        for t in targets
    ]  # fmt: skip
    assert dead[0] == dead[1] and len(dead[0]) == len(BAD_LINES)
    tables = sorted(p.name for p in (targets[0] / "sp").iterdir())
    assert {"all_types", "order_lines", "audit_log"} <= set(tables)
    for name in tables:
        one, other = (DeltaTable(str(t / "sp" / name)).to_pyarrow_table() for t in targets)
        columns = sorted(c for c in one.column_names if c not in ("_cdc_batch", "_cdc_ts"))
        assert sorted(one.select(columns).to_pylist(), key=str) == sorted(
            other.select(columns).to_pylist(), key=str
        ), name


def test_the_decode_tasks_tally_what_the_reference_aggregates_say(
    spark: Any, stream: Path, runs: dict[str, Any]
) -> None:
    """Differential: the stream's messages decoded with tallies (a task per file) give the
    plan job's summaries (:func:`~anycdc.spark.plan.summarize`) of the cached run's whole
    changelog and the counts that run recorded."""
    from pyspark.sql import functions as F

    from anycdc.spark.decode import decode_frame
    from anycdc.spark.merge_sql import NAMES_A_TABLE
    from anycdc.spark.plan import TableSummary, summarize
    from anycdc.spark.tally import TALLY_OP, BatchTally

    cached = runs["cached"]
    files = sorted((stream / "sim" / "messages").iterdir())
    raw = spark.createDataFrame(
        [
            (str(path), 0, number, None, line, None)
            for path in files
            for number, line in enumerate(path.read_bytes().splitlines(), start=1)
            if line.strip()
        ],
        "source STRING, partition INT, offset BIGINT, key BINARY, value BINARY, produced_ms BIGINT",
    ).repartition(len(files), "source")
    decoded = decode_frame(raw, cached.config.routing, tally=True)
    tallies = decoded.filter(F.col("op") == TALLY_OP).select("raw").collect()
    assert len(tallies) >= len(files)  # one per task
    tally = BatchTally.merge(BatchTally.from_json(r["raw"]) for r in tallies)

    def normalized(summary: TableSummary) -> tuple[Any, ...]:
        return (
            summary.ident, summary.rows, sorted(summary.sightings), sorted(summary.ddl),
            sorted(summary.image_columns), summary.key, summary.has_row_id,
            summary.truncate_position, summary.has_rows, summary.produced_ms,
        )  # fmt: skip

    target = Path(cached.config.target)
    log = spark.read.format("delta").load(str(target / "_anycdc" / "changelog"))
    reference = summarize(log.filter(F.expr(NAMES_A_TABLE)))
    assert sorted(normalized(s) for s in tally.summaries()) == sorted(
        normalized(s) for s in reference
    )
    assert any(s.ddl for s in reference) and any(s.truncate_position for s in reference)
    history = cached.history
    assert tally.rows - tally.errors == sum(m.events for m in history)
    assert tally.errors == sum(m.dead_letters for m in history) == len(BAD_LINES)
    assert tally.messages == sum(m.messages for m in history)
    assert tally.bytes == sum(m.bytes for m in history)
    assert tally.source_ts_ms == max(m.source_ts_ms for m in history if m.source_ts_ms)
    assert len(tally.bad) == len(BAD_LINES)


def test_a_batch_the_changelog_holds_is_not_logged_again(spark: Any, runs: dict[str, Any]) -> None:
    """A replay of a batch after a crash (its append committed, the checkpoint not): Delta
    skips the append, so no write job would count it; the engine sees the batch is there
    and ingests it by the reference path instead of waiting for counts that never come."""
    from pyspark.sql import functions as F

    from anycdc.spark.ledger import INGEST_BATCH
    from anycdc.spark.pipeline import Pipeline

    single = runs["single-pass"]
    target = Path(single.config.target)
    changelog = target / "_anycdc" / "changelog"
    before = _sorted_rows(spark, changelog)
    table = _sorted_rows(spark, target / "sp" / "audit_log", drop=("_cdc_batch", "_cdc_ts"))
    log = spark.read.format("delta").load(str(changelog))
    raw = log.filter((F.col(INGEST_BATCH) == 0) & (F.col("event_index") == 0)).select(
        "source", "partition", "offset", F.col("kafka_key").alias("key"),
        F.col("raw").alias("value"), "produced_ms",
    )  # fmt: skip
    replay = Pipeline(spark, single.config)
    done = threading.Event()

    def replayed() -> None:
        replay.process_batch(raw, 0)
        done.set()

    worker = threading.Thread(target=replayed, daemon=True)
    worker.start()
    worker.join(600)  # a hang guard, not a timing check: a wait for counts never ends
    assert done.is_set(), "the replayed batch never finished"
    assert _sorted_rows(spark, changelog) == before
    assert replay.history[0].events > 0  # counted from the cached copy
    assert _sorted_rows(spark, target / "sp" / "audit_log", drop=("_cdc_batch", "_cdc_ts")) == table


def test_the_system_tables_are_created_with_their_properties(runs: dict[str, Any]) -> None:
    """The changelog anycdc creates keeps file statistics of its filter columns only (a
    read of the pending rows still skips files by ``ingest_batch``), and the batch records
    and the changelog are checkpointed every 100 commits (read with delta-rs)."""
    import pyarrow as pa
    from deltalake import DeltaTable

    from anycdc.spark.system_tables import (
        CHANGELOG_STATS_COLUMNS,
        CHECKPOINT_INTERVAL_PROPERTY,
        STATS_COLUMNS_PROPERTY,
        SYSTEM_CHECKPOINT_INTERVAL,
    )

    system_dir = Path(runs["single-pass"].config.target) / "_anycdc"
    batches = DeltaTable(str(system_dir / "batches")).metadata().configuration
    assert batches[CHECKPOINT_INTERVAL_PROPERTY] == str(SYSTEM_CHECKPOINT_INTERVAL)
    changelog = DeltaTable(str(system_dir / "changelog"))
    properties = changelog.metadata().configuration
    assert properties[STATS_COLUMNS_PROPERTY] == ",".join(CHANGELOG_STATS_COLUMNS)
    assert properties[CHECKPOINT_INTERVAL_PROPERTY] == str(SYSTEM_CHECKPOINT_INTERVAL)
    files = pa.table(changelog.get_add_actions(flatten=True)).to_pylist()
    assert len(files) >= 3  # a file per batch at least
    for added in files:
        assert added["min.ingest_batch"] is not None and added["max.table"] is not None
        assert "min.position" not in added and "max.row_id" not in added
    logged = {(f["min.ingest_batch"], f["max.ingest_batch"]) for f in files}
    assert {(b, b) for b in range(3)} <= logged  # each batch's files: one batch each
