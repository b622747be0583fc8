"""Regression (found by the simulator, PIPELINE_GAPS ``untyped-ddl``, now fixed): ``ALTER TABLE`` on a table fed by
an untyped format dead-letters the table's events.

``oms-json`` (OceanBase ``Default`` serialisation) carries no column types: the pipeline
stores its values as text (STRING columns). It does carry DDL, and the pipeline types a
column from ``MODIFY COLUMN qty bigint``: STRING -> BIGINT is "incompatible", so every
event of that table in the batch goes to the dead-letter table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Op, Position
from tests.pipeline.helpers import encode_all, ev, rows, run, system, write_messages

pytestmark = pytest.mark.spark


def test_modify_column_on_an_untyped_table_keeps_applying_rows(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("oms-json", [
        ev("insert", 1, {"id": 1, "name": "a", "qty": 5, "price": None}),
    ]))  # fmt: skip
    run(spark, src, out)
    alter = ChangeEvent(
        op=Op.DDL, format="oms-json", database="shop", table="orders",
        ddl="ALTER TABLE `shop`.`orders` MODIFY COLUMN `qty` bigint", position=Position((2,)),
    )  # fmt: skip
    write_messages(src, "002.jsonl", encode_all("oms-json", [
        alter, ev("insert", 3, {"id": 2, "name": "b", "qty": 2**40, "price": None}),
    ]))  # fmt: skip
    run(spark, src, out)
    assert system(spark, out, "dead_letter") == []
    assert [r["id"] for r in rows(spark, out)] == ["1", "2"]
