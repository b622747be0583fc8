"""Table upkeep through real Spark and Delta: auto compaction bounds the small files of an
insert-heavy table, VACUUM removes the files MERGEs left behind — and neither changes a row."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.spark.maintenance import AUTO_COMPACT, LAST_VACUUM_PROPERTY, table_properties
from tests.pipeline.helpers import encode_all, ev, rows, run, write_messages

pytestmark = pytest.mark.spark

MIN_FILES = "spark.databricks.delta.autoCompact.minNumFiles"


def _row(n: int, name: str = "a") -> dict[str, Any]:
    return {"id": n, "name": name, "qty": n, "price": Decimal("1.00")}


def _batches(src: Path, events_per_file: list[list[Any]]) -> None:
    for number, events in enumerate(events_per_file):
        path = write_messages(src, f"{number:03}.jsonl", encode_all("canonical-json", events))
        # read in this order (the file source orders by modification time): each batch's
        # keys above the last one's, as the insert-heavy table's premise says
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))


def _live_files(spark: Any, table: Path) -> int:
    return int(spark.sql(f"DESCRIBE DETAIL delta.`{table}`").first()["numFiles"])


def _files_on_disk(table: Path) -> int:
    return sum(1 for p in table.rglob("*.parquet") if "_delta_log" not in p.parts)


def _operations(spark: Any, table: Path) -> list[str]:
    return [r["operation"] for r in spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()]


def test_auto_compaction_bounds_the_files_of_an_insert_heavy_table(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    # five batches of new keys for two tables (applied on two threads: Delta's hook reads
    # its setting from the thread's active session): each adds files, none rewrites any
    tables = ("orders", "items")
    _batches(
        src,
        [
            [ev("insert", 10 * b + i, _row(10 * b + i), table=t) for t in tables for i in range(3)]
            for b in range(5)
        ],
    )
    spark.conf.set(MIN_FILES, "3")
    try:
        plain, compacted = tmp_path / "plain", tmp_path / "compacted"
        run(spark, src, plain, max_files_per_trigger=1, auto_compact=False, freshness=0)
        run(spark, src, compacted, max_files_per_trigger=1, freshness=0, max_concurrent_tables=2)
    finally:
        spark.conf.unset(MIN_FILES)
        spark.conf.unset(AUTO_COMPACT)
    for table in tables:
        assert rows(spark, compacted, table) == rows(spark, plain, table)
        assert len(rows(spark, plain, table)) == 15
        plain_files = _live_files(spark, plain / "shop" / table)
        compacted_files = _live_files(spark, compacted / "shop" / table)
        assert plain_files >= 5
        assert compacted_files < 3, table
        assert "OPTIMIZE" in _operations(spark, compacted / "shop" / table)
        assert "OPTIMIZE" not in _operations(spark, plain / "shop" / table)
    # the changelog: its first appends left as they are (one file each, fewer than
    # compaction needs), then compacted as any table once it has the files for it
    changelog = list(reversed(_operations(spark, compacted / "_anycdc" / "changelog")))
    assert changelog[:3] == ["WRITE", "WRITE", "WRITE"], changelog
    assert "OPTIMIZE" in changelog, changelog
    assert "OPTIMIZE" not in _operations(spark, plain / "_anycdc" / "changelog")


def test_an_ingest_append_is_compacted_only_when_the_table_has_the_files_for_it(
    spark: Any, tmp_path: Path
) -> None:
    """Delta compacts a table after its first commit in the JVM whatever its file count
    (the reference below); the changelog's appends hold that off until the table has as
    many files as compaction needs, then leave the decision to Delta."""
    from anycdc.spark.commit import DeltaTables, compaction_when_due

    frame = spark.range(400).repartition(4)  # four files a write
    held, reference = str(tmp_path / "held"), str(tmp_path / "reference")
    tables = DeltaTables(spark)
    spark.conf.set(AUTO_COMPACT, "true")
    spark.conf.set(MIN_FILES, "6")
    try:
        for _ in range(2):  # 0 files, then 4: fewer than 6 before each append
            with compaction_when_due(spark, held, tables):
                frame.write.format("delta").mode("append").save(held)
            assert spark.conf.get(AUTO_COMPACT) == "true"  # put back after the append
        assert _operations(spark, Path(held)) == ["WRITE", "WRITE"]
        # holds overlap on one session (an apply's dead letters on its threads), the first
        # to open closing first: off while any is open, put back by the last one
        first = compaction_when_due(spark, str(tmp_path / "a"), tables)
        second = compaction_when_due(spark, str(tmp_path / "b"), tables)
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert spark.conf.get(AUTO_COMPACT) == "false"
        second.__exit__(None, None, None)
        assert spark.conf.get(AUTO_COMPACT) == "true"
        assert _live_files(spark, Path(held)) == 8
        with compaction_when_due(spark, held, tables):  # 8 files: Delta decides, and does
            frame.write.format("delta").mode("append").save(held)
        frame.write.format("delta").save(reference)
    finally:
        spark.conf.unset(AUTO_COMPACT)
        spark.conf.unset(MIN_FILES)
    assert _operations(spark, Path(held))[0] == "OPTIMIZE"
    assert _live_files(spark, Path(held)) < 12
    assert _operations(spark, Path(reference)) == ["OPTIMIZE", "WRITE"]
    assert spark.read.format("delta").load(held).count() == 1200


def test_a_small_system_table_skips_the_compaction_delta_plans_after_its_first_commit(
    spark: Any, tmp_path: Path
) -> None:
    """One file, nothing to compact: Delta still plans a compaction after a table's first
    commit in the JVM (Spark jobs over the new version's files); under
    ``compaction_when_due`` (the ``_anycdc`` tables' appends) no such job runs."""
    from anycdc.spark.commit import compaction_when_due

    def jobs_of(path: Path, held: bool) -> int:
        group = f"anycdc-test-{path.name}"
        spark.sparkContext.setJobGroup(group, group)
        try:
            writer = spark.range(3).coalesce(1).write.format("delta").mode("append")
            if held:
                with compaction_when_due(spark, str(path)):
                    writer.save(str(path))
            else:
                writer.save(str(path))
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))

    spark.conf.set(AUTO_COMPACT, "true")
    try:
        planned = jobs_of(tmp_path / "planned", held=False)
        skipped = jobs_of(tmp_path / "skipped", held=True)
    finally:
        spark.conf.unset(AUTO_COMPACT)
    assert skipped < planned, (skipped, planned)
    for name in ("planned", "skipped"):
        assert _operations(spark, tmp_path / name) == ["WRITE"]


