"""End-to-end SCD2 mode (``mode: scd2``) of ``anycdc run`` through real Spark and Delta.

Every version of a row is a row with ``_cdc_valid_from`` / ``_cdc_valid_to`` /
``_cdc_is_current``. Events are built with :func:`tests.pipeline.helpers.ev`,
whose source commit time is ``1_700_000_000_000 + position`` ms: the histories
below read the validity bounds back as positions (``T0`` subtracted).

The scenarios share one target (the module's :func:`lake`), each on a table of its own
(a table's history depends on its own events only), so the file costs a few pipeline runs
instead of one or more per test:

1. the first run reads three files, one micro-batch each; file ``i`` holds batch ``i`` of
   every scenario. A scenario that was a run per batch (its table applied before its next
   batch arrives) has freshness 0: applied in every batch, its state after the first read
   back by time travel; the others wait for the end of the run (as one run of their own
   does: the default freshness is never reached by a test run, here an hour for sure);
2. a crash after the last batch's Delta commits, before the checkpoint's commit: the
   second run replays that batch;
3. the third run reads four more files: the reference comparison (one batch in database
   ``shop_one``, the same events shuffled over four batches in ``shop``), and the run in
   SCD2 of the table the first run wrote in SCD1.

``verify`` compares a target with a simulation's truth: it keeps a target of its own.
"""

from __future__ import annotations

import os
import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest

from anycdc.config import PipelineConfig
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import ORDER_COLUMNS, encode_all, ev, system, write_messages

pytestmark = pytest.mark.spark

T0 = 1_700_000_000_000
HOUR = 3600  # a freshness no test run reaches: such a table is applied when the run ends
ORDER = ("id", "name", "qty", "price")
META = (
    "_cdc_valid_from", "_cdc_valid_to", "_cdc_is_current", "_cdc_position", "_cdc_ts",
    "_cdc_op", "_cdc_batch", "_cdc_key", "_cdc_seq", "_cdc_partial",
)  # fmt: skip

# each scenario's table in the shared target (database shop)
INSERT_UPDATE = "orders_insert_update"
IN_ORDER, SHUFFLED = "orders_in_order", "orders_shuffled"
DUPLICATES, ITEMS = "orders_duplicates", "items"  # items: the Canal message's own table
PARTIAL = "orders_partial"
KEY_CHANGE = "orders_key_change"
TRUNCATE_MANY, TRUNCATE_ONE = "orders_truncate_many", "orders_truncate_one"
SNAPSHOT = "orders_snapshot"
KEYLESS = "orders_keyless"
MODE = "orders_mode"
# applied in every batch: what a run per batch gave them (their first state is asserted)
EVERY_BATCH = (INSERT_UPDATE, PARTIAL, TRUNCATE_MANY, SNAPSHOT)
REFERENCE_ONE = "shop_one"  # the database of the reference's one-batch copy


def _canonical(events: list[ChangeEvent]) -> list[bytes]:
    return encode_all("canonical-json", events)


def _run(
    spark: Any,
    src: Path,
    out: Path,
    on_batch: Callable[[Any], None] | None = None,
    **config: Any,
) -> Any:
    from anycdc.spark.pipeline import Pipeline

    cfg = PipelineConfig.from_mapping(
        {"source_dir": str(src), "target": str(out), "mode": "scd2", **config}
    )
    return Pipeline(spark, cfg, on_batch=on_batch).run()


def _row(id_: int, name: str | None, qty: int = 1, price: str = "1.00") -> dict[str, Any]:
    return {"id": id_, "name": name, "qty": qty, "price": Decimal(price)}


def _in_order(src: Path) -> None:
    """The folder source takes files oldest first: make their times follow their names."""
    for second, path in enumerate(sorted(src.iterdir())):
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))


def _version(out: Path, table: str) -> int:
    """The table's last Delta version, from its log's file names (no Spark job)."""
    log = out / "shop" / table / "_delta_log"
    return max(int(p.stem) for p in log.iterdir() if re.fullmatch(r"\d{20}\.json", p.name))


def _load(spark: Any, out: Path, table: str, version: int | None = None) -> Any:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return reader.load(str(out / "shop" / table))


