"""Real vendor shapes through Spark and Delta: TiCDC's Canal-JSON watermarks and Debezium
Vitess keyspaces, as the golden cases carry them (provenance in tests/cases/*/README.md)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.cases import CASES_DIR
from tests.pipeline.helpers import rows, run, system, write_messages

pytestmark = pytest.mark.spark


def _lines(case: str) -> list[bytes]:
    data = (CASES_DIR / case).read_bytes()
    return [line for line in data.split(b"\n") if line.strip()]


def test_ticdc_watermarks_and_vitess_keyspaces(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    # TiCDC (enable-tidb-extension): CREATE TABLE, insert, update, a TIDB_WATERMARK, delete
    ticdc = _lines("canal-json/constructed_ticdc_extension.jsonl")[:5]
    watermark = ticdc[3]
    assert b'"TIDB_WATERMARK"' in watermark
    insert_again = (
        ticdc[1].replace(b'"id":"1"', b'"id":"3"').replace(b'"commitTs":', b'"commitTs":9')
    )
    write_messages(src, "001.jsonl", [*ticdc, insert_again, watermark])
    # Debezium Vitess: one table name in two keyspaces (source.db is "")
    write_messages(src, "002.jsonl", _lines("debezium-json/constructed_vitess_two_keyspaces.jsonl"))
    run(spark, src, out)

    assert system(spark, out, "dead_letter") == []  # watermarks are heartbeats
    # TiCDC's mysqlType "decimal" has no precision: DECIMAL(38,18) (decimal_default)
    assert [(r["id"], r["amount"]) for r in rows(spark, out, "orders", "shop")] == [
        (3, Decimal("9.90"))
    ]
    commerce = rows(spark, out, "customers", "commerce")
    customer = rows(spark, out, "customers", "customer")
    assert [r["email"] for r in commerce] == ["anne@commerce.example"]
    assert [r["email"] for r in customer] == ["anne@customer.example"]
