"""Duplicates, reordering and poison messages from the simulator; `verify` must find 0 differences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from tests.pipeline.helpers import accounted, run

pytestmark = [pytest.mark.spark, pytest.mark.faults]


def test_duplicates_reordering_and_poison_leave_exact_tables(spark: Any, tmp_path: Path) -> None:
    from anycdc.cli.verify import verify

    sim = tmp_path / "sim"
    code = cli([
        "simulate", "--format", "canal-json", "--tables", "4", "--rows", "5", "--events", "120",
        "--seed", "11", "--partitions", "3", "--duplicates", "0.1", "--reorder", "0.1",
        "--malformed", "0.03", "--out", str(sim),
    ])  # fmt: skip
    assert code == 0
    target = tmp_path / "lake"
    history = run(spark, sim / "messages", target, max_files_per_trigger=1)
    assert len(history) == 3  # one micro-batch per partition file
    result = verify(spark, str(target), str(sim / "truth"))
    assert result["expected_dead_letters"] > 0
    assert result["ok"], result
    audit = accounted(spark, target, pending=0, unaccounted=0)
    assert audit["decode_dead_letters"] == result["expected_dead_letters"]


def test_verify_reports_a_wrong_value(spark: Any, tmp_path: Path) -> None:
    from anycdc.cli.verify import verify

    sim = tmp_path / "sim"
    assert cli(["simulate", "--format", "debezium-json", "--profile", "shop", "--rows", "3",
                "--events", "10", "--out", str(sim)]) == 0  # fmt: skip
    target = tmp_path / "lake"
    run(spark, sim / "messages", target)
    assert verify(spark, str(target), str(sim / "truth"))["ok"]
    spark.sql(f"UPDATE delta.`{target}/shop/orders` SET status = 'tampered'")
    result = verify(spark, str(target), str(sim / "truth"))
    assert not result["ok"]
    orders = next(t for t in result["tables"] if t["table"] == "shop.orders")
    assert orders["different"] and all(d[1] == "status" for d in orders["different"])
