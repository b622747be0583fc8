"""Every name a source database allows (issue 19): one odd table never stops the stream.

Through real Spark and Delta, tables read back with delta-rs (its DataFusion reader: the
Arrow dataset reader reads column-mapped columns as NULLs) or, where Delta type widening is
on (delta-rs reads no such table), with Spark:

- one batch holds a plain table and tables with every odd kind of name — columns Delta
  rejects without column mapping, quotes, backticks, emoji, CJK, reserved words, case-only
  and ``_cdc_`` collisions; table names with ``..``, ``/``, leading dots, glob characters
  and a 128-character CJK name too long for a folder — and every one lands as the naming
  rules say (:mod:`anycdc.naming`); a second batch updates, deletes, adds an odd column
  and widens one: the MERGE, evolution and widening work on column-mapped tables, in
  SCD1 and SCD2;
- a table that fails (a file where its folder should be; a data file gone from under it)
  is dead-lettered with the reason in batch N and again in N+1 while the other tables
  apply, and ``replay-dead-letters`` applies it once the cause is gone — every row once;
- ``anycdc simulate --profile names`` runs through the same pipeline and ``verify`` passes;
- a failure of the whole run is one line, no traceback.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from anycdc.cli.status import collect
from anycdc.config import PipelineConfig
from anycdc.event import Column
from anycdc.naming import (
    is_portable,
    path_segment,
    portable_name,
    sha_hex,
    source_comment,
    source_of,
)
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, ev, run, system, write_messages

pytestmark = pytest.mark.spark

INT = Column(LogicalType("int32"), "int")
BIGINT = Column(LogicalType("int64"), "bigint")
TEXT = Column(LogicalType("string"), "text")
DATETIME = Column(LogicalType("timestamp"), "datetime")
LATER = {"Unit Price": "9.50", "Shipped At": dt.datetime(2024, 5, 1, 8, 30)}
"""The odd table's columns added by the second batch."""
ODD_COLUMNS = [
    "Order Date", "a.b", "x,y;z", "{p}(q)", "k=v", "tab\there", "new\nline",
    "quote'\"", "back`tick", "emoji😀", "名前", "select", "cost${usd}",
]  # fmt: skip
"""Column names of one table, all kept exactly (the first seven need column mapping)."""
COLLIDING = ["Name", "name", "NAME", "_cdc_op", "_cdc_position", "_CDC_TS"]
LONG_TABLE = "表" * 128  # 384 bytes of UTF-8: no file system takes it as a folder name
ODD_TABLES = ["..", "a/b", ".hidden", "select", "quote'\"back`tick", "emoji 😀", "a*b?[c]{d}"]


def _odd_columns(extra: dict[str, Column] | None = None) -> dict[str, Column]:
    cols = {"id": BIGINT, **{name: TEXT for name in ODD_COLUMNS}, "a.b": INT}
    return {**cols, **(extra or {})}


def _odd_row(i: int, text: str, ab: int = 1, **more: Any) -> dict[str, Any]:
    row = {"id": i, **{name: f"{text}:{name}" for name in ODD_COLUMNS}, "a.b": ab}
    return {**row, **more}


def _colliding_row(key: str, text: str) -> dict[str, Any]:
    """A row of the colliding columns; ``name`` (the key) is ``key``."""
    return {"id": 1, **{name: f"{text}:{name}" for name in COLLIDING}, "name": key}


COLLIDING_COLUMNS = {"id": BIGINT, **{name: TEXT for name in COLLIDING}}


def _plain(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i, "price": Decimal("1.00")}


def _rs_rows(path: Path) -> list[dict[str, Any]]:
    """The table's rows through delta-rs (DataFusion, which follows column mapping),
    without the ``_cdc_`` metadata, sorted by id."""
    from deltalake import DeltaTable, QueryBuilder

    table = pa.table(
        QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t").read_all()
    )
    out = [{k: v for k, v in r.items() if not k.startswith("_cdc_")} for r in table.to_pylist()]
    return sorted(out, key=lambda r: r["id"])


