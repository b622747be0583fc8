"""Found by the simulator (PIPELINE_GAPS ``keyless-duplicates``, a documented limitation):
identical rows of a table without a primary key collapse into one.

A source table without a key may hold the same row twice (a log written twice); its CDC
stream says so (two inserts; a delete removes ONE of them). The pipeline keys such rows by
a hash of the row — the price of making replays and re-sent messages harmless without a
key — so both inserts become one row. The README documents the collapse (Semantics: Keys);
``anycdc verify`` compares keyless tables as multisets and reports it. This test pins the
documented behaviour, so changing it is a decision, not an accident.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.event import Column
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, ev, rows, run, write_messages

pytestmark = pytest.mark.spark

LOG = {
    "at": Column(LogicalType("int64"), "bigint"),
    "who": Column(LogicalType("string"), "varchar(8)"),
}


def test_identical_rows_collapse_into_one_as_documented(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    row, other = {"at": 1, "who": "ana"}, {"at": 2, "who": "bo"}
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, row, table="log", key=None, columns=LOG),
        ev("insert", 2, row, table="log", key=None, columns=LOG),
        ev("insert", 3, other, table="log", key=None, columns=LOG),
    ]))  # fmt: skip
    run(spark, src, out)
    assert sorted(rows(spark, out, "log"), key=str) == [row, other]  # the source has 3 rows
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        ev("delete", 4, row, table="log", key=None, columns=LOG),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out, "log") == [other]  # the source still has one copy of row
