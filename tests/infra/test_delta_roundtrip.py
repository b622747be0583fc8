"""Delta Lake through Spark (write, MERGE, time travel) and through delta-rs, compared."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

pytestmark = pytest.mark.spark

UTC = dt.UTC
SCHEMA = "id BIGINT, name STRING, amount DECIMAL(12,2), born DATE, seen TIMESTAMP, vip BOOLEAN"
V0 = [
    (
        1,
        "alice",
        Decimal("10.50"),
        dt.date(1990, 1, 2),
        dt.datetime(2024, 1, 1, 8, 0, tzinfo=UTC),
        True,
    ),
    (
        2,
        "bob",
        Decimal("0.01"),
        dt.date(1985, 6, 30),
        dt.datetime(2024, 1, 2, 9, 30, tzinfo=UTC),
        False,
    ),
    (3, "carol", None, None, None, None),
]
CHANGES = [  # op, row
    (
        "u",
        (
            2,
            "bob-2",
            Decimal("99999999.99"),
            dt.date(1985, 6, 30),
            dt.datetime(2024, 2, 1, 0, 0, 0, 123456, tzinfo=UTC),
            True,
        ),
    ),
    (
        "c",
        (
            4,
            "dave",
            Decimal("-5.00"),
            dt.date(2000, 2, 29),
            dt.datetime(2024, 2, 2, tzinfo=UTC),
            False,
        ),
    ),
    ("d", (3, None, None, None, None, None)),
]
COLUMNS = ["id", "name", "amount", "born", "seen_us", "vip"]


def _spark_rows(df: Any) -> list[tuple[Any, ...]]:
    """Rows with the timestamp as epoch microseconds: independent of any time zone."""
    from pyspark.sql import functions as F

    out = df.select("id", "name", "amount", "born", F.unix_micros("seen").alias("seen_us"), "vip")
    return sorted(tuple(r) for r in out.collect())


def _rs_rows(table: Any) -> list[tuple[Any, ...]]:
    epoch = dt.datetime(1970, 1, 1, tzinfo=UTC)
    rows = []
    for r in table.to_pyarrow_table().to_pylist():
        seen = r["seen"]
        if seen is not None and seen.tzinfo is None:
            seen = seen.replace(tzinfo=UTC)
        seen_us = None if seen is None else (seen - epoch) // dt.timedelta(microseconds=1)
        rows.append((r["id"], r["name"], r["amount"], r["born"], seen_us, r["vip"]))
    return sorted(rows)


def test_write_merge_time_travel_and_independent_reader(spark: Any, tmp_path: Any) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    path = str(tmp_path / "customers")
    spark.createDataFrame(V0, SCHEMA).write.format("delta").save(path)

    changes = spark.createDataFrame([(op, *row) for op, row in CHANGES], f"op STRING, {SCHEMA}")
    cols = ["name", "amount", "born", "seen", "vip"]
    (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(changes.alias("s"), "t.id = s.id")
        .whenMatchedDelete(condition="s.op = 'd'")
        .whenMatchedUpdate(condition="s.op != 'd'", set={c: F.col(f"s.{c}") for c in cols})
        .whenNotMatchedInsert(
            condition="s.op != 'd'", values={c: F.col(f"s.{c}") for c in ["id", *cols]}
        )
        .execute()
    )

    current = _spark_rows(spark.read.format("delta").load(path))
    assert [r[:3] for r in current] == [
        (1, "alice", Decimal("10.50")),
        (2, "bob-2", Decimal("99999999.99")),
        (4, "dave", Decimal("-5.00")),
    ]
    history = DeltaTable.forPath(spark, path).history().select("version", "operation").collect()
    assert sorted((r["version"], r["operation"]) for r in history) == [(0, "WRITE"), (1, "MERGE")]

    version0 = _spark_rows(spark.read.format("delta").option("versionAsOf", 0).load(path))
    assert [r[0] for r in version0] == [1, 2, 3]
    assert version0[1][4] == 1_704_187_800_000_000  # 2024-01-02T09:30Z in microseconds

    # the same table through delta-rs (Rust, no JVM): same rows at both versions
    from deltalake import DeltaTable as RsDeltaTable

    rs = RsDeltaTable(path)
    assert rs.version() == 1
    assert _rs_rows(rs) == current
    rs.load_as_version(0)
    assert _rs_rows(rs) == version0