def history(
    spark: Any,
    out: Path,
    columns: tuple[str, ...] = ORDER,
    table: str = "orders",
    version: int | None = None,
) -> list[tuple[Any, ...]]:
    """(columns..., valid_from, valid_to, is_current) per history row, bounds as positions
    (``version``: as of that Delta version of the table)."""
    frame = _load(spark, out, table, version)
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


# ------------------------------------------------------------------ the scenarios' batches


def _insert_update(table: str = INSERT_UPDATE) -> list[list[ChangeEvent]]:
    return [
        [
            ev("insert", 1, _row(1, "a"), table=table),
            ev("update", 2, _row(1, "b", 2), table=table),
            ev("insert", 3, _row(2, "x"), table=table),
            ev("delete", 4, _row(1, "b", 2), table=table),
        ],
        [ev("insert", 5, _row(1, "again", 5), table=table)],
    ]


def _out_of_order(table: str) -> dict[int, ChangeEvent]:
    return {
        1: ev("insert", 1, _row(1, "v1"), table=table),
        2: ev("insert", 2, _row(2, "w2"), table=table),
        3: ev("update", 3, _row(1, "v3"), table=table),
        4: ev("update", 4, _row(2, "w4"), table=table),
        5: ev("update", 5, _row(1, "v5"), table=table),
        6: ev("delete", 6, _row(2, "w4"), table=table),
        7: ev("update", 7, _row(1, "v7"), table=table),
        8: ev("insert", 8, _row(2, "w8"), table=table),
    }


# batch 1 out of order (the delete before what it deletes); batch 2: a newer version;
# batch 3: late older events, one older than the delete that already closed key 2
SHUFFLED_ORDER = ([6, 5, 2, 1], [8, 7], [4, 3])

# one Canal message, two rows of the same key: one position, two versions (told apart by index)
CANAL_TWO_ROWS = (
    b'{"data":[{"id":"1","price":"1.60"},{"id":"1","price":"1.70"}],"database":"shop",'
    b'"es":1600000000000,"id":30,"isDdl":false,"mysqlType":{"id":"int(11)","price":'
    b'"decimal(10,2)"},"old":[{"price":"1.50"},{"price":"1.60"}],"pkNames":["id"],"sql":"",'
    b'"sqlType":{"id":4,"price":3},"table":"items","ts":1600000000123,"type":"UPDATE"}'
)


def _duplicates(table: str = DUPLICATES) -> list[list[bytes]]:
    first = [
        ev("insert", 1, _row(1, "a"), table=table),
        ev("update", 2, _row(1, "b"), table=table),
        ev("delete", 3, _row(1, "b"), table=table),
    ]
    # the same events twice in one batch, and delivered again by a later batch
    return [
        [*_canonical([first[0], first[1], first[0], first[2], first[1]]), CANAL_TWO_ROWS],
        [*_canonical([*first, ev("insert", 4, _row(2, "c"), table=table)]), CANAL_TWO_ROWS],
    ]


def _partial(table: str = PARTIAL) -> list[list[ChangeEvent]]:
    return [
        [
            ev("insert", 1, _row(1, "a", 1, "1.00"), table=table),
            ev("update", 3, {"id": 1, "qty": 7}, partial=("after",), table=table),
        ],
        # a late full update (position 2) changes what the partial update at 3 inherits
        [
            ev("update", 2, _row(1, "b", 2, "2.00"), table=table),
            ev("update", 4, {"id": 1, "name": None}, partial=("after",), table=table),
        ],
    ]


def _key_change(table: str = KEY_CHANGE) -> list[ChangeEvent]:
    return [
        ev("insert", 1, _row(1, "a"), table=table),
        ev("update", 2, _row(10, "a"), before=_row(1, "a"), table=table),
        ev("update", 3, _row(10, "b"), table=table),
    ]


def _truncate(table: str) -> list[list[ChangeEvent]]:
    return [
        [
            ev("insert", 10, _row(1, "a"), table=table),
            ev("insert", 20, _row(2, "b"), table=table),
            ev("truncate", 30, None, key=None, table=table),
            ev("insert", 40, _row(3, "c"), table=table),
        ],
        # late: one older than the truncate (slotted in, closed by it), one newer
        [
            ev("update", 25, _row(2, "late"), table=table),
            ev("update", 35, _row(1, "after"), table=table),
        ],
    ]


