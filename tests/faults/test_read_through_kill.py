"""A kill -9 in the middle of an apply changes no cut a reader reads.

The simulated rich stream (DDL, TRUNCATE, a keyless table, key changes), a batch per file,
deferred: the query ran without its final apply, so the tables are behind and their rows
pending. Every cut is read. Then ``anycdc run`` (a process of its own) applies what is
pending and is killed after its tables' commits, before its ledger row (``before-ledger``):
the tables are ahead of what the ledger says they are applied through. Every cut reads the
same; and again once a restart has finished the apply, when each table itself is what its
newest cut read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.faults import CRASH_ENV
from tests.pipeline.helpers import small_jvm_args

pytestmark = [pytest.mark.spark, pytest.mark.faults]

WAIT_S = 900  # a cold JVM on a loaded 2-core machine


def _every_cut(spark: Any, target: Path) -> dict[int, dict[str, list[tuple[str, ...]]]]:
    from anycdc.spark.reads import TargetReads

    reads = TargetReads(spark, str(target))
    newest = reads.newest_cut()
    assert newest is not None
    return {
        cut: {name: _content(frame) for name, frame in reads.read_many(at=cut).items()}
        for cut in range(newest + 1)
    }


def _content(frame: Any) -> list[tuple[str, ...]]:
    cols = sorted(c for c in frame.columns if c != "_cdc_batch")
    return sorted(tuple(str(v) for v in r) for r in frame.select(*cols).collect())


def test_a_kill_9_between_the_commits_and_the_ledger_changes_no_cut(
    spark: Any, tmp_path: Path
) -> None:
    from anycdc.spark.pipeline import Pipeline

    assert cli([
        "simulate", "--format", "canal-json", "--rows", "4", "--events", "90", "--seed", "5",
        "--partitions", "3", "--out", str(tmp_path / "sim"),
    ]) == 0  # fmt: skip
    src, target = tmp_path / "sim" / "messages", tmp_path / "lake"
    for second, path in enumerate(sorted(src.iterdir())):
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))
    flags = {"source_dir": str(src), "target": str(target), "max_files_per_trigger": 1}
    config = PipelineConfig.from_mapping({**flags, "freshness": 3600})
    Pipeline(spark, config).start().awaitTermination()  # no final apply: rows pending
    before = _every_cut(spark, target)
    assert len(before) == 3

    command = [
        sys.executable, "-m", "anycdc", "run", "--source-dir", str(src), "--target",
        str(target), "--max-files-per-trigger", "1", "--freshness", "1h",
        "--master", "local[2]", *small_jvm_args(),
    ]  # fmt: skip
    killed = subprocess.run(
        command, env={**os.environ, CRASH_ENV: "before-ledger"}, start_new_session=True,
        capture_output=True, timeout=WAIT_S,
    )  # fmt: skip
    assert killed.returncode < 0, killed.stderr.decode(errors="replace")[-3000:]
    assert _every_cut(spark, target) == before

    finished = subprocess.run(command, start_new_session=True, capture_output=True, timeout=WAIT_S)
    assert finished.returncode == 0, finished.stderr.decode(errors="replace")[-3000:]
    assert _every_cut(spark, target) == before
    newest = before[max(before)]
    for name, content in newest.items():
        stored = spark.read.format("delta").load(str(target / name.replace(".", "/")))
        assert _content(stored) == content, name
