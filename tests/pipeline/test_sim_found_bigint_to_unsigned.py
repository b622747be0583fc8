"""Regression (found by the simulator, PIPELINE_GAPS ``dts-avro-unsigned``, now fixed): a BIGINT column cannot
become BIGINT UNSIGNED (DECIMAL(20,0)).

DTS Avro types integers by value: a BIGINT UNSIGNED value below 2^63 arrives as a signed
LONGLONG (``int64``), one above as ``uint64``. When the first batch only had small values
the column is BIGINT; a later value above 2^63 needs DECIMAL(20,0), a widening the pipeline
refuses ("cannot change BIGINT to DECIMAL(20,0)"): the table's events are dead-lettered.
Delta's type widening does allow integer -> DECIMAL with enough integer digits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import get_format
from anycdc.values import LogicalType
from tests.pipeline.helpers import rows, run, system

pytestmark = pytest.mark.spark

COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "u": Column(LogicalType("uint64"), "bigint unsigned"),
}


def _write(folder: Path, pos: int, value: int) -> None:
    event = ChangeEvent(
        op=Op.INSERT, format="dts-avro", database="shop", table="meters", key=("id",),
        after={"id": pos, "u": value}, columns=COLUMNS, ts_ms=1_700_000_000_000 + pos,
        position=Position((pos,)),
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for n, message in enumerate(get_format("dts-avro").encode(event)):
        (folder / f"{pos:04d}-{n}.avro").write_bytes(message)


def test_unsigned_values_above_2_63_after_small_ones(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _write(src, 1, 5)
    run(spark, src, out)
    _write(src, 2, 2**64 - 1)
    run(spark, src, out)
    assert system(spark, out, "dead_letter") == []
    assert [int(r["u"]) for r in rows(spark, out, "meters")] == [5, 2**64 - 1]