def _snapshot(table: str = SNAPSHOT) -> list[list[ChangeEvent]]:
    wider = {**ORDER_COLUMNS, "qty": Column(LogicalType("int64"), "bigint"),
             "note": Column(LogicalType("string"), "text")}  # fmt: skip
    return [
        [
            ev("update", 20, _row(1, "incremental"), table=table),
            # older than the update: slotted before it
            ev("snapshot", 10, _row(1, "snapshot-old"), table=table),
            ev("snapshot", 10, _row(2, "snapshot"), table=table),
        ],
        [ev("update", 30, {**_row(2, "noted", 2**40), "note": "hi"}, columns=wider, table=table)],
    ]


def _keyless(table: str = KEYLESS) -> list[ChangeEvent]:
    return [
        ev("insert", 1, _row(1, "a"), key=None, table=table),
        ev("insert", 2, _row(2, "b"), key=None, table=table),
        ev("update", 3, _row(2, "b2"), before=_row(2, "b"), key=None, table=table),
        ev("delete", 4, _row(1, "a"), key=None, table=table),
    ]


def _reference_workload() -> Any:
    from anycdc.simulate import Workload

    return Workload(seed=7, rows=4, events=50)


def _reference_files(events: list[ChangeEvent]) -> list[list[bytes]]:
    """Four files (one micro-batch each): the events shuffled across them, with duplicates;
    the first file also holds every event once, in order, in database ``shop_one``."""
    one = [
        msgspec.structs.replace(e, database=REFERENCE_ONE) if e.database == "shop" else e
        for e in events
    ]
    rng = random.Random(3)
    mixed = events + rng.sample(events, 10)
    rng.shuffle(mixed)
    files = [_canonical(mixed[index::4]) for index in range(4)]
    files[0] = _canonical(one) + files[0]
    return files


@dataclass
class Lake:
    """The shared target and what its runs returned (see the module docstring)."""

    out: Path
    first: list[Any]
    """The micro-batches of the first run (three files)."""
    replayed: list[Any]
    """The second run's: the first run's last batch, replayed."""
    third: list[Any]
    """The third run's (four files: the reference comparison, the mode change)."""
    first_versions: dict[str, int]
    """Per table applied in every batch: its Delta version after the first batch."""
    duplicates: dict[str, Any] = field(default_factory=dict)
    """Table ``orders_duplicates`` before and after the replay: rows and Delta version."""


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    from delta.tables import DeltaTable

    root = tmp_path_factory.mktemp("scd2")
    src, out = root / "in", root / "out"
    files: list[list[bytes]] = [[], [], []]

    def add(batches: list[list[bytes]], first: int = 0) -> None:
        for index, messages in enumerate(batches):
            files[first + index].extend(messages)

    add([_canonical(b) for b in _insert_update()])
    ordered = _out_of_order(IN_ORDER)
    add([_canonical(list(ordered.values()))])
    shuffled = _out_of_order(SHUFFLED)
    add([_canonical([shuffled[p] for p in order]) for order in SHUFFLED_ORDER])
    add(_duplicates(), first=1)  # its second batch is the last one, replayed below
    add([_canonical(b) for b in _partial()])
    add([_canonical(_key_change())])
    add([_canonical(b) for b in _truncate(TRUNCATE_MANY)])
    add([_canonical([e for b in _truncate(TRUNCATE_ONE) for e in b])])
    add([_canonical(b) for b in _snapshot()])
    add([_canonical(_keyless())])
    add([_canonical([ev("insert", 1, _row(1, "a"), table=MODE)])])  # written in scd1
    for index, messages in enumerate(files):
        write_messages(src, f"{index + 1:03d}.jsonl", messages)
    _in_order(src)

    config: dict[str, Any] = {
        "freshness": HOUR,
        "table_freshness": {rf"^shop\.({'|'.join(EVERY_BATCH)})$": 0},
        "tables": {f"shop.{MODE}": {"mode": "scd1"}},
    }
    first_versions: dict[str, int] = {}

    def after_first_batch(metrics: Any) -> None:
        if not metrics.flush and metrics.batch_id == 0:
            first_versions.update({t: _version(out, t) for t in EVERY_BATCH})

    first = _run(spark, src, out, after_first_batch, max_files_per_trigger=1, **config)

    table = str(out / "shop" / DUPLICATES)

    def state() -> tuple[list[Any], int]:
        rows = sorted(map(tuple, spark.read.format("delta").load(table).collect()), key=repr)
        return rows, DeltaTable.forPath(spark, table).history(1).first()["version"]

    duplicates = dict(zip(("before", "version_before"), state(), strict=True))
    commits = out / "_anycdc" / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):  # a crash after the Delta commits, before
        (commits / name).unlink()  # the checkpoint's last commit
    replayed = _run(spark, src, out, **config)  # Spark runs the last batch again
    duplicates.update(zip(("after", "version_after"), state(), strict=True))

    reference = _reference_files(list(_reference_workload().events("canonical-json")))
    reference[0] += _canonical([ev("insert", 2, _row(2, "b"), table=MODE)])  # now in scd2
    for index, messages in enumerate(reference):
        write_messages(src, f"{len(files) + index + 1:03d}.jsonl", messages)
    _in_order(src)
    third = _run(spark, src, out, max_files_per_trigger=1, freshness=HOUR)
    return Lake(out, first, replayed, third, first_versions, duplicates)


