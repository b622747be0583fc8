"""Folding a batch's column types and DDL into a table plan (pure: summary rows as dicts)."""

from __future__ import annotations

from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.spark.apply import IncompatibleSchema, TableSummary, build_plans, settled_types
from anycdc.spark.sql_types import settle_type

DEFAULT = (38, 18)


def _row(*sightings: tuple[str, dict[str, str]], ddl: tuple[tuple[str, str], ...] = (),
         images: tuple[str, ...] = ()) -> dict[str, Any]:  # fmt: skip
    return {
        "database": "shop", "schema": None, "table": "orders",
        "sightings": [
            {"position": pos, "columns": [{"name": n, "type": t} for n, t in cols.items()]}
            for pos, cols in sightings
        ],
        "image_columns": list(images), "key": ["id"], "has_row_id": False,
        "truncate_position": None, "has_rows": True,
        "ddl": [{"position": pos, "ddl": text} for pos, text in ddl],
    }  # fmt: skip


def _types(row: dict[str, Any], current: dict[str, str] | None = None) -> dict[str, str]:
    (plan,) = build_plans([TableSummary.from_row(row)], PipelineConfig(target="/tmp/t")).values()
    return settled_types(plan.columns, current or {}, DEFAULT)


def _cut(sightings: list[tuple[str, dict[str, str]]], at: int) -> dict[str, str]:
    """The column types after the sightings arrive in two batches split at ``at``."""
    first = _types(_row(*sightings[:at])) if at else {}
    return _types(_row(*sightings[at:]), first) if at < len(sightings) else first


LOOSE, TYPED = {"price": "decimal"}, {"price": "decimal(14,4)"}


def test_a_precisionless_decimal_keeps_a_typed_column() -> None:
    assert settle_type("DECIMAL(14,4)", "decimal") == "DECIMAL(14,4)"
    assert _types(_row(("1", TYPED), ("2", LOOSE))) == {"price": "DECIMAL(14,4)"}


def test_a_precisionless_decimal_first_takes_the_default() -> None:
    assert _types(_row(("2", TYPED), ("1", LOOSE))) == {"price": "DECIMAL(38,18)"}


@pytest.mark.parametrize(
    "stream",
    [
        [("1", LOOSE), ("3", TYPED), ("4", LOOSE)],
        [("1", TYPED), ("2", LOOSE), ("3", {"price": "decimal(20,2)"})],
        [("1", {"price": "int32"}), ("2", {"price": "int64"}), ("3", {"price": "int32"})],
    ],
)
def test_the_column_type_does_not_depend_on_batch_boundaries(stream: list[Any]) -> None:
    whole = _cut(stream, len(stream))
    assert all(_cut(stream, at) == whole for at in range(len(stream)))


def test_ddl_is_folded_at_its_position_among_the_rows() -> None:
    modify = "ALTER TABLE `shop`.`orders` MODIFY COLUMN `price` decimal(18,4)"
    loose_first = _row(("1", LOOSE), ("3", LOOSE), ddl=(("2", modify),))
    assert _types(loose_first) == {"price": "DECIMAL(38,18)"}  # as in two batches
    ddl_first = _row(("3", LOOSE), ddl=(("2", modify),))
    assert _types(ddl_first) == {"price": "DECIMAL(18,4)"}


def test_a_dropped_column_named_by_older_images_is_not_brought_back() -> None:
    drop = "ALTER TABLE `shop`.`orders` DROP COLUMN `note`"
    row = _row(("1", {"id": "int64"}), ddl=(("2", drop),), images=("id", "note"))
    (plan,) = build_plans([TableSummary.from_row(row)], PipelineConfig(target="/tmp/t")).values()
    assert list(plan.columns) == ["id"] and plan.dropped == ["note"]


def test_untyped_image_columns_are_text_unless_typed() -> None:
    row = _row(("1", {"id": "int64"}), images=("id", "memo"))
    assert _types(row) == {"id": "BIGINT", "memo": "STRING"}


def test_an_impossible_change_names_the_column_and_both_types() -> None:
    with pytest.raises(IncompatibleSchema, match="column price: cannot change BINARY to int64"):
        _types(_row(("1", {"price": "binary"}), ("2", {"price": "int64"})))


def test_an_untyped_sighting_keeps_the_column_type() -> None:
    # a MongoDB field that is null in one document says nothing of its type
    assert settle_type("INT", "unknown") == "INT"
    assert _types(_row(("1", {"age": "int32"}), ("2", {"age": "unknown"}))) == {"age": "INT"}
    assert _types(_row(("1", {"age": "unknown"}), ("2", {"age": "int32"}))) == {"age": "STRING"}
