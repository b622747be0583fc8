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
from anycdc.event import Column
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
            _version, through = reads._version(path, cut)
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


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"order {i}", "qty": 1, "price": Decimal("1.00")}


def _payment(i: int, order: int) -> dict[str, Any]:
    return {"id": i, "order_id": order, "amount": Decimal(f"{i}.50")}


PAYMENT = {
    "id": Column(INT64, "bigint"),
    "order_id": Column(INT64, "bigint"),
    "amount": Column(decimal_type(10, 2), "decimal(10,2)"),
}


def test_a_cut_never_shows_a_payment_without_its_order(spark: Any, tmp_path: Path) -> None:
    """Each source transaction inserts an order and its payment (deletes them, the payment
    first); payments are applied every batch, orders only at the run's end. Read plainly, the
    tables show payments of orders they lack; read as of any cut, never."""
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
    assert spark.read.format("delta").load(str(out / "shop" / "payments")).count() == 5
    reads = TargetReads(spark, str(out))
    for cut in range(3):
        tables = reads.read_many(["shop.orders", "shop.payments"], at=cut)
        orders, paid = tables["shop.orders"], tables["shop.payments"]
        assert orphans(orders, paid) == 0, cut
        assert orders.count() == [3, 5, 5][cut] and paid.count() == [3, 5, 5][cut]
