"""Found by the simulator (it was PIPELINE_GAPS ``mongo-set-typed``): a MongoDB ``$set`` of a
date, decimal or binary field could not be applied.

``drs-mongo-json`` decodes ``$set`` values in Extended JSON (``{"$date": "...Z"}``,
``{"$numberDecimal": "..."}``, ``{"$binary": ...}``), the documented patch form. The
pipeline kept those values as their JSON text, which does not cast to the column
(TIMESTAMP, DECIMAL, BINARY): dead letters. The patch step now types them as a document's
fields are typed (:func:`anycdc.patch.patch_as_partial_update`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, rows, run, system, write_messages

pytestmark = pytest.mark.spark

COLUMNS = {
    "_id": Column(LogicalType("string"), "objectId"),
    "joined": Column(LogicalType("timestamptz"), "date"),
    "balance": Column(LogicalType("decimal"), "decimal"),
    "avatar": Column(LogicalType("binary"), "binData"),
}
ID = "64650cf67dc36a464e76e583"


def _event(op: Op, pos: int, **fields: Any) -> ChangeEvent:
    return ChangeEvent(
        op=op, format="drs-mongo-json", database="shop", table="profiles", key=("_id",),
        ts_ms=1_700_000_000_000 + pos * 1000, position=Position((1_700_000_000 + pos, 1)),
        **fields,
    )  # fmt: skip


def test_set_of_date_decimal_and_binary_fields_is_applied(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    doc = {
        "_id": ID, "joined": dt.datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC),
        "balance": Decimal("10.5000"), "avatar": b"\x01\x02",
    }  # fmt: skip
    patch = {"$set": {
        "joined": {"$date": "2024-05-01T08:00:00.123Z"},
        "balance": {"$numberDecimal": "99.2500"},
        "avatar": {"$binary": {"base64": "/wA=", "subType": "00"}},
    }}  # fmt: skip
    write_messages(src, "001.jsonl", encode_all("drs-mongo-json", [
        _event(Op.INSERT, 1, after=doc, columns=COLUMNS),
        _event(Op.UPDATE, 2, before={"_id": ID}, columns={"_id": COLUMNS["_id"]},
               partial=("before",), patch=patch),
    ]))  # fmt: skip
    run(spark, src, out)
    assert system(spark, out, "dead_letter") == []
    [row] = rows(spark, out, "profiles")
    assert row["balance"] == Decimal("99.25") and bytes(row["avatar"]) == b"\xff\x00"
    assert row["joined"].astimezone(dt.UTC) == dt.datetime(
        2024, 5, 1, 8, 0, 0, 123000, tzinfo=dt.UTC
    )
