"""What a micro-batch writes as ``_cdc_batch``, and that its per-table plans reuse compiled code.

The batch id and each table's tag reach the MERGEs as data (a column, a string literal), not
as int literals compiled into each plan: otherwise every table, in every batch, compiles its
own classes (Janino, then the JVM's JIT), which cost more CPU than the MERGEs' own work.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import encode_all, ev, run, write_messages

pytestmark = pytest.mark.spark

TABLES = 12


def _batch_ids(spark: Any, target: Path, table: str) -> dict[int, int]:
    frame = spark.read.format("delta").load(str(target / "shop" / table))
    return {r["id"]: r["_cdc_batch"] for r in frame.select("id", "_cdc_batch").collect()}


def _compiles(spark: Any) -> int:
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def _row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i, "price": Decimal("1.10")}


def test_cdc_batch_is_the_batch_that_last_wrote_the_row(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    # batch 0 creates the table (an append), batches 1 and 2 MERGE into it
    write_messages(src, "000.jsonl", encode_all("canonical-json", [
        ev("insert", 1, _row(1, "a")), ev("insert", 2, _row(2, "b")), ev("insert", 3, _row(3, "c")),
    ]))  # fmt: skip
    run(spark, src, out)
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("update", 4, _row(1, "a1")), ev("insert", 5, _row(4, "d")),
    ]))  # fmt: skip
    run(spark, src, out)
    write_messages(src, "002.jsonl", encode_all("canonical-json", [ev("update", 6, _row(2, "b1"))]))
    run(spark, src, out)
    assert _batch_ids(spark, out, "orders") == {1: 1, 2: 2, 3: 0, 4: 1}


def test_a_warm_batch_compiles_no_code_per_table(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"

    def batch(n: int) -> list[bytes]:
        events = [
            ev("update", 10 + n, _row(i, f"v{n}"), table=f"t{t}")
            for t in range(TABLES)
            for i in range(3)
        ]
        return encode_all("canonical-json", events)

    compiled = []
    for n in range(3):
        write_messages(src, f"{n:03}.jsonl", batch(n))
        before = _compiles(spark)
        run(spark, src, out)
        compiled.append(_compiles(spark) - before)
    # measured: 222 compiles for the third batch with int literals in the plans, 2 without
    assert compiled[-1] < TABLES, compiled
    assert all(_batch_ids(spark, out, f"t{t}") == {0: 2, 1: 2, 2: 2} for t in range(TABLES))