# ------------------------------------------------------------------ the tests


def test_insert_update_delete_and_reinsert_keep_every_version(spark: Any, lake: Lake) -> None:
    out, first = lake.out, lake.first_versions[INSERT_UPDATE]
    frame = _load(spark, out, INSERT_UPDATE, first)
    assert set(META) <= set(frame.columns)
    assert dict(frame.dtypes)["_cdc_valid_to"] == "timestamp"
    assert history(spark, out, table=INSERT_UPDATE, version=first) == [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),  # closed by the update
        (1, "b", 2, Decimal("1.00"), 2, 4, False),  # closed by the delete: no current row
        (2, "x", 1, Decimal("1.00"), 3, None, True),
    ]
    assert history(spark, out, table=INSERT_UPDATE)[2:] == [
        (1, "again", 5, Decimal("1.00"), 5, None, True),  # re-insert after delete
        (2, "x", 1, Decimal("1.00"), 3, None, True),
    ]
    ops = {r["_cdc_op"] for r in _load(spark, out, INSERT_UPDATE).collect()}
    assert ops == {"insert", "update"}
    from anycdc.cli.status import collect

    [table] = [
        t for t in collect(spark, str(out))["tables"] if t["table"] == f"shop.{INSERT_UPDATE}"
    ]
    assert (table["rows"], table["versions"]) == (2, 4)  # status: current rows, and history


def test_out_of_order_within_and_across_batches_gives_the_in_order_history(
    spark: Any, lake: Lake
) -> None:
    assert len(lake.first) == 3  # the shuffled events: one file, one micro-batch each
    expected = [
        (1, "v1", 1, 3, False), (1, "v3", 3, 5, False), (1, "v5", 5, 7, False),
        (1, "v7", 7, None, True),
        (2, "w2", 2, 4, False), (2, "w4", 4, 6, False), (2, "w8", 8, None, True),
    ]  # fmt: skip
    for table in (IN_ORDER, SHUFFLED):
        got = history(spark, lake.out, table=table)
        assert [(r[0], r[1], r[4], r[5], r[6]) for r in got] == expected
    assert everything(spark, lake.out, IN_ORDER) == everything(spark, lake.out, SHUFFLED)


def test_duplicates_and_a_replayed_batch_change_nothing(spark: Any, lake: Lake) -> None:
    out = lake.out
    expected = [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),
        (1, "b", 1, Decimal("1.00"), 2, 3, False),
        (2, "c", 1, Decimal("1.00"), 4, None, True),
    ]
    assert history(spark, out, table=DUPLICATES) == expected
    items = _load(spark, out, ITEMS)
    assert sorted((r["_cdc_seq"], str(r["price"]), r["_cdc_is_current"]) for r in items.collect()) == [
        ("0230", "1.60", False), ("0230#0000000001", "1.70", True),
    ]  # fmt: skip
    assert len(lake.replayed) == 1  # Spark runs the last batch again
    dup = lake.duplicates
    assert dup["after"] == dup["before"]  # _cdc_batch included: nothing was rewritten
    assert dup["version_after"] == dup["version_before"]
    logged = [r for r in system(spark, out, "changelog") if r["table"] in (DUPLICATES, ITEMS)]
    assert len(logged) == 13