def _spark_rows(spark: Any, path: Path) -> list[dict[str, Any]]:
    frame = spark.read.format("delta").load(str(path))
    out = [
        {k: v for k, v in r.asDict().items() if not k.startswith("_cdc_")} for r in frame.collect()
    ]
    return sorted(out, key=lambda r: r["id"])


def _in_order(src: Path) -> None:
    """The folder source takes files oldest first: make their times follow their names
    (recent ones: a file far older than those a checkpoint has seen is skipped)."""
    base = int(time.time()) - 1000
    for second, path in enumerate(sorted(src.rglob("*.jsonl"))):
        os.utime(path, (base + second, base + second))


def _names_batches(mode: str) -> tuple[list[Any], list[Any]]:
    """Two batches: every odd name (only the column ones in SCD2), then updates, a delete,
    an odd column added and one widened, and a key that is a renamed column."""
    first = [
        ev("insert", 1, _plain(1, "plain")),
        ev("insert", 2, _odd_row(1, "a"), table="odd", columns=_odd_columns()),
        ev("insert", 3, _odd_row(2, "b"), table="odd", columns=_odd_columns()),
        ev("insert", 4, _colliding_row("k1", "c"), table="cases", columns=COLLIDING_COLUMNS,
           key=("name",)),
    ]  # fmt: skip
    if mode == "scd1":
        first += [
            ev("insert", 5, _plain(7, "long"), table=LONG_TABLE),
            *[
                ev("insert", 10 + n, _plain(n, name), table=name)
                for n, name in enumerate(ODD_TABLES)
            ],
            ev("insert", 30, _plain(9, "db"), database="..", table="x"),
        ]
    # an odd column added, one widened, and a zone-less timestamp added (Delta wants its
    # feature enabled on an existing table)
    wider = _odd_columns({"a.b": BIGINT, "Unit Price": TEXT, "Shipped At": DATETIME})
    second = [
        ev("update", 40, _odd_row(1, "a2", 2**40, **LATER), table="odd",
           columns=wider),
        ev("delete", 41, _odd_row(2, "b"), table="odd", columns=_odd_columns()),
        ev("update", 42, _colliding_row("k1", "c2"), table="cases", columns=COLLIDING_COLUMNS,
           key=("name",)),
        ev("update", 43, _plain(1, "plain2"), before=_plain(1, "plain")),
    ]  # fmt: skip
    return first, second


RENAMED = {n: f"{n}__{sha_hex(n, 8)}" for n in ("name", "NAME", *COLLIDING[3:])}
"""What the case-only and ``_cdc_`` collisions are called in the table (``Name`` came first)."""