def test_a_system_append_compacts_the_small_files_and_leaves_a_big_one(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``_anycdc`` table's auto compaction folds only files below
    ``SYSTEM_SMALL_FILE_BYTES`` (here made small, with a big file of a long batch first):
    the small appends are compacted, the big file stays as written. Without the setting
    (Delta's default: half of 128 MB) the same appends rewrite the big file too."""
    from deltalake import DeltaTable

    from anycdc.spark import commit

    def first_file_after_small_appends(path: Path) -> tuple[bool, int]:
        big = spark.range(30000).selectExpr("id", "uuid() AS s").coalesce(1)
        commit.append_once(big, str(path), "t", 0)
        (first,) = DeltaTable(str(path)).file_uris()
        for version in range(1, 5):  # one file each: compaction is due at the fourth
            small = spark.range(version * 10, version * 10 + 3).selectExpr("id", "uuid() AS s")
            commit.append_once(small.coalesce(1), str(path), "t", version)
        assert _operations(spark, path)[0] == "OPTIMIZE"
        assert spark.read.format("delta").load(str(path)).count() == 30012
        return first in DeltaTable(str(path)).file_uris(), len(DeltaTable(str(path)).file_uris())

    spark.conf.set(AUTO_COMPACT, "true")
    spark.conf.set(MIN_FILES, "3")
    try:
        monkeypatch.setattr(commit, "SYSTEM_SMALL_FILE_BYTES", 100_000)
        kept = first_file_after_small_appends(tmp_path / "kept")
        assert kept == (True, 2), kept  # the big file and the small ones compacted
        with commit.small_files_compacted(spark):  # the setting is unset after the block
            assert spark.conf.get(commit.AUTO_COMPACT_SMALL_FILE) == "100000"
        assert spark.conf.get(commit.AUTO_COMPACT_SMALL_FILE, None) is None
        # a session's own setting is kept: here Delta's default, the reference
        spark.conf.set(commit.AUTO_COMPACT_SMALL_FILE, str(64 * 2**20))
        rewritten = first_file_after_small_appends(tmp_path / "rewritten")
        assert spark.conf.get(commit.AUTO_COMPACT_SMALL_FILE) == str(64 * 2**20)
    finally:
        for key in (AUTO_COMPACT, MIN_FILES, commit.AUTO_COMPACT_SMALL_FILE):
            spark.conf.unset(key)
    assert rewritten == (False, 1), rewritten


def test_vacuum_removes_the_files_merges_left_behind(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    # the same keys updated batch after batch: each MERGE rewrites the table's files
    _batches(
        src, [[ev("snapshot", 10 * b + i, _row(i, f"v{b}")) for i in range(4)] for b in range(5)]
    )
    kept, vacuumed = tmp_path / "kept", tmp_path / "vacuumed"
    run(spark, src, kept, max_files_per_trigger=1, vacuum_every_hours=0, freshness=0)
    # due again at once (3.6 microseconds), nothing kept for time travel
    run(
        spark,
        src,
        vacuumed,
        max_files_per_trigger=1,
        freshness=0,
        vacuum_every_hours=1e-9,
        vacuum_retain_hours=0,
    )
    table_kept, table_vacuumed = kept / "shop" / "orders", vacuumed / "shop" / "orders"
    assert rows(spark, vacuumed) == rows(spark, kept)
    assert [r["name"] for r in rows(spark, vacuumed)] == ["v4"] * 4
    # each batch vacuums before its MERGE: only the last MERGE's leftovers remain
    live = _live_files(spark, table_vacuumed)
    assert _files_on_disk(table_kept) > _files_on_disk(table_vacuumed)
    assert _files_on_disk(table_vacuumed) <= 2 * live
    assert _files_on_disk(table_kept) >= 5
    stamped = int(table_properties(spark, f"delta.`{table_vacuumed}`")[LAST_VACUUM_PROPERTY])
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table_vacuumed}`").collect()
    created_ms = min(r["timestamp"] for r in history).timestamp() * 1000
    assert stamped > created_ms  # stamped by a VACUUM after the table's creation
    kept_stamp = table_properties(spark, f"delta.`{table_kept}`")[LAST_VACUUM_PROPERTY]
    kept_history = spark.sql(f"DESCRIBE HISTORY delta.`{table_kept}`").collect()
    assert int(kept_stamp) <= min(r["timestamp"] for r in kept_history).timestamp() * 1000
