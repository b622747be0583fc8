"""Found by the simulator (it was PIPELINE_GAPS ``keyless-schema-change``): in a table without
a primary key, a delete or update of a row written before an ``ADD COLUMN`` missed that row.

The pipeline identifies a keyless row by a hash of its image (``_cdc_row_key``). A row
inserted before ``ALTER TABLE ... ADD COLUMN ip`` has no ``ip``; MySQL (and every format)
writes later images of that row WITH the new column (NULL). The hash leaves NULLs out, so
both images name the same row: the delete finds it, the update replaces it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, ev, rows, run, write_messages

pytestmark = pytest.mark.spark

LOG = {
    "at": Column(LogicalType("int64"), "bigint"),
    "who": Column(LogicalType("string"), "varchar(8)"),
}
WIDER = {**LOG, "ip": Column(LogicalType("string"), "varchar(45)")}


def _log(op: str, pos: int, row: dict[str, Any], **kw: Any) -> ChangeEvent:
    return ev(op, pos, row, table="log", key=None, **kw)


def test_delete_and_update_after_add_column_find_the_older_rows(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    write_messages(src, "001.jsonl", encode_all("canonical-json", [
        _log("insert", 1, {"at": 1, "who": "ana"}, columns=LOG),
        _log("insert", 2, {"at": 2, "who": "bo"}, columns=LOG),
    ]))  # fmt: skip
    run(spark, src, out)
    alter = ChangeEvent(
        op=Op.DDL, format="canonical-json", database="shop", table="log",
        ddl="ALTER TABLE `shop`.`log` ADD COLUMN `ip` varchar(45) NULL", position=Position((3,)),
    )  # fmt: skip
    write_messages(src, "002.jsonl", encode_all("canonical-json", [
        alter,
        _log("delete", 4, {"at": 1, "who": "ana", "ip": None}, columns=WIDER),
        _log("update", 5, {"at": 2, "who": "bo", "ip": "10.0.0.7"},
             before={"at": 2, "who": "bo", "ip": None}, columns=WIDER),
    ]))  # fmt: skip
    run(spark, src, out)
    assert rows(spark, out, "log") == [{"at": 2, "who": "bo", "ip": "10.0.0.7"}]