def _check_columns(spark: Any, out: Path, mode: str) -> None:
    """The odd columns kept exactly, evolved and widened; the collisions renamed."""
    current = "" if mode == "scd1" else " AND _cdc_is_current"
    odd = out / "shop" / "odd"
    rows = [r.asDict() for r in spark.sql(
        f"SELECT * FROM delta.`{odd}` WHERE true{current}").collect()]  # fmt: skip
    assert [{k: v for k, v in r.items() if not k.startswith("_cdc_")} for r in rows] == [
        {**_odd_row(1, "a2", 2**40), **LATER}
    ]
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{odd}`").first()
    assert detail["properties"]["delta.columnMapping.mode"] == "name"
    schema = spark.read.format("delta").load(str(odd)).schema
    assert {f.name: f.dataType.simpleString() for f in schema}["a.b"] == "bigint"
    # case-only and _cdc_ collisions: the first keeps its name, the others get a hashed one
    frame = spark.sql(f"SELECT * FROM delta.`{out / 'shop' / 'cases'}` WHERE true{current}")
    [row] = [r.asDict() for r in frame.collect()]
    assert {n: row[RENAMED.get(n, n)] for n in ("id", *COLLIDING)} == _colliding_row("k1", "c2")
    assert row["_cdc_op"] == "update"  # anycdc's own column stays anycdc's
    comments = {f.name: f.metadata.get("comment") for f in frame.schema}
    assert comments[RENAMED["_cdc_op"]] == "anycdc source name: _cdc_op"
    assert "delta.columnMapping.mode" not in spark.sql(
        f"DESCRIBE DETAIL delta.`{out / 'shop' / 'cases'}`").first()["properties"]  # fmt: skip


def _check_tables(spark: Any, out: Path) -> None:
    """Every odd table name in its documented folder, inside the target."""
    for name in ODD_TABLES:
        folder = out / "shop" / path_segment(name)
        assert folder.resolve().is_relative_to(out.resolve())
        assert [r["name"] for r in _rs_rows(folder)] == [name]
    assert (out / "_.." / "x").is_dir()
    long = out / "shop" / path_segment(LONG_TABLE)
    assert len(long.name.encode()) <= 255 and long.name.endswith(sha_hex(LONG_TABLE, 16))
    props = spark.sql(f"DESCRIBE DETAIL delta.`{long}`").first()["properties"]
    assert props["anycdc.sourceTable"] == f'["shop", null, "{LONG_TABLE}"]'


def _check_key_ranges(spark: Any, out: Path) -> None:
    """A MERGE into a big table bounds its key by the batch's range: here a renamed key."""
    from anycdc.spark.apply import TableApplier, TablePlan
    from anycdc.spark.maintenance import TableDetail

    config = PipelineConfig(target=str(out), key_range_min_mb=0)
    applier = TableApplier(spark, config, TablePlan("shop", None, "cases", key=("name",)))
    applier.schema.targets = {"Name": "Name", "name": RENAMED["name"]}
    applier.schema.last_detail = TableDetail({}, 2, 1)
    staged = spark.createDataFrame([("k1",), ("k9",)], f"`{RENAMED['name']}` STRING")
    assert applier.key_ranges(staged, {"name": "STRING"}) == [
        f"t.`{RENAMED['name']}` >= 'k1'", f"t.`{RENAMED['name']}` <= 'k9'",
    ]  # fmt: skip


def test_scd2_keeps_odd_names_as_scd1_does(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    first, second = _names_batches("scd2")
    write_messages(src, "001.jsonl", encode_all("canonical-json", first))
    write_messages(src, "002.jsonl", encode_all("canonical-json", second))
    _in_order(src)
    run(spark, src, out, max_files_per_trigger=1, freshness=0, mode="scd2")
    assert [r["error"] for r in system(spark, out, "dead_letter")] == []
    _check_columns(spark, out, "scd2")


def _data_files(table: Path) -> list[Path]:
    return sorted(table.glob("*.parquet"))


def _create_gone(spark: Any, gone: Path, aside: Path) -> None:
    """A table of the pipeline's shape with one row whose data file is moved to ``aside``:
    its schema step works, its MERGE fails (a real per-table failure, not a simulated one)."""
    spark.sql(
        f"CREATE TABLE delta.`{gone}` (id BIGINT, name STRING, qty INT, price DECIMAL(12,2), "
        "_cdc_position STRING, _cdc_ts TIMESTAMP, _cdc_op STRING, _cdc_batch BIGINT) USING delta"
    )
    spark.sql(f"INSERT INTO delta.`{gone}` VALUES (0, 'g0', 0, 1.00, NULL, NULL, 'insert', 0)")
    aside.mkdir()
    for data in _data_files(gone):
        shutil.move(data, aside / data.name)


def test_odd_names_land_and_a_failing_table_is_isolated_then_replayed(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from anycdc.cli import main as cli
    from anycdc.cli.verify import verify
    from anycdc.spark.pipeline import replay_dead_letters

    src, out, aside = tmp_path / "in", tmp_path / "out", tmp_path / "aside"
    broken, gone = out / "shop" / "broken", out / "shop" / "gone"
    broken.parent.mkdir(parents=True)
    broken.write_text("a file where the table's folder goes: it cannot be created")
    _create_gone(spark, gone, aside)
    # a simulated source with odd names (profile names) in the same run: verify passes
    sim = tmp_path / "sim"
    assert cli([
        "simulate", "--format", "canal-json", "--profile", "names", "--rows", "4",
        "--events", "40", "--seed", "3", "--database", "sim", "--out", str(sim),
    ]) == 0  # fmt: skip
    shutil.copytree(sim / "messages", src / "zz_sim")
    first, second = _names_batches("scd1")
    first += [ev("insert", 50, _plain(1, "b1"), table="broken"),
              ev("insert", 51, _plain(1, "g1"), table="gone"),
              ev("insert", 52, _plain(2, "g2"), table="gone")]  # fmt: skip
    second += [ev("insert", 60, _plain(2, "b2"), table="broken"),
               ev("delete", 61, _plain(2, "g2"), table="gone"),
               ev("update", 62, _plain(1, "g1b"), before=_plain(1, "g1"), table="gone")]  # fmt: skip
    write_messages(src, "001.jsonl", encode_all("canonical-json", first))
    write_messages(src, "002.jsonl", encode_all("canonical-json", second))
    _in_order(src)
    caplog.set_level("WARNING", logger="anycdc.pipeline")
    run(spark, src, out, max_files_per_trigger=1, freshness=0, key_range_min_mb=0)

    # batch 0 and batch 1: 'broken' and 'gone' fail and are dead-lettered, the others apply
    assert _rs_rows(out / "shop" / "orders") == [_plain(1, "plain2")]
    _check_columns(spark, out, "scd1")
    _check_tables(spark, out)
    _check_key_ranges(spark, out)
    dead = system(spark, out, "dead_letter")
    assert sorted(r["error"].split(":")[0] for r in dead) == ["shop.broken"] * 2 + ["shop.gone"] * 4
    # a file where the table's folder goes: CREATE TABLE cannot make its log, the first write
    # (a new table is created by it) finds the path taken
    taken = ("DELTA_CANNOT_CREATE_LOG_PATH", "already exists", "FileAlreadyExistsException")
    assert any(
        any(reason in r["error"] for reason in taken)
        for r in dead
        if r["error"].startswith("shop.broken")
    ), [r["error"][:300] for r in dead]
    assert any("FILE_NOT_EXIST" in r["error"] for r in dead)
    failures = [r.getMessage() for r in caplog.records if "dead-lettered" in r.getMessage()]
    assert len(failures) == 4 and all("\n" not in f for f in failures)
    report = {t["table"]: t for t in collect(spark, str(out))["tables"]}
    assert report["shop.broken"]["last_error"] and report["shop.gone"]["last_error"]
    assert report["shop.orders"]["last_error"] is None
    assert report["shop.cases"]["renamed_columns"] == {v: k for k, v in RENAMED.items()}
    assert report[f"shop.{LONG_TABLE}"]["folder_shortened"] is True
    assert report[f"shop.{LONG_TABLE}"]["rows"] == 1
    result = verify(spark, str(out), str(sim / "truth"))
    assert all(t["exists"] and not t["missing"] for t in result["tables"]), result
    assert [t for t in result["tables"] if t["different"] or t["extra"] or t["schema"]] == []

    # the causes gone, the dead letters replay: every row once, the delete included
    broken.unlink()
    for data in aside.iterdir():
        shutil.move(data, gone / data.name)
    config = PipelineConfig(source_dir=str(src), target=str(out))
    assert replay_dead_letters(spark, config) == (6, 0)
    assert system(spark, out, "dead_letter") == []
    assert [(r["id"], r["name"]) for r in _rs_rows(broken)] == [(1, "b1"), (2, "b2")]
    assert [(r["id"], r["name"]) for r in _rs_rows(gone)] == [(0, "g0"), (1, "g1b")]
    # the next run (deferred) goes on from there: nothing applied twice, nothing lost
    write_messages(src, "003.jsonl", encode_all("canonical-json", [
        ev("insert", 70, _plain(3, "b3"), table="broken"),
        ev("update", 71, _plain(1, "g1c"), before=_plain(1, "g1b"), table="gone"),
    ]))  # fmt: skip
    _in_order(src)
    run(spark, src, out)
    assert [r["name"] for r in _rs_rows(broken)] == ["b1", "b2", "b3"]
    assert [r["name"] for r in _rs_rows(gone)] == ["g0", "g1c"]
    assert system(spark, out, "dead_letter") == []


def _arrow_rows(table: pa.Table, delta: Any) -> list[dict[str, Any]]:
    """``table`` (read from the delta-rs table ``delta``) by rows under the source's names
    (a renamed column's comment in the table's schema names it), without anycdc's
    ``_cdc_`` columns, sorted by id."""
    sources = {f.name: source_of(f.name, f.metadata.get("comment")) for f in delta.schema().fields}
    out = [
        {sources[k]: v for k, v in r.items() if not k.startswith("_cdc_")}
        for r in table.to_pylist()
    ]
    return sorted(out, key=lambda r: r["id"])


def test_portable_names_read_through_every_delta_rs_reader(spark: Any, tmp_path: Path) -> None:
    """``column_names: portable``: no column mapping; delta-rs' Arrow dataset reader (what
    pandas and polars users call) reads every column, as its DataFusion reader does; the
    source names ride in the comments, ``status`` shows them; both engines write it."""
    from deltalake import DeltaTable, QueryBuilder

    src, out = tmp_path / "in", tmp_path / "out"
    odd, cases = out / "shop" / "odd", out / "shop" / "cases"
    # no widening here: delta-rs reads no table with type widening on
    later = _odd_columns({"Unit Price": TEXT, "Shipped At": DATETIME})
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _odd_row(1, "a"), table="odd", columns=_odd_columns()),
        ev("insert", 2, _odd_row(2, "b"), table="odd", columns=_odd_columns()),
        ev("insert", 3, _colliding_row("k1", "c"), table="cases", columns=COLLIDING_COLUMNS,
           key=("name",)),
    ]))  # fmt: skip
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("update", 4, _odd_row(1, "a2", **LATER), table="odd", columns=later),
        ev("delete", 5, _odd_row(2, "b"), table="odd", columns=_odd_columns()),
        ev("update", 6, _colliding_row("k1", "c2"), table="cases", columns=COLLIDING_COLUMNS,
           key=("name",)),
    ]))  # fmt: skip
    _in_order(src)
    # batched engine: the tables created, then rewritten (an odd column added, a delete)
    run(spark, src, out, max_files_per_trigger=1, freshness=0, column_names="portable")
    # the MERGE engine on the same tables: a row updated, one inserted, a column added
    note = {"Note #": "n"}
    write_messages(src, "003.jsonl", encode_all("canonical-json", [
        ev("update", 7, _odd_row(1, "a3", **LATER, **note), table="odd",
           columns={**later, "Note #": TEXT}),
        ev("insert", 8, _odd_row(3, "c", **LATER, **note), table="odd",
           columns={**later, "Note #": TEXT}),
    ]))  # fmt: skip
    _in_order(src)
    run(spark, src, out, freshness=0, column_names="portable", apply_engine="merge")
    assert system(spark, out, "dead_letter") == []

    expected = [_odd_row(1, "a3", **LATER, **note), _odd_row(3, "c", **LATER, **note)]
    table = DeltaTable(str(odd))
    assert "delta.columnMapping.mode" not in table.metadata().configuration
    protocol = table.protocol()
    assert "columnMapping" not in [
        *(protocol.reader_features or []),
        *(protocol.writer_features or []),
    ]
    arrow = table.to_pyarrow_table()
    assert _arrow_rows(arrow, table) == expected  # not NULLs: no column mapping to miss
    assert all(is_portable(n) or n.startswith("_cdc_") for n in arrow.column_names)
    query = QueryBuilder().register("t", table).execute("SELECT * FROM t").read_all()
    assert _arrow_rows(pa.table(query), table) == expected
    # the source names in the comments (delta-rs' schema and Spark's), as status shows them
    renamed = {portable_name(n): n for n in [*ODD_COLUMNS, *LATER, *note] if not is_portable(n)}
    comments = {f.name: f.metadata.get("comment") for f in table.schema().fields}
    assert {t: comments[t] for t in renamed} == {t: source_comment(s) for t, s in renamed.items()}
    report = {t["table"]: t for t in collect(spark, str(out))["tables"]}
    assert report["shop.odd"]["renamed_columns"] == renamed
    assert report["shop.odd"]["rows"] == 2
    # collisions resolved as under exact; a _cdc_ name leaves anycdc's namespace
    [row] = _arrow_rows(DeltaTable(str(cases)).to_pyarrow_table(), DeltaTable(str(cases)))
    assert row == _colliding_row("k1", "c2")
    assert report["shop.cases"]["renamed_columns"] == {
        RENAMED["name"]: "name", RENAMED["NAME"]: "NAME",
        **{portable_name(n): n for n in COLLIDING[3:]},
    }  # fmt: skip


def test_a_run_wide_failure_is_one_line(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anycdc.cli import main as cli

    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(
        src, "001.jsonl", encode_all("canonical-json", [ev("insert", 1, _plain(1, "a"))])
    )
    # a file where a folder of the target's path goes: the stream fails to start (a target
    # that is itself a file is refused before Spark: tests/unit/test_cli_bad_inputs.py)
    out.write_text("a file where the target's parent folder goes")
    code = cli(["run", "--source-dir", str(src), "--target", str(out / "lake"), "--no-progress"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("anycdc:")]
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err


WIDE = int(os.environ.get("ANYCDC_TEST_WIDE_COLUMNS", "300"))
"""Columns of the wide table: 300 keeps the suite fast; 2,000 passes too (481 s on a
loaded 2-core machine: Spark's planning of a 2,000-column MERGE, not the data)."""


def test_a_very_wide_table_lands(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    columns = {"id": BIGINT, **{f"c {n:04}": TEXT for n in range(WIDE)}}
    wide = [
        ev("insert", 1, {"id": 1, **{f"c {n:04}": f"a{n}" for n in range(WIDE)}},
           table="wide", columns=columns),
        ev("insert", 2, {"id": 2, **{f"c {n:04}": f"b{n}" for n in range(WIDE)}},
           table="wide", columns=columns),
    ]  # fmt: skip
    write_messages(src, "001.jsonl", encode_all("canonical-json", wide))
    update = {"id": 1, **{f"c {n:04}": f"u{n}" for n in range(WIDE)}, "extra": "x"}
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("update", 3, update, table="wide", columns={**columns, "extra": TEXT}),
        ev("delete", 4, {"id": 2}, table="wide", columns={"id": BIGINT}),
        ev("insert", 5, _plain(1, "plain")),
    ]))  # fmt: skip
    _in_order(src)
    run(spark, src, out, max_files_per_trigger=1, freshness=0)
    assert system(spark, out, "dead_letter") == []
    [row] = _rs_rows(out / "shop" / "wide")
    assert row == update
    # what ``column_names: portable`` is for: delta-rs' Arrow dataset reader (deltalake 1.6,
    # what pandas and polars users call) reads this column-mapped table's every column as
    # NULL, the key included, without an error; QueryBuilder above reads it right
    from deltalake import DeltaTable

    table = DeltaTable(str(out / "shop" / "wide"))
    assert table.metadata().configuration["delta.columnMapping.mode"] == "name"
    arrow = table.to_pyarrow_table()
    assert arrow.num_rows == 1 and all(arrow[c].null_count == 1 for c in arrow.column_names)
