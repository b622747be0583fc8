"""Fresh and consistent reads (issue: fresh and consistent reads).

Through real Spark and Delta. One run of the simulated rich stream (DDL, TRUNCATE, a keyless
table, key changes, hot keys) in two copies told apart by their database: one applied in
every batch (``now``), one deferred (``later``: only its DDL and TRUNCATEs make it due), and
the run stopped before its final apply, as a run killed after its last batch. At every cut,
a read of the deferred copy (its Delta version plus its pending changelog rows, folded on
read) equals the copy applied every batch (its Delta version of that cut); the newest read
equals that copy as delta-rs reads it; after the pending rows are applied, every cut reads
as it read before (repeatable).
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.event import TX_TABLE_EVENTS, ChangeEvent, Column, Op, Position
from anycdc.values import INT64, decimal_type
from tests.pipeline.helpers import encode_all, ev, simulated_copies, write_messages

pytestmark = pytest.mark.spark

HOUR = 3600  # a freshness no test run reaches
NOW, LATER = "reads_now", "reads_later"
IGNORED = ("_cdc_batch",)  # the batch an apply stamps: the read stamps the cut


def _content(frame: Any) -> list[tuple[str, ...]]:
    cols = sorted(c for c in frame.columns if c not in IGNORED)
    return sorted(tuple(str(v) for v in r) for r in frame.select(*cols).collect())


@pytest.fixture(scope="module")
def stream(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The two copies of the simulated stream, a batch per partition file, the deferred
    copy left with rows pending (the query ran without its final apply)."""
    from anycdc.spark.pipeline import Pipeline

    base = tmp_path_factory.mktemp("reads")
    messages = simulated_copies(base, (NOW, LATER))
    config = PipelineConfig.from_mapping({
        "source_dir": str(messages), "target": str(base / "out"), "max_files_per_trigger": 1,
        "freshness": HOUR, "tables": {f"{NOW}.*": {"freshness": 0}},
    })  # fmt: skip
    Pipeline(spark, config).start().awaitTermination()
    return {"base": base, "target": str(base / "out"), "config": config}


def _tables(spark: Any, target: str, database: str) -> list[str]:
    from anycdc.spark.reads import TargetReads

    return [".".join(p for p in i if p) for i in TargetReads(spark, target).tables()
            if i[0] == database]  # fmt: skip


def test_every_cut_of_the_deferred_copy_reads_as_the_copy_applied_every_batch(
    spark: Any, stream: dict[str, Any]
) -> None:
    from anycdc.spark.reads import TargetReads

    reads = TargetReads(spark, stream["target"])
    later = _tables(spark, stream["target"], LATER)
    assert sorted(t.split(".")[1] for t in later) == ["all_types", "audit_log", "order_lines"]
    assert reads.newest_cut() == 3
    pending = 0
    for cut in range(4):
        deferred = reads.read_many(later, at=cut)
        applied = reads.read_many([t.replace(LATER, NOW) for t in later], at=cut)
        for name, frame in deferred.items():
            other = applied[name.replace(LATER, NOW)]
            assert _content(frame) == _content(other), (cut, name)
            path = reads.config.table_path(*reads.resolve(name))
            _version, through = reads.log.version(path, cut)
            pending += through < cut
    # the deferred copy had rows pending at some cut: the reads folded them, not Delta
    assert pending > 0


def test_the_newest_read_equals_the_applied_copy_as_delta_rs_reads_it(
    spark: Any, stream: dict[str, Any]
) -> None:
    from deltalake import DeltaTable

    from anycdc.spark import read

    target = stream["target"]
    behind = 0
    for name in _tables(spark, target, LATER):
        fresh = read(spark, target, name)
        path = f"{target}/{name.replace(LATER, NOW).replace('.', '/')}"
        table = DeltaTable(path).to_pyarrow_table().to_pylist()
        cols = sorted(c for c in fresh.columns if c not in IGNORED)
        expected = sorted(tuple(str(_spark_text(r[c])) for c in cols) for r in table)
        assert _content(fresh) == expected, name
        # the deferred copy's own Delta table is behind (or not there yet): not what is read
        stored = Path(f"{target}/{name.replace('.', '/')}")
        behind += not stored.exists() or _content(
            spark.read.format("delta").load(str(stored))
        ) != _content(fresh)
    assert behind > 0


