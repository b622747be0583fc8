"""End-to-end SCD2 mode (``mode: scd2``) of ``anycdc run`` through real Spark and Delta.

Every version of a row is a row with ``_cdc_valid_from`` / ``_cdc_valid_to`` /
``_cdc_is_current``. Events are built with :func:`tests.pipeline.helpers.ev`,
whose source commit time is ``1_700_000_000_000 + position`` ms: the histories
below read the validity bounds back as positions (``T0`` subtracted).
"""

from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import ORDER_COLUMNS, encode_all, ev, run, system, write_messages

pytestmark = pytest.mark.spark

T0 = 1_700_000_000_000
ORDER = ("id", "name", "qty", "price")
META = (
    "_cdc_valid_from", "_cdc_valid_to", "_cdc_is_current", "_cdc_position", "_cdc_ts",
    "_cdc_op", "_cdc_batch", "_cdc_key", "_cdc_seq", "_cdc_partial",
)  # fmt: skip


def _canonical(events: list[ChangeEvent]) -> list[bytes]:
    return encode_all("canonical-json", events)


def _run(spark: Any, src: Path, out: Path, **config: Any) -> Any:
    return run(spark, src, out, mode="scd2", **config)


def _row(id_: int, name: str | None, qty: int = 1, price: str = "1.00") -> dict[str, Any]:
    return {"id": id_, "name": name, "qty": qty, "price": Decimal(price)}


def history(
    spark: Any, out: Path, columns: tuple[str, ...] = ORDER, table: str = "orders"
) -> list[tuple[Any, ...]]:
    """(columns..., valid_from, valid_to, is_current) per history row, bounds as positions."""
    frame = spark.read.format("delta").load(str(out / "shop" / table))
    got = frame.selectExpr(
        *[f"`{c}`" for c in columns],
        f"unix_millis(_cdc_valid_from) - {T0}",
        f"unix_millis(_cdc_valid_to) - {T0}",
        "_cdc_is_current",
    ).collect()
    return sorted((tuple(r) for r in got), key=lambda t: (str(t[0]), t[-3]))


def everything(spark: Any, out: Path, table: str = "orders", database: str = "shop") -> list[Any]:
    """Every column of the history table but ``_cdc_batch`` (which batch added a version)."""
    frame = spark.read.format("delta").load(str(out / database / table)).drop("_cdc_batch")
    cols = sorted(frame.columns)
    return sorted((tuple(r) for r in frame.select(*cols).collect()), key=repr)


def test_insert_update_delete_and_reinsert_keep_every_version(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a")),
        ev("update", 2, _row(1, "b", 2)),
        ev("insert", 3, _row(2, "x")),
        ev("delete", 4, _row(1, "b", 2)),
    ]))  # fmt: skip
    _run(spark, src, out)
    frame = spark.read.format("delta").load(str(out / "shop" / "orders"))
    assert set(META) <= set(frame.columns)
    assert dict(frame.dtypes)["_cdc_valid_to"] == "timestamp"
    assert history(spark, out) == [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),  # closed by the update
        (1, "b", 2, Decimal("1.00"), 2, 4, False),  # closed by the delete: no current row
        (2, "x", 1, Decimal("1.00"), 3, None, True),
    ]
    write_messages(src, "002.jsonl", _canonical([ev("insert", 5, _row(1, "again", 5))]))
    _run(spark, src, out)
    assert history(spark, out)[2:] == [
        (1, "again", 5, Decimal("1.00"), 5, None, True),  # re-insert after delete
        (2, "x", 1, Decimal("1.00"), 3, None, True),
    ]
    ops = {r["_cdc_op"] for r in frame.collect()}
    assert ops == {"insert", "update"}
    from anycdc.cli.status import collect

    [table] = collect(spark, str(out))["tables"]
    assert (table["rows"], table["versions"]) == (2, 4)  # status: current rows, and history


