"""``python -m anycdc.bench.reads --tables N`` (the consistent-read bench of
``make bench-reads``), on tiny tables through real Spark and Delta: its read of every table
as of one cut matches the tables once their pending rows are applied.

The bench once loaded its tables after their first apply: a read of a cut reads each table
as of its last apply, so it read the one row of that apply (and 200 pending updates), the
check found 990,000 differences at 50 tables of 20,000 rows, and the figure was the cost of
reading one-row tables.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_the_consistent_read_bench_reads_the_rows_it_loaded(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anycdc.bench.reads import consistent_main

    status = consistent_main(spark, tmp_path, 2, 40, 1, 0.1, 1, random.Random(3))
    out = capsys.readouterr().out
    assert "2 tables of 40 rows, 10% pending (4 updates each)" in out
    assert "the consistent read vs the tables once applied: 0 differences" in out, out
    assert status == 0
