"""``tables:`` ``exclude_columns`` and ``mask_columns`` in the decode step (pure): what
leaves it holds no excluded value, masked values hashed or NULL, and no raw message."""

from __future__ import annotations

import hashlib
from typing import Any

from anycdc.config import PipelineConfig
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import get_format
from anycdc.redact import Redactor
from anycdc.spark.decode import decode_rows
from anycdc.values import LogicalType

SSN = "123-45-6789"
COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "ssn": Column(LogicalType("string"), "char(11)"),
    "email": Column(LogicalType("string"), "varchar(80)"),
    "phone": Column(LogicalType("string"), "varchar(20)"),
}


def _event(table: str, pos: int, key: tuple[str, ...] = ("id",)) -> ChangeEvent:
    row = {"id": pos, "ssn": SSN, "email": f"u{pos}@x.io", "phone": "555-0100"}
    return ChangeEvent(
        op=Op.INSERT, format="canal-json", database="shop", table=table, key=key,
        after=row, columns=COLUMNS, ts_ms=1, position=Position((pos,)),
    )  # fmt: skip


def _rows(config: PipelineConfig, *events: ChangeEvent) -> list[dict[str, Any]]:
    fmt = get_format("canal-json", {})
    records = [
        ("t", 0, i, b"k", message, None)
        for i, event in enumerate(events)
        for message in fmt.encode(event)
    ]
    return list(decode_rows(records, "canal-json", {}, Redactor.from_config(config)))


def test_excluded_and_masked_values_never_leave_the_decode_step() -> None:
    entry = {"exclude_columns": ["ssn"], "mask_columns": {"email": "sha256", "phone": None}}
    config = PipelineConfig.from_mapping({"source_dir": "in", "tables": {"shop.users": entry}})
    users, other = _rows(config, _event("users", 1), _event("orders", 2))
    assert users["error"] is None
    assert users["after"] == {
        "id": "1",
        "email": hashlib.sha256(b"u1@x.io").hexdigest(),
        "phone": None,
    }
    assert [(c["name"], c["type"]) for c in users["columns"]] == [
        ("id", "int64"), ("email", "string"), ("phone", "string"),
    ]  # fmt: skip
    assert users["raw"] is None and users["kafka_key"] is None
    assert SSN not in repr(users) and "u1@x.io" not in repr(users)
    # a table no entry redacts is decoded as it was
    assert other["after"]["ssn"] == SSN and other["raw"] is not None


def test_a_key_column_excluded_is_a_dead_letter_without_values() -> None:
    config = PipelineConfig.from_mapping(
        {"source_dir": "in", "tables": {"shop.*": {"exclude_columns": ["ssn"]}}}
    )
    (row,) = _rows(config, _event("users", 1, key=("ssn",)))
    assert row["error"] == (
        "shop.users: key column 'ssn' is excluded (tables: exclude_columns / mask_columns): "
        "mask it by sha256 instead"
    )
    assert row["raw"] is None and row["table"] is None and SSN not in repr(row)


def test_only_the_winning_entry_redacts() -> None:
    config = PipelineConfig.from_mapping(
        {
            "source_dir": "in",
            "tables": {"shop.*": {"exclude_columns": ["ssn"]}, "shop.audit": {"mode": "scd2"}},
        }
    )
    audit, users = _rows(config, _event("audit", 1), _event("users", 2))
    assert audit["after"]["ssn"] == SSN  # its own entry excludes nothing
    assert "ssn" not in users["after"]
