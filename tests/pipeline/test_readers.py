"""The README's reader table ("Reading the tables"), row by row, on tables the pipeline wrote.

One run writes three small tables: ``plain`` (plain names, the default ``exact``: no column
mapping), ``portable`` (a name Delta rejects, ``column_names: portable``: renamed, no column
mapping) and ``mapped`` (the same name under ``exact``: column mapping). Spark's rows are the
reference; delta-rs (``to_pyarrow_table`` and ``QueryBuilder``), polars (``read_delta``) and
DuckDB (over the Arrow table delta-rs reads: DuckDB's own ``delta`` extension is downloaded
by ``INSTALL delta``, which a test cannot do offline) must read the same rows.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from anycdc.event import Column
from anycdc.naming import portable_name
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, ev, run, system, write_messages

pytestmark = pytest.mark.spark

ODD = "Order Date"
"""A name Delta rejects without column mapping (a space)."""
COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "name": Column(LogicalType("string"), "varchar(20)"),
    "price": Column(LogicalType("decimal", 12, 2), "decimal(12,2)"),
}
ODD_COLUMNS = {**COLUMNS, ODD: Column(LogicalType("string"), "varchar(20)")}


def _row(i: int, odd: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"id": i, "name": f"n{i}", "price": Decimal(f"{i}.25")}
    return {**row, ODD: f"2024-05-0{i}"} if odd else row


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The target: ``shop.plain``, ``shop.portable`` and ``shop.mapped`` after inserts, an
    update and a delete (so a reader must see the table's last version, not its files)."""
    root = tmp_path_factory.mktemp("readers")
    src, out = root / "in", root / "out"
    events = []
    for table, odd in (("plain", False), ("portable", True), ("mapped", True)):
        cols = ODD_COLUMNS if odd else COLUMNS
        events += [
            ev("insert", 1, _row(1, odd), table=table, columns=cols),
            ev("insert", 2, _row(2, odd), table=table, columns=cols),
            ev("insert", 3, _row(3, odd), table=table, columns=cols),
            ev("update", 4, {**_row(1, odd), "name": "n1b"}, before=_row(1, odd),
               table=table, columns=cols),
            ev("delete", 5, _row(2, odd), table=table, columns=cols),
        ]  # fmt: skip
    write_messages(src, "001.jsonl", encode_all("canonical-json", events))
    run(spark, src, out, freshness=0, tables={"shop.portable": {"column_names": "portable"}})
    assert system(spark, out, "dead_letter") == []
    return out


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Source columns only (no ``_cdc_`` metadata), sorted by id."""
    out = [{k: v for k, v in r.items() if not k.startswith("_cdc_")} for r in rows]
    return sorted(out, key=lambda r: (r["id"] is None, r["id"]))


def _spark(spark: Any, path: Path) -> list[dict[str, Any]]:
    return _sorted([r.asDict() for r in spark.read.format("delta").load(str(path)).collect()])


def _arrow(path: Path) -> pa.Table:
    from deltalake import DeltaTable

    return DeltaTable(str(path)).to_pyarrow_table()


def _query_builder(path: Path) -> list[dict[str, Any]]:
    from deltalake import DeltaTable, QueryBuilder

    result = QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t")
    return _sorted(pa.table(result.read_all()).to_pylist())


def _polars(path: Path) -> list[dict[str, Any]]:
    import polars as pl

    return _sorted(pl.read_delta(str(path)).to_dicts())


def _duckdb(arrow: pa.Table) -> list[dict[str, Any]]:
    """DuckDB's SQL over the Arrow table (a replacement scan of the local ``arrow``)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("t", arrow)
        cursor = con.execute("SELECT * FROM t")
        names = [d[0] for d in cursor.description]
        return _sorted([dict(zip(names, row, strict=True)) for row in cursor.fetchall()])
    finally:
        con.close()


EXPECTED = {
    "plain": [{**_row(1, False), "name": "n1b"}, _row(3, False)],
    "portable": [
        {**{portable_name(k) if k == ODD else k: v for k, v in r.items()}}
        for r in [{**_row(1, True), "name": "n1b"}, _row(3, True)]
    ],
}


@pytest.mark.parametrize("table", ["plain", "portable"])
def test_every_reader_reads_a_plain_or_portable_table_as_spark_does(
    spark: Any, lake: Path, table: str
) -> None:
    """The README's right column: "plain or portable table: reads right" for every reader."""
    from deltalake import DeltaTable

    path = lake / "shop" / table
    assert "delta.columnMapping.mode" not in DeltaTable(str(path)).metadata().configuration
    reference = _spark(spark, path)
    assert reference == EXPECTED[table]
    arrow = _arrow(path)
    assert _sorted(arrow.to_pylist()) == reference, "delta-rs to_pyarrow_table"
    assert _sorted(DeltaTable(str(path)).to_pandas().to_dict("records")) == reference, "pandas"
    assert _query_builder(path) == reference, "delta-rs QueryBuilder"
    assert _polars(path) == reference, "polars read_delta"
    assert _duckdb(arrow) == reference, "DuckDB over delta-rs' Arrow"


def test_a_column_mapped_table_reads_right_only_where_the_readme_says(
    spark: Any, lake: Path
) -> None:
    """The README's left column, for an ``exact`` table with column mapping: Spark and
    QueryBuilder read it right; the Arrow dataset reader reads every column NULL (so DuckDB
    over it does too); polars' ``read_delta`` refuses it with an error (not NULLs)."""
    import polars as pl
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaProtocolError

    path = lake / "shop" / "mapped"
    table = DeltaTable(str(path))
    assert table.metadata().configuration["delta.columnMapping.mode"] == "name"
    reference = _spark(spark, path)
    assert reference == [{**_row(1, True), "name": "n1b"}, _row(3, True)]
    assert _query_builder(path) == reference
    arrow = _arrow(path)
    assert arrow.num_rows == 2
    assert all(arrow[c].null_count == 2 for c in arrow.column_names), "not every column NULL"
    nulls = _duckdb(arrow)
    assert len(nulls) == 2 and all(v is None for r in nulls for v in r.values())
    with pytest.raises(DeltaProtocolError, match="column mapping"):
        pl.read_delta(str(path))