def test_partial_updates_fill_from_the_previous_version_also_when_it_arrives_late(
    spark: Any, lake: Lake
) -> None:
    out = lake.out
    first = history(spark, out, table=PARTIAL, version=lake.first_versions[PARTIAL])
    assert first[-1] == (1, "a", 7, Decimal("1.00"), 3, None, True)
    # a late full update (position 2) changes what the partial update at 3 inherits
    assert history(spark, out, table=PARTIAL) == [
        (1, "a", 1, Decimal("1.00"), 1, 2, False),
        (1, "b", 2, Decimal("2.00"), 2, 3, False),
        (1, "b", 7, Decimal("2.00"), 3, 4, False),  # re-filled from the late version
        (1, None, 7, Decimal("2.00"), 4, None, True),  # explicit NULL kept, the rest filled
    ]
    partial = _load(spark, out, PARTIAL)
    carried = {r["_cdc_seq"]: r["_cdc_partial"] for r in partial.collect()}
    assert sorted(v for v in carried.values() if v) == [["id", "name"], ["id", "qty"]]


def test_primary_key_change_closes_the_old_key_and_opens_the_new(spark: Any, lake: Lake) -> None:
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, lake.out, table=KEY_CHANGE)] == [
        (1, "a", 1, 2, False),
        (10, "a", 2, 3, False),
        (10, "b", 3, None, True),
    ]


def test_truncate_closes_current_versions_at_its_position(spark: Any, lake: Lake) -> None:
    # TRUNCATE_MANY: batch 1 then batch 2 (applied in turn); TRUNCATE_ONE: both in one batch
    expected = [
        (1, "a", 10, 30, False), (1, "after", 35, None, True),
        (2, "b", 20, 25, False), (2, "late", 25, 30, False),
        (3, "c", 40, None, True),
    ]  # fmt: skip
    for table in (TRUNCATE_MANY, TRUNCATE_ONE):
        got = history(spark, lake.out, table=table)
        assert [(r[0], r[1], r[4], r[5], r[6]) for r in got] == expected
    assert everything(spark, lake.out, TRUNCATE_MANY) == everything(spark, lake.out, TRUNCATE_ONE)


def test_snapshot_rows_are_versions_and_new_columns_are_null_in_older_ones(
    spark: Any, lake: Lake
) -> None:
    cols = ("id", "name", "qty", "note")
    assert history(spark, lake.out, cols, table=SNAPSHOT) == [
        (1, "snapshot-old", 1, None, 10, 20, False),
        (1, "incremental", 1, None, 20, None, True),
        (2, "snapshot", 1, None, 10, 30, False),
        (2, "noted", 2**40, "hi", 30, None, True),
    ]
    frame = _load(spark, lake.out, SNAPSHOT)
    assert dict(frame.dtypes)["qty"] == "bigint"
    assert {r["_cdc_op"] for r in frame.collect()} == {"snapshot", "update"}


def test_table_without_primary_key_keeps_full_row_history(spark: Any, lake: Lake) -> None:
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in history(spark, lake.out, table=KEYLESS)] == [
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
    spark: Any, lake: Lake
) -> None:
    from anycdc.verify import same_value

    workload = _reference_workload()
    events = list(workload.events("canonical-json"))
    # database shop: the events shuffled across 4 files (one micro-batch each), with
    # duplicates; database shop_one: the same events in order, in the first of them
    out = lake.out
    assert len(lake.third) == 4
    reference = reference_history(events)
    for table in workload.tables:
        assert everything(spark, out, table.name, REFERENCE_ONE) == everything(
            spark, out, table.name
        )
        frame = spark.read.format("delta").load(str(out / "shop" / table.name))
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


def test_a_table_keeps_the_mode_it_was_written_in(spark: Any, lake: Lake) -> None:
    # written in scd1 by the first run (its tables: entry), run in scd2 by the third
    dead = [d for d in system(spark, lake.out, "dead_letter") if d["table"] == f"shop.{MODE}"]
    assert len(dead) == 1 and "written in scd1 mode" in dead[0]["error"]