def test_out_of_order_within_and_across_batches_gives_the_in_order_history(
    spark: Any, tmp_path: Path
) -> None:
    events = {
        1: ev("insert", 1, _row(1, "v1")),
        2: ev("insert", 2, _row(2, "w2")),
        3: ev("update", 3, _row(1, "v3")),
        4: ev("update", 4, _row(2, "w4")),
        5: ev("update", 5, _row(1, "v5")),
        6: ev("delete", 6, _row(2, "w4")),
        7: ev("update", 7, _row(1, "v7")),
        8: ev("insert", 8, _row(2, "w8")),
    }
    in_order, shuffled = tmp_path / "in-order", tmp_path / "shuffled"
    write_messages(in_order / "in", "001.jsonl", _canonical(list(events.values())))
    _run(spark, in_order / "in", in_order / "out")
    # batch 1 out of order (the delete before what it deletes); batch 2: a newer version;
    # batch 3: late older events, one older than the delete that already closed key 2
    for name, order in (("001", [6, 5, 2, 1]), ("002", [8, 7]), ("003", [4, 3])):
        write_messages(shuffled / "in", f"{name}.jsonl", _canonical([events[p] for p in order]))
    assert len(_run(spark, shuffled / "in", shuffled / "out", max_files_per_trigger=1)) == 3
    expected = [
        (1, "v1", 1, 3, False), (1, "v3", 3, 5, False), (1, "v5", 5, 7, False),
        (1, "v7", 7, None, True),
        (2, "w2", 2, 4, False), (2, "w4", 4, 6, False), (2, "w8", 8, None, True),
    ]  # fmt: skip
    for out in (in_order / "out", shuffled / "out"):
        assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, out)] == expected
    assert everything(spark, in_order / "out") == everything(spark, shuffled / "out")


# one Canal message, two rows of the same key: one position, two versions (told apart by index)
CANAL_TWO_ROWS = (
    b'{"data":[{"id":"1","price":"1.60"},{"id":"1","price":"1.70"}],"database":"shop",'
    b'"es":1600000000000,"id":30,"isDdl":false,"mysqlType":{"id":"int(11)","price":'
    b'"decimal(10,2)"},"old":[{"price":"1.50"},{"price":"1.60"}],"pkNames":["id"],"sql":"",'
    b'"sqlType":{"id":4,"price":3},"table":"items","ts":1600000000123,"type":"UPDATE"}'
)


def test_duplicates_and_a_replayed_batch_change_nothing(spark: Any, tmp_path: Path) -> None:
    from delta.tables import DeltaTable

    src, out = tmp_path / "in", tmp_path / "out"
    first = [
        ev("insert", 1, _row(1, "a")),
        ev("update", 2, _row(1, "b")),
        ev("delete", 3, _row(1, "b")),
    ]
    # the same events twice in one batch, and delivered again by a later batch
    write_messages(src, "001.jsonl", [
        *_canonical([first[0], first[1], first[0], first[2], first[1]]), CANAL_TWO_ROWS,
    ])  # fmt: skip
    write_messages(src, "002.jsonl", [
        *_canonical([*first, ev("insert", 4, _row(2, "c"))]), CANAL_TWO_ROWS,
    ])  # fmt: skip
    _run(spark, src, out, max_files_per_trigger=1)
    expected = [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),
        (1, "b", 1, Decimal("1.00"), 2, 3, False),
        (2, "c", 1, Decimal("1.00"), 4, None, True),
    ]
    assert history(spark, out) == expected
    items = spark.read.format("delta").load(str(out / "shop" / "items"))
    assert sorted((r["_cdc_seq"], str(r["price"]), r["_cdc_is_current"]) for r in items.collect()) == [
        ("0230", "1.60", False), ("0230#0000000001", "1.70", True),
    ]  # fmt: skip
    table = str(out / "shop" / "orders")
    before = sorted(map(tuple, spark.read.format("delta").load(table).collect()), key=repr)
    version = DeltaTable.forPath(spark, table).history(1).first()["version"]
    commits = out / "_anycdc" / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):  # a crash after the Delta commits, before
        (commits / name).unlink()  # the checkpoint's last commit
    assert len(_run(spark, src, out)) == 1  # Spark runs the last batch again
    after = sorted(map(tuple, spark.read.format("delta").load(table).collect()), key=repr)
    assert after == before  # _cdc_batch included: nothing was rewritten
    assert DeltaTable.forPath(spark, table).history(1).first()["version"] == version
    assert len(system(spark, out, "changelog")) == 13


def test_partial_updates_fill_from_the_previous_version_also_when_it_arrives_late(
    spark: Any, tmp_path: Path
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a", 1, "1.00")),
        ev("update", 3, {"id": 1, "qty": 7}, partial=("after",)),
    ]))  # fmt: skip
    _run(spark, src, out)
    assert history(spark, out)[-1] == (1, "a", 7, Decimal("1.00"), 3, None, True)
    # a late full update (position 2) changes what the partial update at 3 inherits
    write_messages(src, "002.jsonl", _canonical([
        ev("update", 2, _row(1, "b", 2, "2.00")),
        ev("update", 4, {"id": 1, "name": None}, partial=("after",)),
    ]))  # fmt: skip
    _run(spark, src, out)
    assert history(spark, out) == [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),
        (1, "b", 2, Decimal("2.00"), 2, 3, False),
        (1, "b", 7, Decimal("2.00"), 3, 4, False),  # re-filled from the late version
        (1, None, 7, Decimal("2.00"), 4, None, True),  # explicit NULL kept, the rest filled
    ]
    partial = spark.read.format("delta").load(str(out / "shop" / "orders"))
    carried = {r["_cdc_seq"]: r["_cdc_partial"] for r in partial.collect()}
    assert sorted(v for v in carried.values() if v) == [["id", "name"], ["id", "qty"]]