def _spark_text(value: Any) -> Any:
    """A delta-rs value as Spark's Row prints it (times without a zone: as Spark reads
    them, in the session's UTC)."""
    import datetime as dt

    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def test_a_cut_reads_the_same_after_its_rows_are_applied(
    spark: Any, stream: dict[str, Any], tmp_path: Path
) -> None:
    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.reads import TargetReads

    target = stream["target"]
    later = _tables(spark, target, LATER)
    reads = TargetReads(spark, target)
    before = {
        cut: {n: _content(f) for n, f in reads.read_many(later, at=cut).items()} for cut in (1, 3)
    }
    applied = Pipeline(spark, stream["config"]).run()  # no new file: the final apply only
    assert applied == []
    reads = TargetReads(spark, target)
    for cut, tables in before.items():
        again = reads.read_many(later, at=cut)
        assert {n: _content(f) for n, f in again.items()} == tables, cut
    for name in later:  # applied now: the Delta table is what the read said
        stored = spark.read.format("delta").load(f"{target}/{name.replace('.', '/')}")
        assert _content(stored) == before[3][name]


def test_the_cli_shows_a_fresh_table_and_lists_the_cuts(
    stream: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    target = stream["target"]
    assert cli(["cuts", "--target", target]) == 0
    out = capsys.readouterr().out
    assert "cut" in out and all(f"\n{c} " in out or f"│ {c} " in out for c in range(4))
    assert cli(["show", "--target", target, f"{LATER}.order_lines", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "order_lines" in out and "2 of" in out
    assert cli(["show", "--target", target, "nope.nothing"]) != 0
    err = capsys.readouterr().err
    assert "nope.nothing: no such table" in err and "Traceback" not in err
    assert cli(["show", "--target", target, f"{LATER}.order_lines", "--at", "99"]) != 0
    err = capsys.readouterr().err
    assert "cut 99: the cuts are 0 to 3" in err and "Traceback" not in err
    assert cli(["show", "--target", str(stream["base"] / "nowhere"), "x.y"]) != 0
    err = capsys.readouterr().err
    assert "no anycdc run found" in err and "Traceback" not in err


def test_views_of_one_cut_join_as_one_state(spark: Any, stream: dict[str, Any]) -> None:
    from anycdc.spark import register_views

    views = register_views(spark, stream["target"], cut=2)
    # two tables share each name: their views take the database too
    assert views[f"{LATER}_order_lines"] == f"{LATER}.order_lines"
    keys = "order_id, line_no"
    counts = [
        spark.sql(query).first()[0]
        for query in (
            f"SELECT count(*) FROM {LATER}_order_lines",
            f"SELECT count(*) FROM {NOW}_order_lines",
            f"SELECT count(*) FROM {LATER}_order_lines JOIN {NOW}_order_lines USING ({keys})",
        )
    ]
    assert counts[0] == counts[1] == counts[2] > 0


def test_a_reads_jobs_run_in_the_callers_job_group(spark: Any, stream: dict[str, Any]) -> None:
    """A read's look-ups and its tables' inserts run on threads of their own: each takes
    the caller's job group (a cancel of the group reaches them) and leaves the caller's
    description as it was."""
    from anycdc.spark.reads import TargetReads

    context, group = spark.sparkContext, "anycdc-test-read"
    tracker = context.statusTracker()
    ungrouped = set(tracker.getJobIdsForGroup(None))
    context.setJobGroup(group, "a read of every deferred table")
    try:
        frames = TargetReads(spark, stream["target"]).read_many(
            _tables(spark, stream["target"], LATER)
        )
        description = context.getLocalProperty("spark.job.description")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
    assert len(frames) == 3
    assert len(tracker.getJobIdsForGroup(group)) > 3
    # no job of the read ran outside the group (Spark forgets its oldest jobs past
    # spark.ui.retainedJobs: the ungrouped ones known before may be fewer now, not more)
    assert not set(tracker.getJobIdsForGroup(None)) - ungrouped
    assert description == "a read of every deferred table"


def test_a_later_read_of_the_same_versions_looks_nothing_up_again(
    spark: Any, stream: dict[str, Any], tmp_path: Path
) -> None:
    """The tables, the open transactions and the ledger are kept by the version of the
    log each scans: a second reader of the same versions runs no job for them, and a new
    version of the changelog (a table's first row) is looked up again."""
    import shutil

    from pyspark.sql import functions as F

    from anycdc.spark import reads

    target = tmp_path / "copy"
    shutil.copytree(stream["target"], target)  # a path of its own: looked up afresh
    context, tracker = spark.sparkContext, spark.sparkContext.statusTracker()

    def jobs(group: str, look_up: Any) -> tuple[Any, int]:
        context.setJobGroup(group, "look-ups")
        try:
            found = look_up(reads.TargetReads(spark, str(target)).log)
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
            context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
        return found, len(tracker.getJobIdsForGroup(group))

    def look_ups(log: Any) -> Any:
        newest = log.newest_cut()
        return log.tables(), log.open_transactions(newest), log.ledger_through(None)

    first, first_jobs = jobs("anycdc-test-lookups-1", look_ups)
    again, again_jobs = jobs("anycdc-test-lookups-2", look_ups)
    assert first_jobs >= 3 and again_jobs == 0
    assert again == first and first[2]  # the ledger has the applied copy's tables
    # a table's first row in a new version of the changelog: the tables are looked up again
    changelog = str(target / "_anycdc" / "changelog")
    one = spark.read.format("delta").load(changelog).filter(F.col("op") == "insert").limit(1)
    one.withColumn("table", F.lit("newcomer")).write.format("delta").mode("append").save(changelog)
    (tables, _, _), later_jobs = jobs("anycdc-test-lookups-3", look_ups)
    assert later_jobs > 0
    assert [i[2] for i in tables if i[2] == "newcomer"] == ["newcomer"]
    assert set(tables) - {i for i in tables if i[2] == "newcomer"} == set(first[0])


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"order {i}", "qty": 1, "price": Decimal("1.00")}


def _payment(i: int, order: int) -> dict[str, Any]:
    return {"id": i, "order_id": order, "amount": Decimal(f"{i}.50")}


PAYMENT = {
    "id": Column(INT64, "bigint"),
    "order_id": Column(INT64, "bigint"),
    "amount": Column(decimal_type(10, 2), "decimal(10,2)"),
}


def _marker(op: str, pos: int, tx: str) -> Any:
    return ChangeEvent(
        op=Op(op), format="canonical-json", database="shop", tx=tx,
        ts_ms=1_700_000_000_000 + pos, position=Position((pos,)),
    )  # fmt: skip


def test_a_cut_never_shows_a_payment_without_its_order(spark: Any, tmp_path: Path) -> None:
    """Each source transaction inserts an order and its payment (deletes them, the payment
    first); payments are applied every batch, orders only at the run's end. Read plainly, the
    tables show payments of orders they lack; read as of any cut, never. The last
    transaction (BEGIN and COMMIT markers) is split by a cut: its payment is applied at
    that cut, its order and COMMIT come in the next batch; read as of the cut, neither is
    there (the payments table is read from its version before the transaction). So is one
    whose COMMIT is read ahead of its order, where the COMMIT says how many rows each table
    has (a table never ingested not waited for)."""
    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.reads import TargetReads

    src, out = tmp_path / "in", tmp_path / "out"
    pos = iter(range(1, 1000))
    batches = [
        [e for i in (1, 2, 3) for e in (
            ev("insert", next(pos), _order(i)),
            ev("insert", next(pos), _payment(10 + i, i), table="payments", columns=PAYMENT),
        )],
        [e for i in (4, 5) for e in (
            ev("insert", next(pos), _order(i)),
            ev("insert", next(pos), _payment(10 + i, i), table="payments", columns=PAYMENT),
        )],
        [
            ev("delete", next(pos), _payment(11, 1), table="payments", columns=PAYMENT),
            ev("delete", next(pos), _order(1)),
            ev("insert", next(pos), _order(6)),
            ev("insert", next(pos), _payment(16, 6), table="payments", columns=PAYMENT),
        ],
        [
            _marker("begin", next(pos), "t7"),
            ev("insert", next(pos), _payment(17, 7), table="payments", columns=PAYMENT, tx="t7"),
        ],
        [ev("insert", next(pos), _order(7), tx="t7"), _marker("commit", next(pos), "t7")],
        [  # t8's COMMIT is read ahead of its order: it says how many rows each table has
            _marker("begin", 100, "t8"),
            ev("insert", 101, _payment(18, 8), table="payments", columns=PAYMENT, tx="t8"),
            _marker("commit", 103, "t8").with_changes(extra={TX_TABLE_EVENTS: {
                "shop.payments": 1, "shop.orders": 1, "shop.audit": 3}}),  # audit: not read
        ],
        [ev("insert", 102, _order(8), tx="t8")],
    ]  # fmt: skip
    for n, events in enumerate(batches):
        write_messages(src, f"{n:03}.jsonl", encode_all("canonical-json", events))
        os.utime(src / f"{n:03}.jsonl", (1_700_000_000 + n, 1_700_000_000 + n))
    config = PipelineConfig.from_mapping({
        "source_dir": str(src), "target": str(out), "max_files_per_trigger": 1,
        "freshness": HOUR, "tables": {"shop.payments": {"freshness": 0}},
    })  # fmt: skip
    Pipeline(spark, config).start().awaitTermination()

    def orphans(orders: Any, payments: Any) -> int:
        return int(payments.join(orders, payments["order_id"] == orders["id"], "left_anti").count())

    # read plainly: every payment applied, not one of their orders (all pending)
    assert not (out / "shop" / "orders").exists()
    assert spark.read.format("delta").load(str(out / "shop" / "payments")).count() == 7
    reads = TargetReads(spark, str(out))
    held = [reads.open_transactions(cut)[0] for cut in (3, 4, 5, 6)]
    # t8 is open until its COMMIT (cut 5), and at cut 5 too: its order is not in yet
    assert held == [{"t7", "t8"}, {"t8"}, {"t8"}, set()]
    for cut in range(7):
        tables = reads.read_many(["shop.orders", "shop.payments"], at=cut)
        orders, paid = tables["shop.orders"], tables["shop.payments"]
        assert orphans(orders, paid) == 0, cut
        wanted = [3, 5, 5, 5, 6, 6, 7][cut]
        assert orders.count() == wanted and paid.count() == wanted, cut
    # transactions not held back: the cuts show the payment of an order they lack
    split = TargetReads(spark, str(out), config.with_overrides(hold_open_transactions=0))
    for cut in (3, 5):
        tables = split.read_many(["shop.orders", "shop.payments"], at=cut)
        assert orphans(tables["shop.orders"], tables["shop.payments"]) == 1, cut


# ------------------------------------------------------------------ SCD2 history tables
HIST_NOW, HIST_LATER = "hist_now", "hist_later"
T0 = 1_700_000_000_000  # ev()'s commit time of position 0


def _order_row(i: int, name: str, qty: int = 1) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": qty, "price": Decimal("1.00")}


def _history_batches(database: str) -> list[list[Any]]:
    """Key 1 changed in every batch (its last by a partial image), key 2 by a partial
    image, key 3 deleted then updated late (before its delete), a TRUNCATE (which makes
    the deferred copy due: applied through batch 2), key 4 updated late (before the
    TRUNCATE), key 5 deleted in the last batch (pending in the deferred copy)."""

    def e(op: str, pos: int, row: dict[str, Any] | None, **kw: Any) -> Any:
        return ev(op, pos, row, database=database, **kw)

    return [
        [e("insert", 10, _order_row(1, "a")), e("insert", 20, _order_row(2, "x")),
         e("insert", 30, _order_row(3, "m"))],
        [e("update", 40, _order_row(1, "b", 2)),
         e("update", 50, {"id": 2, "qty": 7}, partial=("after",)),
         e("delete", 60, _order_row(3, "m"))],
        [e("update", 70, _order_row(1, "c", 3)), e("insert", 80, _order_row(4, "p")),
         e("truncate", 90, None, key=None), e("insert", 100, _order_row(1, "d", 4)),
         e("insert", 110, _order_row(5, "q"))],
        [e("update", 45, _order_row(3, "late")), e("update", 85, _order_row(4, "late")),
         e("update", 120, _order_row(1, "e", 5)), e("delete", 130, _order_row(5, "q")),
         e("update", 140, {"id": 1, "name": "f"}, partial=("after",))],
    ]  # fmt: skip


@pytest.fixture(scope="module")
def history_stream(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The stream of :func:`_history_batches` in two SCD2 copies, a file (a cut) per batch:
    one applied every batch, one deferred (applied by its TRUNCATE only)."""
    from anycdc.spark.pipeline import Pipeline

    base = tmp_path_factory.mktemp("history_reads")
    src, out = base / "in", base / "out"
    copies = [_history_batches(d) for d in (HIST_NOW, HIST_LATER)]
    for n, (now, later) in enumerate(zip(*copies, strict=True)):
        write_messages(src, f"{n:03}.jsonl", encode_all("canonical-json", [*now, *later]))
        os.utime(src / f"{n:03}.jsonl", (1_700_000_000 + n, 1_700_000_000 + n))
    config = PipelineConfig.from_mapping({
        "source_dir": str(src), "target": str(out), "max_files_per_trigger": 1, "mode": "scd2",
        "freshness": HOUR, "tables": {f"{HIST_NOW}.*": {"freshness": 0}},
    })  # fmt: skip
    Pipeline(spark, config).start().awaitTermination()
    return {"target": str(out), "config": config}


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")} if root.exists() else set()


def test_every_cut_of_a_deferred_history_table_reads_as_the_one_applied_every_batch(
    spark: Any, history_stream: dict[str, Any]
) -> None:
    from anycdc.spark.reads import TargetReads

    target, config = history_stream["target"], history_stream["config"]
    written = {p: _files(Path(target) / p) for p in (HIST_LATER, f"_anycdc/scd2_ends/{HIST_LATER}")}
    reads = TargetReads(spark, target, config)
    later, now = f"{HIST_LATER}.orders", f"{HIST_NOW}.orders"
    assert reads.newest_cut() == 3
    path = config.table_path(*reads.resolve(later))
    # the deferred copy: no table through cuts 0 and 1, applied through 2 (its TRUNCATE)
    assert [reads.log.version(path, cut)[1] for cut in range(4)] == [-1, -1, 2, 2]
    for cut in range(4):
        deferred = reads.read_many([later], at=cut)[later]
        applied = reads.read_many([now], at=cut)[now]
        assert _content(deferred) == _content(applied), cut
    newest = reads.read(later)
    stored = spark.read.format("delta").load(config.table_path(*reads.resolve(now)))
    assert _content(newest) == _content(stored)
    assert newest.count() == 13  # every version: 1 a-f, 2 x+qty, 3 m+late, 4 p+late, 5 q
    # a read writes nothing: not the table, not its end markers
    assert {p: _files(Path(target) / p) for p in written} == written


def test_a_pending_delete_closes_the_key_in_a_history_read(
    spark: Any, history_stream: dict[str, Any]
) -> None:
    from anycdc.spark.reads import TargetReads

    target, config = history_stream["target"], history_stream["config"]
    reads = TargetReads(spark, target, config)
    name = f"{HIST_LATER}.orders"
    columns = ("name", "_cdc_is_current", f"unix_millis(_cdc_valid_to) - {T0}")

    def key5(frame: Any) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in frame.filter("id = 5").selectExpr(*columns).collect()]

    # applied through batch 2: key 5 current; its delete (position 130) is pending
    assert key5(spark.read.format("delta").load(config.table_path(*reads.resolve(name)))) == [
        ("q", True, None)
    ]
    assert key5(reads.read(name)) == [("q", False, 130)]
    # the cut before the delete still shows it current
    assert key5(reads.read(name, at=2)) == [("q", True, None)]
