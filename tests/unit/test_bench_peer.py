"""The hand-written peer's pure parts: its type mapping, its schemas, and the exactness
comparison the bench reports (no Spark)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from anycdc.bench.peer import (
    PeerTable,
    compare_with_truth,
    exactness,
    peer_tables,
    peer_type,
)
from anycdc.bench.pipeline import RUNS, BenchSettings, Measured, exactness_lines, results_json
from anycdc.simulate import Workload, rich_tables


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("bigint", "bigint"),
        ("bigint unsigned", "bigint"),  # naive: the sign is not the user's first worry
        ("BIGINT(20) UNSIGNED", "bigint"),
        ("int", "int"),
        ("tinyint(1)", "tinyint"),
        ("decimal(12,2)", "decimal(12,2)"),
        ("decimal(65,30)", "decimal(38,30)"),
        ("decimal", "decimal(10,0)"),
        ("numeric(5)", "decimal(5,0)"),
        ("float", "float"),
        ("double", "double"),
        ("datetime(6)", "timestamp"),
        ("timestamp(3)", "timestamp"),
        ("date", "date"),
        ("time(6)", "string"),
        ("varbinary(64)", "binary"),
        ("varchar(255)", "string"),
        ("json", "string"),
        ("enum('a','b')", "string"),
    ],
)
def test_peer_type_maps_mysql_names_naively(mysql: str, spark: str) -> None:
    assert peer_type(mysql) == spark


def test_peer_tables_are_written_from_the_declared_canal_types() -> None:
    tables = {t.table: t for t in peer_tables(rich_tables("db"), "canal-json")}
    all_types = tables["all_types"]
    assert all_types.key == ("id",)
    assert all_types.columns["c_ubigint"] == "bigint"
    assert all_types.columns["c_decimal"] == "decimal(38,10)"
    # canal carries BOOLEAN as tinyint(1): the user's schema says tinyint
    assert all_types.columns["c_bool"] == "tinyint"
    assert all_types.columns["c_timestamp"] == "timestamp"
    assert tables["audit_log"].merge_key == tuple(tables["audit_log"].columns)
    assert tables["order_lines"].merge_key == ("order_id", "line_no")


def test_peer_schemas_are_the_tables_before_any_ddl() -> None:
    settings = BenchSettings(events=400, tables=3)
    declared = peer_tables(settings.workload(0, 1).source_tables)
    assert [t.table for t in declared] == ["customers", "orders", "products"]
    assert declared[0] == PeerTable(
        "bench",
        "customers",
        ("id",),
        {
            "id": "bigint",
            "name": "string",
            "email": "string",
            "balance": "decimal(12,2)",
            "vip": "tinyint",
            "created_at": "timestamp",
        },
    )


def _truth() -> tuple[Workload, list[dict[str, object]]]:
    workload = Workload(seed=3, rows=4, events=60, database="db", tables=3, profile="rich")
    for _ in workload.events("canal-json"):
        pass
    rows = [dict(r) for r in workload.truth["db.all_types"].values()]
    return workload, rows


def test_exactness_of_an_exact_copy_is_zero() -> None:
    workload, _ = _truth()
    actual = {q: [dict(r) for r in rows.values()] for q, rows in workload.truth.items()}
    diffs, absent = compare_with_truth(workload.tables, workload.truth, actual)
    found = exactness("copy", diffs, absent)
    assert found.exact and absent == []
    assert (found.missing, found.extra, found.wrong_rows, found.wrong_values) == (0, 0, 0, 0)
    assert found.expected_rows == sum(len(r) for r in workload.truth.values()) > 0


def test_exactness_counts_what_a_naive_copy_gets_wrong() -> None:
    workload, rows = _truth()
    big = next(r for r in rows if r["c_ubigint"] is not None and r["c_ubigint"] >= 2**63)
    money = next(r for r in rows if r["c_money"] is not None and r is not big)
    actual = {q: [dict(r) for r in table.values()] for q, table in workload.truth.items()}
    mine = {r["id"]: r for r in actual["db.all_types"]}
    mine[big["id"]]["c_ubigint"] = None  # try_cast of 2^63.. to bigint
    mine[money["id"]]["c_money"] = float(money["c_money"]) + 0.001  # through a double
    gone = actual["db.order_lines"].pop()  # a row a run lost
    actual["db.order_lines"].append({**gone, "line_no": 999})  # ... and one it made up
    del actual["db.audit_log"]
    diffs, absent = compare_with_truth(workload.tables, workload.truth, actual)
    found = exactness("peer", diffs, absent)
    assert not found.exact
    assert found.absent_tables == ["db.audit_log"]
    assert found.missing == 1 + len(workload.truth["db.audit_log"])
    assert found.extra == 1
    assert (found.wrong_rows, found.wrong_values) == (2, 2)
    assert found.wrong_columns == {"db.all_types.c_ubigint": 1, "db.all_types.c_money": 1}
    shown = {column: (want, got) for column, want, got in found.examples}
    assert shown["db.all_types.c_ubigint"] == (str(big["c_ubigint"]), "NULL")
    assert "peer: NOT exact" in found.line()
    payload = found.as_json()
    assert payload["rows_with_wrong_values"] == 2 and payload["extra_rows"] == 1


def test_a_decimal_read_back_as_a_float_is_wrong_even_when_it_looks_equal() -> None:
    spec = next(s for s in rich_tables("db") if s.name == "order_lines")
    truth = {"db.order_lines": {(1, 1): {"order_id": 1, "line_no": 1, "price": Decimal("2.50")}}}
    got = {"db.order_lines": [{"order_id": 1, "line_no": 1, "price": 2.5}]}
    found = exactness("x", *compare_with_truth([spec], truth, got))
    assert found.wrong_columns == {"db.order_lines.price": 1}


def test_examples_show_each_wrong_column_before_a_second_of_one() -> None:
    spec = next(s for s in rich_tables("db") if s.name == "order_lines")
    stamp = dt.datetime(2024, 1, 1)
    truth_rows = {
        (1, n): {"order_id": 1, "line_no": n, "qty": n, "updated_at": stamp} for n in range(5)
    }
    got = [{**row, "qty": -1} for row in truth_rows.values()]
    got[4]["updated_at"] = stamp + dt.timedelta(hours=8)
    found = exactness(
        "x",
        *compare_with_truth([spec], {"db.order_lines": truth_rows}, {"db.order_lines": got}),
        examples=2,
    )
    assert [column for column, _, _ in found.examples] == [
        "db.order_lines.qty",
        "db.order_lines.updated_at",
    ]
    assert found.wrong_rows == 5 and found.wrong_values == 6


def test_the_bench_reports_exactness_in_its_lines_and_json() -> None:
    assert "peer" in RUNS
    workload, _ = _truth()
    actual = {q: [dict(r) for r in rows.values()] for q, rows in workload.truth.items()}
    measured = Measured("anycdc deferred", 100, 2.0)
    measured.exactness = exactness(
        "anycdc deferred", *compare_with_truth(workload.tables, workload.truth, actual)
    )
    lines = exactness_lines([Measured("copy floor", 100, 1.0), measured])
    assert lines == [measured.exactness.line()] and "exact" in lines[0]
    out = results_json(BenchSettings(), [measured])["results"][0]["exactness"]
    assert out["exact"] is True and out["missing_rows"] == 0
