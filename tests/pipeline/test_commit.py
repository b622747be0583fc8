"""The batched engine's commits through Delta's own transaction (:mod:`anycdc.spark.commit`),
through real Spark and Delta: the state it follows, the idempotent-write id, another writer
before and during a commit, and tables any reader reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.spark.commit import DeltaTables, LogState

pytestmark = pytest.mark.spark

APP = "test:apply"


def _table(spark: Any, path: Path, ids: range) -> None:
    spark.range(ids.start, ids.stop).selectExpr("id", "CAST(id AS STRING) AS v").coalesce(
        1
    ).write.format("delta").save(str(path))


def _ids(spark: Any, path: Path) -> list[tuple[int, str]]:
    rows = spark.read.format("delta").load(str(path)).collect()
    return sorted((int(r["id"]), str(r["v"])) for r in rows)


def _replace_all(spark: Any, tables: DeltaTables, value: str) -> Any:
    """A build that rewrites every live file with ``v`` set to ``value``."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    def build(snapshot: Any, state: LogState) -> tuple[Any, list[str]]:
        paths = list(state.files)
        rows = DataFrame(tables.files_frame(snapshot, state, paths), spark)
        return rows.withColumn("v", F.lit(value)).coalesce(1), paths

    return build


def test_a_commit_rewrites_files_once_per_write_id_and_follows_the_log(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    _table(spark, path, range(5))
    tables = DeltaTables(spark)
    state = tables.commit(str(path), None, _replace_all(spark, tables, "a"), APP, 1)
    assert _ids(spark, path) == [(i, "a") for i in range(5)]
    assert state.applied(APP, 1) and len(state.files) == 1
    # the same write id again (a replay): nothing is written
    again = tables.commit(str(path), state, _replace_all(spark, tables, "b"), APP, 1)
    assert again.version == state.version and _ids(spark, path) == [(i, "a") for i in range(5)]
    # another writer's commits (an append, an OPTIMIZE) are followed from the log's JSON
    spark.range(5, 7).selectExpr("id", "'x' AS v").write.format("delta").mode("append").save(
        str(path)
    )
    spark.sql(f"OPTIMIZE delta.`{path}`")
    _, followed = tables.state(str(path), state)
    _, whole = tables.state(str(path), None)
    assert followed.version == whole.version == state.version + 2
    assert set(followed.files) == set(whole.files) and followed.txns == whole.txns
    state = tables.commit(str(path), followed, _replace_all(spark, tables, "c"), APP, 2)
    assert _ids(spark, path) == [(i, "c") for i in range(7)]
    # Delta's own readers agree: Spark above, delta-rs here (files, statistics, txn)
    from deltalake import DeltaTable

    table = DeltaTable(str(path))
    assert table.version() == state.version
    assert table.transaction_version(APP) == 2
    assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == list(range(7))
    import pyarrow as pa

    adds = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    assert adds["num_records"] == [7] and adds["min.id"] == [0] and adds["max.id"] == [6]


def test_another_writer_during_a_commit_is_a_conflict_and_the_commit_is_redone(
    spark: Any, tmp_path: Path
) -> None:
    """A user's UPDATE commits after the engine read the table and before it commits:
    Delta's conflict check refuses the engine's commit, which reads the table again and
    rewrites it with the user's change in it; one commit carries the write id."""
    import delta.tables  # noqa: F401  (as in a run: delta's Python package converts the error)

    path = tmp_path / "t"
    _table(spark, path, range(3))
    tables = DeltaTables(spark)
    inner = _replace_all(spark, tables, "engine")
    calls = []

    def build(snapshot: Any, state: LogState) -> tuple[Any, list[str]]:
        calls.append(state.version)
        if len(calls) == 1:
            spark.sql(f"UPDATE delta.`{path}` SET id = id + 100 WHERE id = 0")
        return inner(snapshot, state)

    state = tables.commit(str(path), None, build, APP, 1)
    assert calls == [0, 1]  # the second attempt starts from the user's commit
    assert _ids(spark, path) == [(1, "engine"), (2, "engine"), (100, "engine")]
    assert state.version == 2 and state.applied(APP, 1)
    from anycdc.devtools.chaos import duplicate_txns

    assert duplicate_txns(tmp_path) == []


def _snapshot_jobs(spark: Any, run: Any) -> list[str]:
    """The descriptions of the Delta state rebuilds ("Compute snapshot") ``run()`` started."""
    tracker = spark.sparkContext.statusTracker()
    store = spark.sparkContext._jsc.sc().statusStore()
    before = set(tracker.getJobIdsForGroup(None))
    run()
    found = []
    for job in sorted(set(tracker.getJobIdsForGroup(None)) - before):
        description = store.job(job).description()
        text = str(description.get()) if description.isDefined() else ""
        if "Compute snapshot" in text:
            found.append(text)
    return found


def _append(frame: Any) -> Any:
    """A build that adds ``frame``'s rows and replaces no file."""
    return lambda snapshot, state: (frame, [])


def test_auto_compaction_runs_only_after_a_commit_that_leaves_enough_files(
    spark: Any, tmp_path: Path
) -> None:
    """With auto compaction on (``auto_compact``), Delta runs it once per table and JVM
    after a write, whatever the file count, and it rebuilds the new version's state to
    find next to nothing: a commit that leaves the table fewer files than compaction
    needs (a create, a whole rewrite, an append to a table of few files) goes without it;
    one that leaves enough keeps it."""
    from anycdc.spark.commit import AUTO_COMPACT_MIN_FILES
    from anycdc.spark.maintenance import AUTO_COMPACT

    frame = spark.range(0, 3).selectExpr("id", "CAST(id AS STRING) AS v").coalesce(1)
    tables = DeltaTables(spark)
    _table(spark, tmp_path / "b", range(3))  # written before: its first compaction is to come
    spark.conf.set(AUTO_COMPACT, "true")
    try:
        created: list[LogState] = []
        rebuilt = _snapshot_jobs(
            spark, lambda: created.append(tables.create(str(tmp_path / "a"), frame, {}, APP, 1))
        )
        assert rebuilt == [] and len(created[0].files) == 1
        rewritten = _snapshot_jobs(
            spark,
            lambda: tables.commit(
                str(tmp_path / "a"), created[0], _replace_all(spark, tables, "r"), APP, 2
            ),
        )
        assert rewritten == []
        snapshot, state = tables.state(str(tmp_path / "b"), None)  # its state read first
        appended: list[LogState] = []
        few = _snapshot_jobs(  # 2 files, Delta's minimum is 50
            spark,
            lambda: appended.append(
                tables.commit(str(tmp_path / "b"), state, _append(frame), APP, 1, snapshot)
            ),
        )
        assert few == [] and len(appended[0].files) == 2
        spark.conf.set(AUTO_COMPACT_MIN_FILES, "3")
        enough = _snapshot_jobs(  # 3 files
            spark, lambda: tables.commit(str(tmp_path / "b"), appended[0], _append(frame), APP, 2)
        )
        assert enough, "a commit that leaves enough files should keep Delta's auto compaction"
    finally:
        spark.conf.unset(AUTO_COMPACT)
        spark.conf.unset(AUTO_COMPACT_MIN_FILES)
    assert _ids(spark, tmp_path / "a") == [(i, "r") for i in range(3)]


def _jobs(spark: Any, group: str, run: Any) -> tuple[Any, int]:
    """``run()``'s result and the Spark jobs it ran (in a job group of its own)."""
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        result = run()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    return result, len(context.statusTracker().getJobIdsForGroup(group))


def test_an_append_once_reads_the_checksum_and_writes_what_delta_s_writer_writes(
    spark: Any, tmp_path: Path
) -> None:
    # every _anycdc append (the changelog, batch records, ledger, tombstones): Delta's writer
    # with txnAppId rebuilds the table's state on every append to learn the app's version;
    # append_once reads it from the newest version's checksum. Same rows, same versions
    from anycdc.spark.commit import append_by_writer

    tables = DeltaTables(spark)
    once, writer = tmp_path / "once", tmp_path / "writer"
    for path in (once, writer):
        _table(spark, path, range(3))
    rows = [spark.range(i * 10, i * 10 + 2).selectExpr("id", "'n' AS v") for i in (1, 2)]
    for batch, frame in ((1, rows[0]), (2, rows[1]), (2, rows[0]), (1, rows[1])):
        done, jobs = _jobs(
            spark,
            f"once-{batch}",
            lambda f=frame, b=batch: tables.append_once(str(once), f, APP, b),
        )
        assert done  # appended, or (the last two) skipped as replays
        assert jobs <= 1  # the write's, and no state rebuilt (replays: none at all)
        _, by_writer = _jobs(
            spark,
            f"writer-{batch}",
            lambda f=frame, b=batch: append_by_writer(f, str(writer), APP, b, tables=tables),
        )
        assert by_writer > jobs  # the writer rebuilt the state first
    # the writers' versions from the checksum (reads of a cut ask for them): no job, and
    # what the table's state (rebuilt: Delta's own answer) says
    version, jobs = _jobs(spark, "txns", lambda: tables.txn_version(str(once), APP))
    assert (version, jobs) == (2, 0)
    state = tables.snapshot(str(once)).transactions()
    assert tables.transactions(tables.snapshot(str(once))) == {APP: int(state.apply(APP))}
    assert (
        _ids(spark, once)
        == _ids(spark, writer)
        == [(0, "0"), (1, "1"), (2, "2"), (10, "n"), (11, "n"), (20, "n"), (21, "n")]
    )
    assert tables.txn_version(str(once), APP) == tables.txn_version(str(writer), APP) == 2
    from deltalake import DeltaTable

    assert DeltaTable(str(once)).transaction_version(APP) == 2
    assert DeltaTable(str(once)).version() == DeltaTable(str(writer)).version() == 2
    # what it cannot read or write it leaves to Delta's writer, having written nothing
    wider = rows[0].selectExpr("id", "v", "'w' AS extra")
    assert not tables.append_once(str(once), wider, APP, 3)  # a schema change
    checksums = "spark.databricks.delta.writeChecksumFile.enabled"
    spark.conf.set(checksums, "false")
    try:  # a version without a checksum (written by a writer that keeps none)
        append_by_writer(rows[0], str(once), "other", 1)
    finally:
        spark.conf.unset(checksums)
    assert not (once / "_delta_log" / f"{3:020d}.crc").exists()
    spark.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # read as new
    assert not tables.append_once(str(once), rows[0], APP, 3)  # no checksum
    assert not tables.append_once(str(tmp_path / "new"), rows[0], APP, 3)  # no table
    assert tables.txn_version(str(once), APP) == 2 and len(_ids(spark, once)) == 9


def test_a_create_runs_one_job_its_write_and_its_checksum_still_names_the_writer(
    spark: Any, tmp_path: Path
) -> None:
    # a new table's first commit derives the checksum's file list from the empty state
    # before it: a Spark query of its own per created table, unless the session leaves
    # the file list out of checksums (session.FILES_IN_CHECKSUM)
    from anycdc.spark.session import FILES_IN_CHECKSUM

    assert spark.conf.get(FILES_IN_CHECKSUM) == "false"
    tables = DeltaTables(spark)
    frame = spark.range(0, 3).selectExpr("id", "CAST(id AS STRING) AS v").coalesce(1)
    path = str(tmp_path / "new")
    state, jobs = _jobs(spark, "create", lambda: tables.create(path, frame, {}, APP, 4))
    assert jobs == 1 and state.version == 0 and len(state.files) == 1
    # what anycdc reads from the checksum is there: the writer's version, with no job
    txns, jobs = _jobs(spark, "txns", lambda: tables.transactions(tables.snapshot(path)))
    assert (txns, jobs) == ({APP: 4}, 0)
    from deltalake import DeltaTable

    assert DeltaTable(path).transaction_version(APP) == 4
    assert _ids(spark, tmp_path / "new") == [(0, "0"), (1, "1"), (2, "2")]


def test_threads_appending_to_a_table_not_created_yet_all_land(spark: Any, tmp_path: Path) -> None:
    # an apply's worker threads dead-letter their failed tables into one dead_letter table:
    # when it does not exist yet, each append is a creation by Delta's writer, and two
    # creations at once are refused (ProtocolChangedException) unless they take turns
    import threading

    from anycdc.spark.commit import append_once
    from anycdc.spark.session import activate_in_thread

    path = str(tmp_path / "dead_letter")
    threads = 4
    start = threading.Barrier(threads)
    errors: list[BaseException] = []

    def append(index: int) -> None:
        activate_in_thread(spark)
        frame = spark.range(index * 10, index * 10 + 2).selectExpr("id", "'d' AS v")
        start.wait()
        try:
            append_once(frame, path, f"test:failed:{index}", 1)
        except BaseException as exc:  # what the test is about: none is raised
            errors.append(exc)

    workers = [threading.Thread(target=append, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert [i for i, _ in _ids(spark, tmp_path / "dead_letter")] == sorted(
        i * 10 + k for i in range(threads) for k in range(2)
    )
