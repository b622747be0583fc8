"""The write-floor probe (:mod:`anycdc.bench.write_floor`) writes what it says it measures.

Its figures are only worth reading if each measured step is the step the batched engine
takes: a create of version 0 with the rows, an append of more rows as a second commit with
the write's ``SetTransaction``, and (for the "one job" bound) one partitioned Parquet write
plus a commit per table holding only its ``SetTransaction``. The tables are read back with
delta-rs; the timing figures are only checked to be there, never against a threshold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.bench.write_floor import APP_ID, run

pytestmark = pytest.mark.spark


def test_the_probe_creates_appends_and_commits_each_table(spark: Any, tmp_path: Path) -> None:
    from deltalake import DeltaTable

    report = run(spark, tmp_path, tables=2, rows=5, rounds=1, threads=[1, 2], warmup=0)

    assert sorted(report.create) == [1, 2] and sorted(report.append) == [1, 2]
    assert len(report.one_job_write) == len(report.one_job_commit) == 1
    for threads in (1, 2):
        for table in range(2):
            delta = DeltaTable(str(tmp_path / f"round0-threads{threads}" / f"t{table}"))
            ids = sorted(row["id"] for row in delta.to_pyarrow_table().to_pylist())
            assert ids == list(range(10)), "the create's 5 rows and the append's 5 more"
            # version 0 the create, 1 the append, 2 (first thread count only) the
            # SetTransaction-only commit of the one-job bound
            assert delta.version() == (2 if threads == 1 else 1)
            assert delta.transaction_version(APP_ID) == (2 if threads == 1 else 1)
    staged = tmp_path / "round0-one-job"
    assert sorted(p.name for p in staged.glob("__table=*")) == ["__table=0", "__table=1"]
