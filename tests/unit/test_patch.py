"""MongoDB $set/$unset as partial row updates, with $set values typed like document fields."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op
from anycdc.patch import PatchError, patch_as_partial_update
from anycdc.values import LogicalType

ID = "64650cf67dc36a464e76e583"


def _update(patch: dict[str, Any]) -> ChangeEvent:
    return ChangeEvent(
        op=Op.UPDATE, format="drs-mongo-json", table="c", key=("_id",), before={"_id": ID},
        columns={"_id": Column(LogicalType("string"), "objectId")}, partial=("before",),
        patch=patch,
    )  # fmt: skip


def test_set_values_in_extended_json_become_typed_values_and_columns() -> None:
    event = patch_as_partial_update(_update({"$set": {
        "joined": {"$date": "2024-05-01T08:00:00.123Z"},
        "old": {"$date": {"$numberLong": "-1000"}},
        "balance": {"$numberDecimal": "99.2500"},
        "avatar": {"$binary": {"base64": "/wA=", "subType": "00"}},
        "n": {"$numberLong": "9007199254740993"},
        "ref": {"$oid": ID},
        "doc": {"a": {"$numberDecimal": "1.5"}},
        "name": "Zoë",
    }}))  # fmt: skip
    after, columns = dict(event.after or {}), dict(event.columns or {})
    assert after["joined"] == dt.datetime(2024, 5, 1, 8, 0, 0, 123000, tzinfo=dt.UTC)
    assert after["old"] == dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
    assert after["balance"] == Decimal("99.2500") and after["avatar"] == b"\xff\x00"
    assert after["n"] == 9007199254740993 and after["ref"] == ID and after["name"] == "Zoë"
    assert after["doc"] == '{"a":{"$numberDecimal":"1.5"}}'
    assert {n: str(c.type) for n, c in columns.items()} == {
        "_id": "string", "joined": "timestamptz", "old": "timestamptz", "balance": "decimal",
        "avatar": "binary", "n": "int64", "ref": "string", "doc": "json", "name": "string",
    }  # fmt: skip
    assert event.partial == ("before", "after")


def test_a_set_to_null_and_an_unset_give_no_column_type() -> None:
    event = patch_as_partial_update(_update({"$set": {"a": None}, "$unset": ["b"]}))
    assert dict(event.after or {}) == {"_id": ID, "a": None, "b": None}
    assert set(event.columns or {}) == {"_id"}


def test_operators_that_need_the_current_value_are_refused_with_the_path() -> None:
    with pytest.raises(PatchError, match=r"\$\.patch: operator\(s\) \$inc not supported"):
        patch_as_partial_update(_update({"$inc": {"n": 1}}))
