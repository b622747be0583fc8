"""Apply beside ingest (``apply_beside_ingest``, the default for a run with no freshness 0).

Through real Spark and Delta: the simulated rich stream (DDL, TRUNCATE, a keyless table, key
changes) read a file per batch, every table due in every batch by its size cap, gives the
same tables, row for row and with the same ``_cdc_`` positions, when the due tables are
applied on the worker beside the next batch's ingest and when each batch applies them itself
(the reference); both verify against the simulator's truth and account for every changelog
row. The worker's hand-over rules are pinned without Spark (:class:`ApplyBeside`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.spark.apply_beside import ApplyBeside
from anycdc.verify import load_truth
from tests.pipeline.helpers import accounted

HOUR = 3600


@pytest.mark.spark
def test_beside_and_in_batch_applies_give_the_same_tables(spark: Any, tmp_path: Path) -> None:
    from anycdc.cli.verify import verify
    from anycdc.spark.pipeline import Pipeline

    sim = tmp_path / "sim"
    assert cli([
        "simulate", "--format", "canal-json", "--rows", "4", "--events", "80", "--seed", "5",
        "--partitions", "3", "--out", str(sim),
    ]) == 0  # fmt: skip
    pipelines = {}
    for beside in (True, False):
        config = PipelineConfig.from_mapping({
            "source_dir": str(sim / "messages"), "target": str(tmp_path / f"out-{beside}"),
            "max_files_per_trigger": 1, "freshness": HOUR, "max_pending_rows": 1,
            "apply_beside_ingest": beside,
        })  # fmt: skip
        pipeline = Pipeline(spark, config)
        assert pipeline.applies_beside_ingest == beside
        pipeline.run()
        pipelines[beside] = pipeline

    beside_run, in_batch = pipelines[True], pipelines[False]
    # the first batch hands its tables to an idle worker: they are applied beside, not in it
    assert beside_run.history[0].handed > 0 and not beside_run.history[0].tables
    assert any(m.beside and m.tables for m in beside_run.applies)
    assert all(not m.handed for m in in_batch.history)
    assert any(m.tables for m in in_batch.history)

    for table in load_truth(str(sim / "truth"))[0]:

        def content(beside: bool, name: str = table.table, database: str = table.database) -> Any:
            path = tmp_path / f"out-{beside}" / database / name
            frame = spark.read.format("delta").load(str(path))
            cols = sorted(c for c in frame.columns if c not in ("_cdc_batch", "_cdc_ts"))
            return sorted(tuple(str(v) for v in r) for r in frame.select(*cols).collect())

        assert content(True) == content(False), table.qualified
    for beside in (True, False):
        target = tmp_path / f"out-{beside}"
        assert verify(spark, str(target), str(sim / "truth"))["ok"]
        accounted(spark, target, pending=0, unaccounted=0)


def test_a_hand_over_to_a_busy_worker_is_refused_and_the_next_one_taken() -> None:
    started, release = threading.Event(), threading.Event()
    seen: list[tuple[list[str], int]] = []

    def apply(due: Any, through: int) -> None:
        seen.append((list(due), through))
        started.set()
        release.wait(10)

    worker: ApplyBeside[str] = ApplyBeside(apply)
    assert worker.offer(["a"], 1)
    started.wait(10)
    assert worker.busy
    assert not worker.offer(["a", "b"], 2)  # busy: not queued behind the round
    release.set()
    worker.wait()
    assert worker.offer(["b"], 3)
    worker.close()
    assert seen == [(["a"], 1), (["b"], 3)]
    assert not worker.offer(["c"], 4)  # closed: nothing starts after


def test_a_failed_round_is_logged_and_the_worker_goes_on(caplog: Any) -> None:
    calls: list[int] = []

    def apply(due: Any, through: int) -> None:
        calls.append(through)
        if through == 1:
            raise RuntimeError("Delta said no")

    worker: ApplyBeside[str] = ApplyBeside(apply)
    with caplog.at_level("WARNING", logger="anycdc.pipeline"):
        assert worker.offer(["a"], 1)
        worker.wait()
        assert worker.offer(["a"], 2)
        worker.close()
    assert calls == [1, 2] and worker.failures == 1
    assert "apply beside ingest failed" in caplog.text and "Delta said no" in caplog.text
