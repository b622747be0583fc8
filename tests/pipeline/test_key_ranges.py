"""MERGEs into big tables read only the files whose key range overlaps the batch's keys.

Without bounds, every MERGE joins the batch with the whole target table, so its cost grows
with the table, not the batch. With them (``key_range_min_mb``), Delta skips the files
whose min/max statistics lie outside every key column's [smallest, largest] of the batch.
The proof here is physical: a file outside the batch's range is moved away during the
MERGE — a MERGE that opened it would fail. The batched engine MERGEs only tables over
``rewrite_max_mb`` (smaller ones it rewrites whole): 0 here, so every table is one.
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.spark.apply import TableApplier, TablePlan
from anycdc.spark.maintenance import TableDetail
from tests.pipeline.helpers import encode_all, ev, rows, run, system, write_messages

pytestmark = pytest.mark.spark

RANGES = 4  # batches of disjoint key ranges: at least one file each


def _row(n: int, name: str = "a") -> dict[str, Any]:
    return {"id": n, "name": name, "qty": n, "price": Decimal("1.00")}


def _files_of_keys(spark: Any, table: Path, low: int, high: int) -> list[Path]:
    from pyspark.sql import functions as F

    frame = spark.read.format("delta").load(str(table))
    found = frame.filter(F.col("id").between(low, high)).select(F.input_file_name()).distinct()
    return [Path(r[0].removeprefix("file:")) for r in found.collect()]


def test_a_merge_reads_only_the_files_of_the_batch_key_range(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    for b in range(RANGES):
        events = [ev("insert", 100 * b + i + 1, _row(100 * b + i)) for i in range(50)]
        write_messages(src, f"{b:03}.jsonl", encode_all("canonical-json", events))
    bounded = tmp_path / "bounded"
    run(
        spark,
        src,
        bounded,
        max_files_per_trigger=1,
        auto_compact=False,
        key_range_min_mb=0,
        freshness=0,
        rewrite_max_mb=0,
    )
    whole = tmp_path / "whole"
    shutil.copytree(bounded, whole)  # the same table and checkpoint, for the run without bounds
    table = Path("shop") / "orders"
    # the batch touches keys 300-301 and adds 1000: nothing in the range 0-49
    write_messages(src, "100.jsonl", encode_all("canonical-json", [
        ev("update", 10_001, _row(300, "changed"), before=_row(300)),
        ev("delete", 10_002, _row(301)),
        ev("insert", 10_003, _row(1000, "new")),
    ]))  # fmt: skip
    for target, min_mb in ((bounded, 0), (whole, 1e6)):
        outside = _files_of_keys(spark, target / table, 0, 49)
        assert outside and not set(outside) & set(_files_of_keys(spark, target / table, 300, 301))
        for path in outside:
            path.rename(path.with_name(path.name + ".away"))
        try:
            run(spark, src, target, auto_compact=False, key_range_min_mb=min_mb, rewrite_max_mb=0)
            # without bounds the MERGE reads the files moved away: the table fails alone,
            # its events dead-lettered with the reason; with bounds it never reads them
            dead = [r["error"] for r in system(spark, target, "dead_letter")]
            if min_mb:
                assert dead and all(re.search(r"(?i)not.*exist|FileNotFound", e) for e in dead)
            else:
                assert dead == []
        finally:
            for path in outside:
                path.with_name(path.name + ".away").rename(path)
    expected = sorted(
        [_row(100 * b + i) for b in range(RANGES) for i in range(50) if 100 * b + i != 301]
        + [_row(1000, "new")],
        key=lambda r: [str(v) for v in r.values()],
    )
    for r in expected:
        if r["id"] == 300:
            r["name"] = "changed"
    assert rows(spark, bounded) == expected


KEY_TYPES = {
    "k_str": "STRING",
    "k_dec": "DECIMAL(12,2)",
    "k_int": "INT",
    "k_date": "DATE",
    "k_ts": "TIMESTAMP",
    "k_ntz": "TIMESTAMP_NTZ",
}


def _applier(spark: Any, tmp_path: Path, key: tuple[str, ...], size: TableDetail) -> Any:
    config = PipelineConfig.from_mapping({"source_dir": str(tmp_path), "target": str(tmp_path)})
    applier = TableApplier(spark, config, TablePlan("db", None, "t", key=key))
    applier.schema.last_detail = size
    return applier


def test_bounds_hold_every_key_of_the_batch_and_are_tight(spark: Any, tmp_path: Path) -> None:
    zone = spark.conf.get("spark.sql.session.timeZone")
    # a zone with a DST fold: 01:30 on 2024-11-03 happens twice in New York
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        staged = spark.sql("""
            SELECT * FROM VALUES
              ('a''b\\\\c', CAST(7.50 AS DECIMAL(12,2)), -2147483648, DATE'0001-01-01',
               timestamp_micros(1730611800000000), TIMESTAMP_NTZ'2024-01-01 00:00:00.000001'),
              ('ü\n', CAST(-0.01 AS DECIMAL(12,2)), 2147483647, DATE'9999-12-31',
               timestamp_micros(1730615400000001), TIMESTAMP_NTZ'1970-01-01 00:00:00'),
              ('', CAST(0 AS DECIMAL(12,2)), 0, DATE'2024-02-29',
               timestamp_micros(0), TIMESTAMP_NTZ'2024-02-29 23:59:59.999999')
            AS s(k_str, k_dec, k_int, k_date, k_ts, k_ntz)
        """)
        big = TableDetail({}, 2, 2**40)
        conditions = _applier(spark, tmp_path, tuple(KEY_TYPES), big).key_ranges(staged, KEY_TYPES)
        assert len(conditions) == 2 * len(KEY_TYPES)
        staged.createOrReplaceTempView("staged_keys")
        inside = spark.sql(f"SELECT count(*) FROM staged_keys t WHERE {' AND '.join(conditions)}")
        assert inside.first()[0] == 3  # every key of the batch is within its bounds
        for condition in conditions:  # and each bound is a key of the batch, to the microsecond
            equal = condition.replace(" >= ", " = ").replace(" <= ", " = ")
            assert spark.sql(f"SELECT count(*) FROM staged_keys t WHERE {equal}").first()[0] >= 1
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_no_bounds_for_small_tables_null_keys_or_hashed_rows(spark: Any, tmp_path: Path) -> None:
    staged = spark.sql("SELECT * FROM VALUES (1, 'x'), (NULL, 'y') AS s(a, b)")
    types = {"a": "INT", "b": "STRING"}
    big = TableDetail({}, 2, 2**40)
    # a NULL in a key column matches NULL keys (<=>): that column is left unbounded
    both = _applier(spark, tmp_path, ("a", "b"), big).key_ranges(staged, types)
    assert both == ["t.`b` >= 'x'", "t.`b` <= 'y'"]
    one_file = TableDetail({}, 1, 2**40)
    assert _applier(spark, tmp_path, ("b",), one_file).key_ranges(staged, types) == []
    small = TableDetail({}, 9, 255 * 2**20)  # below the default 256 MB
    assert _applier(spark, tmp_path, ("b",), small).key_ranges(staged, types) == []
    assert _applier(spark, tmp_path, (), big).key_ranges(staged, types) == []  # row hash
    binary = spark.sql("SELECT X'00' AS c")
    assert _applier(spark, tmp_path, ("c",), big).key_ranges(binary, {"c": "BINARY"}) == []
