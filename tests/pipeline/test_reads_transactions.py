"""Consistent reads of multi-table source transactions split across ingest batches.

Through real Spark and Delta. The simulated ``linked`` profile (customers, orders, and
order_lines whose ``order_id`` refers to an order) changes its tables only in transactions
(BEGIN/COMMIT markers, one ``tx`` on every row) that keep the foreign keys at every COMMIT.
Its canonical-json stream, keyed over 3 partitions, has a transaction's rows in the
partitions of their keys and its markers (no key) in one partition; each partition file is
cut into position windows and read a file per batch, the snapshot first, then each window's
row partitions before its marker partition (a COMMIT never ingested before its rows, as a
transaction topic read behind the row topics: a COMMIT read before rows of its transaction
from another partition cannot tell a read that rows are still to come). The lines are
applied every batch, orders only at the run's end. At every cut, read together, no line
lacks its order; the transactions the read holds back are exactly those the files say the
cut splits, at least one of them with rows already ingested; and, not held back, some cut
shows a line without its order.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig

pytestmark = pytest.mark.spark

HOUR = 3600  # a freshness no test run reaches
ORDERS, LINES = "shop.orders", "shop.order_lines"
WINDOWS = 2  # position windows after the snapshot: 2 x 3 partition files


def _message_files(simulated: Path, folder: Path) -> list[list[dict[str, Any]]]:
    """The simulated partition files rewritten as the batches' files (see the module
    docstring), their times in the reading order: each file's messages, in that order."""
    parts = {
        path.name: [line for line in path.read_bytes().splitlines() if line.strip()]
        for path in sorted(simulated.iterdir())
    }
    parsed = {name: [json.loads(line) for line in lines] for name, lines in parts.items()}
    snapshot_end = max(m["position"][0] for ms in parsed.values() for m in ms
                       if m["op"] == "snapshot")  # fmt: skip
    last = max(m["position"][0] for ms in parsed.values() for m in ms)
    markers = [n for n, ms in parsed.items() if any(m["op"] == "begin" for m in ms)]
    assert len(markers) == 1  # the markers have no key: one partition holds them all
    order = [n for n in parsed if n not in markers] + markers
    span = (last - snapshot_end) // WINDOWS + 1

    def window(message: dict[str, Any]) -> int:
        position = int(message["position"][0])
        return 0 if position <= snapshot_end else 1 + (position - snapshot_end - 1) // span

    # the snapshot (no transaction) in one file, then each window's partition files
    pairs = {n: list(zip(parts[n], parsed[n], strict=True)) for n in order}
    files = [[pair for n in order for pair in pairs[n] if window(pair[1]) == 0]]
    for k in range(1, WINDOWS + 1):
        for name in order:
            mine = [pair for pair in pairs[name] if window(pair[1]) == k]
            if mine:
                files.append(mine)
    folder.mkdir(parents=True)
    for n, messages in enumerate(files):
        path = folder / f"{n:03}.jsonl"
        path.write_bytes(b"".join(raw + b"\n" for raw, _ in messages))
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    assert sum(map(len, files)) == sum(map(len, parsed.values()))
    return [[m for _, m in messages] for messages in files]


def _open_at(files: list[list[dict[str, Any]]], cut: int) -> set[str]:
    """The transactions the cut (the end of file ``cut``) splits, from the messages alone:
    a BEGIN in any file, no COMMIT in a file up to the cut's."""
    began = {m["tx"] for ms in files for m in ms if m["op"] == "begin"}
    ended = {m["tx"] for ms in files[: cut + 1] for m in ms if m["op"] == "commit"}
    return began - ended


def _rows_through(files: list[list[dict[str, Any]]], cut: int) -> set[str]:
    """The transactions with a row change in the files up to the cut's."""
    return {m["tx"] for ms in files[: cut + 1] for m in ms
            if m["tx"] and m["op"] not in ("begin", "commit")}  # fmt: skip


@pytest.fixture(scope="module")
def linked(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from anycdc.spark.pipeline import Pipeline

    base = tmp_path_factory.mktemp("reads_tx")
    assert cli([
        "simulate", "--format", "canonical-json", "--profile", "linked", "--rows", "4",
        "--events", "70", "--seed", "3", "--partitions", "3", "--out", str(base / "sim"),
    ]) == 0  # fmt: skip
    files = _message_files(base / "sim" / "messages", base / "in")
    config = PipelineConfig.from_mapping({
        "source_dir": str(base / "in"), "target": str(base / "out"), "max_files_per_trigger": 1,
        "freshness": HOUR, "tables": {LINES: {"freshness": 0}},
    })  # fmt: skip
    Pipeline(spark, config).start().awaitTermination()
    truth = {
        name: len((base / "sim" / "truth" / f"{name}.jsonl").read_text().splitlines())
        for name in (ORDERS, LINES)
    }
    return {"target": str(base / "out"), "config": config, "files": files, "truth": truth}


def _orphans(tables: dict[str, Any]) -> int:
    """The lines without their order."""
    lines, orders = tables[LINES], tables[ORDERS]
    return int(lines.join(orders, lines["order_id"] == orders["id"], "left_anti").count())


def test_no_cut_shows_a_line_without_its_order(spark: Any, linked: dict[str, Any]) -> None:
    from anycdc.spark.reads import TargetReads

    files, target = linked["files"], linked["target"]
    reads = TargetReads(spark, target, linked["config"])
    cuts = len(files)
    assert reads.newest_cut() == cuts - 1
    # lines applied every batch, orders left for the run's end
    assert (Path(target) / "shop" / "order_lines").exists()
    assert not (Path(target) / "shop" / "orders").exists()
    split = 0
    for cut in range(cuts):
        expected = _open_at(files, cut)
        assert set(reads.open_transactions(cut)[0]) == expected, cut
        # a transaction split by this cut: some of its rows ingested, its COMMIT not
        split += len(expected & _rows_through(files, cut))
        tables = reads.read_many([ORDERS, LINES], at=cut)
        assert _orphans(tables) == 0, cut
    assert split > 0
    assert {n: f.count() for n, f in tables.items()} == linked["truth"]


def test_without_holding_transactions_a_cut_shows_an_orphan_line(
    spark: Any, linked: dict[str, Any]
) -> None:
    from anycdc.spark.reads import TargetReads

    config = linked["config"].with_overrides(hold_open_transactions=0)
    reads = TargetReads(spark, linked["target"], config)
    found = []
    for cut in range(len(linked["files"])):
        assert reads.open_transactions(cut) == (frozenset(), None)
        if _orphans(reads.read_many([ORDERS, LINES], at=cut)):
            found.append(cut)
            break
    assert found, "no cut split a transaction's order from its lines"