def test_primary_key_change_closes_the_old_key_and_opens_the_new(
    spark: Any, tmp_path: Path
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a")),
        ev("update", 2, _row(10, "a"), before=_row(1, "a")),
        ev("update", 3, _row(10, "b")),
    ]))  # fmt: skip
    _run(spark, src, out)
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, out)] == [
        (1, "a", 1, 2, False),
        (10, "a", 2, 3, False),
        (10, "b", 3, None, True),
    ]


def test_truncate_closes_current_versions_at_its_position(spark: Any, tmp_path: Path) -> None:
    batch1 = [
        ev("insert", 10, _row(1, "a")),
        ev("insert", 20, _row(2, "b")),
        ev("truncate", 30, None, key=None),
        ev("insert", 40, _row(3, "c")),
    ]
    # late: one older than the truncate (slotted in, closed by it), one newer
    batch2 = [ev("update", 25, _row(2, "late")), ev("update", 35, _row(1, "after"))]
    expected = [
        (1, "a", 10, 30, False), (1, "after", 35, None, True),
        (2, "b", 20, 25, False), (2, "late", 25, 30, False),
        (3, "c", 40, None, True),
    ]  # fmt: skip
    many, one = tmp_path / "many", tmp_path / "one"
    write_messages(many / "in", "001.jsonl", _canonical(batch1))
    _run(spark, many / "in", many / "out")
    write_messages(many / "in", "002.jsonl", _canonical(batch2))
    _run(spark, many / "in", many / "out")
    write_messages(one / "in", "001.jsonl", _canonical(batch1 + batch2))
    _run(spark, one / "in", one / "out")
    for out in (many / "out", one / "out"):
        assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, out)] == expected
    assert everything(spark, many / "out") == everything(spark, one / "out")


def test_snapshot_rows_are_versions_and_new_columns_are_null_in_older_ones(
    spark: Any, tmp_path: Path
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("update", 20, _row(1, "incremental")),
        ev("snapshot", 10, _row(1, "snapshot-old")),  # older than the update: slotted before it
        ev("snapshot", 10, _row(2, "snapshot")),
    ]))  # fmt: skip
    _run(spark, src, out)
    wider = {**ORDER_COLUMNS, "qty": Column(LogicalType("int64"), "bigint"),
             "note": Column(LogicalType("string"), "text")}  # fmt: skip
    write_messages(src, "002.jsonl", _canonical([
        ev("update", 30, {**_row(2, "noted", 2**40), "note": "hi"}, columns=wider),
    ]))  # fmt: skip
    _run(spark, src, out)
    cols = ("id", "name", "qty", "note")
    assert history(spark, out, cols) == [
        (1, "snapshot-old", 1, None, 10, 20, False),
        (1, "incremental", 1, None, 20, None, True),
        (2, "snapshot", 1, None, 10, 30, False),
        (2, "noted", 2**40, "hi", 30, None, True),
    ]
    frame = spark.read.format("delta").load(str(out / "shop" / "orders"))
    assert dict(frame.dtypes)["qty"] == "bigint"
    assert {r["_cdc_op"] for r in frame.collect()} == {"snapshot", "update"}


def test_table_without_primary_key_keeps_full_row_history(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([
        ev("insert", 1, _row(1, "a"), key=None),
        ev("insert", 2, _row(2, "b"), key=None),
        ev("update", 3, _row(2, "b2"), before=_row(2, "b"), key=None),
        ev("delete", 4, _row(1, "a"), key=None),
    ]))  # fmt: skip
    _run(spark, src, out)
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, out)] == [
        (1, "a", 1, 4, False),
        (2, "b", 2, 3, False),  # an update is the old row's version closed ...
        (2, "b2", 3, None, True),  # ... and the new row's opened
    ]


