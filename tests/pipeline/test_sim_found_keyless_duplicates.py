"""Found by the simulator (PIPELINE_GAPS ``keyless-duplicates``): identical rows of a table
without a primary key collapse into one.

A source table without a key may hold the same row twice (a log written twice); its CDC
stream says so (two inserts; a delete removes ONE of them). The pipeline keys such rows by
a hash of the row, so both inserts become one row, and the delete then removes it: the
target ends with 0 rows where the source has 1. The README documents the collapse
(Semantics: Keys); `anycdc verify` compares keyless tables as multisets and reports it.
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


@pytest.mark.xfail(
    strict=True,
    reason="identical rows of a keyless table collapse into one (documented limitation; the "
    "truth is a multiset) (lead: pipeline decision)",
)
def test_a_row_twice_in_the_source_is_twice_in_the_target(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    row = {"at": 1, "who": "ana"}
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, row, table="log", key=None, columns=LOG),
        ev("insert", 2, row, table="log", key=None, columns=LOG),
        ev("insert", 3, row, table="log", key=None, columns=LOG),
        ev("delete", 4, row, table="log", key=None, columns=LOG),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out, "log") == [row, row]