def reference_history(events: list[ChangeEvent]) -> dict[str, list[tuple[Any, ...]]]:
    """SCD2 history by the rules, computed in Python from full-image events.

    Per table: (key, position, row, valid_from ms, valid_to ms | None, current),
    versions ordered by position, each ended by the key's next version or delete.
    """
    timeline: dict[tuple[str, tuple[Any, ...]], dict[tuple[int, int], Any]] = defaultdict(dict)
    for e in events:
        if e.op not in (Op.INSERT, Op.SNAPSHOT, Op.UPDATE, Op.DELETE):
            continue  # markers, heartbeats: no versions
        assert e.position is not None and e.key is not None
        where, pos = f"{e.database}.{e.table}", e.position.parts[0]
        if e.op in (Op.INSERT, Op.SNAPSHOT, Op.UPDATE):
            assert e.after is not None
            key = tuple(e.after[k] for k in e.key)
            timeline[(where, key)].setdefault((pos, 0), (e.after, e.ts_ms))
        if e.op is Op.DELETE or (
            e.op is Op.UPDATE and e.before and tuple(e.before[k] for k in e.key) != key
        ):
            assert e.before is not None
            old = tuple(e.before[k] for k in e.key)
            timeline[(where, old)].setdefault((pos, 1), (None, e.ts_ms))
    out: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for (where, key), items in timeline.items():
        ordered = sorted(items.items())
        for index, ((pos, kind), (row, ts)) in enumerate(ordered):
            if kind == 0:
                nxt = ordered[index + 1][1][1] if index + 1 < len(ordered) else None
                out[where].append((key, pos, row, ts, nxt, nxt is None))
    return {k: sorted(v, key=lambda t: (repr(t[0]), t[1])) for k, v in out.items()}


def test_one_batch_and_many_shuffled_batches_give_the_reference_history(
    spark: Any, tmp_path: Path
) -> None:
    from anycdc.simulate import Workload
    from anycdc.verify import same_value

    workload = Workload(seed=7, rows=4, events=50)
    events = list(workload.events("canonical-json"))
    one, many = tmp_path / "one", tmp_path / "many"
    write_messages(one / "in", "all.jsonl", _canonical(events))
    # the same events, shuffled across 4 files (one micro-batch each), with duplicates
    rng = random.Random(3)
    mixed = events + rng.sample(events, 10)
    rng.shuffle(mixed)
    for index in range(4):
        write_messages(many / "in", f"{index:03d}.jsonl", _canonical(mixed[index::4]))
    _run(spark, one / "in", one / "out")
    assert len(_run(spark, many / "in", many / "out", max_files_per_trigger=1)) == 4
    reference = reference_history(events)
    for table in workload.tables:
        assert everything(spark, one / "out", table.name) == everything(
            spark, many / "out", table.name
        )
        frame = spark.read.format("delta").load(str(many / "out" / "shop" / table.name))
        got = sorted(
            (
                (
                    tuple(r[k] for k in table.key),
                    Position.from_sort_key(r["_cdc_position"]).parts[0],
                    r.asDict(),
                    r["f"],
                    r["t"],
                    r["_cdc_is_current"],
                )
                for r in frame.selectExpr(
                    "*", "unix_millis(_cdc_valid_from) AS f", "unix_millis(_cdc_valid_to) AS t"
                ).collect()
            ),
            key=lambda t: (repr(t[0]), t[1]),
        )
        want = reference[table.qualified]
        assert [(g[0], g[1], g[3], g[4], g[5]) for g in got] == [
            (w[0], w[1], w[3], w[4], w[5]) for w in want
        ]
        for g, w in zip(got, want, strict=True):
            assert all(same_value(v, g[2][c]) for c, v in w[2].items()), (g, w)
        assert len([g for g in got if g[5]]) == len(workload.truth[table.qualified])


def test_verify_compares_the_current_rows_of_history_tables(spark: Any, tmp_path: Path) -> None:
    from anycdc.cli import main as cli
    from anycdc.cli.verify import verify

    sim = tmp_path / "sim"
    assert cli([
        "simulate", "--format", "canal-json", "--profile", "shop", "--tables", "2", "--rows", "4",
        "--events", "60", "--seed", "5", "--partitions", "2", "--duplicates", "0.1",
        "--reorder", "0.1", "--out", str(sim),
    ]) == 0  # fmt: skip
    target = tmp_path / "lake"
    _run(spark, sim / "messages", target, max_files_per_trigger=1)
    result = verify(spark, str(target), str(sim / "truth"))
    assert result["ok"], result
    current = sum(t["rows"] for t in result["tables"])
    versions = sum(
        spark.read.format("delta").load(str(target.joinpath(*t["table"].split(".")))).count()
        for t in result["tables"]
    )
    assert versions > current  # history rows exist; only the current ones were compared


def test_a_table_keeps_the_mode_it_was_written_in(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", _canonical([ev("insert", 1, _row(1, "a"))]))
    run(spark, src, out)  # scd1
    write_messages(src, "002.jsonl", _canonical([ev("insert", 2, _row(2, "b"))]))
    _run(spark, src, out)
    dead = system(spark, out, "dead_letter")
    assert len(dead) == 1 and "written in scd1 mode" in dead[0]["error"]
